//! Radio link monitoring and radio link failure detection, TS 38.331 §5.3.10 (timers and
//! constants §7.1–§7.3, defaults §9.2.3; TS 36.331 §5.3.11 has the same machine): the
//! physical layer gives one indication per radio link monitoring period, out-of-sync or
//! in-sync; N310 consecutive out-of-sync indications start T310, N311 consecutive in-sync
//! indications while T310 runs stop it, and T310's expiry is a radio link failure (RLF).
//!
//! The indications are modelled from the wideband SINR of the period (a stand-in for the
//! hypothetical PDCCH BLER of TS 38.133 §8.1): strictly below Qout (−8 dB by default) is
//! out-of-sync, strictly above Qin (−6 dB) is in-sync, and in between (bounds included) there
//! is no indication. A period with no indication breaks a run of "consecutive" indications of
//! either kind: both counters restart from zero, so N310 (or N311) indications must come in
//! N310 (N311) periods in a row. These thresholds are typical model values, not specification
//! text.
//!
//! Time: the caller feeds [`LinkMonitor::step`] once per monitoring period. T310 starts at the
//! instant of the N310-th out-of-sync indication and expires exactly T310 later
//! ([`LinkMonitor::t310_expiry_ns`]). A caller that schedules that instant calls
//! [`LinkMonitor::handle_timeout`] then; otherwise the next step at or after the expiry reports
//! the failure (so at the monitoring-period resolution), without using that step's indication
//! (the timer expired first). [`LinkMonitor::failure_time_ns`] is always the exact expiry
//! instant. After a failure the monitor reports nothing until [`LinkMonitor::reset`].
//!
//! Not modelled: the other RLF causes (random-access problem, RLC maximum retransmissions),
//! which the caller raises itself, and the rule that T310 does not start while T300, T301,
//! T304, T311 or T319 run (the caller does not feed the monitor during a handover and resets
//! it after one, as 38.331 resets the counters on `reconfigurationWithSync`).

use crate::error::CellError;

/// The `t310` values of TS 38.331 (`RLF-TimersAndConstants`), ms.
pub const T310_MS: [u32; 9] = [0, 50, 100, 200, 500, 1000, 2000, 4000, 6000];
/// The `n310` values of TS 38.331.
pub const N310_VALUES: [u32; 8] = [1, 2, 3, 4, 6, 8, 10, 20];
/// The `n311` values of TS 38.331.
pub const N311_VALUES: [u32; 8] = [1, 2, 3, 4, 5, 6, 8, 10];

/// The radio link monitoring parameters of a UE's SpCell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RlmConfig {
    /// T310, ms: one of [`T310_MS`] (1000 by default, 38.331 §9.2.3).
    pub t310_ms: u32,
    /// N310, out-of-sync indications in a row to start T310: one of [`N310_VALUES`] (1).
    pub n310: u32,
    /// N311, in-sync indications in a row to stop T310: one of [`N311_VALUES`] (1).
    pub n311: u32,
    /// Qout, dB: SINR strictly below it is out-of-sync (−8, a model value).
    pub q_out_db: f64,
    /// Qin, dB: SINR strictly above it is in-sync (−6, a model value); must exceed Qout.
    pub q_in_db: f64,
}

impl Default for RlmConfig {
    fn default() -> RlmConfig {
        RlmConfig { t310_ms: 1000, n310: 1, n311: 1, q_out_db: -8.0, q_in_db: -6.0 }
    }
}

impl RlmConfig {
    /// Checks every field; errors name `rrc.<field>` and list the allowed values.
    pub fn validate(&self) -> Result<(), CellError> {
        if !T310_MS.contains(&self.t310_ms) {
            return Err(CellError::out_of_range(
                "rrc.t310_ms",
                f64::from(self.t310_ms),
                "one of 0, 50, 100, 200, 500, 1000, 2000, 4000, 6000 ms (TS 38.331 t310)",
            ));
        }
        if !N310_VALUES.contains(&self.n310) {
            return Err(CellError::out_of_range("rrc.n310", f64::from(self.n310), "one of 1, 2, 3, 4, 6, 8, 10, 20 (TS 38.331 n310)"));
        }
        if !N311_VALUES.contains(&self.n311) {
            return Err(CellError::out_of_range("rrc.n311", f64::from(self.n311), "one of 1, 2, 3, 4, 5, 6, 8, 10 (TS 38.331 n311)"));
        }
        if !self.q_out_db.is_finite() {
            return Err(CellError::out_of_range("rrc.q_out_db", self.q_out_db, "a finite SINR in dB"));
        }
        if !self.q_in_db.is_finite() || self.q_in_db <= self.q_out_db {
            let allowed = format!("a finite SINR in dB above q_out_db = {}", self.q_out_db);
            return Err(CellError::out_of_range("rrc.q_in_db", self.q_in_db, &allowed));
        }
        Ok(())
    }

