//! Downlink HARQ of one UE: 8 stop-and-wait processes (3GPP TS 36.321 §5.3.2, TS 36.213 §7
//! and §10.1 for FDD timing), as ns-3 LENA models it.
//!
//! * **Processes.** A UE has [`HARQ_PROCESSES`] = 8 processes. A transport block (TB) sent at
//!   TTI n occupies its process until the sender may act on the UE's feedback: the ACK/NACK is
//!   sent at n + [`HARQ_FEEDBACK_DELAY_TTIS`] (4) and the process can carry a retransmission or
//!   a new TB from n + [`HARQ_RTT_TTIS`] (8) on. With 8 processes a UE can receive a TB in
//!   every TTI. The downlink is asynchronous: a retransmission may come any time from n + 8 on.
//! * **Retransmissions.** A NACKed TB is sent again with the same MCS and size (LENA keeps
//!   both). After [`MAX_TRANSMISSIONS`] = 4 transmissions (3 retransmissions, LENA's limit) a TB
//!   still in error is dropped; the drop has its own cause,
//!   [`CellDropCause::HarqMaxRetx`](crate::CellDropCause::HarqMaxRetx).
//! * **Soft combining.** Incremental redundancy is modelled as LENA's MI error model does: each
//!   transmission's mean mutual information (MI) per coded bit is kept, and the TB is judged at
//!   their mean and at the effective code rate of all code bits sent so far
//!   ([`BlerCurve::combined_error_probability`]). Each transmission draws its own uniform number
//!   against that combined error probability, as LENA does. Approximations: retransmissions
//!   carry as many code bits as the first (same PRB count, so the mean is unweighted), and the
//!   rate gain is applied to this crate's logistic curve rather than to LENA's per-code-rate
//!   Vienna curves.
//!
//! The decision of decodability is a [`TbDecoder`], so tests can force error patterns; the
//! model of record is [`MiCombining`].

use multiconn_core::rng::RngStream;

use crate::amc::{draw_tb_error, BlerCurve};
use crate::error::CellError;
use crate::scheme::McsScheme;

/// HARQ processes per UE in FDD (TS 36.213 §7).
pub const HARQ_PROCESSES: usize = 8;
/// Transmissions of one TB at most: the first and 3 retransmissions (LENA's limit).
pub const MAX_TRANSMISSIONS: u8 = 4;
/// TTIs from a transmission to the UE's ACK/NACK (FDD, TS 36.213 §10.1).
pub const HARQ_FEEDBACK_DELAY_TTIS: u64 = 4;
/// TTIs from a transmission to the earliest reuse of its process (the HARQ round-trip time).
pub const HARQ_RTT_TTIS: u64 = 8;

/// When a HARQ process may act again after a transmission in slot (TTI) n: the slot from which
/// its TB may be retransmitted, or the process carry a new one. LTE FDD: n + 8, always (TS
/// 36.213 §7, §10.1). NR: it depends on where n falls in the TDD pattern (the ACK waits for an
/// uplink slot), so the offset is given per slot of the pattern's period.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HarqTiming {
    /// Per slot of the period: slots from a transmission in it to the process's reuse.
    ready_after: Vec<u64>,
}

impl Default for HarqTiming {
    /// LTE FDD's: [`HARQ_RTT_TTIS`] after every TTI.
    fn default() -> HarqTiming {
        HarqTiming { ready_after: vec![HARQ_RTT_TTIS] }
    }
}

impl HarqTiming {
    /// A timing repeating every `ready_after.len()` slots: a transmission in slot n may be
    /// followed from slot n + `ready_after[n mod period]` on. Each offset is at least 1 slot.
    pub fn periodic(ready_after: Vec<u64>) -> Result<HarqTiming, CellError> {
        if ready_after.is_empty() || ready_after.len() > 1280 {
            return Err(CellError::out_of_range("harq.period_slots", ready_after.len() as f64, "an integer in [1, 1280]"));
        }
        if let Some(k) = ready_after.iter().position(|&d| d == 0 || d > 1000) {
            return Err(CellError::out_of_range(&format!("harq.ready_after[{k}]"), ready_after[k] as f64, "an integer in [1, 1000] slots"));
        }
        Ok(HarqTiming { ready_after })
    }

    /// The first slot from which the process of a transmission in slot `slot` is ready again.
    pub fn ready(&self, slot: u64) -> u64 {
        slot + self.ready_after[(slot % self.ready_after.len() as u64) as usize]
    }
}

