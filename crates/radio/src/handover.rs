//! The channel-usage cases sp, 1, 2, 3 and 4 of the multi-operator study (its §4; the
//! multi-operator reference §4.4): from a per-second, per-channel capacity table to a time line
//! of path actions and per-path rate and delay series.
//!
//! A **slot** is one place for an active channel (a client interface in use); case `n` has n
//! slots. Each second, in this order (ties go to the lower channel index; the weakest of equal
//! active channels is the one with the higher index):
//!
//! 1. **loss**: a slot whose channel is unavailable (capacity 0 or below `min_usable_mbps`)
//!    switches to the best free available channel at once (`loss_action = switch`; the new
//!    channel carries from t + `rlf_gap_s`), or is released (`release`, or no free channel);
//! 2. **fill**: each empty slot, in index order, takes the best free available channel;
//! 3. **A3**: w = the active slot with the lowest quantity Q; each free channel b counts the
//!    consecutive seconds on which `Q[b] − hysteresis_db > Q[w] + offset_db`; among those
//!    with a count of at least max(1, ⌈`ttt_s`⌉) the highest Q replaces w if w has held its
//!    channel for `min_dwell_s`; then all counts restart and step 3 repeats, at most n swaps
//!    per second;
//! 4. **cell change** (`cell_change_is_handover`): a slot whose channel's cell id changed is
//!    handed over to the same channel (a new path on the same route).
//!
//! Q is `capacity_db` = 10·log10(max(c, 0.01 Mbit/s)) by default, or the cell's RSRP or SINR.
//!
//! Events: an assignment opens a path; a release abandons one; a handover opens the new
//! channel's path and abandons the old one in the same instant, open first, so the connection
//! never has zero paths — with an RLF gap the old path is abandoned at t and the new one opened
//! at t + gap (a slot within its gap is not swapped; if its channel is lost meanwhile, the
//! pending opening is withdrawn). A cell change opens a new path on the same channel, then
//! abandons the old one.
//! `seamless` cases (sp) emit no events: the transport sees one path whose rate follows the
//! slot. Times are trace seconds (t = the table's `start_s` + sample index).

use serde::{Deserialize, Serialize};

use crate::channels::ChannelTable;
use crate::delay::DelayModel;
use crate::error::{check_range, RadioError};

/// The study's cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Case {
    /// One channel at a time, instant and seamless handovers to the best channel.
    #[serde(rename = "sp")]
    Sp,
    /// One channel at a time, handovers visible to the transport, short dips ignored.
    #[serde(rename = "1")]
    One,
    /// Two channels at a time.
    #[serde(rename = "2")]
    Two,
    /// Three channels at a time.
    #[serde(rename = "3")]
    Three,
    /// Four channels at a time.
    #[serde(rename = "4")]
    Four,
}

impl Case {
    pub const ALL: [Case; 5] = [Case::Sp, Case::One, Case::Two, Case::Three, Case::Four];

    /// `sp`, `1`, `2`, `3`, `4`.
    pub fn name(self) -> &'static str {
        match self {
            Case::Sp => "sp",
            Case::One => "1",
            Case::Two => "2",
            Case::Three => "3",
            Case::Four => "4",
        }
    }

    /// The case named `name`.
    pub fn parse(name: &str) -> Result<Case, RadioError> {
        Case::ALL.into_iter().find(|c| c.name() == name).ok_or_else(|| RadioError::Unknown {
            kind: "case".into(),
            name: name.into(),
            known: "sp, 1, 2, 3, 4".into(),
        })
    }

    /// Number of slots (active channels).
    pub fn slots(self) -> usize {
        match self {
            Case::Sp | Case::One => 1,
            Case::Two => 2,
            Case::Three => 3,
            Case::Four => 4,
        }
    }
}

/// What the A3-like rule compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Quantity {
    /// 10·log10(max(c, 0.01 Mbit/s)), dB.
    #[default]
    CapacityDb,
    /// The RSRP of the channel's available cell, dBm.
    Rsrp,
    /// The SINR of the channel's available cell, dB.
    Sinr,
}

