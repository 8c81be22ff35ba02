//! Rate models: how fast a link serializes bytes over time.
//!
//! A [`RateModel`] is one of three shapes:
//!
//! * [`RateModel::Fixed`]: a constant rate; a packet of `B` bytes takes [`Rate::tx_time`]`(B)`.
//! * [`RateModel::Steps`]: a piecewise-constant rate (for example one step per second, as read
//!   from a bitrate CSV by [`crate::trace::parse_bitrate_csv`]), served as a fluid: a packet
//!   finishes when the integral of the rate since its start reaches its size in bits. Steps of
//!   zero rate are allowed; the packet then waits for the next non-zero step.
//! * [`RateModel::Opportunities`]: a Mahimahi packet-delivery trace (Mahimahi `traces/README`:
//!   "each line is a timestamp in milliseconds, each an opportunity to deliver one 1500-byte
//!   packet"), read by [`crate::trace::parse_mahimahi`]. Repeated timestamps are several
//!   opportunities in the same millisecond; the trace loops with the last timestamp as period.
//!
//! [`RateServer`] turns a model into finish times for the packets that the drop-tail queue
//! ([`crate::queue::DropTailLink`]) puts into service one after another. Arithmetic is exact
//! on integers: the fluid model counts *nanobits* (bit/s × ns, 10⁹ per bit) in `u128`, and
//! finish times are rounded up to the next nanosecond. Calls are O(1) amortised for
//! back-to-back packets (a cursor remembers the current step or opportunity) and O(log n)
//! after an idle gap of any length (whole periods are skipped by division, the position inside
//! the period is found by binary search).

use multiconn_core::{Dur, Rate, Time};

/// Bytes one Mahimahi delivery opportunity can carry.
pub const OPPORTUNITY_BYTES: u32 = 1500;
/// Bits one Mahimahi delivery opportunity can carry.
pub const OPPORTUNITY_BITS: u64 = OPPORTUNITY_BYTES as u64 * 8;

const NANOS_PER_MS: u64 = 1_000_000;
/// Nanobits (bit/s × ns) per bit.
const NANOBITS_PER_BIT: u128 = 1_000_000_000;

/// A piecewise-constant rate: `steps[i] = (offset, rate)` holds from `offset` until the next
/// step; the first offset is zero; the pattern repeats every `period` when looping.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTrace {
    /// `(offset, rate)`: the rate from that offset until the next step.
    pub steps: Vec<(Dur, Rate)>,
    /// The length of one repetition.
    pub period: Dur,
}

/// Mahimahi delivery opportunities: each entry is a millisecond offset at which up to 1500
/// bytes may leave; the pattern repeats every `period_ms`.
#[derive(Debug, Clone, PartialEq)]
pub struct OpportunityTrace {
    /// Opportunity offsets, in milliseconds, non-decreasing (repeats allow several).
    pub times_ms: Vec<u64>,
    /// The length of one repetition, in milliseconds.
    pub period_ms: u64,
}

/// How fast a link serializes packets.
#[derive(Debug, Clone, PartialEq)]
pub enum RateModel {
    /// A constant rate.
    Fixed(Rate),
    /// A piecewise-constant rate (bitrate traces).
    Steps(StepTrace),
    /// Delivery opportunities (Mahimahi traces).
    Opportunities(OpportunityTrace),
}

impl RateModel {
    /// Average rate in bit/s over one period (the fixed rate for `Fixed`).
    pub fn mean_bps(&self) -> f64 {
        Table::new(self).mean_bps()
    }
    /// Bits the link could carry in [from, to) if always busy.
    ///
    /// The cost does not depend on the window length, but trace models are first prepared in
    /// O(n) (copied, sorted, prefix sums); repeated queries should go through
    /// [`RateServer::capacity_bits`], which keeps the prepared table and answers in O(log n).
    pub fn capacity_bits(&self, from: Time, to: Time) -> f64 {
        Table::new(self).capacity_bits(from, to)
    }

