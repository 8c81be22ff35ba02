//! The transmitting PDCP entity at the split point of a DC split bearer (TS 38.323 §5.2.1,
//! §5.11 duplication; the split algorithm itself is not standardised, pdcp-dc.md §4.3).
//!
//! Numbering (§5.2.1): each SDU gets the next COUNT, starting at 0 (or wherever
//! [`Transmitter::starting_at`] says), and its PDU carries `SN = COUNT mod 2^SN_len` behind a
//! header of [`header_bytes`]. COUNT 2^32 − 1 is the last one a bearer may use: after it,
//! [`Transmitter::send`] refuses with [`TxRefusal::CountExhausted`] (the bearer must be
//! re-keyed; pdcp-dc.md TV17).
//!
//! Window guard (pdcp-dc.md TV12, §7.6): the receiver interprets an SN relative to its
//! `RX_DELIV`, so a PDU `Window_Size` or more COUNTs beyond it reads as old and is discarded.
//! [`Transmitter::on_delivered`] tells the entity the receiver's `RX_DELIV`; `send` refuses
//! with [`TxRefusal::WindowFull`], consuming no COUNT, while `Window_Size − 1` PDUs are
//! outstanding beyond it (the cap srsRAN applies).
//!
//! Routing: each PDU goes on leg 0, leg 1, or both (duplication, §5.11: every data PDU on both
//! RLC legs; the receiver's duplicate discard removes the second copy). How a split bearer
//! divides PDUs between its legs is left to the implementation; [`SplitPolicy`] offers fixed
//! patterns (batches, alternation, smooth weighted round-robin) and an adaptive choice from
//! per-leg flow-control reports in the spirit of the TS 38.425 DL DATA DELIVERY STATUS
//! (queue-based and earliest-arrival policies, pdcp-dc.md §4.3 items 4 and 5). Every policy is
//! deterministic. Legs are numbered 0 and 1.

use std::collections::VecDeque;

use multiconn_core::{Dur, Time};

use crate::receiver::SnLength;

/// The largest COUNT a bearer may use (COUNT is 32 bits).
const MAX_COUNT: i64 = (1 << 32) - 1;

/// Radio access technology of the PDCP entity: sets the data-PDU header size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rat {
    /// NR (TS 38.323).
    Nr,
    /// LTE (TS 36.323).
    Lte,
}

/// Data PDU header bytes (D/C bit, reserved bits, SN): NR 12 bit → 2, 18 bit → 3;
/// LTE 7 bit → 1, 12 bit → 2, 15 bit → 2, 18 bit → 3. `None` for a combination the RAT does
/// not define (NR 7 or 15 bit).
pub fn header_bytes(rat: Rat, sn: SnLength) -> Option<u32> {
    match (rat, sn.bits()) {
        (Rat::Lte, 7) => Some(1),
        (Rat::Nr | Rat::Lte, 12) => Some(2),
        (Rat::Lte, 15) => Some(2),
        (Rat::Nr | Rat::Lte, 18) => Some(3),
        _ => None,
    }
}

/// What the adaptive split policy compares the legs by.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdaptiveSignal {
    /// Earliest estimated arrival: base delay + backlog / rate, per leg.
    Delay,
    /// Smallest estimated backlog in bytes.
    Queue,
    /// The largest credit: the desired buffer size the leg's node last reported (TS 38.425 DL
    /// DATA DELIVERY STATUS: the free space of its RLC buffer for the bearer) less the bytes
    /// sent on the leg since. Unless both legs report one (a link does not), the smallest
    /// backlog instead.
    DesiredBuffer,
    /// The largest credit as TS 38.425 §5.4.2 defines it: the leg's node may be sent its
    /// desired buffer size beyond the highest PDCP SN it reported as successfully delivered
    /// (RLC AM) or transmitted (RLC UM). The node's desired buffer size here is its RLC
    /// buffer's capacity (srsRAN's choice), the SN its RLC's confirmed one; the credit is that
    /// size less the bytes of every PDU sent on the leg after the reported SN — in its RLC
    /// buffer, waiting for acknowledgement, on the way to it, or sent since the report.
    /// Unless both legs report, the smallest backlog instead.
    DeliveryCredit,
}

