//! The multipath half of a connection (draft-ietf-quic-multipath-21): 1-RTT packets over
//! several paths once this end has confirmed the handshake.
//!
//! * Opening (§5.1): the client sends PATH_CHALLENGE on every path beyond 0 once it has
//!   confirmed the handshake; the server answers with PATH_RESPONSE on the same path. A path
//!   carries data once validated (the client: on the response; the server: on the challenge,
//!   which proves the client reaches it there).
//! * ACKs (§7): PATH_ACK frames, one packet number space per path, sent on the same path or
//!   on the fastest one (`ack_path`). ACK-only packets are not congestion controlled.
//! * Sending: control probes and path-bound frames first, then PTO probes per path, then ACKs
//!   that are due, then data on the path the scheduler picks; redundant schedulers' copies are
//!   built at once and handed out by the following polls. Lost frames are queued again at the
//!   connection and go out on whichever path the scheduler picks next (§7.2).
//! * Queued copies (`tquic_redundant`, tquic 1.6's `scheduler_redundant.rs` and the buffered
//!   frames of its `connection.rs`): the STREAM frames of a packet that carried no queued copy
//!   are queued on each copy path. A path's packet takes its queued copies after the control
//!   frames and before new stream data, only the ranges not acknowledged by then, within the
//!   path's window and pacer like any packet; when no new data goes out, the first usable path
//!   (in path-id order) with copies, window room and its pacer's leave sends a packet of them.
//!   PTO probes take the queued copies of their path too, but are not copied themselves.
//! * Redundancy checks (`redundant_checks` of the scheduler options): `parallel` (the default)
//!   gives each copy exactly the primary packet's copied STREAM frames, without ACKs.
//!   `sequential` (seed 004's serial loop, §9.4) tells the scheduler when the packet starts with
//!   retransmitted data (the front stream has lost data queued again; it then gets no copy, and
//!   with `hold_new` the copied streams add no new data to it), and prepares each copy in its own
//!   path's room: that path's PATH_ACKs first, then the primary's copied frames while they fit,
//!   the first that does not fit cut short, the rest not copied.
//! * Datagrams (RFC 9221 frames are not bound to a path): a packet's DATAGRAM frames go on the
//!   path the scheduler picks, as its stream data does; while datagrams go first
//!   (`datagram_priority`), the scheduler sees the next one's content (redundant, urgent as
//!   its source's stream would be). The immediate copies of the redundant schedulers (RE, SRE)
//!   carry the DATAGRAM frames in their scope too, so a datagram is lost only when every copy
//!   is; each copy is acknowledged in its own path's space. tquic's queued copies carry stream
//!   data only.
//! * Validation (RFC 9000 §8.2): the client sends the challenge again at PTO pace, doubling,
//!   while no response came, and gives up three PTOs (the larger of the current one and one
//!   from the initial RTT) after the first, abandoning the path (§8.2.4; draft §3.1: a path
//!   that failed validation is closed with PATH_ABANDON).
//! * Failure: the profile's [`multiconn_multipath::PathHealth`] rules decide when a path is
//!   potentially failed; its data in flight is then queued again for the other paths. A host
//!   interface going down does the same at once; coming back, the client validates the path
//!   again.
//! * Path manager (the client's, [`PathAction`]): opening a route takes a new path ID with
//!   fresh state (path 0 included, once abandoned: its handshake is long done); abandoning
//!   sends PATH_ABANDON on another path (the peer answers with its own) and queues the path's
//!   data in flight again; a status change is announced with
//!   PATH_STATUS_BACKUP / PATH_STATUS_AVAILABLE (draft §3.3), and both ends then keep new data
//!   off a backup path while an available one is usable. A server learns a new path ID from
//!   the first datagram that carries it.
//! * Profiles change some of this (`[multipath]` of the profile): with `abandon = "drain"`
//!   (picoquic of early 2022, `quicctx.c` `picoquic_demote_path`) an abandoned path's data in
//!   flight is not queued again: it waits for the path's own loss detection (packet threshold,
//!   or the retransmission timer, which declares it lost) and whatever is left is queued again
//!   when the path's state is deleted, 3 × max(retransmission timer, 1 s) after the
//!   abandonment. `ack_path = "min_rtt"` sends the ACKs on the usable path with the smallest
//!   minimum RTT (picoquic's nominal ACK path). With `link_events = "ignore"` the endpoint does
//!   not follow its interfaces (picoquic's demo client of 2022 could not).

use multiconn_core::{Dur, Packet, Time};
use multiconn_multipath::{Content, CopyDelivery, Decision, PathView, Reaction, RedundantChecks, Request};
use multiconn_transport::profile::{AbandonRule, LinkEvents};
use multiconn_transport::{AckPath, Observation, PathAction, Role};

