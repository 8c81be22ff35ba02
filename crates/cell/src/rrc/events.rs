//! Measurement report triggering, TS 38.331 §5.5.4 (TS 36.331 §5.5.4 has the same form): the
//! entering and leaving conditions of events A1, A2, A3, A4, A5 and B1 on layer-3 filtered
//! values (see [`super::l3_filter`]), with hysteresis, offsets and time-to-trigger.
//!
//! M is in dBm (RSRP) or dB (RSRQ, SINR); Ofn/Ofp are the frequency offsets of the neighbour's
//! and the SpCell's frequency, Ocn/Ocp their cell-individual offsets, Hys the hysteresis and
//! Off the a3-Offset, all dB:
//!
//! | event | entering condition | leaving condition |
//! |---|---|---|
//! | A1 | Ms − Hys > Thresh | Ms + Hys < Thresh |
//! | A2 | Ms + Hys < Thresh | Ms − Hys > Thresh |
//! | A3 | Mn + Ofn + Ocn − Hys > Mp + Ofp + Ocp + Off | Mn + Ofn + Ocn + Hys < Mp + Ofp + Ocp + Off |
//! | A4 | Mn + Ofn + Ocn − Hys > Thresh | Mn + Ofn + Ocn + Hys < Thresh |
//! | A5 | Mp + Hys < Thresh1 and Mn + Ofn + Ocn − Hys > Thresh2 | Mp − Hys > Thresh1 or Mn + Ofn + Ocn + Hys < Thresh2 |
//! | B1 | Mn + Ofn + Ocn − Hys > Thresh | Mn + Ofn + Ocn + Hys < Thresh |
//!
//! (B1 is the inter-RAT event, e.g. NR SCG addition in EN-DC; its form is A4's.)
//!
//! An [`EventMonitor`] holds one event configuration of one UE. It is fed the filtered values at
//! each measurement instant ([`EventMonitor::step`]) and evaluates the conditions at those
//! instants only:
//!
//! * **Entering.** A cell (the serving cell for A1/A2, each neighbour separately for A3, A4, A5
//!   and B1) is reported at the first sample at which its entering condition has held at every
//!   sample since a first sample at `t0` with `now − t0 ≥ timeToTrigger`; a sample at which it
//!   does not hold restarts the timer. With timeToTrigger 0 the first sample that meets the
//!   condition reports.
//! * **reportAmount 1.** Once reported, the cell is in the `cellsTriggeredList` and is not
//!   reported again (no periodic reports) until it leaves the list.
//! * **Leaving.** As in §5.5.4.1, a triggered cell leaves the list when its leaving condition
//!   has held at every sample for timeToTrigger (the same timer rule as entering). Between the
//!   two conditions (the hysteresis band) nothing changes. Leaving is not reported
//!   (`reportOnLeave` false); [`EventMonitor::triggered_cells`] shows the list.
//! * **Report content.** A report lists the cells whose timeToTrigger completed at this
//!   instant, best measured value first (ties by cell id). The 38.331 report would also carry
//!   the cells already in the list; a caller wanting them reads
//!   [`EventMonitor::triggered_cells`].
//! * **Unmeasured cells.** A neighbour absent from a sample is not known to meet either
//!   condition: its running entering or leaving timer restarts, and a triggered cell stays
//!   triggered. [`EventMonitor::forget_cell`] drops a cell (e.g. removed from the measurement
//!   object).
//!
//! Parameter ranges are the ASN.1 ones of TS 38.331: `Hysteresis` 0..30 (× 0.5 dB),
//! `a3-Offset` −30..30 (× 0.5 dB), `TimeToTrigger` ms0 … ms5120 ([`TIME_TO_TRIGGER_MS`]) and
//! `Q-OffsetRange` for Ofn, Ofp, Ocn and Ocp ([`Q_OFFSET_RANGE_DB`]). Thresholds are only
//! required to be finite: their range depends on the quantity (RSRP, RSRQ or SINR), which the
//! monitor does not know.

use std::collections::BTreeMap;

use crate::error::CellError;

/// A neighbour cell's identity within one measurement (a small integer chosen by the caller,
/// e.g. the physical cell id).
pub type CellId = u16;

/// The `TimeToTrigger` values of TS 38.331, ms.
pub const TIME_TO_TRIGGER_MS: [u32; 16] = [0, 40, 64, 80, 100, 128, 160, 256, 320, 480, 512, 640, 1024, 1280, 2560, 5120];

/// The `Q-OffsetRange` values of TS 38.331 (frequency and cell-individual offsets), dB.
pub const Q_OFFSET_RANGE_DB: [i8; 31] =
    [-24, -22, -20, -18, -16, -14, -12, -10, -8, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24];

const TIME_TO_TRIGGER_TEXT: &str =
    "one of 0, 40, 64, 80, 100, 128, 160, 256, 320, 480, 512, 640, 1024, 1280, 2560, 5120 ms (TS 38.331 TimeToTrigger)";
const Q_OFFSET_TEXT: &str = "one of -24, -22, -20, -18, -16, -14, -12, -10, -8, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 8, 10, 12, \
     14, 16, 18, 20, 22, 24 dB (TS 38.331 Q-OffsetRange)";