/// How PDUs are divided between leg 0 and leg 1. Shares are leg 0's fraction, in [0, 1]
/// (values outside are clamped, NaN reads as 0); "round" is to the nearest integer, halves up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SplitPolicy {
    /// Batches of `size` PDUs: the first round(size · share) on leg 0, the rest on leg 1.
    /// A `size` of 0 is taken as 1.
    Batch {
        /// PDUs per batch.
        size: u32,
        /// Leg 0's fraction of each batch.
        share: f64,
    },
    /// Leg 0, leg 1, leg 0, ...
    Alternate,
    /// Per PDU, interleaved (smooth weighted round-robin): leg 0 carries `share` of the PDUs.
    /// `share` is read as the fraction p/q nearest to it with q ≤ 2^20 (a convergent of its
    /// continued fraction: 0.3 is exactly 3/10), and PDUs follow nginx's smooth weighted
    /// round-robin with weights p and q − p, ties to leg 0. In closed form the k-th PDU goes
    /// to leg 0 exactly when round(k · p/q) increases, so after any n PDUs leg 0 has carried
    /// round(n · p/q) of them, and exactly p of every q from the start.
    Ratio {
        /// Leg 0's fraction of the PDUs.
        share: f64,
    },
    /// Every PDU on both legs (§5.11) while duplication is active; on leg 0 only while a MAC
    /// CE has deactivated it ([`Transmitter::set_duplication`]).
    Duplicate,
    /// Each PDU on the leg the latest leg reports favour.
    ///
    /// Per leg, from [`Transmitter::on_leg_report`]:
    /// * rate (bytes/s): `delivered_bytes / interval`, smoothed with gain 1/4. A report
    ///   measures the leg's capacity only if the leg was backlogged at both ends of the
    ///   interval (the previous report and this one both show queued bytes): then the sample
    ///   enters the average even when it is low, so a stalled leg reads as stalled. Otherwise
    ///   the leg may have sat idle for part of the interval and the sample is only a lower
    ///   bound: it can raise the estimate (or give the first one, if anything was delivered)
    ///   but never lower it, so an idle leg does not read as slow.
    /// * base delay: the smallest `min_delay` ever reported (zero until one is).
    /// * backlog (bytes): queued bytes at the last report + bytes sent on the leg since −
    ///   rate · time since the report, floored at 0.
    ///
    /// [`AdaptiveSignal::Delay`] picks the leg with the smallest base delay + (backlog + PDU
    /// size) / rate (a leg whose rate estimate is 0 never wins), [`AdaptiveSignal::Queue`]
    /// the smallest backlog, [`AdaptiveSignal::DesiredBuffer`] the largest credit (desired
    /// buffer size − bytes sent since the report; the backlogs unless both legs give a size). Until both legs have a rate estimate, PDUs alternate as in
    /// [`SplitPolicy::Alternate`]. Ties go to leg 0.
    Adaptive {
        /// What the legs are compared by.
        signal: AdaptiveSignal,
    },
    /// The uplink split of TS 38.323 §5.2.1 (a UE's PDCP entity with two associated RLC
    /// entities): while the data volume pending for initial transmission — the PDCP data
    /// volume and the RLC data volume of both legs, as last given by
    /// [`Transmitter::set_pending_volume`], plus this PDU — is below `threshold` bytes
    /// (RRC's `ul-DataSplitThreshold`, TS 38.331), every PDU goes to the `primary` leg
    /// (`primaryPath`); at or above it, to either. Which one is the UE's choice; a UE submits
    /// to the RLC entity whose cell grants it resources first, so here the PDU goes to the leg
    /// that would send it first: the smaller (bytes pending + PDU) / rate, with each leg's
    /// rate as given (bytes pending alone when a rate is unknown), ties to the primary.
    /// `threshold = u64::MAX` is RRC's `infinity`: the primary path only.
    Threshold {
        /// The primary path's leg (0 or 1; any other value reads as 1).
        primary: usize,
        /// `ul-DataSplitThreshold` in bytes.
        threshold: u64,
    },
}

/// A transmitting PDCP entity's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransmitterConfig {
    /// Its RAT, which sets the header size.
    pub rat: Rat,
    /// The SN length of the PDUs it numbers.
    pub sn: SnLength,
    /// How PDUs are divided between the legs.
    pub policy: SplitPolicy,
}

