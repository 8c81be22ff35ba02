//! The recorder: how models report what happened, without knowing where it is stored.
//!
//! Models call these methods as events occur; an implementation (see the metrics crate) bins
//! them into time series and summaries. Methods take integer ids and sizes only, so recording
//! costs a few additions per packet and never allocates.

use crate::packet::{FlowId, LinkId};
use crate::time::Time;

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropCause {
    /// A drop-tail queue was full.
    Queue,
    /// The loss model (Bernoulli, Gilbert–Elliott, trace) discarded it.
    RandomLoss,
    /// The link was down (availability window).
    LinkDown,
}

impl DropCause {
    pub const ALL: [DropCause; 3] = [DropCause::Queue, DropCause::RandomLoss, DropCause::LinkDown];

    pub fn name(self) -> &'static str {
        match self {
            DropCause::Queue => "queue",
            DropCause::RandomLoss => "random_loss",
            DropCause::LinkDown => "link_down",
        }
    }
}

pub trait Recorder {
    /// A link direction finished delivering a packet to its far end.
    fn link_delivered(&mut self, now: Time, link: LinkId, bytes: u32);
    /// A link direction dropped a packet.
    fn link_dropped(&mut self, now: Time, link: LinkId, cause: DropCause, bytes: u32);
    /// A link direction's queue changed to `packets` / `bytes` waiting (transmission excluded).
    fn link_queue(&mut self, now: Time, link: LinkId, packets: u32, bytes: u64);
    /// A flow's sender put a packet on the network.
    fn flow_sent(&mut self, now: Time, flow: FlowId, bytes: u32);
    /// A flow's receiver got `bytes` of payload (goodput).
    fn flow_delivered(&mut self, now: Time, flow: FlowId, bytes: u64);
    /// A packet of a flow was dropped somewhere on its route.
    fn flow_dropped(&mut self, now: Time, flow: FlowId, cause: DropCause, bytes: u32);
}

/// Discards everything; for tests and benchmarks of models alone.
#[derive(Default, Debug, Clone, Copy)]
pub struct NullRecorder;

impl Recorder for NullRecorder {
    fn link_delivered(&mut self, _: Time, _: LinkId, _: u32) {}
    fn link_dropped(&mut self, _: Time, _: LinkId, _: DropCause, _: u32) {}
    fn link_queue(&mut self, _: Time, _: LinkId, _: u32, _: u64) {}
    fn flow_sent(&mut self, _: Time, _: FlowId, _: u32) {}
    fn flow_delivered(&mut self, _: Time, _: FlowId, _: u64) {}
    fn flow_dropped(&mut self, _: Time, _: FlowId, _: DropCause, _: u32) {}
}
