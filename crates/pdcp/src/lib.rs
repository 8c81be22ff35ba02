//! PDCP for dual connectivity, sans-IO.
//!
//! [`receiver`] is the receiving PDCP entity of TS 38.323 §5.2.2: COUNT derivation from the
//! sequence number, duplicate and late discard, in-order delivery and t-Reordering. It takes
//! SDUs with their SN and the current time, hands back what goes up to the host, and says
//! through `poll_timeout` when its timer needs `handle_timeout`.
//!
//! [`transmitter`] is the transmitting entity at the split point: it numbers SDUs, adds the
//! header, and routes each PDU over one leg or both according to a split policy.

pub mod receiver;
pub mod transmitter;

pub use receiver::{Receiver, ReceiverConfig, RxOutcome, RxStats, SnLength};
pub use transmitter::{header_bytes, AdaptiveSignal, LegReport, Legs, Pdu, Rat, SplitPolicy, Transmitter, TransmitterConfig, TxRefusal, TxStats};
