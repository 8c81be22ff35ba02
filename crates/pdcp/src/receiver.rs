//! The receiving PDCP entity: TS 38.323 §5.2.2 reordering (NR), which also serves LTE split
//! bearers (TS 36.323 §5.1.2.1.4): both accept the same window and start and stop the timer
//! on equivalent conditions, so an LTE receiver is this core with `RX_DELIV =
//! Last_Submitted_PDCP_RX_SN + 1`.
//!
//! State variables as in §7.1: `RX_NEXT` (highest COUNT received + 1), `RX_DELIV` (first COUNT
//! not yet delivered and still awaited), `RX_REORD` (RX_NEXT when t-Reordering started).
//! COUNTs are kept as signed 64-bit numbers so that `HFN(RX_DELIV) - 1` below zero reads as
//! "older than anything" (the signedness pitfall of pdcp-dc.md §1.3). Stored SDUs live in a
//! ring indexed by `COUNT - RX_DELIV`, which the window bounds to `Window_Size` slots.
//!
//! t-Reordering: `None` is infinity (never armed); zero expires synchronously inside
//! `receive`, so no zero-length timer is ever left pending. With `reordering = false` the
//! entity delivers every new SDU at once (the switch the seed study turned off), still
//! discarding duplicates and late copies, as outOfOrderDelivery does (§5.2.2.1).
//!
//! Upper-layer procedures: reconfiguring t-Reordering while it runs sets RX_REORD = RX_NEXT
//! and restarts it with the new value (§5.2.2.3); re-establishment (§5.1.2) of a UM bearer
//! delivers everything stored in ascending COUNT order and resets the state to 0, while an AM
//! bearer keeps its state.
//!
//! COUNT is 32 bits; the transmitter stops at 2^32 − 1 (the bearer must be re-keyed), so in
//! valid use no COUNT beyond it is ever derived.

use std::collections::VecDeque;

use multiconn_core::{Dur, Time};

/// PDCP sequence-number length in bits: NR 12 or 18; LTE 7, 12, 15 or 18.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnLength(u8);

impl SnLength {
    /// Every SN length some RAT defines, in bits.
    pub const ALLOWED: [u8; 4] = [7, 12, 15, 18];

    /// `bits` as an SN length, if it is one of [`SnLength::ALLOWED`].
    pub fn new(bits: u8) -> Option<SnLength> {
        Self::ALLOWED.contains(&bits).then_some(SnLength(bits))
    }
    /// The length in bits.
    pub fn bits(self) -> u8 {
        self.0
    }
    /// 2^bits: the SN space.
    pub fn modulus(self) -> i64 {
        1 << self.0
    }
    /// Window_Size = 2^(bits - 1).
    pub fn window(self) -> i64 {
        1 << (self.0 - 1)
    }
}

/// A receiving PDCP entity's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReceiverConfig {
    /// The SN length of the PDUs it receives.
    pub sn: SnLength,
    /// t-Reordering; `None` is infinity.
    pub t_reordering: Option<Dur>,
    /// Deliver in COUNT order (the default); `false` delivers on arrival.
    pub reordering: bool,
}

/// The RLC mode of the bearer, which decides what re-establishment does (§5.1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BearerMode {
    /// Unacknowledged: stored SDUs go up and the state resets.
    Um,
    /// Acknowledged: the state is kept (the transmitter retransmits what was not confirmed).
    Am,
}

/// What became of a received PDU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RxOutcome {
    /// Accepted; `delivered` SDUs (this one and any it released) went up at once.
    Accepted {
        /// SDUs passed up at once: this one and those it released (0 while it waits).
        delivered: usize,
    },
    /// COUNT below RX_DELIV: already delivered or given up.
    Late,
    /// Already received (duplication, or a retransmission).
    Duplicate,
}

/// What a receiving entity did over its life.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RxStats {
    /// SDUs passed up.
    pub delivered: u64,
    /// PDUs discarded because their COUNT was below RX_DELIV.
    pub late_discards: u64,
    /// PDUs discarded because their COUNT had already been received.
    pub duplicate_discards: u64,
    /// Times t-Reordering expired.
    pub timer_expiries: u64,
    /// COUNTs skipped at t-Reordering expiry (never delivered).
    pub given_up: u64,
}

