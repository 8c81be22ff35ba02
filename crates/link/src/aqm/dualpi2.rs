//! DualPI2, the DualQ Coupled AQM of RFC 9332 with Linux `sch_dualpi2`'s semantics and
//! defaults (mainline since 2025), the RFC's variants as options.
//!
//! Two FIFOs share the link's `queue` limit: the **L queue** (L4S) and the **C queue**
//! (Classic). A packet whose ECN field is ECT(1) or CE goes to L, Not-ECT and ECT(0) to C
//! (Linux's default `l4s_ect` mask; `any_ect` sends every ECN-capable packet to L). A packet
//! that finds the limit reached is a tail drop.
//!
//! One **PI2 controller** keeps a base probability p' ∈ [0, 1]. Every `tupdate` (16 ms) it
//! adds `alpha·(qdelay − target) + beta·(qdelay − qdelay_prev)` (alpha 0.16 Hz, beta 3.2 Hz,
//! target 15 ms), where qdelay is the larger of the two head packets' sojourns (Linux; the
//! RFC's A.1 pseudocode, `curq`, uses the C head alone). From p' come:
//! - the Classic drop (or, for ECT(0), mark) probability p_C = p'², drawn as two independent
//!   rolls against p' as Linux does;
//! - the coupled L4S marking probability p_CL = k·p' (k = 2);
//! - the L4S marking probability p_L = max(p_CL, native), the native AQM being Linux's step
//!   (mark every L4S packet whose sojourn exceeds 1 ms) or the RFC's ramp (linear from 800 µs
//!   to 1.2 ms, only while more than one packet is in the L queue).
//!
//! Marks and drops are decided when a packet is taken for transmission (Linux's default
//! `drop_dequeue`; `drop_enqueue` moves the PI2 decision to the door, the native AQM stays at
//! dequeue), and never while less than two MTUs wait in the two queues together. **Overload**:
//! once k·p' > 1, ECN no longer protects: a Classic packet drawn with p'² is dropped even if
//! ECN-capable, and an L4S packet is dropped with p'² and marked otherwise
//! (`drop_on_overload`, Linux's default); in `overflow` mode p' is capped at 1/k instead and
//! the L queue is left to tail-drop at the limit.
//!
//! The **scheduler** is Linux's credit-based weighted round robin: `classic_protection` wc =
//! 10 % of the bytes go to C when both queues are backlogged (the credit starts at
//! MTU·(wc − wl), moves by wc·size when L is served with C waiting and by −wl·size when C is
//! served with L waiting, and is reset when both are empty). The RFC's time-shifted FIFO is the
//! alternative: the head with the earlier enqueue instant goes first, C's shifted later by
//! `tshift` (50 ms).
//!
//! The periodic update runs at the exact multiples of `tupdate` as the link's calls reach them,
//! with the heads as they were then (they only change at calls); draws come from the link's
//! `aqm` random stream, one 53-bit uniform per roll (Linux draws 32-bit integers against p' in
//! units of 2⁻³²). Only ECT(0) and ECT(1) are ever changed, and only to CE (RFC 9331 §5).

use std::collections::VecDeque;

use multiconn_core::units::QueueLimit;
use multiconn_core::{Dur, Ecn, Packet, RngStream, Time};

use super::{within, AqmStats, Qdisc};

/// When the L queue's step marks: the packet's sojourn above a time, or the L queue's length
/// after the packet left above a packet count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepThreshold {
    /// Sojourn strictly above this (Linux default 1 ms).
    Time(Dur),
    /// More than this many packets left waiting in the L queue.
    Packets(u32),
}

/// The L queue's native AQM.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NativeAqm {
    /// Linux's step: every L4S packet above `threshold` is marked; only packets that found at
    /// least `min_qlen` packets in the L queue on arrival are subject to it (0: all).
    Step {
        /// The threshold.
        threshold: StepThreshold,
        /// The L queue length an arriving packet must find for the step to apply to it.
        min_qlen: u32,
    },
    /// RFC 9332 A.1's ramp: the native probability is 0 below `min_th` of sojourn, rises
    /// linearly to 1 at `min_th + range`, and is 0 while the L queue holds at most `th_len`
    /// packets (the one leaving included).
    Ramp {
        /// Where the ramp starts (800 µs).
        min_th: Dur,
        /// Its width (400 µs).
        range: Dur,
        /// No native marking while the L queue holds at most this many packets (1).
        th_len: u32,
    },
}

