//! The paths of a QUIC connection, path 0 included, in one table of [`PathState`]s: a
//! single-path connection is a table of one (draft-ietf-quic-multipath-21 for the others).
//!
//! Every path has its own packet number space for 1-RTT packets, RTT estimator, loss
//! detection and congestion controller (a [`Recovery`]), its own pacer and the ACK state of the
//! 1-RTT packets received on it (§6: one application-data packet number space per path), its
//! PTO probes, and what the multipath connection tracks of it: where it is in its life (a
//! [`PathPhase`]: validation by RFC 9000 §8.2 PATH_CHALLENGE / PATH_RESPONSE and §5.1 of the
//! draft, use, abandonment by §3.4), the host's interface state, its status (§3.3) and
//! counters. Path 0 carries the handshake: its recovery also holds the Initial and Handshake
//! packet number spaces, which the other paths discard from the start.
//! [`Multipath`] holds what only a multipath connection has: its parameters, the scheduler,
//! the paths' health, the coupling and the settings of new path IDs.
//!
//! With coupled congestion control (`MultipathParams::coupled`) every path's recovery, path 0's
//! included, holds a [`PathController`](multiconn_cc::PathController): a view of the one
//! [`SharedMultipath`] of the connection, so that LIA, OLIA or BALIA set each path's window from
//! all of them. A path takes part while it is validated, its interface is up and its health is
//! `Active`; otherwise (potentially failed, interface down) it keeps its window but is left out
//! of the coupling, as Linux MPTCP leaves potentially-failed subflows out; a failed or abandoned
//! path is removed for good.
//! Without coupling each recovery has its own controller.
//!
//! Path IDs (draft §2) are allocated by the client, one per opening and never reused: the
//! paths open with the connection take 0, 1, … in route order, and a route opened again after
//! an abandonment gets a fresh ID with fresh state (packet number space, RTT, congestion
//! control, pacer, health) built from the [`PathTemplate`]. Datagrams carry the ID their
//! destination CID belongs to, so late packets of an abandoned ID are told apart.
//! Connection IDs themselves are not modelled: each path ID is taken to have its CIDs issued
//! in time (PATH_NEW_CONNECTION_ID exchanged beforehand).

use std::collections::VecDeque;

use multiconn_cc::{CcConfig, Pacer, PacerConfig, RttEstimator, RttVarRule, SharedMultipath};
use multiconn_core::{Dur, Packet, Time, TransportSample};
use multiconn_multipath::{PathHealthSet, PathStatus, Scheduler};
use multiconn_transport::profile::{AbandonRule, LinkEvents};
use multiconn_transport::{MultipathParams, PathStats};

use crate::ack_state::{AckPolicy, AckState};
use crate::packet::Space;
use crate::recovery::{Recovery, RecoveryConfig};

/// Counters of one path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathCounters {
    /// Datagrams sent on the path once the multipath sender runs.
    pub packets_sent: u64,
    /// UDP payload bytes sent on the path.
    pub bytes_sent: u64,
    /// Datagrams received on the path (counted with multipath only).
    pub packets_received: u64,
    /// UDP payload bytes received on the path.
    pub bytes_received: u64,
    /// Packets carrying copies of stream data sent on another path too.
    pub copies_sent: u64,
    /// Packets sent on the path carrying data sent before (declared lost or probed again).
    pub retransmissions: u64,
}

/// Where a path is in its life. The host's interface state, the backup status and the frames
/// waiting to go out for the path are kept beside it: they change independently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathPhase {
    /// Never opened: a route the path manager opens later.
    Closed,
    /// Not validated yet. The client challenges the path once it has confirmed the handshake
    /// (and again when the interface comes back); the server waits for the client's
    /// PATH_CHALLENGE, which proves the client reaches it there.
    Validating(Validation),
    /// Validated (path 0: by the handshake): the path carries data.
    Active,
    /// Abandoned; its PATH_ABANDON is still to be sent, on another path (draft §3.4).
    Abandoning,
    /// Abandoned and PATH_ABANDON sent (sent again if lost while the path ID is current).
    Abandoned,
}