enum Slot<T> {
    Empty,
    Held(T),
    /// Received and already passed up (reordering off).
    Passed,
}

/// A receiving PDCP entity (TS 38.323 §5.2.2): turns SNs into COUNTs, holds out-of-order
/// SDUs of type `T` and passes them up in COUNT order, giving up on gaps when t-Reordering
/// expires.
pub struct Receiver<T> {
    cfg: ReceiverConfig,
    rx_next: i64,
    rx_deliv: i64,
    rx_reord: i64,
    /// When t-Reordering expires, while it runs.
    timer: Option<Time>,
    /// Slot i holds COUNT rx_deliv + i.
    ring: VecDeque<Slot<T>>,
    /// Slots of `ring` that are `Held`.
    held: usize,
    stats: RxStats,
}

impl<T> Receiver<T> {
    /// A receiver expecting COUNT 0 first.
    pub fn new(cfg: ReceiverConfig) -> Receiver<T> {
        Receiver::starting_at(cfg, 0)
    }

    /// A receiver whose RX_DELIV = RX_NEXT = `count` (test vectors start mid-sequence).
    pub fn starting_at(cfg: ReceiverConfig, count: i64) -> Receiver<T> {
        Receiver { cfg, rx_next: count, rx_deliv: count, rx_reord: count, timer: None, ring: VecDeque::new(), held: 0, stats: RxStats::default() }
    }

    /// RX_NEXT: the COUNT after the highest one received.
    pub fn rx_next(&self) -> i64 {
        self.rx_next
    }
    /// RX_DELIV: the first COUNT not yet passed up (nor given up).
    pub fn rx_deliv(&self) -> i64 {
        self.rx_deliv
    }
    /// RX_REORD while t-Reordering runs.
    pub fn rx_reord(&self) -> Option<i64> {
        self.timer.map(|_| self.rx_reord)
    }
    /// What it did so far.
    pub fn stats(&self) -> RxStats {
        self.stats
    }
    /// SDUs stored in the reordering buffer now, waiting for a gap below them to fill.
    pub fn buffered(&self) -> usize {
        self.held
    }

    /// RCVD_COUNT for a received SN (§5.2.2.1), anchored on RX_DELIV; may be negative.
    pub fn count_of(&self, sn: u32) -> i64 {
        let m = self.cfg.sn.modulus();
        let w = self.cfg.sn.window();
        let sn = i64::from(sn) & (m - 1);
        let deliv_sn = self.rx_deliv.rem_euclid(m);
        let deliv_hfn = self.rx_deliv.div_euclid(m);
        let hfn = if sn < deliv_sn - w {
            deliv_hfn + 1
        } else if sn >= deliv_sn + w {
            deliv_hfn - 1
        } else {
            deliv_hfn
        };
        hfn * m + sn
    }

    /// A PDU with sequence number `sn` arrived at `now`; what goes up is appended to `out`
    /// as (COUNT, SDU) in delivery order.
    pub fn receive(&mut self, now: Time, sn: u32, sdu: T, out: &mut Vec<(i64, T)>) -> RxOutcome {
        let count = self.count_of(sn);
        if count < self.rx_deliv {
            self.stats.late_discards += 1;
            return RxOutcome::Late;
        }
        let index = (count - self.rx_deliv) as usize;
        if self.ring.len() <= index {
            self.ring.resize_with(index + 1, || Slot::Empty);
        }
        if !matches!(self.ring[index], Slot::Empty) {
            self.stats.duplicate_discards += 1;
            return RxOutcome::Duplicate;
        }
        let before = out.len();
        if self.cfg.reordering {
            self.ring[index] = Slot::Held(sdu);
            self.held += 1;
        } else {
            self.ring[index] = Slot::Passed;
            out.push((count, sdu));
        }
        if count >= self.rx_next {
            self.rx_next = count + 1;
        }
        if count == self.rx_deliv {
            self.deliver_consecutive(out);
        }
        if self.timer.is_some() && self.rx_deliv >= self.rx_reord {
            self.timer = None;
        }
        if self.timer.is_none() && self.rx_deliv < self.rx_next {
            self.start_timer(now, out);
        }
        let delivered = out.len() - before;
        self.stats.delivered += delivered as u64;
        RxOutcome::Accepted { delivered }
    }