use super::packet_builder::sealed_packet;
use super::{Connection, HANDSHAKE_PATH};
use crate::ack_ranges::AckFrame;
use crate::frame::{fit_data, stream_overhead, Frame};
use crate::packet::{overhead_estimate, pn_len, Datagram, PacketType, QuicPacket, Space};
use crate::path::{PathPhase, PathState, QueuedCopy, Validation};

impl Connection {
    /// 1-RTT packets go through the multipath sender.
    pub(super) fn multipath_ready(&self) -> bool {
        self.mp.as_ref().is_some_and(|mp| mp.ready)
    }

    /// The route path ID `id` is open on (or was, until abandoned); `None` for an ID no longer
    /// current anywhere (its state was replaced by a newer ID), and without multipath.
    pub(super) fn route_of(&self, id: u32) -> Option<usize> {
        self.paths.iter().position(|p| p.path_id == Some(id))
    }

    /// Keeps path `p`'s place in the coupled controller in step with its state.
    fn sync_coupling(&self, p: usize) {
        if let Some(mp) = &self.mp {
            mp.sync_coupling(p, &self.paths[p]);
        }
    }

    /// This end confirmed the handshake: 1-RTT packets go through the multipath sender from
    /// now on, the other paths' recoveries know the handshake is confirmed and the client
    /// challenges them.
    pub(super) fn start_multipath(&mut self, now: Time) {
        let is_client = self.role == Role::Client;
        let Some(mp) = &mut self.mp else { return };
        mp.ready = true;
        for (p, path) in self.paths.iter_mut().enumerate() {
            if p == HANDSHAKE_PATH {
                continue;
            }
            path.recovery.set_handshake_confirmed(now);
            if is_client {
                let up = path.interface_up;
                if let Some(v) = path.validation_mut() {
                    v.challenge_pending = up;
                }
            }
        }
    }

    fn path_alive(&self, p: usize) -> bool {
        self.paths.get(p).is_some_and(PathState::is_alive)
    }

    /// Where the ACKs of path `q`'s packets go.
    fn ack_destination(&self, q: usize) -> usize {
        let Some(mp) = &self.mp else { return q };
        match mp.params.ack_path {
            AckPath::Same if self.path_alive(q) => q,
            AckPath::MinRtt => self.min_rtt_path().or_else(|| self.fastest_validated_path()).unwrap_or(q),
            _ => self.fastest_validated_path().unwrap_or(q),
        }
    }

    /// The validated open path the failover rules deem usable with the smallest minimum RTT
    /// (its smoothed RTT before the first sample); ties to the lower index.
    fn min_rtt_path(&self) -> Option<usize> {
        let mp = self.mp.as_ref()?;
        (0..self.paths.len()).filter(|&p| self.paths[p].is_validated() && self.path_alive(p) && mp.health.usable(p)).min_by_key(|&p| {
            let rtt = self.paths[p].recovery.rtt();
            (if rtt.has_sample() { rtt.min() } else { rtt.smoothed() }, p)
        })
    }

    /// The validated open path with the smallest smoothed RTT.
    fn fastest_validated_path(&self) -> Option<usize> {
        (0..self.paths.len())
            .filter(|&p| self.paths[p].is_validated() && self.path_alive(p))
            .min_by_key(|&p| (self.paths[p].recovery.rtt().smoothed(), p))
    }

    /// Adds the PATH_ACK frames that travel on `path`; true if one of them is due.
    pub(super) fn push_path_acks(&mut self, now: Time, path: usize, frames: &mut Vec<Frame>, avail: &mut usize) -> bool {
        let mut due = false;
        for q in 0..self.paths.len() {
            if self.ack_destination(q) != path {
                continue;
            }
            let Some(id) = self.paths[q].path_id else { continue };
            let rx = &self.paths[q].rx;
            if !rx.has_new() {
                continue;
            }
            let Some(ack) = rx.build(now) else { continue };
            let q_due = rx.ack_due(now);
            let f = Frame::PathAck { path: id, ack };
            if f.wire_size() <= *avail {
                *avail -= f.wire_size();
                frames.insert(frames.iter().take_while(|f| matches!(f, Frame::PathAck { .. })).count(), f);
                due |= q_due;
            }
        }
        due
    }