/// What happens when a slot's channel becomes unavailable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossAction {
    /// Switch to the best free channel at once (radio-link failure and re-establishment).
    #[default]
    Switch,
    /// Release the slot (the fill step may give it a channel in the same second).
    Release,
}

/// Parameter sets the cases start from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandoverPreset {
    /// The reference's defaults: case 1 with 3 dB and 2 s, cases 2–4 swapping as soon as a
    /// better channel appears.
    #[default]
    Study,
    /// Cases 2–4 with case 1's hysteresis and time-to-trigger.
    RealisticAll,
}

/// Every knob of the cases (reference §4.4's table).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandoverParams {
    /// Slots (active channels), 1–16.
    pub n: usize,
    /// Channel changes are invisible to the transport (one path for ever).
    pub seamless: bool,
    /// What is compared.
    pub quantity: Quantity,
    /// a3-Offset-like bias, dB, in [−30, 30].
    pub offset_db: f64,
    /// A3 hysteresis, dB, in [0, 30].
    pub hysteresis_db: f64,
    /// Time-to-trigger, s, in [0, 3600]: the condition must hold on max(1, ⌈ttt_s⌉)
    /// consecutive one-second samples.
    pub ttt_s: f64,
    /// A slot keeps a new channel at least this long (s) before an A3 swap.
    pub min_dwell_s: f64,
    /// Reaction to the serving channel becoming unavailable.
    pub loss_action: LossAction,
    /// Outage (s) between losing a channel and using the one switched to.
    pub rlf_gap_s: f64,
    /// A change of the available cell within a channel counts as a handover.
    pub cell_change_is_handover: bool,
    /// Capacities below this (Mbit/s) count as unavailable.
    pub min_usable_mbps: f64,
    /// How long (s) a released channel's link stays up after its path is abandoned.
    pub overlap_s: f64,
}

impl HandoverParams {
    /// The reference's defaults for `case`.
    pub fn for_case(case: Case) -> HandoverParams {
        let one = case == Case::One;
        HandoverParams {
            n: case.slots(),
            seamless: case == Case::Sp,
            quantity: Quantity::CapacityDb,
            offset_db: 0.0,
            hysteresis_db: if one { 3.0 } else { 0.0 },
            ttt_s: if one { 2.0 } else { 0.0 },
            min_dwell_s: 0.0,
            loss_action: LossAction::Switch,
            rlf_gap_s: 0.0,
            cell_change_is_handover: false,
            min_usable_mbps: 0.0,
            overlap_s: 0.0,
        }
    }

    /// `preset`'s parameters for `case`.
    pub fn preset(case: Case, preset: HandoverPreset) -> HandoverParams {
        let mut p = HandoverParams::for_case(case);
        if preset == HandoverPreset::RealisticAll && matches!(case, Case::Two | Case::Three | Case::Four) {
            let one = HandoverParams::for_case(Case::One);
            p.hysteresis_db = one.hysteresis_db;
            p.ttt_s = one.ttt_s;
        }
        p
    }

    /// Checks every field; the error names the field (`handover.<name>`) and its range.
    pub fn validate(&self) -> Result<(), RadioError> {
        if !(1..=16).contains(&self.n) {
            return Err(RadioError::out_of_range("handover.n", self.n as f64, "a whole number in [1, 16]"));
        }
        check_range("handover.offset_db", self.offset_db, -30.0, 30.0, "dB")?;
        check_range("handover.hysteresis_db", self.hysteresis_db, 0.0, 30.0, "dB")?;
        check_range("handover.ttt_s", self.ttt_s, 0.0, 3600.0, "s")?;
        check_range("handover.min_dwell_s", self.min_dwell_s, 0.0, 86400.0, "s")?;
        check_range("handover.rlf_gap_s", self.rlf_gap_s, 0.0, 3600.0, "s")?;
        check_range("handover.min_usable_mbps", self.min_usable_mbps, 0.0, 1e6, "Mbit/s")?;
        check_range("handover.overlap_s", self.overlap_s, 0.0, 3600.0, "s")
    }

