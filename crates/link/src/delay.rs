//! Delay models and the delay decorator.
//!
//! A [`DelayModel`] draws a one-way propagation delay per packet: a constant, a normal
//! distribution truncated at zero, an empirical histogram, or a measured time series.
//! [`Delayed`] wraps an inner link (usually [`crate::queue::DropTailLink`]) and holds every
//! packet the inner link delivers for a drawn delay, like netem's `delay`/`jitter`: in FIFO
//! mode a packet never overtakes the one before it (a delay line), in reorder mode it may.
//! Random draws come from the component's own [`RngStream`], so runs are reproducible.
//!
//! Histograms follow the DETERMINISTIC6G packet-delay files (PD-Wireless-5G-*): no header,
//! one row per bin, `lower_ms<TAB>weight`, where the weight is a count or a relative frequency
//! and a final zero-weight row often just marks the upper edge. Delay series are CSV files with
//! the header `time_s,delay_ms`. Both are parsed from text; reading files is the caller's job.

use crate::queue::DropTailLink;
use crate::{Held, Link, LinkOutput, QueueState, TraceError};
use multiconn_core::{DropCause, Dur, Packet, RngStream, Time};
use rand_distr::{Distribution, StandardNormal};
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};

/// An empirical delay distribution: bins `[lower_i, lower_{i+1})` with weights.
#[derive(Debug, Clone, PartialEq)]
pub struct EmpiricalDelay {
    /// The lower edge of each bin, in milliseconds, ascending.
    pub lower_ms: Vec<f64>,
    /// The weight of each bin (any non-negative scale).
    pub weights: Vec<f64>,
}

/// A one-way-delay time series: `(time offset, delay)` points.
#[derive(Debug, Clone, PartialEq)]
pub struct DelaySeries {
    /// `(offset since the start of the run, one-way delay)`, by offset.
    pub points: Vec<(Dur, Dur)>,
    /// How the delay goes from one point to the next.
    pub interpolation: Interpolation,
}

/// How a [`DelaySeries`] goes from one point to the next.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Interpolation {
    /// Linearly: the delay glides between the points.
    #[default]
    Linear,
    /// In steps: each point's delay holds until the next point, as when a tool such as
    /// `tc qdisc change … netem delay` sets a new delay at each point (Linux `netem_change`
    /// rewrites the latency for packets enqueued from then on and leaves the packets already
    /// queued with the send time stamped at their enqueue, `sch_netem.c`).
    Step,
}

/// How long a packet propagates after it leaves the link's queue.
#[derive(Debug, Clone, PartialEq)]
pub enum DelayModel {
    /// Always this delay.
    Constant(Dur),
    /// Normal with `mean` and coefficient of variation `cv`, truncated at zero.
    Normal {
        /// The mean delay.
        mean: Dur,
        /// Standard deviation over mean (0: constant).
        cv: f64,
    },
    /// Drawn from a histogram.
    Empirical(EmpiricalDelay),
    /// The series' value when the packet leaves the queue.
    Series(DelaySeries),
}

impl DelayModel {
    /// Draws the delay of a packet leaving the inner link at `now`.
    ///
    /// * `Constant`: always the same; draws nothing.
    /// * `Normal`: `mean · (1 + cv · Z)` with `Z` standard normal; a negative draw becomes zero,
    ///   which nudges the realised mean above `mean` once `cv` exceeds about 0.3.
    /// * `Empirical`: a bin chosen with probability proportional to its weight, then a uniform
    ///   point inside it (see [`EmpiricalDelay::bin_width_ms`]). For repeated draws prefer
    ///   [`DelaySampler`], which builds the cumulative table once.
    /// * `Series`: the series at `now` (offset from time zero), linearly interpolated; held at
    ///   the first value before the first point and at the last value after the last point.
    pub fn sample(&self, now: Time, rng: &mut RngStream) -> Dur {
        match self {
            DelayModel::Constant(d) => *d,
            DelayModel::Normal { mean, cv } => sample_truncated_normal(*mean, *cv, rng),
            DelayModel::Empirical(hist) => hist.sample_with(&hist.cumulative_weights(), rng),
            DelayModel::Series(series) => series.at(now),
        }
    }