    pub(super) fn on_path_ack(&mut self, now: Time, id: u32, ack: &AckFrame) {
        if ack.ranges().any(|r| r.is_err()) {
            self.stats.invalid_frames += 1;
            return;
        }
        // PATH_ACKs for a path ID whose state is gone are ignored (draft §3.4).
        let Some(acked) = self.route_of(id) else { return };
        let mut out = std::mem::take(&mut self.outcome);
        out.clear();
        let rec = &mut self.paths[acked].recovery;
        let before = rec.stats().invalid_acks;
        rec.on_ack_received(now, Space::Data, ack.ranges().map_while(Result::ok), ack.delay(), ack.ecn, &mut out);
        let invalid = rec.stats().invalid_acks != before;
        if invalid {
            self.stats.invalid_frames += 1;
        }
        if !out.acked.is_empty() {
            if let Some(mp) = &mut self.mp {
                mp.health.on_ack_received(acked, now);
                mp.sync_coupling(acked, &self.paths[acked]);
            }
        }
        self.apply_outcome(now, &out);
        self.outcome = out;
    }

    pub(super) fn on_path_challenge(&mut self, p: usize) {
        let is_server = self.role == Role::Server;
        let Some(mp) = &self.mp else { return };
        if let Some(path) = self.paths.get_mut(p) {
            path.response_pending = true;
            if is_server {
                path.validate();
            }
            mp.sync_coupling(p, path);
        }
    }

    pub(super) fn on_path_response(&mut self, p: usize) {
        let Some(mp) = &self.mp else { return };
        if let Some(path) = self.paths.get_mut(p) {
            path.validate();
            mp.sync_coupling(p, path);
        }
    }

    /// The peer abandoned path ID `id`; an ID no longer current is ignored.
    pub(super) fn on_path_abandon_frame(&mut self, now: Time, id: u32) {
        if let Some(q) = self.route_of(id) {
            self.abandon_path(now, q);
        }
    }

    /// Closes the path open on route `gone`: a PATH_ABANDON goes out on another path (the
    /// answer, when the peer abandoned it first: draft §3.4), the path carries nothing more and
    /// its data in flight is queued again for the others — at once, or with `abandon = "drain"`
    /// only what the path's own loss detection has not declared lost by its deletion.
    pub(super) fn abandon_path(&mut self, now: Time, gone: usize) {
        let Some(mp) = &mut self.mp else { return };
        let Some(path) = self.paths.get_mut(gone) else { return };
        if !path.abandon() {
            return;
        }
        mp.health.abandon(gone, now);
        mp.sync_coupling(gone, path);
        path.queued_copies.clear();
        match mp.abandon {
            AbandonRule::Requeue => self.requeue_in_flight(gone),
            AbandonRule::Drain => {
                let path = &mut self.paths[gone];
                let timer = path.recovery.retransmit_timeout().max(Dur::from_secs(1));
                path.delete_at = Some(now + Dur(timer.0.saturating_mul(3)));
            }
        }
        self.paths[gone].probes = 0;
    }

    /// Deletes the state of abandoned paths whose time has come: their data still in flight is
    /// queued again and their packet number space forgotten (late ACKs for it are ignored).
    fn delete_paths(&mut self, now: Time) {
        for p in 0..self.paths.len() {
            if !self.paths[p].delete_at.is_some_and(|t| t <= now) {
                continue;
            }
            self.paths[p].delete_at = None;
            self.requeue_in_flight(p);
            self.paths[p].recovery.discard_space(now, Space::Data);
        }
    }

    /// PATH_STATUS_BACKUP / PATH_STATUS_AVAILABLE from the peer: only a sequence number
    /// greater than the last one seen for the path ID counts (draft §3.3).
    pub(super) fn on_path_status_frame(&mut self, id: u32, backup: bool, seq: u64) {
        let Some(q) = self.route_of(id) else { return };
        let path = &mut self.paths[q];
        if path.peer_status_seq.is_some_and(|last| seq <= last) {
            return;
        }
        path.peer_status_seq = Some(seq);
        path.backup = backup;
    }

    /// Whether a datagram for path ID `id` on route `path` is processed. A server takes a
    /// greater ID than the route's current one as the client opening a new path there, and
    /// starts its state afresh; a smaller ID belongs to a path whose state is gone.
    pub(super) fn accept_path_id(&mut self, now: Time, path: usize, id: u32) -> bool {
        if self.mp.is_none() {
            return true;
        }
        match self.paths[path].path_id {
            Some(cur) if cur == id => true,
            Some(cur) if id < cur => false,
            _ if self.role == Role::Server => {
                self.reset_path(now, path, id);
                true
            }
            _ => false,
        }
    }

