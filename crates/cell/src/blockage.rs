//! Stochastic blockage of one UE's link: a two-state (clear / blocked) continuous-time Markov
//! process whose blocked periods add an attenuation to the path loss, entered and left by a
//! linear ramp (a body or vehicle crossing the line of sight takes tens of milliseconds).
//!
//! This is the on/off model DC and mobility studies use for a millimetre-wave leg (the NR
//! reference's §2.6, after Gapeyenko et al., IEEE TVT 2017, and Raghavan et al., IEEE TMTT
//! 2019: blockages of a few hundred milliseconds, 15–30 dB deep; TR 38.901 §7.6.4.1 uses 30 dB
//! for self-blocking), not TR 38.901's geometric blockage model A or B, which need a cluster
//! channel model. Blocked periods last an exponential time of mean `mean_blocked_s`; clear
//! periods an exponential time of mean `mean_blocked_s · (1 − fraction) / fraction`, so that
//! over a long run the link is blocked `fraction` of the time. A period starts blocked with
//! probability `fraction` (the stationary distribution). Draws come from the caller's seeded
//! stream, so a run is reproducible.

use multiconn_core::RngStream;

use crate::error::{check_range, CellError};

/// The parameters of a blockage process.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlockageConfig {
    /// Mean duration of a blockage, s (0.3: a few hundred milliseconds).
    pub mean_blocked_s: f64,
    /// Long-run share of time blocked, in (0, 1) (0.15).
    pub fraction: f64,
    /// Attenuation while fully blocked, dB (25).
    pub depth_db: f64,
    /// Time to reach the full depth, and to leave it, s (0.03).
    pub ramp_s: f64,
}

impl Default for BlockageConfig {
    fn default() -> BlockageConfig {
        BlockageConfig { mean_blocked_s: 0.3, fraction: 0.15, depth_db: 25.0, ramp_s: 0.03 }
    }
}

impl BlockageConfig {
    /// Checks every field; errors name `cell.blockage.<field>`.
    pub fn validate(&self) -> Result<(), CellError> {
        check_range("cell.blockage.mean_blocked_s", self.mean_blocked_s, 0.001, 60.0, "s")?;
        check_range("cell.blockage.fraction", self.fraction, 0.001, 0.999, "")?;
        check_range("cell.blockage.depth_db", self.depth_db, 0.0, 60.0, "dB")?;
        check_range("cell.blockage.ramp_s", self.ramp_s, 0.0, 1.0, "s")?;
        Ok(())
    }

    /// Mean duration of a clear period, s.
    pub fn mean_clear_s(&self) -> f64 {
        self.mean_blocked_s * (1.0 - self.fraction) / self.fraction
    }
}

/// One link's blockage over time, asked at non-decreasing times.
#[derive(Clone, Debug)]
pub struct Blockage {
    cfg: BlockageConfig,
    rng: RngStream,
    /// The current period: blocked or clear, from `start_s` to `end_s`.
    blocked: bool,
    start_s: f64,
    end_s: f64,
    /// Blocked periods so far and their total duration (those begun), for reports.
    periods: u64,
}

impl Blockage {
    /// The process of `cfg`, drawing from `rng`, from time 0.
    pub fn new(cfg: BlockageConfig, mut rng: RngStream) -> Result<Blockage, CellError> {
        cfg.validate()?;
        let blocked = rng.bernoulli(cfg.fraction);
        let mut b = Blockage { cfg, rng, blocked, start_s: 0.0, end_s: 0.0, periods: u64::from(blocked) };
        b.end_s = b.draw_duration();
        Ok(b)
    }

    fn draw_duration(&mut self) -> f64 {
        let mean = if self.blocked { self.cfg.mean_blocked_s } else { self.cfg.mean_clear_s() };
        // Inverse transform of an exponential; 1 − u is in (0, 1].
        -mean * (1.0 - self.rng.uniform()).ln()
    }