    /// The shortest time a packet of `bytes` can take to serialize: exact for `Fixed` (what
    /// [`RateServer::finish_time`] adds), at the highest step's rate for `Steps` (rounded
    /// down), zero for `Opportunities` (a small packet may leave on an opportunity that is due
    /// at once, or on the credit left by the previous packet's). `Dur::MAX` when the model
    /// never carries anything.
    pub fn min_tx_time(&self, bytes: u32) -> Dur {
        match self {
            RateModel::Fixed(rate) => rate.tx_time(u64::from(bytes)),
            RateModel::Steps(trace) => match trace.steps.iter().map(|&(_, r)| r.0).max() {
                Some(peak) if peak > 0 => Dur((u128::from(bytes) * 8 * NANOBITS_PER_BIT / u128::from(peak)).min(u128::from(u64::MAX)) as u64),
                _ => Dur::MAX,
            },
            RateModel::Opportunities(_) => Dur::ZERO,
        }
    }
}

/// Serializes packets one after another according to a [`RateModel`].
///
/// Build it with [`RateServer::new`]; `model` is kept for inspection, changing it afterwards
/// has no effect on the precomputed tables.
#[derive(Debug, Clone)]
pub struct RateServer {
    /// The model the server was built from.
    pub model: RateModel,
    table: Table,
    /// Index of the step where the last computation ended (a hint, always in range).
    step_cursor: usize,
    /// The opportunity that carried the last byte of the previous packet and the bytes it can
    /// still carry.
    credit: Option<Credit>,
}

#[derive(Debug, Clone, Copy)]
struct Credit {
    opportunity: u128,
    bytes_left: u64,
}

impl RateServer {
    /// A server of `model`, its tables precomputed.
    pub fn new(model: RateModel) -> RateServer {
        let table = Table::new(&model);
        RateServer { model, table, step_cursor: 0, credit: None }
    }
    /// A packet of `bytes` starts service at `start` (the link is idle then): when does its
    /// last bit leave? Calls come with non-decreasing `start`.
    ///
    /// A link that can never carry the packet (zero rate, empty trace) answers [`Time::MAX`].
    pub fn finish_time(&mut self, start: Time, bytes: u32) -> Time {
        if bytes == 0 {
            return start;
        }
        match &self.table {
            Table::Fixed(rate) => start + rate.tx_time(bytes as u64),
            Table::Steps(steps) => steps.finish_time(start, bytes, &mut self.step_cursor),
            Table::Opportunities(opps) => opps.finish_time(start, bytes, &mut self.credit),
            Table::Nothing => Time::MAX,
        }
    }
    /// Forgets the leftover credit of the last opportunity used, as when the packets in the
    /// link were flushed: later packets do not inherit anything from earlier ones.
    pub fn reset(&mut self) {
        self.credit = None;
    }
    /// Average rate in bit/s over one period.
    pub fn mean_bps(&self) -> f64 {
        self.table.mean_bps()
    }
    /// Bits the link could carry in [from, to) if always busy, in O(log n).
    pub fn capacity_bits(&self, from: Time, to: Time) -> f64 {
        self.table.capacity_bits(from, to)
    }
    /// When a block of `bits` whose transmission starts at `start` on the idle link has
    /// left it, the rate following the model as it varies (a message's ideal transmission):
    /// for `Fixed` `start + bits / rate` in seconds as a float (rounded to the nanosecond),
    /// for `Steps` the instant the rate's integral from `start` reaches `bits` (rounded up to
    /// the nanosecond), for `Opportunities` the opportunity that carries its last byte, its
    /// bytes filling whole 1500-byte opportunities from the first at or after `start`.
    /// `None` when the link never carries them (a trace of zero rate). Does not touch the
    /// server's state; O(log n).
    pub fn transmission_end(&self, start: Time, bits: u64) -> Option<Time> {
        self.table.transmission_end(start, bits)
    }
}

