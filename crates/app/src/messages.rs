//! The message workload (app = "messages"): periodic message sources at the sender's
//! application and what became of every message at the receiver's, over any transport that
//! lets the application open its own streams ([`OpenStreams`]).
//!
//! Traffic models of seed 004 (Mogensen & Markmøller, §7.2.3): V2X priority messages (1200 B
//! every 100 ms, one stream, packed first, duplicated by the selective redundant scheduler) and
//! background data (chunks of 12500 B at the interval that gives the chosen bit rate). Each
//! source writes on its own unidirectional stream; a message is *sent* when the application
//! hands it to the connection and *received* when the receiving application has it whole, in
//! order (seed 004 §1.2: OWD = timeReceived − timeSent at the application).
//!
//! A source starts `start` after the sending application can first send (the server's
//! handshake keys), writes one message per `interval`, and stops after `count` messages,
//! after `duration`, or at the flow's `stop`, whichever comes first; it then finishes its
//! stream. The flow is done when every source stopped and all their messages were received
//! (or, abandoned, were dropped by the receiver).
//!
//! Datagrams (RFC 9221): a source with `datagram` set sends each message as one QUIC DATAGRAM
//! frame instead of on a stream ([`crate::datagrams`]). Such a message is received when the
//! receiving transport hands its datagram over, or never: it is not retransmitted. The
//! sender's transport tells whether it was acknowledged, declared lost or dropped from the send
//! buffer; a message too large for one packet is refused when written, and counted. Each
//! source keeps these counts ([`DatagramCounts`]), and the flow is done when every message was
//! received or is known never to arrive.
//!
//! Obsolete data (seed 004's C1, §9.3): a source with an [`Expiry`] writes each message on a
//! stream of its own and resets it (RESET_STREAM, RFC 9000 §3.1) when the message's lifetime
//! ends or the next message supersedes it, unless all of it was acknowledged; such a message
//! that never arrived whole is *expired*, not lost.

use multiconn_core::{Dur, Time};
use serde::Deserialize;
use std::str::FromStr;

use crate::datagrams::{DatagramEvent, DatagramOptions};
use crate::streams::{AppError, OpenStreams, StreamOptions, StreamProgress};

/// What a message source carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MessageKind {
    /// Deadline traffic (V2X): urgent and redundant by default, with a 100 ms deadline.
    Priority,
    /// Bulk data in chunks.
    Background,
}

impl MessageKind {
    /// Every kind, in the order error messages list them.
    pub const ALL: [MessageKind; 2] = [MessageKind::Priority, MessageKind::Background];

    /// The name as written in the scenario (`"priority"`, `"background"`).
    pub fn name(self) -> &'static str {
        match self {
            MessageKind::Priority => "priority",
            MessageKind::Background => "background",
        }
    }

    /// What a source or stream of this kind gets for what it leaves out.
    pub fn defaults(self) -> KindDefaults {
        match self {
            MessageKind::Priority => KindDefaults {
                options: StreamOptions { priority: 0, urgent: true, redundant: true },
                deadline: Some(PRIORITY_DEADLINE),
                size: PRIORITY_SIZE,
                interval: Some(PRIORITY_INTERVAL),
            },
            MessageKind::Background => KindDefaults {
                options: StreamOptions { priority: 1, urgent: false, redundant: false },
                deadline: None,
                size: BACKGROUND_SIZE,
                interval: None,
            },
        }
    }
}

/// A name that is not a message kind; the message lists the kinds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("kind must be one of {}, not {0:?}", MessageKind::ALL.map(MessageKind::name).join(", "))]
pub struct UnknownMessageKind(pub String);

impl FromStr for MessageKind {
    type Err = UnknownMessageKind;

    fn from_str(s: &str) -> Result<MessageKind, UnknownMessageKind> {
        MessageKind::ALL.into_iter().find(|k| k.name() == s).ok_or_else(|| UnknownMessageKind(s.to_string()))
    }
}

/// Seed 004's V2X message: 1200 B every 100 ms, due within 100 ms.
pub const PRIORITY_SIZE: u64 = 1200;
/// The period of seed 004's V2X messages (100 ms).
pub const PRIORITY_INTERVAL: Dur = Dur::from_millis(100);
/// The deadline of seed 004's V2X messages (100 ms), for the summary's reliability.
pub const PRIORITY_DEADLINE: Dur = Dur::from_millis(100);
/// Seed 004's background chunk: 100 kbit.
pub const BACKGROUND_SIZE: u64 = 12_500;

