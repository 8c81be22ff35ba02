//! The 1-RTT retransmission timers of the stacks the studies ran, beside RFC 9002's probe
//! timeout (the parent module): what fires, when, and what is declared lost.
//!
//! * With `retransmit_timer = "picoquic-2022"` (picoquic at 48525d89ef4d, `sender.c`
//!   `picoquic_retransmit_needed_by_packet`, `picoquic_current_retransmit_timer`) the 1-RTT
//!   space has no probe timeout: a retransmission timer declares packets lost. The timer is
//!   `max(srtt + 4·rttvar + max_ack_delay, 5/4·srtt + max_ack_delay, min_rto)` (the initial
//!   RTT before any sample), doubled after one timer-based loss episode and quadrupled after
//!   two or more; it is armed at the oldest outstanding packet's send time, ACK-only packets
//!   included. When it fires, outstanding packets are declared lost oldest first while their
//!   own send time plus the timer has passed; an ACK-only packet is just forgotten, and the
//!   caller bundles a PING with the next ACK on the path (picoquic's `is_ack_lost`). As in
//!   picoquic, an acknowledged ACK-only packet gives an RTT sample too. A loss of a packet sent after the previous episode (and above
//!   the largest acknowledged) starts a new episode: the count (`pto_count`, picoquic's
//!   `nb_retransmit`) grows at once, so the later packets of the run wait for the longer
//!   timer; an acknowledgement resets it. The controller hears of each packet
//!   (`on_packet_timed_out`) and then of a timeout (`on_persistent_congestion`). The Initial
//!   and Handshake spaces keep RFC 9002's probe timeout.
//! * With `retransmit_timer = "aioquic-1.7"` (aioquic 1.7.2, `recovery.py` `reschedule_data`
//!   and `_in_persistent_congestion`) a 1-RTT probe timeout first declares the oldest
//!   outstanding ack-eliciting packet lost without telling the controller (aioquic's
//!   `on_packets_expired`: its bytes only leave the flight) so that the probe carries its
//!   frames, and asks for one probe, not two. A later ACK of that packet counts as a spurious
//!   loss of no congestion event. (aioquic ends a persistent-congestion period at any gap in
//!   the lost packets' numbers; packets it forgot before are always older than those a later
//!   detection run declares lost, so RFC 9002's rule (the parent module) gives the same periods.)
//! * With `retransmit_timer = "mpquic-2018"` (mp-quic of 2018 on gQUIC-era quic-go,
//!   `ackhandler/sent_packet_handler.go` `updateLossDetectionAlarm`, `OnAlarm`,
//!   `computeTLPTimeout`, `computeRTOTimeout`) the 1-RTT timer runs from the last packet sent
//!   on the path, ACK-only ones included. With an RTT sample and fewer than two tail-loss
//!   probes since the last acknowledgement, it fires `max(2·srtt, 3/2·srtt + min_rto/2)`
//!   after it (one ack-eliciting packet outstanding: `max(2·srtt, 10 ms)`): the newest
//!   outstanding ack-eliciting packet is declared lost without telling the controller and the
//!   caller sends one probe ([`TimeoutAction::TailLossProbe`]). Otherwise it is a
//!   retransmission timeout, `max(min(max(srtt + 4·rttvar, min_rto)·2^n, max_rto), min_rto)`
//!   after it (`initial_rto` for `srtt + 4·rttvar` before any sample), n the timeouts since the
//!   last acknowledgement: the two oldest outstanding ack-eliciting packets are declared lost
//!   (a congestion event) and the controller collapses its window
//!   (`Controller::on_retransmission_timeout`); the caller sends them again and asks the
//!   failover rules whether the path has failed, in which case every packet still in flight
//!   is declared lost too ([`Recovery::declare_in_flight_lost`]). An acknowledgement of a
//!   new ack-eliciting packet resets both counts. `packet_threshold = 0` leaves the time
//!   threshold alone to declare losses, and `spurious_undo = "none"` never undoes a reduction.