    /// The model's mean delay. For `Normal` this is `mean`, ignoring the truncation at zero;
    /// for `Empirical` each bin counts at its midpoint; for `Series` it is the time average
    /// over the span of the series (the value itself if the span is empty).
    pub fn mean(&self) -> Dur {
        match self {
            DelayModel::Constant(d) => *d,
            DelayModel::Normal { mean, .. } => *mean,
            DelayModel::Empirical(hist) => millis_to_dur(hist.mean_ms()),
            DelayModel::Series(series) => series.time_average(),
        }
    }

    /// The smallest delay the model can draw: `Constant` its value, `Normal` zero (a draw is
    /// truncated there), `Empirical` the lower edge of its lowest weighted bin, `Series` its
    /// smallest point (interpolation stays between points). Invariant checks compare each
    /// delivery against it.
    pub fn floor(&self) -> Dur {
        match self {
            DelayModel::Constant(d) => *d,
            DelayModel::Normal { .. } => Dur::ZERO,
            DelayModel::Empirical(hist) => {
                let lowest = hist.lower_ms.iter().zip(&hist.weights).filter(|(_, &w)| w > 0.0).map(|(&l, _)| l).fold(f64::INFINITY, f64::min);
                if lowest.is_finite() {
                    millis_to_dur(lowest)
                } else {
                    Dur::ZERO
                }
            }
            DelayModel::Series(series) => series.points.iter().map(|&(_, d)| d).min().unwrap_or(Dur::ZERO),
        }
    }
}

/// A [`DelayModel`] prepared for repeated sampling (the histogram's cumulative weights are
/// computed once). Draws exactly what [`DelayModel::sample`] draws.
#[derive(Debug, Clone)]
pub struct DelaySampler {
    model: DelayModel,
    cumulative: Vec<f64>,
}

impl DelaySampler {
    /// A sampler of `model`.
    pub fn new(model: DelayModel) -> DelaySampler {
        let cumulative = match &model {
            DelayModel::Empirical(hist) => hist.cumulative_weights(),
            _ => Vec::new(),
        };
        DelaySampler { model, cumulative }
    }

    /// The model it samples.
    pub fn model(&self) -> &DelayModel {
        &self.model
    }

    /// The delay of a packet leaving the inner link at `now` (see [`DelayModel::sample`]).
    pub fn sample(&self, now: Time, rng: &mut RngStream) -> Dur {
        match &self.model {
            DelayModel::Empirical(hist) => hist.sample_with(&self.cumulative, rng),
            other => other.sample(now, rng),
        }
    }
}

fn sample_truncated_normal(mean: Dur, cv: f64, rng: &mut RngStream) -> Dur {
    let z: f64 = StandardNormal.sample(rng);
    let nanos = mean.as_nanos() as f64 * (1.0 + cv * z);
    Dur::from_secs_f64(nanos / 1e9)
}

fn millis_to_dur(ms: f64) -> Dur {
    Dur::from_secs_f64(ms / 1e3)
}

impl EmpiricalDelay {
    /// Running sums of the weights; the last entry is the total weight.
    pub fn cumulative_weights(&self) -> Vec<f64> {
        self.weights
            .iter()
            .scan(0.0, |sum, w| {
                *sum += w;
                Some(*sum)
            })
            .collect()
    }

    /// Width of bin `i`: up to the next lower bound; the last bin is as wide as the one before
    /// it (a single bin has width zero, i.e. it is a point mass).
    pub fn bin_width_ms(&self, i: usize) -> f64 {
        let n = self.lower_ms.len();
        match i + 1 {
            next if next < n => self.lower_ms[next] - self.lower_ms[i],
            _ if n >= 2 => self.lower_ms[n - 1] - self.lower_ms[n - 2],
            _ => 0.0,
        }
    }

    /// Weighted mean with each bin at its midpoint, in milliseconds.
    pub fn mean_ms(&self) -> f64 {
        let total: f64 = self.weights.iter().sum();
        let moment: f64 = (0..self.weights.len())
            .map(|i| self.weights[i] * (self.lower_ms[i] + self.bin_width_ms(i) / 2.0))
            .sum();
        if total > 0.0 {
            moment / total
        } else {
            0.0
        }
    }

