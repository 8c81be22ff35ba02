//! Loss models and the loss decorator. (CONTRACT STUB — to be implemented)

use crate::{Link, LinkOutput, QueueState, TraceError};
use multiconn_core::{DropCause, Packet, RngStream, Time};

/// A per-packet loss pattern: `lost[i]` for the i-th packet offered; it loops.
#[derive(Debug, Clone, PartialEq)]
pub struct LossTrace {
    pub lost: Vec<bool>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum LossModel {
    Bernoulli { p: f64 },
    /// Two-state Markov chain: `p` = P(good→bad), `r` = P(bad→good) per packet;
    /// loss probability `loss_good` in the good state and `loss_bad` in the bad state.
    GilbertElliott { p: f64, r: f64, loss_good: f64, loss_bad: f64 },
    Trace(LossTrace),
}

/// Parses a loss trace: one `0` (delivered) or `1` (lost) per line.
pub fn parse_loss_trace(text: &str, origin: &str) -> Result<LossTrace, TraceError> {
    let _ = (text, origin);
    unimplemented!()
}

/// Drops packets at the link's ingress according to a [`LossModel`] (as netem does).
pub struct Lossy<L> {
    pub inner: L,
    _private: (LossModel, RngStream),
}

impl<L: Link> Lossy<L> {
    pub fn new(inner: L, model: LossModel, rng: RngStream) -> Lossy<L> {
        Lossy { inner, _private: (model, rng) }
    }
}

impl<L: Link> Link for Lossy<L> {
    fn enqueue(&mut self, now: Time, pkt: Packet) -> Result<(), (Packet, DropCause)> {
        let _ = (now, pkt);
        unimplemented!()
    }
    fn poll(&mut self, now: Time) -> Option<LinkOutput> {
        self.inner.poll(now)
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.inner.poll_timeout()
    }
    fn queue(&self) -> QueueState {
        self.inner.queue()
    }
    fn has_room(&self, size: u32) -> bool {
        self.inner.has_room(size)
    }
    fn flush(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.inner.flush(now, out)
    }
}