/// Which event, without its thresholds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventKind {
    /// Serving becomes better than a threshold.
    A1,
    /// Serving becomes worse than a threshold.
    A2,
    /// Neighbour becomes offset better than the SpCell.
    A3,
    /// Neighbour becomes better than a threshold.
    A4,
    /// SpCell becomes worse than threshold1 and neighbour better than threshold2.
    A5,
    /// Inter-RAT neighbour becomes better than a threshold.
    B1,
}

impl EventKind {
    /// Whether the event is about neighbour cells (A3, A4, A5, B1) rather than the serving cell
    /// alone (A1, A2).
    pub fn is_neighbour_event(self) -> bool {
        !matches!(self, EventKind::A1 | EventKind::A2)
    }
}

/// An event with its thresholds (dBm or dB, in the quantity's unit) or offset.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MeasEvent {
    /// A1: Ms − Hys > `threshold`.
    A1 {
        /// a1-Threshold.
        threshold: f64,
    },
    /// A2: Ms + Hys < `threshold`.
    A2 {
        /// a2-Threshold.
        threshold: f64,
    },
    /// A3: Mn + Ofn + Ocn − Hys > Mp + Ofp + Ocp + `offset_db`.
    A3 {
        /// a3-Offset (Off), dB: a multiple of 0.5 in [−15, 15].
        offset_db: f64,
    },
    /// A4: Mn + Ofn + Ocn − Hys > `threshold`.
    A4 {
        /// a4-Threshold.
        threshold: f64,
    },
    /// A5: Mp + Hys < `threshold1` and Mn + Ofn + Ocn − Hys > `threshold2`.
    A5 {
        /// a5-Threshold1, on the SpCell.
        threshold1: f64,
        /// a5-Threshold2, on the neighbour.
        threshold2: f64,
    },
    /// B1: Mn + Ofn + Ocn − Hys > `threshold` (inter-RAT neighbour).
    B1 {
        /// b1-Threshold.
        threshold: f64,
    },
}

impl MeasEvent {
    /// The event's kind.
    pub fn kind(&self) -> EventKind {
        match self {
            MeasEvent::A1 { .. } => EventKind::A1,
            MeasEvent::A2 { .. } => EventKind::A2,
            MeasEvent::A3 { .. } => EventKind::A3,
            MeasEvent::A4 { .. } => EventKind::A4,
            MeasEvent::A5 { .. } => EventKind::A5,
            MeasEvent::B1 { .. } => EventKind::B1,
        }
    }
}

/// One event configuration (a `reportConfig` with the offsets of its measurement object).
#[derive(Clone, Debug, PartialEq)]
pub struct EventConfig {
    /// The event and its thresholds or offset.
    pub event: MeasEvent,
    /// Hys, dB: a multiple of 0.5 in [0, 15].
    pub hysteresis_db: f64,
    /// timeToTrigger, ms: one of [`TIME_TO_TRIGGER_MS`].
    pub time_to_trigger_ms: u32,
    /// Ofp, the SpCell frequency's offset, dB (A3 only): one of [`Q_OFFSET_RANGE_DB`].
    pub serving_frequency_offset_db: f64,
    /// Ocp, the SpCell's cell-individual offset, dB (A3 only): one of [`Q_OFFSET_RANGE_DB`].
    pub serving_cell_offset_db: f64,
    /// Ofn, the neighbours' frequency offset, dB: one of [`Q_OFFSET_RANGE_DB`].
    pub neighbour_frequency_offset_db: f64,
    /// Ocn per neighbour, dB (0 for a cell not listed): each one of [`Q_OFFSET_RANGE_DB`].
    pub neighbour_cell_offsets_db: BTreeMap<CellId, f64>,
}

impl EventConfig {
    /// `event` with hysteresis `hysteresis_db` and timeToTrigger `time_to_trigger_ms`, all
    /// offsets 0 dB (validated when a monitor is built).
    pub fn new(event: MeasEvent, hysteresis_db: f64, time_to_trigger_ms: u32) -> EventConfig {
        EventConfig {
            event,
            hysteresis_db,
            time_to_trigger_ms,
            serving_frequency_offset_db: 0.0,
            serving_cell_offset_db: 0.0,
            neighbour_frequency_offset_db: 0.0,
            neighbour_cell_offsets_db: BTreeMap::new(),
        }
    }