/// A model prepared for fast queries.
#[derive(Debug, Clone)]
enum Table {
    Fixed(Rate),
    Steps(StepTable),
    Opportunities(OpportunityTable),
    /// A trace that never carries anything (no steps, no opportunities, zero period).
    Nothing,
}

impl Table {
    fn new(model: &RateModel) -> Table {
        match model {
            RateModel::Fixed(rate) => Table::Fixed(*rate),
            RateModel::Steps(trace) => StepTable::new(trace).map_or(Table::Nothing, Table::Steps),
            RateModel::Opportunities(trace) => OpportunityTable::new(trace).map_or(Table::Nothing, Table::Opportunities),
        }
    }

    fn mean_bps(&self) -> f64 {
        match self {
            Table::Fixed(rate) => rate.bps() as f64,
            Table::Steps(steps) => steps.mean_bps(),
            Table::Opportunities(opps) => opps.mean_bps(),
            Table::Nothing => 0.0,
        }
    }

    fn transmission_end(&self, start: Time, bits: u64) -> Option<Time> {
        if bits == 0 {
            return Some(start);
        }
        match self {
            Table::Fixed(rate) if rate.bps() == 0 => None,
            Table::Fixed(rate) => Some(start + Dur::from_secs_f64(bits as f64 / rate.bps() as f64)),
            Table::Steps(steps) => {
                let mut cursor = 0;
                let target = steps.work_until(start.as_nanos(), &mut cursor).saturating_add(u128::from(bits) * NANOBITS_PER_BIT);
                steps.time_reaching(target, &mut cursor).map(clamp_to_time)
            }
            Table::Opportunities(opps) => {
                let opportunities = bits.div_ceil(8).div_ceil(u64::from(OPPORTUNITY_BYTES));
                let last = opps.count_before(start) + u128::from(opportunities) - 1;
                Some(clamp_to_time(opps.time_ns_of(last)))
            }
            Table::Nothing => None,
        }
    }

    fn capacity_bits(&self, from: Time, to: Time) -> f64 {
        if to <= from {
            return 0.0;
        }
        match self {
            Table::Fixed(rate) => rate.bps() as f64 * (to - from).as_secs_f64(),
            Table::Steps(steps) => steps.capacity_bits(from, to),
            Table::Opportunities(opps) => opps.capacity_bits(from, to),
            Table::Nothing => 0.0,
        }
    }
}

fn clamp_to_time(ns: u128) -> Time {
    Time(u64::try_from(ns).unwrap_or(u64::MAX))
}

/// A step trace with prefix sums of the work (in nanobits) done since the start of the period.
#[derive(Debug, Clone)]
struct StepTable {
    /// Start of each step within the period, in ns; strictly increasing, the first is 0.
    offsets: Vec<u64>,
    rates_bps: Vec<u64>,
    /// `work_before[i]`: nanobits carried in the period before step `i`; one entry more than
    /// there are steps, the last being the work of a whole period.
    work_before: Vec<u128>,
    period_ns: u64,
}

impl StepTable {
    /// Sorts the steps, keeps the last of steps sharing an offset, drops steps at or beyond the
    /// period and fills a missing start with a zero rate. `None` for a zero period or no steps.
    fn new(trace: &StepTrace) -> Option<StepTable> {
        let period_ns = trace.period.as_nanos();
        let mut steps: Vec<(u64, u64)> = trace
            .steps
            .iter()
            .map(|(offset, rate)| (offset.as_nanos(), rate.bps()))
            .filter(|&(offset, _)| offset < period_ns)
            .collect();
        if steps.is_empty() {
            return None;
        }
        steps.sort_by_key(|&(offset, _)| offset);
        let mut offsets = Vec::with_capacity(steps.len() + 1);
        let mut rates_bps = Vec::with_capacity(steps.len() + 1);
        if steps[0].0 > 0 {
            offsets.push(0);
            rates_bps.push(0);
        }
        for (offset, rate) in steps {
            if offsets.last() == Some(&offset) {
                *rates_bps.last_mut().expect("offsets and rates have equal lengths") = rate;
            } else {
                offsets.push(offset);
                rates_bps.push(rate);
            }
        }
        let mut work_before = Vec::with_capacity(offsets.len() + 1);
        let mut work = 0u128;
        work_before.push(0);
        for (i, &rate) in rates_bps.iter().enumerate() {
            let end = offsets.get(i + 1).copied().unwrap_or(period_ns);
            work = work.saturating_add(rate as u128 * (end - offsets[i]) as u128);
            work_before.push(work);
        }
        Some(StepTable { offsets, rates_bps, work_before, period_ns })
    }

