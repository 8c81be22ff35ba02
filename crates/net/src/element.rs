//! What a hop element is built from, and what the rest of a run reads of it without building
//! it.
//!
//! A route's [`Hop::Link`](crate::Hop::Link) is any single-port element: a packet goes in,
//! comes out later or is dropped ([`Link`]). [`HopModel`] is its description: it builds the
//! element for a run and tells the nominal figures a report compares the run against; whether
//! it is up the element itself tells as the run goes ([`Link::is_up`], [`Link::next_change`]).
//! A link direction's [`LinkConfig`] (rate, delay, queue, loss, down windows) is the usual
//! one; a new kind of hop is one more implementation (see `docs/adr/0004-one-network-core.md`).

use std::fmt;

use multiconn_core::units::QueueLimit;
use multiconn_core::{Dur, Time};
use multiconn_link::builder::LinkConfig;
use multiconn_link::delay::DelayModel;
use multiconn_link::rate::RateServer;
use multiconn_link::Link;

/// The description of one hop element.
pub trait HopModel: fmt::Debug + Send + Sync {
    /// The element, its random streams derived from `seed` and `label` (e.g.
    /// `link/bottleneck/forward`).
    fn build(&self, seed: u64, label: &str) -> Box<dyn Link + Send>;

    /// The propagation delay of a packet leaving the element at `t`: a delay series' value
    /// then, a random model's mean.
    fn delay_at(&self, t: Time) -> Dur;

    /// The least time a packet of `size` bytes can spend in the element, from entering to
    /// being delivered: what the invariant checks hold every delivery to
    /// ([`crate::invariants`]). Zero (causality only) unless the model knows better.
    fn transit_floor(&self, _size: u32) -> Dur {
        Dur::ZERO
    }

    /// The bits it can carry in `[from, to)`; 0 for an element without a rate limit.
    fn capacity_bits(&self, _from: Time, _to: Time) -> f64 {
        0.0
    }

    /// Its mean rate in bit/s; 0 for an element without a rate limit (no transmission time).
    fn mean_bps(&self) -> f64 {
        0.0
    }

    /// Its rate as it varies over the run, prepared for queries
    /// ([`RateServer::transmission_end`], [`RateServer::capacity_bits`]): what a report
    /// serializes a message through for its ideal delay. `None` for an element without a rate
    /// limit (no transmission time).
    fn rate_server(&self) -> Option<RateServer> {
        None
    }

    /// The most its queue holds, if it has one (the emulator bounds the memory a run may take
    /// from it).
    fn queue_limit(&self) -> Option<QueueLimit> {
        None
    }

    /// Whether it refuses packets when full, so that a saturating sender attached to it is
    /// paced by its room ([`Link::has_room`]); an element that takes every packet does not.
    fn paces_a_sender(&self) -> bool {
        true
    }
}

impl HopModel for LinkConfig {
    fn build(&self, seed: u64, label: &str) -> Box<dyn Link + Send> {
        LinkConfig::build(self, seed, label)
    }

    fn delay_at(&self, t: Time) -> Dur {
        match &self.delay {
            DelayModel::Series(series) => series.at(t),
            model => model.mean(),
        }
    }

    /// Serialization at the fastest rate plus the smallest delay: exact for a constant rate
    /// and delay; a bitrate trace at its peak step; a Mahimahi trace none; a normal delay
    /// none (it is truncated at zero); a histogram its lowest bin; a delay series its smallest
    /// point. Loss and down windows only refuse or drop packets, never speed them up.
    fn transit_floor(&self, size: u32) -> Dur {
        self.rate.min_tx_time(size) + self.delay.floor()
    }

    fn capacity_bits(&self, from: Time, to: Time) -> f64 {
        self.rate.capacity_bits(from, to)
    }

    fn mean_bps(&self) -> f64 {
        self.rate.mean_bps()
    }

    fn rate_server(&self) -> Option<RateServer> {
        Some(RateServer::new(self.rate.clone()))
    }

    fn queue_limit(&self) -> Option<QueueLimit> {
        Some(self.queue)
    }
}
