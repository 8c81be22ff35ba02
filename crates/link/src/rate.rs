//! Rate models: how fast a link serializes bytes over time. (CONTRACT STUB — to be implemented)

use multiconn_core::{Dur, Rate, Time};

/// A piecewise-constant rate: `steps[i] = (offset, rate)` holds from `offset` until the next
/// step; the first offset is zero; the pattern repeats every `period` when looping.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTrace {
    pub steps: Vec<(Dur, Rate)>,
    pub period: Dur,
}

/// Mahimahi delivery opportunities: each entry is a millisecond offset at which up to 1500
/// bytes may leave; the pattern repeats every `period_ms`.
#[derive(Debug, Clone, PartialEq)]
pub struct OpportunityTrace {
    pub times_ms: Vec<u64>,
    pub period_ms: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RateModel {
    Fixed(Rate),
    Steps(StepTrace),
    Opportunities(OpportunityTrace),
}

impl RateModel {
    /// Average rate in bit/s over one period (the fixed rate for `Fixed`).
    pub fn mean_bps(&self) -> f64 {
        unimplemented!()
    }
    /// Bits the link could carry in [from, to) if always busy.
    pub fn capacity_bits(&self, from: Time, to: Time) -> f64 {
        let _ = (from, to);
        unimplemented!()
    }
}

/// Serializes packets one after another according to a [`RateModel`].
#[derive(Debug, Clone)]
pub struct RateServer {
    pub model: RateModel,
}

impl RateServer {
    pub fn new(model: RateModel) -> RateServer {
        RateServer { model }
    }
    /// A packet of `bytes` starts service at `start` (the link is idle then): when does its
    /// last bit leave? Calls come with non-decreasing `start`.
    pub fn finish_time(&mut self, start: Time, bytes: u32) -> Time {
        let _ = (start, bytes);
        unimplemented!()
    }
}