/// A message kind's defaults (seed 004 §7.2.3): priority messages are packed first (level 0),
/// urgent, redundant, due within 100 ms, 1200 B every 100 ms; background chunks are level 1,
/// none of these, 12500 B at an interval that follows from a rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindDefaults {
    /// The stream options: packing level 0 or 1, urgent and redundant for priority only.
    pub options: StreamOptions,
    /// For the summary's reliability: P(OWD < deadline).
    pub deadline: Option<Dur>,
    /// The size of a periodic source's messages.
    pub size: u64,
    /// The period of a periodic source; `None`: it needs a rate or an interval.
    pub interval: Option<Dur>,
}

/// The sending options and deadline chosen for a stream or source; what is `None` takes the
/// kind's default ([`MessageKind::defaults`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamChoices {
    /// Packing order, lower first (default: priority 0, background 1).
    pub priority: Option<u8>,
    /// Not held back by a path's congestion window under the multipath option
    /// `priority_ignores_cwnd` (default: true for priority).
    pub urgent: Option<bool>,
    /// Sent on every usable path by the selective redundant scheduler (default: true for priority).
    pub redundant: Option<bool>,
    /// For the summary's reliability P(OWD < deadline) (default: 100 ms for priority, none for
    /// background).
    pub deadline: Option<Dur>,
}

impl StreamChoices {
    /// The stream's options and deadline: the choices, else `kind`'s defaults.
    pub fn resolve(self, kind: MessageKind) -> (StreamOptions, Option<Dur>) {
        let d = kind.defaults();
        let options = StreamOptions {
            priority: self.priority.unwrap_or(d.options.priority),
            urgent: self.urgent.unwrap_or(d.options.urgent),
            redundant: self.redundant.unwrap_or(d.options.redundant),
        };
        (options, self.deadline.or(d.deadline))
    }
}

/// One resolved message source.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageSource {
    /// The source's name, unique within the flow (default: the kind's name).
    pub name: String,
    /// Its kind, whose defaults fill what the scenario leaves out.
    pub kind: MessageKind,
    /// Each message's size, bytes.
    pub size: u64,
    /// Time between messages: as given, or size · 8 / rate.
    pub interval: Dur,
    /// After the sending application can first send.
    pub start: Dur,
    /// Stop after this many messages (`None`: no limit of its own).
    pub count: Option<u64>,
    /// How long it writes, from its first message.
    pub duration: Option<Dur>,
    /// Its streams' packing level, urgency and redundancy.
    pub options: StreamOptions,
    /// For the summary's reliability: P(OWD < deadline).
    pub deadline: Option<Dur>,
    /// When a message becomes obsolete (seed 004's C1); with an expiry, or with
    /// `per_message_streams`, each message goes on a stream of its own.
    pub expiry: Expiry,
    /// Each message on a stream of its own (`stream_per_message`, implied by an expiry).
    pub per_message_streams: bool,
    /// Each message as one datagram (RFC 9221) instead of on a stream.
    pub datagram: bool,
}

/// What became of a datagram source's messages at the transport (RFC 9221 §5).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DatagramCounts {
    /// Datagrams handed to the transport (accepted).
    pub sent: u64,
    /// Messages refused as too large for one packet (never sent).
    pub refused_too_large: u64,
    /// Acknowledged by the receiving transport.
    pub acked: u64,
    /// Declared lost by the sending transport (never sent again).
    pub lost: u64,
    /// Pushed out of the sender's full send buffer before they were sent.
    pub dropped_send_buffer: u64,
    /// Handed to the receiving application.
    pub delivered: u64,
}

/// The stream of a message sent as a datagram: none (the message table shows -1).
pub const NO_STREAM: u64 = u64::MAX;

/// When the sender abandons a message that is not yet acknowledged (seed 004 §2.1 "C1", §9.3:
/// obsolete priority data is not retransmitted): its stream is reset (RESET_STREAM, RFC 9000
/// §3.1), so nothing of it is sent again and the receiver stops waiting for it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Expiry {
    /// This long after it was written.
    pub lifetime: Option<Dur>,
    /// When the source writes its next message.
    pub superseded: bool,
}

impl Expiry {
    /// Whether messages can expire: a lifetime is set, or each is superseded by the next.
    pub fn is_set(&self) -> bool {
        self.lifetime.is_some() || self.superseded
    }
}

