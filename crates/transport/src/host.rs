//! The host an endpoint runs on, as a source of timing noise: the CPU time its process spends
//! on each packet and how late its timers fire.
//!
//! Real runs of the same transfer spread (kernel TCP behind a 50-packet queue: about ±16 % of
//! goodput from run to run) because the hosts' processes take a varying time per packet and wake
//! up late, which moves every later send and every drop at the bottleneck. The simulator is
//! otherwise exact, so repetitions of a scenario without random losses or delays are
//! identical. With [`HostKnobs`] set, each endpoint's process is a single FIFO server:
//!
//! * every packet it sends and every packet it is handed passes it in turn, taking a service
//!   time drawn from a log-normal distribution of mean `per_packet` and coefficient of
//!   variation `per_packet_cv` (the shape measured for per-packet processing times, heavy on
//!   the right; zero CV: a constant cost);
//! * every timer it sets fires late by an exponential draw of mean `timer_lateness` (Linux
//!   wakes a user-space timer up to its timer slack late, 50 µs by default: prctl(2)
//!   PR_SET_TIMERSLACK, plus the scheduler's wake-up latency).
//!
//! Off (every knob zero) by default: nothing is drawn and nothing is delayed, so a run is
//! byte-identical to one without the model. The draws come from the endpoint's own stream,
//! so the same seed gives the same run.

use multiconn_core::{Dur, RngStream, Time};
use serde::Deserialize;

/// `[host]` of a profile, or `[flow.host]` of a scenario: the timing noise of the process an
/// endpoint runs in. All zero: none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostKnobs {
    /// Mean CPU time the process spends on each packet it sends or receives.
    #[serde(default)]
    pub per_packet: Dur,
    /// Coefficient of variation of that time (log-normal); zero: constant.
    #[serde(default)]
    pub per_packet_cv: f64,
    /// Mean lateness of the process's timers (exponential).
    #[serde(default)]
    pub timer_lateness: Dur,
}

impl HostKnobs {
    /// No noise at all.
    pub fn is_off(&self) -> bool {
        self.per_packet == Dur::ZERO && self.timer_lateness == Dur::ZERO
    }

    /// The first knob out of range, as (field, what is allowed).
    pub fn invalid(&self) -> Option<(&'static str, &'static str)> {
        if !self.per_packet_cv.is_finite() || !(0.0..=10.0).contains(&self.per_packet_cv) {
            return Some(("per_packet_cv", "a number from 0 to 10"));
        }
        if self.per_packet > Dur::from_millis(100) {
            return Some(("per_packet", "at most 100 ms"));
        }
        if self.timer_lateness > Dur::from_millis(100) {
            return Some(("timer_lateness", "at most 100 ms"));
        }
        None
    }
}

/// One endpoint's process: a FIFO server with random service times and late timers.
#[derive(Clone, Debug)]
pub struct HostCpu {
    knobs: HostKnobs,
    rng: RngStream,
    free_at: Time,
    /// Log-normal parameters of the service time (in ns): μ and σ of its logarithm.
    mu: f64,
    sigma: f64,
}

impl HostCpu {
    /// The process of an endpoint, drawing from `rng`; `None` when `knobs` add no noise.
    pub fn new(knobs: HostKnobs, rng: RngStream) -> Option<HostCpu> {
        if knobs.is_off() {
            return None;
        }
        let mean = knobs.per_packet.0 as f64;
        let sigma2 = (1.0 + knobs.per_packet_cv * knobs.per_packet_cv).ln();
        let mu = if mean > 0.0 { mean.ln() - sigma2 / 2.0 } else { 0.0 };
        Some(HostCpu { knobs, rng, free_at: Time::ZERO, mu, sigma: sigma2.sqrt() })
    }

