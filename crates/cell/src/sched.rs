//! The downlink MAC schedulers of one cell, one decision per 1 ms TTI over resource block
//! groups (RBGs, 36.213 §7.1.6.1): proportional fair as ns-3 LENA's `PfFfMacScheduler` does it,
//! round robin and max-C/I.
//!
//! The core is a pure function, [`assign_rbgs`]: given each UE's achievable rate on each RBG
//! (bit/s), its buffer (bits) and, for PF, its past average throughput, it names the owner of
//! every RBG. Each RBG goes to the eligible UE with the highest metric:
//!
//! * PF: achievable rate / past average throughput (LENA's rule; the averages are those of the
//!   previous TTI, so within one TTI the metric does not change);
//! * max-C/I: achievable rate;
//! * round robin: the active UEs in turn from a rotating start, each up to ⌈RBGs / active UEs⌉
//!   RBGs, ignoring the rate except that a rate of 0 (CQI 0) is never served.
//!
//! A UE is eligible while it has data and the bits of the RBGs it already got this TTI do not
//! cover its buffer (LENA's PF only asks whether the UE has data at all; with saturated UEs the
//! two agree). Ties go to the lower UE index.
//!
//! [`Scheduler`] keeps the state between TTIs: it turns each UE's subband CQIs (one per RBG)
//! into rates (TBS of the CQI's MCS over the RBG's PRBs per TTI), calls [`assign_rbgs`], builds
//! one transport block per served UE (the MCS of its **worst** CQI over its RBGs, the TBS over
//! all its PRBs, as LENA does), and updates the PF averages for every UE:
//! T ← (1 − 1/W)·T + (1/W)·(TB bits / TTI), W = 99 TTIs, T starting at 1 bit/s.

use crate::error::CellError;
use crate::nr::tbs::TbsShape;
use crate::scheme::McsScheme;
use crate::tables::{rbg_size, MAX_CQI, MAX_PRB};

/// The LTE TTI, in seconds.
pub const TTI_S: f64 = 1e-3;

/// The most PRBs of an NR carrier (TS 38.101-1 Table 5.3.2-1: 273 at 100 MHz and 30 kHz).
pub const NR_MAX_PRB: u16 = 275;

/// LENA's PF averaging window, in TTIs (`PfFfMacScheduler::m_timeWindow`).
pub const LENA_PF_WINDOW_TTIS: f64 = 99.0;

/// Which rule shares the RBGs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedulerKind {
    /// Proportional fair: rate / past average throughput.
    ProportionalFair,
    /// Round robin over the UEs with data.
    RoundRobin,
    /// Maximum carrier-to-interference: the highest rate.
    MaxCi,
}

