//! A congestion controller outside multiconn-cc's built-in set, for tests that show a
//! transport acting on what a controller says it needs rather than on its name.
//!
//! [`FixedRate`] keeps one window and asks for one pacing rate for the whole connection, and
//! says whether it must be paced ([`Controller::needs_pacing`]). Tests hand it to TCP and QUIC
//! through [`multiconn_transport::ConnectionParams::external_cc`]: with `paced` the packets
//! leave at its rate whatever the profile says about pacing; without, the window alone limits
//! them. Losses and timeouts leave it unchanged, so what a test measures is the pacing alone.

use multiconn_cc::{AckEvent, CcKind, CcState, ControllerFactory, Controller, LossEvent, RttEstimator};
use multiconn_core::{Rate, Time};
use std::sync::Arc;

/// A fixed window and pacing rate.
#[derive(Clone, Copy, Debug)]
pub struct FixedRate {
    /// Congestion window, bytes.
    pub window: u64,
    /// The pacing rate it asks for.
    pub rate: Rate,
    /// Whether it needs pacing to work.
    pub paced: bool,
}

impl FixedRate {
    /// The factory to put in `ConnectionParams::external_cc`.
    pub fn factory(self) -> ControllerFactory {
        ControllerFactory(Arc::new(move |_cfg| Box::new(self) as Box<dyn Controller>))
    }
}

impl Controller for FixedRate {
    fn on_packet_sent(&mut self, _now: Time, _bytes: u64, _bytes_in_flight: u64) {}
    fn on_ack(&mut self, _now: Time, _ack: &AckEvent, _rtt: &RttEstimator) {}
    fn on_congestion_event(&mut self, _now: Time, _loss: &LossEvent, _rtt: &RttEstimator) {}
    fn on_persistent_congestion(&mut self, _now: Time) {}
    fn window(&self) -> u64 {
        self.window
    }
    fn ssthresh(&self) -> Option<u64> {
        None
    }
    fn state(&self) -> CcState {
        CcState::CongestionAvoidance
    }
    fn pacing_rate(&self) -> Option<Rate> {
        Some(self.rate)
    }
    fn needs_pacing(&self) -> bool {
        self.paced
    }
    fn sets_recovery_window(&self) -> bool {
        true
    }
    fn kind(&self) -> CcKind {
        CcKind::NewReno
    }
}