    /// Path ID `id` opens on route `p`: fresh packet number space, RTT estimator, congestion
    /// controller (a new place in the coupling), pacer, ACK state and health; to be validated.
    /// Only the route's interface state and its counters carry over to the new path ID; data
    /// an abandoned ID still held (`abandon = "drain"`) is queued again.
    fn reset_path(&mut self, now: Time, p: usize, id: u32) {
        if self.paths[p].delete_at.is_some() {
            // The route is opened again before its abandoned path ID was deleted
            // (`abandon = "drain"`): what that ID still holds goes out again now, as at its
            // deletion, since its state is replaced here.
            self.requeue_in_flight(p);
        }
        let Some(mp) = &mut self.mp else { return };
        let old = &self.paths[p];
        let (controller, slot) = mp.new_controller(old.path_id.map(|_| old.cc_slot));
        let mut fresh = mp.template.new_path(controller);
        if mp.ready {
            fresh.recovery.set_handshake_confirmed(now);
        }
        mp.next_path_id = mp.next_path_id.max(id + 1);
        mp.health.remove_path(p);
        mp.health.add_path(p, now);
        fresh.path_id = Some(id);
        self.observations.note(Observation::PathIdOpened { path: p as u8, path_id: id });
        fresh.path_ids_opened = old.path_ids_opened + 1;
        fresh.cc_slot = slot;
        fresh.interface_up = old.interface_up;
        fresh.lost_before = old.lost_before + old.recovery.stats().lost_packets;
        fresh.spurious_before = old.spurious_before + old.recovery.stats().spurious_losses;
        fresh.counters = old.counters;
        drop(std::mem::replace(&mut self.paths[p], fresh));
        mp.sync_coupling(p, &self.paths[p]);
    }

    /// The client's path manager acts on route `path`.
    pub(super) fn apply_path_action(&mut self, now: Time, action: PathAction) {
        let is_client = self.role == Role::Client;
        let Some(mp) = &self.mp else { return };
        let n = self.paths.len();
        match action {
            PathAction::Open { path, path_id, backup } => {
                let p = usize::from(path);
                if !is_client || p >= n || !self.paths[p].is_abandoned() {
                    return;
                }
                let (id, ready) = (path_id.max(mp.next_path_id), mp.ready);
                self.reset_path(now, p, id);
                let path = &mut self.paths[p];
                // Before the handshake is confirmed the path is challenged with the others.
                let up = path.interface_up;
                if let Some(v) = path.validation_mut() {
                    v.challenge_pending = ready && up;
                }
                if backup {
                    path.backup = true;
                    path.status_seq += 1;
                    path.status_pending = true;
                }
            }
            PathAction::Abandon { path } => {
                let p = usize::from(path);
                if p < n {
                    self.abandon_path(now, p);
                }
            }
            PathAction::SetStatus { path, backup } => {
                let Some(path) = self.paths.get_mut(usize::from(path)) else { return };
                if path.is_abandoned() || path.backup == backup {
                    return;
                }
                path.backup = backup;
                path.status_seq += 1;
                path.status_pending = true;
            }
        }
    }

    /// Queues again the data of every packet in flight on `path` (it goes out on other paths).
    fn requeue_in_flight(&mut self, path: usize) {
        let mut contents = std::mem::take(&mut self.probe_contents);
        contents.clear();
        self.paths[path].recovery.oldest_unacked(Space::Data, usize::MAX, &mut contents);
        for c in &contents {
            if let Some(pkt) = c.payload.get::<Datagram>().and_then(|d| d.get(c.index as usize)) {
                self.requeue(pkt);
            }
        }
        contents.clear();
        self.probe_contents = contents;
    }

    fn react(&mut self, path: usize, r: Reaction) {
        self.sync_coupling(path);
        if r.requeue_in_flight {
            self.requeue_in_flight(path);
        }
        if r.probe && self.paths[path].probes == 0 && self.path_alive(path) {
            self.paths[path].probes = 1;
        }
    }

    /// A PTO fired on path `p`: the failover rules hear of it once the multipath sender runs.
    pub(super) fn on_path_pto(&mut self, now: Time, p: usize) {
        let Some(mp) = &mut self.mp else { return };
        if !mp.ready {
            return;
        }
        let r = mp.health.on_timeout(p, now);
        self.react(p, r);
    }

    /// An `mpquic-2018` retransmission timeout fired on path `p`: the failover rules hear of
    /// it (mp-quic's `onRTOCallback`). When they find the path potentially failed, every packet
    /// still in flight on it is declared lost into `out` (`retransmitAllPackets`) before the
    /// reaction (a PING on the path). Returns whether the path is still usable (its two
    /// retransmissions then go out on it); a single-path connection's always is.
    pub(super) fn on_path_rto(&mut self, now: Time, p: usize, out: &mut crate::recovery::Outcome) -> bool {
        let Some(mp) = &mut self.mp else { return true };
        if !mp.ready {
            return true;
        }
        let r = mp.health.on_timeout(p, now);
        if r.requeue_in_flight {
            self.paths[p].recovery.declare_in_flight_lost(now, out);
        }
        self.react(p, r);
        self.mp.as_ref().map_or(true, |mp| mp.health.usable(p))
    }