    /// The indication of a period whose wideband SINR is `sinr_db` (NaN gives none).
    pub fn indication(&self, sinr_db: f64) -> SyncIndication {
        if sinr_db < self.q_out_db {
            SyncIndication::OutOfSync
        } else if sinr_db > self.q_in_db {
            SyncIndication::InSync
        } else {
            SyncIndication::Neither
        }
    }
}

/// What the physical layer indicates for one monitoring period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncIndication {
    /// SINR below Qout.
    OutOfSync,
    /// SINR above Qin.
    InSync,
    /// SINR in [Qout, Qin]: no indication (breaks both runs).
    Neither,
}

/// What happened at one step of the monitor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkEvent {
    /// No change.
    Nothing,
    /// N310 out-of-sync in a row: T310 started now.
    T310Started,
    /// N311 in-sync in a row while T310 ran: T310 stopped now.
    T310Stopped,
    /// T310 expired (at [`LinkMonitor::failure_time_ns`]): radio link failure.
    RadioLinkFailure,
}

/// The radio link monitoring state of one UE's SpCell (see the module header).
#[derive(Clone, Debug)]
pub struct LinkMonitor {
    cfg: RlmConfig,
    out_of_sync: u32,
    in_sync: u32,
    /// When T310 started, if it is running.
    t310_start_ns: Option<u64>,
    /// When T310 expired, once it has.
    failure_ns: Option<u64>,
    last_ns: Option<u64>,
}

impl LinkMonitor {
    /// A monitor of `cfg`, T310 not running; errors as [`RlmConfig::validate`].
    pub fn new(cfg: RlmConfig) -> Result<LinkMonitor, CellError> {
        cfg.validate()?;
        Ok(LinkMonitor { cfg, out_of_sync: 0, in_sync: 0, t310_start_ns: None, failure_ns: None, last_ns: None })
    }

    /// The configuration.
    pub fn config(&self) -> &RlmConfig {
        &self.cfg
    }

    fn t310_ns(&self) -> u64 {
        u64::from(self.cfg.t310_ms) * 1_000_000
    }

    fn check_time(&self, time_ns: u64) -> Result<(), CellError> {
        match self.last_ns {
            Some(last) if time_ns < last => {
                Err(CellError::invalid("time_ns", format!("{time_ns} ns is before the previous call at {last} ns")))
            }
            _ => Ok(()),
        }
    }

    /// Fails the link if T310 runs and has expired by `time_ns`.
    fn expire(&mut self, time_ns: u64) -> bool {
        match self.t310_expiry_ns() {
            Some(expiry) if time_ns >= expiry => {
                self.t310_start_ns = None;
                self.failure_ns = Some(expiry);
                true
            }
            _ => false,
        }
    }

