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
//! * Validation (RFC 9000 §8.2): the client sends the challenge again at PTO pace, doubling,
//!   while no response came, and gives up three PTOs (the larger of the current one and one
//!   from the initial RTT) after the first, abandoning the path (§8.2.4; draft §3.1: a path
//!   that failed validation is closed with PATH_ABANDON).
//! * Failure: the profile's [`multiconn_multipath::PathHealth`] rules decide when a path is
//!   potentially failed; its data in flight is then queued again for the other paths. A host
//!   interface going down does the same at once; coming back, the client validates the path
//!   again.
//! * Path manager (the client's, [`PathAction`]): opening a route takes a new path ID with
//!   fresh state; abandoning sends PATH_ABANDON on another path (the peer answers with its
//!   own) and queues the path's data in flight again; a status change is announced with
//!   PATH_STATUS_BACKUP / PATH_STATUS_AVAILABLE (draft §3.3), and both ends then keep new data
//!   off a backup path while an available one is usable. A server learns a new path ID from
//!   the first datagram that carries it.

use multiconn_cc::RttEstimator;
use multiconn_core::{Dur, Packet, Payload, Time};
use multiconn_multipath::{Content, Decision, PathStatus, PathView, Reaction, Request};
use multiconn_transport::{AckPath, PathAction, PathStats, Role};

use super::Connection;
use crate::ack_ranges::AckFrame;
use crate::frame::Frame;
use crate::packet::{header_size, pn_len, Datagram, PacketType, QuicPacket, Space, AEAD_TAG, IP_UDP_OVERHEAD, MIN_PN_AND_PAYLOAD};
use crate::ack_state::AckState;
use crate::path::PathMeta;
use crate::recovery::{Recovery, SentContent, SentPacketInfo};

impl Connection {
    /// Paths of this connection (1 without multipath).
    pub fn path_count(&self) -> usize {
        self.mp.as_ref().map_or(1, |mp| mp.path_count())
    }

    /// Loss recovery of path `p` (path 0: the connection's own).
    pub fn path_recovery(&self, p: usize) -> &Recovery {
        self.rec(p)
    }

    pub(super) fn rec(&self, p: usize) -> &Recovery {
        if p == 0 {
            &self.recovery
        } else {
            &self.mp.as_ref().expect("paths beyond 0 exist only with multipath").extra[p - 1].recovery
        }
    }

    fn rec_mut(&mut self, p: usize) -> &mut Recovery {
        if p == 0 {
            &mut self.recovery
        } else {
            &mut self.mp.as_mut().expect("paths beyond 0 exist only with multipath").extra[p - 1].recovery
        }
    }

    fn data_rx(&self, p: usize) -> &AckState {
        if p == 0 {
            &self.rx[Space::Data.index()]
        } else {
            &self.mp.as_ref().expect("paths beyond 0 exist only with multipath").extra[p - 1].rx
        }
    }

    pub(super) fn data_rx_mut(&mut self, p: usize) -> &mut AckState {
        if p == 0 {
            &mut self.rx[Space::Data.index()]
        } else {
            &mut self.mp.as_mut().expect("paths beyond 0 exist only with multipath").extra[p - 1].rx
        }
    }

    fn probes_of(&self, p: usize) -> u8 {
        match (p, &self.mp) {
            (0, _) | (_, None) => self.probes[Space::Data.index()],
            (_, Some(mp)) => mp.extra[p - 1].probes,
        }
    }

    fn set_probes(&mut self, p: usize, n: u8) {
        match (p, &mut self.mp) {
            (0, _) | (_, None) => self.probes[Space::Data.index()] = n,
            (_, Some(mp)) => mp.extra[p - 1].probes = n,
        }
    }

    /// 1-RTT packets go through the multipath sender.
    pub(super) fn mp_ready(&self) -> bool {
        self.mp.as_ref().is_some_and(|mp| mp.ready)
    }

    /// This end confirmed the handshake: the other paths may open.
    pub(super) fn mp_on_confirmed(&mut self, now: Time) {
        let is_client = self.role == Role::Client;
        let Some(mp) = &mut self.mp else { return };
        mp.ready = true;
        for e in &mut mp.extra {
            e.recovery.set_handshake_confirmed(now);
            e.recovery.set_peer_completed_address_validation(now);
        }
        if is_client {
            for m in mp.meta.iter_mut().skip(1) {
                m.challenge_pending = m.interface_up && !m.abandoned;
            }
        }
    }