    fn sample_with(&self, cumulative: &[f64], rng: &mut RngStream) -> Dur {
        let Some(&total) = cumulative.last() else {
            return Dur::ZERO;
        };
        let target = rng.uniform() * total;
        let bin = self.bin_for(cumulative, target);
        let ms = self.lower_ms[bin] + rng.uniform() * self.bin_width_ms(bin);
        millis_to_dur(ms)
    }

    /// The first bin whose cumulative weight exceeds `target`; a zero-weight bin never
    /// qualifies because its cumulative weight equals its predecessor's.
    fn bin_for(&self, cumulative: &[f64], target: f64) -> usize {
        let bin = cumulative.partition_point(|&c| c <= target);
        if bin < cumulative.len() {
            return bin;
        }
        // Only reachable if rounding put `target` at the total: take the last weighted bin.
        self.weights.iter().rposition(|&w| w > 0.0).unwrap_or(0)
    }
}

impl DelaySeries {
    /// Points read linearly.
    pub fn linear(points: Vec<(Dur, Dur)>) -> DelaySeries {
        DelaySeries { points, interpolation: Interpolation::Linear }
    }

    /// The delay at `now`: with [`Interpolation::Linear`] interpolated between the surrounding
    /// points (exact integer arithmetic), with [`Interpolation::Step`] the value of the latest
    /// point at or before `now`; held constant outside the series. At a repeated time the later
    /// point wins.
    pub fn at(&self, now: Time) -> Dur {
        let t = now.as_nanos();
        let next = self
            .points
            .partition_point(|&(time, _)| time.as_nanos() <= t);
        match next {
            _ if self.points.is_empty() => Dur::ZERO,
            0 => self.points[0].1,
            n if n == self.points.len() => self.points[n - 1].1,
            n if self.interpolation == Interpolation::Step => self.points[n - 1].1,
            n => interpolate(self.points[n - 1], self.points[n], t),
        }
    }

    /// Time average over `[first time, last time]` (trapezoids, or rectangles for steps).
    pub fn time_average(&self) -> Dur {
        let (Some(first), Some(last)) = (self.points.first(), self.points.last()) else {
            return Dur::ZERO;
        };
        let span = last.0.as_nanos() - first.0.as_nanos().min(last.0.as_nanos());
        if span == 0 {
            return last.1;
        }
        let area: u128 = self
            .points
            .windows(2)
            .map(|w| {
                let dt = (w[1].0.as_nanos() - w[0].0.as_nanos()) as u128;
                match self.interpolation {
                    Interpolation::Linear => dt * (w[0].1.as_nanos() as u128 + w[1].1.as_nanos() as u128) / 2,
                    Interpolation::Step => dt * w[0].1.as_nanos() as u128,
                }
            })
            .sum();
        Dur((area / span as u128) as u64)
    }
}

fn interpolate((t0, d0): (Dur, Dur), (t1, d1): (Dur, Dur), t: u64) -> Dur {
    let (t0, t1) = (t0.as_nanos() as i128, t1.as_nanos() as i128);
    let (d0, d1) = (d0.as_nanos() as i128, d1.as_nanos() as i128);
    let value = d0 + (d1 - d0) * (t as i128 - t0) / (t1 - t0);
    Dur(value.clamp(0, u64::MAX as i128) as u64)
}

// ---------------------------------------------------------------------------------------------
// Parsers

const HISTOGRAM_ROW: &str =
    "expected two columns, the bin lower bound in ms (e.g. `3.141` or `3.141ms`) and a count or relative frequency, separated by a tab, a comma or spaces";

