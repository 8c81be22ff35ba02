//! Exact finish times of the rate servers: fixed rate, fluid step traces and Mahimahi
//! delivery opportunities.

use multiconn_core::{Dur, Rate, Time};
use multiconn_link::rate::{OpportunityTrace, RateModel, RateServer, StepTrace};
use proptest::prelude::*;

fn ms(m: u64) -> Time {
    Time(m * 1_000_000)
}

fn us(u: u64) -> Time {
    Time(u * 1_000)
}

/// Steps given as (offset in µs, rate in bit/s).
fn steps_us(steps: &[(u64, u64)], period_us: u64) -> RateModel {
    RateModel::Steps(StepTrace {
        steps: steps.iter().map(|&(u, bps)| (Dur::from_micros(u), Rate(bps))).collect(),
        period: Dur::from_micros(period_us),
    })
}

fn opportunities(times_ms: &[u64]) -> RateServer {
    let period_ms = *times_ms.last().unwrap();
    RateServer::new(RateModel::Opportunities(OpportunityTrace { times_ms: times_ms.to_vec(), period_ms }))
}

/// Serves `sizes` back to back from `start`: each packet starts when the previous finishes.
fn back_to_back(server: &mut RateServer, start: Time, sizes: &[u32]) -> Vec<Time> {
    let mut now = start;
    sizes
        .iter()
        .map(|&size| {
            now = server.finish_time(now, size);
            now
        })
        .collect()
}

#[test]
fn fixed_rate_serializes_1500_bytes_at_40_mbps_in_300_us() {
    let mut server = RateServer::new(RateModel::Fixed(Rate::from_mbps(40.0)));
    assert_eq!(back_to_back(&mut server, Time::ZERO, &[1500, 1500, 1500]), [us(300), us(600), us(900)]);
    assert_eq!(server.finish_time(ms(5), 100), Time(5_000_000 + 20_000));
    assert_eq!(server.mean_bps(), 40e6);
    assert_eq!(server.capacity_bits(ms(1), ms(2)), 40_000.0);
}

#[test]
fn fixed_rate_rounds_finish_times_up_to_the_nanosecond() {
    let mut server = RateServer::new(RateModel::Fixed(Rate(3)));
    assert_eq!(server.finish_time(Time::ZERO, 1), Time(2_666_666_667));
    let mut stopped = RateServer::new(RateModel::Fixed(Rate(0)));
    assert_eq!(stopped.finish_time(Time::ZERO, 1), Time::MAX);
}

/// 8 Mbit/s for 1 ms, nothing for 1 ms, 16 Mbit/s for 1 ms; loops every 3 ms.
fn fast_pause_faster() -> RateServer {
    RateServer::new(steps_us(&[(0, 8_000_000), (1000, 0), (2000, 16_000_000)], 3000))
}

#[test]
fn step_trace_integrates_across_step_boundaries_and_zero_rate_steps() {
    let mut server = fast_pause_faster();
    // 12000 bits: 8000 in the first ms, a pause, the last 4000 at 16 Mbit/s take 250 µs.
    assert_eq!(server.finish_time(Time::ZERO, 1500), us(2250));
    // The next one gets the remaining 750 µs at 16 Mbit/s: exactly 12000 bits.
    assert_eq!(server.finish_time(us(2250), 1500), us(3000));
    // The third starts the second loop and repeats the first.
    assert_eq!(server.finish_time(us(3000), 1500), us(5250));
}

#[test]
fn step_trace_packet_starting_in_a_zero_rate_step_waits_for_the_next_step() {
    let mut server = fast_pause_faster();
    assert_eq!(server.finish_time(us(1500), 1500), us(2750));
    assert_eq!(server.finish_time(us(2999), 1), Time(2_999_000 + 500));
}

#[test]
fn step_trace_jumps_over_long_idle_gaps_by_whole_periods() {
    let mut server = fast_pause_faster();
    let periods = 1_000_000_000u64; // 3·10⁹ ms, about 35 days
    let offset = periods * 3000;
    assert_eq!(server.finish_time(us(offset + 1500), 1500), us(offset + 2750));
    // A packet needing ten whole periods of work (10 · 24000 bits) plus 1 ms at 8 Mbit/s.
    let bits = 10 * 24_000 + 8_000;
    assert_eq!(server.finish_time(us(offset + 3000), bits / 8), us(offset + 3000 + 30_000 + 1000));
}