impl SchedulerKind {
    /// Every scheduler by its name in scenarios.
    pub const NAMES: [(&'static str, SchedulerKind); 3] = [("pf", SchedulerKind::ProportionalFair), ("rr", SchedulerKind::RoundRobin), ("maxci", SchedulerKind::MaxCi)];

    /// The scheduler named `name`: `pf`, `rr` or `maxci`.
    pub fn from_name(name: &str) -> Result<SchedulerKind, CellError> {
        SchedulerKind::NAMES.iter().find(|(n, _)| *n == name).map(|&(_, k)| k).ok_or_else(|| {
            CellError::invalid("scheduler", format!("unknown scheduler {name:?}; known: {}", SchedulerKind::NAMES.map(|(n, _)| n).join(", ")))
        })
    }
}

/// The owner (UE index) of every RBG in one TTI, or `None` if no UE is eligible for it.
///
/// `rates_bps[u][g]` is UE u's achievable rate on RBG g in bit/s (0 where its CQI is 0),
/// `buffer_bits[u]` its buffer, `avg_bps[u]` its past average throughput (PF only; must be
/// positive), `rr_start` the UE round robin starts from.
pub fn assign_rbgs(
    kind: SchedulerKind,
    rates_bps: &[Vec<f64>],
    buffer_bits: &[u64],
    avg_bps: &[f64],
    rr_start: usize,
) -> Result<Vec<Option<usize>>, CellError> {
    let n_ue = rates_bps.len();
    if buffer_bits.len() != n_ue || avg_bps.len() != n_ue {
        return Err(CellError::invalid(
            "ues",
            format!("{n_ue} rate rows, {} buffers and {} averages; one each per UE", buffer_bits.len(), avg_bps.len()),
        ));
    }
    let n_rbg = rates_bps.first().map_or(0, Vec::len);
    for (u, row) in rates_bps.iter().enumerate() {
        if row.len() != n_rbg {
            return Err(CellError::invalid(&format!("rates_bps[{u}]"), format!("{} RBGs, expected {n_rbg}", row.len())));
        }
        // The fold has no early exit, so it vectorises; the culprit is looked for only when
        // there is one.
        if !row.iter().fold(true, |ok, r| ok & (r.is_finite() & (*r >= 0.0))) {
            let g = row.iter().position(|r| !(r.is_finite() && *r >= 0.0)).unwrap_or(0);
            return Err(CellError::out_of_range(&format!("rates_bps[{u}][{g}]"), row[g], "a finite rate ≥ 0 bit/s"));
        }
    }
    if kind == SchedulerKind::ProportionalFair {
        if let Some(u) = avg_bps.iter().position(|a| !(a.is_finite() && *a > 0.0)) {
            return Err(CellError::out_of_range(&format!("avg_bps[{u}]"), avg_bps[u], "a finite rate > 0 bit/s"));
        }
    }
    Ok(assign_checked(kind, rates_bps, buffer_bits, avg_bps, rr_start))
}

/// [`assign_rbgs`] on inputs known to be valid (the scheduler's own: rates from its table,
/// positive averages).
fn assign_checked(kind: SchedulerKind, rates_bps: &[Vec<f64>], buffer_bits: &[u64], avg_bps: &[f64], rr_start: usize) -> Vec<Option<usize>> {
    let n_rbg = rates_bps.first().map_or(0, Vec::len);
    let table = RateTable { n_rbg, rates: rates_bps.iter().flatten().copied().collect(), slot_s: TTI_S };
    let mut owner = Vec::new();
    assign_into(kind, &table, buffer_bits, avg_bps, rr_start, &[], false, &mut AssignScratch::default(), &mut owner);
    owner
}

/// Every UE's rate on every RBG in one buffer, UE by UE (`rates[u * n_rbg + g]`, bit/s), and
/// the slot they are rates over (a rate times the slot is the bits an RBG carries).
#[derive(Clone, Debug, Default)]
struct RateTable {
    n_rbg: usize,
    rates: Vec<f64>,
    slot_s: f64,
}

impl RateTable {
    fn n_ue(&self) -> usize {
        self.rates.len().checked_div(self.n_rbg).unwrap_or(0)
    }

    fn rate(&self, u: usize, g: usize) -> f64 {
        self.rates[u * self.n_rbg + g]
    }
}

/// The buffers [`assign_into`] works in, kept by a [`Scheduler`] from TTI to TTI.
#[derive(Clone, Debug, Default)]
struct AssignScratch {
    granted: Vec<f64>,
    count: Vec<usize>,
    /// The UEs that may still get an RBG (PF and max-C/I), in index order.
    eligible: Vec<usize>,
    /// PF's metric of every UE on every RBG, laid out as the rates.
    metric: Vec<f64>,
    active: Vec<usize>,
}

/// [`assign_checked`] on a [`RateTable`], into `owner` (one entry per RBG), with its buffers
/// in `scratch`. `reserved` (empty, or one flag per RBG) marks the RBGs no UE may take (their
/// rates are 0 in `table`); `flat` says that every UE's rate is the same on every full-size
/// RBG that is not reserved (all but the last, which may be smaller).
#[allow(clippy::too_many_arguments)]
fn assign_into(
    kind: SchedulerKind,
    table: &RateTable,
    buffer_bits: &[u64],
    avg_bps: &[f64],
    rr_start: usize,
    reserved: &[bool],
    flat: bool,
    scratch: &mut AssignScratch,
    owner: &mut Vec<Option<usize>>,
) {
    let (n_ue, n_rbg) = (table.n_ue(), table.n_rbg);
    owner.clear();
    owner.resize(n_rbg, None);
    let AssignScratch { granted, count, eligible, metric, active } = scratch;
    granted.clear();
    granted.resize(n_ue, 0.0);
    count.clear();
    count.resize(n_ue, 0);
    let has_room = |u: usize, granted: &[f64]| buffer_bits[u] > 0 && granted[u] < buffer_bits[u] as f64;
    match kind {
        SchedulerKind::ProportionalFair | SchedulerKind::MaxCi => {
            // PF's metric, rate / average, is worked out for every UE and RBG at once (it does
            // not change within the TTI); max-C/I's is the rate itself. Either is positive
            // where the rate is, and an RBG a UE cannot use (rate 0) has metric 0, which never
            // wins: the search below needs no test of the rate.
            // Over a flat band few RBGs are searched: their metrics are worked out as they are
            // looked at instead (the same division).
            let pf = kind == SchedulerKind::ProportionalFair;
            if pf && !flat {
                metric.clear();
                for (rates, a) in table.rates.chunks_exact(n_rbg.max(1)).zip(avg_bps) {
                    metric.extend(rates.iter().map(|&r| if r > 0.0 { r / a } else { 0.0 }));
                }
            }
            let metric_of = |u: usize, g: usize| -> f64 {
                let i = u * n_rbg + g;
                match (pf, flat) {
                    (true, false) => metric[i],
                    (true, true) if table.rates[i] > 0.0 => table.rates[i] / avg_bps[u],
                    (true, true) => 0.0,
                    (false, _) => table.rates[i],
                }
            };
            // A UE without room never regains it within the TTI: it leaves the list. The list
            // keeps index order, so ties still go to the lower index.
            eligible.clear();
            eligible.extend((0..n_ue).filter(|&u| has_room(u, granted)));
            // A channel that is the same over the band reports the same CQI on every RBG, so a
            // UE's metric is the same on every full-size RBG that is open (the last RBG may be
            // smaller; a reserved one has rate 0 for every UE). When every UE's is (`flat`), the
            // search of one such RBG answers for the next, until a UE leaves the list.
            let open = |g: usize| !reserved.get(g).copied().unwrap_or(false);
            let full = n_rbg.saturating_sub(1);
            let mut answered: Option<Option<usize>> = None;
            for (g, slot) in owner.iter_mut().enumerate() {
                if !open(g) {
                    continue;
                }
                let reuse = flat && g < full;
                let best = match answered.filter(|_| reuse) {
                    Some(best) => best,
                    None => {
                        // The highest metric, the lowest index on a tie; none if no UE can use
                        // the RBG.
                        let (mut best, mut best_metric) = (None, 0.0);
                        for &u in eligible.iter() {
                            let m = metric_of(u, g);
                            if m > best_metric {
                                (best, best_metric) = (Some(u), m);
                            }
                        }
                        best
                    }
                };
                if reuse {
                    answered = Some(best);
                }
                if let Some(u) = best {
                    *slot = Some(u);
                    granted[u] += table.rate(u, g) * table.slot_s;
                    if !has_room(u, granted) {
                        eligible.retain(|&e| e != u);
                        answered = None;
                    }
                }
            }
        }
        SchedulerKind::RoundRobin => {
            if n_ue == 0 {
                return;
            }
            active.clear();
            active.extend((0..n_ue).map(|k| (rr_start + k) % n_ue).filter(|&u| buffer_bits[u] > 0 && (0..n_rbg).any(|g| table.rate(u, g) > 0.0)));
            if active.is_empty() {
                return;
            }
            let quota = n_rbg.div_ceil(active.len());
            let mut turn = 0usize;
            for (g, slot) in owner.iter_mut().enumerate() {
                // The first UE from the current turn that can take this RBG.
                for k in 0..active.len() {
                    let u = active[(turn + k) % active.len()];
                    if table.rate(u, g) > 0.0 && count[u] < quota && has_room(u, granted) {
                        *slot = Some(u);
                        granted[u] += table.rate(u, g) * table.slot_s;
                        count[u] += 1;
                        turn = (turn + k) % active.len();
                        break;
                    }
                }
                let cur = active[turn];
                if count[cur] >= quota || !has_room(cur, granted) {
                    turn = (turn + 1) % active.len();
                }
            }
        }
    }
}

/// One UE's input to a TTI's decision.
#[derive(Clone, Copy, Debug)]
pub struct UeReport<'a> {
    /// The UE's subband CQI (0..=15) per RBG; 0 means nothing can be sent on that RBG.
    pub rbg_cqi: &'a [u8],
    /// Bytes waiting for the UE (its RLC buffer).
    pub buffer_bytes: u64,
}

/// One transport block granted for a TTI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The UE's index.
    pub ue: usize,
    /// The RBGs it got, in ascending order.
    pub rbgs: Vec<u16>,
    /// Physical resource blocks in those RBGs.
    pub n_prb: u16,
    /// The MCS of the worst CQI over its RBGs.
    pub mcs: u8,
    /// Transport block size in bits (36.213 Table 7.1.7.2.1-1).
    pub tbs_bits: u32,
}