/// One transmission of a TB, as a [`TbDecoder`] sees it.
#[derive(Clone, Copy, Debug)]
pub struct TxAttempt<'a> {
    /// The UE's index.
    pub ue: usize,
    /// The TTI of this transmission.
    pub tti: u64,
    /// The MCS (0..=28), the same for every transmission of the TB.
    pub mcs: u8,
    /// TB size in bits.
    pub tbs_bits: u32,
    /// Which transmission this is, 1..=4.
    pub transmission: u8,
    /// Mean MI per coded bit of every transmission so far, this one last.
    pub mi_per_tx: &'a [f64],
}

/// Decides whether a TB decodes after a transmission.
pub trait TbDecoder {
    /// True if the UE decodes the TB after `attempt`; draws from `rng` as it needs.
    fn decode(&mut self, attempt: &TxAttempt, rng: &mut RngStream) -> Result<bool, CellError>;
}

/// The model of record: the MI-combined TB error probability of a [`BlerCurve`] and one
/// Bernoulli draw per transmission.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MiCombining {
    /// The TB error probability curves.
    pub curve: BlerCurve,
    /// The tables the MCS indices are read in.
    pub scheme: McsScheme,
}

impl TbDecoder for MiCombining {
    fn decode(&mut self, attempt: &TxAttempt, rng: &mut RngStream) -> Result<bool, CellError> {
        let p = self.curve.tb_error_probability_in(self.scheme, attempt.mcs, attempt.tbs_bits, attempt.mi_per_tx)?;
        Ok(!draw_tb_error(p, rng))
    }
}

/// A TB held by a process, with what its retransmissions need.
#[derive(Clone, Debug)]
pub struct HarqTb<P> {
    /// The RBGs of its last transmission.
    pub rbgs: Vec<u16>,
    /// PRBs per transmission.
    pub n_prb: u16,
    /// Its MCS.
    pub mcs: u8,
    /// Its size in bits.
    pub tbs_bits: u32,
    /// Transmissions so far.
    pub transmissions: u8,
    /// Mean MI per coded bit of each transmission.
    pub mi_per_tx: Vec<f64>,
    /// What it carries (RLC PDUs).
    pub payload: P,
}

#[derive(Clone, Debug)]
enum Process<P> {
    Idle,
    /// Its TB was decoded or dropped; the process is free again from `ready_tti`.
    Done {
        ready_tti: u64,
    },
    /// Its TB was NACKed and may be retransmitted from `ready_tti`.
    Nacked {
        ready_tti: u64,
        tb: HarqTb<P>,
    },
}

/// The outcome of one transmission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TxOutcome<P> {
    /// Decoded: the payload is delivered.
    Decoded(P),
    /// In error; the TB waits for a retransmission from TTI n + 8.
    Nacked,
    /// In error for the 4th time: the TB is dropped and its payload lost.
    Dropped(P),
}

/// The 8 downlink HARQ processes of one UE.
#[derive(Clone, Debug)]
pub struct HarqEntity<P> {
    procs: Vec<Process<P>>,
    timing: HarqTiming,
}

impl<P> Default for HarqEntity<P> {
    /// LTE FDD's: [`HARQ_PROCESSES`] processes, reused [`HARQ_RTT_TTIS`] after a transmission.
    fn default() -> HarqEntity<P> {
        HarqEntity { procs: (0..HARQ_PROCESSES).map(|_| Process::Idle).collect(), timing: HarqTiming::default() }
    }
}

impl<P> HarqEntity<P> {
    /// `processes` (1..=16) processes reused as `timing` says (NR: up to 16, TS 38.331
    /// `nrofHARQ-ProcessesForPDSCH`).
    pub fn new(processes: usize, timing: HarqTiming) -> Result<HarqEntity<P>, CellError> {
        if !(1..=16).contains(&processes) {
            return Err(CellError::out_of_range("harq_processes", processes as f64, "an integer in [1, 16]"));
        }
        Ok(HarqEntity { procs: (0..processes).map(|_| Process::Idle).collect(), timing })
    }

    /// Flushes every process (MAC reset, TS 38.321 §5.12: at handover or re-establishment):
    /// the TBs waiting for a retransmission are handed back, every process is idle.
    pub fn flush(&mut self) -> Vec<P> {
        let mut held = Vec::new();
        for p in &mut self.procs {
            if let Process::Nacked { tb, .. } = std::mem::replace(p, Process::Idle) {
                held.push(tb.payload);
            }
        }
        held
    }

    /// Frees the processes whose TB was decoded or dropped and whose RTT has passed by `tti`.
    pub fn release(&mut self, tti: u64) {
        for p in &mut self.procs {
            if let Process::Done { ready_tti } = p {
                if *ready_tti <= tti {
                    *p = Process::Idle;
                }
            }
        }
    }

