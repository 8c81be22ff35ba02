//! One cell's downlink MAC per 1 ms TTI: HARQ retransmissions first, then new data by the
//! scheduler on what is left (as ns-3 LENA's `PfFfMacScheduler` orders it; TS 36.321 §5.3.2
//! for HARQ, TS 36.213 §7.1.6.1 for RBGs).
//!
//! [`DlMac::tti`] is sans-IO: in go the TTI index, each UE's subband CQIs (one per RBG, what the
//! scheduler knows), its actual SINR per resource block in this TTI (what the TB meets) and its
//! buffer; out come the TBs sent with their allocation, size, transmission number and outcome,
//! and the payloads delivered or lost. The payload of a new TB is asked from the caller with
//! `fill(ue, bytes)` (the RLC, see [`crate::rlc`]), so this module never sees packets.
//!
//! Order within a TTI:
//!
//! 1. Every UE's NACKed TBs whose HARQ RTT (8 TTIs) has passed are retransmitted, oldest first,
//!    at most one TB per UE per TTI, each with its MCS and TB size and the same number of RBGs
//!    (and PRBs) as before, as LENA requires: on its previous RBGs if they are all free, else on
//!    the lowest free RBGs of the same sizes. If there are not enough, it waits for a later TTI.
//! 2. The scheduler ([`Scheduler::schedule_masked`]) shares the RBGs left among the UEs that got
//!    no retransmission and have a free HARQ process.
//!
//! Every transmission is decided at the end of its TTI by the [`TbDecoder`]; the sender learns
//! the outcome from the ACK/NACK at n + 4 and acts on it from n + 8. The decode result and any
//! delivered payload are reported in the TTI of the transmission. LENA's 2-TTI delay from the
//! scheduler to the air (`MacToChannelDelay`) is left to the caller: a constant shift.

use multiconn_core::rng::RngStream;

use crate::error::CellError;
use crate::harq::{HarqEntity, HarqTb, HarqTiming, TbDecoder, TxOutcome};
use crate::memo::SinrMemo;
use crate::sched::{Scheduler, UeReport};
use crate::tables::MAX_CQI;

/// Largest SINR magnitude accepted, in dB.
const SINR_LIMIT_DB: f64 = 200.0;

/// Why a cell dropped data. The names are those of the reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CellDropCause {
    /// An SDU did not fit in the RLC transmission buffer (LENA's `TxDrop`).
    RlcBufferFull,
    /// A TB was still in error after 4 HARQ transmissions.
    HarqMaxRetx,
    /// The receiving RLC gave the SDU's PDU up on t-Reordering's expiry before HARQ delivered
    /// it (retransmissions queued behind each other in a long fade).
    RlcReordering,
    /// RLC AM gave the SDU up after maxRetxThreshold retransmissions (a radio link failure),
    /// or discarded it in the re-establishment that followed.
    RlcMaxRetx,
    /// Lost with the source cell's state at a handover (UM: sent in part or in HARQ; anything
    /// when forwarding is off) or at a radio link failure.
    Handover,
    /// Dropped by the queue discipline above the RLC entity (`cell.aqm`, [`crate::bearer`]):
    /// its own rule (DualPI2's coupled drops, CoDel's head drops, PIE's early drops), not its
    /// byte limit (that is [`CellDropCause::RlcBufferFull`]).
    Aqm,
}

impl CellDropCause {
    /// Its name in reports: `"rlc_buffer_full"`, `"harq_max_retx"`, `"rlc_reordering"`,
    /// `"rlc_max_retx"`, `"handover"` or `"aqm"`.
    pub fn name(self) -> &'static str {
        match self {
            CellDropCause::RlcBufferFull => "rlc_buffer_full",
            CellDropCause::HarqMaxRetx => "harq_max_retx",
            CellDropCause::RlcReordering => "rlc_reordering",
            CellDropCause::RlcMaxRetx => "rlc_max_retx",
            CellDropCause::Handover => "handover",
            CellDropCause::Aqm => "aqm",
        }
    }
}

