//! multiconn-testkit: transport tests over the simulator's own link models.
//!
//! A [`Pair`] joins a client and a server endpoint ([`multiconn_transport::Endpoint`], any
//! transport) by one or more paths. Each path is two link directions, one toward the client
//! (route 0, the data direction of a download) and one toward the server (route 1), each an
//! exact sans-IO [`multiconn_link::Link`] — usually a stack built by
//! [`multiconn_link::builder::LinkConfig::build`], the very links the simulator runs — wrapped
//! in a [`multiconn_link::scripted::Scripted`] so that a test can drop, lose or delay chosen
//! packets. The pair is driven in the manner of quinn-proto's test `Pair`: [`Pair::step`]
//! advances to the earliest wake-up of the endpoints and the links and handles everything due
//! then; [`Pair::drive`], [`Pair::drive_bounded`], [`Pair::drive_until`] and
//! [`Pair::drive_until_by`] loop over it. Everything is recorded: the [`wire`] log (what was
//! sent, refused, delivered or dropped, when, on which path and route) and each side's
//! application events.
//!
//! * [`pair`]: the pair and its event loop.
//! * [`wire`]: the records of the wire log and per-link counters.
//! * [`paths`]: shorthands for the link settings tests use most.
//! * [`controller`]: a congestion controller from outside the built-in set.
//!
//! Neighbours: it depends on `core` (time, packets), `cc` (the controller interface), `link` (the models and the `Scripted`
//! decorator) and `transport` (the endpoint interface) only; transport crates take it as a
//! dev-dependency. Nothing here reads a clock or draws a random number outside the links'
//! own seeded streams, so the same inputs give the same run, event for event.

pub mod controller;
pub mod pair;
pub mod paths;
pub mod wire;

pub use pair::{delivered_bytes, event_time, BoxLink, Pair, Path};
pub use controller::FixedRate;
pub use paths::{link, PathConfig};
pub use wire::{LinkCounters, Route, Wire, WireEvent};