/// A cell's downlink scheduler with its state between TTIs.
#[derive(Clone, Debug)]
pub struct Scheduler {
    kind: SchedulerKind,
    n_rb: u16,
    rbg_size: u16,
    avg_bps: Vec<f64>,
    rr_next: usize,
    window_ttis: f64,
    /// The MCS/CQI/TBS tables.
    scheme: McsScheme,
    /// The scheduling unit: LTE's TTI, an NR slot, seconds.
    slot_s: f64,
    /// NR: the REs of the slot being scheduled (its PDSCH symbols); LTE: none.
    shape: Option<TbsShape>,
    /// The rate (bit/s) of one RBG at each CQI: for a full RBG and for the last one (which
    /// may be smaller), for the current shape.
    rbg_rate_bps: [[f64; MAX_CQI as usize + 1]; 2],
    /// The rate tables of the shapes met so far (an NR pattern has a few: full and special
    /// slots).
    rates_by_shape: Vec<(Option<TbsShape>, [[f64; MAX_CQI as usize + 1]; 2])>,
    /// The rates of the last TTI, kept for their buffer.
    rates_scratch: RateTable,
    /// The other per-TTI buffers, kept likewise.
    scratch: SchedScratch,
}

/// A [`Scheduler`]'s per-TTI buffers.
#[derive(Clone, Debug, Default)]
struct SchedScratch {
    assign: AssignScratch,
    buffers: Vec<u64>,
    owner: Vec<Option<usize>>,
    /// Per UE: the RBGs it got this TTI.
    rbgs: Vec<Vec<u16>>,
    granted_bits: Vec<f64>,
    /// The UEs the table has rows for (those with data), in index order, and their averages.
    candidates: Vec<usize>,
    candidate_avg_bps: Vec<f64>,
}