    fn work_per_period(&self) -> u128 {
        *self.work_before.last().expect("at least one step")
    }

    fn step_end(&self, i: usize) -> u64 {
        self.offsets.get(i + 1).copied().unwrap_or(self.period_ns)
    }

    /// The step holding `offset` (< period); tries the cursor and its successor first.
    fn step_containing(&self, offset: u64, cursor: usize) -> usize {
        for i in [cursor, cursor + 1] {
            if i < self.offsets.len() && self.offsets[i] <= offset && offset < self.step_end(i) {
                return i;
            }
        }
        self.offsets.partition_point(|&o| o <= offset) - 1
    }

    /// Nanobits carried in [0, t) by an always-busy link.
    fn work_until(&self, t: u64, cursor: &mut usize) -> u128 {
        let periods = t / self.period_ns;
        let offset = t % self.period_ns;
        let i = self.step_containing(offset, *cursor);
        *cursor = i;
        let within = self.work_before[i] + self.rates_bps[i] as u128 * (offset - self.offsets[i]) as u128;
        (periods as u128).saturating_mul(self.work_per_period()).saturating_add(within)
    }

    /// The earliest instant (ns) by which an always-busy link has carried `target` nanobits.
    fn time_reaching(&self, target: u128, cursor: &mut usize) -> Option<u128> {
        let per_period = self.work_per_period();
        if target == 0 {
            return Some(0);
        }
        if per_period == 0 {
            return None;
        }
        // Whole periods first, leaving 0 < rest <= per_period to find inside one period.
        let periods = (target - 1) / per_period;
        let rest = target - periods * per_period;
        let i = self.step_reaching(rest, *cursor);
        *cursor = i;
        // work_before[i] < rest <= work_before[i + 1], so step i has a non-zero rate.
        let missing = rest - self.work_before[i];
        let within = self.offsets[i] as u128 + missing.div_ceil(self.rates_bps[i] as u128);
        Some(periods.saturating_mul(self.period_ns as u128).saturating_add(within))
    }

    /// The step during which the work done since the period start reaches `rest` (> 0).
    fn step_reaching(&self, rest: u128, cursor: usize) -> usize {
        for i in [cursor, cursor + 1] {
            if i < self.offsets.len() && self.work_before[i] < rest && rest <= self.work_before[i + 1] {
                return i;
            }
        }
        self.work_before[1..].partition_point(|&w| w < rest)
    }

    fn finish_time(&self, start: Time, bytes: u32, cursor: &mut usize) -> Time {
        let needed = bytes as u128 * 8 * NANOBITS_PER_BIT;
        let target = self.work_until(start.as_nanos(), cursor).saturating_add(needed);
        self.time_reaching(target, cursor).map_or(Time::MAX, clamp_to_time)
    }

    fn mean_bps(&self) -> f64 {
        self.work_per_period() as f64 / self.period_ns as f64
    }

    fn capacity_bits(&self, from: Time, to: Time) -> f64 {
        let mut cursor = 0;
        let before = self.work_until(from.as_nanos(), &mut cursor);
        let after = self.work_until(to.as_nanos(), &mut cursor);
        after.saturating_sub(before) as f64 / NANOBITS_PER_BIT as f64
    }
}

/// A Mahimahi trace with sorted timestamps and a positive period. Opportunities are numbered
/// globally in time order: number `g` is entry `g % n` of loop `g / n`.
#[derive(Debug, Clone)]
struct OpportunityTable {
    times_ms: Vec<u64>,
    period_ms: u64,
}

