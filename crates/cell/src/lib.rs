//! multiconn-cell: the PHY/MAC building blocks of a per-TTI LTE cell (issue "An LTE cell"),
//! sans-IO and seeded. Path loss, SINR, thermal noise and shadowing come from
//! `multiconn-radio`; this crate turns SINR per resource block into what a 1 ms TTI carries.
//!
//! * [`tables`]: 3GPP TS 36.213 Tables 7.2.3-1 (CQI), 7.1.7.1-1 (MCS), 7.1.7.2.1-1 (TBS) and
//!   7.1.6.1-1 (RBG size), and ns-3 LENA's CQI → MCS map.
//! * [`amc`]: link adaptation: SINR per RB → CQI by the Shannon gap or by mutual-information
//!   effective SINR, BLER curves per MCS and seeded TB error draws.
//! * [`fading`]: time-correlated Rayleigh fading by a sum of sinusoids (Jakes spectrum), flat
//!   or per resource block.
//! * [`sched`]: the downlink MAC schedulers per TTI over RBGs: proportional fair (LENA's
//!   rule), round robin and max-C/I.
//!
//! Errors are [`CellError`], whose messages name the field and the allowed range; no input
//! makes a function panic.

pub mod amc;
pub mod error;
pub mod fading;
pub mod sched;
pub mod tables;
mod tbs;

pub use amc::{draw_tb_error, effective_sinr_db, mi_per_bit, AmcModel, BlerCurve};
pub use error::CellError;
pub use fading::{doppler_hz, CellFading, FadingSpread, RayleighFading};
pub use sched::{assign_rbgs, Grant, Scheduler, SchedulerKind, UeReport};
pub use tables::{
    cqi_entry, cqi_for_efficiency, mcs_entry, mcs_for_cqi, rbg_count, rbg_size, tbs_bits, tbs_for_mcs, CqiEntry, McsEntry, Modulation,
};