#[test]
fn step_trace_mean_and_capacity() {
    let server = fast_pause_faster();
    assert_eq!(server.mean_bps(), 8e6);
    assert_eq!(server.capacity_bits(Time::ZERO, ms(3)), 24_000.0);
    assert_eq!(server.capacity_bits(us(500), us(2500)), 4_000.0 + 8_000.0);
    assert_eq!(server.capacity_bits(ms(3_000_000), ms(6_000_000)), 8e6 * 3000.0);
    assert_eq!(server.model.capacity_bits(us(500), us(2500)), 12_000.0);
    assert_eq!(server.capacity_bits(ms(2), ms(1)), 0.0);
}

#[test]
fn all_zero_step_trace_never_finishes() {
    let mut server = RateServer::new(steps_us(&[(0, 0)], 1000));
    assert_eq!(server.finish_time(Time::ZERO, 1), Time::MAX);
    assert_eq!(server.mean_bps(), 0.0);
}

#[test]
fn mahimahi_single_line_1_is_a_constant_12_mbps_link() {
    let mut server = opportunities(&[1]);
    assert_eq!(server.mean_bps(), 12e6);
    assert_eq!(back_to_back(&mut server, Time::ZERO, &[1500; 4]), [ms(1), ms(2), ms(3), ms(4)]);
    assert_eq!(server.capacity_bits(ms(10), ms(20)), 10.0 * 12_000.0);
}

#[test]
fn mahimahi_repeated_timestamps_are_several_opportunities_in_one_ms() {
    // Opportunities at 1, 1, 3, 6 | 7, 7, 9, 12 | 13, 13, ...
    let mut server = opportunities(&[1, 1, 3, 6]);
    let finishes = back_to_back(&mut server, Time::ZERO, &[1500; 8]);
    assert_eq!(finishes, [ms(1), ms(1), ms(3), ms(6), ms(7), ms(7), ms(9), ms(12)]);
    assert_eq!(server.mean_bps(), 8e6, "4 opportunities of 12 000 bits every 6 ms");
}

#[test]
fn mahimahi_first_timestamp_of_the_next_loop_coincides_with_the_period() {
    // Period 4: opportunities at 0, 2, 4 | 4, 6, 8 | 8, ...
    let mut server = opportunities(&[0, 2, 4]);
    assert_eq!(back_to_back(&mut server, ms(3), &[1500; 5]), [ms(4), ms(4), ms(6), ms(8), ms(8)]);
    assert_eq!(opportunities(&[0, 2, 4]).capacity_bits(ms(4), ms(5)), 2.0 * 12_000.0);
    assert_eq!(opportunities(&[0, 2, 4]).capacity_bits(Time::ZERO, ms(8)), 5.0 * 12_000.0);
}

#[test]
fn mahimahi_small_packets_share_an_opportunity() {
    let mut server = opportunities(&[1, 1, 3, 6]);
    let finishes = back_to_back(&mut server, Time::ZERO, &[500, 500, 500, 500, 1000, 1]);
    // Three share the first opportunity at 1 ms, the next two fill the second one at 1 ms.
    assert_eq!(finishes, [ms(1), ms(1), ms(1), ms(1), ms(1), ms(3)]);
}

#[test]
fn mahimahi_leftover_credit_carries_into_the_next_opportunity() {
    let mut server = opportunities(&[1]);
    // 1000 B leave at 1 ms (500 B of credit left); the next 1000 B use those 500 B plus
    // 500 B of the opportunity at 2 ms, leaving 1000 B there for the third packet.
    assert_eq!(back_to_back(&mut server, Time::ZERO, &[1000, 1000, 1000, 1000]), [ms(1), ms(2), ms(2), ms(3)]);
}

#[test]
fn mahimahi_large_packets_span_several_opportunities() {
    let mut server = opportunities(&[1]);
    assert_eq!(back_to_back(&mut server, Time::ZERO, &[3000, 3000, 4000]), [ms(2), ms(4), ms(7)]);
    let mut bursty = opportunities(&[1, 1, 3, 6]);
    assert_eq!(back_to_back(&mut bursty, Time::ZERO, &[3000, 3000, 3000]), [ms(1), ms(6), ms(7)]);
}

#[test]
fn mahimahi_credit_is_wasted_when_the_next_packet_starts_later() {
    let mut server = opportunities(&[1]);
    assert_eq!(server.finish_time(Time::ZERO, 1000), ms(1));
    // Arrives just after the opportunity at 1 ms: its 500 B of credit are gone.
    assert_eq!(server.finish_time(Time(1_000_001), 400), ms(2));
    // Arrives exactly at the opportunity time of the previous packet: the credit serves it.
    assert_eq!(server.finish_time(ms(2), 1100), ms(2));
    assert_eq!(server.finish_time(ms(2), 1), ms(3));
}

