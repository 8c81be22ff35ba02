//! The 5G NR physical-layer tables and procedures a system-level NR cell needs, pure functions
//! of their inputs (no state, no randomness):
//!
//! * [`numerology`]: subcarrier spacing, slot length and slots per subframe of μ = 0..=3
//!   (TS 38.211 §4.2, §4.3).
//! * [`bandwidth`]: frequency ranges, PRBs per channel bandwidth and SCS (TS 38.101-1 /
//!   38.101-2 Table 5.3.2-1) and the RBG size of allocation type 0 (TS 38.214 Table 5.1.2.2.1-1).
//! * [`tdd`]: FDD or a TDD pattern of D, U and S slots with the special slot's symbol split
//!   (TS 38.213 §11.1, TS 38.331 `TDD-UL-DL-ConfigCommon`).
//! * [`mcs`]: the PDSCH MCS tables 5.1.3.1-1 (64QAM) and 5.1.3.1-2 (256QAM), the CQI tables
//!   5.2.2.1-2 and 5.2.2.1-3 of TS 38.214, and the CQI ↔ MCS maps of 5G-LENA.
//! * [`tbs`]: the transport block size of TS 38.214 §5.1.3.2, the LDPC base graph (TS 38.212
//!   §7.2.2) and the number of code blocks (TS 38.212 §5.2.2).
//! * [`peak`]: the approximate peak data rate of TS 38.306 §4.1.2.
//! * [`bler`]: a TB's error probability from its LDPC code blocks (normal approximation per
//!   block, per base graph).

pub mod bandwidth;
pub mod bler;
pub mod mcs;
pub mod numerology;
pub mod peak;
pub mod tbs;
pub mod tdd;

pub use bandwidth::{bandwidths_mhz, n_rb, rbg_count, rbg_size, FrequencyRange, RbgConfig};
pub use mcs::{CqiTable, McsTable, NrCqi, NrMcs};
pub use numerology::{Numerology, SYMBOLS_PER_SLOT};
pub use peak::{overhead, peak_rate_bps};
pub use tbs::{base_graph, code_blocks, tbs_bits, tbs_for_mcs, tbs_from_n_info, BaseGraph, TbsShape};
pub use tdd::{Duplex, SlotKind, SpecialSlot, TddPattern};
