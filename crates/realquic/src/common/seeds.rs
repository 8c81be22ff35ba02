//! The run's seed as the libraries' randomness: each end of a flow's connection has its own
//! stream, `RngStream::derive(seed, "<library>/client")` or `".../server"`, from which the
//! library's keys, RNG seed and connection IDs are drawn (`proto/seeds.rs` says which).

use multiconn_core::RngStream;
use multiconn_transport::Role;

/// The random stream of one end of a flow's connection run by `library` (`"quinn"`, `"noq"`).
pub(crate) fn stream(seed: u64, library: &str, role: Role) -> RngStream {
    RngStream::derive(seed, &format!("{library}/{}", match role {
        Role::Client => "client",
        Role::Server => "server",
    }))
}

/// `N` bytes from `rng`.
pub(crate) fn bytes<const N: usize>(rng: &mut RngStream) -> [u8; N] {
    let mut out = [0u8; N];
    for chunk in out.chunks_mut(8) {
        let word = rng.next_u64().to_le_bytes();
        chunk.copy_from_slice(&word[..chunk.len()]);
    }
    out
}