#[test]
fn mahimahi_opportunities_with_an_empty_queue_are_wasted() {
    let mut server = opportunities(&[1, 1, 3, 6]);
    assert_eq!(server.finish_time(Time::ZERO, 1500), ms(1));
    // Idle through 1 ms (second opportunity), 3 ms and 6 ms; next one at 7 ms.
    assert_eq!(server.finish_time(Time(3_500_000), 1500), ms(6));
    assert_eq!(server.finish_time(Time(6_000_001), 1500), ms(7));
    assert_eq!(server.finish_time(ms(7), 1500), ms(7));
    assert_eq!(server.finish_time(ms(7), 1500), ms(9));
}

#[test]
fn mahimahi_idle_gap_of_years_lands_in_the_right_loop() {
    let mut server = opportunities(&[1, 1, 3, 6]);
    let loops = 5_000_000_000u64; // 3·10¹⁰ ms, almost a year
    let base = loops * 6;
    assert_eq!(server.finish_time(ms(base + 2), 1500), ms(base + 3));
    assert_eq!(back_to_back(&mut server, ms(base + 3), &[1500; 3]), [ms(base + 6), ms(base + 7), ms(base + 7)]);
    let window = server.capacity_bits(ms(base), ms(base + 6));
    assert_eq!(window, 4.0 * 12_000.0, "[6k, 6k+6) holds 6k, 6k+1, 6k+1, 6k+3");
}

proptest! {
    /// A step trace with one constant step behaves exactly like a fixed rate.
    #[test]
    fn one_step_trace_matches_fixed_rate(
        bps in 1u64..10_000_000_000,
        period_us in 1u64..10_000_000,
        gaps_and_sizes in prop::collection::vec((0u64..5_000_000, 1u32..70_000), 1..50),
    ) {
        let mut fixed = RateServer::new(RateModel::Fixed(Rate(bps)));
        let mut steps = RateServer::new(steps_us(&[(0, bps)], period_us));
        let mut free_at = Time::ZERO;
        for (gap, size) in gaps_and_sizes {
            let start = free_at + Dur(gap);
            let expected = fixed.finish_time(start, size);
            prop_assert_eq!(steps.finish_time(start, size), expected);
            free_at = expected;
        }
    }

    /// Mahimahi finish times agree with a direct simulation that walks every opportunity.
    #[test]
    fn mahimahi_matches_a_step_by_step_reference(
        deltas in prop::collection::vec(0u64..4, 1..20),
        packets in prop::collection::vec((0u64..15_000_000, 1u32..5000), 1..40),
    ) {
        let mut times = Vec::new();
        let mut t = 0;
        for d in deltas { t += d; times.push(t); }
        prop_assume!(t > 0);
        let mut server = opportunities(&times);
        let mut reference = ReferenceMahimahi::new(&times);
        let mut free_at = Time::ZERO;
        for (gap, size) in packets {
            let start = free_at + Dur(gap);
            let finish = server.finish_time(start, size);
            prop_assert_eq!(finish, reference.finish_time(start, size));
            free_at = finish;
        }
    }
}

/// Walks opportunities one by one, keeping the leftover bytes of the last one used.
struct ReferenceMahimahi {
    /// Opportunity times (ns) of the first loops, enough for the test's time span.
    times_ns: Vec<u64>,
    next: usize,
    leftover: u64,
    last_used: Option<u64>,
}

impl ReferenceMahimahi {
    fn new(times_ms: &[u64]) -> ReferenceMahimahi {
        let period = *times_ms.last().unwrap();
        let mut times_ns = Vec::new();
        let mut loop_start = 0;
        while times_ns.len() < 400_000 {
            times_ns.extend(times_ms.iter().map(|t| (loop_start + t) * 1_000_000));
            loop_start += period;
        }
        ReferenceMahimahi { times_ns, next: 0, leftover: 0, last_used: None }
    }

    fn finish_time(&mut self, start: Time, bytes: u32) -> Time {
        let mut needed = bytes as u64;
        match self.last_used {
            Some(t) if t >= start.0 => {
                let used = needed.min(self.leftover);
                self.leftover -= used;
                needed -= used;
                if needed == 0 {
                    return Time(t);
                }
            }
            _ => self.leftover = 0,
        }
        while self.times_ns[self.next] < start.0 {
            self.next += 1;
        }
        loop {
            let t = self.times_ns[self.next];
            self.next += 1;
            let used = needed.min(1500);
            needed -= used;
            if needed == 0 {
                self.leftover = 1500 - used;
                self.last_used = Some(t);
                return Time(t);
            }
        }
    }
}
