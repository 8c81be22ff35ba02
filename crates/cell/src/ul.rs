//! A cell's uplink MAC per TTI (the LTE cell reference §3, as LENA's uplink schedulers share
//! the band): the UEs with data share the band in equal contiguous parts, each UE spreads its
//! power over its part, the eNB picks the MCS from the SINR over that part (MIESM, the target
//! BLER), and TBs in error are sent again 8 TTIs later (synchronous HARQ, TS 36.321 §5.4.2) on
//! the UE's part then, decoded with the mutual information of all transmissions combined, at
//! most 4 transmissions.
//!
//! When the eNB learns of a UE's data ([`UlTiming`]):
//!
//! * **immediately** (the default): the eNB knows every buffer in the TTI it schedules, and a UE
//!   sends in the TTI it is given its part;
//! * **through buffer status reports**, as LENA does (the LTE cell reference §3.1, §3.6; TS
//!   36.321 §5.4.5): in each TTI after its buffer changed, the UE sends a BSR with the bytes
//!   waiting, which the eNB's scheduler learns `bsr_ttis` later (LENA: 1 TTI to the next
//!   subframe indication, 4 in the UE PHY's queue, so 5); the scheduler then shares the band
//!   among the UEs it believes have data, picks each part's MCS on the SINR of that TTI, takes
//!   the granted TB off its estimate of the UE's buffer, and the UE sends on the grant
//!   `grant_ttis` later (LENA: 2 TTIs for the DCI to reach the UE, 4 to PUSCH, so 6). A burst of
//!   ACKs reaching an idle UE therefore waits about 12 ms before it goes up. A grant that finds
//!   the UE's buffer empty goes unused.
//!
//! How the eNB picks a part's MCS ([`UlMcs`]):
//!
//! * **measured** (the default): the highest MCS whose TB meets the cell's AMC target (MIESM
//!   over the part) at the SINR of the TTI it decides in;
//! * **as LENA does** (the LTE cell reference §3.2, §3.6; ns-3.37 `PfFfMacScheduler` UL and
//!   `LteUePhy` SRS): each UE sounds the whole band every `srs_period_ttis` TTIs (SRS, its power
//!   spread over every RB, UE u in the TTIs ≡ u modulo the period), and the MCS of a part is the
//!   CQI of its **worst** RB in the last SRS through LENA's Shannon gap (BER 5·10⁻⁵, Γ = 7.4 dB);
//!   CQI 0 (below −2.2 dB) means no grant; before its first SRS a UE gets MCS 0. The SRS is
//!   taken in the TTIs the uplink runs (while any UE has uplink work).
//!
//! Approximations against LENA: with the measured MCS the eNB knows the SINR of the TTI it
//! schedules (LENA measures it on SRS, a few ms old: the same at pedestrian Doppler); a
//! retransmission goes on the UE's part of the band of the retransmission's TTI, whatever its
//! size (LENA keeps the RBs); BSRs carry the exact byte count (not the 36.321 buffer size
//! levels) and travel as ideal messages, never lost; no PUCCH scheduling requests.

use std::collections::VecDeque;
use std::ops::Range;

use multiconn_core::RngStream;

use crate::amc::{draw_tb_error, AmcModel, BlerCurve};
use crate::channel::{LinkBudget, RB_BANDWIDTH_HZ};
use crate::error::CellError;
use crate::harq::{HarqTiming, MAX_TRANSMISSIONS};
use crate::memo::SinrMemoSet;
use crate::nr::tbs::TbsShape;
use crate::scheme::McsScheme;

/// SINR vectors remembered per UE: without fading a UE's SINRs depend only on its share of
/// the band, which takes a few values as UEs start and stop sending.
const UL_MEMOS: usize = 4;

/// One UE's input to an uplink TTI.
#[derive(Clone, Copy, Debug)]
pub struct UlUeInput<'a> {
    /// Path loss to the eNB, dB.
    pub loss_db: f64,
    /// Uplink fading gain of every RB of the band, dB.
    pub fading_db: &'a [f64],
    /// Bytes waiting (headers included).
    pub buffer_bytes: u64,
    /// SDUs that have entered the UE's buffer so far: a new one triggers a buffer status
    /// report even when the buffer is back at the size of the last report.
    pub arrived_sdus: u64,
}

