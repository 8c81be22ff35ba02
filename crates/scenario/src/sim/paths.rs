//! Multipath flows: what each path carried, and the path events of both ends.
//!
//! Every packet follows the route of the path its sending endpoint named (`Packet::path`;
//! the forward or reverse route of that path by `Packet::route`). Each end watches its own
//! interface on each path — the first link direction it sends on: the forward route's for the
//! data sender, the reverse route's for the receiver — as the network reports it: the element tells
//! when it next goes down or comes back ([`Network::next_link_change`]) and whether it is up
//! then ([`Network::link_up`]), and the end is told at that instant
//! (`Endpoint::on_path_status`). The client's path manager (if the flow has one) runs its
//! schedule and reacts to those interface events as they come; it is woken only for the
//! actions it will take (`PathManager::next_action`), asked again after each interface
//! event (`Endpoint::on_path_action`).
//!
//! Path events are ranked ([`multiconn_engine::EventQueue::schedule_ranked`]) so that at any
//! instant they fire before everything but the network's first wake-ups, flow by flow, each
//! flow's interface events (by path, server first) before its manager's action: the order
//! they would have if all were planned when the world is built, whenever each is scheduled.

use multiconn_engine::TimerId;
use multiconn_multipath::PathManager;

/// Packets of one direction of one path of a multipath flow, on the wire (headers included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PathTraffic {
    /// Reached the end of the route (the receiving host, before its socket buffer).
    pub packets_arrived: u64,
    /// The bytes of the packets that arrived.
    pub bytes_arrived: u64,
    /// Dropped on the route's links or split bearers.
    pub packets_dropped: u64,
    /// The bytes of the packets dropped.
    pub bytes_dropped: u64,
}


/// The client's path manager of a multipath flow, and its pending wake-up.
pub struct ClientPathManager {
    pub(super) manager: PathManager,
    pub(super) wake: Option<TimerId>,
}

/// Path events at an instant: after the network's first wake-ups (rank
/// [`super::START_RANK`]), flow by flow (the flow index in the high bits), each flow's
/// interface events (path, then role) before its manager's action.
pub(super) fn flow_rank(f: usize) -> u64 {
    (f as u64 + 1) << 32
}

/// Above any interface event's rank within a flow.
pub(super) const ACTION_RANK: u64 = 1 << 31;