    /// Timers of the health rules, of path validation and of abandoned paths' deletion.
    pub(super) fn multipath_timers(&mut self, now: Time) {
        let Some(mp) = &mut self.mp else { return };
        for (p, r) in mp.health.on_tick(now) {
            self.react(p, r);
        }
        self.validation_timers(now);
        self.delete_paths(now);
    }

    /// The client's path validation timers: send the challenge again, or give up.
    fn validation_timers(&mut self, now: Time) {
        let mut failed = Vec::new();
        for (p, path) in self.paths.iter_mut().enumerate() {
            let up = path.interface_up;
            let Some(v) = path.validation_mut() else { continue };
            if !v.retry_at.is_some_and(|t| t <= now) {
                continue;
            }
            v.retry_at = None;
            if !up {
                // Started again when the interface comes back.
                *v = Validation::default();
            } else if v.deadline.is_some_and(|d| d <= now) {
                failed.push(p);
            } else {
                v.challenge_pending = true;
            }
        }
        for p in failed {
            self.stats.path_validation_failures += 1;
            self.abandon_path(now, p);
        }
    }

    /// A PATH_CHALLENGE went out on `p`: when to send it again, and when to give up.
    fn on_challenge_sent(&mut self, now: Time, p: usize) {
        let Some(mp) = &self.mp else { return };
        let mad = mp.template.recovery.max_ack_delay;
        let pto = self.paths[p].recovery.rtt().pto_base(mad);
        let current = self.handshake_path().recovery.rtt().pto_base(mad);
        let initial = mp.template.initial_pto();
        if let Some(v) = self.paths[p].validation_mut() {
            v.on_challenge_sent(now, pto, Dur(current.max(initial).0.saturating_mul(3)));
        }
    }

    /// The host's interface for path `p` went down or came back.
    pub(super) fn on_interface_change(&mut self, now: Time, p: usize, up: bool) {
        let is_client = self.role == Role::Client;
        let Some(mp) = &mut self.mp else { return };
        if mp.link_events == LinkEvents::Ignore {
            return;
        }
        let Some(path) = self.paths.get_mut(p) else { return };
        if path.interface_up == up {
            return;
        }
        path.interface_up = up;
        if path.is_abandoned() {
            return;
        }
        if up {
            // The client validates the path again before relying on it (the handshake path
            // was validated by the handshake).
            if is_client && mp.ready && p != HANDSHAKE_PATH {
                path.phase = PathPhase::Validating(Validation::challenge());
            }
            let r = mp.health.on_link_up_hint(p, now);
            self.react(p, r);
        } else {
            let r = mp.health.on_link_down_hint(p, now);
            self.react(p, Reaction { requeue_in_flight: true, ..r });
        }
    }

    // ---------------------------------------------------------------- sending