/// One message, from the sender's hand-over to the receiver's reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message {
    /// Stream offset just past its last byte (its size with a stream per message).
    end: u64,
    /// The stream it went on.
    stream: u64,
    sent: Time,
    received: Option<Time>,
    /// The sender abandoned it then (its expiry), before it was all acknowledged.
    abandoned: Option<Time>,
    /// The receiver saw its stream reset before it had all of it.
    dropped: bool,
    /// A datagram that will not arrive: refused, lost or dropped at the sender.
    gone: bool,
}

impl Message {
    /// Abandoned by the sender and never received whole: expired, not lost.
    pub fn expired(&self) -> Option<Time> {
        self.abandoned.filter(|_| self.received.is_none())
    }
    /// The stream it went on ([`NO_STREAM`] for a datagram).
    pub fn stream(&self) -> u64 {
        self.stream
    }
    /// A datagram the sender knows will not arrive (refused, lost or dropped), unless it was
    /// received after all (a loss declared spuriously).
    pub fn gone(&self) -> bool {
        self.gone && self.received.is_none()
    }
    /// When the sending application handed it over.
    pub fn sent(&self) -> Time {
        self.sent
    }
    /// When the receiving application had it whole; `None`: never.
    pub fn received(&self) -> Option<Time> {
        self.received
    }
}

/// A source at run time: a periodic [`MessageSource`], or a stream the application opened and
/// writes itself ([`MessageLog::open_app_stream`], [`MessageLog::app_write`]).
#[derive(Debug, Clone)]
pub struct RunningSource {
    spec: MessageSource,
    /// Written by the application, not on a period.
    by_app: bool,
    /// The source's one stream; `None` before it begins, and with a stream per message.
    stream: Option<u64>,
    next_at: Option<Time>,
    /// No message is written at or after this instant.
    until: Time,
    written: u64,
    messages: Vec<Message>,
    /// One stream: messages before this index were received (they arrive in order).
    in_order: usize,
    /// Messages received, and messages the receiver saw reset.
    received: usize,
    dropped: usize,
    /// Datagram messages that will not arrive (refused, lost or dropped at the sender).
    gone: usize,
    datagrams: DatagramCounts,
    /// With a lifetime: messages before this index are past it (abandoned, or acknowledged
    /// in time).
    expiry_cursor: usize,
    finished: bool,
}

impl RunningSource {
    fn new(spec: MessageSource, by_app: bool, stream: Option<u64>, until: Time) -> RunningSource {
        RunningSource {
            spec,
            by_app,
            stream,
            next_at: None,
            until,
            written: 0,
            messages: Vec::new(),
            in_order: 0,
            received: 0,
            dropped: 0,
            gone: 0,
            datagrams: DatagramCounts::default(),
            expiry_cursor: 0,
            finished: false,
        }
    }

    /// Each message on a stream of its own (asked for, or implied by an expiry).
    pub fn per_message(&self) -> bool {
        self.spec.per_message_streams || self.spec.expiry.is_set()
    }

    /// What the source is.
    pub fn spec(&self) -> &MessageSource {
        &self.spec
    }
    /// Its one stream; `None` before it begins, and with a stream per message.
    pub fn stream(&self) -> Option<u64> {
        self.stream
    }
    /// Application bytes written.
    pub fn written(&self) -> u64 {
        self.written
    }
    /// Messages received whole.
    pub fn received(&self) -> usize {
        self.received
    }
    /// A datagram source: what became of its datagrams.
    pub fn datagram_counts(&self) -> Option<DatagramCounts> {
        self.spec.datagram.then_some(self.datagrams)
    }
    /// Every message written, in order.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// When the next message passes its lifetime.
    fn next_expiry(&self) -> Option<Time> {
        let lifetime = self.spec.expiry.lifetime?;
        self.messages.get(self.expiry_cursor).map(|m| m.sent + lifetime)
    }

    /// The size of message `i`.
    pub fn size_of(&self, i: usize) -> u64 {
        let start = if self.stream.is_some() { i.checked_sub(1).map_or(0, |j| self.messages[j].end) } else { 0 };
        self.messages[i].end - start
    }

    /// Bytes of the received messages × 8 over the span the source wrote them in (its first
    /// message to one interval after its last), Mbit/s; `None` for a stream the application
    /// writes itself.
    pub fn received_mbps(&self) -> Option<f64> {
        let (first, last) = (self.messages.first()?, self.messages.last()?);
        if self.by_app {
            return None;
        }
        let span = last.sent.since(first.sent) + self.spec.interval;
        let bytes: u64 = (0..self.messages.len()).filter(|&i| self.messages[i].received.is_some()).map(|i| self.size_of(i)).sum();
        Some(bytes as f64 * 8.0 / span.as_secs_f64() / 1e6)
    }

