//! Loss models and the loss decorator.
//!
//! [`Lossy`] discards packets at the link's ingress, before the inner link sees them, as
//! netem's `loss` does at enqueue; a packet it discards is handed back to the caller as
//! [`DropCause::RandomLoss`], while the inner link's own refusals (a full queue) pass through
//! unchanged. It usually sits above [`crate::delay::Delayed`] and below
//! [`crate::availability::Intermittent`].
//!
//! Models: independent (Bernoulli) loss; the Gilbert–Elliott two-state Markov chain (a good and
//! a bad state with their own loss probabilities, as in netem's `loss gemodel p r 1-h 1-k`);
//! and a recorded per-packet pattern that loops. Every offered packet consumes the same number
//! of random draws whatever the outcome, so a run's loss pattern depends only on the seed and
//! on the sequence of offered packets.

use crate::{Held, Link, LinkOutput, QueueState, TraceError};
use multiconn_core::{DropCause, Dur, Packet, QueueMeter, RngStream, Time};

/// A per-packet loss pattern: `lost[i]` for the i-th packet offered; it loops.
#[derive(Debug, Clone, PartialEq)]
pub struct LossTrace {
    /// `lost[i]`: whether the i-th packet offered (modulo the length) is lost.
    pub lost: Vec<bool>,
}

/// Which packets a link loses at random at its door.
#[derive(Debug, Clone, PartialEq)]
pub enum LossModel {
    /// Each packet is lost with probability `p`, independently.
    Bernoulli {
        /// The loss probability.
        p: f64,
    },
    /// Two-state Markov chain: `p` = P(good→bad), `r` = P(bad→good) per packet;
    /// loss probability `loss_good` in the good state and `loss_bad` in the bad state.
    GilbertElliott {
        /// P(good → bad) per packet.
        p: f64,
        /// P(bad → good) per packet.
        r: f64,
        /// The loss probability in the good state.
        loss_good: f64,
        /// The loss probability in the bad state.
        loss_bad: f64,
    },
    /// A per-packet pattern, looped.
    Trace(LossTrace),
}

impl LossModel {
    /// The long-run fraction of offered packets lost. For Gilbert–Elliott the chain spends
    /// `p / (p + r)` of the packets in the bad state (all in the good state if `p + r = 0`,
    /// since it starts there).
    pub fn mean_loss_rate(&self) -> f64 {
        match self {
            LossModel::Bernoulli { p } => *p,
            LossModel::GilbertElliott {
                p,
                r,
                loss_good,
                loss_bad,
            } => {
                let bad_share = if p + r > 0.0 { p / (p + r) } else { 0.0 };
                loss_bad * bad_share + loss_good * (1.0 - bad_share)
            }
            LossModel::Trace(trace) if trace.lost.is_empty() => 0.0,
            LossModel::Trace(trace) => {
                trace.lost.iter().filter(|&&l| l).count() as f64 / trace.lost.len() as f64
            }
        }
    }
}

impl LossModel {
    /// Whether it loses every packet whatever the draws and the state: a probability of 1, a
    /// Gilbert–Elliott chain losing everything in both states, a trace of all `1`.
    pub fn loses_every_packet(&self) -> bool {
        match self {
            LossModel::Bernoulli { p } => *p >= 1.0,
            LossModel::GilbertElliott { loss_good, loss_bad, .. } => *loss_good >= 1.0 && *loss_bad >= 1.0,
            LossModel::Trace(trace) => !trace.lost.is_empty() && trace.lost.iter().all(|&l| l),
        }
    }
}

/// A [`LossModel`] with its running state: the Gilbert–Elliott state or the trace position.
#[derive(Debug, Clone)]
pub struct LossProcess {
    model: LossModel,
    /// Gilbert–Elliott: whether the chain is in the bad state (it starts good).
    in_bad_state: bool,
    /// Trace: index of the next packet in the pattern.
    trace_position: usize,
}

impl LossProcess {
    /// The process of `model`, in the good state at the start of its trace.
    pub fn new(model: LossModel) -> LossProcess {
        LossProcess {
            model,
            in_bad_state: false,
            trace_position: 0,
        }
    }

    /// Its model.
    pub fn model(&self) -> &LossModel {
        &self.model
    }

