//! The paths of a multipath QUIC connection (draft-ietf-quic-multipath-21).
//!
//! Path 0 is the handshake path; its loss recovery, pacer and 1-RTT ACK state are the
//! connection's own. Every further path has its own packet number space, RTT estimator, loss
//! detection and congestion controller (a [`Recovery`] whose Initial and Handshake spaces are
//! discarded from the start), its own pacer and the ACK state of the packets received on it
//! (§6: one application-data packet number space per path). [`PathMeta`] holds what every
//! path has, path 0 included: validation (RFC 9000 §8.2 PATH_CHALLENGE / PATH_RESPONSE, §5.1 of
//! the draft), the host's interface state, abandonment and counters.
//!
//! With coupled congestion control (`MultipathParams::coupled`) every path's recovery, path 0's
//! included, holds a [`PathController`](multiconn_cc::PathController): a view of the one
//! [`SharedMultipath`] of the connection, so that LIA, OLIA or BALIA set each path's window from
//! all of them. A path takes part while it is validated, its interface is up and its health is
//! `Active`; otherwise (potentially failed, interface down) it keeps its window but is left out
//! of the coupling, as Linux MPTCP leaves potentially-failed subflows out; a failed or abandoned
//! path is removed for good.
//! Without coupling each recovery has its own controller, as before.
//!
//! Connection IDs are not modelled: each path is taken to have its CIDs issued in time
//! (PATH_NEW_CONNECTION_ID exchanged with the handshake).

use std::collections::VecDeque;

use multiconn_cc::{Pacer, SharedMultipath};
use multiconn_core::{Packet, Time};
use multiconn_multipath::{PathHealthSet, PathStatus, Scheduler};
use multiconn_transport::MultipathParams;

use crate::receiver::AckState;
use crate::recovery::Recovery;

/// Loss recovery and sending state of a path other than path 0.
#[derive(Debug)]
pub struct ExtraPath {
    pub recovery: Recovery,
    pub pacer: Pacer,
    pub pacing_release: Option<Time>,
    /// ACK state of the 1-RTT packets received on this path.
    pub rx: AckState,
    /// PTO probes to send on this path.
    pub probes: u8,
}

/// Counters of one path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathCounters {
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub packets_received: u64,
    pub bytes_received: u64,
    /// Packets carrying copies of stream data sent on another path too.
    pub copies_sent: u64,
}

/// What every path has, path 0 included.
#[derive(Clone, Debug, Default)]
pub struct PathMeta {
    /// The path carries data: validated (path 0: by the handshake).
    pub validated: bool,
    /// A PATH_CHALLENGE must go out on this path (client, when it opens the path).
    pub challenge_pending: bool,
    /// A PATH_RESPONSE must go out on this path (the peer challenged it).
    pub response_pending: bool,
    /// The host's interface for this path is up.
    pub interface_up: bool,
    /// A PATH_ABANDON must be sent (on another path).
    pub abandon_pending: bool,
    pub abandoned: bool,
    pub counters: PathCounters,
}

/// The multipath part of a connection.
#[derive(Debug)]
pub struct Multipath {
    pub params: MultipathParams,
    pub scheduler: Box<dyn Scheduler>,
    pub health: PathHealthSet,
    /// Index = path ID.
    pub meta: Vec<PathMeta>,
    /// Index = path ID − 1.
    pub extra: Vec<ExtraPath>,
    /// Copies (RE/SRE) built with a packet and waiting to be handed out.
    pub pending: VecDeque<Packet>,
    /// This end has confirmed the handshake: 1-RTT packets may use every validated path.
    pub ready: bool,
    /// The coupled controller the paths' recoveries share; `None` when uncoupled.
    pub coupling: Option<SharedMultipath>,
}

impl Multipath {
    pub fn path_count(&self) -> usize {
        self.meta.len()
    }

    /// Keeps `path`'s place in the coupling in step with its state: removed once abandoned or
    /// failed (final), suspended while its interface is down, it is not validated or its
    /// health is not `Active`, coupled otherwise. Called wherever one of those changes.
    pub fn sync_coupling(&self, path: usize) {
        let Some(shared) = &self.coupling else { return };
        let m = &self.meta[path];
        let status = self.health.status(path);
        let mut cc = multiconn_cc::coupled::lock(shared);
        if !cc.is_active(path) {
            return;
        }
        if m.abandoned || status == Some(PathStatus::Failed) {
            cc.remove_path(path);
        } else {
            cc.set_suspended(path, !(m.interface_up && m.validated && status == Some(PathStatus::Active)));
        }
    }
}