use super::*;

impl Recovery {
    /// `mpquic-2018`: a tail-loss probe is next (`OnAlarm`: an RTT sample and fewer than
    /// `maxTailLossProbes` since the last acknowledgement).
    pub(super) fn mpquic_tlp_due(&self) -> bool {
        self.rtt.has_sample() && self.tlp_count < MPQUIC_2018_MAX_TAIL_LOSS_PROBES
    }

    /// `mpquic-2018`: how long after the last packet sent the 1-RTT timer fires
    /// (`updateLossDetectionAlarm`).
    pub(super) fn mpquic_timeout(&self) -> Dur {
        if self.mpquic_tlp_due() {
            // computeTLPTimeout
            let srtt = self.rtt.smoothed();
            let twice = Dur(srtt.0.saturating_mul(2));
            if self.spaces[Space::Data.index()].ack_eliciting_in_flight >= 2 {
                twice.max(Dur(srtt.0.saturating_mul(3) / 2) + Dur(self.cfg.min_rto.0 / 2))
            } else {
                twice.max(MPQUIC_2018_MIN_TLP_TIMEOUT)
            }
        } else {
            // computeRTOTimeout with its backoff, then at least minRetransmissionTime.
            let rto = self.mpquic_rto_base();
            let backed = Dur(rto.0.checked_shl(self.rto_count).filter(|v| v >> self.rto_count == rto.0).unwrap_or(u64::MAX));
            backed.min(self.cfg.max_rto).max(self.cfg.min_rto)
        }
    }

    /// `mpquic-2018`: the retransmission timeout without backoff, `max(srtt + 4·rttvar,
    /// min_rto)` (`RetransmissionDelay`), `initial_rto` before any RTT sample.
    pub(super) fn mpquic_rto_base(&self) -> Dur {
        let base = if self.rtt.has_sample() { self.rtt.smoothed() + Dur(self.rtt.rttvar().0.saturating_mul(4)) } else { self.cfg.initial_rto };
        base.max(self.cfg.min_rto)
    }

    /// `mpquic-2018`'s tail-loss probe (`retransmitTLP`): the newest outstanding ack-eliciting
    /// packet of `space` is declared lost so that the probe carries its frames, without telling
    /// the controller (`queuePacketForRetransmission`: only bytes in flight change).
    pub(super) fn expire_newest(&mut self, now: Time, space: Space, out: &mut Outcome) {
        let si = space.index();
        let sp = &mut self.spaces[si];
        let start = sp.cursor.saturating_sub(sp.base) as usize;
        let Some(i) = (start..sp.sent.len()).rev().find(|&i| sp.sent[i].state == State::Outstanding && sp.sent[i].ack_eliciting) else { return };
        self.expire(now, space, i, out);
    }

    /// Declares lost, oldest first, up to `limit` outstanding ack-eliciting 1-RTT packets and
    /// tells the controller of each (`on_packet_lost`); returns (packets, bytes, send time of
    /// the newest) of those in flight.
    pub(super) fn declare_oldest_lost(&mut self, now: Time, limit: usize, event: u32, out: &mut Outcome) -> (u32, u64, Time) {
        let si = Space::Data.index();
        let mut lost = std::mem::take(&mut self.scratch);
        lost.clear();
        let mut newest = Time::ZERO;
        let sp = &mut self.spaces[si];
        let start = sp.cursor.saturating_sub(sp.base) as usize;
        for i in start..sp.sent.len() {
            if lost.len() >= limit {
                break;
            }
            let pn = sp.base + i as u64;
            let p = &mut sp.sent[i];
            if p.state != State::Outstanding || !p.ack_eliciting {
                continue;
            }
            p.state = State::Lost;
            p.lost_event = event;
            if p.in_flight {
                sp.bytes_in_flight -= p.size as u64;
                lost.push((pn, p.size as u64));
                newest = newest.max(p.time_sent);
            }
            sp.ack_eliciting_in_flight -= 1;
            out.lost.push(PacketOutcome { space: Space::Data, pn, content: p.content.clone() });
        }
        for &(pn, bytes) in &lost {
            self.delivery.on_packet_lost(bytes);
            self.controller.on_packet_lost(now, pn, bytes);
        }
        let count = lost.len() as u32;
        let bytes = lost.iter().map(|l| l.1).sum();
        self.stats.lost_packets += count as u64;
        self.scratch = lost;
        (count, bytes, newest)
    }