/// The client's validation of a path (RFC 9000 §8.2); all empty while none is under way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Validation {
    /// A PATH_CHALLENGE must go out on the path.
    pub challenge_pending: bool,
    /// Challenges sent so far (the retry interval doubles with each).
    pub challenges_sent: u32,
    /// When the PATH_CHALLENGE is sent again if no PATH_RESPONSE came (RFC 9000 §8.2.1: a lost
    /// challenge or response is recovered by a new challenge, at PTO pace).
    pub retry_at: Option<Time>,
    /// When validation is given up (RFC 9000 §8.2.4).
    pub deadline: Option<Time>,
}

impl Validation {
    /// A validation that starts with a challenge.
    pub fn challenge() -> Validation {
        Validation { challenge_pending: true, ..Validation::default() }
    }

    /// A PATH_CHALLENGE went out: it is sent again one `pto` later, doubling with each
    /// challenge, and validation is given up `give_up_after` the first (and not retried
    /// beyond that).
    pub fn on_challenge_sent(&mut self, now: Time, pto: Dur, give_up_after: Dur) {
        let deadline = *self.deadline.get_or_insert(now + give_up_after);
        let backoff = Dur(pto.0.saturating_mul(1u64 << self.challenges_sent.min(16)));
        self.challenges_sent += 1;
        self.retry_at = Some((now + backoff).min(deadline));
    }
}

/// A range of stream data copied from a packet sent on another path, waiting in a path's copy
/// queue (tquic's redundant scheduler, [`multiconn_multipath::CopyDelivery::Queued`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueuedCopy {
    /// Stream ID.
    pub stream: u64,
    /// Offset of the first byte in the stream.
    pub offset: u64,
    /// Bytes copied.
    pub len: u64,
    /// The copy carries the stream's FIN.
    pub fin: bool,
}

/// One path of a connection, path 0 included. A path here is a route; the path ID open on it
/// changes when it is abandoned and opened again, and with it every field but the route's
/// interface state and counters.
#[derive(Debug)]
pub struct PathState {
    /// The path ID last opened on the route (`None`: never opened, or a single-path
    /// connection, which has no path IDs).
    pub path_id: Option<u32>,
    /// Path IDs opened on the route so far.
    pub path_ids_opened: u32,
    /// Where the path is in its life: closed, being validated, active or abandoned.
    pub phase: PathPhase,
    /// A PATH_RESPONSE must go out on this path (the peer challenged it).
    pub response_pending: bool,
    /// The host's interface for this path is up.
    pub interface_up: bool,
    /// Backup status (draft §3.3): no new data while an available path is usable. Set by this
    /// end's path manager or by the peer's PATH_STATUS_BACKUP.
    pub backup: bool,
    /// Sequence number of the last status frame sent.
    pub status_seq: u64,
    /// A status frame must go out.
    pub status_pending: bool,
    /// Sequence number of the last status frame received for the current path ID.
    pub peer_status_seq: Option<u64>,
    /// This path's place in the coupled controller (a new one per path ID).
    pub cc_slot: usize,
    /// Packets declared lost on the route's earlier path IDs.
    pub lost_before: u64,
    /// Losses found spurious on the route's earlier path IDs.
    pub spurious_before: u64,
    /// Packets, bytes, copies and retransmissions on the route.
    pub counters: PathCounters,
    /// Packet numbers, RTT, loss detection and congestion control of the path.
    pub recovery: Recovery,
    /// The path's pacer (RFC 9002 §7.7).
    pub pacer: Pacer,
    /// When the pacer lets the path send next, if it held a packet back.
    pub pacing_release: Option<Time>,
    /// ACK state of the 1-RTT packets received on this path.
    pub rx: AckState,
    /// PTO probes to send on this path (1-RTT; the handshake's are the connection's).
    pub probes: u8,
    /// When the path last sent a datagram once the multipath sender runs (`None`: never under
    /// this path ID); picoquic's scheduler uses the least recently used path.
    pub last_sent: Option<Time>,
    /// ACK-only packets on the path were declared lost by the `picoquic-2022` timer: the next
    /// ACK-only packet on it carries a PING, so that it is acknowledged or times out.
    pub ping_on_ack: bool,
    /// An abandoned path whose data in flight was left to its own loss detection
    /// (`abandon = "drain"`) is deleted then: what it still holds is queued again and its
    /// packet number space forgotten.
    pub delete_at: Option<Time>,
    /// Copies of stream data sent on other paths, oldest first, that this path sends the next
    /// time it sends, ahead of new data (queued copies; empty under every other delivery).
    pub queued_copies: VecDeque<QueuedCopy>,
}