/// Parses a DETERMINISTIC6G-style histogram: tab- or comma-separated `lower_ms<TAB>weight`.
///
/// Blank lines are skipped. Lower bounds must be finite, ≥ 0 and strictly increasing; weights
/// finite and ≥ 0 with a positive total. Only relative weights matter, so counts and
/// frequencies are both accepted.
pub fn parse_histogram(text: &str, origin: &str) -> Result<EmpiricalDelay, TraceError> {
    let mut hist = EmpiricalDelay {
        lower_ms: Vec::new(),
        weights: Vec::new(),
    };
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let err = |message: String| TraceError::new(origin, Some(index + 1), message);
        let (lower, weight) = parse_histogram_row(line).map_err(err)?;
        if let Some(&previous) = hist.lower_ms.last() {
            if lower <= previous {
                return Err(err(format!(
                    "bin lower bound {lower} ms is not above the previous one ({previous} ms): lower bounds must be strictly increasing"
                )));
            }
        }
        hist.lower_ms.push(lower);
        hist.weights.push(weight);
    }
    check_histogram_totals(&hist, origin)?;
    Ok(hist)
}

fn parse_histogram_row(line: &str) -> Result<(f64, f64), String> {
    let fields = split_fields(line);
    let [lower, weight] = fields[..] else {
        return Err(format!("found {} column(s): {HISTOGRAM_ROW}", fields.len()));
    };
    let lower_ms = lower.strip_suffix("ms").unwrap_or(lower).trim_end();
    let lower = parse_non_negative(lower_ms).ok_or_else(|| {
        format!("invalid bin lower bound \"{lower}\": expected a finite number of milliseconds >= 0, optionally followed by `ms`")
    })?;
    let weight = parse_non_negative(weight).ok_or_else(|| {
        format!("invalid weight \"{weight}\": expected a finite count or relative frequency >= 0")
    })?;
    Ok((lower, weight))
}

/// Splits on tabs if there are any, else on commas, else on runs of spaces.
fn split_fields(line: &str) -> Vec<&str> {
    let line = line.trim();
    if line.contains('\t') {
        line.split('\t').map(str::trim).collect()
    } else if line.contains(',') {
        line.split(',').map(str::trim).collect()
    } else {
        line.split_whitespace().collect()
    }
}

fn parse_non_negative(field: &str) -> Option<f64> {
    let value: f64 = field.trim().parse().ok()?;
    (value.is_finite() && value >= 0.0).then_some(value)
}

fn check_histogram_totals(hist: &EmpiricalDelay, origin: &str) -> Result<(), TraceError> {
    if hist.lower_ms.is_empty() {
        return Err(TraceError::new(
            origin,
            None,
            format!("no histogram rows: {HISTOGRAM_ROW}"),
        ));
    }
    let total: f64 = hist.weights.iter().sum();
    if !(total > 0.0 && total.is_finite()) {
        return Err(TraceError::new(
            origin,
            None,
            "the weights add up to zero: at least one bin needs a positive count or frequency",
        ));
    }
    Ok(())
}

const SERIES_HEADER: &str = "time_s,delay_ms";

/// Parses a one-way-delay series CSV with a header `time_s,delay_ms`.
///
/// Times are seconds from the start of the run, non-decreasing (a repeated time makes a step);
/// delays are milliseconds, finite and ≥ 0. Blank lines are skipped; at least one row is needed.
pub fn parse_delay_series(text: &str, origin: &str) -> Result<DelaySeries, TraceError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    check_series_header(lines.next(), origin)?;
    let mut points: Vec<(Dur, Dur)> = Vec::new();
    for (index, line) in lines {
        let err = |message: String| TraceError::new(origin, Some(index + 1), message);
        let (time_s, delay_ms) = parse_series_row(line).map_err(err)?;
        let time = Dur::from_secs_f64(time_s);
        if let Some(&(previous, _)) = points.last() {
            if time < previous {
                return Err(err(format!(
                    "time {time_s} s is before the previous row's ({} s): times must be non-decreasing",
                    previous.as_secs_f64()
                )));
            }
        }
        points.push((time, millis_to_dur(delay_ms)));
    }
    if points.is_empty() {
        return Err(TraceError::new(
            origin,
            None,
            format!("no rows after the header `{SERIES_HEADER}`"),
        ));
    }
    Ok(DelaySeries::linear(points))
}