    /// `mpquic-2018`'s retransmission timeout (`OnAlarm`, `retransmitOldestTwoPackets`): the
    /// two oldest outstanding ack-eliciting packets are declared lost, one congestion event
    /// (`OnPacketLost`), then the controller's `on_retransmission_timeout`.
    pub(super) fn mpquic_rto_loss(&mut self, now: Time, out: &mut Outcome) {
        let prior_in_flight = self.bytes_in_flight();
        let event = self.next_event_id();
        let (count, bytes, newest) = self.declare_oldest_lost(now, MPQUIC_2018_RTO_PACKETS, event, out);
        if count > 0 {
            self.stats.congestion_events += 1;
            self.event_id = event;
            self.event_lost = count;
            self.event_spurious = 0;
            self.event_undone = false;
            let ev = LossEvent { bytes_lost: bytes, largest_lost_sent: newest, bytes_in_flight: self.bytes_in_flight(), prior_in_flight };
            self.controller.on_congestion_event(now, &ev, &self.rtt);
        }
        self.controller.on_retransmission_timeout(now);
        self.pop_front(Space::Data.index(), now);
    }

    /// `mpquic-2018`: the failover rules found the path potentially failed at a retransmission
    /// timeout (mp-quic's `onRTOCallback` returned true, `retransmitAllPackets`): every
    /// outstanding ack-eliciting 1-RTT packet is declared lost, each reported to the controller
    /// (`on_packet_lost`) within the timeout's congestion event. Their frames are in `out`.
    pub fn declare_in_flight_lost(&mut self, now: Time, out: &mut Outcome) {
        let event = self.event_id;
        let (count, _, _) = self.declare_oldest_lost(now, usize::MAX, event, out);
        self.event_lost = self.event_lost.saturating_add(count);
        self.pop_front(Space::Data.index(), now);
        self.set_loss_detection_timer(now);
    }

    /// picoquic's `retransmit_timer`: `max(srtt + 4·rttvar + mad, 5/4·srtt + mad, min_rto)`;
    /// the initial RTT before any sample (`PICOQUIC_INITIAL_RETRANSMIT_TIMER` = the initial
    /// RTT, 250 ms).
    pub(super) fn picoquic_timer_base(&self) -> Dur {
        if !self.rtt.has_sample() {
            return self.rtt.initial();
        }
        let mad = self.cfg.max_ack_delay;
        let srtt = self.rtt.smoothed();
        let a = srtt + Dur(4 * self.rtt.rttvar().0) + mad;
        let b = Dur(srtt.0 * 5 / 4) + mad;
        a.max(b).max(self.cfg.min_rto)
    }

    /// The timer with picoquic's backoff: ×2 after one episode, ×4 after two or more.
    pub(super) fn picoquic_timer(&self) -> Dur {
        let exp = self.pto_count.min(PICOQUIC_2022_MAX_BACKOFF_EXPONENT);
        Dur(self.picoquic_timer_base().0 << exp)
    }

    /// When the `picoquic-2022` timer of the 1-RTT space fires: the oldest outstanding packet's
    /// send time (ACK-only ones included) plus the backed-off timer. `None` under RFC 9002,
    /// before the handshake is confirmed, or with nothing outstanding.
    pub(super) fn picoquic_deadline(&self) -> Option<Time> {
        if self.cfg.retransmit_timer != RetransmitTimer::Picoquic2022 || !self.handshake_confirmed {
            return None;
        }
        let sp = &self.spaces[Space::Data.index()];
        if sp.discarded {
            return None;
        }
        let start = sp.cursor.saturating_sub(sp.base) as usize;
        let oldest = sp.sent.iter().skip(start).find(|p| p.state == State::Outstanding)?;
        Some(oldest.time_sent + self.picoquic_timer())
    }