impl PathState {
    /// The path may carry data (its interface aside).
    pub fn is_validated(&self) -> bool {
        self.phase == PathPhase::Active
    }

    /// Closed for good, or not opened yet.
    pub fn is_abandoned(&self) -> bool {
        matches!(self.phase, PathPhase::Closed | PathPhase::Abandoning | PathPhase::Abandoned)
    }

    /// Neither abandoned nor cut off by its interface.
    pub fn is_alive(&self) -> bool {
        self.interface_up && !self.is_abandoned()
    }

    /// A PATH_CHALLENGE waits to go out.
    pub fn challenge_pending(&self) -> bool {
        matches!(self.phase, PathPhase::Validating(Validation { challenge_pending: true, .. }))
    }

    /// Takes the PATH_CHALLENGE waiting to go out, if any.
    pub fn take_challenge(&mut self) -> bool {
        self.validation_mut().is_some_and(|v| std::mem::take(&mut v.challenge_pending))
    }

    /// The validation under way, if any.
    pub fn validation_mut(&mut self) -> Option<&mut Validation> {
        match &mut self.phase {
            PathPhase::Validating(v) => Some(v),
            _ => None,
        }
    }

    /// The path is validated (PATH_RESPONSE at the client, PATH_CHALLENGE at the server),
    /// unless abandoned meanwhile.
    pub fn validate(&mut self) {
        if !self.is_abandoned() {
            self.phase = PathPhase::Active;
        }
    }

    /// Abandons the path: validation stops, a PATH_ABANDON is to be sent and a pending status
    /// frame is not. False if the path was abandoned (or closed) already.
    pub fn abandon(&mut self) -> bool {
        if self.is_abandoned() {
            return false;
        }
        self.phase = PathPhase::Abandoning;
        self.status_pending = false;
        true
    }

    /// The packet carrying the path's PATH_ABANDON was lost: it is sent again.
    pub fn on_abandon_lost(&mut self) {
        if self.phase == PathPhase::Abandoned {
            self.phase = PathPhase::Abandoning;
        }
    }

    /// The sending side's state on the path, for its time series: the current path ID's
    /// window, bytes in flight and smoothed RTT (zero before the first sample), and counters
    /// over every path ID opened on the route.
    pub fn sample(&self) -> TransportSample {
        let r = &self.recovery;
        let rtt = r.rtt();
        TransportSample {
            cwnd: r.cwnd(),
            bytes_in_flight: r.bytes_in_flight(),
            srtt: if rtt.has_sample() { rtt.smoothed() } else { Dur::ZERO },
            retransmissions: self.counters.retransmissions,
            spurious_retransmissions: self.spurious_before + r.stats().spurious_losses,
            lost: self.lost_before + r.stats().lost_packets,
        }
    }

