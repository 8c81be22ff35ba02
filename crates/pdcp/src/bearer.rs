//! A PDCP split bearer as one flow sees it: the numbering proxy on the side the flow enters,
//! the reordering proxy on the other side, and what they measure.
//!
//! The transmitting entity ([`Transmitter`]) numbers each packet, adds the PDCP
//! header and picks the leg(s); the receiving entity ([`Receiver`], TS 38.323
//! §5.2.2) reorders and gives packets back in COUNT order, header removed. Each proxy holds a
//! packet for the split's processing delay (the seed study measured about 1 ms per proxy),
//! first in, first out, and with a per-packet time it forwards at most one packet per that
//! time (a proxy handles one packet at a time: a burst the reordering releases leaves it
//! spaced out, as from a userspace proxy writing each packet to its socket). The transmitter learns the receiver's RX_DELIV at once (its window
//! guard), and, for the adaptive policy, gets a report per leg every feedback period: the
//! leg's queue, the bytes it delivered and the smallest split-to-receiver delay it saw.
//!
//! Two behaviours of pdcp-dc.md TV20 are modelled here too: with `retransmit_lost`, a PDU lost
//! on a leg (transport loss, detected by its NR-U sequence number) is listed in the next
//! report and resent over the other leg (TS 38.425 §5.4.2.1 lost NR-U SN ranges); and a MAC CE
//! switching duplication off or on at scheduled times (TS 38.321 §5.12), after which the
//! copies still waiting on the second leg are discarded (TS 38.323 §5.11.2).
//! With `l4s_reorder_threshold` the receiving proxy marks CE on each ECT(1) SDU that waited
//! longer than that in reordering (L4S marking where the PDCP entity sees the reordering delay
//! grow, the L4S reference's §2.4 for a split).
//! This module owns the state and is sans-IO: the network (`multiconn-net`) moves packets
//! between it and the two legs, which are whatever elements the route names (links today, cell
//! bearers later), and asks it through [`SplitBearer::poll_timeout`] when it must be serviced.

use std::collections::VecDeque;

use multiconn_core::{Dur, Ecn, Packet, Time};

use crate::receiver::{Receiver, ReceiverConfig, RxOutcome};
use crate::transmitter::{LegReport, SplitPolicy, Transmitter, TransmitterConfig};

/// A split bearer's settings: its two PDCP entities, its proxies and its feedback.
#[derive(Debug, Clone)]
pub struct SplitBearerConfig {
    /// The split's name (the scenario's `[[split]]`), for reports.
    pub name: String,
    /// The transmitting entity's settings (RAT, SN length, split policy).
    pub tx: TransmitterConfig,
    /// The receiving entity's settings (SN length, t-Reordering, whether it reorders).
    pub rx: ReceiverConfig,
    /// How long each proxy holds a packet, first in, first out.
    pub processing_delay: Dur,
    /// Each proxy's time per packet: packets leave it at least this far apart (zero: a
    /// burst leaves at one instant).
    pub packet_time: Dur,
    /// The period of the legs' feedback (delivery status reports): set for the adaptive
    /// policy and for `retransmit_lost`.
    pub feedback: Option<Dur>,
    /// Resend PDUs lost on a leg over the other one after the next report.
    pub retransmit_lost: bool,
    /// Duplicate policy: when duplication is switched (time from the start, active after).
    pub duplication_switches: Vec<(Dur, bool)>,
    /// The one-way transport delay from the transmitting entity to each leg's node (X2-U or
    /// Xn-U between the master and the secondary node in dual connectivity): a PDU reaches its
    /// leg this long after the entity sends it, and the leg's feedback reports reach the
    /// entity this long after they are made.
    pub tx_leg_delay: [Dur; 2],
    /// The one-way transport delay from each leg's node to the receiving entity (the uplink
    /// of a split whose receiving side is the master node): a PDU the leg delivers reaches
    /// the receiving entity this long after.
    pub rx_leg_delay: [Dur; 2],
    /// L4S marking where the receiving entity sees reordering (the L4S reference's §2.4 for a
    /// split): an ECT(1) SDU that waited longer than this in the reordering buffer leaves it
    /// CE; `None`: no marking.
    pub l4s_reorder_threshold: Option<Dur>,
}