    /// Samples the A3 condition must hold on: max(1, ⌈ttt_s⌉).
    pub fn ttt_samples(&self) -> u32 {
        (self.ttt_s.ceil() as u32).max(1)
    }
}

/// A case and overrides of its parameters, as a scenario writes them:
/// `{ case = "2", preset = "realistic_all", min_dwell_s = 5 }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandoverConfig {
    pub case: Case,
    #[serde(default)]
    pub preset: HandoverPreset,
    #[serde(default)]
    pub n: Option<usize>,
    #[serde(default)]
    pub seamless: Option<bool>,
    #[serde(default)]
    pub quantity: Option<Quantity>,
    #[serde(default)]
    pub offset_db: Option<f64>,
    #[serde(default)]
    pub hysteresis_db: Option<f64>,
    #[serde(default)]
    pub ttt_s: Option<f64>,
    #[serde(default)]
    pub min_dwell_s: Option<f64>,
    #[serde(default)]
    pub loss_action: Option<LossAction>,
    #[serde(default)]
    pub rlf_gap_s: Option<f64>,
    #[serde(default)]
    pub cell_change_is_handover: Option<bool>,
    #[serde(default)]
    pub min_usable_mbps: Option<f64>,
    #[serde(default)]
    pub overlap_s: Option<f64>,
}

impl HandoverConfig {
    /// The case's preset with the overrides applied, validated.
    pub fn resolve(&self) -> Result<HandoverParams, RadioError> {
        let mut p = HandoverParams::preset(self.case, self.preset);
        macro_rules! over {
            ($($f:ident),*) => { $(if let Some(v) = self.$f { p.$f = v; })* };
        }
        over!(
            n,
            seamless,
            quantity,
            offset_db,
            hysteresis_db,
            ttt_s,
            min_dwell_s,
            loss_action,
            rlf_gap_s,
            cell_change_is_handover,
            min_usable_mbps,
            overlap_s
        );
        p.validate()?;
        Ok(p)
    }
}

/// What a path event does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathAction {
    Open,
    Abandon,
}

/// Why a path event happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// An empty slot took a channel.
    Fill,
    /// The slot's channel became unavailable and the slot switched to another.
    Loss,
    /// The slot's channel became unavailable and the slot was released.
    Release,
    /// A better channel replaced the slot's (A3-like rule).
    A3,
    /// The channel's available cell changed.
    CellChange,
}

/// One action for the transport: open or abandon the path on `channel`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathEvent {
    /// Trace time, s.
    pub at_s: f64,
    pub slot: usize,
    /// Index into the channel table.
    pub channel: usize,
    pub action: PathAction,
    pub cause: Cause,
}

/// One slot, second by second.
#[derive(Clone, Debug, PartialEq)]
pub struct SlotSeries {
    /// The slot's channel, `None` when empty.
    pub channel: Vec<Option<usize>>,
    /// The rate it carries, Mbit/s: its channel's capacity, 0 when empty or within an RLF gap.
    pub rate_mbps: Vec<f64>,
    /// The one-way delay of that rate, ms; `None` when it carries nothing.
    pub delay_ms: Vec<Option<f64>>,
}

/// One channel as a link of its own (the reference's mapping A), second by second.
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelLink {
    /// c_k(t), Mbit/s.
    pub rate_mbps: Vec<f64>,
    /// d(c_k(t)), ms.
    pub delay_ms: Vec<f64>,
    /// Whether a slot carries this channel in that second.
    pub active: Vec<bool>,
    /// When the link is up, [from, to) in trace seconds: from a path's opening to its
    /// abandonment plus `overlap_s` (the last one ends with the table). Empty for seamless
    /// cases, whose one path is `slots[0]`.
    pub up: Vec<(f64, f64)>,
}