/// How the link's time is shared between the two queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DualScheduler {
    /// Linux's credit-based WRR with `classic_protection` percent of the bytes for C
    /// when both are backlogged (10).
    Wrr {
        /// The C queue's weight in percent, 0 to 100.
        classic_protection: u8,
    },
    /// RFC 9332's time-shifted FIFO: L goes first unless the C head arrived more than
    /// `tshift` before the L head.
    TsFifo {
        /// The shift added to the C head's enqueue instant (50 ms, the ns-3 port's).
        tshift: Dur,
    },
}

/// Which queue delay drives the PI2 controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PiInput {
    /// The larger of the two heads' sojourns (Linux).
    Max,
    /// The C head's sojourn only (RFC 9332 A.1 `curq`).
    Classic,
}

/// Which ECN codepoints go to the L queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EcnMask {
    /// ECT(1) and CE (Linux `l4s_ect`, RFC 9331's L4S identifier).
    L4s,
    /// Every ECN-capable packet (Linux `any_ect`, for DCTCP-style data centres).
    Any,
}

/// DualPI2's parameters; the defaults are Linux `sch_dualpi2`'s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DualPi2Params {
    /// The PI2 target queue delay (15 ms).
    pub target: Dur,
    /// The period of p' updates (16 ms).
    pub tupdate: Dur,
    /// The integral gain in Hz: p' per second of delay error per update (0.16; Linux stores
    /// 41/256).
    pub alpha: f64,
    /// The proportional gain in Hz: p' per second of delay change per update (3.2; Linux
    /// stores 819/256).
    pub beta: f64,
    /// The coupling factor k: p_CL = k·p' (2).
    pub coupling: f64,
    /// The L queue's native AQM (step, 1 ms, from the first packet).
    pub native: NativeAqm,
    /// The scheduler between the queues (WRR, 10 % for C).
    pub scheduler: DualScheduler,
    /// The delay the controller measures (the larger head sojourn).
    pub pi_input: PiInput,
    /// On overload, drop with p'² in the L queue too (true); false is Linux's `overflow`,
    /// which caps p' at 1/k.
    pub drop_overload: bool,
    /// Decide PI2 drops and marks at enqueue (Linux `drop_enqueue`) instead of at dequeue.
    pub drop_early: bool,
    /// Which codepoints go to the L queue.
    pub ecn_mask: EcnMask,
    /// Bytes of one MTU: no PI2 mark or drop while less than two wait, and the WRR credit's
    /// scale (Linux's `psched_mtu`: the device MTU plus its link header; 1500 here, whose
    /// packet sizes are IP sizes).
    pub mtu: u32,
    /// Test hook: hold p' at this value, the controller switched off.
    #[doc(hidden)]
    pub fixed_prob: Option<f64>,
}

impl Default for DualPi2Params {
    fn default() -> DualPi2Params {
        DualPi2Params {
            target: Dur::from_millis(15),
            tupdate: Dur::from_millis(16),
            alpha: 0.16,
            beta: 3.2,
            coupling: 2.0,
            native: NativeAqm::Step { threshold: StepThreshold::Time(Dur::from_millis(1)), min_qlen: 0 },
            scheduler: DualScheduler::Wrr { classic_protection: 10 },
            pi_input: PiInput::Max,
            drop_overload: true,
            drop_early: false,
            ecn_mask: EcnMask::L4s,
            mtu: 1500,
            fixed_prob: None,
        }
    }
}

impl DualPi2Params {
    /// The RFC 9332 A.1 ramp with its defaults: 800 µs to 1.2 ms, above one packet.
    pub const RFC_RAMP: NativeAqm = NativeAqm::Ramp { min_th: Dur::from_micros(800), range: Dur::from_micros(400), th_len: 1 };

    /// `target`, `tupdate`, `alpha` and `beta` from the RTTs the controller is tuned for, as
    /// iproute2's `max_rtt`/`typical_rtt` do (RFC 9332 A.1 Fig. 2): a missing one is the other
    /// times or divided by 6; target = typical RTT, tupdate = min(typical, max/3),
    /// alpha = 0.1·tupdate/max², beta = 0.3/max.
    pub fn tuned_for(self, max_rtt: Option<Dur>, typical_rtt: Option<Dur>) -> DualPi2Params {
        let (max, typical) = match (max_rtt, typical_rtt) {
            (None, None) => return self,
            (Some(m), None) => (m, Dur(m.as_nanos() / 6)),
            (None, Some(t)) => (Dur(t.as_nanos().saturating_mul(6)), t),
            (Some(m), Some(t)) => (m, t),
        };
        let tupdate = typical.min(Dur(max.as_nanos() / 3));
        let max_s = max.as_secs_f64();
        DualPi2Params { target: typical, tupdate, alpha: 0.1 * tupdate.as_secs_f64() / (max_s * max_s), beta: 0.3 / max_s, ..self }
    }
}