/// What a leg's node says of the leg when a feedback report is made (TS 38.425's DL DATA
/// DELIVERY STATUS, with the leg's queue).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LegState {
    /// Bytes waiting in the leg's queue (a link's, or a cell bearer's RLC buffer).
    pub queued_bytes: u64,
    /// The bytes its buffer can take now (a cell's free RLC buffer); `None` for a link.
    pub desired_bytes: Option<u64>,
    /// Its buffer's capacity for the bearer; `None` for a link.
    pub buffer_bytes: Option<u64>,
    /// The highest PDCP SN it confirmed (delivered under RLC AM, transmitted under UM).
    pub confirmed_sn: Option<u32>,
}

/// Per-leg measurements since the last feedback report.
#[derive(Debug, Clone, Copy, Default)]
struct LegWindow {
    delivered_bytes: u64,
    min_delay: Option<Dur>,
}

/// What the receiving side measured over the run.
#[derive(Debug, Clone, Copy, Default)]
pub struct RxMeasures {
    /// PDUs that arrived over each leg (duplicates included).
    pub arrivals: [u64; 2],
    /// Bytes of those PDUs per leg (PDCP header included).
    pub arrival_bytes: [u64; 2],
    /// Bytes of the SDUs delivered in order upwards (header removed).
    pub delivered_bytes: u64,
    /// Σ and max of (delivery time − arrival time) over delivered SDUs.
    pub reorder_delay_sum: Dur,
    /// The largest of those times.
    pub reorder_delay_max: Dur,
    /// SDUs that waited in the reordering buffer (arrived out of order).
    pub held: u64,
    /// Largest number of SDUs delivered in one event.
    pub max_burst: usize,
    /// Most SDUs stored at once.
    pub max_buffered: i64,
    /// PDUs lost on a leg and resent over the other one.
    pub retransmitted: u64,
    /// PDUs a leg handed back (its cell group released) and resent over the other one: TS
    /// 38.323 §5.5's data recovery.
    pub recovered: u64,
    /// Copies discarded from the second leg's queue when duplication was switched off.
    pub discarded_copies: u64,
    /// ECT(1) SDUs marked CE for waiting longer than `l4s_reorder_threshold`.
    pub l4s_reorder_marks: u64,
}

/// The two PDCP entities and proxies of one split bearer, for one flow crossing it.
pub struct SplitBearer {
    /// The transmitting PDCP entity (numbering, split policy, window guard).
    pub tx: Transmitter,
    /// The receiving PDCP entity; each SDU it holds carries when it arrived.
    pub rx: Receiver<(Time, Packet)>,
    /// The PDCP header each PDU carries, in bytes.
    pub header: u32,
    policy: SplitPolicy,
    processing: Dur,
    packet_time: Dur,
    l4s_reorder_threshold: Option<Dur>,
    /// When the last packet leaves each proxy (numbering, receiving).
    tx_last: Option<Time>,
    tx_leg_delay: [Dur; 2],
    rx_leg_delay: [Dur; 2],
    /// PDUs on their way to each leg's node, and when they reach it.
    toward_leg: [VecDeque<(Time, Packet)>; 2],
    /// PDUs on their way from each leg's node to the receiving entity, and when they reach it.
    from_leg: [VecDeque<(Time, Packet)>; 2],
    /// Feedback reports on their way from the legs' nodes: when each arrives, and its leg.
    reports_on_way: VecDeque<(Time, usize, LegReport)>,
    rx_last: Option<Time>,
    feedback: Option<Dur>,
    next_report: Option<Time>,
    window: [LegWindow; 2],
    last_report: Time,
    /// Packets in the numbering proxy, and when they leave it.
    tx_proxy: VecDeque<(Time, Packet)>,
    /// Packets the reordering released, and when they leave the receiving proxy.
    rx_proxy: VecDeque<(Time, Packet)>,
    /// When each COUNT from `sent_base` on was handed to its leg(s).
    sent_at: VecDeque<Time>,
    sent_base: i64,
    /// What the receiving side measured so far.
    pub measures: RxMeasures,
    /// Scratch space for SDUs the receiver releases.
    released: Vec<(i64, (Time, Packet))>,
    retransmit_lost: bool,
    /// PDUs lost on a leg since the last report, with that leg.
    lost: Vec<(usize, Packet)>,
    /// Scheduled duplication switches not yet applied (time, active after).
    switches: VecDeque<(Time, bool)>,
    /// When watched ([`SplitBearer::watch_counts`]): the COUNTs the receiving entity delivered
    /// upwards since they were last taken.
    released_counts: Option<Vec<i64>>,
}

/// What the receiving side did with an arriving PDU.
pub enum Arrival {
    /// Accepted; these packets are now on their way up (or waiting in the receiving proxy).
    Accepted,
    /// Discarded: already delivered or given up, or a second copy.
    Discarded(RxOutcome),
}