/// The leg or legs a PDU is sent on. A leg is 0 or 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Legs {
    /// Leg 0 or leg 1.
    One(usize),
    /// Both legs (duplication).
    Both,
}

/// A numbered PDU and where it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pdu {
    /// Its COUNT.
    pub count: i64,
    /// Its SN: the COUNT's low `sn` bits.
    pub sn: u32,
    /// The leg or legs it goes on.
    pub legs: Legs,
    /// SDU size + header.
    pub size: u32,
}

/// Why the transmitter refused an SDU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxRefusal {
    /// Window_Size − 1 PDUs are already outstanding beyond the receiver's RX_DELIV.
    WindowFull,
    /// COUNT 2^32 − 1 was used: the bearer must be re-keyed (TS 33.501), nothing more is sent.
    CountExhausted,
}

/// Flow-control feedback from one leg (the DL DATA DELIVERY STATUS idea of TS 38.425).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegReport {
    /// Bytes waiting in the leg's queue when the report was made.
    pub queued_bytes: u64,
    /// Bytes the leg delivered since its previous report.
    pub delivered_bytes: u64,
    /// Time since its previous report.
    pub interval: Dur,
    /// Smallest split-to-receiver delay of the PDUs it delivered in that interval.
    pub min_delay: Option<Dur>,
    /// The desired buffer size for the bearer (TS 38.425 §5.5.2.2): the bytes the leg's node
    /// can take now; `None` when the leg does not say (a link).
    pub desired_bytes: Option<u64>,
    /// The leg's buffer capacity for the bearer, in bytes, the desired buffer size counted
    /// beyond `confirmed_sn` ([`AdaptiveSignal::DeliveryCredit`]); `None` for a link.
    pub buffer_bytes: Option<u64>,
    /// The highest PDCP SN the leg confirmed (TS 38.425: highest successfully delivered NR
    /// PDCP SN under RLC AM, highest transmitted under UM); `None` if it has none to give.
    pub confirmed_sn: Option<u32>,
}

/// What the entity has sent: PDUs and bytes (PDU size, header included) per leg, a
/// duplicated PDU counting on both; and how many `send` calls the window guard refused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxStats {
    /// PDUs sent on each leg.
    pub pdus: [u64; 2],
    /// Bytes sent on each leg (PDU size, header included).
    pub bytes: [u64; 2],
    /// `send` calls the window guard refused.
    pub window_full: u64,
}

/// What the adaptive policy knows of one leg.
#[derive(Debug, Clone, Default)]
struct LegEstimate {
    /// Bytes per second.
    rate: Option<f64>,
    base_delay: Option<Dur>,
    /// Queued bytes at the last report.
    queued: u64,
    last_report: Option<Time>,
    /// Bytes sent on the leg since the last report.
    sent_since: u64,
    /// The desired buffer size of the last report.
    desired: Option<u64>,
    /// The buffer capacity of the last report.
    buffer: Option<u64>,
    /// [`AdaptiveSignal::DeliveryCredit`]: the (SN, size) of each PDU sent on the leg and not
    /// yet confirmed, in the order sent, and their bytes.
    unconfirmed: VecDeque<(u32, u32)>,
    unconfirmed_bytes: u64,
}

impl LegEstimate {
    fn update(&mut self, now: Time, r: LegReport) {
        if r.interval > Dur::ZERO {
            let sample = r.delivered_bytes as f64 / r.interval.as_secs_f64();
            let busy = self.queued > 0 && r.queued_bytes > 0;
            self.rate = match self.rate {
                None if busy || r.delivered_bytes > 0 => Some(sample),
                None => None,
                Some(rate) if busy || sample > rate => Some(rate + (sample - rate) / 4.0),
                Some(rate) => Some(rate),
            };
        }
        if let Some(d) = r.min_delay {
            self.base_delay = Some(self.base_delay.map_or(d, |b| b.min(d)));
        }
        self.queued = r.queued_bytes;
        self.desired = r.desired_bytes;
        self.buffer = r.buffer_bytes;
        // Everything sent up to the confirmed SN is done with (an SN no longer listed was
        // confirmed before).
        if let Some(k) = r.confirmed_sn.and_then(|sn| self.unconfirmed.iter().position(|(s, _)| *s == sn)) {
            for (_, size) in self.unconfirmed.drain(..=k) {
                self.unconfirmed_bytes -= u64::from(size);
            }
        }
        self.last_report = Some(now);
        self.sent_since = 0;
    }