    pub(super) fn transmit_multipath(&mut self, now: Time, next_id: &mut u64) -> Option<Packet> {
        let mp = self.mp.as_mut()?;
        if let Some(p) = mp.pending.pop_front() {
            return Some(p);
        }
        let n = self.paths.len();
        // Path-bound control: PATH_CHALLENGE and PATH_RESPONSE go on their own path.
        for p in 0..n {
            let path = &self.paths[p];
            if !(self.path_alive(p) && (path.challenge_pending() || path.response_pending)) {
                continue;
            }
            let path = &mut self.paths[p];
            let response = std::mem::take(&mut path.response_pending);
            let challenge = path.take_challenge();
            let mut frames = Vec::new();
            if response {
                frames.push(Frame::PathResponse);
            }
            if challenge {
                frames.push(Frame::PathChallenge);
                self.on_challenge_sent(now, p);
            }
            let qp = self.packet_with(now, p, frames, true);
            return Some(self.emit(now, p, qp, next_id));
        }
        // Path management frames (PATH_ABANDON, PATH_STATUS_*) on the fastest open path.
        if let Some(pkt) = self.path_management(now, next_id) {
            return Some(pkt);
        }
        // PTO probes, per path, ignoring window and pacing. A path the failover profile no
        // longer deems usable is probed with a PING alone: its data was queued again for the
        // other paths and must not go back into the probe (mp-quic sends PINGs on a
        // potentially failed path, picoquic a bare multipath probe).
        for p in 0..n {
            if self.paths[p].probes > 0 {
                if !self.path_alive(p) {
                    self.paths[p].probes = 0;
                    continue;
                }
                self.paths[p].probes -= 1;
                let usable = self.mp.as_ref().is_some_and(|mp| mp.health.usable(p));
                let qp = if usable {
                    self.build_packet(now, Space::Data, PacketType::OneRtt, self.mds, true, true, p)
                } else {
                    Some(self.packet_with(now, p, vec![Frame::Ping], true))
                };
                if let Some(qp) = qp {
                    self.stats.probes_sent += 1;
                    return Some(self.emit(now, p, qp, next_id));
                }
            }
        }
        // ACKs that are due go alone if no data will carry them.
        let ack_due = (0..n).find(|&q| self.paths[q].rx.ack_due(now)).map(|q| self.ack_destination(q));
        // New data on the path the scheduler picks.
        if self.has_data(Space::Data) {
            // picoquic's and tquic's schedulers weigh the pacers before choosing; the others
            // choose, then wait for the chosen path's pacer.
            let paced = self.mp.as_ref().is_some_and(|mp| mp.scheduler.kind().reads_pacer());
            let mds = self.mds as u64;
            let pacing_ready: Vec<bool> =
                (0..n).map(|p| !paced || !self.path_alive(p) || self.paths[p].paced_until(now, mds).is_none()).collect();
            let views = self.path_views(&pacing_ready);
            let content = self.front_content();
            let retransmission = self.front_retransmission();
            let req = Request { now, content, queued_bytes: self.queued_bytes(), send_window: u64::MAX, retransmission };
            let decision = self.mp.as_mut()?.scheduler.decide(&views, &req);
            if let Decision::Send { path, copies, scope, hold_new, delivery } = decision {
                self.app_limited = false;
                if self.paths[path].paced_until(now, self.mds as u64).is_some() {
                    // The chosen path's pacer holds the packet back; it is asked again then.
                    return self.ack_only(now, ack_due, next_id);
                }
                self.hold_new = hold_new.then_some(scope);
                let copies_before = self.paths[path].counters.copies_sent;
                let built = self.build_packet(now, Space::Data, PacketType::OneRtt, self.mds, true, false, path);
                self.hold_new = None;
                if delivery == CopyDelivery::Queued {
                    if let Some(qp) = built {
                        // tquic: a packet that carried queued copies is not copied again.
                        if self.paths[path].counters.copies_sent == copies_before {
                            self.queue_copies(&qp.frames, &copies);
                        }
                        return Some(self.emit(now, path, qp, next_id));
                    }
                } else if let Some(qp) = built {
                    let sequential = self.mp.as_ref().is_some_and(|mp| mp.params.options.redundant_checks == RedundantChecks::Sequential);
                    for &c in &copies {
                        let frames: Vec<Frame> = qp
                            .frames
                            .iter()
                            .filter(|f| match f {
                                Frame::Stream { id, .. } => {
                                    scope == multiconn_multipath::CopyScope::AllStreams
                                        || self.streams.get(*id).is_some_and(|s| s.redundant)
                                }
                                Frame::Datagram { tag, .. } => {
                                    scope == multiconn_multipath::CopyScope::AllStreams
                                        || self.dgram.options_in_flight(*tag).is_some_and(|o| o.redundant)
                                }
                                _ => false,
                            })
                            .cloned()
                            .collect();
                        if frames.is_empty() {
                            continue;
                        }
                        let copy = if sequential {
                            match self.copy_in_own_room(now, c, frames) {
                                Some(copy) => copy,
                                None => continue,
                            }
                        } else {
                            self.packet_with(now, c, frames, false)
                        };
                        let pkt = self.emit(now, c, copy, next_id);
                        self.paths[c].counters.copies_sent += 1;
                        if let Some(mp) = self.mp.as_mut() {
                            mp.pending.push_back(pkt);
                        }
                    }
                    return Some(self.emit(now, path, qp, next_id));
                }
            }
        } else {
            if let Some(pkt) = self.send_queued_copies(now, next_id) {
                return Some(pkt);
            }
            self.app_limited = true;
            let mds = self.mds as u64;
            for path in &mut self.paths {
                if path.has_window_room(mds) {
                    path.recovery.on_app_limited();
                }
            }
            return self.ack_only(now, ack_due, next_id);
        }
        if let Some(pkt) = self.send_queued_copies(now, next_id) {
            return Some(pkt);
        }
        self.ack_only(now, ack_due, next_id)
    }

