//! multiconn-radio: the radio models shared by the multi-operator study (Krämer et al. 2022,
//! "On the Potential of MP-QUIC as Transport Layer Aggregator for Multiple Cellular Networks")
//! and the LTE-cell study.
//!
//! * [`units`]: dBm ↔ mW, dB ↔ ratio, thermal noise (−174 dBm/Hz + 10·log10(B) + NF).
//! * [`capacity`]: SINR from received powers and the truncated, down-scaled Shannon capacity
//!   with every constant of the study's Table 1 in [`CapacityParams`].
//! * [`table`]: the per-second drive-test table ([`DriveTable`], reference §5.2), CSV in and out.
//! * [`aggregate`]: available cells (the strongest visible cell per carrier), per-channel
//!   capacity and the aggregation levels (each operator, best single path, multipath).
//! * [`stats`]: the study's Table 2/3 statistics (mean, median, percentiles, available cells).
//! * [`channels`]: the per-second, per-channel capacity table the handover cases read.
//! * [`delay`]: capacity → one-way access-link delay (the study's Figure 3 curve, two-point
//!   exponential by default, power law or constant as options).
//! * [`handover`]: the cases sp, 1, 2, 3, 4 — A3-style offset, hysteresis, time-to-trigger and
//!   minimum dwell over the channel table, giving path events and per-path rate and delay.
//! * [`pathloss`]: free space, log-distance (ns-3), TR 38.901 UMa and RMa, COST-231 Hata.
//! * [`budget`]: reference-signal power per resource element and the TR 36.814 sector antenna.
//! * [`shadowing`]: log-normal shadowing correlated along a route (Gudmundson's AR(1)).
//! * [`drive`]: a synthetic multi-operator drive test (sites, sectors, carriers, path loss,
//!   shadowing, visibility) with the presets `residential`, `road`, `rural` and `calibration`.
//!
//! Everything is a pure function of its inputs; the one random part, the synthetic drive, draws
//! from `multiconn-core`'s seeded streams. Errors are [`RadioError`], whose messages name the
//! field and the allowed range.

pub mod aggregate;
pub mod budget;
pub mod capacity;
pub mod channels;
pub mod delay;
pub mod drive;
pub mod error;
pub mod handover;
pub mod layout;
pub mod pathloss;
pub mod route;
pub mod shadowing;
pub mod stats;
pub mod table;
pub mod units;

pub use aggregate::{
    aggregate_channels, estimate, estimate_second, levels, AvailabilityParams, CapacityTable, Carrier, ChannelEstimate, ChannelRow, EstimationParams, Levels,
    SampleMerge, SecondLevels, VisibleCell,
};
pub use capacity::{sinr, CapacityParams, Interference};
pub use channels::{ChannelSeries, ChannelTable};
pub use delay::{DelayForm, DelayModel};
pub use drive::{generate, DriveConfig};
pub use error::RadioError;
pub use handover::{
    run_case, Case, Cause, ChannelLink, HandoverConfig, HandoverParams, HandoverPreset, LossAction, PathAction, PathEvent, Quantity,
    SlotSeries, Timeline,
};
pub use pathloss::{PathLoss, Sight};
pub use stats::{percentile, AggregationStats, Summary};
pub use table::{CellSample, DriveTable};