fn check_series_header(first: Option<(usize, &str)>, origin: &str) -> Result<(), TraceError> {
    let Some((index, line)) = first else {
        return Err(TraceError::new(
            origin,
            None,
            format!("empty file: expected the header `{SERIES_HEADER}` and rows"),
        ));
    };
    let header: Vec<&str> = line
        .trim_start_matches('\u{feff}')
        .split(',')
        .map(str::trim)
        .collect();
    if header != ["time_s", "delay_ms"] {
        return Err(TraceError::new(
            origin,
            Some(index + 1),
            format!(
                "expected the header `{SERIES_HEADER}`, found \"{}\"",
                line.trim()
            ),
        ));
    }
    Ok(())
}

fn parse_series_row(line: &str) -> Result<(f64, f64), String> {
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    let [time, delay] = fields[..] else {
        return Err(format!(
            "found {} column(s): expected `time_s,delay_ms`",
            fields.len()
        ));
    };
    let time_s = parse_non_negative(time).ok_or_else(|| {
        format!("invalid time \"{time}\": expected a finite number of seconds >= 0")
    })?;
    let delay_ms = parse_non_negative(delay).ok_or_else(|| {
        format!("invalid delay \"{delay}\": expected a finite number of milliseconds >= 0")
    })?;
    Ok((time_s, delay_ms))
}

// ---------------------------------------------------------------------------------------------
// The decorator

/// An output of the inner link waiting for its delay to elapse (also the scripted
/// decorator's held outputs).
#[derive(Debug)]
pub(crate) struct Pending {
    pub(crate) due: Time,
    /// Order of arrival from the inner link; breaks ties so equal due times keep that order.
    pub(crate) arrival: u64,
    pub(crate) output: LinkOutput,
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Pending {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.due, self.arrival).cmp(&(other.due, other.arrival))
    }
}

/// Adds a per-packet delay after the inner link. With `reorder = false` a packet never
/// overtakes the one before it (FIFO); with `reorder = true` it may (netem jitter).
pub struct Delayed<L> {
    /// The link whose output is delayed.
    pub inner: L,
    sampler: DelaySampler,
    reorder: bool,
    rng: RngStream,
    /// Reorder mode: min-heap by (due, arrival).
    pending: BinaryHeap<Reverse<Pending>>,
    /// FIFO mode: deliveries and drops, each already in (due, arrival) order, so two queues
    /// replace the heap.
    fifo_delivered: VecDeque<Pending>,
    fifo_dropped: VecDeque<Pending>,
    arrivals: u64,
    /// Due time of the latest delivery scheduled, the floor for the next one in FIFO mode.
    last_delivery_due: Time,
    /// Lazy departures (see [`Delayed::with_lazy_departures`]).
    lazy: bool,
    /// Lazy departures: the delay of the next packet to leave the inner link, drawn ahead of
    /// its departure. The draws do not depend on time and every delivered packet takes the
    /// next one in departure order, so they are the draws an eager link makes.
    next_delay: Option<Dur>,
    /// Lazy departures: the inner queue's changes caught up and not yet taken.
    queue_changes: Vec<(Time, QueueState)>,
}

impl<L: Link> Delayed<L> {
    /// Delays the output of `inner` by draws of `model` from `rng`; `reorder` lets packets
    /// overtake each other.
    pub fn new(inner: L, model: DelayModel, reorder: bool, rng: RngStream) -> Delayed<L> {
        Delayed {
            inner,
            sampler: DelaySampler::new(model),
            reorder,
            rng,
            pending: BinaryHeap::new(),
            fifo_delivered: VecDeque::new(),
            fifo_dropped: VecDeque::new(),
            arrivals: 0,
            last_delivery_due: Time::ZERO,
            lazy: false,
            next_delay: None,
            queue_changes: Vec::new(),
        }
    }

    /// Packets that left the inner link and are still on their way.
    pub fn propagating(&self) -> usize {
        self.pending.len() + self.fifo_delivered.len() + self.fifo_dropped.len()
    }