/// One PI2 update (RFC 9332 §2.5.2, Linux `calculate_probability`): p' plus
/// `alpha·(qdelay − target) + beta·(qdelay − qdelay_prev)`, kept within [0, 1].
pub fn pi2_update(params: &DualPi2Params, prob: f64, qdelay: Dur, qdelay_prev: Dur) -> f64 {
    let s = |d: Dur| d.as_secs_f64();
    let p = prob + params.alpha * (s(qdelay) - s(params.target)) + params.beta * (s(qdelay) - s(qdelay_prev));
    p.clamp(0.0, 1.0)
}

/// What DualPI2 did, by kind (each drop is also in [`AqmStats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DualPi2Counts {
    /// C packets dropped by p'² (Not-ECT, or any on overload).
    pub classic_drops: u64,
    /// C packets marked CE by p'².
    pub classic_marks: u64,
    /// L packets dropped (p'² on overload, or Not-ECT forced into L).
    pub l4s_drops: u64,
    /// L packets marked CE by the coupled probability k·p' (or on overload).
    pub coupled_marks: u64,
    /// L packets marked CE by the native AQM (step or ramp).
    pub native_marks: u64,
    /// Sojourn times of the packets the L queue forwarded.
    pub l4s_sojourn: SojournSummary,
    /// Sojourn times of the packets the C queue forwarded.
    pub classic_sojourn: SojournSummary,
}

/// Sojourn times of the packets one queue forwarded (dropped ones are not counted), from a
/// histogram with three significant digits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SojournSummary {
    /// Packets forwarded.
    pub packets: u64,
    /// Mean sojourn.
    pub mean: Dur,
    /// 99th percentile.
    pub p99: Dur,
    /// Longest sojourn.
    pub max: Dur,
}

/// The sojourn histogram of one queue: nanoseconds from 1 µs to an hour, three significant
/// digits (sojourns above an hour are clamped to it).
struct Sojourns(hdrhistogram::Histogram<u64>);

impl Sojourns {
    const HIGHEST_NS: u64 = 3_600_000_000_000;

    fn new() -> Sojourns {
        Sojourns(hdrhistogram::Histogram::new_with_bounds(1_000, Sojourns::HIGHEST_NS, 3).expect("valid histogram bounds"))
    }

    fn record(&mut self, d: Dur) {
        self.0.saturating_record(d.0.min(Sojourns::HIGHEST_NS));
    }

    fn summary(&self) -> SojournSummary {
        let h = &self.0;
        if h.is_empty() {
            return SojournSummary::default();
        }
        SojournSummary { packets: h.len(), mean: Dur(h.mean().round() as u64), p99: Dur(h.value_at_quantile(0.99)), max: Dur(h.max()) }
    }
}

struct Queued {
    pkt: Packet,
    at: Time,
    /// Whether the step applies (decided at enqueue from `min_qlen`).
    apply_step: bool,
}

#[derive(Default)]
struct Queue {
    items: VecDeque<Queued>,
    bytes: u64,
}