/// One UE's input to a TTI.
#[derive(Clone, Copy, Debug)]
pub struct DlUeInput<'a> {
    /// Its last subband CQI report, one per RBG (0..=15).
    pub rbg_cqi: &'a [u8],
    /// Its SINR per resource block in this TTI, in dB, one per RB of the band.
    pub sinr_db: &'a [f64],
    /// Bytes waiting for it (RLC buffer status, headers included).
    pub buffer_bytes: u64,
}

/// One TB sent in a TTI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DlTb {
    /// The UE's index.
    pub ue: usize,
    /// Its HARQ process, 0..=7.
    pub process: usize,
    /// The RBGs it went on, ascending.
    pub rbgs: Vec<u16>,
    /// PRBs in those RBGs.
    pub n_prb: u16,
    /// Its MCS.
    pub mcs: u8,
    /// Its size in bits.
    pub tbs_bits: u32,
    /// 1 for new data, 2..=4 for retransmissions.
    pub transmission: u8,
    /// Decoded at the end of the TTI.
    pub decoded: bool,
    /// In error for the 4th time: dropped.
    pub dropped: bool,
}

/// What one TTI did.
#[derive(Clone, Debug)]
pub struct DlTti<P> {
    /// The TBs sent, retransmissions first.
    pub tbs: Vec<DlTb>,
    /// Payloads of the TBs decoded, with their UE.
    pub delivered: Vec<(usize, P)>,
    /// Payloads of the TBs dropped after 4 transmissions, with their UE.
    pub lost: Vec<(usize, P)>,
}

/// Counts since the start, over all UEs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HarqCounters {
    /// New TBs sent.
    pub new_tbs: u64,
    /// Retransmissions sent.
    pub retransmissions: u64,
    /// TBs decoded (at any transmission).
    pub decoded: u64,
    /// Transmissions in error (NACKs, the final ones included).
    pub errors: u64,
    /// TBs dropped after 4 transmissions ([`CellDropCause::HarqMaxRetx`]).
    pub dropped_tbs: u64,
    /// Bits of those TBs.
    pub dropped_bits: u64,
    /// Bits of the TBs decoded.
    pub decoded_bits: u64,
}

/// A cell's downlink MAC: the scheduler, one [`HarqEntity`] per UE, the decoder and its stream.
pub struct DlMac<P, D: TbDecoder> {
    sched: Scheduler,
    harq: Vec<HarqEntity<P>>,
    decoder: D,
    rng: RngStream,
    last_tti: Option<u64>,
    counters: HarqCounters,
    /// Per UE: the MI of each block of its last SINRs.
    memo: Vec<SinrMemo>,
    /// Per-TTI buffers, kept from TTI to TTI.
    scratch: TtiScratch,
}

/// A [`DlMac`]'s per-TTI buffers.
#[derive(Clone, Debug, Default)]
struct TtiScratch {
    /// Per RBG: taken by a retransmission.
    used: Vec<bool>,
    /// Per UE listed: gets no new TB this TTI.
    blocked: Vec<bool>,
    /// Retransmissions due: (NACKed since, UE, process, its place in the list).
    due: Vec<(u64, usize, usize, usize)>,
    /// Per UE listed: its free HARQ process.
    procs: Vec<Option<usize>>,
}

impl<P, D: TbDecoder> DlMac<P, D> {
    /// A MAC for the UEs of `sched` (as many as it was built for), deciding TBs with `decoder`
    /// and drawing from `rng`.
    pub fn new(sched: Scheduler, decoder: D, rng: RngStream) -> DlMac<P, D> {
        let n_ues = sched.average_throughput_bps().len();
        DlMac {
            sched,
            harq: (0..n_ues).map(|_| HarqEntity::default()).collect(),
            decoder,
            rng,
            last_tti: None,
            counters: HarqCounters::default(),
            memo: vec![SinrMemo::default(); n_ues],
            scratch: TtiScratch::default(),
        }
    }

    /// The same MAC with `processes` (1..=16) HARQ processes per UE, reused as `timing` says
    /// (NR; LTE FDD's 8 processes and 8-TTI round trip are the default).
    pub fn with_harq(mut self, processes: usize, timing: HarqTiming) -> Result<DlMac<P, D>, CellError> {
        self.harq = (0..self.harq.len()).map(|_| HarqEntity::new(processes, timing.clone())).collect::<Result<_, _>>()?;
        Ok(self)
    }