    /// What the path reports of itself as route `p`, its health being `health`.
    pub fn stats(&self, p: usize, health: Option<PathStatus>) -> PathStats {
        let r = &self.recovery;
        let status = if self.path_id.is_none() {
            "closed"
        } else if self.is_abandoned() {
            "abandoned"
        } else if !self.interface_up {
            "down"
        } else if !self.is_validated() {
            "unvalidated"
        } else {
            match health {
                Some(PathStatus::Active) | None => "active",
                Some(PathStatus::PotentiallyFailed) => "potentially_failed",
                Some(PathStatus::Failed) => "failed",
            }
        };
        PathStats {
            path: p as u8,
            path_id: self.path_id.filter(|_| !self.is_abandoned()),
            path_ids_opened: self.path_ids_opened,
            packets_sent: self.counters.packets_sent,
            bytes_sent: self.counters.bytes_sent,
            packets_received: self.counters.packets_received,
            bytes_received: self.counters.bytes_received,
            lost: self.lost_before + r.stats().lost_packets,
            srtt: r.rtt().smoothed(),
            cwnd: r.cwnd(),
            status,
        }
    }

    /// A full-sized datagram fits in the congestion window.
    pub fn has_window_room(&self, mds: u64) -> bool {
        self.recovery.bytes_in_flight() + mds <= self.recovery.cwnd()
    }

    /// When pacing lets the path send a datagram of `mds` bytes next, if later than `now`
    /// (and remembered as a wake-up).
    pub fn paced_until(&mut self, now: Time, mds: u64) -> Option<Time> {
        let r = &self.recovery;
        let (cwnd, srtt, rate) = (r.cwnd(), r.rtt().smoothed(), r.controller().pacing_rate());
        let t = self.pacer.earliest_send(now, mds, cwnd, srtt, rate);
        self.pacing_release = (t > now).then_some(t);
        self.pacing_release
    }

    /// The pacing wake-up has passed.
    pub fn on_pacing_timeout(&mut self, now: Time) {
        if self.pacing_release.is_some_and(|t| t <= now) {
            self.pacing_release = None;
        }
    }
}

/// What a fresh path ID starts with: the settings the connection was built with.
#[derive(Clone, Debug)]
pub struct PathTemplate {
    /// Loss recovery constants of every path.
    pub recovery: RecoveryConfig,
    /// RTT assumed before the first sample (RFC 9002 §6.2.2).
    pub initial_rtt: Dur,
    /// How rttvar is updated.
    pub rttvar_rule: RttVarRule,
    /// Congestion controller settings.
    pub cc: CcConfig,
    /// Pacer settings, adjusted to each path's controller.
    pub pacer: PacerConfig,
    /// When the 1-RTT packets received on the path are acknowledged.
    pub ack_policy: AckPolicy,
    /// This end is the server (recovery's anti-amplification and address-validation context).
    pub is_server: bool,
}

impl PathTemplate {
    /// Path 0 as the connection starts: the handshake runs on it, so its recovery keeps the
    /// Initial and Handshake spaces; it is validated by the handshake and has no path ID yet.
    pub fn handshake_path(&self, controller: Box<dyn multiconn_cc::Controller>) -> PathState {
        let rtt = RttEstimator::new(self.initial_rtt, self.rttvar_rule);
        let recovery = Recovery::new(self.recovery.clone(), rtt, controller, self.is_server);
        PathState { phase: PathPhase::Active, ..self.path_with(recovery) }
    }

    /// The state of a new path ID whose congestion controller is `controller`, to be
    /// validated. Its Initial and Handshake spaces are discarded: only 1-RTT packets use
    /// paths beyond the handshake's.
    pub fn new_path(&self, controller: Box<dyn multiconn_cc::Controller>) -> PathState {
        let rtt = RttEstimator::new(self.initial_rtt, self.rttvar_rule);
        let mut recovery = Recovery::new(self.recovery.clone(), rtt, controller, self.is_server);
        recovery.discard_space(Time::ZERO, Space::Initial);
        recovery.discard_space(Time::ZERO, Space::Handshake);
        self.path_with(recovery)
    }