    fn note_received(&mut self, i: usize, at: Time) -> bool {
        let m = &mut self.messages[i];
        if m.received.is_some() || m.dropped {
            return false;
        }
        m.received = Some(at);
        self.received += 1;
        true
    }
}

/// The message sources of one flow and what became of their messages.
#[derive(Debug, Clone)]
pub struct MessageLog {
    sources: Vec<RunningSource>,
    began: bool,
    /// Every message received, in order of arrival: (source, message) indices.
    arrivals: Vec<(usize, usize)>,
    /// With a stream per message: (source, message) by the stream's index (`id >> 2`).
    by_stream: Vec<Option<(u32, u32)>>,
    /// Datagram messages: (source, message) by tag (tags are numbered from 0).
    by_tag: Vec<(u32, u32)>,
}

impl MessageLog {
    /// `stop`: the flow's stop time, if any.
    pub fn new(specs: &[MessageSource], stop: Option<Time>) -> MessageLog {
        let sources = specs.iter().map(|s| RunningSource::new(s.clone(), false, None, stop.unwrap_or(Time::MAX))).collect();
        MessageLog { sources, began: false, arrivals: Vec::new(), by_stream: Vec::new(), by_tag: Vec::new() }
    }

    /// The sending application can send from `now`: opens a stream per source and plans the
    /// first messages. Only the first call counts.
    pub fn begin<S: OpenStreams + ?Sized>(&mut self, now: Time, sender: &mut S) -> Result<(), AppError> {
        if self.began {
            return Ok(());
        }
        self.began = true;
        for s in self.sources.iter_mut().filter(|s| !s.by_app) {
            if !s.per_message() && !s.spec.datagram {
                s.stream = Some(sender.open_stream(s.spec.options)?);
            }
            let first = now + s.spec.start;
            if let Some(d) = s.spec.duration {
                s.until = s.until.min(first + d);
            }
            s.next_at = Some(first);
        }
        Ok(())
    }

    /// The application opens a stream of its own, named `name`; returns its id.
    pub fn open_app_stream<S: OpenStreams + ?Sized>(&mut self, sender: &mut S, name: &str, kind: MessageKind, options: StreamOptions, deadline: Option<Dur>) -> Result<u64, AppError> {
        let stream = sender.open_stream(options)?;
        let spec = MessageSource {
            name: name.to_string(),
            kind,
            size: 0,
            interval: Dur::MAX,
            start: Dur::ZERO,
            count: None,
            duration: None,
            options,
            deadline,
            expiry: Expiry::default(),
            per_message_streams: false,
            datagram: false,
        };
        self.sources.push(RunningSource::new(spec, true, Some(stream), Time::MAX));
        Ok(stream)
    }

    /// The application writes one message of `size` bytes on its stream `stream` at `now`;
    /// returns the message's number on that stream.
    pub fn app_write<S: OpenStreams + ?Sized>(&mut self, now: Time, sender: &mut S, stream: u64, size: u64) -> Result<u64, AppError> {
        let s = self.app_source(stream)?;
        sender.write(stream, size)?;
        s.written += size;
        s.messages.push(Message { end: s.written, stream, sent: now, received: None, abandoned: None, dropped: false, gone: false });
        Ok(s.messages.len() as u64 - 1)
    }

    /// The application finishes its stream `stream`.
    pub fn app_finish<S: OpenStreams + ?Sized>(&mut self, sender: &mut S, stream: u64) -> Result<(), AppError> {
        let s = self.app_source(stream)?;
        if !s.finished {
            sender.finish(stream)?;
            s.finished = true;
        }
        Ok(())
    }

    fn app_source(&mut self, stream: u64) -> Result<&mut RunningSource, AppError> {
        match self.sources.iter_mut().find(|s| s.stream == Some(stream)) {
            Some(s) if s.by_app => Ok(s),
            _ => Err(AppError::UnknownStream(stream)),
        }
    }

    /// When the next message is due, or the next one passes its lifetime.
    pub fn next_due(&self) -> Option<Time> {
        self.sources.iter().flat_map(|s| [s.next_at, s.next_expiry()]).flatten().min()
    }