    /// The bytes the leg may still take by its last desired buffer size, if it gave one.
    fn credit(&self) -> Option<f64> {
        self.desired.map(|d| d as f64 - self.sent_since as f64)
    }

    /// The bytes the leg may still take beyond its confirmed SN, if it gave a buffer size.
    fn delivery_credit(&self) -> Option<f64> {
        self.buffer.map(|b| b as f64 - self.unconfirmed_bytes as f64)
    }

    /// Estimated bytes still queued at `now`.
    fn backlog(&self, now: Time) -> f64 {
        let drained = match (self.rate, self.last_report) {
            (Some(rate), Some(at)) => rate * now.since(at).as_secs_f64(),
            _ => 0.0,
        };
        ((self.queued + self.sent_since) as f64 - drained).max(0.0)
    }

    /// Estimated arrival delay of a PDU of `size` bytes sent at `now`, in seconds.
    fn arrival(&self, now: Time, size: u32) -> f64 {
        match self.rate {
            Some(rate) if rate > 0.0 => {
                self.base_delay.unwrap_or(Dur::ZERO).as_secs_f64() + (self.backlog(now) + f64::from(size)) / rate
            }
            _ => f64::INFINITY,
        }
    }
}

/// The transmitting PDCP entity of one split bearer.
#[derive(Debug, Clone)]
pub struct Transmitter {
    cfg: TransmitterConfig,
    header: u32,
    count_next: i64,
    /// The receiver's RX_DELIV as last reported (initially the first COUNT).
    rx_deliv: i64,
    /// PDUs routed so far: the position in a batch or pattern.
    routed: u64,
    /// A `Ratio` share as p/q.
    ratio: (u64, u64),
    legs: [LegEstimate; 2],
    /// Duplication activated (MAC CE, TS 38.321 §5.12); only the duplicate policy reads it.
    duplication: bool,
    /// Bytes pending for initial transmission: PDCP (outside this PDU) and each leg's RLC
    /// entity; only the threshold policy reads it.
    pending: PendingVolume,
    /// Per leg: whether it takes PDUs now (a released secondary cell group does not).
    available: [bool; 2],
    stats: TxStats,
}

/// The data volume a transmitting entity has pending for initial transmission (TS 38.323
/// §5.2.1, TS 38.322 §5.5): PDCP SDUs not yet submitted, and each leg's RLC entity.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PendingVolume {
    /// Bytes in PDCP not yet submitted to a leg (the PDU being routed left out).
    pub pdcp: u64,
    /// Bytes queued on each leg.
    pub legs: [u64; 2],
    /// Each leg's rate in bit/s as the UE sees its grants; 0 when unknown.
    pub rates_bps: [f64; 2],
}

impl Transmitter {
    /// An entity whose first COUNT is 0.
    ///
    /// The RAT and SN length must be a combination [`header_bytes`] accepts; callers validate
    /// configurations with it. Panics otherwise.
    pub fn new(cfg: TransmitterConfig) -> Transmitter {
        Transmitter::starting_at(cfg, 0)
    }

    /// An entity whose first COUNT is `count` (test vectors start near a wrap or near the end
    /// of the COUNT space); the receiver is taken to be at RX_DELIV = `count`. Panics as
    /// [`Transmitter::new`] does.
    pub fn starting_at(cfg: TransmitterConfig, count: i64) -> Transmitter {
        let header = header_bytes(cfg.rat, cfg.sn)
            .unwrap_or_else(|| panic!("{:?} PDCP has no {}-bit SN", cfg.rat, cfg.sn.bits()));
        debug_assert!(count >= 0, "COUNT is non-negative");
        let ratio = match cfg.policy {
            SplitPolicy::Ratio { share } => fraction(clamp_share(share)),
            _ => (1, 2),
        };
        Transmitter { cfg, header, count_next: count, rx_deliv: count, routed: 0, ratio, legs: Default::default(), duplication: true, pending: PendingVolume::default(), available: [true; 2], stats: TxStats::default() }
    }