    fn path_with(&self, recovery: Recovery) -> PathState {
        let pacer = Pacer::new(self.pacer.for_controller(recovery.controller()));
        PathState {
            path_id: None,
            path_ids_opened: 0,
            phase: PathPhase::Validating(Validation::default()),
            response_pending: false,
            interface_up: true,
            backup: false,
            status_seq: 0,
            status_pending: false,
            peer_status_seq: None,
            cc_slot: 0,
            lost_before: 0,
            spurious_before: 0,
            counters: PathCounters::default(),
            recovery,
            pacer,
            pacing_release: None,
            rx: AckState::new(self.ack_policy),
            probes: 0,
            last_sent: None,
            ping_on_ack: false,
            delete_at: None,
            queued_copies: VecDeque::new(),
        }
    }

    /// The PTO of a path without an RTT sample (RFC 9000 §8.2.4: the validation timer is
    /// three times the larger of this and the current PTO).
    pub fn initial_pto(&self) -> Dur {
        RttEstimator::new(self.initial_rtt, self.rttvar_rule).pto_base(self.recovery.max_ack_delay)
    }
}

/// What only a multipath connection has; the paths themselves are in the connection's table.
#[derive(Debug)]
pub struct Multipath {
    /// The connection's multipath parameters: paths, scheduler, coupling, failover.
    pub params: MultipathParams,
    /// The scheduler that chooses the path of each 1-RTT packet.
    pub scheduler: Box<dyn Scheduler>,
    /// The paths' health (failover: active, potentially failed, failed).
    pub health: PathHealthSet,
    /// Copies (RE/SRE) built with a packet and waiting to be handed out.
    pub pending: VecDeque<Packet>,
    /// This end has confirmed the handshake: 1-RTT packets may use every validated path.
    pub ready: bool,
    /// The coupled controller the paths' recoveries share; `None` when uncoupled.
    pub coupling: Option<SharedMultipath>,
    /// Settings of new path IDs.
    pub template: PathTemplate,
    /// The next path ID the client allocates.
    pub next_path_id: u32,
    /// What happens to an abandoned path's data in flight (the profile's `multipath.abandon`).
    pub abandon: AbandonRule,
    /// Whether the endpoint follows its interfaces (the profile's `multipath.link_events`).
    pub link_events: LinkEvents,
}

impl Multipath {
    /// The congestion controller of a new path ID: a fresh place in the coupling (the old
    /// one, if any, removed), or a controller of its own.
    pub fn new_controller(&mut self, old_slot: Option<usize>) -> (Box<dyn multiconn_cc::Controller>, usize) {
        match &self.coupling {
            Some(shared) => {
                let slot = {
                    let mut cc = multiconn_cc::coupled::lock(shared);
                    if let Some(old) = old_slot.filter(|&o| cc.is_active(o)) {
                        cc.remove_path(old);
                    }
                    cc.add_path(&self.template.cc)
                };
                (Box::new(multiconn_cc::PathController::new(shared.clone(), slot)), slot)
            }
            None => (multiconn_cc::build(&self.template.cc), 0),
        }
    }

    /// Keeps path `p`'s place in the coupling in step with its state: removed once abandoned or
    /// failed (final), suspended while its interface is down, it is not validated or its
    /// health is not `Active`, coupled otherwise. Called wherever one of those changes.
    pub fn sync_coupling(&self, p: usize, path: &PathState) {
        let Some(shared) = &self.coupling else { return };
        let status = self.health.status(p);
        let mut cc = multiconn_cc::coupled::lock(shared);
        if !cc.is_active(path.cc_slot) {
            return;
        }
        if path.is_abandoned() || status == Some(PathStatus::Failed) {
            cc.remove_path(path.cc_slot);
        } else {
            cc.set_suspended(path.cc_slot, !(path.interface_up && path.is_validated() && status == Some(PathStatus::Active)));
        }
    }
}