    /// The next output in (due, arrival) order.
    fn next_pending(&self) -> Option<&Pending> {
        if self.reorder {
            return self.pending.peek().map(|Reverse(p)| p);
        }
        match (self.fifo_delivered.front(), self.fifo_dropped.front()) {
            (Some(a), Some(b)) => Some(if (a.due, a.arrival) <= (b.due, b.arrival) { a } else { b }),
            (a, b) => a.or(b),
        }
    }

    fn pop_pending(&mut self) -> Option<Pending> {
        if self.reorder {
            return self.pending.pop().map(|Reverse(p)| p);
        }
        let take_delivered = match (self.fifo_delivered.front(), self.fifo_dropped.front()) {
            (Some(a), Some(b)) => (a.due, a.arrival) <= (b.due, b.arrival),
            (a, _) => a.is_some(),
        };
        if take_delivered {
            self.fifo_delivered.pop_front()
        } else {
            self.fifo_dropped.pop_front()
        }
    }

    /// Takes every inner output due by `now` and schedules it; with lazy departures, notes
    /// the inner queue after each one at the instant it left.
    fn drain_inner(&mut self, now: Time) {
        let mut drained = false;
        while let Some(output) = self.inner.poll(now) {
            drained = true;
            if self.lazy {
                let at = output_time(&output);
                let queue = self.inner.queue();
                match self.queue_changes.last_mut() {
                    Some(last) if last.0 == at => last.1 = queue,
                    _ => self.queue_changes.push((at, queue)),
                }
            }
            self.schedule(output);
        }
        if drained {
            // The next packet, if any, entered transmission.
            self.draw_ahead();
        }
    }

    /// Lazy departures: draws the delay of the packet in transmission, if not yet drawn, so
    /// that its delivery time is known ([`Link::poll_timeout`]).
    fn draw_ahead(&mut self) {
        if !self.lazy || self.next_delay.is_some() {
            return;
        }
        if let Some(finish) = self.inner.poll_timeout() {
            self.next_delay = Some(self.sampler.sample(finish, &mut self.rng));
        }
    }

    /// With lazy departures: takes the inner outputs due strictly before `now`, so the inner
    /// queue is the one a packet arriving at `now` finds. A departure at exactly `now` is
    /// left for later: the arriving packet sees the packet in transmission still there, as
    /// it does when its arrival is handled before the link's own wake-up at that instant.
    fn drain_inner_before(&mut self, now: Time) {
        if self.lazy && now > Time::ZERO {
            self.drain_inner(Time(now.0 - 1));
        }
    }

    fn schedule(&mut self, output: LinkOutput) {
        let (due, output, delivered) = match output {
            LinkOutput::Delivered { at, pkt } => {
                let due = self.delivery_time(at);
                (due, LinkOutput::Delivered { at: due, pkt }, true)
            }
            dropped @ LinkOutput::Dropped { at, .. } => (at, dropped, false),
        };
        let p = Pending { due, arrival: self.arrivals, output };
        self.arrivals += 1;
        match (self.reorder, delivered) {
            (true, _) => self.pending.push(Reverse(p)),
            (false, true) => self.fifo_delivered.push_back(p),
            (false, false) => self.fifo_dropped.push_back(p),
        }
    }

    fn delivery_time(&mut self, left_inner_at: Time) -> Time {
        let delay = match self.next_delay.take() {
            Some(d) => d,
            None => self.sampler.sample(left_inner_at, &mut self.rng),
        };
        let drawn = left_inner_at + delay;
        let due = if self.reorder {
            drawn
        } else {
            drawn.max(self.last_delivery_due)
        };
        self.last_delivery_due = self.last_delivery_due.max(due);
        due
    }
}

impl Delayed<DropTailLink> {
    /// Lazy departures, for a delay whose draws do not depend on time (constant, normal or
    /// empirical) in FIFO mode: a packet's delivery time is known as soon as it enters
    /// transmission (its finish time plus its delay, drawn then), so the link asks to be woken
    /// only for deliveries ([`Link::poll_timeout`]), not at the end of every transmission as
    /// well. What happened in between is caught up on the next call, with the same results:
    /// the drop-tail queue serves back to back in virtual time whenever it is polled, every
    /// delivered packet takes the next draw of the delay in departure order as an eager link
    /// gives it, and the queue's changes are kept with their instants
    /// ([`Link::take_queue_changes`]). A sender held back by [`Link::has_room`] still wants a
    /// wake-up at each departure: [`Link::next_departure`] gives it. A delay series is read at
    /// the instant a packet leaves the queue, so such a link stays eager.
    pub fn with_lazy_departures(mut self) -> Self {
        let timeless = matches!(self.sampler.model(), DelayModel::Constant(_) | DelayModel::Normal { .. } | DelayModel::Empirical(_));
        self.lazy = timeless && !self.reorder;
        self
    }
}

