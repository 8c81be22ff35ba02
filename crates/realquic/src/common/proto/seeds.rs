//! Everything the library draws at random, drawn from the run's seed instead, written once
//! against the configuration API quinn-proto and noq-proto share (compiled into each adapter;
//! `super::proto` is its crate, `super::LABEL` its name in the streams' labels,
//! `super::cid_generator` how it takes a generator). The sources
//! of randomness their configuration exposes (quinn-proto 0.11.19 and noq-proto 1.4.0
//! `config/mod.rs`, `cid_generator.rs`, `endpoint.rs`):
//!
//! * the endpoint's RNG (`EndpointConfig::rng_seed`): each connection's own RNG, which chooses
//!   the GREASE transport parameter and the order of the others, the packet numbers skipped
//!   against optimistic ACKs, the key-update interval, the spin bit and PATH_CHALLENGE data,
//!   and the nonces of the server's tokens;
//! * the stateless-reset key (`EndpointConfig::new`, an HMAC-SHA256 key);
//! * the connection IDs (a [`SeededCids`] generator in place of the random one), and the
//!   client's first destination connection ID (`ClientConfig::initial_dst_cid_provider`, 20
//!   random bytes from the operating system by default);
//! * the wall clock the server's tokens are stamped with ([`FixedClock`]).
//!
//! The server's token key is the adapter's own (its type differs between the libraries).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use multiconn_core::RngStream;

use super::proto::{ConnectionId, ConnectionIdGenerator, EndpointConfig, TimeSource};
use super::LABEL;
use crate::common::seeds::bytes;

/// Length of the connection IDs the generator issues (the libraries' default, 8 bytes).
const CID_LEN: usize = 8;

/// The endpoint's configuration with every key and seed from `rng`.
pub(super) fn endpoint_config(rng: &mut RngStream) -> EndpointConfig {
    let reset_key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &bytes::<64>(rng));
    let mut config = EndpointConfig::new(Arc::new(reset_key));
    let cids = Arc::new(AtomicU64::new(rng.next_u64()));
    // The library asks for a generator per endpoint; each call gets its own seed from the
    // counter. (quinn takes the closure, noq an `Arc` of it: the adapter's `cid_generator`.)
    super::cid_generator(&mut config, move || Box::new(SeededCids::new(cids.fetch_add(1, Ordering::Relaxed))));
    config.rng_seed(Some(bytes::<32>(rng)));
    config
}

/// Length of the client's first destination connection ID, as the libraries' default (20
/// bytes, the longest RFC 9000 allows).
const INITIAL_DCID_LEN: usize = 20;

/// The client's first destination connection IDs, drawn from `rng` (RFC 9000 §7.2: at least
/// 8 bytes, unpredictable to the network).
pub(super) fn initial_dcids(rng: &mut RngStream) -> Arc<dyn Fn() -> ConnectionId + Send + Sync> {
    let ids = Mutex::new(RngStream::derive(rng.next_u64(), &format!("{LABEL}/initial-dcid")));
    Arc::new(move || ConnectionId::new(&bytes::<INITIAL_DCID_LEN>(&mut ids.lock().expect("never poisoned: drawing cannot panic"))))
}

/// Connection IDs from a seeded stream: 8 bytes each, never retired.
#[derive(Debug)]
pub(super) struct SeededCids {
    rng: RngStream,
}

impl SeededCids {
    fn new(seed: u64) -> SeededCids {
        SeededCids { rng: RngStream::derive(seed, &format!("{LABEL}/cids")) }
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