    /// Checks every field; errors name `rrc.<field>` and list the allowed values.
    pub fn validate(&self) -> Result<(), CellError> {
        check_half_db("rrc.hysteresis_db", self.hysteresis_db, 0.0, 15.0, "TS 38.331 Hysteresis 0..30 × 0.5 dB")?;
        if !TIME_TO_TRIGGER_MS.contains(&self.time_to_trigger_ms) {
            return Err(CellError::out_of_range("rrc.time_to_trigger_ms", f64::from(self.time_to_trigger_ms), TIME_TO_TRIGGER_TEXT));
        }
        match self.event {
            MeasEvent::A1 { threshold } | MeasEvent::A2 { threshold } | MeasEvent::A4 { threshold } | MeasEvent::B1 { threshold } => {
                check_finite("rrc.threshold", threshold)?;
            }
            MeasEvent::A3 { offset_db } => {
                check_half_db("rrc.a3_offset_db", offset_db, -15.0, 15.0, "TS 38.331 a3-Offset -30..30 × 0.5 dB")?;
            }
            MeasEvent::A5 { threshold1, threshold2 } => {
                check_finite("rrc.threshold1", threshold1)?;
                check_finite("rrc.threshold2", threshold2)?;
            }
        }
        check_q_offset("rrc.serving_frequency_offset_db", self.serving_frequency_offset_db)?;
        check_q_offset("rrc.serving_cell_offset_db", self.serving_cell_offset_db)?;
        check_q_offset("rrc.neighbour_frequency_offset_db", self.neighbour_frequency_offset_db)?;
        for (cell, &o) in &self.neighbour_cell_offsets_db {
            check_q_offset(&format!("rrc.neighbour_cell_offsets_db[{cell}]"), o)?;
        }
        Ok(())
    }

    fn time_to_trigger_ns(&self) -> u64 {
        u64::from(self.time_to_trigger_ms) * 1_000_000
    }

    /// Ocn of `cell`, 0 dB if not listed.
    fn ocn(&self, cell: CellId) -> f64 {
        self.neighbour_cell_offsets_db.get(&cell).copied().unwrap_or(0.0)
    }

    /// The serving-cell condition (A1, A2) at `ms`; `None` for a neighbour event.
    fn serving_condition(&self, ms: f64) -> Option<Condition> {
        let hys = self.hysteresis_db;
        let (enter, leave) = match self.event {
            MeasEvent::A1 { threshold } => (ms - hys > threshold, ms + hys < threshold),
            MeasEvent::A2 { threshold } => (ms + hys < threshold, ms - hys > threshold),
            _ => return None,
        };
        Some(Condition::of(enter, leave))
    }

    /// The condition of neighbour `cell` measured `mn` with the SpCell at `mp`; `None` for a
    /// serving-cell event.
    fn neighbour_condition(&self, mp: f64, cell: CellId, mn: f64) -> Option<Condition> {
        let hys = self.hysteresis_db;
        let n = mn + self.neighbour_frequency_offset_db + self.ocn(cell);
        let (enter, leave) = match self.event {
            MeasEvent::A3 { offset_db } => {
                let p = mp + self.serving_frequency_offset_db + self.serving_cell_offset_db + offset_db;
                (n - hys > p, n + hys < p)
            }
            MeasEvent::A4 { threshold } | MeasEvent::B1 { threshold } => (n - hys > threshold, n + hys < threshold),
            MeasEvent::A5 { threshold1, threshold2 } => {
                (mp + hys < threshold1 && n - hys > threshold2, mp - hys > threshold1 || n + hys < threshold2)
            }
            MeasEvent::A1 { .. } | MeasEvent::A2 { .. } => return None,
        };
        Some(Condition::of(enter, leave))
    }
}

fn check_finite(field: &str, v: f64) -> Result<f64, CellError> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(CellError::out_of_range(field, v, "a finite value in dB or dBm"))
    }
}

/// `v` is a multiple of 0.5 dB in `[lo, hi]`.
fn check_half_db(field: &str, v: f64, lo: f64, hi: f64, what: &str) -> Result<f64, CellError> {
    let twice = v * 2.0;
    if v.is_finite() && (lo..=hi).contains(&v) && twice == twice.round() {
        Ok(v)
    } else {
        Err(CellError::out_of_range(field, v, &format!("a multiple of 0.5 in [{lo}, {hi}] dB ({what})")))
    }
}

fn check_q_offset(field: &str, v: f64) -> Result<f64, CellError> {
    if Q_OFFSET_RANGE_DB.iter().any(|&q| f64::from(q) == v) {
        Ok(v)
    } else {
        Err(CellError::out_of_range(field, v, Q_OFFSET_TEXT))
    }
}

/// Which of the two conditions a sample meets (they exclude each other since Hys ≥ 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Condition {
    Entering,
    Leaving,
    Neither,
}

impl Condition {
    fn of(enter: bool, leave: bool) -> Condition {
        if enter {
            Condition::Entering
        } else if leave {
            Condition::Leaving
        } else {
            Condition::Neither
        }
    }
}

/// The triggering state of one cell.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Trigger {
    /// In the cellsTriggeredList (reported, not yet left).
    triggered: bool,
    /// First sample of the current run meeting the condition that would change `triggered`.
    since_ns: Option<u64>,
    /// The cell's value at the last sample (to order the cells of a report).
    last_db: f64,
}

impl Trigger {
    /// Takes the condition at `now` (`None`: not measured) and returns whether the cell is
    /// reported now.
    fn step(&mut self, now: u64, cond: Option<Condition>, ttt_ns: u64) -> bool {
        let wanted = if self.triggered { Condition::Leaving } else { Condition::Entering };
        if cond != Some(wanted) {
            self.since_ns = None;
            return false;
        }
        let since = *self.since_ns.get_or_insert(now);
        if now.saturating_sub(since) < ttt_ns {
            return false;
        }
        self.since_ns = None;
        self.triggered = !self.triggered;
        self.triggered
    }

