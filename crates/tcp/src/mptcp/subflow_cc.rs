//! One subflow's view of the connection's congestion control: a [`Controller`] that forwards to
//! the subflow's index in the shared [`MultipathController`] (LIA per RFC 6356, OLIA, BALIA, or
//! one uncoupled controller per subflow).
//!
//! The single-path [`crate::sender::Sender`] owns a `Box<dyn Controller>` and calls it as its
//! loss recovery sees events; giving each subflow's sender one of these handles lets the
//! subflows reuse that sender unchanged while the coupled increase sees every subflow's window
//! and RTT. The handles share the controller through a mutex (endpoints must be `Send`); a
//! connection is driven from one thread, so the lock is never contended.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use multiconn_cc::{AckEvent, CcKind, CcState, Controller, LossEvent, MultipathController, RttEstimator};
use multiconn_core::{Rate, Time};

/// The connection's controller, shared by its subflows.
pub type SharedController = Arc<Mutex<Box<dyn MultipathController>>>;

/// Locks the shared controller. A panic elsewhere while it was held cannot leave it
/// inconsistent in a way that matters more than stopping would, so poisoning is ignored.
pub fn lock(cc: &SharedController) -> MutexGuard<'_, Box<dyn MultipathController>> {
    cc.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Subflow `path`'s handle on the shared controller.
#[derive(Debug)]
pub struct SubflowCc {
    shared: SharedController,
    path: usize,
    kind: CcKind,
}

impl SubflowCc {
    /// `kind` is what [`Controller::kind`] reports: the configured controller when uncoupled,
    /// NewReno for the Reno-based coupled algorithms.
    pub fn new(shared: SharedController, path: usize, kind: CcKind) -> SubflowCc {
        SubflowCc { shared, path, kind }
    }
}

impl Controller for SubflowCc {
    fn on_packet_sent(&mut self, now: Time, bytes: u64, bytes_in_flight: u64) {
        lock(&self.shared).on_packet_sent(self.path, now, bytes, bytes_in_flight);
    }
    fn on_ack(&mut self, now: Time, ack: &AckEvent, rtt: &RttEstimator) {
        lock(&self.shared).on_ack(self.path, now, ack, rtt);
    }
    fn on_congestion_event(&mut self, now: Time, loss: &LossEvent, rtt: &RttEstimator) {
        lock(&self.shared).on_congestion_event(self.path, now, loss, rtt);
    }
    fn on_persistent_congestion(&mut self, now: Time) {
        lock(&self.shared).on_persistent_congestion(self.path, now);
    }
    fn on_spurious_congestion(&mut self, now: Time) {
        lock(&self.shared).on_spurious_congestion(self.path, now);
    }
    fn window(&self) -> u64 {
        lock(&self.shared).window(self.path)
    }
    fn ssthresh(&self) -> Option<u64> {
        lock(&self.shared).ssthresh(self.path)
    }
    fn state(&self) -> CcState {
        lock(&self.shared).state(self.path)
    }
    fn pacing_rate(&self) -> Option<Rate> {
        lock(&self.shared).pacing_rate(self.path)
    }
    fn kind(&self) -> CcKind {
        self.kind
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use multiconn_cc::{build_multipath, CcConfig, CoupledKind};

    #[test]
    fn handles_drive_their_own_path_of_the_shared_controller() {
        let shared: SharedController = Arc::new(Mutex::new(build_multipath(Some(CoupledKind::Lia))));
        let cfg = CcConfig::tcp_default(CcKind::NewReno, 1000);
        let (p0, p1) = {
            let mut cc = lock(&shared);
            (cc.add_path(&cfg), cc.add_path(&cfg))
        };
        let mut a = SubflowCc::new(shared.clone(), p0, CcKind::NewReno);
        let b = SubflowCc::new(shared.clone(), p1, CcKind::NewReno);
        assert_eq!((a.window(), b.window()), (10_000, 10_000));
        a.on_persistent_congestion(Time::ZERO);
        assert_eq!((a.window(), b.window()), (1000, 10_000));
        assert_eq!(lock(&shared).total_window(), 11_000);
        assert_eq!(lock(&shared).coupling(), Some(CoupledKind::Lia));
    }
}