    /// Queues a copy of every STREAM frame of `frames` on each path of `copies`, behind what
    /// the path already has queued.
    fn queue_copies(&mut self, frames: &[Frame], copies: &[usize]) {
        for &c in copies {
            let queue = &mut self.paths[c].queued_copies;
            for f in frames {
                if let Frame::Stream { id, offset, len, fin } = *f {
                    queue.push_back(QueuedCopy { stream: id, offset, len: u64::from(len), fin });
                }
            }
        }
    }

    /// A packet of queued copies when no new data goes out (tquic's fallback path choice): on
    /// the first usable path, in path-id order, with copies not yet acknowledged, window room
    /// and its pacer's leave; its PATH_ACKs travel with them.
    fn send_queued_copies(&mut self, now: Time, next_id: &mut u64) -> Option<Packet> {
        if self.paths.iter().all(|p| p.queued_copies.is_empty()) {
            return None;
        }
        let mds = self.mds as u64;
        for p in 0..self.paths.len() {
            self.drop_acknowledged_copies(p);
            let usable = self.paths[p].is_validated() && self.path_alive(p) && self.mp.as_ref().is_some_and(|mp| mp.health.usable(p));
            let path = &mut self.paths[p];
            if !usable || path.queued_copies.is_empty() || !path.has_window_room(mds) || path.paced_until(now, mds).is_some() {
                continue;
            }
            if let Some(qp) = self.build_packet(now, Space::Data, PacketType::OneRtt, self.mds, true, false, p) {
                self.app_limited = false;
                return Some(self.emit(now, p, qp, next_id));
            }
        }
        None
    }

    /// Drops the copies at the front of path `p`'s queue that were acknowledged meanwhile (or
    /// whose stream was reset or is gone).
    fn drop_acknowledged_copies(&mut self, p: usize) {
        while let Some(c) = self.paths[p].queued_copies.front() {
            let end = c.offset.saturating_add(c.len);
            let live = self.streams.get(c.stream).filter(|s| !s.send.is_reset()).and_then(|s| s.send.first_unacked(c.offset, end));
            if live.is_some() {
                break;
            }
            self.paths[p].queued_copies.pop_front();
        }
    }

    /// A packet with the pending PATH_ABANDON and PATH_STATUS frames, on the validated open
    /// path with the smallest RTT (another path than an abandoned one: draft §3.4). They are
    /// few and small, and go out regardless of the window, like the challenges.
    fn path_management(&mut self, now: Time, next_id: &mut u64) -> Option<Packet> {
        if !self.paths.iter().any(|path| path.phase == PathPhase::Abandoning || path.status_pending) {
            return None;
        }
        let carrier = self.fastest_validated_path()?;
        let mut frames = Vec::new();
        for path in &mut self.paths {
            let Some(id) = path.path_id else { continue };
            if path.phase == PathPhase::Abandoning {
                path.phase = PathPhase::Abandoned;
                frames.push(Frame::PathAbandon { path: id });
            }
            if path.status_pending {
                path.status_pending = false;
                frames.push(Frame::PathStatus { path: id, backup: path.backup, seq: path.status_seq });
            }
        }
        let qp = self.packet_with(now, carrier, frames, true);
        Some(self.emit(now, carrier, qp, next_id))
    }

    /// An ACK-only packet on `dest`, if one is due.
    fn ack_only(&mut self, now: Time, dest: Option<usize>, next_id: &mut u64) -> Option<Packet> {
        let dest = dest?;
        let qp = self.build_packet(now, Space::Data, PacketType::OneRtt, self.mds, false, false, dest)?;
        Some(self.emit(now, dest, qp, next_id))
    }

    /// What the scheduler sees of each path. Pacing is applied afterwards, to the chosen path
    /// only (copies of redundant schedulers need window space, not a pacing slot); picoquic's
    /// scheduler alone reads `pacing_ready`.
    fn path_views(&self, pacing_ready: &[bool]) -> Vec<PathView> {
        let health = self.mp.as_ref().map(|mp| &mp.health);
        let views = self.paths.iter().enumerate().map(|(p, path)| {
            let r = &path.recovery;
            let rtt = r.rtt();
            let (srtt, sampled) = (rtt.smoothed(), rtt.has_sample());
            PathView {
                id: p,
                usable: path.is_validated() && path.is_alive() && health.is_some_and(|h| h.usable(p)),
                backup: path.backup,
                srtt,
                rttvar: rtt.rttvar(),
                min_rtt: if sampled { rtt.min() } else { srtt },
                cwnd: r.cwnd(),
                bytes_in_flight: r.bytes_in_flight(),
                mss: self.mds as u64,
                has_sent_anything: path.counters.packets_sent > 0,
                rtt_sampled: sampled,
                packets_sent: path.counters.packets_sent,
                in_slow_start: r.controller().ssthresh().is_none(),
                retransmissions_outstanding: false,
                last_sent: path.last_sent,
                pacing_ready: pacing_ready.get(p).copied().unwrap_or(true),
            }
        });
        views.collect()
    }