    fn is_idle(&self) -> bool {
        !self.triggered && self.since_ns.is_none()
    }

    /// When the running timeToTrigger expires, if one runs.
    fn expiry(&self, ttt_ns: u64) -> Option<u64> {
        self.since_ns.map(|s| s.saturating_add(ttt_ns))
    }

    /// The timer expired at `now` (every sample since it started met the condition, and the
    /// filtered values hold until the next sample): returns whether the cell is reported now.
    fn expire(&mut self, now: u64, ttt_ns: u64) -> bool {
        if self.expiry(ttt_ns).map_or(true, |t| t > now) {
            return false;
        }
        self.since_ns = None;
        self.triggered = !self.triggered;
        self.triggered
    }
}

/// A measurement report: the event, when, and the neighbour cells it names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventReport {
    /// The event reported.
    pub event: EventKind,
    /// The measurement instant of the report, ns.
    pub time_ns: u64,
    /// The neighbour cells whose timeToTrigger completed now, best measured value first (ties by
    /// cell id); empty for A1 and A2, which are about the serving cell.
    pub cells: Vec<CellId>,
}

/// One UE's triggering state for one event configuration (see the module header).
#[derive(Clone, Debug)]
pub struct EventMonitor {
    cfg: EventConfig,
    ttt_ns: u64,
    serving: Trigger,
    neighbours: BTreeMap<CellId, Trigger>,
    last_ns: Option<u64>,
}

impl EventMonitor {
    /// A monitor of `cfg`, nothing triggered; errors as [`EventConfig::validate`].
    pub fn new(cfg: EventConfig) -> Result<EventMonitor, CellError> {
        cfg.validate()?;
        let ttt_ns = cfg.time_to_trigger_ns();
        Ok(EventMonitor { cfg, ttt_ns, serving: Trigger::default(), neighbours: BTreeMap::new(), last_ns: None })
    }

    /// The configuration.
    pub fn config(&self) -> &EventConfig {
        &self.cfg
    }

    /// When the first running timeToTrigger expires, if any runs: the report (or the leaving)
    /// is due then, between measurement instants, if no sample breaks the condition first
    /// (38.331 §5.5.4.1: the condition held for every measurement during timeToTrigger).
    pub fn next_expiry_ns(&self) -> Option<u64> {
        let ttt = self.ttt_ns;
        self.neighbours.values().chain(std::iter::once(&self.serving)).filter_map(|t| t.expiry(ttt)).min()
    }

    /// The timers expired by `time_ns` (not before the last measurement instant): the report
    /// due, as [`EventMonitor::step`] would give it at a sample, the cells by their last values.
    pub fn expire(&mut self, time_ns: u64) -> Option<EventReport> {
        let (ttt, kind) = (self.ttt_ns, self.cfg.event.kind());
        if !kind.is_neighbour_event() {
            return self.serving.expire(time_ns, ttt).then(|| EventReport { event: kind, time_ns, cells: Vec::new() });
        }
        let mut fired: Vec<(CellId, f64)> = Vec::new();
        for (&cell, t) in self.neighbours.iter_mut() {
            let value = t.last_db;
            if t.expire(time_ns, ttt) {
                fired.push((cell, value));
            }
        }
        self.neighbours.retain(|_, st| !st.is_idle());
        if fired.is_empty() {
            return None;
        }
        fired.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Some(EventReport { event: kind, time_ns, cells: fired.into_iter().map(|(c, _)| c).collect() })
    }

    /// Takes the layer-3 filtered values at the measurement instant `time_ns` (not before the
    /// previous one): the serving cell's (Ms, or Mp for A3 and A5) and each measured
    /// neighbour's `(cell, Mn)` (ignored by A1 and A2). Returns the report due now, if any.
    ///
    /// Errors, leaving the monitor as it was: `time_ns` before the previous instant, a
    /// non-finite value (`serving_db`, `neighbours[i]`), a cell listed twice (`neighbours`).
    pub fn step(&mut self, time_ns: u64, serving_db: f64, neighbours: &[(CellId, f64)]) -> Result<Option<EventReport>, CellError> {
        if let Some(last) = self.last_ns {
            if time_ns < last {
                return Err(CellError::invalid("time_ns", format!("{time_ns} ns is before the previous instant {last} ns")));
            }
        }
        check_finite("serving_db", serving_db)?;
        let mut measured: BTreeMap<CellId, f64> = BTreeMap::new();
        for (i, &(cell, mn)) in neighbours.iter().enumerate() {
            check_finite(&format!("neighbours[{i}]"), mn)?;
            if measured.insert(cell, mn).is_some() {
                return Err(CellError::invalid("neighbours", format!("cell {cell} listed twice")));
            }
        }
        self.last_ns = Some(time_ns);
        let (now, ttt) = (time_ns, self.ttt_ns);
        let kind = self.cfg.event.kind();

        if !kind.is_neighbour_event() {
            let cond = self.cfg.serving_condition(serving_db);
            let fired = self.serving.step(now, cond, ttt);
            return Ok(if fired { Some(EventReport { event: kind, time_ns: now, cells: Vec::new() }) } else { None });
        }

        for (cell, st) in self.neighbours.iter_mut() {
            if !measured.contains_key(cell) {
                st.step(now, None, ttt);
            }
        }
        let mut fired: Vec<(CellId, f64)> = Vec::new();
        for (&cell, &mn) in &measured {
            let cond = self.cfg.neighbour_condition(serving_db, cell, mn);
            let trigger = self.neighbours.entry(cell).or_default();
            trigger.last_db = mn;
            if trigger.step(now, cond, ttt) {
                fired.push((cell, mn));
            }
        }
        self.neighbours.retain(|_, st| !st.is_idle());
        if fired.is_empty() {
            return Ok(None);
        }
        fired.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(Some(EventReport { event: kind, time_ns: now, cells: fired.into_iter().map(|(c, _)| c).collect() }))
    }