impl SplitBearer {
    /// The bearer of `spec`, empty, its first feedback report (if any) one period after the
    /// start.
    pub fn new(spec: &SplitBearerConfig) -> SplitBearer {
        let tx = Transmitter::new(spec.tx);
        SplitBearer {
            header: tx.header_bytes(),
            tx,
            rx: Receiver::new(spec.rx),
            policy: spec.tx.policy,
            processing: spec.processing_delay,
            packet_time: spec.packet_time,
            l4s_reorder_threshold: spec.l4s_reorder_threshold,
            tx_last: None,
            tx_leg_delay: spec.tx_leg_delay,
            rx_leg_delay: spec.rx_leg_delay,
            toward_leg: Default::default(),
            from_leg: Default::default(),
            reports_on_way: VecDeque::new(),
            rx_last: None,
            feedback: spec.feedback,
            next_report: spec.feedback.map(|p| Time::ZERO + p),
            window: Default::default(),
            last_report: Time::ZERO,
            tx_proxy: VecDeque::new(),
            rx_proxy: VecDeque::new(),
            sent_at: VecDeque::new(),
            sent_base: 0,
            measures: RxMeasures::default(),
            released: Vec::new(),
            retransmit_lost: spec.retransmit_lost,
            lost: Vec::new(),
            switches: spec.duplication_switches.iter().map(|&(at, on)| (Time::ZERO + at, on)).collect(),
            released_counts: None,
        }
    }

    /// From now on, notes the COUNT of every SDU the receiving entity delivers upwards (in
    /// the order delivered), for an invariant checker to take
    /// ([`SplitBearer::take_released_counts`]); `on = false` stops it.
    pub fn watch_counts(&mut self, on: bool) {
        if on {
            self.released_counts.get_or_insert_with(Vec::new);
        } else {
            self.released_counts = None;
        }
    }

    /// Moves the COUNTs noted since the last call to `out`; nothing unless watched.
    pub fn take_released_counts(&mut self, out: &mut Vec<i64>) {
        if let Some(log) = &mut self.released_counts {
            out.append(log);
        }
    }

    /// When a packet due out of a proxy at `due` leaves it: not before `packet_time` after
    /// the previous one (`last`).
    fn departure(last: &mut Option<Time>, due: Time, packet_time: Dur) -> Time {
        let at = match *last {
            Some(l) => due.max(l + packet_time),
            None => due,
        };
        *last = Some(at);
        at
    }

    /// A packet enters the numbering proxy; `Some` when it is to be numbered right away.
    pub fn enter(&mut self, now: Time, pkt: Packet) -> Option<Packet> {
        if self.processing == Dur::ZERO && self.packet_time == Dur::ZERO {
            return Some(pkt);
        }
        let at = Self::departure(&mut self.tx_last, now + self.processing, self.packet_time);
        self.tx_proxy.push_back((at, pkt));
        None
    }

    /// The next packet that has left the numbering proxy by `now`.
    pub fn pop_numbering(&mut self, now: Time) -> Option<Packet> {
        if self.tx_proxy.front().is_some_and(|(t, _)| *t <= now) {
            return self.tx_proxy.pop_front().map(|(_, p)| p);
        }
        None
    }

    /// Bytes of the SDUs waiting in the numbering proxy (PDCP data volume not yet submitted
    /// to a leg).
    pub fn waiting_bytes(&self) -> u64 {
        self.tx_proxy.iter().map(|(_, p)| u64::from(p.size)).sum()
    }

    /// Remembers when COUNT `count` went onto its leg(s) (for the legs' delay feedback).
    pub fn note_sent(&mut self, count: i64, now: Time) {
        if self.sent_at.is_empty() {
            self.sent_base = count;
        }
        debug_assert_eq!(self.sent_base + self.sent_at.len() as i64, count);
        self.sent_at.push_back(now);
    }