    /// The content class of the next stream data (or datagram, when datagrams go first) to go
    /// out.
    fn front_content(&self) -> Content {
        if let Some(o) = self.dgram.front_options() {
            let first = self.dgram.priority() == multiconn_transport::DatagramPriority::BeforeStreams || self.streams.front().is_none();
            if first {
                return Content::Stream { redundant: o.redundant, priority: o.urgent };
            }
        }
        match self.streams.front().and_then(|id| self.streams.get(id)) {
            Some(s) => Content::Stream { redundant: s.redundant, priority: s.urgent },
            None => Content::Control,
        }
    }

    /// The next stream data to go out is retransmitted: the front stream (the packet's first
    /// stream frame comes from it) has lost data queued again.
    fn front_retransmission(&self) -> bool {
        self.streams.front().and_then(|id| self.streams.get(id)).is_some_and(|s| s.send.has_retransmit())
    }

    /// A copy prepared by path `path` itself (sequential redundancy checks, seed 004 §9.4): the
    /// PATH_ACKs that travel on `path` go first, then the primary's stream `frames` in order
    /// while they fit in the room a packet on `path` has left (the same room the primary was
    /// filled in: the datagram size less the 1-RTT overhead); the first frame that does not fit
    /// whole is cut to what fits (without its FIN) and the rest is not copied. `None` when no
    /// stream data fits.
    fn copy_in_own_room(&mut self, now: Time, path: usize, frames: Vec<Frame>) -> Option<QuicPacket> {
        let pn = self.paths[path].recovery.next_pn(Space::Data);
        let pn_len = pn_len(pn, self.paths[path].recovery.largest_acked(Space::Data));
        let mut avail = self.mds.saturating_sub(overhead_estimate(PacketType::OneRtt, self.dcid_len, self.dcid_len, pn_len));
        let mut out = Vec::new();
        self.push_path_acks(now, path, &mut out, &mut avail);
        let acks = out.len();
        for f in frames {
            if let Frame::Datagram { .. } = f {
                // A datagram is copied whole or not at all.
                if f.wire_size() > avail {
                    break;
                }
                avail -= f.wire_size();
                out.push(f);
                continue;
            }
            let Frame::Stream { id, offset, len, .. } = f else { continue };
            if f.wire_size() <= avail {
                avail -= f.wire_size();
                out.push(f);
                continue;
            }
            if let Some(cut) = fit_data(avail, u64::from(len), |l| stream_overhead(id, offset, l)).filter(|&l| l > 0) {
                out.push(Frame::Stream { id, offset, len: cut as u32, fin: false });
            }
            break;
        }
        if out.len() == acks {
            return None;
        }
        Some(sealed_packet(PacketType::OneRtt, pn, pn_len, out, self.dcid_len))
    }

    /// Stream bytes waiting to be sent (new data and retransmissions) and queued datagram
    /// bytes, for ECF.
    fn queued_bytes(&self) -> u64 {
        self.streams.ids().filter_map(|id| self.streams.get(id)).map(|s| s.send.new_bytes()).sum::<u64>() + self.dgram.queued_bytes()
    }

    /// A 1-RTT packet on `path` with `frames` (and the PATH_ACKs that travel on it if
    /// `with_acks`).
    fn packet_with(&mut self, now: Time, path: usize, mut frames: Vec<Frame>, with_acks: bool) -> QuicPacket {
        let pn = self.paths[path].recovery.next_pn(Space::Data);
        let pn_len = pn_len(pn, self.paths[path].recovery.largest_acked(Space::Data));
        if with_acks {
            let mut avail = self.mds.saturating_sub(64);
            let mut acks = Vec::new();
            self.push_path_acks(now, path, &mut acks, &mut avail);
            acks.append(&mut frames);
            frames = acks;
        }
        sealed_packet(PacketType::OneRtt, pn, pn_len, frames, self.dcid_len)
    }

    /// Sends a 1-RTT packet alone in a datagram on `path`, under the path's current ID.
    fn emit(&mut self, now: Time, path: usize, qp: QuicPacket, next_id: &mut u64) -> Packet {
        let path_id = self.paths[path].path_id.unwrap_or(0);
        self.register_datagram(now, path, Datagram { first: qp, coalesced: Vec::new(), path_id }, next_id)
    }
}