impl Queue {
    fn push(&mut self, q: Queued) {
        self.bytes += u64::from(q.pkt.size);
        self.items.push_back(q);
    }
    fn pop(&mut self) -> Option<Queued> {
        let q = self.items.pop_front()?;
        self.bytes -= u64::from(q.pkt.size);
        Some(q)
    }
    fn head_at(&self) -> Option<Time> {
        self.items.front().map(|q| q.at)
    }
    fn len(&self) -> usize {
        self.items.len()
    }
    fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    fn drain(&mut self, out: &mut Vec<Packet>) {
        out.extend(self.items.drain(..).map(|q| q.pkt));
        self.bytes = 0;
    }
    fn discard(&mut self, discard: &mut dyn FnMut(&Packet) -> bool, out: &mut Vec<Packet>) {
        let mut kept = VecDeque::with_capacity(self.items.len());
        for q in self.items.drain(..) {
            if discard(&q.pkt) {
                self.bytes -= u64::from(q.pkt.size);
                out.push(q.pkt);
            } else {
                kept.push_back(q);
            }
        }
        self.items = kept;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    L,
    C,
}

/// The DualQ Coupled AQM (RFC 9332, Linux `dualpi2`) on one link direction.
pub struct DualPi2 {
    params: DualPi2Params,
    l: Queue,
    c: Queue,
    limit: QueueLimit,
    rng: RngStream,
    stats: AqmStats,
    counts: DualPi2Counts,
    /// The base probability p'.
    prob: f64,
    /// The delay the last update measured.
    qdelay_prev: Dur,
    /// The next periodic update.
    next_update: Time,
    /// The WRR credit in percent-bytes: ≤ 0 lets L go first.
    credit: i64,
    l_sojourns: Sojourns,
    c_sojourns: Sojourns,
}

impl DualPi2 {
    /// An empty DualPI2 whose two queues together are bounded by `limit`, drawing from `rng`.
    pub fn new(params: DualPi2Params, limit: QueueLimit, rng: RngStream) -> DualPi2 {
        let mut d = DualPi2 {
            params,
            l: Queue::default(),
            c: Queue::default(),
            limit,
            rng,
            stats: AqmStats::default(),
            counts: DualPi2Counts::default(),
            prob: params.fixed_prob.map_or(0.0, |p| p.clamp(0.0, 1.0)),
            qdelay_prev: Dur::ZERO,
            next_update: Time::ZERO + params.tupdate,
            credit: 0,
            l_sojourns: Sojourns::new(),
            c_sojourns: Sojourns::new(),
        };
        d.reset_credit();
        d
    }

    /// The base probability p' as of the last update run.
    pub fn base_prob(&self) -> f64 {
        self.prob
    }

    /// Runs the periodic updates due by `now` (the link runs them on its own calls).
    pub fn advance(&mut self, now: Time) {
        self.catch_up(now);
    }

    /// What it did, by kind.
    pub fn counts(&self) -> DualPi2Counts {
        self.counts
    }

    /// Packets waiting in the L queue.
    pub fn l_len(&self) -> usize {
        self.l.len()
    }

    /// Packets waiting in the C queue.
    pub fn c_len(&self) -> usize {
        self.c.len()
    }

    fn weights(&self) -> (i64, i64) {
        match self.params.scheduler {
            DualScheduler::Wrr { classic_protection } => {
                let wc = i64::from(classic_protection.min(100));
                (wc, 100 - wc)
            }
            DualScheduler::TsFifo { .. } => (0, 0),
        }
    }

    fn reset_credit(&mut self) {
        let (wc, wl) = self.weights();
        self.credit = i64::from(self.params.mtu) * (wc - wl);
    }

    fn classify(&self, pkt: &Packet) -> Which {
        let mask = match self.params.ecn_mask {
            EcnMask::L4s => 0b01,
            EcnMask::Any => 0b11,
        };
        if pkt.ecn.bits() & mask != 0 {
            Which::L
        } else {
            Which::C
        }
    }

    fn roll(&mut self, p: f64) -> bool {
        self.rng.uniform() < p
    }

    fn overloaded(&self) -> bool {
        self.prob > 1.0 / self.params.coupling
    }

    /// Marks `pkt` CE; counted only if that changed it.
    fn mark(&mut self, pkt: &mut Packet) -> bool {
        if pkt.ecn == Ecn::Ce || pkt.ecn == Ecn::NotEct {
            return false;
        }
        pkt.ecn = Ecn::Ce;
        self.stats.marks += 1;
        true
    }

    /// The controller's input at `at`: the heads' sojourns (0 for an empty queue).
    fn qdelay(&self, at: Time) -> Dur {
        let sojourn = |q: &Queue| q.head_at().map_or(Dur::ZERO, |h| at.since(h));
        match self.params.pi_input {
            PiInput::Max => sojourn(&self.l).max(sojourn(&self.c)),
            PiInput::Classic => sojourn(&self.c),
        }
    }