    /// NR: the slot about to be run has REs `shape` ([`Scheduler::set_shape`]).
    pub fn set_shape(&mut self, shape: crate::nr::tbs::TbsShape) -> Result<(), CellError> {
        self.sched.set_shape(shape)
    }

    /// The counts since the start.
    pub fn counters(&self) -> HarqCounters {
        self.counters
    }

    /// The scheduler (PF averages, RBG layout).
    pub fn scheduler(&self) -> &Scheduler {
        &self.sched
    }

    /// Resets UE `ue`'s MAC (TS 38.321 §5.12, at handover): its HARQ processes are flushed
    /// and the TBs they held handed back.
    pub fn reset_ue(&mut self, ue: usize) -> Vec<P> {
        self.harq.get_mut(ue).map(HarqEntity::flush).unwrap_or_default()
    }

    /// UE `ue`'s HARQ processes.
    pub fn harq(&self, ue: usize) -> Option<&HarqEntity<P>> {
        self.harq.get(ue)
    }

    /// The resource blocks of RBG `g` of `sched`.
    fn rbg_rbs(sched: &Scheduler, g: u16) -> std::ops::Range<usize> {
        let p = sched.rbg_size() as usize;
        let start = g as usize * p;
        start..start + sched.rbg_prbs(g as usize) as usize
    }

    fn mean_mi(&mut self, ue: usize, sinr_db: &[f64], mcs: u8, rbgs: &[u16]) -> Result<f64, CellError> {
        let m = self.sched.scheme().modulation(mcs)?;
        let sched = &self.sched;
        let rbs = rbgs.iter().flat_map(|&g| Self::rbg_rbs(sched, g));
        self.memo[ue].at(sinr_db).mean_mi_of(m, rbs).map_err(|e| match e {
            CellError::OutOfRange { value, allowed, .. } => CellError::OutOfRange { field: format!("ues[{ue}].sinr_db"), value, allowed },
            other => other,
        })
    }

    /// RBGs for a retransmission that went on `prev`: `prev` if all free, else the lowest free
    /// RBGs of the same sizes; `None` if there are not enough.
    fn retx_rbgs(&self, prev: &[u16], used: &[bool]) -> Option<Vec<u16>> {
        if prev.iter().all(|&g| !used.get(g as usize).copied().unwrap_or(true)) {
            return Some(prev.to_vec());
        }
        let full = self.sched.rbg_size();
        let mut need_short: Vec<u16> = prev.iter().map(|&g| self.sched.rbg_prbs(g as usize)).filter(|&n| n != full).collect();
        let mut need_full = prev.len() - need_short.len();
        let mut out = Vec::with_capacity(prev.len());
        for (g, &u) in used.iter().enumerate() {
            if u {
                continue;
            }
            let n = self.sched.rbg_prbs(g);
            if n == full && need_full > 0 {
                need_full -= 1;
                out.push(g as u16);
            } else if let Some(k) = need_short.iter().position(|&s| s == n) {
                need_short.swap_remove(k);
                out.push(g as u16);
            }
        }
        (need_full == 0 && need_short.is_empty()).then_some(out)
    }

