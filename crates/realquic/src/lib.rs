//! multiconn-realquic: real QUIC libraries as the simulator's endpoints, in virtual time.
//!
//! A flow with `stack = "quinn"` runs quinn-proto 0.11.19 at both ends instead of the QUIC
//! model: the library takes the simulator's clock with every call and gives datagrams back, so
//! links, splits, cells, AQMs, the recorder and pcap see its packets as they see the model's.
//! Every random choice of the library (connection IDs, the stateless-reset and token keys, the
//! packet-number skips, GREASE) is drawn from the run's seed; the TLS handshake uses a fixed
//! Ed25519 certificate, whose signatures have one length, so the same scenario and seed give
//! the same datagram sizes and times (only the encrypted bytes differ: rustls's ring provider
//! draws its key-exchange secret from the operating system).
//!
//! * [`Library`]: the libraries this build can run, by name, with what they offer.
//! * `quinn` (feature `quinn`): the adapter, `QuinnFactory` and its endpoints.

use multiconn_transport::TransportFactory;

#[cfg(feature = "quinn")]
pub mod quinn;

/// A real QUIC library the simulator can run at both ends of a QUIC flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Library {
    /// quinn-proto (quinn-rs/quinn), single path.
    Quinn,
}

impl Library {
    /// Every library, in the order errors list them.
    pub const ALL: [Library; 1] = [Library::Quinn];
    /// Their names as a scenario writes them (`stack = "quinn"`).
    pub const NAMES: [&'static str; 1] = ["quinn"];

    /// The name as a scenario writes it.
    pub fn name(self) -> &'static str {
        match self {
            Library::Quinn => "quinn",
        }
    }

    /// The crate and the exact version the adapter runs, for the run's summary.
    pub fn version(self) -> &'static str {
        match self {
            Library::Quinn => "quinn-proto 0.11.19",
        }
    }

    /// The library of that name.
    pub fn from_name(name: &str) -> Option<Library> {
        Library::ALL.into_iter().find(|l| l.name() == name)
    }

    /// The Cargo feature of `multiconn-realquic` that builds it.
    pub fn feature(self) -> &'static str {
        match self {
            Library::Quinn => "quinn",
        }
    }

    /// The factory of its connections, seeded with `seed` (each run and flow its own), or
    /// `None` when this build was made without the library's feature.
    pub fn factory(self, seed: u64) -> Option<Box<dyn TransportFactory>> {
        match self {
            #[cfg(feature = "quinn")]
            Library::Quinn => Some(Box::new(quinn::QuinnFactory::new(seed))),
            #[cfg(not(feature = "quinn"))]
            Library::Quinn => {
                let _ = seed;
                None
            }
        }
    }
}