/// One uplink TB sent in a TTI.
#[derive(Clone, Debug, PartialEq)]
pub struct UlTb {
    /// The UE's index.
    pub ue: usize,
    /// PRBs it went on.
    pub n_prb: u16,
    /// Its MCS.
    pub mcs: u8,
    /// Its size in bits.
    pub tbs_bits: u32,
    /// 1 for new data, 2..=4 for retransmissions.
    pub transmission: u8,
    /// Decoded.
    pub decoded: bool,
    /// In error for the last time: dropped.
    pub dropped: bool,
    /// The SINR the MCS was chosen on (MIESM effective), dB.
    pub sinr_db: f64,
}

/// What one uplink TTI did.
#[derive(Clone, Debug)]
pub struct UlTti<P> {
    /// The TBs sent.
    pub tbs: Vec<UlTb>,
    /// Payloads decoded, with their UE.
    pub delivered: Vec<(usize, P)>,
    /// Payloads dropped after the last transmission, with their UE.
    pub lost: Vec<(usize, P)>,
    /// Every UE given a part of the band: its index, the mean SINR over its part (dB) and
    /// the CQI of that part (0: out of range, no new TB).
    pub measured: Vec<UlMeasure>,
}

/// What the eNB measured on a UE's part of the band in one TTI.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UlMeasure {
    /// The UE's index.
    pub ue: usize,
    /// Mean SINR over its RBs, dB.
    pub sinr_db: f64,
    /// The CQI of its RBs.
    pub cqi: u8,
}

/// When the eNB learns of a UE's uplink data, and when the UE uses its grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UlTiming {
    /// The eNB knows each UE's buffer in the TTI it schedules; the UE sends in that TTI.
    Immediate,
    /// Buffer status reports and grants (see the module's description).
    Bsr {
        /// TTIs from the UE's report to the scheduler's knowing it (LENA: 5).
        bsr_ttis: u64,
        /// TTIs from the scheduler's grant to the UE's sending on it (LENA: 6).
        grant_ttis: u64,
    },
}

impl UlTiming {
    /// LENA's: a BSR known 5 TTIs after it is sent, a grant used 6 TTIs after it is made.
    pub const LENA: UlTiming = UlTiming::Bsr { bsr_ttis: 5, grant_ttis: 6 };

    /// Checks the delays (at most 100 TTIs each).
    pub fn validate(&self) -> Result<(), CellError> {
        if let UlTiming::Bsr { bsr_ttis, grant_ttis } = *self {
            crate::error::check_range("cell.timing.bsr_ttis", bsr_ttis as f64, 0.0, 100.0, "TTIs")?;
            crate::error::check_range("cell.timing.grant_ttis", grant_ttis as f64, 0.0, 100.0, "TTIs")?;
        }
        Ok(())
    }
}

/// How the eNB picks the MCS of a UE's part of the band.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UlMcs {
    /// The MCS meeting the cell's AMC target at the part's SINR in the TTI it is decided.
    Measured,
    /// LENA's: the worst RB of the part in the UE's last sounding of the band, through the
    /// Shannon gap; SRS every `srs_period_ttis` TTIs.
    Lena {
        /// TTIs between a UE's SRS (LENA: 40 for this many UEs).
        srs_period_ttis: u64,
    },
}

