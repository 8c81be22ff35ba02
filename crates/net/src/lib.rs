//! multiconn-net: the network of a scenario as one sans-IO model.
//!
//! A [`Network`] holds the elements packets cross — link directions (any [`Link`], built
//! from a [`LinkConfig`] or supplied as is), PDCP split bearers ([`SplitBearer`], one per
//! flow and split it crosses) and elements with several ports ([`port`]: a cell) — and the routes of every flow, keyed by (flow, path,
//! direction). It never reads a clock and owns no event queue: whoever drives it (the
//! simulator's single (time, sequence) queue, or the emulator's wall clock) implements
//! [`Driver`], schedules the wake-ups the network asks for, and calls
//! [`Network::handle_wake`] when one comes due. Hosts hand packets in with
//! [`Network::send`]; the network calls back when a packet reaches the end of its route,
//! is lost, or when a link's queue changes.
//!
//! Why callbacks rather than a polled output queue: a packet leaving an element can reach a
//! host that answers at once (an ACK), and that answer must enter the network before the
//! element's next output, exactly as it would on a real machine; calling the driver in place
//! keeps that order (and the simulator's results) without buffering. See
//! `docs/adr/0004-one-network-core.md`.
//!
//! On request the network checks its own invariants as it runs ([`invariants`]: conservation
//! per link direction, no delivery before the model's floor, PDCP COUNT order).
//!
//! Dependencies point down: `core`, `engine` (for [`LazyTimer`]), `link`, `pdcp` and `cell`;
//! never a transport or the scenario crate.
//!
//! [`Link`]: multiconn_link::Link
//! [`LinkConfig`]: multiconn_link::builder::LinkConfig
//! [`SplitBearer`]: multiconn_pdcp::SplitBearer
//! [`LazyTimer`]: multiconn_engine::LazyTimer

pub mod driver;
pub mod element;
pub mod invariants;
pub mod network;
pub mod port;
pub mod route;
#[cfg(feature = "test-elements")]
pub mod wire;

pub use driver::{Driver, Loss};
pub use element::HopModel;
pub use invariants::Violation;
pub use network::{BearerInfo, ElementId, Network, NetworkSpec};
pub use port::{PortElement, PortModel};
pub use route::{FlowRoutes, Hop, Leg};
