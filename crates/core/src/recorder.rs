//! The recorder: how models report what happened, without knowing where it is stored.
//!
//! Models call these methods as events occur; an implementation (see the metrics crate) bins
//! them into time series and summaries. Methods take integer ids and sizes only, so recording
//! costs a few additions per packet and never allocates.

use crate::queue_meter::QueueBin;
use crate::packet::{BearerId, FlowId, LinkId};
use crate::time::{Dur, Time};

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropCause {
    /// A drop-tail queue was full.
    Queue,
    /// The loss model (Bernoulli, Gilbert–Elliott, trace) discarded it.
    RandomLoss,
    /// The link was down (availability window).
    LinkDown,
    /// The receiving host's UDP socket buffer was full (Linux `Udp: RcvbufErrors`).
    UdpBuffer,
    /// A PDCP receiver discarded it: its COUNT had already been delivered or given up at
    /// t-Reordering expiry (a late copy under duplication is not counted).
    PdcpLate,
    /// A PDCP transmitter refused it: the reordering window was full (or COUNT exhausted).
    PdcpWindow,
}

impl DropCause {
    /// Every cause, in the order of the reports' columns.
    pub const ALL: [DropCause; 6] =
        [DropCause::Queue, DropCause::RandomLoss, DropCause::LinkDown, DropCause::UdpBuffer, DropCause::PdcpLate, DropCause::PdcpWindow];

    /// Its name in reports (`"queue"`, `"random_loss"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DropCause::Queue => "queue",
            DropCause::RandomLoss => "random_loss",
            DropCause::LinkDown => "link_down",
            DropCause::UdpBuffer => "udp_buffer",
            DropCause::PdcpLate => "pdcp_late",
            DropCause::PdcpWindow => "pdcp_window",
        }
    }
}

/// A transport sender's state after an event, for time series. Counters are cumulative since
/// the connection started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransportSample {
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Bytes sent and not yet acknowledged or declared lost.
    pub bytes_in_flight: u64,
    /// Smoothed RTT (RFC 9002 / RFC 6298); zero before the first sample.
    pub srtt: Dur,
    /// Packets (QUIC) or segments (TCP) sent again because they were declared lost.
    pub retransmissions: u64,
    /// Of those, how many turned out unnecessary (the original was acknowledged later).
    pub spurious_retransmissions: u64,
    /// Packets declared lost by loss detection.
    pub lost: u64,
}

/// What the network and the hosts report as a run goes, for time series and summaries.
/// Sizes are bytes on the wire, headers included, unless a method says otherwise.
pub trait Recorder {
    /// A link direction finished delivering a packet to its far end.
    fn link_delivered(&mut self, now: Time, link: LinkId, bytes: u32);
    /// A link direction dropped a packet.
    fn link_dropped(&mut self, now: Time, link: LinkId, cause: DropCause, bytes: u32);
    /// A link direction's queue (packets and bytes waiting, transmission excluded) integrated
    /// over bin `q.bin` or part of it ([`QueueMeter`](crate::QueueMeter)); a bin may come in
    /// several parts, to be added.
    fn link_queue_bin(&mut self, link: LinkId, q: QueueBin);
    /// A flow's sender put a packet on the network.
    fn flow_sent(&mut self, now: Time, flow: FlowId, bytes: u32);
    /// A flow's receiver got `bytes` of payload (goodput).
    fn flow_delivered(&mut self, now: Time, flow: FlowId, bytes: u64);
    /// A packet of a flow was dropped somewhere on its route; `reverse` for the flow's
    /// return direction (a transport's ACKs and requests, toward the flow's sender).
    fn flow_dropped(&mut self, now: Time, flow: FlowId, cause: DropCause, bytes: u32, reverse: bool);
    /// A transport flow's sender state changed (after an ACK, a send or a timer).
    fn flow_transport(&mut self, _now: Time, _flow: FlowId, _sample: &TransportSample) {}

    // Per path of a multipath flow, per leg of a split bearer, per split bearer. The default
    // methods discard them, so a recorder that keeps only flows and links need not know.

    /// A packet of a multipath flow's data direction (`bytes` on the wire) reached the end of
    /// path `path`'s route.
    fn path_delivered(&mut self, _now: Time, _flow: FlowId, _path: u8, _bytes: u32) {}
    /// A packet of a multipath flow's data direction was dropped on path `path`'s route.
    fn path_dropped(&mut self, _now: Time, _flow: FlowId, _path: u8, _cause: DropCause, _bytes: u32) {}
    /// The data sender's state on path `path` of a multipath flow changed; counters are
    /// cumulative on the path since the connection started.
    fn path_transport(&mut self, _now: Time, _flow: FlowId, _path: u8, _sample: &TransportSample) {}
    /// A PDU of `bytes` (PDCP header included) reached split bearer `bearer`'s receiving
    /// entity over its leg `leg` (0 or 1), copies and late PDUs included.
    fn leg_delivered(&mut self, _now: Time, _bearer: BearerId, _leg: u8, _bytes: u32) {}
    /// Leg `leg` of split bearer `bearer` dropped one of the bearer's PDUs.
    fn leg_dropped(&mut self, _now: Time, _bearer: BearerId, _leg: u8, _cause: DropCause, _bytes: u32) {}
    /// Split bearer `bearer`'s receiving entity delivered `sdus` SDUs of `bytes` in all
    /// (header removed) in order upwards; `reorder_delay` is the sum of the time they waited
    /// in its reordering buffer.
    fn bearer_delivered(&mut self, _now: Time, _bearer: BearerId, _sdus: u64, _bytes: u64, _reorder_delay: Dur) {}
    /// Split bearer `bearer` dropped a PDU (`PdcpLate`, `PdcpWindow`).
    fn bearer_dropped(&mut self, _now: Time, _bearer: BearerId, _cause: DropCause, _bytes: u32) {}
    /// Split bearer `bearer`'s reordering buffer now holds `pdus` PDUs.
    fn bearer_buffer(&mut self, _now: Time, _bearer: BearerId, _pdus: u32) {}
}

/// Discards everything; for tests and benchmarks of models alone.
#[derive(Default, Debug, Clone, Copy)]
pub struct NullRecorder;

impl Recorder for NullRecorder {
    fn link_delivered(&mut self, _: Time, _: LinkId, _: u32) {}
    fn link_dropped(&mut self, _: Time, _: LinkId, _: DropCause, _: u32) {}
    fn link_queue_bin(&mut self, _: LinkId, _: QueueBin) {}
    fn flow_sent(&mut self, _: Time, _: FlowId, _: u32) {}
    fn flow_delivered(&mut self, _: Time, _: FlowId, _: u64) {}
    fn flow_dropped(&mut self, _: Time, _: FlowId, _: DropCause, _: u32, _: bool) {}
}
