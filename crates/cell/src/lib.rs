//! multiconn-cell: the PHY/MAC building blocks of a per-TTI LTE cell and a per-slot 5G NR cell,
//! sans-IO and seeded. Path loss, SINR, thermal noise and shadowing come from
//! `multiconn-radio`; this crate turns SINR per resource block into what a 1 ms TTI (or an NR
//! slot) carries.
//!
//! * [`tables`]: 3GPP TS 36.213 Tables 7.2.3-1 (CQI), 7.1.7.1-1 (MCS), 7.1.7.2.1-1 (TBS) and
//!   7.1.6.1-1 (RBG size), and ns-3 LENA's CQI → MCS map.
//! * [`amc`]: link adaptation: SINR per RB → CQI by the Shannon gap or by mutual-information
//!   effective SINR, BLER curves per MCS and seeded TB error draws.
//! * [`fading`]: time-correlated Rayleigh fading by a sum of sinusoids (Jakes spectrum), and Rician
//!   fading with a line of sight over it, flat,
//!   per resource block, or frequency-selective from a tapped delay line.
//! * [`tdl`]: the TS 36.104 Annex B.2 tapped delay lines (EPA, EVA, ETU): one Rayleigh process
//!   per tap, the channel of each RB at its centre frequency.
//! * [`sched`]: the downlink MAC schedulers per TTI over RBGs: proportional fair (LENA's
//!   rule), round robin and max-C/I.
//! * [`harq`]: the 8 downlink HARQ processes of a UE, up to 4 transmissions, soft combining
//!   by accumulated mutual information.
//! * [`dl`]: a cell's downlink MAC per TTI: retransmissions first, then the scheduler on the
//!   RBGs left, TB error draws and delivered payloads.
//! * [`rlc`]: the RLC UM transmission buffer of a bearer: drop-tail in bytes, segmentation
//!   into the granted TB with 36.322 headers, buffer status for the scheduler.
//! * [`rlc_rx`]: the RLC UM receiver: reordering with t-Reordering, SDU reassembly.
//! * [`rlc_am`]: the RLC AM entity pair (TS 38.322): ARQ with polling, STATUS reports,
//!   t-Reassembly and re-segmented retransmissions, for the LTE and the NR cell.
//! * [`bearer`]: a UE's RLC pair in one direction, UM or AM, and the packets it holds, with
//!   an optional queue discipline above the transmitting entity (`cell.aqm`: DualPI2 of
//!   RFC 9332, or CoDel, FQ-CoDel, PIE, from `multiconn-link`) that it pulls packets from
//!   when it fills a grant.
//! * [`carrier`]: the air interface a cell runs on, LTE or NR: the slot, what each slot offers
//!   each direction, HARQ reuse timing.
//! * [`scheme`]: the MCS/CQI/TBS tables the link adaptation, scheduler and HARQ read.
//! * [`blockage`]: a stochastic on/off blockage of a UE's link, ramped in and out.
//! * [`channel`]: SINR per RB and TTI between the eNB and a UE (link budget, path loss,
//!   fading, noise).
//! * [`ul`]: the uplink MAC per TTI: equal contiguous shares, power spread over them,
//!   synchronous HARQ.
//! * [`mobility`]: UE trajectories (distance moving linearly, clamped at the end).
//! * [`nr`]: the 5G NR physical-layer tables and procedures (TS 38.211/38.101/38.213/38.214/
//!   38.212/38.306): numerologies, PRBs per bandwidth, RBG size, TDD patterns, MCS and CQI
//!   tables, the TBS with LDPC base graph and code blocks, and the peak-rate formula.
//! * [`series`]: per-UE time series of a cell (SINR, CQI, MCS, RBs, TB errors, RLC buffer).
//! * [`l4s`]: L4S marking on a bearer's RLC buffer: CE on ECT(1) packets by their sojourn at
//!   dequeue (a step) or by a sojourn predicted at enqueue from the drained rate (a ramp).
//! * [`hop`]: the cell as a packet element: packets in per UE and direction, out TTI by TTI
//!   or dropped with the cell's causes.
//! * [`rrc`]: RRC's measurements and radio link monitoring (TS 38.331): the layer-3 filter,
//!   events A1–A5 and B1 with time-to-trigger, N310/N311/T310.
//! * [`ran`]: several cells of a layout, UEs moving along routes through them with
//!   load-weighted interference, and the handover procedure (A3, interruption, X2 forwarding,
//!   DAPS) and radio link failure.
//!
//! Errors are [`CellError`], whose messages name the field and the allowed range; no input
//! makes a function panic.

pub mod amc;
pub mod bearer;
pub mod blockage;
pub mod carrier;
pub mod channel;
pub mod dl;
mod dispersion_table;
pub mod error;
pub mod fading;
pub mod harq;
pub mod hop;
pub mod l4s;
pub mod memo;
mod mi_table;
pub mod mobility;
pub mod nr;
pub mod ran;
pub mod rlc;
pub mod rlc_am;
pub mod rlc_rx;
pub mod rrc;
pub mod sched;
pub mod scheme;
pub mod sdus;
pub mod series;
pub mod tables;
mod tbs;
pub mod tdl;
pub mod ul;

pub use bearer::{AmCounts, Payload, RlcMode};
pub use blockage::{Blockage, BlockageConfig};
pub use carrier::{Carrier, NrCarrier, SlotUse};
pub use channel::{LinkBudget, UeChannel};
pub use hop::{CellConfig, CellDirection, CellHop, CellOutput, Detached, FadingConfig, MacTiming, UeCounters, LENA_DL_DELAY_TTIS};
pub use rlc_rx::{RxCounters, UmReceiver};
pub use ul::{UlMac, UlMcs, UlMeasure, UlTb, UlTiming, UlTti, UlUeInput};
pub use series::{CellSeries, UeBin};
pub use mobility::Trajectory;
pub use amc::{draw_tb_error, effective_sinr_db, mean_mi_per_bit, mi_per_bit, AmcModel, BlerCurve};
pub use dl::{CellDropCause, DlMac, DlTb, DlTti, DlUeInput, HarqCounters};
pub use error::CellError;
pub use fading::{doppler_hz, CellFading, FadingSpread, Grid, RayleighFading, RicianFading};
pub use tdl::{TdlFading, TdlProfile};
pub use l4s::{L4sCounts, L4sMarking};
pub use harq::{HarqEntity, HarqTb, HarqTiming, MiCombining, TbDecoder, TxAttempt, TxOutcome, HARQ_PROCESSES, HARQ_RTT_TTIS, MAX_TRANSMISSIONS};
pub use rlc::{RlcBufferStatus, RlcCounters, UmPdu, UmSegment, UmTxBuffer};
pub use scheme::McsScheme;
pub use sched::{assign_rbgs, Grant, Scheduler, SchedulerKind, UeReport};
pub use tables::{
    cqi_entry, cqi_for_efficiency, mcs_entry, mcs_for_cqi, rbg_count, rbg_size, tbs_bits, tbs_for_mcs, CqiEntry, McsEntry, Modulation,
};