    /// Abandons the messages past their lifetime at `now`, writes the messages due at or
    /// before `now` (abandoning, with `superseded`, the one before each), and finishes the
    /// streams of the sources that are done. Returns whether anything was written, finished
    /// or abandoned.
    pub fn write_due<S: OpenStreams + ?Sized>(&mut self, now: Time, sender: &mut S) -> Result<bool, AppError> {
        let mut wrote = false;
        for index in 0..self.sources.len() {
            let s = &mut self.sources[index];
            if s.by_app || !self.began {
                continue;
            }
            if let Some(lifetime) = s.spec.expiry.lifetime {
                while let Some(m) = s.messages.get_mut(s.expiry_cursor).filter(|m| m.sent + lifetime <= now) {
                    s.expiry_cursor += 1;
                    if m.abandoned.is_none() && sender.reset_stream(m.stream)? {
                        m.abandoned = Some(m.sent + lifetime);
                        wrote = true;
                    }
                }
            }
            while let Some(at) = s.next_at.filter(|&t| t <= now) {
                let stopped = at >= s.until || s.spec.count.is_some_and(|c| s.messages.len() as u64 >= c);
                if stopped {
                    s.next_at = None;
                    break;
                }
                if s.spec.datagram {
                    let tag = self.by_tag.len() as u64;
                    self.by_tag.push((index as u32, s.messages.len() as u32));
                    let options = DatagramOptions { redundant: s.spec.options.redundant, urgent: s.spec.options.urgent };
                    let refused = match sender.send_datagram(tag, s.spec.size, options) {
                        Ok(()) => false,
                        Err(AppError::DatagramTooLarge { .. }) => true,
                        Err(e) => return Err(e),
                    };
                    s.written += s.spec.size;
                    s.messages.push(Message { end: s.spec.size, stream: NO_STREAM, sent: at, received: None, abandoned: None, dropped: false, gone: refused });
                    if refused {
                        s.datagrams.refused_too_large += 1;
                        s.gone += 1;
                    } else {
                        s.datagrams.sent += 1;
                    }
                    s.next_at = Some(at + s.spec.interval);
                    wrote = true;
                    continue;
                }
                let stream = match s.stream {
                    Some(stream) => stream,
                    None => {
                        let stream = sender.open_stream(s.spec.options)?;
                        let slot = (stream >> 2) as usize;
                        if self.by_stream.len() <= slot {
                            self.by_stream.resize(slot + 1, None);
                        }
                        self.by_stream[slot] = Some((index as u32, s.messages.len() as u32));
                        stream
                    }
                };
                if s.spec.expiry.superseded {
                    if let Some(prev) = s.messages.last_mut().filter(|m| m.abandoned.is_none()) {
                        if sender.reset_stream(prev.stream)? {
                            prev.abandoned = Some(at);
                        }
                    }
                }
                sender.write(stream, s.spec.size)?;
                s.written += s.spec.size;
                let end = if s.stream.is_some() { s.written } else { s.spec.size };
                s.messages.push(Message { end, stream, sent: at, received: None, abandoned: None, dropped: false, gone: false });
                if s.stream.is_none() {
                    sender.finish(stream)?;
                }
                s.next_at = Some(at + s.spec.interval);
                wrote = true;
            }
            // A source with nothing more to write ends its stream at once.
            let last = s.next_at.is_some_and(|t| t >= s.until) || s.spec.count.is_some_and(|c| s.messages.len() as u64 >= c);
            if (s.next_at.is_none() || last) && !s.finished {
                s.next_at = None;
                s.finished = true;
                if let Some(stream) = s.stream {
                    sender.finish(stream)?;
                }
                wrote = true;
            }
        }
        Ok(wrote)
    }

    /// The receiving application read `p`.
    pub fn on_progress(&mut self, p: &StreamProgress) {
        if let Some(index) = self.sources.iter().position(|s| s.stream == Some(p.stream)) {
            let s = &mut self.sources[index];
            while let Some(m) = s.messages.get(s.in_order) {
                if m.end > p.delivered {
                    break;
                }
                s.note_received(s.in_order, p.at);
                self.arrivals.push((index, s.in_order));
                s.in_order += 1;
            }
            return;
        }
        // A stream per message: whole, or reset before it was.
        let Some(&Some((index, i))) = self.by_stream.get((p.stream >> 2) as usize) else { return };
        let (index, i) = (index as usize, i as usize);
        let s = &mut self.sources[index];
        if p.delivered >= s.messages[i].end {
            if s.note_received(i, p.at) {
                self.arrivals.push((index, i));
            }
        } else if p.reset && s.messages[i].received.is_none() && !s.messages[i].dropped {
            s.messages[i].dropped = true;
            s.dropped += 1;
        }
    }

