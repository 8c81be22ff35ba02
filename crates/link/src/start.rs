//! Reading a trace from a point other than its beginning: with a start `s`, the run's time 0
//! reads the trace at `s` (a drive sampled at 480 s without a 480 s run).
//!
//! Every trace kind is one implementation of [`Trace`]: its length and the same trace read
//! from a start on, as a trace of the same kind that the models then serve as usual. What
//! happens at the trace's end is the kind's own end, applied after the start:
//!
//! * rate traces ([`StepTrace`] of a bitrate CSV, [`OpportunityTrace`] of a Mahimahi file)
//!   loop: from `s` they run to the end of the period, then the trace starts again at its
//!   beginning (time 0 of the trace, not `s`), period after period;
//! * a delay series ([`DelaySeries`]) holds its last point's delay after it, so read from `s`
//!   it follows the series from `s` to its last point and then holds that delay;
//! * a loss trace ([`LossTrace`]) is indexed by offered packets, not time: its start counts
//!   packets (start 1000: the first packet offered reads line 1001), and it loops.
//!
//! [`start_at`] is the one place that checks a start against the length (it must be shorter:
//! a start at or beyond the end would read nothing of the trace) and applies it; start 0 gives
//! the trace unchanged.

use crate::delay::DelaySeries;
use crate::loss::LossTrace;
use crate::rate::{OpportunityTrace, StepTrace};
use multiconn_core::Dur;

/// A trace that can be read from a start on.
pub trait Trace: Sized {
    /// What positions in the trace count: time ([`Dur`]) or offered packets (`u64`).
    type Position: Copy + Ord + Default;
    /// The length of one pass: a looping trace's period, a delay series' last time, a loss
    /// trace's number of packets.
    fn length(&self) -> Self::Position;
    /// Whether the kind can start at `start` (within the length): `Err` says why not, in the
    /// user's words. Every start within the length can, unless the kind says otherwise.
    fn check_start(&self, _start: Self::Position) -> Result<(), String> {
        Ok(())
    }
    /// The same trace read from `start` on, for `0 < start < length()` and a start
    /// [`Trace::check_start`] allows.
    fn read_from(&self, start: Self::Position) -> Self;
    /// A position in the user's words, for errors ("480 s", "1000 packets").
    fn show(position: Self::Position) -> String;
}

/// Why a start cannot be applied: in one line, what was given and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StartError(pub String);

/// `trace` read from `start` on; `start` must be shorter than the trace.
pub fn start_at<T: Trace>(trace: T, start: T::Position) -> Result<T, StartError> {
    if start == T::Position::default() {
        return Ok(trace);
    }
    let length = trace.length();
    if start >= length {
        return Err(StartError(format!(
            "start {} is not within the trace, which is {} long: a start must be at least 0 and less than the trace's length",
            T::show(start),
            T::show(length)
        )));
    }
    trace.check_start(start).map_err(StartError)?;
    Ok(trace.read_from(start))
}

fn show_seconds(d: Dur) -> String {
    format!("{} s", d.as_secs_f64())
}

impl Trace for StepTrace {
    type Position = Dur;

    fn length(&self) -> Dur {
        self.period
    }

    /// The steps from `start` to the period's end, then those from the period's start up to
    /// `start`, shifted so that `start` is 0; the period stays. The rate at `start` (the
    /// latest step at or before it, zero before the first step) holds from 0.
    fn read_from(&self, start: Dur) -> StepTrace {
        let mut steps: Vec<(Dur, multiconn_core::Rate)> = self.steps.iter().copied().filter(|&(o, _)| o < self.period).collect();
        // Stable, so that of steps sharing an offset the last given stays last (and wins, as
        // it does when the rate server reads them).
        steps.sort_by_key(|&(o, _)| o);
        let zero = multiconn_core::Rate(0);
        let rate_at = |t: Dur| steps.iter().take_while(|&&(o, _)| o <= t).last().map_or(zero, |&(_, r)| r);
        let mut out = vec![(Dur::ZERO, rate_at(start))];
        out.extend(steps.iter().filter(|&&(o, _)| o > start).map(|&(o, r)| (o - start, r)));
        let wrap = self.period - start;
        out.push((wrap, rate_at(Dur::ZERO)));
        out.extend(steps.iter().filter(|&&(o, _)| o > Dur::ZERO && o < start).map(|&(o, r)| (o + wrap, r)));
        StepTrace { steps: out, period: self.period }
    }

    fn show(position: Dur) -> String {
        show_seconds(position)
    }
}

impl Trace for OpportunityTrace {
    type Position = Dur;

    fn length(&self) -> Dur {
        Dur::from_millis(self.period_ms.max(self.times_ms.iter().copied().max().unwrap_or(0)))
    }

    /// Opportunities fall on whole milliseconds, and so must the start.
    fn check_start(&self, start: Dur) -> Result<(), String> {
        if start.as_nanos() % 1_000_000 == 0 {
            return Ok(());
        }
        Err(format!(
            "start {}: a Mahimahi trace's opportunities fall on whole milliseconds, so its start must be a whole number of milliseconds",
            show_seconds(start)
        ))
    }

    /// The opportunities at or after `start` come first, shifted by `start`, then those before
    /// it one period later; the period stays.
    fn read_from(&self, start: Dur) -> OpportunityTrace {
        let period_ms = self.length().as_nanos() / 1_000_000;
        let start_ms = start.as_nanos() / 1_000_000;
        let mut times_ms: Vec<u64> = self
            .times_ms
            .iter()
            .map(|&t| if t >= start_ms { t - start_ms } else { t + period_ms - start_ms })
            .collect();
        times_ms.sort_unstable();
        OpportunityTrace { times_ms, period_ms }
    }