impl OpportunityTable {
    /// Sorts the timestamps and stretches the period to the last one if it is shorter.
    /// `None` when there is nothing to loop (no timestamps, or all at 0 with a zero period).
    fn new(trace: &OpportunityTrace) -> Option<OpportunityTable> {
        let mut times_ms = trace.times_ms.clone();
        times_ms.sort_unstable();
        let last = *times_ms.last()?;
        let period_ms = trace.period_ms.max(last);
        (period_ms > 0).then_some(OpportunityTable { times_ms, period_ms })
    }

    fn count(&self) -> u128 {
        self.times_ms.len() as u128
    }

    fn time_ns_of(&self, opportunity: u128) -> u128 {
        let loops = opportunity / self.count();
        let entry = (opportunity % self.count()) as usize;
        let ms = loops.saturating_mul(self.period_ms as u128).saturating_add(self.times_ms[entry] as u128);
        ms.saturating_mul(NANOS_PER_MS as u128)
    }

    /// Number of opportunities strictly before `t`, i.e. the index of the first at or after it.
    fn count_before(&self, t: Time) -> u128 {
        // Opportunities fall on whole milliseconds: those before t are at ms 0 ..= ms_limit - 1.
        let ms_limit = t.as_nanos().div_ceil(NANOS_PER_MS);
        if ms_limit == 0 {
            return 0;
        }
        // Loop k covers [k·P, k·P + P]; every loop before `loops` lies entirely before the limit,
        // loop `loops` contributes its entries at offsets <= last_ms, later loops nothing.
        let loops = (ms_limit - 1) / self.period_ms;
        let last_ms = (ms_limit - 1) % self.period_ms;
        let in_last_loop = self.times_ms.partition_point(|&ms| ms <= last_ms) as u128;
        loops as u128 * self.count() + in_last_loop
    }

    /// The first opportunity at or after `start`, given that opportunity `hint - 1` is before
    /// `start`: `hint` itself when it is not, else a binary search (after an idle gap).
    fn first_at_or_after(&self, start: Time, hint: u128) -> u128 {
        if self.time_ns_of(hint) >= start.as_nanos() as u128 {
            hint
        } else {
            self.count_before(start)
        }
    }

    /// Packet bytes first use what the previous packet left of its last opportunity (if that
    /// opportunity is not before `start`), then fresh opportunities at or after `start`.
    fn finish_time(&self, start: Time, bytes: u32, credit: &mut Option<Credit>) -> Time {
        let mut needed = bytes as u64;
        let first_fresh = match *credit {
            Some(previous) if self.time_ns_of(previous.opportunity) >= start.as_nanos() as u128 => {
                if needed <= previous.bytes_left {
                    *credit = Some(Credit { opportunity: previous.opportunity, bytes_left: previous.bytes_left - needed });
                    return clamp_to_time(self.time_ns_of(previous.opportunity));
                }
                needed -= previous.bytes_left;
                previous.opportunity + 1
            }
            Some(previous) => self.first_at_or_after(start, previous.opportunity + 1),
            None => self.count_before(start),
        };
        let opportunities = needed.div_ceil(OPPORTUNITY_BYTES as u64);
        let last = first_fresh + opportunities as u128 - 1;
        *credit = Some(Credit { opportunity: last, bytes_left: opportunities * OPPORTUNITY_BYTES as u64 - needed });
        clamp_to_time(self.time_ns_of(last))
    }

    fn mean_bps(&self) -> f64 {
        self.count() as f64 * OPPORTUNITY_BITS as f64 * 1000.0 / self.period_ms as f64
    }