    fn check_inputs(&self, tti: u64, listed: &[usize], ues: &[DlUeInput]) -> Result<(), CellError> {
        if let Some(last) = self.last_tti {
            if tti <= last {
                return Err(CellError::invalid("tti", format!("TTI {tti} after TTI {last}: TTIs must increase")));
            }
        }
        if listed.len() != ues.len() {
            return Err(CellError::invalid("ues", format!("{} inputs for {} UEs listed", ues.len(), listed.len())));
        }
        if let Some(k) = listed.windows(2).position(|w| w[0] >= w[1]) {
            return Err(CellError::invalid("ues", format!("UE {} listed after UE {}: the list must increase", listed[k + 1], listed[k])));
        }
        if let Some(&u) = listed.last().filter(|&&u| u >= self.harq.len()) {
            return Err(CellError::invalid("ues", format!("UE {u} listed in a cell of {} UEs", self.harq.len())));
        }
        // Everything is checked before anything changes.
        let n_rb = self.sched.n_rb() as usize;
        let n_rbg = self.sched.rbg_count();
        for (&u, ue) in listed.iter().zip(ues) {
            if ue.sinr_db.len() != n_rb {
                return Err(CellError::invalid(
                    &format!("ues[{u}].sinr_db"),
                    format!("{} SINRs for {n_rb} resource blocks", ue.sinr_db.len()),
                ));
            }
            // |s| ≤ limit is false for NaN and infinities too; the fold has no early exit, so it
            // vectorises, and the failing block is looked for only when there is one.
            #[allow(clippy::neg_cmp_op_on_partial_ord)] // NaN must fail the check
            if !ue.sinr_db.iter().fold(true, |ok, s| ok & (s.abs() <= SINR_LIMIT_DB)) {
                let rb = ue.sinr_db.iter().position(|s| !(s.abs() <= SINR_LIMIT_DB)).unwrap_or(0);
                return Err(CellError::out_of_range(&format!("ues[{u}].sinr_db[{rb}]"), ue.sinr_db[rb], "a number in [-200, 200] dB"));
            }
            if ue.rbg_cqi.len() != n_rbg {
                return Err(CellError::invalid(&format!("ues[{u}].rbg_cqi"), format!("{} CQIs for {n_rbg} RBGs", ue.rbg_cqi.len())));
            }
            if ue.rbg_cqi.iter().fold(0, |max, &c| max.max(c)) > MAX_CQI {
                let g = ue.rbg_cqi.iter().position(|&c| c > MAX_CQI).unwrap_or(0);
                return Err(CellError::out_of_range(&format!("ues[{u}].rbg_cqi[{g}]"), ue.rbg_cqi[g] as f64, "an integer in [0, 15]"));
            }
        }
        Ok(())
    }

    fn record(&mut self, ue: usize, outcome: TxOutcome<P>, tbs_bits: u32, out: &mut DlTti<P>) -> (bool, bool) {
        match outcome {
            TxOutcome::Decoded(p) => {
                self.counters.decoded += 1;
                self.counters.decoded_bits += tbs_bits as u64;
                out.delivered.push((ue, p));
                (true, false)
            }
            TxOutcome::Nacked => {
                self.counters.errors += 1;
                (false, false)
            }
            TxOutcome::Dropped(p) => {
                self.counters.errors += 1;
                self.counters.dropped_tbs += 1;
                self.counters.dropped_bits += tbs_bits as u64;
                out.lost.push((ue, p));
                (false, true)
            }
        }
    }

    /// One TTI (see the module's description). `fill(ue, bytes)` returns the payload of a new
    /// TB of `bytes` bytes for UE `ue`, or `None` to leave the grant unused. `ues` has one
    /// input per UE of the cell.
    pub fn tti(&mut self, tti: u64, ues: &[DlUeInput], fill: impl FnMut(usize, u32) -> Option<P>) -> Result<DlTti<P>, CellError> {
        if ues.len() != self.harq.len() {
            return Err(CellError::invalid("ues", format!("{} inputs for {} UEs", ues.len(), self.harq.len())));
        }
        let listed: Vec<usize> = (0..ues.len()).collect();
        self.tti_listed(tti, &listed, ues, fill)
    }