/// The outcome of a case on a channel table.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    pub params: HandoverParams,
    /// Trace second of the first sample.
    pub start_s: u32,
    /// Path events in time order (equal times in the order they happen); none when seamless.
    pub events: Vec<PathEvent>,
    /// Channel changes of a slot (loss, A3 and cell-change handovers), seamless or not.
    pub handovers: usize,
    pub slots: Vec<SlotSeries>,
    pub channels: Vec<ChannelLink>,
    /// Per second, the sum of the slots' rates (the study's MP capacity), Mbit/s.
    pub mp_capacity_mbps: Vec<f64>,
    /// Per second, the largest slot rate (the study's SP capacity), Mbit/s.
    pub sp_capacity_mbps: Vec<f64>,
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    channel: Option<usize>,
    since: f64,
    usable_from: f64,
}

struct Run<'a> {
    t: f64,
    slots: Vec<Slot>,
    events: Vec<PathEvent>,
    handovers: usize,
    cell_at_assign: Vec<Option<&'a str>>,
}

impl<'a> Run<'a> {
    fn open(&mut self, at_s: f64, slot: usize, channel: usize, cause: Cause) {
        self.events.push(PathEvent { at_s, slot, channel, action: PathAction::Open, cause });
    }

    fn abandon(&mut self, at_s: f64, slot: usize, channel: usize, cause: Cause) {
        self.events.push(PathEvent { at_s, slot, channel, action: PathAction::Abandon, cause });
    }

    /// Whether slot `s` is within an RLF gap: its channel's path is not open yet.
    fn pending(&self, s: usize) -> bool {
        self.slots[s].channel.is_some() && self.slots[s].usable_from > self.t
    }

    /// Ends slot `s`'s path on `from` at t: abandons it, or, while its opening is still
    /// pending after an RLF gap, withdraws that opening (there is no path to abandon yet).
    fn end_path(&mut self, s: usize, from: usize, cause: Cause) {
        if self.pending(s) {
            let at = self.slots[s].usable_from;
            if let Some(k) =
                self.events.iter().rposition(|e| e.slot == s && e.channel == from && e.action == PathAction::Open && e.at_s == at)
            {
                self.events.remove(k);
            }
        } else {
            self.abandon(self.t, s, from, cause);
        }
    }

    fn handover(&mut self, s: usize, to: usize, gap_s: f64, cause: Cause, cell: Option<&'a str>) {
        let t = self.t;
        let from = self.slots[s].channel.expect("a handover starts from a channel");
        if gap_s > 0.0 || self.pending(s) {
            self.end_path(s, from, cause);
            self.open(t + gap_s, s, to, cause);
        } else {
            self.open(t, s, to, cause);
            self.abandon(t, s, from, cause);
        }
        self.slots[s] = Slot { channel: Some(to), since: t, usable_from: t + gap_s };
        self.cell_at_assign[s] = cell;
        self.handovers += 1;
    }
}