impl Scheduler {
    /// A scheduler of `kind` for a band of `n_rb` (1..=110) resource blocks and `n_ues` UEs,
    /// with LENA's PF window of 99 TTIs.
    pub fn new(kind: SchedulerKind, n_rb: u16, n_ues: usize) -> Result<Scheduler, CellError> {
        if n_rb == 0 || n_rb > MAX_PRB {
            return Err(CellError::out_of_range("bandwidth_rb", n_rb as f64, "an integer in [1, 110]"));
        }
        Scheduler::build(kind, n_rb, rbg_size(n_rb)?, n_ues, McsScheme::Lte, TTI_S, None)
    }

    /// An NR slot scheduler of `kind` over `n_rb` (1..=275) PRBs in RBGs of `rbg_size` PRBs
    /// (TS 38.214 Table 5.1.2.2.1-1), slots of `slot_s` seconds, the MCS tables of `scheme`,
    /// the first slot's REs `shape` ([`Scheduler::set_shape`] changes it slot by slot).
    pub fn for_slots(kind: SchedulerKind, n_rb: u16, rbg_size: u16, n_ues: usize, scheme: McsScheme, slot_s: f64, shape: TbsShape) -> Result<Scheduler, CellError> {
        if n_rb == 0 || n_rb > NR_MAX_PRB {
            return Err(CellError::out_of_range("bandwidth_rb", n_rb as f64, "an integer in [1, 275]"));
        }
        if rbg_size == 0 || rbg_size > 16 {
            return Err(CellError::out_of_range("rbg_size", rbg_size as f64, "an integer in [1, 16]"));
        }
        crate::error::check_range("slot_s", slot_s, 1e-5, 1e-3, "s")?;
        Scheduler::build(kind, n_rb, rbg_size, n_ues, scheme, slot_s, Some(shape))
    }

    fn build(kind: SchedulerKind, n_rb: u16, p: u16, n_ues: usize, scheme: McsScheme, slot_s: f64, shape: Option<TbsShape>) -> Result<Scheduler, CellError> {
        let rbg_rate_bps = Scheduler::rbg_rates(scheme, n_rb, p, slot_s, shape)?;
        Ok(Scheduler {
            kind,
            n_rb,
            rbg_size: p,
            avg_bps: vec![1.0; n_ues],
            rr_next: 0,
            window_ttis: LENA_PF_WINDOW_TTIS,
            scheme,
            slot_s,
            shape,
            rbg_rate_bps,
            rates_by_shape: vec![(shape, rbg_rate_bps)],
            rates_scratch: RateTable::default(),
            scratch: SchedScratch::default(),
        })
    }