    /// One TTI for the UEs in `listed` (strictly increasing indices), `ues[k]` being UE
    /// `listed[k]`'s input: as [`DlMac::tti`] with every other UE idle — nothing queued and
    /// no HARQ process in use ([`HarqEntity::busy`] 0), which the caller keeps to (a UE left
    /// out with a process in use would miss its retransmissions). A TTI costs what the UEs
    /// listed do, not what the cell's UE count does.
    pub fn tti_listed(&mut self, tti: u64, listed: &[usize], ues: &[DlUeInput], mut fill: impl FnMut(usize, u32) -> Option<P>) -> Result<DlTti<P>, CellError> {
        self.check_inputs(tti, listed, ues)?;
        debug_assert!(
            self.harq.iter().enumerate().all(|(u, h)| h.busy() == 0 || listed.binary_search(&u).is_ok()),
            "a UE with a HARQ process in use was left out of the TTI"
        );
        let n_rbg = self.sched.rbg_count();
        // (An error below leaves the buffers behind: the next TTI makes new ones.)
        let TtiScratch { mut used, mut blocked, mut due, mut procs } = std::mem::take(&mut self.scratch);
        used.clear();
        used.resize(n_rbg, false);
        // Per listed UE.
        blocked.clear();
        blocked.resize(listed.len(), false);
        let mut out = DlTti { tbs: Vec::new(), delivered: Vec::new(), lost: Vec::new() };

        // 1. Retransmissions, oldest first, at most one per UE.
        due.clear();
        for (k, &u) in listed.iter().enumerate() {
            let h = &mut self.harq[u];
            h.release(tti);
            if let Some(&(p, since)) = h.pending_retx(tti).first() {
                due.push((since, u, p, k));
            }
        }
        due.sort_unstable();
        for &(_, u, p, k) in &due {
            let Some(tb) = self.harq[u].tb(p) else { continue };
            let (mcs, tbs_bits, n_prb, prev, transmission) = (tb.mcs, tb.tbs_bits, tb.n_prb, tb.rbgs.clone(), tb.transmissions + 1);
            let Some(rbgs) = self.retx_rbgs(&prev, &used) else { continue };
            let mi = self.mean_mi(u, ues[k].sinr_db, mcs, &rbgs)?;
            let outcome = self.harq[u].send_retx(p, tti, u, rbgs.clone(), mi, &mut self.decoder, &mut self.rng)?;
            for &g in &rbgs {
                used[g as usize] = true;
            }
            blocked[k] = true;
            self.counters.retransmissions += 1;
            let (decoded, dropped) = self.record(u, outcome, tbs_bits, &mut out);
            out.tbs.push(DlTb { ue: u, process: p, rbgs, n_prb, mcs, tbs_bits, transmission, decoded, dropped });
        }

        // 2. New data on what is left, for the UEs with a free process and no retransmission.
        procs.clear();
        procs.resize(listed.len(), None);
        for (k, &u) in listed.iter().enumerate() {
            procs[k] = self.harq[u].free_process(tti);
            if procs[k].is_none() {
                blocked[k] = true;
            }
        }
        let (mut open, mut reports) = (Vec::with_capacity(listed.len()), Vec::with_capacity(listed.len()));
        for (k, (&u, input)) in listed.iter().zip(ues).enumerate() {
            if !blocked[k] {
                open.push(u);
                reports.push(UeReport { rbg_cqi: input.rbg_cqi, buffer_bytes: input.buffer_bytes });
            }
        }
        let grants = self.sched.schedule_listed(&open, &reports, &used)?;
        for g in grants {
            let u = g.ue;
            let k = listed.partition_point(|&v| v < u);
            let Some(p) = procs[k] else { continue };
            let Some(payload) = fill(u, g.tbs_bits / 8) else { continue };
            let mi = self.mean_mi(u, ues[k].sinr_db, g.mcs, &g.rbgs)?;
            let tb = HarqTb {
                rbgs: g.rbgs.clone(),
                n_prb: g.n_prb,
                mcs: g.mcs,
                tbs_bits: g.tbs_bits,
                transmissions: 0,
                mi_per_tx: Vec::new(),
                payload,
            };
            let outcome = self.harq[u].send_new(p, tti, u, tb, mi, &mut self.decoder, &mut self.rng)?;
            self.counters.new_tbs += 1;
            let (decoded, dropped) = self.record(u, outcome, g.tbs_bits, &mut out);
            out.tbs.push(DlTb {
                ue: u,
                process: p,
                rbgs: g.rbgs,
                n_prb: g.n_prb,
                mcs: g.mcs,
                tbs_bits: g.tbs_bits,
                transmission: 1,
                decoded,
                dropped,
            });
        }
        self.scratch = TtiScratch { used, blocked, due, procs };
        self.last_tti = Some(tti);
        Ok(out)
    }
}