    /// Takes the monitoring period ending at `time_ns` (not before the previous call) whose
    /// wideband SINR was `sinr_db` (−∞ counts as out-of-sync, +∞ as in-sync) and returns what
    /// happened. If T310 expired by `time_ns`, that is the failure and the SINR is not used.
    ///
    /// Errors, leaving the monitor as it was: `time_ns` before the previous call, `sinr_db` NaN.
    pub fn step(&mut self, time_ns: u64, sinr_db: f64) -> Result<LinkEvent, CellError> {
        self.check_time(time_ns)?;
        if sinr_db.is_nan() {
            return Err(CellError::out_of_range("sinr_db", sinr_db, "a SINR in dB (not NaN)"));
        }
        self.last_ns = Some(time_ns);
        if self.failure_ns.is_some() {
            return Ok(LinkEvent::Nothing);
        }
        if self.expire(time_ns) {
            return Ok(LinkEvent::RadioLinkFailure);
        }
        match self.cfg.indication(sinr_db) {
            SyncIndication::OutOfSync => {
                self.out_of_sync = self.out_of_sync.saturating_add(1);
                self.in_sync = 0;
            }
            SyncIndication::InSync => {
                self.in_sync = self.in_sync.saturating_add(1);
                self.out_of_sync = 0;
            }
            SyncIndication::Neither => {
                self.in_sync = 0;
                self.out_of_sync = 0;
            }
        }
        if self.t310_start_ns.is_some() {
            if self.in_sync >= self.cfg.n311 {
                self.t310_start_ns = None;
                self.in_sync = 0;
                return Ok(LinkEvent::T310Stopped);
            }
        } else if self.out_of_sync >= self.cfg.n310 {
            self.t310_start_ns = Some(time_ns);
            self.out_of_sync = 0;
            // T310 = 0 ms expires as it starts.
            if self.expire(time_ns) {
                return Ok(LinkEvent::RadioLinkFailure);
            }
            return Ok(LinkEvent::T310Started);
        }
        Ok(LinkEvent::Nothing)
    }

    /// The timer callback: at `time_ns` (not before the previous call), reports the failure if
    /// T310 runs and has expired ([`LinkEvent::RadioLinkFailure`]), else [`LinkEvent::Nothing`].
    /// Takes no indication.
    pub fn handle_timeout(&mut self, time_ns: u64) -> Result<LinkEvent, CellError> {
        self.check_time(time_ns)?;
        self.last_ns = Some(time_ns);
        Ok(if self.expire(time_ns) { LinkEvent::RadioLinkFailure } else { LinkEvent::Nothing })
    }

    /// Whether T310 is running.
    pub fn t310_running(&self) -> bool {
        self.t310_start_ns.is_some()
    }

    /// The instant T310 expires (start + T310), ns, while it runs.
    pub fn t310_expiry_ns(&self) -> Option<u64> {
        self.t310_start_ns.map(|s| s.saturating_add(self.t310_ns()))
    }

    /// Whether the radio link has failed (until [`LinkMonitor::reset`]).
    pub fn has_failed(&self) -> bool {
        self.failure_ns.is_some()
    }

    /// The exact instant of the failure (T310's expiry), ns, once failed.
    pub fn failure_time_ns(&self) -> Option<u64> {
        self.failure_ns
    }

    /// Out-of-sync indications in the current run.
    pub fn consecutive_out_of_sync(&self) -> u32 {
        self.out_of_sync
    }

    /// In-sync indications in the current run.
    pub fn consecutive_in_sync(&self) -> u32 {
        self.in_sync
    }

