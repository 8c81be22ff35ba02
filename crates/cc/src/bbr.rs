//! Placeholder: replaced by the real implementation in this change set.

use crate::newreno::NewReno;
use crate::{AckEvent, CcConfig, CcKind, CcState, Controller, LossEvent, RttEstimator};
use multiconn_core::Time;

#[derive(Debug, Clone)]
pub struct Bbr(NewReno);

impl Bbr {
    pub fn new(cfg: CcConfig) -> Bbr {
        Bbr(NewReno::new(cfg))
    }
}

impl Controller for Bbr {
    fn on_packet_sent(&mut self, now: Time, bytes: u64, bif: u64) { self.0.on_packet_sent(now, bytes, bif) }
    fn on_ack(&mut self, now: Time, ack: &AckEvent, rtt: &RttEstimator) { self.0.on_ack(now, ack, rtt) }
    fn on_congestion_event(&mut self, now: Time, loss: &LossEvent, rtt: &RttEstimator) { self.0.on_congestion_event(now, loss, rtt) }
    fn on_persistent_congestion(&mut self, now: Time) { self.0.on_persistent_congestion(now) }
    fn window(&self) -> u64 { self.0.window() }
    fn ssthresh(&self) -> Option<u64> { self.0.ssthresh() }
    fn state(&self) -> CcState { self.0.state() }
    fn kind(&self) -> CcKind { CcKind::Bbr }
}