    fn normal(&mut self) -> f64 {
        // Box-Muller; 1 - u keeps the logarithm finite.
        let u1 = 1.0 - self.rng.uniform();
        let u2 = self.rng.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// One packet's CPU time.
    pub fn service_time(&mut self) -> Dur {
        if self.knobs.per_packet == Dur::ZERO {
            return Dur::ZERO;
        }
        if self.sigma == 0.0 {
            return self.knobs.per_packet;
        }
        let z = self.normal();
        Dur((self.mu + self.sigma * z).exp().round() as u64)
    }

    /// A packet reaches the process at `now`: when the process is done with it (after the
    /// packets before it).
    pub fn process(&mut self, now: Time) -> Time {
        let start = now.max(self.free_at);
        self.free_at = start + self.service_time();
        self.free_at
    }

    /// How late a timer set now will fire.
    pub fn timer_lateness(&mut self) -> Dur {
        if self.knobs.timer_lateness == Dur::ZERO {
            return Dur::ZERO;
        }
        let u = 1.0 - self.rng.uniform();
        Dur((-(self.knobs.timer_lateness.0 as f64) * u.ln()).round() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(per_packet_us: u64, cv: f64, lateness_us: u64) -> HostCpu {
        let knobs = HostKnobs { per_packet: Dur::from_micros(per_packet_us), per_packet_cv: cv, timer_lateness: Dur::from_micros(lateness_us) };
        HostCpu::new(knobs, RngStream::derive(7, "test/host")).expect("noise on")
    }

    #[test]
    fn off_knobs_build_no_process() {
        assert!(HostCpu::new(HostKnobs::default(), RngStream::derive(1, "x")).is_none());
        assert!(HostCpu::new(HostKnobs { per_packet_cv: 1.0, ..Default::default() }, RngStream::derive(1, "x")).is_none());
    }

    #[test]
    fn service_times_have_the_mean_and_cv_asked_for() {
        let mut c = cpu(50, 1.0, 0);
        let xs: Vec<f64> = (0..200_000).map(|_| c.service_time().0 as f64).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (xs.len() - 1) as f64;
        assert!((mean / 50_000.0 - 1.0).abs() < 0.02, "mean {mean}");
        assert!((var.sqrt() / mean - 1.0).abs() < 0.05, "cv {}", var.sqrt() / mean);
        // Log-normal: the median is below the mean (mean / sqrt(1 + cv²) = 35.4 µs).
        let mut sorted = xs.clone();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        assert!((median / 35_355.0 - 1.0).abs() < 0.03, "median {median}");
    }

    #[test]
    fn zero_cv_is_a_constant_cost_and_the_server_queues_in_order() {
        let mut c = cpu(10, 0.0, 0);
        assert_eq!(c.process(Time(0)), Time(10_000));
        assert_eq!(c.process(Time(0)), Time(20_000), "the second packet waits for the first");
        assert_eq!(c.process(Time(50_000)), Time(60_000), "an idle process starts at once");
        assert_eq!(c.timer_lateness(), Dur::ZERO);
    }

    #[test]
    fn timer_lateness_is_exponential_with_the_mean_asked_for() {
        let mut c = cpu(0, 0.0, 50);
        let xs: Vec<f64> = (0..200_000).map(|_| c.timer_lateness().0 as f64).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        assert!((mean / 50_000.0 - 1.0).abs() < 0.02, "mean {mean}");
        // Exponential: P(X > mean) = 1/e.
        let above = xs.iter().filter(|&&x| x > 50_000.0).count() as f64 / xs.len() as f64;
        assert!((above - (-1f64).exp()).abs() < 0.01, "tail {above}");
    }

    #[test]
    fn the_same_stream_draws_the_same_times() {
        let (mut a, mut b) = (cpu(20, 0.5, 30), cpu(20, 0.5, 30));
        for _ in 0..100 {
            assert_eq!(a.process(Time(0)), b.process(Time(0)));
            assert_eq!(a.timer_lateness(), b.timer_lateness());
        }
    }

    #[test]
    fn out_of_range_knobs_are_named() {
        let k = HostKnobs { per_packet_cv: -1.0, ..Default::default() };
        assert_eq!(k.invalid().map(|x| x.0), Some("per_packet_cv"));
        let k = HostKnobs { per_packet: Dur::from_millis(200), ..Default::default() };
        assert_eq!(k.invalid().map(|x| x.0), Some("per_packet"));
        assert_eq!(HostKnobs::default().invalid(), None);
    }
}