fn output_time(output: &LinkOutput) -> Time {
    match output {
        LinkOutput::Delivered { at, .. } | LinkOutput::Dropped { at, .. } => *at,
    }
}

impl<L: Link> Link for Delayed<L> {
    fn enqueue(&mut self, now: Time, pkt: Packet) -> Result<(), (Packet, DropCause)> {
        self.drain_inner_before(now);
        let accepted = self.inner.enqueue(now, pkt);
        self.draw_ahead();
        accepted
    }
    fn poll(&mut self, now: Time) -> Option<LinkOutput> {
        self.drain_inner(now);
        if self.next_pending()?.due > now {
            return None;
        }
        self.pop_pending().map(|p| p.output)
    }
    /// The next delivery; with eager departures, also the inner link's next output (when a
    /// packet's delay is drawn).
    fn poll_timeout(&self) -> Option<Time> {
        let propagating = self.next_pending().map(|p| p.due);
        let inner = match self.next_delay {
            Some(delay) => self.inner.poll_timeout().map(|finish| (finish + delay).max(self.last_delivery_due)),
            None => self.inner.poll_timeout(),
        };
        match (inner, propagating) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    fn next_departure(&self) -> Option<Time> {
        let propagating = self.next_pending().map(|p| p.due);
        match (self.inner.poll_timeout(), propagating) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    fn catch_up(&mut self, now: Time) {
        self.drain_inner_before(now);
    }
    fn take_queue_changes(&mut self, out: &mut Vec<(Time, QueueState)>) {
        out.append(&mut self.queue_changes);
    }
    fn queue(&self) -> QueueState {
        self.inner.queue()
    }
    fn has_room(&self, size: u32) -> bool {
        self.inner.has_room(size)
    }
    /// Flushes the inner link only: packets already propagating still arrive.
    fn flush(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.drain_inner_before(now);
        self.inner.flush(now, out);
        // The flushed transmission's delay, if drawn, goes to the next packet delivered.
    }
    fn discard_waiting(&mut self, discard: &mut dyn FnMut(&Packet) -> bool, out: &mut Vec<Packet>) {
        self.inner.discard_waiting(discard, out)
    }
    /// Removes every packet on its way (the delay line), in (due, arrival) order; drops
    /// already scheduled stay and are reported as they were.
    fn flush_propagating(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.drain_inner_before(now);
        let mut kept = Vec::new();
        while let Some(p) = self.pop_pending() {
            match p.output {
                LinkOutput::Delivered { pkt, .. } => out.push(pkt),
                dropped @ LinkOutput::Dropped { .. } => kept.push(Pending { output: dropped, ..p }),
            }
        }
        for p in kept {
            if self.reorder {
                self.pending.push(Reverse(p));
            } else {
                self.fifo_dropped.push_back(p);
            }
        }
        self.last_delivery_due = now;
    }
    fn is_up(&self, now: Time) -> bool {
        self.inner.is_up(now)
    }
    fn next_change(&self, from: Time) -> Option<Time> {
        self.inner.next_change(from)
    }
    /// The inner link's packets and those propagating.
    fn held(&self) -> Option<Held> {
        let mut held = self.inner.held()?;
        let propagating = self.pending.iter().map(|Reverse(p)| p).chain(&self.fifo_delivered).chain(&self.fifo_dropped);
        for p in propagating {
            held.add(p.output.packet().size);
        }
        Some(held)
    }
    fn aqm_stats(&self) -> Option<crate::aqm::AqmStats> {
        self.inner.aqm_stats()
    }
}