    /// Data PDU header bytes for this entity's RAT and SN length.
    pub fn header_bytes(&self) -> u32 {
        self.header
    }

    /// Numbers an SDU of `sdu_size` bytes and routes it. Refused, with nothing consumed, when
    /// the COUNT space is exhausted or the receiver's window is full.
    pub fn send(&mut self, now: Time, sdu_size: u32) -> Result<Pdu, TxRefusal> {
        if self.count_next > MAX_COUNT {
            return Err(TxRefusal::CountExhausted);
        }
        if self.outstanding() >= self.cfg.sn.window() - 1 {
            self.stats.window_full += 1;
            return Err(TxRefusal::WindowFull);
        }
        let count = self.count_next;
        let size = sdu_size.saturating_add(self.header);
        // A leg that takes nothing now leaves every PDU to the other (TS 37.340: the master
        // node sends on its own leg while the secondary cell group is released).
        let legs = match self.available {
            [true, false] => Legs::One(0),
            [false, true] => Legs::One(1),
            _ => self.route(now, size),
        };
        self.count_next += 1;
        self.routed += 1;
        let on = match legs {
            Legs::One(leg) => [leg == 0, leg == 1],
            Legs::Both => [true, true],
        };
        let sn = count.rem_euclid(self.cfg.sn.modulus()) as u32;
        let credit = matches!(self.cfg.policy, SplitPolicy::Adaptive { signal: AdaptiveSignal::DeliveryCredit });
        for (leg, on) in on.into_iter().enumerate() {
            if on {
                self.stats.pdus[leg] += 1;
                self.stats.bytes[leg] += u64::from(size);
                let estimate = &mut self.legs[leg];
                estimate.sent_since += u64::from(size);
                if credit {
                    estimate.unconfirmed.push_back((sn, size));
                    estimate.unconfirmed_bytes += u64::from(size);
                }
            }
        }
        Ok(Pdu { count, sn, legs, size })
    }

    /// The receiver's RX_DELIV (from a status report, or the DDDS's highest delivered SN + 1).
    /// Values below the last one are stale and ignored; values beyond the next COUNT cannot
    /// come from a receiver of this entity and are capped there.
    pub fn on_delivered(&mut self, rx_deliv: i64) {
        if rx_deliv > self.rx_deliv {
            self.rx_deliv = rx_deliv.min(self.count_next);
        }
    }

    /// A flow-control report from `leg` (0 or 1) made at `now`; see [`SplitPolicy::Adaptive`]
    /// for what is kept. Reports are recorded under every policy, but only the adaptive one
    /// uses them. Any other leg number is a caller's bug (a debug assertion; ignored in
    /// release builds).
    pub fn on_leg_report(&mut self, now: Time, leg: usize, report: LegReport) {
        debug_assert!(leg < 2, "a split bearer has legs 0 and 1, not {leg}");
        if let Some(estimate) = self.legs.get_mut(leg) {
            estimate.update(now, report);
        }
    }

    /// A MAC CE activates or deactivates duplication (TS 38.323 §5.11, TS 38.321 §5.12). While
    /// deactivated the duplicate policy sends each PDU on leg 0 only; discarding the copies
    /// already queued on leg 1 is the caller's job (the legs are not this entity's).
    /// Under other policies the flag is kept but has no effect.
    pub fn set_duplication(&mut self, active: bool) {
        self.duplication = active;
    }

    /// Whether leg `leg` (0 or 1) takes PDUs now: while one leg does not, every PDU goes on
    /// the other, whatever the policy (its batch or pattern goes on counting). Any other leg
    /// number is ignored.
    pub fn set_leg_available(&mut self, leg: usize, available: bool) {
        if let Some(a) = self.available.get_mut(leg) {
            *a = available;
        }
    }

    /// The data volume pending for initial transmission right now, for the threshold
    /// policy's next decision (under other policies it is kept and not read).
    pub fn set_pending_volume(&mut self, pending: PendingVolume) {
        self.pending = pending;
    }

    /// Whether duplication is active (it matters under the duplicate policy only).
    pub fn duplication_active(&self) -> bool {
        self.duplication
    }