    /// The neighbour cells in the cellsTriggeredList (reported and not left), in id order.
    pub fn triggered_cells(&self) -> Vec<CellId> {
        self.neighbours.iter().filter(|(_, st)| st.triggered).map(|(&c, _)| c).collect()
    }

    /// Whether the serving cell's event (A1, A2) is triggered (reported and not left).
    pub fn serving_triggered(&self) -> bool {
        self.serving.triggered
    }

    /// Forgets neighbour `cell`: its timers and its triggered state.
    pub fn forget_cell(&mut self, cell: CellId) {
        self.neighbours.remove(&cell);
    }

    /// Forgets everything (as when the measurement is reconfigured or after a handover); the
    /// next sample may have any time.
    pub fn reset(&mut self) {
        self.serving = Trigger::default();
        self.neighbours.clear();
        self.last_ns = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const CELL: CellId = 7;

    /// The reference's A3: Off = 3 dB, Hys = 1 dB, TTT = 160 ms.
    fn a3() -> EventMonitor {
        EventMonitor::new(EventConfig::new(MeasEvent::A3 { offset_db: 3.0 }, 1.0, 160)).unwrap()
    }

    /// Feeds one neighbour's values every 40 ms from 0 with Mp constant; the report times.
    fn run_one(m: &mut EventMonitor, mp: f64, mn: &[f64]) -> Vec<u64> {
        let mut out = Vec::new();
        for (i, &v) in mn.iter().enumerate() {
            let t = i as u64 * 40 * MS;
            if let Some(r) = m.step(t, mp, &[(CELL, v)]).unwrap() {
                assert_eq!(r.event, EventKind::A3);
                assert_eq!(r.cells, vec![CELL]);
                assert_eq!(r.time_ns, t);
                out.push(t);
            }
        }
        out
    }

    #[test]
    fn the_reference_a3_vector_reports_at_240_ms() {
        let mut m = a3();
        let mn = [-93.0, -91.0, -90.0, -89.0, -89.0, -89.0, -89.0, -88.0];
        assert_eq!(run_one(&mut m, -95.0, &mn), vec![240 * MS]);
        assert_eq!(m.triggered_cells(), vec![CELL]);
    }

    #[test]
    fn a_dip_restarts_the_timer_and_the_report_comes_at_400_ms() {
        let mut m = a3();
        // -91.5 at 200 ms breaks the condition; from 240 ms on Mn > -91 again.
        let mn = [-93.0, -91.0, -90.0, -89.0, -89.0, -91.5, -89.0, -89.0, -89.0, -89.0, -89.0, -89.0];
        assert_eq!(run_one(&mut m, -95.0, &mn), vec![400 * MS]);
    }

    #[test]
    fn a3_does_not_fire_when_the_condition_breaks_one_sample_before_ttt() {
        let mut m = a3();
        // True at 80..=200 ms (TTT would complete at 240 ms) but -91 (not > -91) at 240 ms;
        // true again from 280 ms, so TTT completes at 440 ms.
        let mn = [-93.0, -91.0, -90.0, -90.0, -90.0, -90.0, -91.0, -90.0, -90.0, -90.0, -90.0, -90.0, -90.0];
        assert_eq!(run_one(&mut m, -95.0, &mn), vec![440 * MS]);
        // Exactly at the boundary: -91 is not > -91 for any length of time.
        let mut m = a3();
        assert!(run_one(&mut m, -95.0, &[-91.0; 20]).is_empty());
    }

    #[test]
    fn ttt_zero_reports_at_the_first_sample_meeting_the_condition() {
        let mut m = EventMonitor::new(EventConfig::new(MeasEvent::A3 { offset_db: 3.0 }, 1.0, 0)).unwrap();
        assert_eq!(run_one(&mut m, -95.0, &[-93.0, -91.0, -90.0, -89.0]), vec![80 * MS]);
    }

    #[test]
    fn the_timer_expires_between_samples_when_every_sample_held() {
        // TTT 64 ms with samples every 40 ms: first true at 80 ms, so the timer expires at
        // 144 ms, between the samples at 120 and 160, if the one at 120 still meets it.
        let mut m = EventMonitor::new(EventConfig::new(MeasEvent::A3 { offset_db: 3.0 }, 1.0, 64)).unwrap();
        for (i, v) in [-93.0, -91.0, -90.0, -90.0].into_iter().enumerate().take(4) {
            let t = i as u64 * 40 * MS;
            assert_eq!(m.step(t, -95.0, &[(CELL, v)]).unwrap(), None, "{t}");
            let want = if i >= 2 { Some(144 * MS) } else { None };
            assert_eq!(m.next_expiry_ns(), want, "after the sample at {t}");
            if i == 3 {
                // The sample at 120 ms held: the report at 144 ms.
                assert_eq!(m.expire(143 * MS), None);
                let r = m.expire(144 * MS).unwrap();
                assert_eq!((r.time_ns, r.cells), (144 * MS, vec![CELL]));
                assert_eq!(m.next_expiry_ns(), None);
            }
        }
        // A sample that breaks the condition stops the timer: nothing expires.
        let mut m = a3();
        m.step(0, -95.0, &[(CELL, -90.0)]).unwrap();
        assert_eq!(m.next_expiry_ns(), Some(160 * MS));
        m.step(40 * MS, -95.0, &[(CELL, -92.0)]).unwrap();
        assert_eq!((m.next_expiry_ns(), m.expire(500 * MS)), (None, None));
    }

    #[test]
    fn the_timer_counts_time_not_samples() {
        // TTT 64 ms with samples every 40 ms: true at 80 and 120 (40 ms) is not enough; 160 is.
        let mut m = EventMonitor::new(EventConfig::new(MeasEvent::A3 { offset_db: 3.0 }, 1.0, 64)).unwrap();
        assert_eq!(run_one(&mut m, -95.0, &[-93.0, -91.0, -90.0, -90.0, -90.0]), vec![160 * MS]);
    }

    #[test]
    fn after_a_report_the_cell_is_quiet_until_its_leaving_condition_holds_for_ttt() {
        let mut m = a3();
        // Reported at 240 ms as in the reference.
        let mut mn = vec![-93.0, -91.0, -90.0, -89.0, -89.0, -89.0, -89.0];
        // 280..=600 ms: in the hysteresis band (-92.5: entering needs > -91, leaving < -93),
        // then above again: no second report.
        mn.extend([-92.5; 5]);
        mn.extend([-89.0; 5]);
        assert_eq!(run_one(&mut m, -95.0, &mn), vec![240 * MS]);
        assert_eq!(m.triggered_cells(), vec![CELL]);

        // Leaving (-93.5 + 1 < -92) for 120 ms only (< TTT): still triggered.
        let t0 = mn.len() as u64 * 40;
        for (i, v) in [-93.5, -93.5, -93.5, -93.5, -89.0].iter().enumerate() {
            assert_eq!(m.step((t0 + 40 * i as u64) * MS, -95.0, &[(CELL, *v)]).unwrap(), None);
        }
        assert_eq!(m.triggered_cells(), vec![CELL]);

        // Leaving for 160 ms: the cell leaves the list at the fifth sample.
        let t1 = t0 + 5 * 40;
        for i in 0..5u64 {
            assert_eq!(m.step((t1 + 40 * i) * MS, -95.0, &[(CELL, -93.5)]).unwrap(), None);
            assert_eq!(m.triggered_cells().is_empty(), i == 4, "sample {i}");
        }
        // Entering again for TTT: a new report.
        let t2 = t1 + 5 * 40;
        let mut reports = Vec::new();
        for i in 0..6u64 {
            if let Some(r) = m.step((t2 + 40 * i) * MS, -95.0, &[(CELL, -89.0)]).unwrap() {
                reports.push(r.time_ns);
            }
        }
        assert_eq!(reports, vec![(t2 + 160) * MS]);
    }

    #[test]
    fn the_leaving_condition_includes_the_hysteresis() {
        // Hys 2 dB: leaving needs Mn + 2 < -92, i.e. Mn < -94; -93.5 stays in the band.
        let mut m = EventMonitor::new(EventConfig::new(MeasEvent::A3 { offset_db: 3.0 }, 2.0, 0)).unwrap();
        assert!(m.step(0, -95.0, &[(CELL, -89.5)]).unwrap().is_some());
        assert_eq!(m.step(MS, -95.0, &[(CELL, -93.5)]).unwrap(), None);
        assert_eq!(m.triggered_cells(), vec![CELL]);
        assert_eq!(m.step(2 * MS, -95.0, &[(CELL, -94.0)]).unwrap(), None);
        assert_eq!(m.triggered_cells(), vec![CELL], "-94 + 2 is not < -92");
        assert_eq!(m.step(3 * MS, -95.0, &[(CELL, -94.5)]).unwrap(), None);
        assert!(m.triggered_cells().is_empty());
        assert!(m.step(4 * MS, -95.0, &[(CELL, -89.5)]).unwrap().is_some());
    }

    #[test]
    fn neighbours_are_tracked_independently() {
        let mut cfg = EventConfig::new(MeasEvent::A3 { offset_db: 3.0 }, 1.0, 160);
        // Cell 3's individual offset of -3 dB keeps it out at the same values as cell 1.
        cfg.neighbour_cell_offsets_db.insert(3, -3.0);
        let mut m = EventMonitor::new(cfg).unwrap();
        let mut reports = Vec::new();
        for i in 0..15u64 {
            let t = i * 40;
            let c1 = if t >= 80 { -90.0 } else { -93.0 };
            // Cell 2 enters at 120 ms, dips at 200 ms, enters again at 240 ms.
            let c2 = if t >= 120 && t != 200 { -88.0 } else { -93.0 };
            // Cell 4 enters at 80 ms like cell 1 but with a better value.
            let c4 = if t >= 80 { -85.0 } else { -93.0 };
            let mut meas = vec![(1, c1), (2, c2), (3, -90.0)];
            // Cell 5 is measured at 80..=160 ms, missing at 200 ms, back from 240 ms.
            if (80..=160).contains(&t) || t >= 240 {
                meas.push((5, -80.0));
            }
            meas.push((4, c4));
            if let Some(r) = m.step(t * MS, -95.0, &meas).unwrap() {
                reports.push((t, r.cells));
            }
        }
        assert_eq!(reports, vec![(240, vec![4, 1]), (400, vec![5, 2])]);
        assert_eq!(m.triggered_cells(), vec![1, 2, 4, 5]);
        m.forget_cell(4);
        assert_eq!(m.triggered_cells(), vec![1, 2, 5]);
    }

    #[test]
    fn a5_needs_both_conditions_and_leaves_on_either() {
        // SpCell worse than -100 and neighbour better than -95, Hys 1, TTT 40 ms.
        let cfg = EventConfig::new(MeasEvent::A5 { threshold1: -100.0, threshold2: -95.0 }, 1.0, 40);
        let mut m = EventMonitor::new(cfg).unwrap();
        let mut t = 0;
        let mut step = |m: &mut EventMonitor, mp: f64, mn: f64| {
            let r = m.step(t * MS, mp, &[(CELL, mn)]).unwrap();
            t += 40;
            r.map(|r| (r.event, r.cells))
        };
        // Serving weak enough (-102 + 1 < -100) but the neighbour not (-94.5 - 1 > -95 fails).
        for _ in 0..4 {
            assert_eq!(step(&mut m, -102.0, -94.5), None);
        }
        // Neighbour strong but serving not weak enough (-99.5 + 1 < -100 fails).
        for _ in 0..4 {
            assert_eq!(step(&mut m, -99.5, -90.0), None);
        }
        // Alternating which half holds never lasts TTT.
        for k in 0..6 {
            let (mp, mn) = if k % 2 == 0 { (-102.0, -90.0) } else { (-99.5, -90.0) };
            assert_eq!(step(&mut m, mp, mn), None);
        }
        // Both for two samples 40 ms apart: report at the second.
        assert_eq!(step(&mut m, -102.0, -90.0), None);
        assert_eq!(step(&mut m, -102.0, -90.0), Some((EventKind::A5, vec![CELL])));
        // Serving recovers above threshold1 + Hys (-98.5 - 1 > -100): leaving after TTT.
        assert_eq!(step(&mut m, -98.5, -90.0), None);
        assert_eq!(m.triggered_cells(), vec![CELL]);
        assert_eq!(step(&mut m, -98.5, -90.0), None);
        assert!(m.triggered_cells().is_empty());
        // Entering again reports again.
        assert_eq!(step(&mut m, -102.0, -90.0), None);
        assert_eq!(step(&mut m, -102.0, -90.0), Some((EventKind::A5, vec![CELL])));
        // Now the neighbour alone drops (-96.5 + 1 < -95): leaving too.
        assert_eq!(step(&mut m, -102.0, -96.5), None);
        assert_eq!(step(&mut m, -102.0, -96.5), None);
        assert!(m.triggered_cells().is_empty());
    }

    #[test]
    fn a1_a2_watch_the_serving_cell() {
        let mut a2 = EventMonitor::new(EventConfig::new(MeasEvent::A2 { threshold: -100.0 }, 2.0, 0)).unwrap();
        assert_eq!(a2.step(0, -101.0, &[]).unwrap(), None, "-101 + 2 is not < -100");
        let r = a2.step(MS, -102.5, &[(1, -60.0)]).unwrap().unwrap();
        assert_eq!((r.event, r.time_ns, r.cells.len()), (EventKind::A2, MS, 0));
        assert!(a2.serving_triggered());
        assert_eq!(a2.step(2 * MS, -105.0, &[]).unwrap(), None, "reported once");
        assert_eq!(a2.step(3 * MS, -99.0, &[]).unwrap(), None);
        assert!(a2.serving_triggered(), "-99 - 2 is not > -100");
        assert_eq!(a2.step(4 * MS, -97.5, &[]).unwrap(), None);
        assert!(!a2.serving_triggered());

        let mut a1 = EventMonitor::new(EventConfig::new(MeasEvent::A1 { threshold: -100.0 }, 0.5, 0)).unwrap();
        assert_eq!(a1.step(0, -99.5, &[]).unwrap(), None);
        assert!(a1.step(1, -99.0, &[]).unwrap().is_some());
        assert!(a1.triggered_cells().is_empty());
    }

    #[test]
    fn a4_and_b1_compare_the_offset_neighbour_with_the_threshold() {
        for event in [MeasEvent::A4 { threshold: -100.0 }, MeasEvent::B1 { threshold: -100.0 }] {
            let mut cfg = EventConfig::new(event, 1.0, 0);
            cfg.neighbour_frequency_offset_db = 2.0;
            let mut m = EventMonitor::new(cfg).unwrap();
            // -101 + 2 - 1 = -100 is not > -100; serving value is irrelevant.
            assert_eq!(m.step(0, -50.0, &[(CELL, -101.0)]).unwrap(), None);
            let r = m.step(1, -150.0, &[(CELL, -100.5)]).unwrap().unwrap();
            assert_eq!((r.event, r.cells), (event.kind(), vec![CELL]));
        }
    }

    #[test]
    fn serving_offsets_and_ocp_shift_a3() {
        let mut cfg = EventConfig::new(MeasEvent::A3 { offset_db: 0.0 }, 0.0, 0);
        cfg.serving_frequency_offset_db = 2.0;
        cfg.serving_cell_offset_db = 1.0;
        let mut m = EventMonitor::new(cfg).unwrap();
        // Needs Mn > Mp + 3.
        assert_eq!(m.step(0, -95.0, &[(CELL, -92.0)]).unwrap(), None);
        assert!(m.step(1, -95.0, &[(CELL, -91.5)]).unwrap().is_some());
    }

    #[test]
    fn bad_configurations_and_inputs_are_refused() {
        let ok = EventConfig::new(MeasEvent::A3 { offset_db: 3.0 }, 1.0, 160);
        assert!(ok.validate().is_ok());
        let cases: Vec<(EventConfig, &str, &str)> = vec![
            (EventConfig { time_to_trigger_ms: 200, ..ok.clone() }, "time_to_trigger_ms", "1024, 1280, 2560, 5120"),
            (EventConfig { time_to_trigger_ms: 5121, ..ok.clone() }, "time_to_trigger_ms", "0, 40, 64"),
            (EventConfig { hysteresis_db: 0.25, ..ok.clone() }, "hysteresis_db", "multiple of 0.5 in [0, 15]"),
            (EventConfig { hysteresis_db: 15.5, ..ok.clone() }, "hysteresis_db", "[0, 15]"),
            (EventConfig { hysteresis_db: -0.5, ..ok.clone() }, "hysteresis_db", "[0, 15]"),
            (EventConfig { hysteresis_db: f64::NAN, ..ok.clone() }, "hysteresis_db", "[0, 15]"),
            (EventConfig { event: MeasEvent::A3 { offset_db: 15.5 }, ..ok.clone() }, "a3_offset_db", "[-15, 15]"),
            (EventConfig { event: MeasEvent::A3 { offset_db: 0.3 }, ..ok.clone() }, "a3_offset_db", "[-15, 15]"),
            (EventConfig { event: MeasEvent::A4 { threshold: f64::INFINITY }, ..ok.clone() }, "threshold", "finite"),
            (EventConfig { event: MeasEvent::A5 { threshold1: -100.0, threshold2: f64::NAN }, ..ok.clone() }, "threshold2", "finite"),
            (EventConfig { neighbour_frequency_offset_db: 7.0, ..ok.clone() }, "neighbour_frequency_offset_db", "Q-OffsetRange"),
            (EventConfig { serving_cell_offset_db: 0.5, ..ok.clone() }, "serving_cell_offset_db", "Q-OffsetRange"),
        ];
        for (cfg, field, allowed) in cases {
            let e = EventMonitor::new(cfg).unwrap_err().to_string();
            assert!(e.contains(field) && e.contains(allowed), "{e}");
        }
        let mut cfg = ok.clone();
        cfg.neighbour_cell_offsets_db.insert(9, -7.0);
        let e = EventMonitor::new(cfg).unwrap_err().to_string();
        assert!(e.contains("neighbour_cell_offsets_db[9]"), "{e}");
        for ttt in TIME_TO_TRIGGER_MS {
            assert!(EventMonitor::new(EventConfig { time_to_trigger_ms: ttt, ..ok.clone() }).is_ok());
        }

        let mut m = EventMonitor::new(ok).unwrap();
        m.step(100, -95.0, &[(CELL, -90.0)]).unwrap();
        let e = m.step(99, -95.0, &[]).unwrap_err().to_string();
        assert!(e.contains("time_ns"), "{e}");
        let e = m.step(200, f64::NAN, &[]).unwrap_err().to_string();
        assert!(e.contains("serving_db"), "{e}");
        let e = m.step(200, -95.0, &[(1, -90.0), (2, f64::NEG_INFINITY)]).unwrap_err().to_string();
        assert!(e.contains("neighbours[1]"), "{e}");
        let e = m.step(200, -95.0, &[(1, -90.0), (1, -91.0)]).unwrap_err().to_string();
        assert!(e.contains("listed twice"), "{e}");
        // The refused steps changed nothing: the run from 100 ns reports at 160 ms after it.
        assert_eq!(m.step(100 + 120 * MS, -95.0, &[(CELL, -90.0)]).unwrap(), None);
        assert!(m.step(100 + 160 * MS, -95.0, &[(CELL, -90.0)]).unwrap().is_some());
    }
}
