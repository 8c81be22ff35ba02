//! A cell's uplink MAC per TTI (the LTE cell reference §3, as LENA's uplink schedulers share
//! the band): the UEs with data share the band in equal contiguous parts, each UE spreads its
//! power over its part, the eNB picks the MCS from the SINR over that part (MIESM, the target
//! BLER), and TBs in error are sent again 8 TTIs later (synchronous HARQ, TS 36.321 §5.4.2) on
//! the UE's part then, decoded with the mutual information of all transmissions combined, at
//! most 4 transmissions.
//!
//! Approximations against LENA: the eNB knows the SINR of the TTI it schedules (LENA measures
//! it on SRS or the previous data, a few ms old: the same at pedestrian Doppler); a
//! retransmission goes on the UE's part of the band of the retransmission's TTI, whatever its
//! size (LENA keeps the RBs); no PUCCH, BSR or grant delay (the buffer is known at once).

use multiconn_core::RngStream;

use crate::amc::{draw_tb_error, AmcModel, BlerCurve};
use crate::channel::LinkBudget;
use crate::error::CellError;
use crate::harq::{HARQ_RTT_TTIS, MAX_TRANSMISSIONS};
use crate::memo::SinrMemoSet;
use crate::tables::{mcs_entry, mcs_for_cqi, tbs_for_mcs};

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
}

impl<P> UlMac<P> {
    /// The uplink of `n_ues` UEs over `n_rb` RBs, the MCS chosen with `amc`, TB errors drawn
    /// from `curve` with `rng`.
    pub fn new(n_rb: u16, n_ues: usize, amc: AmcModel, curve: BlerCurve, rng: RngStream) -> Result<UlMac<P>, CellError> {
        amc.validate()?;
        curve.validate()?;
        Ok(UlMac { n_rb, amc, curve, rng, retx: (0..n_ues).map(|_| Vec::new()).collect(), next_first: 0, sinr: Vec::new(), memo: vec![SinrMemoSet::new(UL_MEMOS); n_ues] })
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
        let n = ues.len();
        if n == 0 {
            return Ok(out);
        }
        let buffers: Vec<u64> = ues.iter().map(|u| u.buffer_bytes).collect();
        let shares = self.shares(tti, &buffers);
        self.next_first = (self.next_first + 1) % n;
        for (u, rbs) in shares {
            let (first, n_alloc) = (rbs.start, rbs.len());
            budget.uplink_sinr(first, n_alloc, ues[u].loss_db, ues[u].fading_db, &mut self.sinr);
            let mut memo = self.memo[u].at(&self.sinr);
            let cqi = memo.cqi(&self.amc)?;
            out.measured.push(UlMeasure { ue: u, sinr_db: memo.mean_sinr_db(), cqi });
            if let Some(k) = self.retx[u].iter().position(|r| r.due <= tti) {
                let mut r = self.retx[u].remove(k);
                let modulation = mcs_entry(r.mcs)?.modulation;
                r.mi.push(memo.mean_mi(modulation)?);
                let p = self.curve.combined_error_probability(r.mcs, &r.mi)?;
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
                    r.due = tti + HARQ_RTT_TTIS;
                    self.retx[u].push(r);
                }
                continue;
            }
            if ues[u].buffer_bytes == 0 {
                continue;
            }
            let Some(mcs) = mcs_for_cqi(cqi)? else { continue }; // out of range: nothing goes up
            let tbs_bits = tbs_for_mcs(mcs, n_alloc as u16)?;
            let Some(payload) = fill(u, tbs_bits / 8) else { continue };
            let modulation = mcs_entry(mcs)?.modulation;
            let effective = memo.effective_sinr_db(modulation)?;
            let mi = memo.mean_mi(modulation)?;
            let p = self.curve.combined_error_probability(mcs, &[mi])?;
            let error = draw_tb_error(p, &mut self.rng);
            out.tbs.push(UlTb { ue: u, n_prb: n_alloc as u16, mcs, tbs_bits, transmission: 1, decoded: !error, dropped: false, sinr_db: effective });
            if error {
                self.retx[u].push(Retx { due: tti + HARQ_RTT_TTIS, mcs, tbs_bits, mi: vec![mi], payload });
            } else {
                out.delivered.push((u, payload));
            }
        }
        Ok(out)
    }
}