    /// aioquic 1.7's probe timeout (`recovery.py` `reschedule_data`): the oldest outstanding
    /// ack-eliciting packet of `space` is declared lost so that the probe carries its frames,
    /// without a congestion event (`on_packets_expired`: only bytes in flight change).
    pub(super) fn expire_oldest(&mut self, now: Time, space: Space, out: &mut Outcome) {
        let si = space.index();
        let sp = &mut self.spaces[si];
        let start = sp.cursor.saturating_sub(sp.base) as usize;
        let Some(i) = sp.sent.iter().skip(start).position(|p| p.state == State::Outstanding && p.ack_eliciting) else { return };
        self.expire(now, space, start + i, out);
    }

    /// The `picoquic-2022` retransmission timer fired: declares lost, oldest first, the
    /// outstanding packets whose send time plus the timer has passed. Returns whether a new
    /// timer-based loss episode began and whether ACK-only packets were among them (picoquic
    /// then bundles a PING with the next ACK on the path, `is_ack_lost`, so that a dead path
    /// shows in its own timer even at an end that only acknowledges).
    pub(super) fn timer_loss(&mut self, now: Time, out: &mut Outcome) -> (bool, bool) {
        let si = Space::Data.index();
        let event = self.next_event_id();
        let mut lost = std::mem::take(&mut self.scratch);
        lost.clear();
        let mut episode = false;
        let mut ack_lost = false;
        let base = self.picoquic_timer_base();
        let mut timer = self.picoquic_timer();
        let sp = &mut self.spaces[si];
        let largest_acked = sp.largest_acked;
        let start = sp.cursor.saturating_sub(sp.base) as usize;
        for i in start..sp.sent.len() {
            let pn = sp.base + i as u64;
            let p = &mut sp.sent[i];
            if p.state != State::Outstanding {
                continue;
            }
            if p.time_sent + timer > now {
                break;
            }
            if !(p.in_flight && p.ack_eliciting) {
                // An ACK-only packet: forgotten, noted for the next ACK's PING.
                p.state = State::Lost;
                if p.in_flight {
                    sp.bytes_in_flight -= p.size as u64;
                }
                ack_lost = true;
                continue;
            }
            p.state = State::Lost;
            p.lost_event = event;
            sp.bytes_in_flight -= p.size as u64;
            sp.ack_eliciting_in_flight -= 1;
            out.lost.push(PacketOutcome { space: Space::Data, pn, content: p.content.clone() });
            lost.push((pn, p.size as u64));
            let newer = largest_acked.map_or(true, |l| pn > l);
            if newer && self.last_timer_episode.map_or(true, |t| p.time_sent > t) {
                episode = true;
                self.last_timer_episode = Some(now);
                self.pto_count = self.pto_count.saturating_add(1);
                self.stats.timer_loss_episodes += 1;
                // The packets after this one wait for the backed-off timer.
                let exp = self.pto_count.min(PICOQUIC_2022_MAX_BACKOFF_EXPONENT);
                timer = Dur(base.0 << exp);
            }
        }
        if !lost.is_empty() {
            self.stats.lost_packets += lost.len() as u64;
            self.stats.congestion_events += 1;
            self.event_id = event;
            self.event_lost = lost.len() as u32;
            self.event_spurious = 0;
            self.event_undone = false;
            for &(pn, bytes) in &lost {
                self.controller.on_packet_timed_out(now, pn, bytes);
            }
            self.controller.on_persistent_congestion(now);
        }
        self.scratch = lost;
        (episode, ack_lost)
    }
}