    /// What a transport told of a datagram message (either end's [`DatagramEvent`]).
    pub fn on_datagram_event(&mut self, e: &DatagramEvent) {
        let tag = match e {
            DatagramEvent::Received { tag, .. } | DatagramEvent::Acked { tag } | DatagramEvent::Lost { tag } | DatagramEvent::Dropped { tag } => *tag,
        };
        let Some(&(index, i)) = self.by_tag.get(tag as usize) else { return };
        let (index, i) = (index as usize, i as usize);
        let s = &mut self.sources[index];
        match e {
            DatagramEvent::Received { at, .. } => {
                let at = *at;
                if s.messages[i].gone {
                    // Declared lost, yet it arrived: it counts as received.
                    s.messages[i].gone = false;
                    s.gone -= 1;
                }
                if s.note_received(i, at) {
                    s.datagrams.delivered += 1;
                    self.arrivals.push((index, i));
                }
            }
            DatagramEvent::Acked { .. } => s.datagrams.acked += 1,
            DatagramEvent::Lost { .. } | DatagramEvent::Dropped { .. } => {
                if matches!(e, DatagramEvent::Lost { .. }) {
                    s.datagrams.lost += 1;
                } else {
                    s.datagrams.dropped_send_buffer += 1;
                }
                let m = &mut s.messages[i];
                if m.received.is_none() && !m.gone {
                    m.gone = true;
                    s.gone += 1;
                }
            }
        }
    }

    /// Whether a source sends datagrams.
    pub fn has_datagrams(&self) -> bool {
        self.sources.iter().any(|s| s.spec.datagram)
    }

    /// Every source stopped and every message it wrote was received (a flow whose application
    /// opened no stream and has no sources is never complete: the application may still write)
    /// or, a datagram, is known never to arrive.
    pub fn is_complete(&self) -> bool {
        self.began && !self.sources.is_empty() && self.sources.iter().all(|s| s.finished && s.received + s.dropped + s.gone == s.messages.len())
    }

    /// Application bytes written by all sources.
    pub fn bytes_written(&self) -> u64 {
        self.sources.iter().map(|s| s.written).sum()
    }

    /// Every source, in the order they were given, then the streams the application opened.
    pub fn sources(&self) -> &[RunningSource] {
        &self.sources
    }

    /// Every message received, in order of arrival: (source, message) indices into
    /// [`MessageLog::sources`].
    pub fn arrivals(&self) -> &[(usize, usize)] {
        &self.arrivals
    }

    /// Bytes of the messages that arrived whole in time: within their source's deadline, or
    /// at all for a source without one.
    pub fn bytes_in_time(&self) -> u64 {
        let mut total = 0;
        for s in &self.sources {
            for (i, m) in s.messages.iter().enumerate() {
                let Some(r) = m.received else { continue };
                if s.spec.deadline.map_or(true, |d| r.since(m.sent) < d) {
                    total += s.size_of(i);
                }
            }
        }
        total
    }

}