    /// A PDU arrives over leg `leg`: reorder it. Released packets go to the receiving proxy;
    /// `forward` collects those that leave it at once.
    pub fn arrive(&mut self, now: Time, leg: usize, pkt: Packet, forward: &mut Vec<Packet>) -> Arrival {
        self.measures.arrivals[leg] += 1;
        self.measures.arrival_bytes[leg] += u64::from(pkt.size);
        let sn = pkt.lower_sn;
        let count = self.rx.count_of(sn);
        if let Some(sent) = count.checked_sub(self.sent_base).and_then(|i| self.sent_at.get(usize::try_from(i).ok()?)) {
            let delay = now.since(*sent);
            let w = &mut self.window[leg];
            w.delivered_bytes += u64::from(pkt.size);
            w.min_delay = Some(w.min_delay.map_or(delay, |d| d.min(delay)));
        }
        let mut released = std::mem::take(&mut self.released);
        let outcome = self.rx.receive(now, sn, (now, pkt), &mut released);
        let arrival = match outcome {
            RxOutcome::Accepted { delivered } => {
                if delivered == 0 {
                    self.measures.held += 1;
                }
                Arrival::Accepted
            }
            other => Arrival::Discarded(other),
        };
        self.release(now, &mut released, forward);
        self.released = released;
        self.measures.max_buffered = self.measures.max_buffered.max(self.rx.rx_next() - self.rx.rx_deliv());
        arrival
    }

    fn release(&mut self, now: Time, released: &mut Vec<(i64, (Time, Packet))>, forward: &mut Vec<Packet>) {
        // Even when nothing is released the window may have moved (t-Reordering giving a gap
        // up with reordering off, where everything was passed up on arrival): the
        // transmitter hears of RX_DELIV every time, or its window would stay full for good.
        self.measures.max_burst = self.measures.max_burst.max(released.len());
        for (count, (arrived, mut pkt)) in released.drain(..) {
            if let Some(log) = &mut self.released_counts {
                log.push(count);
            }
            let waited = now.since(arrived);
            self.measures.reorder_delay_sum = self.measures.reorder_delay_sum + waited;
            self.measures.reorder_delay_max = self.measures.reorder_delay_max.max(waited);
            if self.l4s_reorder_threshold.is_some_and(|t| waited > t) && pkt.ecn == Ecn::Ect1 {
                pkt.ecn = Ecn::Ce;
                self.measures.l4s_reorder_marks += 1;
            }
            pkt.size -= self.header;
            self.measures.delivered_bytes += u64::from(pkt.size);
            if self.processing == Dur::ZERO && self.packet_time == Dur::ZERO {
                forward.push(pkt);
            } else {
                let at = Self::departure(&mut self.rx_last, now + self.processing, self.packet_time);
                self.rx_proxy.push_back((at, pkt));
            }
        }
        // Forget send times below the receiver's window: those COUNTs will not be measured.
        let deliv = self.rx.rx_deliv();
        while self.sent_base < deliv && !self.sent_at.is_empty() {
            self.sent_at.pop_front();
            self.sent_base += 1;
        }
        self.tx.on_delivered(deliv);
    }

    /// Everything due at `now` on the receiving side: t-Reordering expiry and packets leaving
    /// the receiving proxy (in `forward`).
    pub fn service_receiver(&mut self, now: Time, forward: &mut Vec<Packet>) {
        if self.rx.poll_timeout().is_some_and(|t| t <= now) {
            let mut released = std::mem::take(&mut self.released);
            self.rx.handle_timeout(now, &mut released);
            self.release(now, &mut released, forward);
            self.released = released;
        }
        while self.rx_proxy.front().is_some_and(|(t, _)| *t <= now) {
            forward.extend(self.rx_proxy.pop_front().map(|(_, p)| p));
        }
    }

    /// Feedback reports are due at `now` (adaptive policy): `queued` is each leg's queue in
    /// bytes.
    pub fn report_due(&self, now: Time) -> bool {
        self.next_report.is_some_and(|t| t <= now)
    }

    /// Makes the legs' feedback reports at `now` from what each leg delivered since the last
    /// one and what each leg's node says of it (`legs`), and schedules the next. A report
    /// reaches the transmitting entity after its leg's transport delay.
    pub fn report(&mut self, now: Time, legs: [LegState; 2]) {
        let Some(period) = self.feedback else { return };
        let interval = now.since(self.last_report);
        for (leg, state) in legs.into_iter().enumerate() {
            let w = std::mem::take(&mut self.window[leg]);
            let report = LegReport {
                queued_bytes: state.queued_bytes,
                delivered_bytes: w.delivered_bytes,
                interval,
                min_delay: w.min_delay,
                desired_bytes: state.desired_bytes,
                buffer_bytes: state.buffer_bytes,
                confirmed_sn: state.confirmed_sn,
            };
            if self.tx_leg_delay[leg] == Dur::ZERO {
                self.tx.on_leg_report(now, leg, report);
            } else {
                self.reports_on_way.push_back((now + self.tx_leg_delay[leg], leg, report));
            }
        }
        self.last_report = now;
        self.next_report = Some(now + period);
    }