    /// The rate of a full RBG and of the last one at each CQI, for REs `shape`.
    fn rbg_rates(scheme: McsScheme, n_rb: u16, p: u16, slot_s: f64, shape: Option<TbsShape>) -> Result<[[f64; MAX_CQI as usize + 1]; 2], CellError> {
        let last = n_rb - (n_rb.div_ceil(p) - 1) * p;
        let mut rbg_rate_bps = [[0.0; MAX_CQI as usize + 1]; 2];
        for (rates, prbs) in rbg_rate_bps.iter_mut().zip([p.min(n_rb), last]) {
            for (cqi, rate) in rates.iter_mut().enumerate() {
                if let Some(mcs) = scheme.mcs_for_cqi(cqi as u8)? {
                    *rate = scheme.tbs_bits(mcs, prbs, shape)? as f64 / slot_s;
                }
            }
        }
        Ok(rbg_rate_bps)
    }

    /// NR: the next slot to schedule has REs `shape` (its PDSCH symbols). The rates of a shape
    /// are worked out the first time it is met.
    pub fn set_shape(&mut self, shape: TbsShape) -> Result<(), CellError> {
        if self.shape == Some(shape) {
            return Ok(());
        }
        if self.shape.is_none() {
            return Err(CellError::invalid("tbs_shape", "an LTE scheduler's TBS table takes no symbol count"));
        }
        let rates = match self.rates_by_shape.iter().find(|(s, _)| *s == Some(shape)) {
            Some((_, r)) => *r,
            None => {
                let r = Scheduler::rbg_rates(self.scheme, self.n_rb, self.rbg_size, self.slot_s, Some(shape))?;
                self.rates_by_shape.push((Some(shape), r));
                r
            }
        };
        self.rbg_rate_bps = rates;
        self.shape = Some(shape);
        Ok(())
    }

    /// The MCS tables.
    pub fn scheme(&self) -> McsScheme {
        self.scheme
    }

    /// The REs of the slot being scheduled (NR), none for LTE.
    pub fn shape(&self) -> Option<TbsShape> {
        self.shape
    }

    /// The same scheduler with a PF averaging window of `ttis` TTIs (1..=1e6).
    pub fn with_window(mut self, ttis: f64) -> Result<Scheduler, CellError> {
        crate::error::check_range("scheduler.window_ttis", ttis, 1.0, 1e6, "TTIs")?;
        self.window_ttis = ttis;
        Ok(self)
    }

    /// The number of RBGs: ⌈n_rb / P⌉.
    pub fn rbg_count(&self) -> usize {
        self.n_rb.div_ceil(self.rbg_size) as usize
    }

    /// The RBG size P, in resource blocks.
    pub fn rbg_size(&self) -> u16 {
        self.rbg_size
    }

    /// The band, in resource blocks.
    pub fn n_rb(&self) -> u16 {
        self.n_rb
    }

    /// PRBs in RBG `g` (the last one may be smaller).
    pub fn rbg_prbs(&self, g: usize) -> u16 {
        let start = (g.min(u16::MAX as usize) as u16).saturating_mul(self.rbg_size);
        self.rbg_size.min(self.n_rb.saturating_sub(start))
    }

    /// Each UE's PF average throughput, in bit/s.
    pub fn average_throughput_bps(&self) -> &[f64] {
        &self.avg_bps
    }

    /// One TTI: grants for the UEs in `ues` (one report per UE, each with one CQI per RBG).
    pub fn schedule(&mut self, ues: &[UeReport]) -> Result<Vec<Grant>, CellError> {
        self.schedule_masked(ues, &[], &[])
    }