    /// Decides the fate of the next offered packet: `true` if it is lost.
    ///
    /// Gilbert–Elliott first moves the chain (one transition per packet), then draws the loss
    /// in the state just entered; so with `loss_good = 0`, `loss_bad = 1` a loss burst lasts as
    /// long as a visit to the bad state, `1 / r` packets on average.
    pub fn next_is_lost(&mut self, rng: &mut RngStream) -> bool {
        match &self.model {
            LossModel::Bernoulli { p } => rng.bernoulli(*p),
            &LossModel::GilbertElliott {
                p,
                r,
                loss_good,
                loss_bad,
            } => {
                let leave = if self.in_bad_state { r } else { p };
                if rng.bernoulli(leave) {
                    self.in_bad_state = !self.in_bad_state;
                }
                rng.bernoulli(if self.in_bad_state {
                    loss_bad
                } else {
                    loss_good
                })
            }
            LossModel::Trace(trace) => {
                if trace.lost.is_empty() {
                    return false;
                }
                let lost = trace.lost[self.trace_position];
                self.trace_position = (self.trace_position + 1) % trace.lost.len();
                lost
            }
        }
    }
}

/// Parses a loss trace: one `0` (delivered) or `1` (lost) per line.
///
/// Surrounding whitespace is ignored. Blank lines are allowed only at the end, since a blank
/// line inside the pattern would leave a packet's fate unstated. The trace must not be empty.
pub fn parse_loss_trace(text: &str, origin: &str) -> Result<LossTrace, TraceError> {
    let mut lost = Vec::new();
    let mut first_blank: Option<usize> = None;
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        let value = line.trim();
        if value.is_empty() {
            first_blank.get_or_insert(line_no);
            continue;
        }
        if let Some(blank) = first_blank {
            return Err(TraceError::new(
                origin,
                Some(blank),
                "blank line inside the trace: every line up to the last must hold `0` (delivered) or `1` (lost)",
            ));
        }
        lost.push(parse_loss_flag(value).map_err(|m| TraceError::new(origin, Some(line_no), m))?);
    }
    if lost.is_empty() {
        return Err(TraceError::new(
            origin,
            None,
            "empty loss trace: expected one `0` (delivered) or `1` (lost) per line",
        ));
    }
    Ok(LossTrace { lost })
}

fn parse_loss_flag(value: &str) -> Result<bool, String> {
    match value {
        "0" => Ok(false),
        "1" => Ok(true),
        other => Err(format!(
            "invalid entry \"{other}\": expected `0` (delivered) or `1` (lost)"
        )),
    }
}

/// Drops packets at the link's ingress according to a [`LossModel`] (as netem does).
pub struct Lossy<L> {
    /// The link behind the door.
    pub inner: L,
    process: LossProcess,
    rng: RngStream,
}

impl<L: Link> Lossy<L> {
    /// Loses packets offered to `inner` by draws of `model` from `rng`.
    pub fn new(inner: L, model: LossModel, rng: RngStream) -> Lossy<L> {
        Lossy {
            inner,
            process: LossProcess::new(model),
            rng,
        }
    }
}

impl<L: Link> Link for Lossy<L> {
    fn enqueue(&mut self, now: Time, pkt: Packet) -> Result<(), (Packet, DropCause)> {
        if self.process.next_is_lost(&mut self.rng) {
            return Err((pkt, DropCause::RandomLoss));
        }
        self.inner.enqueue(now, pkt)
    }
    fn poll(&mut self, now: Time) -> Option<LinkOutput> {
        self.inner.poll(now)
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.inner.poll_timeout()
    }
    fn next_departure(&self) -> Option<Time> {
        self.inner.next_departure()
    }
    fn catch_up(&mut self, now: Time) {
        self.inner.catch_up(now)
    }
    fn take_queue_changes(&mut self, out: &mut Vec<(Time, QueueState)>) {
        self.inner.take_queue_changes(out)
    }
    fn keep_queue_meter(&mut self, width: Dur) -> bool {
        self.inner.keep_queue_meter(width)
    }
    fn queue_meter(&mut self) -> Option<&mut QueueMeter> {
        self.inner.queue_meter()
    }
    fn queue(&self) -> QueueState {
        self.inner.queue()
    }
    fn has_room(&self, size: u32) -> bool {
        self.inner.has_room(size)
    }
    fn loses_everything(&self) -> bool {
        self.process.model().loses_every_packet() || self.inner.loses_everything()
    }
    fn flush(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.inner.flush(now, out)
    }
    fn discard_waiting(&mut self, discard: &mut dyn FnMut(&Packet) -> bool, out: &mut Vec<Packet>) {
        self.inner.discard_waiting(discard, out)
    }
    fn flush_propagating(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.inner.flush_propagating(now, out)
    }
    fn is_up(&self, now: Time) -> bool {
        self.inner.is_up(now)
    }
    fn next_change(&self, from: Time) -> Option<Time> {
        self.inner.next_change(from)
    }
    fn held(&self) -> Option<Held> {
        self.inner.held()
    }
    fn aqm_stats(&self) -> Option<crate::aqm::AqmStats> {
        self.inner.aqm_stats()
    }
}