/// The `q` quantile of sorted one-way delays (`None` = never received, sorted last): the
/// smallest x with at least a share `q` of the messages at or below it (the inverse empirical
/// CDF, as `multiconn.messages.owd_quantile`). `None` when that is a message never received or
/// there are no messages.
pub fn owd_quantile(sorted: &[Option<Dur>], q: f64) -> Option<Dur> {
    if sorted.is_empty() {
        return None;
    }
    // ceil(q·n), guarded against q·n landing just above a whole number (0.999 · 1000).
    let rank = (((q * sorted.len() as f64) * 1e9).round() / 1e9).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(ms: u64) -> Option<Dur> {
        Some(Dur::from_millis(ms))
    }

    #[test]
    fn kinds_parse_from_their_names_and_the_error_lists_them() {
        for kind in MessageKind::ALL {
            assert_eq!(kind.name().parse::<MessageKind>(), Ok(kind));
        }
        let e = "urgent".parse::<MessageKind>().unwrap_err();
        assert_eq!(e.to_string(), "kind must be one of priority, background, not \"urgent\"");
    }

    #[test]
    fn choices_left_out_take_the_kinds_defaults() {
        let (options, deadline) = StreamChoices::default().resolve(MessageKind::Priority);
        assert_eq!(options, StreamOptions { priority: 0, urgent: true, redundant: true });
        assert_eq!(deadline, Some(Dur::from_millis(100)));
        let (options, deadline) = StreamChoices::default().resolve(MessageKind::Background);
        assert_eq!(options, StreamOptions { priority: 1, urgent: false, redundant: false });
        assert_eq!(deadline, None);
        let chosen = StreamChoices { priority: Some(7), urgent: Some(false), redundant: None, deadline: Some(Dur::from_millis(5)) };
        let (options, deadline) = chosen.resolve(MessageKind::Priority);
        assert_eq!(options, StreamOptions { priority: 7, urgent: false, redundant: true });
        assert_eq!(deadline, Some(Dur::from_millis(5)));
    }

    /// A transport's stream interface reduced to what the workload asked of it.
    #[derive(Default)]
    struct Recorder {
        next: u64,
        calls: Vec<String>,
    }

    impl OpenStreams for Recorder {
        fn open_stream(&mut self, options: StreamOptions) -> Result<u64, AppError> {
            let id = 3 + 4 * self.next;
            self.next += 1;
            self.calls.push(format!("open {id} level {}", options.priority));
            Ok(id)
        }
        fn write(&mut self, stream: u64, bytes: u64) -> Result<(), AppError> {
            self.calls.push(format!("write {stream} {bytes}"));
            Ok(())
        }
        fn finish(&mut self, stream: u64) -> Result<(), AppError> {
            self.calls.push(format!("finish {stream}"));
            Ok(())
        }
        fn reset_stream(&mut self, stream: u64) -> Result<bool, AppError> {
            self.calls.push(format!("reset {stream}"));
            Ok(true)
        }
    }

    fn source(kind: MessageKind, size: u64, interval_ms: u64, count: u64) -> MessageSource {
        let (options, deadline) = StreamChoices::default().resolve(kind);
        MessageSource {
            name: kind.name().to_string(),
            kind,
            size,
            interval: Dur::from_millis(interval_ms),
            start: Dur::from_millis(10),
            count: Some(count),
            duration: None,
            options,
            deadline,
            expiry: Expiry::default(),
            per_message_streams: false,
            datagram: false,
        }
    }

    fn at(ms: u64) -> Time {
        Time::ZERO + Dur::from_millis(ms)
    }

    #[test]
    fn a_periodic_source_writes_on_its_stream_at_its_period_and_finishes_it() {
        let mut log = MessageLog::new(&[source(MessageKind::Priority, 1200, 100, 3)], None);
        let mut t = Recorder::default();
        log.begin(at(0), &mut t).unwrap();
        assert_eq!(log.next_due(), Some(at(10)));
        let mut now = at(0);
        while let Some(due) = log.next_due() {
            now = due;
            log.write_due(now, &mut t).unwrap();
        }
        assert_eq!(now, at(210));
        assert_eq!(t.calls, ["open 3 level 0", "write 3 1200", "write 3 1200", "write 3 1200", "finish 3"]);
        let sent: Vec<Time> = log.sources()[0].messages().iter().map(Message::sent).collect();
        assert_eq!(sent, [at(10), at(110), at(210)]);
        assert!(!log.is_complete());
        // The receiver reads the stream in order: the first two messages whole, then all.
        log.on_progress(&StreamProgress { stream: 3, delivered: 2400, at: at(260), reset: false });
        assert_eq!(log.arrivals(), [(0, 0), (0, 1)]);
        log.on_progress(&StreamProgress { stream: 3, delivered: 3600, at: at(270), reset: false });
        assert!(log.is_complete());
        let owd: Vec<Option<Dur>> = log.sources()[0].messages().iter().map(|m| m.received().map(|r| r.since(m.sent()))).collect();
        assert_eq!(owd, [Some(Dur::from_millis(250)), Some(Dur::from_millis(150)), Some(Dur::from_millis(60))]);
        assert_eq!(log.bytes_in_time(), 1200);
    }

    #[test]
    fn a_superseded_message_is_reset_when_the_next_is_written_and_counts_as_expired() {
        let mut spec = source(MessageKind::Background, 500, 50, 2);
        spec.expiry = Expiry { lifetime: None, superseded: true };
        let mut log = MessageLog::new(&[spec], None);
        let mut t = Recorder::default();
        log.begin(at(0), &mut t).unwrap();
        while let Some(due) = log.next_due() {
            log.write_due(due, &mut t).unwrap();
        }
        assert_eq!(t.calls, ["open 3 level 1", "write 3 500", "finish 3", "open 7 level 1", "reset 3", "write 7 500", "finish 7"]);
        // The first never arrives (its reset does), the second does.
        log.on_progress(&StreamProgress { stream: 3, delivered: 0, at: at(80), reset: true });
        log.on_progress(&StreamProgress { stream: 7, delivered: 500, at: at(90), reset: false });
        assert!(log.is_complete());
        let messages = log.sources()[0].messages();
        assert_eq!(messages[0].expired(), Some(at(60)));
        assert_eq!(messages[1].received(), Some(at(90)));
    }

    /// A transport that takes datagrams of at most 1000 B and writes down what it was asked.
    #[derive(Default)]
    struct DatagramRecorder {
        calls: Vec<String>,
    }

    impl OpenStreams for DatagramRecorder {
        fn open_stream(&mut self, _: StreamOptions) -> Result<u64, AppError> {
            panic!("a datagram source opens no stream")
        }
        fn write(&mut self, _: u64, _: u64) -> Result<(), AppError> {
            panic!("a datagram source writes on no stream")
        }
        fn finish(&mut self, _: u64) -> Result<(), AppError> {
            panic!("a datagram source finishes no stream")
        }
        fn reset_stream(&mut self, _: u64) -> Result<bool, AppError> {
            panic!("a datagram source resets no stream")
        }
        fn send_datagram(&mut self, tag: u64, bytes: u64, options: DatagramOptions) -> Result<(), AppError> {
            if bytes > 1000 {
                return Err(AppError::DatagramTooLarge { size: bytes, max: 1000 });
            }
            self.calls.push(format!("datagram {tag} {bytes} redundant {}", options.redundant));
            Ok(())
        }
    }

    #[test]
    fn a_datagram_source_sends_one_datagram_per_message_and_settles_each() {
        let mut spec = source(MessageKind::Priority, 500, 100, 3);
        spec.datagram = true;
        let mut log = MessageLog::new(&[spec], None);
        let mut t = DatagramRecorder::default();
        log.begin(at(0), &mut t).unwrap();
        while let Some(due) = log.next_due() {
            log.write_due(due, &mut t).unwrap();
        }
        assert_eq!(t.calls, ["datagram 0 500 redundant true", "datagram 1 500 redundant true", "datagram 2 500 redundant true"]);
        log.on_datagram_event(&DatagramEvent::Received { tag: 0, at: at(40), content: None });
        log.on_datagram_event(&DatagramEvent::Acked { tag: 0 });
        log.on_datagram_event(&DatagramEvent::Lost { tag: 1 });
        assert!(!log.is_complete(), "the third is still in flight");
        // A datagram declared lost that arrives after all is received, not lost.
        log.on_datagram_event(&DatagramEvent::Lost { tag: 2 });
        log.on_datagram_event(&DatagramEvent::Received { tag: 2, at: at(260), content: None });
        log.on_datagram_event(&DatagramEvent::Received { tag: 2, at: at(270), content: None });
        assert!(log.is_complete());
        let s = &log.sources()[0];
        assert_eq!(s.stream(), None);
        let m = s.messages();
        assert_eq!((m[0].received(), m[1].received(), m[2].received()), (Some(at(40)), None, Some(at(260))));
        assert!(m[1].gone() && !m[2].gone());
        assert_eq!(m[1].stream(), NO_STREAM);
        let c = s.datagram_counts().unwrap();
        assert_eq!(c, DatagramCounts { sent: 3, refused_too_large: 0, acked: 1, lost: 2, dropped_send_buffer: 0, delivered: 2 });
        assert_eq!(log.bytes_in_time(), 1000);
    }

    #[test]
    fn a_message_too_large_for_a_datagram_is_refused_and_counted() {
        let mut spec = source(MessageKind::Background, 1200, 50, 2);
        spec.datagram = true;
        let mut log = MessageLog::new(&[spec], None);
        let mut t = DatagramRecorder::default();
        log.begin(at(0), &mut t).unwrap();
        while let Some(due) = log.next_due() {
            log.write_due(due, &mut t).unwrap();
        }
        assert!(t.calls.is_empty());
        assert!(log.is_complete(), "refused messages never arrive");
        let c = log.sources()[0].datagram_counts().unwrap();
        assert_eq!((c.sent, c.refused_too_large), (0, 2));
        // A stream source has no datagram counts.
        let log = MessageLog::new(&[source(MessageKind::Background, 1200, 50, 2)], None);
        assert_eq!(log.sources()[0].datagram_counts(), None);
    }

    #[test]
    fn quantile_is_the_inverse_empirical_cdf_with_lost_messages_last() {
        let mut v: Vec<Option<Dur>> = (1..=1000).map(d).collect();
        assert_eq!(owd_quantile(&v, 0.999), d(999));
        assert_eq!(owd_quantile(&v, 0.5), d(500));
        v[999] = None;
        v[998] = None;
        // Two of 1000 lost: the 99.9th percentile is a lost message.
        assert_eq!(owd_quantile(&v, 0.999), None);
        assert_eq!(owd_quantile(&v, 0.998), d(998));
        assert_eq!(owd_quantile(&[], 0.5), None);
    }
}