    /// Back to the initial state (a new or re-established link, or after a handover): counters
    /// zero, T310 stopped, no failure; the next call may have any time.
    pub fn reset(&mut self) {
        self.out_of_sync = 0;
        self.in_sync = 0;
        self.t310_start_ns = None;
        self.failure_ns = None;
        self.last_ns = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn monitor(t310_ms: u32, n310: u32, n311: u32) -> LinkMonitor {
        LinkMonitor::new(RlmConfig { t310_ms, n310, n311, ..RlmConfig::default() }).unwrap()
    }

    /// Steps every `period_ms` from 0 with `sinr`; the (time ms, event) of every non-Nothing step.
    fn run(m: &mut LinkMonitor, period_ms: u64, sinr: &[f64]) -> Vec<(u64, LinkEvent)> {
        let mut out = Vec::new();
        for (i, &s) in sinr.iter().enumerate() {
            let t = i as u64 * period_ms;
            let e = m.step(t * MS, s).unwrap();
            if e != LinkEvent::Nothing {
                out.push((t, e));
            }
        }
        out
    }

    #[test]
    fn defaults_are_those_of_38_331() {
        let c = RlmConfig::default();
        assert_eq!((c.t310_ms, c.n310, c.n311), (1000, 1, 1));
        assert_eq!((c.q_out_db, c.q_in_db), (-8.0, -6.0));
        assert!(c.validate().is_ok());
    }

    #[test]
    fn the_indication_bands_are_strict() {
        let c = RlmConfig::default();
        assert_eq!(c.indication(-8.01), SyncIndication::OutOfSync);
        assert_eq!(c.indication(-8.0), SyncIndication::Neither);
        assert_eq!(c.indication(-7.0), SyncIndication::Neither);
        assert_eq!(c.indication(-6.0), SyncIndication::Neither);
        assert_eq!(c.indication(-5.99), SyncIndication::InSync);
        assert_eq!(c.indication(f64::NEG_INFINITY), SyncIndication::OutOfSync);
    }

    #[test]
    fn rlf_comes_exactly_t310_after_the_n310th_out_of_sync() {
        // Defaults, 10 ms periods, SINR below Qout throughout: T310 starts at 0, RLF at 1000 ms.
        let mut m = LinkMonitor::new(RlmConfig::default()).unwrap();
        let ev = run(&mut m, 10, &[-10.0; 150]);
        assert_eq!(ev, vec![(0, LinkEvent::T310Started), (1000, LinkEvent::RadioLinkFailure)]);
        assert_eq!(m.failure_time_ns(), Some(1000 * MS));
        assert!(m.has_failed() && !m.t310_running());

        // N310 = 4: the fourth out-of-sync is at 30 ms, so RLF at 1030 ms.
        let mut m = monitor(1000, 4, 1);
        let ev = run(&mut m, 10, &[-10.0; 150]);
        assert_eq!(ev, vec![(30, LinkEvent::T310Started), (1030, LinkEvent::RadioLinkFailure)]);
    }

    #[test]
    fn an_expiry_between_periods_is_reported_at_the_next_step_with_its_exact_time() {
        // 30 ms periods, T310 = 100 ms from 0: expiry at 100 ms, between the steps at 90 and 120.
        let mut m = monitor(100, 1, 1);
        assert_eq!(m.step(0, -10.0).unwrap(), LinkEvent::T310Started);
        assert_eq!(m.t310_expiry_ns(), Some(100 * MS));
        for t in [30, 60, 90] {
            assert_eq!(m.step(t * MS, -10.0).unwrap(), LinkEvent::Nothing);
        }
        // An in-sync at 120 ms comes too late: the timer expired first.
        assert_eq!(m.step(120 * MS, 10.0).unwrap(), LinkEvent::RadioLinkFailure);
        assert_eq!(m.failure_time_ns(), Some(100 * MS));
        assert_eq!(m.step(150 * MS, -10.0).unwrap(), LinkEvent::Nothing, "nothing after the failure");

        // A caller scheduling the expiry gets it exactly.
        let mut m = monitor(100, 1, 1);
        m.step(0, -10.0).unwrap();
        m.step(90 * MS, -10.0).unwrap();
        assert_eq!(m.handle_timeout(100 * MS - 1).unwrap(), LinkEvent::Nothing);
        assert_eq!(m.handle_timeout(100 * MS).unwrap(), LinkEvent::RadioLinkFailure);
        assert_eq!(m.failure_time_ns(), Some(100 * MS));
    }

    #[test]
    fn n311_in_syncs_stop_t310_and_there_is_no_failure() {
        let mut m = monitor(200, 2, 3);
        let mut sinr = vec![-10.0, -10.0]; // T310 starts at 10 ms
        sinr.extend([0.0, 0.0, 0.0]); // third in-sync at 40 ms stops it
        sinr.extend([-7.0; 30]); // no indications: nothing starts it again
        let ev = run(&mut m, 10, &sinr);
        assert_eq!(ev, vec![(10, LinkEvent::T310Started), (40, LinkEvent::T310Stopped)]);
        assert!(!m.t310_running() && !m.has_failed());
        assert_eq!(m.handle_timeout(1000 * MS).unwrap(), LinkEvent::Nothing);
    }

    #[test]
    fn a_period_without_indication_breaks_both_runs() {
        // N311 = 3: in, in, (none), in, in keeps T310 running; the third in a row stops it.
        let mut m = monitor(1000, 1, 3);
        let ev = run(&mut m, 10, &[-10.0, -5.0, -5.0, -7.0, -5.0, -5.0, -5.0]);
        assert_eq!(ev, vec![(0, LinkEvent::T310Started), (60, LinkEvent::T310Stopped)]);

        // N310 = 3: out, out, (none), out, out does not start T310; the third in a row does.
        let mut m = monitor(1000, 3, 1);
        let ev = run(&mut m, 10, &[-9.0, -9.0, -8.0, -9.0, -9.0]);
        assert!(ev.is_empty(), "{ev:?}");
        assert_eq!(m.consecutive_out_of_sync(), 2);
        assert_eq!(m.step(50 * MS, -9.0).unwrap(), LinkEvent::T310Started);

        // An in-sync breaks an out-of-sync run too.
        let mut m = monitor(1000, 2, 1);
        let ev = run(&mut m, 10, &[-9.0, -5.0, -9.0, -5.0, -9.0]);
        assert!(ev.is_empty(), "{ev:?}");
        assert_eq!(m.consecutive_in_sync(), 0);
        assert_eq!(m.consecutive_out_of_sync(), 1);
    }

    #[test]
    fn out_of_sync_while_t310_runs_does_not_restart_it() {
        let mut m = monitor(500, 1, 2);
        // Start at 0, one in-sync (not enough), out-of-sync again: expiry stays at 500 ms.
        let ev = run(&mut m, 100, &[-10.0, 0.0, -10.0, -10.0, -10.0, -10.0]);
        assert_eq!(ev, vec![(0, LinkEvent::T310Started), (500, LinkEvent::RadioLinkFailure)]);
    }

    #[test]
    fn t310_zero_fails_at_the_n310th_out_of_sync_and_reset_clears_it() {
        let mut m = monitor(0, 2, 1);
        let ev = run(&mut m, 10, &[-10.0, -10.0, -10.0]);
        assert_eq!(ev, vec![(10, LinkEvent::RadioLinkFailure)]);
        assert_eq!(m.failure_time_ns(), Some(10 * MS));
        m.reset();
        assert!(!m.has_failed() && !m.t310_running());
        assert_eq!(m.step(0, -10.0).unwrap(), LinkEvent::Nothing, "the first out-of-sync of a new run");
        assert_eq!(m.step(MS, -10.0).unwrap(), LinkEvent::RadioLinkFailure);
    }

    #[test]
    fn bad_values_are_refused() {
        let d = RlmConfig::default();
        let cases = [
            (RlmConfig { t310_ms: 300, ..d }, "rrc.t310_ms", "0, 50, 100, 200, 500, 1000, 2000, 4000, 6000"),
            (RlmConfig { n310: 5, ..d }, "rrc.n310", "1, 2, 3, 4, 6, 8, 10, 20"),
            (RlmConfig { n310: 0, ..d }, "rrc.n310", "1, 2, 3, 4, 6, 8, 10, 20"),
            (RlmConfig { n311: 7, ..d }, "rrc.n311", "1, 2, 3, 4, 5, 6, 8, 10"),
            (RlmConfig { q_in_db: -8.0, ..d }, "rrc.q_in_db", "above q_out_db"),
            (RlmConfig { q_in_db: f64::NAN, ..d }, "rrc.q_in_db", "finite"),
            (RlmConfig { q_out_db: f64::NEG_INFINITY, ..d }, "rrc.q_out_db", "finite"),
        ];
        for (cfg, field, allowed) in cases {
            let e = LinkMonitor::new(cfg).unwrap_err().to_string();
            assert!(e.contains(field) && e.contains(allowed), "{e}");
        }
        for t310_ms in T310_MS {
            for n310 in N310_VALUES {
                for n311 in N311_VALUES {
                    assert!(RlmConfig { t310_ms, n310, n311, ..d }.validate().is_ok());
                }
            }
        }
        let mut m = LinkMonitor::new(d).unwrap();
        assert_eq!(m.step(10 * MS, -10.0).unwrap(), LinkEvent::T310Started);
        let e = m.step(10 * MS - 1, -10.0).unwrap_err().to_string();
        assert!(e.contains("time_ns"), "{e}");
        assert!(m.handle_timeout(MS).is_err());
        let e = m.step(20 * MS, f64::NAN).unwrap_err().to_string();
        assert!(e.contains("sinr_db"), "{e}");
        // The refused calls changed nothing: expiry still at 1010 ms.
        assert_eq!(m.t310_expiry_ns(), Some(1010 * MS));
        assert_eq!(m.step(1010 * MS, 0.0).unwrap(), LinkEvent::RadioLinkFailure);
    }
}
