//! The packet passed between hosts, links and transports.
//!
//! A packet carries only what the network needs to move and account for it: a run-unique id,
//! the flow it belongs to, its size on the wire, a per-flow sequence number and its creation
//! time. What a transport puts inside stays in the transport's own state, keyed by `seq`.

use crate::time::Time;

/// Index of a flow in its scenario (order of declaration).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId(pub u32);

/// Index of one direction of one link in its scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub u32);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Unique within a run, in order of creation.
    pub id: u64,
    pub flow: FlowId,
    /// Bytes on the wire, headers included.
    pub size: u32,
    /// Per-flow sequence number assigned by the sender.
    pub seq: u64,
    /// When the sender created it.
    pub created: Time,
    /// How many links of its route it has crossed so far.
    pub hop: u16,
}
