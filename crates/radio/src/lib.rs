//! multiconn-radio: the radio models shared by the multi-operator study (Krämer et al. 2022,
//! "On the Potential of MP-QUIC as Transport Layer Aggregator for Multiple Cellular Networks")
//! and the LTE-cell study.
//!
//! * [`units`]: dBm ↔ mW, dB ↔ ratio, thermal noise (−174 dBm/Hz + 10·log10(B) + NF).
//! * [`capacity`]: SINR from received powers and the truncated, down-scaled Shannon capacity
//!   with every constant of the study's Table 1 in [`CapacityParams`].
//!
//! Everything is a pure function of its inputs; the one random part, the synthetic drive, draws
//! from `multiconn-core`'s seeded streams. Errors are [`RadioError`], whose messages name the
//! field and the allowed range.

pub mod capacity;
pub mod error;
pub mod units;

pub use capacity::{sinr, CapacityParams, Interference};
pub use error::RadioError;