    /// PDUs numbered beyond the receiver's last known RX_DELIV.
    pub fn outstanding(&self) -> i64 {
        self.count_next - self.rx_deliv
    }

    /// What it sent so far.
    pub fn stats(&self) -> TxStats {
        self.stats
    }

    fn route(&self, now: Time, size: u32) -> Legs {
        let k = self.routed;
        let leg = match self.cfg.policy {
            SplitPolicy::Duplicate if self.duplication => return Legs::Both,
            SplitPolicy::Duplicate => 0,
            SplitPolicy::Alternate => (k % 2) as usize,
            SplitPolicy::Batch { size: batch, share } => {
                let batch = u64::from(batch.max(1));
                let first = (batch as f64 * clamp_share(share)).round() as u64;
                usize::from(k % batch >= first)
            }
            SplitPolicy::Ratio { .. } => {
                // round(n · p/q), halves up, is floor((2np + q) / 2q).
                let (p, q) = self.ratio;
                let on_leg0 = |n: u64| (2 * n * p + q) / (2 * q);
                usize::from(on_leg0(k + 1) == on_leg0(k))
            }
            SplitPolicy::Adaptive { signal } => {
                let [a, b] = &self.legs;
                if a.rate.is_none() || b.rate.is_none() {
                    (k % 2) as usize
                } else {
                    let (x, y) = match signal {
                        AdaptiveSignal::Delay => (a.arrival(now, size), b.arrival(now, size)),
                        AdaptiveSignal::Queue => (a.backlog(now), b.backlog(now)),
                        // The larger credit wins (compared as the smaller negated credit);
                        // unless both legs give a size, the backlogs decide.
                        AdaptiveSignal::DesiredBuffer => match (a.credit(), b.credit()) {
                            (Some(ca), Some(cb)) => (-ca, -cb),
                            _ => (a.backlog(now), b.backlog(now)),
                        },
                        AdaptiveSignal::DeliveryCredit => match (a.delivery_credit(), b.delivery_credit()) {
                            (Some(ca), Some(cb)) => (-ca, -cb),
                            _ => (a.backlog(now), b.backlog(now)),
                        },
                    };
                    usize::from(y < x)
                }
            }
            SplitPolicy::Threshold { primary, threshold } => {
                let primary = primary.min(1);
                let PendingVolume { pdcp, legs, rates_bps } = self.pending;
                let volume = pdcp.saturating_add(legs[0]).saturating_add(legs[1]).saturating_add(u64::from(size));
                let other = 1 - primary;
                let sooner = if rates_bps.iter().all(|r| *r > 0.0 && r.is_finite()) {
                    let wait = |leg: usize| (legs[leg] + u64::from(size)) as f64 * 8.0 / rates_bps[leg];
                    wait(other) < wait(primary)
                } else {
                    legs[other] < legs[primary]
                };
                if volume >= threshold && sooner {
                    other
                } else {
                    primary
                }
            }
        };
        Legs::One(leg)
    }
}

fn clamp_share(share: f64) -> f64 {
    if share.is_nan() {
        0.0
    } else {
        share.clamp(0.0, 1.0)
    }
}

/// The continued-fraction convergent p/q of `x` ∈ [0, 1] that equals it, or the last one
/// with q ≤ 2^20.
fn fraction(x: f64) -> (u64, u64) {
    const MAX_DEN: u64 = 1 << 20;
    // Convergents h/k from h₋₂/k₋₂ = 0/1 and h₋₁/k₋₁ = 1/0.
    let (mut h0, mut k0, mut h1, mut k1) = (0u64, 1u64, 1u64, 0u64);
    let mut r = x;
    loop {
        let a = r.floor();
        if a > MAX_DEN as f64 {
            break;
        }
        let a = a as u64;
        let (h2, k2) = (a * h1 + h0, a * k1 + k0);
        if k2 > MAX_DEN {
            break;
        }
        (h0, k0, h1, k1) = (h1, k1, h2, k2);
        let rest = r - a as f64;
        if h1 as f64 / k1 as f64 == x || rest <= 0.0 {
            break;
        }
        r = 1.0 / rest;
    }
    (h1, k1)
}