    fn path_alive(&self, p: usize) -> bool {
        self.mp.as_ref().map_or(p == 0, |mp| mp.meta.get(p).is_some_and(|m| m.interface_up && !m.abandoned))
    }

    /// Where the ACKs of path `q`'s packets go.
    fn ack_destination(&self, q: usize) -> usize {
        let Some(mp) = &self.mp else { return 0 };
        match mp.params.ack_path {
            AckPath::Same if self.path_alive(q) => q,
            _ => (0..mp.path_count())
                .filter(|&p| mp.meta[p].validated && self.path_alive(p))
                .min_by_key(|&p| (self.rec(p).rtt().smoothed(), p))
                .unwrap_or(q),
        }
    }

    /// Adds the PATH_ACK frames that travel on `path`; true if one of them is due.
    pub(super) fn push_path_acks(&mut self, now: Time, path: usize, frames: &mut Vec<Frame>, avail: &mut usize) -> bool {
        let mut due = false;
        for q in 0..self.path_count() {
            if self.ack_destination(q) != path {
                continue;
            }
            let Some(id) = self.mp.as_ref().and_then(|mp| mp.meta[q].path_id) else { continue };
            let rx = self.data_rx(q);
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
        let Some(acked) = self.mp.as_ref().and_then(|mp| mp.route_of(id)) else { return };
        let mut out = std::mem::take(&mut self.outcome);
        out.clear();
        let rec = self.rec_mut(acked);
        let before = rec.stats().invalid_acks;
        rec.on_ack_received(now, Space::Data, ack.ranges().map_while(Result::ok), ack.delay(), &mut out);
        let invalid = rec.stats().invalid_acks != before;
        if invalid {
            self.stats.invalid_frames += 1;
        }
        if !out.acked.is_empty() {
            if let Some(mp) = &mut self.mp {
                mp.health.on_ack_received(acked, now);
                mp.sync_coupling(acked);
            }
        }
        self.apply_outcome(now, &out);
        self.outcome = out;
    }

    pub(super) fn on_path_challenge(&mut self, path: usize) {
        let is_server = self.role == Role::Server;
        let Some(mp) = self.mp.as_mut() else { return };
        if let Some(m) = mp.meta.get_mut(path) {
            m.response_pending = true;
            if is_server && !m.abandoned {
                m.validated = true;
            }
            mp.sync_coupling(path);
        }
    }

    pub(super) fn on_path_response(&mut self, path: usize) {
        let Some(mp) = self.mp.as_mut() else { return };
        if let Some(m) = mp.meta.get_mut(path) {
            if !m.abandoned {
                m.validated = true;
                m.stop_validation();
            }
            mp.sync_coupling(path);
        }
    }

    /// The peer abandoned path ID `id`; an ID no longer current is ignored.
    pub(super) fn on_path_abandon_frame(&mut self, now: Time, id: u32) {
        if let Some(q) = self.mp.as_ref().and_then(|mp| mp.route_of(id)) {
            self.abandon_path(now, q);
        }
    }

    /// Closes the path open on route `gone`: a PATH_ABANDON goes out on another path (the
    /// answer, when the peer abandoned it first: draft §3.4), the path carries nothing more and
    /// its data in flight is queued again for the others.
    pub(super) fn abandon_path(&mut self, now: Time, gone: usize) {
        let Some(mp) = &mut self.mp else { return };
        let Some(m) = mp.meta.get_mut(gone) else { return };
        if m.abandoned {
            return;
        }
        m.abandoned = true;
        m.abandon_pending = true;
        m.status_pending = false;
        m.stop_validation();
        mp.health.abandon(gone, now);
        mp.sync_coupling(gone);
        self.requeue_in_flight(gone);
        if self.probes_of(gone) > 0 {
            self.set_probes(gone, 0);
        }
    }

    /// PATH_STATUS_BACKUP / PATH_STATUS_AVAILABLE from the peer: only a sequence number
    /// greater than the last one seen for the path ID counts (draft §3.3).
    pub(super) fn on_path_status_frame(&mut self, id: u32, backup: bool, seq: u64) {
        let Some(mp) = self.mp.as_mut() else { return };
        let Some(q) = mp.route_of(id) else { return };
        let m = &mut mp.meta[q];
        if m.peer_status_seq.is_some_and(|last| seq <= last) {
            return;
        }
        m.peer_status_seq = Some(seq);
        m.backup = backup;
    }

    /// Whether a datagram for path ID `id` on route `path` is processed. A server takes a
    /// greater ID than the route's current one as the client opening a new path there, and
    /// starts its state afresh; a smaller ID belongs to a path whose state is gone.
    pub(super) fn accept_path_id(&mut self, now: Time, path: usize, id: u32) -> bool {
        let is_server = self.role == Role::Server;
        let Some(mp) = &self.mp else { return true };
        match mp.meta[path].path_id {
            Some(cur) if cur == id => true,
            Some(cur) if id < cur => false,
            _ if is_server => {
                self.reset_path(now, path, id);
                true
            }
            _ => false,
        }
    }

    /// Path ID `id` opens on route `p`: fresh packet number space, RTT estimator, congestion
    /// controller (a new place in the coupling), pacer, ACK state and health; to be validated.
    fn reset_path(&mut self, now: Time, p: usize, id: u32) {
        let Some(mp) = &mut self.mp else { return };
        let old_slot = mp.meta[p].path_id.map(|_| mp.meta[p].cc_slot);
        let (controller, slot) = mp.new_controller(old_slot);
        let mut fresh = mp.template.new_path(controller);
        if mp.ready {
            fresh.recovery.set_handshake_confirmed(now);
            fresh.recovery.set_peer_completed_address_validation(now);
        }
        mp.next_path_id = mp.next_path_id.max(id + 1);
        mp.health.remove_path(p);
        mp.health.add_path(p, now);
        let m = &mut mp.meta[p];
        // Only the route's own state and its counters carry over to the new path ID.
        *m = PathMeta {
            path_id: Some(id),
            path_ids_opened: m.path_ids_opened + 1,
            cc_slot: slot,
            interface_up: m.interface_up,
            lost_before: m.lost_before,
            counters: m.counters,
            ..PathMeta::default()
        };
        let lost = self.rec(p).stats().lost_packets;
        let old = if p == 0 {
            self.pacer = fresh.pacer;
            self.pacing_release = None;
            self.rx[Space::Data.index()] = fresh.rx;
            self.probes[Space::Data.index()] = 0;
            std::mem::replace(&mut self.recovery, fresh.recovery)
        } else {
            let mp = self.mp.as_mut().expect("checked above");
            std::mem::replace(&mut mp.extra[p - 1], fresh).recovery
        };
        drop(old);
        let mp = self.mp.as_mut().expect("checked above");
        mp.meta[p].lost_before += lost;
        mp.sync_coupling(p);
    }

    /// The client's path manager acts on route `path`.
    pub(super) fn mp_on_path_action(&mut self, now: Time, action: PathAction) {
        let is_client = self.role == Role::Client;
        let Some(mp) = &self.mp else { return };
        let n = mp.path_count();
        match action {
            PathAction::Open { path, path_id, backup } => {
                let p = usize::from(path);
                if !is_client || p >= n || !mp.meta[p].abandoned {
                    return;
                }
                let id = path_id.max(mp.next_path_id);
                self.reset_path(now, p, id);
                let mp = self.mp.as_mut().expect("checked above");
                let ready = mp.ready;
                let m = &mut mp.meta[p];
                // Before the handshake is confirmed the path is challenged with the others.
                m.challenge_pending = ready && m.interface_up;
                if backup {
                    m.backup = true;
                    m.status_seq += 1;
                    m.status_pending = true;
                }
            }
            PathAction::Abandon { path } => {
                let p = usize::from(path);
                if p < n {
                    self.abandon_path(now, p);
                }
            }
            PathAction::SetStatus { path, backup } => {
                let Some(m) = self.mp.as_mut().and_then(|mp| mp.meta.get_mut(usize::from(path))) else { return };
                if m.abandoned || m.backup == backup {
                    return;
                }
                m.backup = backup;
                m.status_seq += 1;
                m.status_pending = true;
            }
        }
    }

    /// Queues again the data of every packet in flight on `path` (it goes out on other paths).
    fn requeue_in_flight(&mut self, path: usize) {
        let mut contents = std::mem::take(&mut self.probe_contents);
        contents.clear();
        self.rec(path).oldest_unacked(Space::Data, usize::MAX, &mut contents);
        for c in &contents {
            if let Some(pkt) = c.payload.get::<Datagram>().and_then(|d| d.get(c.index as usize)) {
                self.requeue(pkt);
            }
        }
        contents.clear();
        self.probe_contents = contents;
    }

    fn react(&mut self, path: usize, r: Reaction) {
        if let Some(mp) = &self.mp {
            mp.sync_coupling(path);
        }
        if r.requeue_in_flight {
            self.requeue_in_flight(path);
        }
        if r.probe && self.probes_of(path) == 0 && self.path_alive(path) {
            self.set_probes(path, 1);
        }
    }

    /// A PTO fired on path `p`.
    pub(super) fn mp_on_path_timeout(&mut self, now: Time, p: usize) {
        let Some(mp) = &mut self.mp else { return };
        if !mp.ready {
            return;
        }
        let r = mp.health.on_timeout(p, now);
        self.react(p, r);
    }

    /// Timers of the paths beyond 0 and of the health rules.
    pub(super) fn mp_handle_timeout(&mut self, now: Time) {
        let Some(n) = self.mp.as_ref().map(|mp| mp.path_count()) else { return };
        for p in 1..n {
            let mp = self.mp.as_mut().expect("checked above");
            let e = &mut mp.extra[p - 1];
            if e.pacing_release.is_some_and(|t| t <= now) {
                e.pacing_release = None;
            }
            e.rx.on_timeout(now);
            let mut out = std::mem::take(&mut self.outcome);
            out.clear();
            let action = self.rec_mut(p).on_timeout(now, &mut out);
            if let crate::recovery::TimeoutAction::Probe { space: Space::Data, count } = action {
                self.set_probes(p, count);
                self.mp_on_path_timeout(now, p);
            }
            self.apply_outcome(now, &out);
            self.outcome = out;
        }
        let reactions = self.mp.as_mut().map(|mp| mp.health.on_tick(now)).unwrap_or_default();
        for (p, r) in reactions {
            self.react(p, r);
        }
        self.validation_timers(now);
    }

    /// The client's path validation timers: send the challenge again, or give up.
    fn validation_timers(&mut self, now: Time) {
        let Some(mp) = &mut self.mp else { return };
        let mut failed = Vec::new();
        for (p, m) in mp.meta.iter_mut().enumerate() {
            if !m.challenge_retry_at.is_some_and(|t| t <= now) {
                continue;
            }
            m.challenge_retry_at = None;
            if m.validated || m.abandoned || !m.interface_up {
                m.stop_validation();
            } else if m.validation_deadline.is_some_and(|d| d <= now) {
                failed.push(p);
            } else {
                m.challenge_pending = true;
            }
        }
        for p in failed {
            self.stats.path_validation_failures += 1;
            self.abandon_path(now, p);
        }
    }

    /// A PATH_CHALLENGE went out on `p`: when to send it again, and when to give up.
    fn on_challenge_sent(&mut self, now: Time, p: usize) {
        let mad = self.mp.as_ref().expect("multipath").template.recovery.max_ack_delay;
        let pto = self.rec(p).rtt().pto_base(mad);
        let current = self.rec(0).rtt().pto_base(mad);
        let mp = self.mp.as_mut().expect("multipath");
        let initial = mp.template.initial_pto();
        let m = &mut mp.meta[p];
        let deadline = *m.validation_deadline.get_or_insert(now + Dur(current.max(initial).0.saturating_mul(3)));
        let backoff = Dur(pto.0.saturating_mul(1u64 << m.challenges_sent.min(16)));
        m.challenges_sent += 1;
        m.challenge_retry_at = Some((now + backoff).min(deadline));
    }

    /// The host's interface for path `p` went down or came back.
    pub(super) fn mp_on_interface(&mut self, now: Time, p: usize, up: bool) {
        let is_client = self.role == Role::Client;
        let Some(mp) = &mut self.mp else { return };
        let Some(m) = mp.meta.get_mut(p) else { return };
        if m.interface_up == up {
            return;
        }
        m.interface_up = up;
        if m.abandoned {
            return;
        }
        if up {
            // The client validates the path again before relying on it.
            if is_client && mp.ready && p > 0 {
                m.validated = false;
                m.stop_validation();
                m.challenge_pending = true;
            }
            let r = mp.health.on_link_up_hint(p, now);
            self.react(p, r);
        } else {
            let r = mp.health.on_link_down_hint(p, now);
            self.react(p, Reaction { requeue_in_flight: true, ..r });
        }
    }

    pub(super) fn mp_path_stats(&self, out: &mut Vec<PathStats>) {
        let Some(mp) = &self.mp else { return };
        for (p, m) in mp.meta.iter().enumerate() {
            let r = self.rec(p);
            let status = if m.path_id.is_none() {
                "closed"
            } else if m.abandoned {
                "abandoned"
            } else if !m.interface_up {
                "down"
            } else if !m.validated {
                "unvalidated"
            } else {
                match mp.health.status(p) {
                    Some(PathStatus::Active) | None => "active",
                    Some(PathStatus::PotentiallyFailed) => "potentially_failed",
                    Some(PathStatus::Failed) => "failed",
                }
            };
            out.push(PathStats {
                path: p as u8,
                path_id: m.path_id.filter(|_| !m.abandoned),
                path_ids_opened: m.path_ids_opened,
                packets_sent: m.counters.packets_sent,
                bytes_sent: m.counters.bytes_sent,
                packets_received: m.counters.packets_received,
                bytes_received: m.counters.bytes_received,
                lost: m.lost_before + r.stats().lost_packets,
                srtt: r.rtt().smoothed(),
                cwnd: r.cwnd(),
                status,
            });
        }
    }

    // ---------------------------------------------------------------- sending

    pub(super) fn transmit_multipath(&mut self, now: Time, next_id: &mut u64) -> Option<Packet> {
        if let Some(p) = self.mp.as_mut().and_then(|mp| mp.pending.pop_front()) {
            return Some(p);
        }
        let n = self.path_count();
        // Path-bound control: PATH_CHALLENGE and PATH_RESPONSE go on their own path.
        for p in 0..n {
            let m = &self.mp.as_ref().expect("multipath").meta[p];
            if self.path_alive(p) && (m.challenge_pending || m.response_pending) {
                let (challenge, response) = (m.challenge_pending, m.response_pending);
                let mut frames = Vec::new();
                if response {
                    frames.push(Frame::PathResponse);
                }
                if challenge {
                    frames.push(Frame::PathChallenge);
                }
                let meta = &mut self.mp.as_mut().expect("multipath").meta[p];
                meta.challenge_pending = false;
                meta.response_pending = false;
                if challenge {
                    self.on_challenge_sent(now, p);
                }
                let qp = self.packet_with(now, p, frames, true);
                return Some(self.emit(now, p, qp, next_id));
            }
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
            if self.probes_of(p) > 0 {
                if !self.path_alive(p) {
                    self.set_probes(p, 0);
                    continue;
                }
                self.set_probes(p, self.probes_of(p) - 1);
                let qp = if self.mp.as_ref().expect("multipath").health.usable(p) {
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
        let ack_due = (0..n).find(|&q| self.data_rx(q).ack_due(now)).map(|q| self.ack_destination(q));
        // New data on the path the scheduler picks.
        if self.has_data(Space::Data) {
            let views = self.path_views(now);
            let content = self.front_content();
            let req = Request { now, content, queued_bytes: self.queued_bytes(), send_window: u64::MAX };
            let decision = self.mp.as_mut().expect("multipath").scheduler.decide(&views, &req);
            if let Decision::Send { path, copies, scope } = decision {
                self.app_limited = false;
                if self.paced_until(now, path).is_some() {
                    // The chosen path's pacer holds the packet back; it is asked again then.
                    return self.ack_only(now, ack_due, next_id);
                }
                if let Some(qp) = self.build_packet(now, Space::Data, PacketType::OneRtt, self.mds, true, false, path) {
                    for &c in &copies {
                        let frames: Vec<Frame> = qp
                            .frames
                            .iter()
                            .filter(|f| match f {
                                Frame::Stream { id, .. } => {
                                    scope == multiconn_multipath::CopyScope::AllStreams
                                        || self.streams.get(*id).is_some_and(|s| s.redundant)
                                }
                                _ => false,
                            })
                            .cloned()
                            .collect();
                        if frames.is_empty() {
                            continue;
                        }
                        let copy = self.packet_with(now, c, frames, false);
                        let pkt = self.emit(now, c, copy, next_id);
                        let mp = self.mp.as_mut().expect("multipath");
                        mp.meta[c].counters.copies_sent += 1;
                        mp.pending.push_back(pkt);
                    }
                    return Some(self.emit(now, path, qp, next_id));
                }
            }
        } else {
            self.app_limited = true;
            for p in 0..n {
                let r = self.rec(p);
                if r.bytes_in_flight() + self.mds as u64 <= r.cwnd() {
                    self.rec_mut(p).on_app_limited();
                }
            }
        }
        self.ack_only(now, ack_due, next_id)
    }

    /// A packet with the pending PATH_ABANDON and PATH_STATUS frames, on the validated open
    /// path with the smallest RTT (another path than an abandoned one: draft §3.4). They are
    /// few and small, and go out regardless of the window, like the challenges.
    fn path_management(&mut self, now: Time, next_id: &mut u64) -> Option<Packet> {
        let mp = self.mp.as_ref().expect("multipath");
        if !mp.meta.iter().any(|m| m.abandon_pending || m.status_pending) {
            return None;
        }
        let carrier = (0..mp.path_count())
            .filter(|&p| mp.meta[p].validated && self.path_alive(p))
            .min_by_key(|&p| (self.rec(p).rtt().smoothed(), p))?;
        let mut frames = Vec::new();
        let mp = self.mp.as_mut().expect("multipath");
        for m in &mut mp.meta {
            let Some(id) = m.path_id else { continue };
            if m.abandon_pending {
                m.abandon_pending = false;
                frames.push(Frame::PathAbandon { path: id });
            }
            if m.status_pending {
                m.status_pending = false;
                frames.push(Frame::PathStatus { path: id, backup: m.backup, seq: m.status_seq });
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

    /// When pacing lets path `p` send next, if later than `now` (and remembered as a wake-up).
    fn paced_until(&mut self, now: Time, p: usize) -> Option<Time> {
        let r = self.rec(p);
        let (cwnd, srtt, rate, mds) = (r.cwnd(), r.rtt().smoothed(), r.controller().pacing_rate(), self.mds as u64);
        if p == 0 {
            let t = self.pacer.earliest_send(now, mds, cwnd, srtt, rate);
            self.pacing_release = (t > now).then_some(t);
            self.pacing_release
        } else {
            let e = &mut self.mp.as_mut().expect("multipath").extra[p - 1];
            let t = e.pacer.earliest_send(now, mds, cwnd, srtt, rate);
            e.pacing_release = (t > now).then_some(t);
            e.pacing_release
        }
    }

    /// What the scheduler sees of each path. Pacing is applied afterwards, to the chosen path
    /// only (copies of redundant schedulers need window space, not a pacing slot).
    fn path_views(&mut self, _now: Time) -> Vec<PathView> {
        let n = self.path_count();
        let mut views = Vec::with_capacity(n);
        for p in 0..n {
            let mp = self.mp.as_ref().expect("multipath");
            let m = &mp.meta[p];
            let usable = m.validated && self.path_alive(p) && mp.health.usable(p);
            let r = self.rec(p);
            let rtt: &RttEstimator = r.rtt();
            let cwnd = r.cwnd();
            let in_flight = r.bytes_in_flight();
            let srtt = rtt.smoothed();
            let sampled = rtt.has_sample();
            let view = PathView {
                id: p,
                usable,
                backup: m.backup,
                srtt,
                rttvar: rtt.rttvar(),
                min_rtt: if sampled { rtt.min() } else { srtt },
                cwnd,
                bytes_in_flight: in_flight,
                mss: self.mds as u64,
                has_sent_anything: m.counters.packets_sent > 0,
                rtt_sampled: sampled,
                packets_sent: m.counters.packets_sent,
                in_slow_start: r.controller().ssthresh().is_none(),
                retransmissions_outstanding: false,
            };
            views.push(PathView { bytes_in_flight: in_flight, ..view });
        }
        views
    }

    /// The content class of the next stream data to go out.
    fn front_content(&self) -> Content {
        match self.streams.front().and_then(|id| self.streams.get(id)) {
            Some(s) => Content::Stream { redundant: s.redundant, priority: s.urgent },
            None => Content::Control,
        }
    }

    /// Stream bytes waiting to be sent (new data and retransmissions), for ECF.
    fn queued_bytes(&self) -> u64 {
        self.streams.ids().filter_map(|id| self.streams.get(id)).map(|s| s.send.new_bytes()).sum()
    }

    /// A 1-RTT packet on `path` with `frames` (and the PATH_ACKs that travel on it if
    /// `with_acks`).
    fn packet_with(&mut self, now: Time, path: usize, mut frames: Vec<Frame>, with_acks: bool) -> QuicPacket {
        let pn = self.rec(path).next_pn(Space::Data);
        let pn_len = pn_len(pn, self.rec(path).largest_acked(Space::Data));
        if with_acks {
            let mut avail = self.mds.saturating_sub(64);
            let mut acks = Vec::new();
            self.push_path_acks(now, path, &mut acks, &mut avail);
            acks.append(&mut frames);
            frames = acks;
        }
        let mut payload: usize = frames.iter().map(Frame::wire_size).sum();
        if payload + (pn_len as usize) < MIN_PN_AND_PAYLOAD {
            let pad = MIN_PN_AND_PAYLOAD - payload - pn_len as usize;
            frames.push(Frame::Padding(pad as u32));
            payload += pad;
        }
        let size = header_size(PacketType::OneRtt, self.dcid_len, self.dcid_len, pn_len, payload) + payload + AEAD_TAG;
        QuicPacket { ptype: PacketType::OneRtt, pn, pn_len, frames, size: size as u32 }
    }

    /// Registers a 1-RTT packet sent on `path` and wraps it for the network.
    fn emit(&mut self, now: Time, path: usize, qp: QuicPacket, next_id: &mut u64) -> Packet {
        if let Some(q) = &mut self.qlog {
            q.packet_sent(now, &qp);
        }
        for f in &qp.frames {
            if let Frame::PathAck { path, .. } = f {
                if let Some(q) = self.mp.as_ref().and_then(|mp| mp.route_of(*path)) {
                    self.data_rx_mut(q).on_ack_sent();
                }
            }
        }
        let path_id = self.mp.as_ref().and_then(|mp| mp.meta[path].path_id).unwrap_or(0);
        let ack_eliciting = qp.is_ack_eliciting();
        let in_flight = qp.counts_in_flight();
        let (pn, size) = (qp.pn, qp.size);
        let dg = Datagram { first: qp, coalesced: Vec::new(), path_id };
        let udp_size = dg.size();
        let payload = Payload::new(dg);
        self.stats.packets_sent += 1;
        if !ack_eliciting {
            self.stats.ack_only_packets += 1;
        }
        let app_limited = self.app_limited;
        self.rec_mut(path).on_packet_sent(
            Space::Data,
            SentPacketInfo {
                pn,
                time_sent: now,
                size,
                ack_eliciting,
                in_flight,
                app_limited,
                content: Some(SentContent { payload: payload.clone(), index: 0 }),
            },
        );
        if in_flight {
            if path == 0 {
                self.pacer.on_sent(udp_size as u64);
            } else if let Some(mp) = &mut self.mp {
                mp.extra[path - 1].pacer.on_sent(udp_size as u64);
            }
        }
        if let Some(mp) = &mut self.mp {
            let c = &mut mp.meta[path].counters;
            c.packets_sent += 1;
            c.bytes_sent += udp_size as u64;
            if ack_eliciting {
                mp.health.on_packet_sent(path, now);
            }
        }
        self.stats.datagrams_sent += 1;
        self.stats.bytes_sent += udp_size as u64;
        self.seq += 1;
        let id = *next_id;
        *next_id += 1;
        let mut pkt = Packet::new(id, self.flow, udp_size + IP_UDP_OVERHEAD, self.seq, now).with_payload(payload);
        pkt.path = path as u8;
        pkt
    }
}
