//! Delay models and the delay decorator. (CONTRACT STUB — to be implemented)

use crate::{Link, LinkOutput, QueueState, TraceError};
use multiconn_core::{DropCause, Dur, Packet, RngStream, Time};

/// An empirical delay distribution: bins `[lower_i, lower_{i+1})` with weights.
#[derive(Debug, Clone, PartialEq)]
pub struct EmpiricalDelay {
    pub lower_ms: Vec<f64>,
    pub weights: Vec<f64>,
}

/// A one-way-delay time series: `(time offset, delay)` points.
#[derive(Debug, Clone, PartialEq)]
pub struct DelaySeries {
    pub points: Vec<(Dur, Dur)>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum DelayModel {
    Constant(Dur),
    /// Normal with `mean` and coefficient of variation `cv`, truncated at zero.
    Normal { mean: Dur, cv: f64 },
    Empirical(EmpiricalDelay),
    Series(DelaySeries),
}

impl DelayModel {
    pub fn sample(&self, now: Time, rng: &mut RngStream) -> Dur {
        let _ = (now, rng);
        unimplemented!()
    }
    /// The model's mean delay.
    pub fn mean(&self) -> Dur {
        unimplemented!()
    }
}

/// Parses a DETERMINISTIC6G-style histogram: tab- or comma-separated `lower_ms<TAB>weight`.
pub fn parse_histogram(text: &str, origin: &str) -> Result<EmpiricalDelay, TraceError> {
    let _ = (text, origin);
    unimplemented!()
}

/// Parses a one-way-delay series CSV with a header `time_s,delay_ms`.
pub fn parse_delay_series(text: &str, origin: &str) -> Result<DelaySeries, TraceError> {
    let _ = (text, origin);
    unimplemented!()
}

/// Adds a per-packet delay after the inner link. With `reorder = false` a packet never
/// overtakes the one before it (FIFO); with `reorder = true` it may (netem jitter).
pub struct Delayed<L> {
    pub inner: L,
    _private: (DelayModel, bool, RngStream),
}

impl<L: Link> Delayed<L> {
    pub fn new(inner: L, model: DelayModel, reorder: bool, rng: RngStream) -> Delayed<L> {
        Delayed { inner, _private: (model, reorder, rng) }
    }
}

impl<L: Link> Link for Delayed<L> {
    fn enqueue(&mut self, now: Time, pkt: Packet) -> Result<(), (Packet, DropCause)> {
        self.inner.enqueue(now, pkt)
    }
    fn poll(&mut self, now: Time) -> Option<LinkOutput> {
        let _ = now;
        unimplemented!()
    }
    fn poll_timeout(&self) -> Option<Time> {
        unimplemented!()
    }
    fn queue(&self) -> QueueState {
        self.inner.queue()
    }
    fn has_room(&self, size: u32) -> bool {
        self.inner.has_room(size)
    }
    fn flush(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.inner.flush(now, out)
    }
}
