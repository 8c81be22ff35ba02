//! PDCP for dual connectivity, sans-IO.
//!
//! [`receiver`] is the receiving PDCP entity of TS 38.323 §5.2.2: COUNT derivation from the
//! sequence number, duplicate and late discard, in-order delivery and t-Reordering. It takes
//! SDUs with their SN and the current time, hands back what goes up to the host, and says
//! through `poll_timeout` when its timer needs `handle_timeout`.

pub mod receiver;

pub use receiver::{Receiver, ReceiverConfig, RxOutcome, RxStats, SnLength};