    /// Runs the updates due by `now`, each with the heads as they were at its instant.
    fn catch_up(&mut self, now: Time) {
        let period = self.params.tupdate.as_nanos().max(1);
        while self.next_update <= now {
            let idle = self.l.is_empty() && self.c.is_empty() && self.prob == 0.0 && self.qdelay_prev == Dur::ZERO;
            if self.params.fixed_prob.is_some() || idle {
                // Nothing can change until the next call: jump past `now`.
                let behind = (now.as_nanos() - self.next_update.as_nanos()) / period + 1;
                self.next_update = Time(self.next_update.as_nanos().saturating_add(behind.saturating_mul(period)));
                break;
            }
            let at = self.next_update;
            let qdelay = self.qdelay(at);
            let mut p = pi2_update(&self.params, self.prob, qdelay, self.qdelay_prev);
            if !self.params.drop_overload {
                p = p.min(1.0 / self.params.coupling);
            }
            self.prob = p;
            self.qdelay_prev = qdelay;
            self.next_update = Time(at.as_nanos().saturating_add(period));
            if self.next_update.as_nanos() == u64::MAX {
                break;
            }
        }
    }

    /// The PI2 decision for `pkt` from queue `which` with `backlog` bytes left in both queues
    /// (Linux `must_drop`): whether to drop it; a mark is applied to `pkt`.
    fn pi2_decides_drop(&mut self, pkt: &mut Packet, which: Which, backlog: u64) -> bool {
        if backlog < 2 * u64::from(self.params.mtu) {
            return false;
        }
        let p = self.prob;
        let overload = self.overloaded();
        match which {
            Which::C => {
                if self.roll(p) && self.roll(p) {
                    if overload || pkt.ecn == Ecn::NotEct {
                        self.counts.classic_drops += 1;
                        return true;
                    }
                    if self.mark(pkt) {
                        self.counts.classic_marks += 1;
                    }
                }
                false
            }
            Which::L => {
                if overload {
                    if self.params.drop_overload && self.roll(p) && self.roll(p) {
                        self.counts.l4s_drops += 1;
                        return true;
                    }
                    if self.mark(pkt) {
                        self.counts.coupled_marks += 1;
                    }
                } else if self.roll(self.params.coupling * p) {
                    if pkt.ecn == Ecn::NotEct {
                        self.counts.l4s_drops += 1;
                        return true;
                    }
                    if self.mark(pkt) {
                        self.counts.coupled_marks += 1;
                    }
                }
                false
            }
        }
    }

    /// The ramp's native probability for a packet of sojourn `sojourn` leaving an L queue
    /// that held `held` packets with it.
    fn ramp_prob(min_th: Dur, range: Dur, th_len: u32, sojourn: Dur, held: usize) -> f64 {
        if held <= th_len as usize || sojourn <= min_th {
            return 0.0;
        }
        if sojourn >= min_th + range || range == Dur::ZERO {
            return 1.0;
        }
        (sojourn - min_th).as_secs_f64() / range.as_secs_f64()
    }

    /// The L packet `q` leaving at `now` (with `held` packets in L counting it, `backlog`
    /// bytes left in both queues): whether it is dropped; marks are applied.
    fn l_at_dequeue(&mut self, q: &mut Queued, now: Time, held: usize, backlog: u64) -> bool {
        let sojourn = now.since(q.at);
        match self.params.native {
            NativeAqm::Step { threshold, .. } => {
                if !self.params.drop_early && self.pi2_decides_drop(&mut q.pkt, Which::L, backlog) {
                    return true;
                }
                let above = match threshold {
                    StepThreshold::Time(t) => sojourn > t,
                    StepThreshold::Packets(n) => self.l.len() > n as usize,
                };
                if q.apply_step && above {
                    if q.pkt.ecn == Ecn::NotEct {
                        self.counts.l4s_drops += 1;
                        return true;
                    }
                    if self.mark(&mut q.pkt) {
                        self.counts.native_marks += 1;
                    }
                }
                false
            }
            NativeAqm::Ramp { min_th, range, th_len } => {
                let native = Self::ramp_prob(min_th, range, th_len, sojourn, held);
                let floor = backlog < 2 * u64::from(self.params.mtu);
                if !self.params.drop_early && !floor && self.overloaded() {
                    return self.pi2_decides_drop(&mut q.pkt, Which::L, backlog);
                }
                // One draw against max(native, coupled) (RFC 9332 A.1); the coupled part was
                // already drawn at the door with `drop_early`.
                let coupled = if self.params.drop_early || floor { 0.0 } else { (self.params.coupling * self.prob).min(1.0) };
                if self.roll(native.max(coupled)) {
                    if q.pkt.ecn == Ecn::NotEct {
                        self.counts.l4s_drops += 1;
                        return true;
                    }
                    if self.mark(&mut q.pkt) {
                        if native >= coupled {
                            self.counts.native_marks += 1;
                        } else {
                            self.counts.coupled_marks += 1;
                        }
                    }
                }
                false
            }
        }
    }