    /// When t-Reordering expires, if it runs.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.timer
    }

    /// Runs t-Reordering's expiry if it is due at `now` (§5.2.2.2).
    pub fn handle_timeout(&mut self, now: Time, out: &mut Vec<(i64, T)>) {
        if self.timer.is_some_and(|t| t <= now) {
            let before = out.len();
            self.timer = None;
            self.expire(now, out);
            self.stats.delivered += (out.len() - before) as u64;
        }
    }

    /// t-Reordering reconfigured to `t` by upper layers at `now` (§5.2.2.3). If the timer runs,
    /// RX_REORD = RX_NEXT and it restarts with the new value (zero expires at once, appending
    /// what that releases to `out`; infinity stops it). If it does not run, the value is only
    /// stored for the next start. With infinity the timer runs, without ever expiring,
    /// whenever a gap is awaited (RX_DELIV < RX_NEXT), so a finite value then starts it.
    pub fn reconfigure_t_reordering(&mut self, now: Time, t: Option<Dur>, out: &mut Vec<(i64, T)>) {
        let running = self.timer.is_some() || (self.cfg.t_reordering.is_none() && self.rx_deliv < self.rx_next);
        self.cfg.t_reordering = t;
        if running {
            let before = out.len();
            self.timer = None;
            self.start_timer(now, out);
            self.stats.delivered += (out.len() - before) as u64;
        }
    }

    /// Re-establishment of the PDCP entity (§5.1.2). UM: t-Reordering stops, every stored SDU
    /// goes up in ascending COUNT order (appended to `out`, gaps skipped) and RX_NEXT =
    /// RX_DELIV = 0. AM: nothing changes; stored SDUs wait for the retransmissions and the
    /// timer keeps running.
    pub fn reestablish(&mut self, mode: BearerMode, out: &mut Vec<(i64, T)>) {
        match mode {
            BearerMode::Am => {}
            BearerMode::Um => {
                let before = out.len();
                self.timer = None;
                for (i, slot) in self.ring.drain(..).enumerate() {
                    if let Slot::Held(sdu) = slot {
                        out.push((self.rx_deliv + i as i64, sdu));
                    }
                }
                self.held = 0;
                self.rx_next = 0;
                self.rx_deliv = 0;
                self.rx_reord = 0;
                self.stats.delivered += (out.len() - before) as u64;
            }
        }
    }

    fn start_timer(&mut self, now: Time, out: &mut Vec<(i64, T)>) {
        let Some(t) = self.cfg.t_reordering else { return };
        self.rx_reord = self.rx_next;
        if t == Dur::ZERO {
            // Expire at once; expiry may restart the timer, which expires at once again
            // until nothing below RX_NEXT is awaited.
            self.expire(now, out);
        } else {
            self.timer = Some(now + t);
        }
    }

    fn expire(&mut self, now: Time, out: &mut Vec<(i64, T)>) {
        self.stats.timer_expiries += 1;
        while self.rx_deliv < self.rx_reord {
            match self.ring.pop_front() {
                Some(Slot::Held(sdu)) => {
                    self.held -= 1;
                    out.push((self.rx_deliv, sdu));
                }
                Some(Slot::Passed) => {}
                Some(Slot::Empty) | None => self.stats.given_up += 1,
            }
            self.rx_deliv += 1;
        }
        self.deliver_consecutive(out);
        if self.rx_deliv < self.rx_next {
            self.start_timer(now, out);
        }
    }

    /// Delivers stored SDUs from RX_DELIV up to the first gap and moves RX_DELIV there.
    fn deliver_consecutive(&mut self, out: &mut Vec<(i64, T)>) {
        while let Some(front) = self.ring.front() {
            if matches!(front, Slot::Empty) {
                break;
            }
            if let Some(Slot::Held(sdu)) = self.ring.pop_front() {
                self.held -= 1;
                out.push((self.rx_deliv, sdu));
            }
            self.rx_deliv += 1;
        }
    }
}
