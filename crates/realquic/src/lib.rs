//! multiconn-realquic: real QUIC libraries as the simulator's endpoints, in virtual time.
//!
//! A flow with `stack = "quinn"` runs quinn-proto 0.11.19 at both ends instead of the QUIC
//! model, one with `stack = "noq"` noq-proto 1.4.0 (iroh's fork of quinn with
//! draft-ietf-quic-multipath): the library takes the simulator's clock with every call and
//! gives datagrams back, so links, splits, cells, AQMs, the recorder and pcap see its packets
//! as they see the model's. Every random choice of the library (connection IDs, the
//! stateless-reset and token keys, the packet-number skips, GREASE) is drawn from the run's
//! seed; the TLS handshake uses a fixed Ed25519 certificate, whose signatures have one length,
//! so the same scenario and seed give the same datagram sizes and times (only the encrypted
//! bytes differ: rustls's ring provider draws its key-exchange secret from the operating
//! system).
//!
//! * [`Library`]: the libraries this build can run, by name, with what they offer.
//! * [`RealDatagram`]: the payload of every packet a library sends.
//! * `common` (either feature): what the adapters share — the clock, TLS, the seeds, the
//!   applications on the streams, the qlog buffer.
//! * `quinn` (feature `quinn`): the adapter, `QuinnFactory` and its endpoints.
//! * `noq` (feature `noq`): the adapter with multipath, `NoqFactory` and its endpoints.

use multiconn_transport::TransportFactory;

#[cfg(any(feature = "quinn", feature = "noq"))]
mod common;
#[cfg(feature = "noq")]
pub mod noq;
#[cfg(feature = "quinn")]
pub mod quinn;

/// A QUIC datagram as a library wrote it, carried as a packet's payload (one datagram per
/// packet, whichever library wrote it).
#[cfg(any(feature = "quinn", feature = "noq"))]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RealDatagram(pub bytes::Bytes);

/// A real QUIC library the simulator can run at both ends of a QUIC flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Library {
    /// quinn-proto (quinn-rs/quinn), single path.
    Quinn,
    /// noq-proto (n0-computer/noq, iroh's quinn fork), with draft-ietf-quic-multipath.
    Noq,
}

impl Library {
    /// Every library, in the order errors list them.
    pub const ALL: [Library; 2] = [Library::Quinn, Library::Noq];
    /// Their names as a scenario writes them (`stack = "quinn"`).
    pub const NAMES: [&'static str; 2] = ["quinn", "noq"];

    /// The name as a scenario writes it.
    pub fn name(self) -> &'static str {
        match self {
            Library::Quinn => "quinn",
            Library::Noq => "noq",
        }
    }

    /// The crate and the exact version the adapter runs, for the run's summary.
    pub fn version(self) -> &'static str {
        match self {
            Library::Quinn => "quinn-proto 0.11.19",
            Library::Noq => "noq-proto 1.4.0",
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
            Library::Noq => "noq",
        }
    }

    /// Its own multipath scheduler, described, for a library that runs several paths; `None`
    /// for a single-path library.
    pub fn scheduler(self) -> Option<&'static str> {
        match self {
            Library::Quinn => None,
            Library::Noq => Some("noq-proto's: the lowest path ID with window space first, backup paths only while no available path is validated"),
        }
    }

    /// The factory of its connections, seeded with `seed` (each run and flow its own), or
    /// `None` when this build was made without the library's feature.
    pub fn factory(self, seed: u64) -> Option<Box<dyn TransportFactory>> {
        match self {
            #[cfg(feature = "quinn")]
            Library::Quinn => Some(Box::new(quinn::QuinnFactory::new(seed))),
            #[cfg(feature = "noq")]
            Library::Noq => Some(Box::new(noq::NoqFactory::new(seed))),
            #[allow(unreachable_patterns)]
            _ => {
                let _ = seed;
                None
            }
        }
    }
}
