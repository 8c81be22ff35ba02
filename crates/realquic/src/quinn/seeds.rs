//! Everything quinn-proto draws at random, drawn from the run's seed instead (the sources of
//! randomness its configuration exposes, quinn-proto 0.11.19 `config/mod.rs`,
//! `cid_generator.rs`, `endpoint.rs`):
//!
//! * the endpoint's RNG (`EndpointConfig::rng_seed`): each connection's own RNG, which chooses
//!   the GREASE transport parameter and the order of the others, the packet numbers skipped
//!   against optimistic ACKs, the key-update interval, the spin bit and PATH_CHALLENGE data;
//! * the stateless-reset key (`EndpointConfig::new`, an HMAC-SHA256 key);
//! * the connection IDs (a [`SeededCids`] generator in place of the random one), and the
//!   client's first destination connection ID (`ClientConfig::initial_dst_cid_provider`, 20
//!   random bytes from the operating system by default);
//! * the server's token key (`ServerConfig::new`, an HKDF-SHA256 pseudorandom key) and the
//!   wall clock its tokens are stamped with ([`FixedClock`]).
//!
//! Each end has its own stream, `RngStream::derive(seed, "quinn/client")` or `".../server"`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use multiconn_core::RngStream;
use multiconn_transport::Role;
use quinn_proto::{ConnectionId, ConnectionIdGenerator, EndpointConfig, TimeSource};

/// Length of the connection IDs the generator issues (quinn's default, 8 bytes).
const CID_LEN: usize = 8;

/// The random stream of one end of a flow's connection.
pub(super) fn stream(seed: u64, role: Role) -> RngStream {
    RngStream::derive(seed, match role {
        Role::Client => "quinn/client",
        Role::Server => "quinn/server",
    })
}

/// `N` bytes from `rng`.
pub(super) fn bytes<const N: usize>(rng: &mut RngStream) -> [u8; N] {
    let mut out = [0u8; N];
    for chunk in out.chunks_mut(8) {
        let word = rng.next_u64().to_le_bytes();
        chunk.copy_from_slice(&word[..chunk.len()]);
    }
    out
}

/// The endpoint's configuration with every key and seed from `rng`.
pub(super) fn endpoint_config(rng: &mut RngStream) -> EndpointConfig {
    let reset_key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &bytes::<64>(rng));
    let mut config = EndpointConfig::new(Arc::new(reset_key));
    let cids = Arc::new(AtomicU64::new(rng.next_u64()));
    // quinn asks for a generator per endpoint; each call gets its own seed from the counter.
    config.cid_generator(move || Box::new(SeededCids::new(cids.fetch_add(1, Ordering::Relaxed))));
    config.rng_seed(Some(bytes::<32>(rng)));
    config
}

/// Length of the client's first destination connection ID, as quinn's default (20 bytes, the
/// longest RFC 9000 allows).
const INITIAL_DCID_LEN: usize = 20;

/// The client's first destination connection IDs, drawn from `rng` (RFC 9000 §7.2: at least
/// 8 bytes, unpredictable to the network).
pub(super) fn initial_dcids(rng: &mut RngStream) -> Arc<dyn Fn() -> ConnectionId + Send + Sync> {
    let ids = Mutex::new(RngStream::derive(rng.next_u64(), "quinn/initial-dcid"));
    Arc::new(move || ConnectionId::new(&bytes::<INITIAL_DCID_LEN>(&mut ids.lock().expect("never poisoned: drawing cannot panic"))))
}

/// The server's key for its address-validation tokens.
pub(super) fn token_key(rng: &mut RngStream) -> ring::hkdf::Prk {
    let salt = ring::hkdf::Salt::new(ring::hkdf::HKDF_SHA256, &bytes::<32>(rng));
    salt.extract(&bytes::<32>(rng))
}

/// Connection IDs from a seeded stream: 8 bytes each, never retired.
#[derive(Debug)]
pub(super) struct SeededCids {
    rng: RngStream,
}

impl SeededCids {
    fn new(seed: u64) -> SeededCids {
        SeededCids { rng: RngStream::derive(seed, "quinn/cids") }
    }
}

impl ConnectionIdGenerator for SeededCids {
    fn generate_cid(&mut self) -> ConnectionId {
        ConnectionId::new(&bytes::<CID_LEN>(&mut self.rng))
    }
    fn cid_len(&self) -> usize {
        CID_LEN
    }
    fn cid_lifetime(&self) -> Option<Duration> {
        None
    }
}

/// The wall clock the server stamps its tokens with: one fixed instant (2026-01-01), since a
/// run's tokens are never redeemed and the real clock would make runs differ.
#[derive(Debug)]
pub(super) struct FixedClock;

impl TimeSource for FixedClock {
    fn now(&self) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600)
    }
}