impl UlMcs {
    /// Every rule by its name in scenarios.
    pub const NAMES: [(&'static str, UlMcs); 2] = [("measured", UlMcs::Measured), ("lena", UlMcs::LENA)];

    /// LENA's, with SRS every 40 TTIs (`LteEnbRrc::SrsPeriodicity`).
    pub const LENA: UlMcs = UlMcs::Lena { srs_period_ttis: 40 };

    /// Checks the SRS period (1 to 320 TTIs, 36.213's range).
    pub fn validate(&self) -> Result<(), CellError> {
        if let UlMcs::Lena { srs_period_ttis } = *self {
            crate::error::check_range("cell.uplink_mcs.srs_period_ttis", srs_period_ttis as f64, 1.0, 320.0, "TTIs")?;
        }
        Ok(())
    }
}

/// A part of the band granted for one TTI.
#[derive(Clone, Debug)]
struct Grant {
    ue: usize,
    rbs: Range<usize>,
    /// The MCS and TB size of new data (`None`: the part was granted for a retransmission).
    new: Option<(u8, u32)>,
}

/// A UE's part of a TTI's resource blocks: (UE, resource-block range).
type PlannedPart = (usize, Range<usize>);

/// What the scheduler has learnt and granted under [`UlTiming::Bsr`].
#[derive(Debug, Default)]
struct Reports {
    /// Per UE: the buffer and the SDUs arrived at its last report.
    last_sent: Vec<Option<(u64, u64)>>,
    /// Reports on their way: (TTI the scheduler learns it, UE, bytes).
    in_flight: VecDeque<(u64, usize, u64)>,
    /// Per UE: the scheduler's estimate of its buffer, bytes.
    estimate: Vec<u64>,
    /// Grants made, by the TTI they are for, in order.
    grants: VecDeque<(u64, Vec<Grant>)>,
    /// The TTI whose reports were last taken in, and the parts decided in it (for
    /// `tti + grant_ttis`).
    planned: Option<(u64, Vec<PlannedPart>)>,
}

struct Retx<P> {
    due: u64,
    mcs: u8,
    tbs_bits: u32,
    mi: Vec<f64>,
    payload: P,
}

/// A cell's uplink MAC.
pub struct UlMac<P> {
    n_rb: u16,
    amc: AmcModel,
    curve: BlerCurve,
    rng: RngStream,
    retx: Vec<Vec<Retx<P>>>,
    next_first: usize,
    sinr: Vec<f64>,
    /// Per UE: link adaptation of its last few SINR vectors.
    memo: Vec<SinrMemoSet>,
    timing: UlTiming,
    reports: Reports,
    mcs_rule: UlMcs,
    /// Per UE: its SINR on every RB at its last SRS (empty before the first), dB.
    srs_sinr: Vec<Vec<f64>>,
    /// The MCS/CQI/TBS tables, and NR's PUSCH REs.
    scheme: McsScheme,
    shape: Option<TbsShape>,
    /// When a TB in error may be sent again.
    harq: HarqTiming,
    /// The width of a resource block, Hz.
    rb_hz: f64,
}

impl<P> UlMac<P> {
    /// The uplink of `n_ues` UEs over `n_rb` RBs, the MCS chosen with `amc`, TB errors drawn
    /// from `curve` with `rng`.
    pub fn new(n_rb: u16, n_ues: usize, amc: AmcModel, curve: BlerCurve, rng: RngStream) -> Result<UlMac<P>, CellError> {
        amc.validate()?;
        curve.validate()?;
        Ok(UlMac {
            n_rb,
            amc,
            curve,
            rng,
            retx: (0..n_ues).map(|_| Vec::new()).collect(),
            next_first: 0,
            sinr: Vec::new(),
            memo: vec![SinrMemoSet::new(UL_MEMOS); n_ues],
            timing: UlTiming::Immediate,
            reports: Reports { last_sent: vec![None; n_ues], estimate: vec![0; n_ues], ..Reports::default() },
            mcs_rule: UlMcs::Measured,
            srs_sinr: vec![Vec::new(); n_ues],
            scheme: McsScheme::Lte,
            shape: None,
            harq: HarqTiming::default(),
            rb_hz: RB_BANDWIDTH_HZ,
        })
    }

    /// The same MAC on NR slots: MCSs from `scheme`, TBs over the PUSCH REs `shape`, a TB in
    /// error sent again as `harq` says (LTE's synchronous 8-TTI round trip is the default).
    /// `rb_hz` is the PRB's width (12 subcarriers).
    pub fn for_slots(mut self, scheme: McsScheme, shape: TbsShape, harq: HarqTiming, rb_hz: f64) -> Result<UlMac<P>, CellError> {
        scheme.tbs_bits(0, 1, Some(shape))?;
        crate::error::check_range("rb_hz", rb_hz, 1.0e5, 2.0e6, "Hz")?;
        self.rb_hz = rb_hz;
        self.scheme = scheme;
        self.shape = Some(shape);
        self.harq = harq;
        Ok(self)
    }

    /// Resets UE `ue`'s MAC (at handover): the TBs waiting for a retransmission are handed
    /// back.
    pub fn reset_ue(&mut self, ue: usize) -> Vec<P> {
        self.retx.get_mut(ue).map(|r| r.drain(..).map(|r| r.payload).collect()).unwrap_or_default()
    }

    /// The same MAC with each part's MCS picked as `rule` says.
    pub fn with_mcs(mut self, rule: UlMcs) -> Result<UlMac<P>, CellError> {
        rule.validate()?;
        self.mcs_rule = rule;
        Ok(self)
    }

    /// The UEs that sound the band in TTI `tti` (none with the measured MCS).
    fn sounding(&self, tti: u64) -> impl Iterator<Item = usize> + '_ {
        let period = match self.mcs_rule {
            UlMcs::Lena { srs_period_ttis } => srs_period_ttis,
            UlMcs::Measured => 0,
        };
        (0..self.srs_sinr.len()).filter(move |&u| period > 0 && tti % period == u as u64 % period)
    }

    /// The same MAC with the eNB learning of the UEs' data as `timing` says.
    pub fn with_timing(mut self, timing: UlTiming) -> Result<UlMac<P>, CellError> {
        timing.validate()?;
        self.timing = timing;
        Ok(self)
    }

    /// Whether anything of UE `ue`'s uplink is under way: a retransmission waiting, and with
    /// BSRs a report on its way, a grant not yet used or data the scheduler believes waiting.
    pub fn busy(&self, ue: usize) -> bool {
        let r = &self.reports;
        self.has_retx(ue)
            || r.estimate.get(ue).is_some_and(|&e| e > 0)
            || r.in_flight.iter().any(|&(_, u, _)| u == ue)
            || r.grants.iter().any(|(_, g)| g.iter().any(|g| g.ue == ue))
    }

    /// The parts of the band the UEs occupy in TTI `tti`, given each UE's buffer (bytes) and
    /// the SDUs that have entered it so far (a report follows every change of either): with
    /// immediate timing [`UlMac::shares`]; with BSRs the parts sending on their grants, and the
    /// parts the scheduler grants in this TTI (measured on this TTI's channel), one range per
    /// UE covering both. Call once per TTI, before [`UlMac::tti`]: it takes in the UEs'
    /// reports. [`UlMac::tti`] uses the same parts.
    pub fn parts(&mut self, tti: u64, buffer_bytes: &[u64], arrived_sdus: &[u64]) -> Vec<(usize, Range<usize>)> {
        let mut parts = self.sending_parts(tti, buffer_bytes, arrived_sdus);
        // A UE sounding the band in this TTI is measured on all of it.
        let sounding: Vec<usize> = self.sounding(tti).collect();
        for u in sounding {
            match parts.iter_mut().find(|(p, _)| *p == u) {
                Some((_, r)) => *r = 0..self.n_rb as usize,
                None => parts.push((u, 0..self.n_rb as usize)),
            }
        }
        parts
    }

    /// [`UlMac::parts`] without the sounding.
    fn sending_parts(&mut self, tti: u64, buffer_bytes: &[u64], arrived_sdus: &[u64]) -> Vec<(usize, Range<usize>)> {
        let UlTiming::Bsr { bsr_ttis, grant_ttis } = self.timing else {
            return self.shares(tti, buffer_bytes);
        };
        let status: Vec<(u64, u64)> = buffer_bytes.iter().zip(arrived_sdus.iter().chain(std::iter::repeat(&0))).map(|(&b, &a)| (b, a)).collect();
        let decided = self.plan(tti, &status, bsr_ttis, grant_ttis);
        let mut parts: Vec<(usize, Range<usize>)> = Vec::new();
        let sending = self.reports.grants.front().filter(|(t, _)| *t == tti).map(|(_, g)| g.as_slice()).unwrap_or(&[]);
        for (u, rbs) in sending.iter().map(|g| (g.ue, g.rbs.clone())).chain(decided) {
            match parts.iter_mut().find(|(p, _)| *p == u) {
                Some((_, r)) => *r = r.start.min(rbs.start)..r.end.max(rbs.end),
                None => parts.push((u, rbs)),
            }
        }
        parts
    }

    /// The UEs' reports for TTI `tti` (each UE whose buffer or arrivals, `status`, changed since
    /// its last report sends one), the scheduler's learning of those due, and its parts for
    /// `tti + grant_ttis`.
    fn plan(&mut self, tti: u64, status: &[(u64, u64)], bsr_ttis: u64, grant_ttis: u64) -> Vec<(usize, Range<usize>)> {
        if let Some((t, parts)) = &self.reports.planned {
            if *t == tti {
                return parts.clone();
            }
        }
        let r = &mut self.reports;
        for (u, &(bytes, arrived)) in status.iter().enumerate() {
            if r.last_sent[u] != Some((bytes, arrived)) {
                r.last_sent[u] = Some((bytes, arrived));
                r.in_flight.push_back((tti + bsr_ttis, u, bytes));
            }
        }
        while let Some(&(due, u, bytes)) = r.in_flight.front() {
            if due > tti {
                break;
            }
            r.estimate[u] = bytes;
            r.in_flight.pop_front();
        }
        let estimate = r.estimate.clone();
        let parts = self.shares(tti + grant_ttis, &estimate);
        self.next_first = (self.next_first + 1) % status.len().max(1);
        self.reports.planned = Some((tti, parts.clone()));
        parts
    }

    /// Whether UE `ue` has a TB waiting for a retransmission.
    pub fn has_retx(&self, ue: usize) -> bool {
        !self.retx[ue].is_empty()
    }

    /// The UEs that get a part of the band in TTI `tti`, with their RBs, given each UE's
    /// buffer (bytes): those with data or a retransmission due, in round-robin order from a
    /// rotating start, in equal contiguous parts (the first ones one RB more when the band does
    /// not divide), at most one UE per RB. [`UlMac::tti`] gives the same parts.
    pub fn shares(&self, tti: u64, buffer_bytes: &[u64]) -> Vec<(usize, std::ops::Range<usize>)> {
        let n = buffer_bytes.len();
        let active: Vec<usize> = (0..n)
            .map(|i| (self.next_first + i) % n)
            .filter(|&u| buffer_bytes[u] > 0 || self.retx[u].iter().any(|r| r.due <= tti))
            .take(self.n_rb as usize)
            .collect();
        if active.is_empty() {
            return Vec::new();
        }
        let share = self.n_rb as usize / active.len();
        let extra = self.n_rb as usize % active.len();
        let mut first = 0usize;
        active
            .iter()
            .enumerate()
            .map(|(i, &u)| {
                let n_alloc = share + usize::from(i < extra);
                first += n_alloc;
                (u, first - n_alloc..first)
            })
            .collect()
    }

    /// One TTI. `fill(ue, bytes)` gives the payload of a new TB of `bytes` bytes for UE `ue`.
    pub fn tti(&mut self, tti: u64, budget: &LinkBudget, ues: &[UlUeInput], mut fill: impl FnMut(usize, u32) -> Option<P>) -> Result<UlTti<P>, CellError> {
        let mut out = UlTti { tbs: Vec::new(), delivered: Vec::new(), lost: Vec::new(), measured: Vec::new() };
        if ues.is_empty() {
            return Ok(out);
        }
        self.sound(tti, budget, ues);
        let grants = match self.timing {
            UlTiming::Immediate => self.grant_now(tti, budget, ues, &mut out.measured)?,
            UlTiming::Bsr { bsr_ttis, grant_ttis } => {
                self.grant_ahead(tti, budget, ues, (bsr_ttis, grant_ttis), &mut out.measured)?;
                self.grants_due(tti)
            }
        };
        for grant in grants {
            self.send(tti, budget, ues, grant, &mut fill, &mut out)?;
        }
        Ok(out)
    }

    /// The SRS of the UEs that sound the band in TTI `tti`.
    fn sound(&mut self, tti: u64, budget: &LinkBudget, ues: &[UlUeInput]) {
        let sounding: Vec<usize> = self.sounding(tti).collect();
        for u in sounding {
            let mut srs = std::mem::take(&mut self.srs_sinr[u]);
            budget.uplink_sinr_rb(0, self.n_rb as usize, self.rb_hz, ues[u].loss_db, ues[u].fading_db, &mut srs);
            self.srs_sinr[u] = srs;
        }
    }

    /// Immediate timing: the parts of this TTI, decided on the buffers and the channel now.
    fn grant_now(&mut self, tti: u64, budget: &LinkBudget, ues: &[UlUeInput], measured: &mut Vec<UlMeasure>) -> Result<Vec<Grant>, CellError> {
        let buffers: Vec<u64> = ues.iter().map(|u| u.buffer_bytes).collect();
        let shares = self.shares(tti, &buffers);
        self.next_first = (self.next_first + 1) % ues.len();
        let mut grants = Vec::with_capacity(shares.len());
        for (u, rbs) in shares {
            let (cqi, mean) = self.measure(u, &rbs, budget, &ues[u])?;
            measured.push(UlMeasure { ue: u, sinr_db: mean, cqi });
            let new = if self.retx[u].iter().any(|r| r.due <= tti) || ues[u].buffer_bytes == 0 { None } else { self.new_tb(cqi, rbs.len())? };
            grants.push(Grant { ue: u, rbs, new });
        }
        Ok(grants)
    }

    /// With BSRs: the scheduler grants the parts of TTI `tti + grant_ttis` on this TTI's
    /// channel and takes each new TB off its estimate of the UE's buffer.
    fn grant_ahead(&mut self, tti: u64, budget: &LinkBudget, ues: &[UlUeInput], (bsr_ttis, grant_ttis): (u64, u64), measured: &mut Vec<UlMeasure>) -> Result<(), CellError> {
        let status: Vec<(u64, u64)> = ues.iter().map(|u| (u.buffer_bytes, u.arrived_sdus)).collect();
        let at = tti + grant_ttis;
        for (u, rbs) in self.plan(tti, &status, bsr_ttis, grant_ttis) {
            let (cqi, mean) = self.measure(u, &rbs, budget, &ues[u])?;
            measured.push(UlMeasure { ue: u, sinr_db: mean, cqi });
            let new = if self.retx[u].iter().any(|r| r.due <= at) { None } else { self.new_tb(cqi, rbs.len())? };
            if let Some((_, tbs_bits)) = new {
                let e = &mut self.reports.estimate[u];
                *e = e.saturating_sub(u64::from(tbs_bits / 8));
            }
            let grant = Grant { ue: u, rbs, new };
            match self.reports.grants.back_mut() {
                Some((t, g)) if *t == at => g.push(grant),
                _ => self.reports.grants.push_back((at, vec![grant])),
            }
        }
        Ok(())
    }

    /// With BSRs: the grants made for TTI `tti`.
    fn grants_due(&mut self, tti: u64) -> Vec<Grant> {
        match self.reports.grants.front() {
            Some((t, _)) if *t <= tti => self.reports.grants.pop_front().map(|(_, g)| g).unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// UE `grant.ue` sends on its part in TTI `tti`: a retransmission due first, else a new TB
    /// if the grant is for one and the buffer has data (a grant that finds it empty goes
    /// unused); the TB is decoded on this TTI's SINR.
    fn send(&mut self, tti: u64, budget: &LinkBudget, ues: &[UlUeInput], grant: Grant, fill: &mut impl FnMut(usize, u32) -> Option<P>, out: &mut UlTti<P>) -> Result<(), CellError> {
        let Grant { ue: u, rbs, new } = grant;
        let n_alloc = rbs.len();
        budget.uplink_sinr_rb(rbs.start, n_alloc, self.rb_hz, ues[u].loss_db, ues[u].fading_db, &mut self.sinr);
        let mut memo = self.memo[u].at(&self.sinr);
        if let Some(k) = self.retx[u].iter().position(|r| r.due <= tti) {
            let mut r = self.retx[u].remove(k);
            let modulation = self.scheme.modulation(r.mcs)?;
            r.mi.push(memo.mean_mi(modulation)?);
            let p = self.curve.tb_error_probability_in(self.scheme, r.mcs, r.tbs_bits, &r.mi)?;
            let error = draw_tb_error(p, &mut self.rng);
            let transmission = r.mi.len() as u8;
            let dropped = error && transmission >= MAX_TRANSMISSIONS;
            let effective = memo.effective_sinr_db(modulation)?;
            out.tbs.push(UlTb { ue: u, n_prb: n_alloc as u16, mcs: r.mcs, tbs_bits: r.tbs_bits, transmission, decoded: !error, dropped, sinr_db: effective });
            if !error {
                out.delivered.push((u, r.payload));
            } else if dropped {
                out.lost.push((u, r.payload));
            } else {
                r.due = self.harq.ready(tti);
                self.retx[u].push(r);
            }
            return Ok(());
        }
        let Some((mcs, tbs_bits)) = new else { return Ok(()) };
        if ues[u].buffer_bytes == 0 {
            return Ok(());
        }
        let Some(payload) = fill(u, tbs_bits / 8) else { return Ok(()) };
        let modulation = self.scheme.modulation(mcs)?;
        let effective = memo.effective_sinr_db(modulation)?;
        let mi = memo.mean_mi(modulation)?;
        let p = self.curve.tb_error_probability_in(self.scheme, mcs, tbs_bits, &[mi])?;
        let error = draw_tb_error(p, &mut self.rng);
        out.tbs.push(UlTb { ue: u, n_prb: n_alloc as u16, mcs, tbs_bits, transmission: 1, decoded: !error, dropped: false, sinr_db: effective });
        if error {
            self.retx[u].push(Retx { due: self.harq.ready(tti), mcs, tbs_bits, mi: vec![mi], payload });
        } else {
            out.delivered.push((u, payload));
        }
        Ok(())
    }

    /// The CQI the MCS of UE `u`'s part `rbs` is picked from, and the part's mean SINR (dB) in
    /// this TTI.
    fn measure(&mut self, u: usize, rbs: &Range<usize>, budget: &LinkBudget, ue: &UlUeInput) -> Result<(u8, f64), CellError> {
        budget.uplink_sinr_rb(rbs.start, rbs.len(), self.rb_hz, ue.loss_db, ue.fading_db, &mut self.sinr);
        let mut memo = self.memo[u].at(&self.sinr);
        let mean = memo.mean_sinr_db();
        let cqi = match self.mcs_rule {
            UlMcs::Measured => memo.cqi(&self.amc, self.scheme)?,
            UlMcs::Lena { .. } => match self.srs_sinr[u].get(rbs.clone()) {
                // The worst RB of the part in the last SRS, through LENA's Shannon gap.
                Some(srs) if !srs.is_empty() => {
                    let worst = srs.iter().copied().fold(f64::INFINITY, f64::min);
                    AmcModel::shannon_gap().cqi_in(self.scheme, &[worst])?
                }
                // No SRS yet: MCS 0 (CQI 1).
                _ => 1,
            },
        };
        Ok((cqi, mean))
    }

    /// The MCS and TB size (bits) of a new TB at `cqi` over `n_alloc` RBs; `None` at CQI 0.
    fn new_tb(&self, cqi: u8, n_alloc: usize) -> Result<Option<(u8, u32)>, CellError> {
        let Some(mcs) = self.scheme.mcs_for_cqi(cqi)? else { return Ok(None) };
        Ok(Some((mcs, self.scheme.tbs_bits(mcs, n_alloc as u16, self.shape)?)))
    }
}