    /// One TTI over what is left after retransmissions: as [`Scheduler::schedule`], but no UE
    /// gets an RBG g with `reserved[g]` true, and a UE u with `blocked[u]` true gets nothing
    /// (it has a retransmission in this TTI or no free HARQ process). An empty slice means
    /// nothing reserved or nothing blocked; otherwise the lengths must be the RBG count and
    /// the UE count. The PF averages count the bits of the grants made here.
    pub fn schedule_masked(&mut self, ues: &[UeReport], reserved: &[bool], blocked: &[bool]) -> Result<Vec<Grant>, CellError> {
        if ues.len() != self.avg_bps.len() {
            return Err(CellError::invalid("ues", format!("{} reports for {} UEs", ues.len(), self.avg_bps.len())));
        }
        if !blocked.is_empty() && blocked.len() != ues.len() {
            return Err(CellError::invalid("blocked", format!("{} flags for {} UEs", blocked.len(), ues.len())));
        }
        let listed: Vec<usize> = (0..ues.len()).filter(|&u| !blocked.get(u).copied().unwrap_or(false)).collect();
        let reports: Vec<UeReport> = listed.iter().map(|&u| ues[u]).collect();
        self.schedule_listed(&listed, &reports, reserved)
    }

    /// One TTI for the UEs listed in `ues` (strictly increasing indices), `reports[k]` being
    /// UE `ues[k]`'s; every other UE has nothing to send, or may get nothing (it has a
    /// retransmission in this TTI or no free HARQ process). Otherwise as
    /// [`Scheduler::schedule_masked`], to the grant: the decision looks only at the UEs with
    /// data, so a TTI costs what they do, not what the cell's UE count does. The PF averages
    /// of all UEs count the bits of the grants made here.
    pub fn schedule_listed(&mut self, ues: &[usize], reports: &[UeReport], reserved: &[bool]) -> Result<Vec<Grant>, CellError> {
        let n_ue = self.avg_bps.len();
        if reports.len() != ues.len() {
            return Err(CellError::invalid("reports", format!("{} reports for {} UEs listed", reports.len(), ues.len())));
        }
        if let Some(k) = ues.windows(2).position(|w| w[0] >= w[1]) {
            return Err(CellError::invalid("ues", format!("UE {} listed after UE {}: the list must increase", ues[k + 1], ues[k])));
        }
        if let Some(&u) = ues.last().filter(|&&u| u >= n_ue) {
            return Err(CellError::invalid("ues", format!("UE {u} listed in a cell of {n_ue} UEs")));
        }
        let n_rbg = self.rbg_count();
        if !reserved.is_empty() && reserved.len() != n_rbg {
            return Err(CellError::invalid("reserved", format!("{} flags for {n_rbg} RBGs", reserved.len())));
        }
        // The rate table is kept from TTI to TTI; it has a row for each UE with data.
        let mut table = std::mem::take(&mut self.rates_scratch);
        table.n_rbg = n_rbg;
        table.slot_s = self.slot_s;
        table.rates.clear();
        let mut sc = std::mem::take(&mut self.scratch);
        sc.candidates.clear();
        sc.buffers.clear();
        let [full, last] = &self.rbg_rate_bps;
        // Whether every UE with data reports one CQI on all its full-size RBGs (see
        // assign_into): the others are never looked at.
        let mut flat = true;
        // Most TTIs reserve no RBG for a retransmission: the rows then need no zeroing.
        let any_reserved = reserved.contains(&true);
        for (&u, r) in ues.iter().zip(reports) {
            if r.rbg_cqi.len() != n_rbg {
                self.scratch = sc;
                return Err(CellError::invalid(&format!("ues[{u}].rbg_cqi"), format!("{} CQIs for {n_rbg} RBGs", r.rbg_cqi.len())));
            }
            if let Some(g) = r.rbg_cqi.iter().position(|&cqi| cqi > MAX_CQI) {
                self.scratch = sc;
                return Err(CellError::out_of_range(&format!("ues[{u}].rbg_cqi[{g}]"), r.rbg_cqi[g] as f64, "an integer in [0, 15]"));
            }
            if r.buffer_bytes == 0 {
                continue;
            }
            let full_size = &r.rbg_cqi[..n_rbg.saturating_sub(1)];
            let row_flat = full_size.split_first().map_or(true, |(&first, rest)| rest.iter().all(|&c| c == first));
            flat &= row_flat;
            sc.candidates.push(u);
            sc.buffers.push(r.buffer_bytes.saturating_mul(8));
            // The row: the full-size RBGs' rates (one value repeated when they share a CQI),
            // then the last RBG's, which may be smaller.
            let start = table.rates.len();
            match full_size.first() {
                Some(&first) if row_flat => table.rates.resize(start + full_size.len(), full[first as usize]),
                _ => table.rates.extend(full_size.iter().map(|&cqi| full[cqi as usize])),
            }
            if let Some(&cqi) = r.rbg_cqi.last() {
                table.rates.push(last[cqi as usize]);
            }
            if any_reserved {
                let row = &mut table.rates[start..];
                for (rate, _) in row.iter_mut().zip(reserved).filter(|(_, &taken)| taken) {
                    *rate = 0.0;
                }
            }
        }
        sc.candidate_avg_bps.clear();
        sc.candidate_avg_bps.extend(sc.candidates.iter().map(|&u| self.avg_bps[u]));
        // The rates come from the table; an average reaches 0 only with a window of one TTI.
        if self.kind == SchedulerKind::ProportionalFair {
            if let Some(k) = sc.candidate_avg_bps.iter().position(|a| !(a.is_finite() && *a > 0.0)) {
                let (u, a) = (sc.candidates[k], sc.candidate_avg_bps[k]);
                self.scratch = sc;
                self.rates_scratch = table;
                return Err(CellError::out_of_range(&format!("avg_bps[{u}]"), a, "a finite rate > 0 bit/s"));
            }
        }
        // Round robin's turn starts at the first UE with data from `rr_next` on.
        let rr_start = sc.candidates.partition_point(|&u| u < self.rr_next);
        assign_into(self.kind, &table, &sc.buffers, &sc.candidate_avg_bps, rr_start, reserved, flat, &mut sc.assign, &mut sc.owner);
        self.rates_scratch = table;
        // RBGs per UE in one pass, so that only the UEs served are looked at.
        sc.rbgs.resize_with(sc.candidates.len(), Vec::new);
        for row in &mut sc.rbgs[..sc.candidates.len()] {
            row.clear();
        }
        for (g, o) in sc.owner.iter().enumerate() {
            if let Some(k) = *o {
                sc.rbgs[k].push(g as u16);
            }
        }
        let mut grants: Vec<Grant> = Vec::new();
        sc.granted_bits.clear();
        sc.granted_bits.resize(n_ue, 0.0);
        for (k, &u) in sc.candidates.iter().enumerate() {
            if sc.rbgs[k].is_empty() {
                continue;
            }
            let report = &reports[ues.partition_point(|&v| v < u)];
            let rbgs = sc.rbgs[k].clone();
            let worst = rbgs.iter().map(|&g| report.rbg_cqi[g as usize]).min().unwrap_or(0);
            // (An error leaves the buffers behind: the next TTI makes new ones.)
            let Some(mcs) = self.scheme.mcs_for_cqi(worst)? else { continue };
            let n_prb: u16 = rbgs.iter().map(|&g| self.rbg_prbs(g as usize)).sum();
            let tbs_bits = self.scheme.tbs_bits(mcs, n_prb, self.shape)?;
            sc.granted_bits[u] = tbs_bits as f64;
            grants.push(Grant { ue: u, rbgs, n_prb, mcs, tbs_bits });
        }
        let w = 1.0 / self.window_ttis;
        for (avg, bits) in self.avg_bps.iter_mut().zip(&sc.granted_bits) {
            *avg = (1.0 - w) * *avg + w * bits / self.slot_s;
        }
        self.scratch = sc;
        if n_ue > 0 {
            self.rr_next = (self.rr_next + 1) % n_ue;
        }
        Ok(grants)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// PF and max-C/I as a plain search per RBG: every UE with room looked at on every RBG.
    fn searched(kind: SchedulerKind, table: &RateTable, buffer_bits: &[u64], avg_bps: &[f64]) -> Vec<Option<usize>> {
        let (n_ue, n_rbg) = (table.n_ue(), table.n_rbg);
        let mut granted = vec![0.0; n_ue];
        let has_room = |u: usize, granted: &[f64]| buffer_bits[u] > 0 && granted[u] < buffer_bits[u] as f64;
        let mut owner = vec![None; n_rbg];
        for (g, slot) in owner.iter_mut().enumerate() {
            let mut best: Option<(usize, f64)> = None;
            for u in (0..n_ue).filter(|&u| has_room(u, &granted)) {
                let rate = table.rate(u, g);
                let metric = if kind == SchedulerKind::ProportionalFair { rate / avg_bps[u] } else { rate };
                if rate > 0.0 && best.map_or(true, |(_, m)| metric > m) {
                    best = Some((u, metric));
                }
            }
            if let Some((u, _)) = best {
                *slot = Some(u);
                granted[u] += table.rate(u, g) * table.slot_s;
            }
        }
        owner
    }

    proptest! {
        /// Rows flat over the band or not (all flat half of the time), RBGs reserved, buffers
        /// of any size, any averages: the search that reuses an RBG's answer for the next, when
        /// every row is flat, gives the plain search's RBGs.
        #[test]
        fn reusing_an_answer_gives_the_plain_search(
            rows in prop::collection::vec((any::<bool>(), prop::collection::vec(0usize..4, 13), 0u64..200_000, 1.0f64..1e7), 1..12),
            all_flat in any::<bool>(),
            reserved in prop::collection::vec(prop::bool::weighted(0.2), 13),
            pf in any::<bool>(),
        ) {
            let rows: Vec<_> = rows.into_iter().map(|(flat, cqis, buffer, avg)| (flat || all_flat, cqis, buffer, avg)).collect();
            let n_rbg = 13;
            let levels = [0.0, 1.0e6, 2.5e6, 4.0e6];
            let mut rates = Vec::new();
            for (flat, cqis, _, _) in &rows {
                for g in 0..n_rbg {
                    // A flat row's last (smaller) RBG may still have a rate of its own.
                    let level = match (*flat, g + 1 == n_rbg) {
                        (true, false) => cqis[0],
                        (true, true) => cqis[1],
                        (false, _) => cqis[g],
                    };
                    rates.push(if reserved[g] { 0.0 } else { levels[level] });
                }
            }
            let table = RateTable { n_rbg, rates, slot_s: TTI_S };
            let buffers: Vec<u64> = rows.iter().map(|r| r.2).collect();
            let avg: Vec<f64> = rows.iter().map(|r| r.3).collect();
            let kind = if pf { SchedulerKind::ProportionalFair } else { SchedulerKind::MaxCi };
            let mut owner = Vec::new();
            let flat = rows.iter().all(|r| r.0);
            assign_into(kind, &table, &buffers, &avg, 0, &reserved, flat, &mut AssignScratch::default(), &mut owner);
            prop_assert_eq!(owner, searched(kind, &table, &buffers, &avg));
        }

        /// TTI after TTI, with UEs coming and going, listing only the UEs with data (or every
        /// UE, those without data at buffer 0) gives the RBGs the search over a table of every
        /// UE gives, with the scheduler's averages and round robin's turn of that TTI.
        #[test]
        fn listing_the_ues_with_data_gives_the_search_over_every_ue(
            ttis in prop::collection::vec(prop::collection::vec((prop::collection::vec(0u8..16, 13), prop::bool::weighted(0.5), 1u64..40_000), 6), 1..25),
            kind in 0usize..3,
            list_every_ue in any::<bool>(),
        ) {
            let kind = [SchedulerKind::ProportionalFair, SchedulerKind::MaxCi, SchedulerKind::RoundRobin][kind];
            let mut sched = Scheduler::new(kind, 25, 6).unwrap();
            prop_assert_eq!(sched.rbg_count(), 13);
            for ues in &ttis {
                let [full, last] = sched.rbg_rate_bps;
                let rates: Vec<Vec<f64>> = ues
                    .iter()
                    .map(|(cqis, _, _)| cqis.iter().enumerate().map(|(g, &c)| if g == 12 { last[c as usize] } else { full[c as usize] }).collect())
                    .collect();
                let buffers: Vec<u64> = ues.iter().map(|&(_, data, bytes)| if data { bytes } else { 0 }).collect();
                let bits: Vec<u64> = buffers.iter().map(|b| b * 8).collect();
                let expected = assign_checked(kind, &rates, &bits, &sched.avg_bps, sched.rr_next);
                let listed: Vec<usize> = (0..ues.len()).filter(|&u| list_every_ue || buffers[u] > 0).collect();
                let reports: Vec<UeReport> = listed.iter().map(|&u| UeReport { rbg_cqi: &ues[u].0, buffer_bytes: buffers[u] }).collect();
                let grants = sched.schedule_listed(&listed, &reports, &[]).unwrap();
                let mut owner = vec![None; 13];
                for g in &grants {
                    for &rbg in &g.rbgs {
                        owner[rbg as usize] = Some(g.ue);
                    }
                }
                prop_assert_eq!(owner, expected);
            }
        }
    }
}