    /// The attenuation at `t_s` (seconds, not before the last time asked), dB: 0 when clear,
    /// `depth_db` when blocked, linear over `ramp_s` into and out of a blocked period (a period
    /// shorter than its two ramps peaks below the full depth).
    pub fn attenuation_db(&mut self, t_s: f64) -> f64 {
        while t_s >= self.end_s {
            self.blocked = !self.blocked;
            self.start_s = self.end_s;
            self.end_s = self.start_s + self.draw_duration();
            self.periods += u64::from(self.blocked);
        }
        if !self.blocked {
            return 0.0;
        }
        let ramp = self.cfg.ramp_s;
        if ramp <= 0.0 {
            return self.cfg.depth_db;
        }
        let into = (t_s - self.start_s) / ramp;
        let out_of = (self.end_s - t_s) / ramp;
        self.cfg.depth_db * into.min(out_of).clamp(0.0, 1.0)
    }

    /// Blocked periods begun so far.
    pub fn blocked_periods(&self) -> u64 {
        self.periods
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn over_a_long_run_the_share_blocked_and_the_mean_blockage_are_the_configured_ones() {
        let cfg = BlockageConfig { ramp_s: 0.0, ..BlockageConfig::default() };
        let mut b = Blockage::new(cfg, RngStream::derive(7, "blockage")).unwrap();
        let (step, end) = (0.001, 20_000.0);
        let (mut blocked, mut was) = (0u64, false);
        let mut starts = 0u64;
        let n = (end / step) as u64;
        for k in 0..n {
            let on = b.attenuation_db(k as f64 * step) > 0.0;
            blocked += u64::from(on);
            starts += u64::from(on && !was);
            was = on;
        }
        let share = blocked as f64 / n as f64;
        assert!((share - 0.15).abs() < 0.01, "blocked {share} of the time");
        let mean = blocked as f64 * step / starts as f64;
        assert!((mean - 0.3).abs() < 0.02, "mean blockage {mean} s over {starts}");
    }

    #[test]
    fn a_blockage_ramps_in_and_out_linearly_to_its_depth() {
        let cfg = BlockageConfig { mean_blocked_s: 2.0, fraction: 0.5, depth_db: 20.0, ramp_s: 0.1 };
        let mut b = Blockage::new(cfg, RngStream::derive(3, "ramp")).unwrap();
        // Walk to the start of a long blocked period and read the ramp there.
        let mut t = 0.0;
        loop {
            let a = b.attenuation_db(t);
            if b.blocked && b.end_s - b.start_s > 0.5 && t < b.start_s + 0.001 {
                assert!(a < 0.3, "{a}");
                break;
            }
            t += 0.0005;
        }
        let s = b.start_s;
        assert!((b.attenuation_db(s + 0.05) - 10.0).abs() < 1e-9);
        assert!((b.attenuation_db(s + 0.2) - 20.0).abs() < 1e-9);
        let e = b.end_s;
        assert!((b.attenuation_db(e - 0.025) - 5.0).abs() < 1e-6);
        assert_eq!(b.attenuation_db(e + 1e-9), 0.0);
    }

    #[test]
    fn the_same_stream_gives_the_same_process_and_bad_fields_are_named() {
        let trace = |seed| {
            let mut b = Blockage::new(BlockageConfig::default(), RngStream::derive(seed, "x")).unwrap();
            (0..5000).map(|k| b.attenuation_db(k as f64 * 0.002).to_bits()).collect::<Vec<_>>()
        };
        assert_eq!(trace(1), trace(1));
        assert_ne!(trace(1), trace(2));
        for (cfg, field) in [
            (BlockageConfig { fraction: 1.0, ..BlockageConfig::default() }, "cell.blockage.fraction"),
            (BlockageConfig { mean_blocked_s: 0.0, ..BlockageConfig::default() }, "cell.blockage.mean_blocked_s"),
            (BlockageConfig { depth_db: -3.0, ..BlockageConfig::default() }, "cell.blockage.depth_db"),
            (BlockageConfig { ramp_s: f64::NAN, ..BlockageConfig::default() }, "cell.blockage.ramp_s"),
        ] {
            let e = Blockage::new(cfg, RngStream::derive(1, "x")).unwrap_err().to_string();
            assert!(e.contains(field), "{e}");
        }
    }
}