    fn capacity_bits(&self, from: Time, to: Time) -> f64 {
        let opportunities = self.count_before(to) - self.count_before(from);
        opportunities as f64 * OPPORTUNITY_BITS as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(steps: &[(u64, u64)], period_ms: u64) -> RateModel {
        RateModel::Steps(StepTrace {
            steps: steps.iter().map(|&(ms, bps)| (Dur::from_millis(ms), Rate(bps))).collect(),
            period: Dur::from_millis(period_ms),
        })
    }

    #[test]
    fn opportunity_count_handles_loop_boundaries() {
        let table = OpportunityTable::new(&OpportunityTrace { times_ms: vec![0, 2, 2, 4], period_ms: 4 }).unwrap();
        // Loop 0: 0, 2, 2, 4; loop 1: 4, 6, 6, 8; loop 2: 8, ...
        let ms = |m: u64| Time(m * NANOS_PER_MS);
        assert_eq!(table.count_before(ms(0)), 0);
        assert_eq!(table.count_before(Time(1)), 1);
        assert_eq!(table.count_before(ms(2)), 1);
        assert_eq!(table.count_before(ms(3)), 3);
        assert_eq!(table.count_before(ms(4)), 3);
        assert_eq!(table.count_before(Time(4 * NANOS_PER_MS + 1)), 5);
        assert_eq!(table.count_before(ms(8)), 7);
        for g in 0..40u128 {
            let t = table.time_ns_of(g);
            assert!(table.count_before(Time(t as u64)) <= g);
            assert!(table.count_before(Time(t as u64 + 1)) > g);
        }
    }

    #[test]
    fn a_block_is_carried_at_the_rate_as_it_varies() {
        // 8 Mbit/s for 1 s, 0 for 1 s, 80 kbit/s for 2 s: period 4 s.
        let server = RateServer::new(steps(&[(0, 8_000_000), (1000, 0), (2000, 80_000)], 4000));
        let at = |ms: u64| Time(ms * NANOS_PER_MS);
        // 1 Mbit from 0: 125 ms.
        assert_eq!(server.transmission_end(at(0), 1_000_000), Some(at(125)));
        // 8 kbit from 500 ms: 1 ms.
        assert_eq!(server.transmission_end(at(500), 8_000), Some(at(501)));
        // 4.16 Mbit from 500 ms: 4 Mbit by 1 s at 8 Mbit/s, nothing for 1 s, then the last
        // 160 kbit at 80 kbit/s from 2 s to 4 s.
        assert_eq!(server.transmission_end(at(500), 4_000_000 + 160_000), Some(at(4000)));
        // 8 kbit sent during the zero-rate second: waits for 2 s, then 100 ms at 80 kbit/s.
        assert_eq!(server.transmission_end(at(1500), 8_000), Some(at(2100)));
        assert_eq!(server.transmission_end(at(1500), 0), Some(at(1500)));
        // A fixed rate: bits / rate.
        let fixed = RateServer::new(RateModel::Fixed(Rate(10_000_000)));
        assert_eq!(fixed.transmission_end(at(7), 9600), Some(Time(7 * NANOS_PER_MS + 960_000)));
        // Opportunities from the first at or after the start (1 ns: those at 2, 2, 4 ms, ...):
        // 3000 bytes need two, 3001 three.
        let opps = RateServer::new(RateModel::Opportunities(OpportunityTrace { times_ms: vec![0, 2, 2, 4], period_ms: 4 }));
        assert_eq!(opps.transmission_end(Time(1), 3000 * 8), Some(at(2)));
        assert_eq!(opps.transmission_end(Time(1), 3001 * 8), Some(at(4)));
        // Never carried.
        assert_eq!(RateServer::new(steps(&[(0, 0)], 1000)).transmission_end(at(0), 1), None);
    }

    #[test]
    fn malformed_step_traces_are_normalised() {
        // Unsorted, a late first step (zero rate before it) and a step beyond the period.
        let model = steps(&[(500, 2000), (250, 1000), (2000, 5)], 1000);
        assert_eq!(model.mean_bps(), 0.25 * 1000.0 + 0.5 * 2000.0);
        assert_eq!(steps(&[], 1000).mean_bps(), 0.0);
        let mut server = RateServer::new(steps(&[(0, 1000)], 0));
        assert_eq!(server.finish_time(Time::ZERO, 1), Time::MAX);
    }
}