/// Runs `params`' case over `table`, with `delay` turning rates into one-way delays.
pub fn run_case(table: &ChannelTable, params: &HandoverParams, delay: &DelayModel) -> Result<Timeline, RadioError> {
    params.validate()?;
    delay.validate()?;
    let k_count = table.channels().len();
    let len = table.len();
    let needed_by = |what: &str| format!("handover {what}");
    let column = |k: usize, q: Quantity| -> Option<&Vec<Option<f64>>> {
        match q {
            Quantity::CapacityDb => None,
            Quantity::Rsrp => table.channels()[k].rsrp_dbm.as_ref(),
            Quantity::Sinr => table.channels()[k].sinr_db.as_ref(),
        }
    };
    let usable = |k: usize, i: usize| {
        let c = table.capacity(k, i);
        c > 0.0 && c >= params.min_usable_mbps
    };
    // Check the columns the parameters need before running.
    if params.quantity != Quantity::CapacityDb {
        let name = if params.quantity == Quantity::Rsrp { "rsrp_dbm" } else { "sinr_db" };
        for k in 0..k_count {
            let Some(col) = column(k, params.quantity) else {
                return Err(RadioError::Missing {
                    what: format!("a {name} series for channel {:?}", table.channels()[k].name),
                    needed_by: needed_by(&format!("quantity {name}")),
                });
            };
            if let Some(i) = (0..len).find(|&i| usable(k, i) && col[i].is_none()) {
                return Err(RadioError::Missing {
                    what: format!(
                        "the {name} of channel {:?} at second {} (it has capacity there)",
                        table.channels()[k].name,
                        table.start_s() as usize + i
                    ),
                    needed_by: needed_by(&format!("quantity {name}")),
                });
            }
        }
    }
    let cells: Vec<Option<&Vec<Option<String>>>> = table.channels().iter().map(|c| c.cell_id.as_ref()).collect();
    if params.cell_change_is_handover {
        if let Some(k) = (0..k_count).find(|&k| cells[k].is_none()) {
            return Err(RadioError::Missing {
                what: format!("cell ids for channel {:?}", table.channels()[k].name),
                needed_by: needed_by("cell_change_is_handover"),
            });
        }
    }
    let cell = |k: usize, i: usize| -> Option<&str> { cells[k].and_then(|c| c[i].as_deref()) };

    let n = params.n;
    let thr = params.ttt_samples();
    let mut run = Run {
        t: 0.0,
        slots: vec![Slot { channel: None, since: 0.0, usable_from: 0.0 }; n],
        events: Vec::new(),
        handovers: 0,
        cell_at_assign: vec![None; n],
    };
    let mut streak = vec![0u32; k_count];
    let mut slots_out: Vec<SlotSeries> = (0..n)
        .map(|_| SlotSeries { channel: Vec::with_capacity(len), rate_mbps: Vec::with_capacity(len), delay_ms: Vec::with_capacity(len) })
        .collect();
    let mut active = vec![vec![false; len]; k_count];
    let mut q = vec![f64::NEG_INFINITY; k_count];

    for i in 0..len {
        let t = table.start_s() as f64 + i as f64;
        run.t = t;
        for (k, qk) in q.iter_mut().enumerate() {
            *qk = if !usable(k, i) {
                f64::NEG_INFINITY
            } else {
                match params.quantity {
                    Quantity::CapacityDb => 10.0 * table.capacity(k, i).max(0.01).log10(),
                    other => column(k, other).and_then(|c| c[i]).expect("checked above"),
                }
            };
        }
        let held = |slots: &[Slot], k: usize| slots.iter().any(|s| s.channel == Some(k));
        let best_free = |slots: &[Slot], q: &[f64]| -> Option<usize> {
            (0..k_count).filter(|&k| q[k] > f64::NEG_INFINITY && !held(slots, k)).fold(None, |best: Option<usize>, k| match best {
                Some(b) if q[b] >= q[k] => Some(b),
                _ => Some(k),
            })
        };

        // 1. Loss.
        for s in 0..n {
            let Some(c) = run.slots[s].channel else { continue };
            if usable(c, i) {
                continue;
            }
            match (params.loss_action, best_free(&run.slots, &q)) {
                (LossAction::Switch, Some(b)) => run.handover(s, b, params.rlf_gap_s, Cause::Loss, cell(b, i)),
                _ => {
                    run.end_path(s, c, Cause::Release);
                    run.slots[s].channel = None;
                }
            }
        }
        // 2. Fill.
        for s in 0..n {
            if run.slots[s].channel.is_none() {
                if let Some(b) = best_free(&run.slots, &q) {
                    run.open(t, s, b, Cause::Fill);
                    run.slots[s] = Slot { channel: Some(b), since: t, usable_from: t };
                    run.cell_at_assign[s] = cell(b, i);
                }
            }
        }
        // 3. A3-like swaps.
        let mut swaps = 0;
        loop {
            // The weakest active slot; among equals the one with the higher channel index.
            // A slot within an RLF gap is re-establishing and is not swapped.
            let weakest = (0..n).filter(|&s| !run.pending(s)).filter_map(|s| run.slots[s].channel.map(|c| (s, c))).fold(
                None,
                |w: Option<(usize, usize)>, (s, c)| match w {
                    Some((_, wc)) if q[wc] < q[c] || (q[wc] == q[c] && wc > c) => w,
                    _ => Some((s, c)),
                },
            );
            let Some((w, wc)) = weakest else {
                streak.iter_mut().for_each(|x| *x = 0);
                break;
            };
            for b in 0..k_count {
                let better = !held(&run.slots, b) && q[b] - params.hysteresis_db > q[wc] + params.offset_db;
                streak[b] = if better { streak[b] + 1 } else { 0 };
            }
            if swaps >= n {
                break;
            }
            let candidate = (0..k_count).filter(|&b| streak[b] >= thr).fold(None, |best: Option<usize>, b| match best {
                Some(x) if q[x] >= q[b] => Some(x),
                _ => Some(b),
            });
            match candidate {
                Some(b) if t - run.slots[w].since >= params.min_dwell_s => {
                    run.handover(w, b, 0.0, Cause::A3, cell(b, i));
                    swaps += 1;
                    streak.iter_mut().for_each(|x| *x = 0);
                }
                _ => break,
            }
        }
        // 4. Cell changes.
        if params.cell_change_is_handover {
            for s in 0..n {
                let Some(c) = run.slots[s].channel else { continue };
                let now = cell(c, i);
                if run.pending(s) {
                    // The path opens on whatever cell serves when the gap ends.
                    run.cell_at_assign[s] = now;
                } else if now != run.cell_at_assign[s] {
                    run.open(t, s, c, Cause::CellChange);
                    run.abandon(t, s, c, Cause::CellChange);
                    run.slots[s].since = t;
                    run.cell_at_assign[s] = now;
                    run.handovers += 1;
                }
            }
        }
        // Record the second.
        for (s, out) in slots_out.iter_mut().enumerate() {
            let slot = run.slots[s];
            let carrying = slot.channel.filter(|_| slot.usable_from <= t);
            let rate = carrying.map_or(0.0, |c| table.capacity(c, i));
            out.channel.push(slot.channel);
            out.rate_mbps.push(rate);
            out.delay_ms.push(carrying.map(|_| delay.delay_ms(rate)));
            if let Some(c) = carrying {
                active[c][i] = true;
            }
        }
    }

    let end = table.start_s() as f64 + len as f64;
    let mut events = run.events;
    // Openings after an RLF gap were queued when decided; order by time (stable for equal times).
    events.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
    let channels = (0..k_count)
        .map(|k| {
            let rate_mbps = table.channels()[k].capacity_mbps.clone();
            let delay_ms = rate_mbps.iter().map(|&c| delay.delay_ms(c)).collect();
            let up = if params.seamless { Vec::new() } else { up_windows(&events, k, params.overlap_s, end) };
            ChannelLink { rate_mbps, delay_ms, active: std::mem::take(&mut active[k]), up }
        })
        .collect();
    let mp_capacity_mbps = (0..len).map(|i| slots_out.iter().map(|s| s.rate_mbps[i]).sum()).collect();
    let sp_capacity_mbps = (0..len).map(|i| slots_out.iter().map(|s| s.rate_mbps[i]).fold(0.0, f64::max)).collect();
    Ok(Timeline {
        params: params.clone(),
        start_s: table.start_s(),
        events: if params.seamless { Vec::new() } else { events },
        handovers: run.handovers,
        slots: slots_out,
        channels,
        mp_capacity_mbps,
        sp_capacity_mbps,
    })
}

/// The intervals channel `k`'s link is up: from each opening on it to the matching abandonment
/// plus `overlap_s`, overlapping intervals merged, the last one open until `end`.
fn up_windows(events: &[PathEvent], k: usize, overlap_s: f64, end: f64) -> Vec<(f64, f64)> {
    let mut raw: Vec<(f64, f64)> = Vec::new();
    let mut open_paths: Vec<f64> = Vec::new(); // opening times of paths on k not yet abandoned
    for e in events.iter().filter(|e| e.channel == k) {
        match e.action {
            PathAction::Open => open_paths.push(e.at_s),
            PathAction::Abandon => {
                if !open_paths.is_empty() {
                    let from = open_paths.remove(0);
                    raw.push((from, (e.at_s + overlap_s).min(end)));
                }
            }
        }
    }
    raw.extend(open_paths.into_iter().map(|from| (from, end)));
    raw.retain(|(a, b)| b > a);
    raw.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut merged: Vec<(f64, f64)> = Vec::new();
    for (a, b) in raw {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}
