//! A link direction's models as one value, and the one place that stacks them into a link.
//!
//! The decorator order is fixed here, so the simulator, the emulator and the test kit build
//! the very same link from the same settings:
//!
//! ```text
//! Intermittent( Lossy( Delayed( DropTailLink | AqmLink ) ) )
//! ```
//!
//! A positive fixed rate with a delay that does not depend on time (constant, normal or
//! empirical), no AQM and FIFO delivery is built as one [`FifoLink`] in place of
//! `Delayed( DropTailLink )`: the same results, random draws included, at less cost.
//!
//! A packet is refused at the door while the link is down, may then be lost at random, waits
//! in the drop-tail queue, is serialized at the rate and propagates with the delay. Random
//! streams are derived from the run's seed and the link's label (`<label>/delay`,
//! `<label>/loss`, `<label>/aqm`), so adding a link never perturbs another one's draws. Decorators with
//! nothing to do are left out: a zero Bernoulli probability draws nothing, a link that is
//! never down and whose queue disciplines are never replaced has no availability layer.

use multiconn_core::units::QueueLimit;
use multiconn_core::RngStream;

use crate::aqm::{AqmConfig, AqmLink};
use crate::availability::{Intermittent, Schedule};
use crate::delay::{DelayModel, Delayed};
use crate::fifo::FifoLink;
use crate::loss::{LossModel, Lossy};
use crate::queue::DropTailLink;
use crate::rate::RateModel;
use crate::Link;

/// Everything that makes one direction of a link.
#[derive(Debug, Clone)]
pub struct LinkConfig {
    /// How fast it serializes packets.
    pub rate: RateModel,
    /// The propagation delay added after serialization.
    pub delay: DelayModel,
    /// Whether packets may overtake each other under a random delay (else FIFO).
    pub reorder: bool,
    /// The limit on packets waiting (the one in transmission excluded).
    pub queue: QueueLimit,
    /// The active queue management discipline, if any; `None` is a drop-tail FIFO.
    pub aqm: Option<AqmConfig>,
    /// Random loss at the door, if any.
    pub loss: Option<LossModel>,
    /// When it is down.
    pub down: Schedule,
    /// When its queue disciplines are replaced, dropping every packet on it (sorted; see
    /// [`Intermittent::with_replacements`]).
    pub replaced: Vec<multiconn_core::Time>,
}

impl LinkConfig {
    /// The link, its random streams derived from `seed` and `label` (e.g.
    /// `link/bottleneck/forward`).
    pub fn build(&self, seed: u64, label: &str) -> Box<dyn Link + Send> {
        let delay_rng = RngStream::derive(seed, &format!("{label}/delay"));
        let fast = match (&self.aqm, &self.rate) {
            (None, RateModel::Fixed(rate)) if rate.0 > 0 && !self.reorder => FifoLink::with_delay(*rate, self.queue, self.delay.clone(), delay_rng.clone()),
            _ => None,
        };
        let delayed: Box<dyn Link + Send> = match (&self.aqm, fast) {
            (_, Some(fast)) => Box::new(fast),
            (None, None) => {
                let base = DropTailLink::new(self.rate.clone(), self.queue);
                Box::new(Delayed::new(base, self.delay.clone(), self.reorder, delay_rng).with_lazy_departures())
            }
            (Some(aqm), None) => {
                let qdisc = aqm.build(self.queue, RngStream::derive(seed, &format!("{label}/aqm")));
                Box::new(Delayed::new(AqmLink::new(self.rate.clone(), qdisc), self.delay.clone(), self.reorder, delay_rng))
            }
        };
        let lossy: Box<dyn Link + Send> = match &self.loss {
            Some(LossModel::Bernoulli { p }) if *p == 0.0 => delayed,
            Some(model) => Box::new(Lossy::new(delayed, model.clone(), RngStream::derive(seed, &format!("{label}/loss")))),
            None => delayed,
        };
        if self.down.down.is_empty() && self.replaced.is_empty() {
            lossy
        } else {
            Box::new(Intermittent::new(lossy, self.down.clone()).with_replacements(self.replaced.clone()))
        }
    }
}
