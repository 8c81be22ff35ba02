//! Link settings for a [`crate::Pair`]'s paths.
//!
//! A [`PathConfig`] is the two [`LinkConfig`]s of one path; [`link`] makes the common case, a
//! fixed rate, a constant one-way delay, a FIFO drop-tail queue, no random loss and no down
//! time. Any other [`LinkConfig`] (traces, random delay, loss, availability) works the same.

use multiconn_core::units::QueueLimit;
use multiconn_core::{Dur, Rate};
use multiconn_link::availability::Schedule;
use multiconn_link::builder::LinkConfig;
use multiconn_link::delay::DelayModel;
use multiconn_link::rate::RateModel;

/// A fixed `rate`, a constant `delay` after serialization, a drop-tail queue of `queue`
/// waiting packets or bytes; packets stay in order, nothing is lost at random, never down.
pub fn link(rate: Rate, delay: Dur, queue: QueueLimit) -> LinkConfig {
    LinkConfig {
        aqm: None,
        rate: RateModel::Fixed(rate),
        delay: DelayModel::Constant(delay),
        reorder: false,
        queue,
        loss: None,
        down: Schedule::always_up(),
        replaced: Vec::new(),
    }
}

/// The two directions of one path.
#[derive(Debug, Clone)]
pub struct PathConfig {
    /// Server to client (route 0).
    pub to_client: LinkConfig,
    /// Client to server (route 1).
    pub to_server: LinkConfig,
}

impl PathConfig {
    /// The same settings both ways.
    pub fn symmetric(link: LinkConfig) -> PathConfig {
        PathConfig { to_client: link.clone(), to_server: link }
    }
}