    fn show(position: Dur) -> String {
        show_seconds(position)
    }
}

impl Trace for DelaySeries {
    type Position = Dur;

    /// The time of the last point (the delay holds after it).
    fn length(&self) -> Dur {
        self.points.iter().map(|&(t, _)| t).max().unwrap_or(Dur::ZERO)
    }

    /// The series' delay at `start` at 0, then the points after `start`, shifted by it.
    fn read_from(&self, start: Dur) -> DelaySeries {
        let at_start = self.at(multiconn_core::Time::ZERO + start);
        let mut points = vec![(Dur::ZERO, at_start)];
        points.extend(self.points.iter().filter(|&&(t, _)| t > start).map(|&(t, d)| (t - start, d)));
        DelaySeries { points, interpolation: self.interpolation }
    }

    fn show(position: Dur) -> String {
        show_seconds(position)
    }
}

impl Trace for LossTrace {
    type Position = u64;

    fn length(&self) -> u64 {
        self.lost.len() as u64
    }

    /// The pattern from packet `start` on, then its first `start` packets.
    fn read_from(&self, start: u64) -> LossTrace {
        let mut lost = self.lost.clone();
        lost.rotate_left(start as usize);
        LossTrace { lost }
    }

    fn show(position: u64) -> String {
        format!("{position} packets")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate::{RateModel, RateServer};
    use multiconn_core::{Rate, Time};

    fn s(secs: u64) -> Dur {
        Dur::from_secs(secs)
    }

    /// The rate an always-busy link gives in [from, from + 1 ms), in bit/s.
    fn rate_at(model: &RateModel, from: Time) -> f64 {
        model.capacity_bits(from, from + Dur::from_millis(1)) * 1000.0
    }

    #[test]
    fn a_step_trace_read_from_a_start_is_the_same_trace_shifted_and_looped() {
        // 10 Mbit/s until 2 s, 0 until 3 s, 30 Mbit/s until 5 s: period 5 s.
        let trace = StepTrace { steps: vec![(s(0), Rate(10_000_000)), (s(2), Rate(0)), (s(3), Rate(30_000_000))], period: s(5) };
        let original = RateModel::Steps(trace.clone());
        for start_ms in [1, 1000, 2000, 2500, 3000, 4999] {
            let start = Dur::from_millis(start_ms);
            let shifted = RateModel::Steps(start_at(trace.clone(), start).unwrap());
            assert_eq!(shifted.mean_bps(), original.mean_bps());
            for t_ms in (0..12_000).step_by(250) {
                let t = Time::ZERO + Dur::from_millis(t_ms);
                assert_eq!(rate_at(&shifted, t), rate_at(&original, t + start), "start {start_ms} ms, t {t_ms} ms");
            }
        }
    }

    #[test]
    fn a_mahimahi_trace_read_from_a_start_gives_the_same_opportunities_later() {
        let trace = OpportunityTrace { times_ms: vec![0, 1, 1, 5, 7, 10], period_ms: 10 };
        let mut original = RateServer::new(RateModel::Opportunities(trace.clone()));
        // Every opportunity of the original from 4 ms on, against the shifted trace's from 0.
        let mut shifted = RateServer::new(RateModel::Opportunities(start_at(trace, Dur::from_millis(4)).unwrap()));
        let shift = Dur::from_millis(4);
        let (mut a, mut b) = (Time::ZERO + shift, Time::ZERO);
        for _ in 0..30 {
            a = original.finish_time(a, 1500);
            b = shifted.finish_time(b, 1500);
            assert_eq!(a, b + shift);
        }
    }

    #[test]
    fn a_delay_series_read_from_a_start_holds_its_last_delay() {
        let series = DelaySeries::linear(vec![(s(0), Dur::from_millis(10)), (s(10), Dur::from_millis(30)), (s(20), Dur::from_millis(20))]);
        let from = start_at(series.clone(), s(5)).unwrap();
        for t in [0, 1, 5, 12, 15, 30, 100] {
            let shifted = Time::ZERO + s(t);
            assert_eq!(from.at(shifted), series.at(shifted + s(5)), "t {t} s");
        }
        assert_eq!(from.at(Time::ZERO + s(1000)), Dur::from_millis(20));
    }

    #[test]
    fn a_loss_trace_starts_at_a_packet() {
        let trace = LossTrace { lost: vec![false, true, true, false] };
        assert_eq!(start_at(trace.clone(), 1).unwrap().lost, vec![true, true, false, false]);
        assert_eq!(start_at(trace.clone(), 0).unwrap(), trace);
    }

    #[test]
    fn a_start_must_be_shorter_than_the_trace() {
        let trace = StepTrace { steps: vec![(s(0), Rate(1000))], period: s(300) };
        assert_eq!(
            start_at(trace.clone(), s(480)).unwrap_err().to_string(),
            "start 480 s is not within the trace, which is 300 s long: a start must be at least 0 and less than the trace's length"
        );
        assert!(start_at(trace, s(300)).is_err());
        let mahimahi = OpportunityTrace { times_ms: vec![0, 5, 10], period_ms: 10 };
        assert_eq!(
            start_at(mahimahi, Dur(4_500_000)).unwrap_err().to_string(),
            "start 0.0045 s: a Mahimahi trace's opportunities fall on whole milliseconds, so its start must be a whole number of milliseconds"
        );
        let loss = LossTrace { lost: vec![true; 3] };
        assert_eq!(
            start_at(loss, 3).unwrap_err().to_string(),
            "start 3 packets is not within the trace, which is 3 packets long: a start must be at least 0 and less than the trace's length"
        );
    }
}