    /// Feedback reports that reached the transmitting entity by `now` take effect.
    fn receive_reports(&mut self, now: Time) {
        while let Some(k) = self.reports_on_way.iter().position(|(at, _, _)| *at <= now) {
            if let Some((at, leg, report)) = self.reports_on_way.remove(k) {
                self.tx.on_leg_report(at, leg, report);
            }
        }
    }

    /// A PDU the transmitting entity sent on `leg` at `now`: `Some` when it reaches the leg
    /// at once, `None` when it is on its way ([`SplitBearer::pop_toward_leg`]).
    pub fn toward_leg(&mut self, now: Time, leg: usize, pkt: Packet) -> Option<Packet> {
        if self.tx_leg_delay[leg] == Dur::ZERO {
            return Some(pkt);
        }
        self.toward_leg[leg].push_back((now + self.tx_leg_delay[leg], pkt));
        None
    }

    /// A PDU that reached its leg's node by `now`, with the leg; reports that reached the
    /// transmitting entity by then take effect first.
    pub fn pop_toward_leg(&mut self, now: Time) -> Option<(usize, Packet)> {
        self.receive_reports(now);
        let leg = (0..2).filter(|&l| self.toward_leg[l].front().is_some_and(|(t, _)| *t <= now)).min_by_key(|&l| self.toward_leg[l][0].0)?;
        self.toward_leg[leg].pop_front().map(|(_, p)| (leg, p))
    }

    /// A PDU leg `leg` delivered at `now`: `Some` when it reaches the receiving entity at
    /// once, `None` when it is on its way ([`SplitBearer::pop_from_leg`]).
    pub fn from_leg(&mut self, now: Time, leg: usize, pkt: Packet) -> Option<Packet> {
        if self.rx_leg_delay[leg] == Dur::ZERO {
            return Some(pkt);
        }
        self.from_leg[leg].push_back((now + self.rx_leg_delay[leg], pkt));
        None
    }

    /// A PDU that reached the receiving entity from its leg by `now`, with the leg and the
    /// time it arrived.
    pub fn pop_from_leg(&mut self, now: Time) -> Option<(Time, usize, Packet)> {
        let leg = (0..2).filter(|&l| self.from_leg[l].front().is_some_and(|(t, _)| *t <= now)).min_by_key(|&l| self.from_leg[l][0].0)?;
        self.from_leg[leg].pop_front().map(|(t, p)| (t, leg, p))
    }

    /// A PDU of this entity was lost on leg `leg`. With `retransmit_lost` the entity keeps it
    /// for the next report and returns `None`; otherwise the packet is lost for good.
    pub fn lost_on_leg(&mut self, leg: usize, pkt: Packet) -> Option<Packet> {
        if !self.retransmit_lost {
            return Some(pkt);
        }
        self.lost.push((leg, pkt));
        None
    }

    /// The PDUs the report just made lists as lost, each with the leg to resend it on.
    pub fn take_retransmissions(&mut self, out: &mut Vec<(usize, Packet)>) {
        self.measures.retransmitted += self.lost.len() as u64;
        out.extend(self.lost.drain(..).map(|(leg, pkt)| (1 - leg, pkt)));
    }

    /// Applies a duplication switch due by `now`; `Some(false)` when duplication was just
    /// switched off (the caller then discards the second leg's waiting copies).
    pub fn switch_due(&mut self, now: Time) -> Option<bool> {
        let (at, on) = *self.switches.front()?;
        if at > now {
            return None;
        }
        self.switches.pop_front();
        self.tx.set_duplication(on);
        Some(on)
    }

    /// When this bearer next needs servicing.
    pub fn poll_timeout(&self) -> Option<Time> {
        // Asked after every packet the bearer handles: folded without building a list.
        let mut t = Time::earliest(self.rx.poll_timeout(), self.next_report);
        t = Time::earliest(t, self.tx_proxy.front().map(|(t, _)| *t));
        t = Time::earliest(t, self.rx_proxy.front().map(|(t, _)| *t));
        for leg in 0..2 {
            t = Time::earliest(t, self.toward_leg[leg].front().map(|(t, _)| *t));
            t = Time::earliest(t, self.from_leg[leg].front().map(|(t, _)| *t));
        }
        for (at, _, _) in &self.reports_on_way {
            t = Time::earliest(t, Some(*at));
        }
        Time::earliest(t, self.switches.front().map(|(t, _)| *t))
    }

    /// The transmitter's split policy.
    pub fn tx_policy(&self) -> SplitPolicy {
        self.policy
    }
}
