//! multiconn-core: the vocabulary every model shares.
//!
//! * [`time`]: integer-nanosecond instants and durations (no floating-point clock).
//! * [`units`]: the one place where values such as `"20 Mbit/s"`, `"10 ms"` or `"100 MB"` are parsed.
//! * [`packet`]: the packet that links, hosts and transports pass around.
//! * [`rng`]: one master seed per run, an independent reproducible stream per component.
//! * [`recorder`]: the trait through which models emit metrics; storage lives elsewhere.
//! * [`wire`]: header bytes for captures: checksums, the UDP header and [`wire::WireHeader`],
//!   through which a transport writes its own header.

pub mod packet;
pub mod queue_meter;
pub mod recorder;
pub mod rng;
pub mod time;
pub mod units;
pub mod wire;

pub use packet::{BearerId, Ecn, FlowId, LinkId, Packet, Payload, IP_UDP_OVERHEAD};
pub use queue_meter::{QueueBin, QueueMeter};
pub use recorder::{DropCause, NullRecorder, Recorder, TransportSample};
pub use rng::RngStream;
pub use time::{Dur, Time};
pub use units::{Bytes, Rate, Speed};