    /// A process free for a new TB at `tti` (the lowest index), if any.
    pub fn free_process(&mut self, tti: u64) -> Option<usize> {
        self.release(tti);
        self.procs.iter().position(|p| matches!(p, Process::Idle))
    }

    /// The processes with a NACKed TB whose retransmission may go at `tti`, oldest first:
    /// (process, the TTI from which it was due).
    pub fn pending_retx(&self, tti: u64) -> Vec<(usize, u64)> {
        let mut v: Vec<(usize, u64)> = self
            .procs
            .iter()
            .enumerate()
            .filter_map(|(i, p)| match p {
                Process::Nacked { ready_tti, .. } if *ready_tti <= tti => Some((i, *ready_tti)),
                _ => None,
            })
            .collect();
        v.sort_by_key(|&(i, due)| (due, i));
        v
    }

    /// The TB held by process `process`, if any.
    pub fn tb(&self, process: usize) -> Option<&HarqTb<P>> {
        match self.procs.get(process) {
            Some(Process::Nacked { tb, .. }) => Some(tb),
            _ => None,
        }
    }

    /// Processes holding a TB (sent and not yet released).
    pub fn busy(&self) -> usize {
        self.procs.iter().filter(|p| !matches!(p, Process::Idle)).count()
    }

    /// Sends `tb` (a new TB, `tb.transmissions` = 0 and no MI yet) on free process `process`
    /// at `tti` over blocks with mean MI `mi`, and decides it with `decoder`.
    #[allow(clippy::too_many_arguments)]
    pub fn send_new(
        &mut self,
        process: usize,
        tti: u64,
        ue: usize,
        mut tb: HarqTb<P>,
        mi: f64,
        decoder: &mut dyn TbDecoder,
        rng: &mut RngStream,
    ) -> Result<TxOutcome<P>, CellError> {
        match self.procs.get(process) {
            Some(Process::Idle) => {}
            Some(_) => return Err(CellError::invalid("harq.process", format!("process {process} is busy"))),
            None => return Err(CellError::out_of_range("harq.process", process as f64, &format!("an integer in [0, {}]", self.procs.len() - 1))),
        }
        tb.transmissions = 0;
        tb.mi_per_tx.clear();
        self.transmit(process, tti, ue, tb, mi, decoder, rng)
    }

    /// Sends the NACKed TB of `process` again at `tti` on `rbgs` (as many PRBs as before) over
    /// blocks with mean MI `mi`.
    #[allow(clippy::too_many_arguments)]
    pub fn send_retx(
        &mut self,
        process: usize,
        tti: u64,
        ue: usize,
        rbgs: Vec<u16>,
        mi: f64,
        decoder: &mut dyn TbDecoder,
        rng: &mut RngStream,
    ) -> Result<TxOutcome<P>, CellError> {
        let last = self.procs.len() - 1;
        let slot = self.procs.get_mut(process).ok_or_else(|| CellError::out_of_range("harq.process", process as f64, &format!("an integer in [0, {last}]")))?;
        match slot {
            Process::Nacked { ready_tti, .. } if *ready_tti <= tti => {}
            _ => return Err(CellError::invalid("harq.process", format!("process {process} has no retransmission due at TTI {tti}"))),
        }
        let Process::Nacked { mut tb, .. } = std::mem::replace(slot, Process::Idle) else {
            return Err(CellError::invalid("harq.process", "no TB"));
        };
        tb.rbgs = rbgs;
        self.transmit(process, tti, ue, tb, mi, decoder, rng)
    }

    #[allow(clippy::too_many_arguments)]
    fn transmit(
        &mut self,
        process: usize,
        tti: u64,
        ue: usize,
        mut tb: HarqTb<P>,
        mi: f64,
        decoder: &mut dyn TbDecoder,
        rng: &mut RngStream,
    ) -> Result<TxOutcome<P>, CellError> {
        crate::error::check_range("mi", mi, 0.0, 1.0, "bit per coded bit")?;
        tb.transmissions += 1;
        tb.mi_per_tx.push(mi);
        let attempt = TxAttempt { ue, tti, mcs: tb.mcs, tbs_bits: tb.tbs_bits, transmission: tb.transmissions, mi_per_tx: &tb.mi_per_tx };
        let ok = decoder.decode(&attempt, rng)?;
        let ready_tti = self.timing.ready(tti);
        if ok || tb.transmissions >= MAX_TRANSMISSIONS {
            // The process stays busy for the RTT; what it carried leaves now.
            self.procs[process] = Process::Done { ready_tti };
            return Ok(if ok { TxOutcome::Decoded(tb.payload) } else { TxOutcome::Dropped(tb.payload) });
        }
        self.procs[process] = Process::Nacked { ready_tti, tb };
        Ok(TxOutcome::Nacked)
    }
}
