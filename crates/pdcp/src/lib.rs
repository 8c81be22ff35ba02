//! PDCP for dual connectivity, sans-IO.
//!
//! [`receiver`] is the receiving PDCP entity of TS 38.323 §5.2.2: COUNT derivation from the
//! sequence number, duplicate and late discard, in-order delivery and t-Reordering. It takes
//! SDUs with their SN and the current time, hands back what goes up to the host, and says
//! through `poll_timeout` when its timer needs `handle_timeout`; upper layers can reconfigure
//! t-Reordering (§5.2.2.3) and re-establish the entity (§5.1.2).
//!
//! [`transmitter`] is the transmitting entity at the split point (TS 38.323 §5.2.1, §5.11): it
//! numbers SDUs, adds the header, routes each PDU over one leg or both according to a split
//! policy (not standardised; pdcp-dc.md §4.3), and refuses SDUs while the receiver's window is
//! full or once COUNT is exhausted.
//!
//! [`bearer`] puts the two together as one flow's split bearer: the numbering proxy, the
//! reordering proxy, their processing delays, the legs' feedback and the TV20 behaviours
//! (retransmission of PDUs lost on a leg, duplication switched by MAC CE).

pub mod bearer;
pub mod receiver;
pub mod transmitter;

pub use bearer::{Arrival, LegState, RxMeasures, SplitBearer, SplitBearerConfig};
pub use receiver::{BearerMode, Receiver, ReceiverConfig, RxOutcome, RxStats, SnLength};
pub use transmitter::{header_bytes, AdaptiveSignal, LegReport, Legs, PendingVolume, Pdu, Rat, SplitPolicy, Transmitter, TransmitterConfig, TxRefusal, TxStats};
