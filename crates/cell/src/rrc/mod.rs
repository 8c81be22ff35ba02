//! UE mobility measurements and radio link monitoring as RRC specifies them (TS 38.331; TS
//! 36.331 has the same forms), pure state machines fed by the caller at its measurement
//! instants: no scheduling, no I/O, times in ns.
//!
//! * [`l3_filter`]: the layer-3 filter of a measured quantity (38.331 §5.5.3.2), with the
//!   filter coefficient adapted to a sample period other than the nominal one.
//! * [`events`]: measurement report triggering (38.331 §5.5.4): events A1–A5 and B1 with
//!   offsets, hysteresis and time-to-trigger, per neighbour cell.
//! * [`rlf`]: radio link monitoring (38.331 §5.3.10): out-of-sync / in-sync indications from
//!   the SINR, N310, N311 and T310, radio link failure.

pub mod events;
pub mod l3_filter;
pub mod rlf;

pub use events::{CellId, EventConfig, EventKind, EventMonitor, EventReport, MeasEvent, Q_OFFSET_RANGE_DB, TIME_TO_TRIGGER_MS};
pub use l3_filter::{filter_weight, L3Filter, DEFAULT_FILTER_COEFFICIENT, FILTER_COEFFICIENTS, LTE_NOMINAL_PERIOD_NS};
pub use rlf::{LinkEvent, LinkMonitor, RlmConfig, SyncIndication, N310_VALUES, N311_VALUES, T310_MS};