    /// Which queue the scheduler serves next, and the WRR credit change if that packet is
    /// sent; `None` when both are empty.
    fn pick(&mut self) -> Option<(Which, i64)> {
        match self.params.scheduler {
            DualScheduler::Wrr { .. } => {
                let (wc, wl) = self.weights();
                if !self.l.is_empty() && (self.c.is_empty() || self.credit <= 0) {
                    Some((Which::L, if self.c.is_empty() { 0 } else { wc }))
                } else if !self.c.is_empty() {
                    Some((Which::C, if self.l.is_empty() { 0 } else { -wl }))
                } else {
                    self.reset_credit();
                    None
                }
            }
            DualScheduler::TsFifo { tshift } => match (self.l.head_at(), self.c.head_at()) {
                (Some(l), Some(c)) => Some((if l <= c + tshift { Which::L } else { Which::C }, 0)),
                (Some(_), None) => Some((Which::L, 0)),
                (None, Some(_)) => Some((Which::C, 0)),
                (None, None) => None,
            },
        }
    }
}

impl Qdisc for DualPi2 {
    fn enqueue(&mut self, now: Time, mut pkt: Packet, _dropped: &mut Vec<Packet>) -> Result<(), Packet> {
        self.catch_up(now);
        let packets = (self.l.len() + self.c.len()) as u64;
        if !within(self.limit, packets, self.l.bytes + self.c.bytes, pkt.size) {
            self.stats.tail_drops += 1;
            return Err(pkt);
        }
        let which = self.classify(&pkt);
        if self.params.drop_early && self.pi2_decides_drop(&mut pkt, which, self.l.bytes + self.c.bytes) {
            self.stats.early_drops += 1;
            return Err(pkt);
        }
        match which {
            Which::L => {
                let apply_step = match self.params.native {
                    NativeAqm::Step { min_qlen, .. } => self.l.len() >= min_qlen as usize,
                    NativeAqm::Ramp { .. } => true,
                };
                self.l.push(Queued { pkt, at: now, apply_step });
            }
            Which::C => self.c.push(Queued { pkt, at: now, apply_step: false }),
        }
        Ok(())
    }

    fn dequeue(&mut self, now: Time, dropped: &mut Vec<Packet>) -> Option<Packet> {
        self.catch_up(now);
        loop {
            let (which, change) = self.pick()?;
            let held = self.l.len();
            let mut q = match which {
                Which::L => self.l.pop(),
                Which::C => self.c.pop(),
            }
            .expect("picked a non-empty queue");
            let backlog = self.l.bytes + self.c.bytes;
            let drop = match which {
                Which::C => !self.params.drop_early && self.pi2_decides_drop(&mut q.pkt, Which::C, backlog),
                Which::L => self.l_at_dequeue(&mut q, now, held, backlog),
            };
            if drop {
                self.stats.early_drops += 1;
                dropped.push(q.pkt);
                continue;
            }
            self.credit += change * i64::from(q.pkt.size);
            match which {
                Which::L => self.l_sojourns.record(now.since(q.at)),
                Which::C => self.c_sojourns.record(now.since(q.at)),
            }
            return Some(q.pkt);
        }
    }

    fn packets(&self) -> u64 {
        (self.l.len() + self.c.len()) as u64
    }
    fn bytes(&self) -> u64 {
        self.l.bytes + self.c.bytes
    }
    fn has_room(&self, size: u32) -> bool {
        within(self.limit, self.packets(), self.bytes(), size)
    }
    fn drain(&mut self, out: &mut Vec<Packet>) {
        self.l.drain(out);
        self.c.drain(out);
        self.reset_credit();
    }
    fn discard(&mut self, discard: &mut dyn FnMut(&Packet) -> bool, out: &mut Vec<Packet>) {
        self.l.discard(discard, out);
        self.c.discard(discard, out);
    }
    fn stats(&self) -> AqmStats {
        let counts = DualPi2Counts { l4s_sojourn: self.l_sojourns.summary(), classic_sojourn: self.c_sojourns.summary(), ..self.counts };
        AqmStats { dualpi2: Some(counts), ..self.stats }
    }
}
