//! DATAGRAM frames at one endpoint (RFC 9221): the transport parameter, the send queue, the
//! datagrams in flight and those received.
//!
//! * Negotiation (§3): each end advertises max_datagram_frame_size (0x20), the largest DATAGRAM
//!   frame it accepts, or leaves it out and takes none. The peer's value is learnt with its
//!   transport parameters (the server's from the ClientHello, the client's from
//!   EncryptedExtensions, or remembered when resuming); the connection's settings say what it
//!   will be, so the application is refused at once when the peer leaves the parameter out
//!   (this end's own value only limits what it receives), and a datagram whose frame would exceed the peer's value, or
//!   that does not fit in one packet, is refused at once (§5: a datagram is never split). The
//!   parameter's bytes are not added to the modelled TLS message sizes.
//! * Sending (§5): datagrams wait in a queue of at most `send_buffer` bytes (quinn's
//!   `datagram_send_buffer_size`; the oldest are dropped to make room) until a packet has
//!   room: they are congestion controlled like stream data (the connection only builds
//!   ack-eliciting packets within the window), not flow controlled, and never retransmitted. A
//!   PTO probe carries none.
//! * Outcome: a datagram is *acknowledged* when a packet carrying it is, *lost* when every
//!   packet carrying it (a redundant multipath scheduler may send copies) was declared lost;
//!   each datagram gets one outcome, reported to the application ([`DatagramEvent`]).
//! * Receiving: a DATAGRAM frame from a peer this end told it takes none, or larger than this
//!   end's value, is a PROTOCOL_VIOLATION (§3), counted as invalid and ignored. Each datagram
//!   is handed over once: a second copy of it (redundant scheduling) is counted and dropped.
//!   A real receiver would need a number in the payload for this; the model uses the tag.

use std::collections::{BTreeMap, VecDeque};

use multiconn_core::{Payload, Time};
use multiconn_transport::{AppError, DatagramEvent, DatagramOptions, DatagramParams, DatagramPriority, Role};

use crate::frame::{datagram_overhead, max_datagram_data, Frame};
use crate::range_set::RangeSet;

/// The datagram counters of one endpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DatagramStats {
    /// Datagrams the application queued (accepted by [`Datagrams::send`]).
    pub queued: u64,
    /// Datagrams refused at the API as too large (for a packet, or for the peer's limit).
    pub refused_too_large: u64,
    /// Queued datagrams pushed out of the full send buffer before they were sent.
    pub dropped_send_buffer: u64,
    /// DATAGRAM frames sent, copies included.
    pub frames_sent: u64,
    /// Datagrams sent (first frames only).
    pub sent: u64,
    /// Datagrams acknowledged.
    pub acked: u64,
    /// Datagrams declared lost (every frame that carried it).
    pub lost: u64,
    /// Datagrams received and handed to the application.
    pub received: u64,
    /// DATAGRAM frames received again (copies) and dropped.
    pub duplicates: u64,
    /// DATAGRAM frames refused as a protocol violation (parameter absent, frame too large).
    pub invalid: u64,
}

/// One queued datagram.
#[derive(Clone, Debug)]
struct Queued {
    tag: u64,
    len: u64,
    options: DatagramOptions,
    content: Option<Payload>,
}

/// A datagram sent and not yet acknowledged or lost.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    /// Frames carrying it still in flight.
    copies: u32,
    options: DatagramOptions,
}

/// The DATAGRAM state of one endpoint (see the module header).
#[derive(Debug)]
pub struct Datagrams {
    /// This end's max_datagram_frame_size; `None`: not advertised.
    local_max: Option<u64>,
    /// What the peer advertises; known once its transport parameters arrived.
    peer_max: Option<u64>,
    peer_known: bool,
    priority: DatagramPriority,
    send_buffer: u64,
    queue: VecDeque<Queued>,
    queued_bytes: u64,
    in_flight: BTreeMap<u64, InFlight>,
    /// Tags handed to the application.
    received: RangeSet,
    events: VecDeque<DatagramEvent>,
    /// Round robin: the next packet starts with datagrams.
    datagrams_turn: bool,
    stats: DatagramStats,
}

impl Datagrams {
    /// The state of `role`'s end for `params` (`None`: neither end takes datagrams).
    pub fn new(params: Option<&DatagramParams>, role: Role) -> Datagrams {
        let peer = role.peer();
        Datagrams {
            local_max: params.and_then(|p| p.max_frame_size(role)).filter(|&v| v > 0),
            peer_max: params.and_then(|p| p.max_frame_size(peer)).filter(|&v| v > 0),
            peer_known: false,
            priority: params.map_or_else(DatagramPriority::default, |p| p.priority),
            send_buffer: params.map_or(DatagramParams::DEFAULT_SEND_BUFFER, |p| p.send_buffer),
            queue: VecDeque::new(),
            queued_bytes: 0,
            in_flight: BTreeMap::new(),
            received: RangeSet::new(),
            events: VecDeque::new(),
            datagrams_turn: true,
            stats: DatagramStats::default(),
        }
    }

    /// The peer's transport parameters arrived (or were remembered, with 0-RTT).
    pub fn on_peer_parameters(&mut self) {
        self.peer_known = true;
    }

    /// Whether this end may send datagrams: the peer advertises max_datagram_frame_size (RFC
    /// 9221 §3; whether this end advertises its own does not matter for sending).
    pub fn enabled(&self) -> bool {
        self.peer_max.is_some()
    }

    /// The largest datagram the application may send in packets with `room` bytes for frames
    /// (the datagram size less the 1-RTT header with the longest packet number, and the AEAD
    /// tag): a type-0x30 frame filling the packet, and no larger frame than the peer takes.
    pub fn max_size(&self, room: usize) -> u64 {
        let packet = max_datagram_data(room, true).unwrap_or(0);
        match self.peer_max {
            Some(peer) => packet.min(max_datagram_data(peer.min(usize::MAX as u64) as usize, false).unwrap_or(0)),
            None => packet,
        }
    }

    /// The application queues datagram `tag` (see the module header for refusals).
    pub fn send(&mut self, tag: u64, len: u64, options: DatagramOptions, room: usize) -> Result<(), AppError> {
        self.send_content(tag, len, options, None, room)
    }

    /// [`Datagrams::send`] with the datagram's bytes, which travel in its frames and come out
    /// of the peer's [`DatagramEvent::Received`].
    pub fn send_content(&mut self, tag: u64, len: u64, options: DatagramOptions, content: Option<Payload>, room: usize) -> Result<(), AppError> {
        if !self.enabled() {
            return Err(AppError::DatagramsUnsupported);
        }
        let max = self.max_size(room);
        if len > max {
            self.stats.refused_too_large += 1;
            return Err(AppError::DatagramTooLarge { size: len, max });
        }
        while self.queued_bytes + len > self.send_buffer {
            let Some(old) = self.queue.pop_front() else { break };
            self.queued_bytes -= old.len;
            self.stats.dropped_send_buffer += 1;
            self.events.push_back(DatagramEvent::Dropped { tag: old.tag });
        }
        self.queue.push_back(Queued { tag, len, options, content });
        self.queued_bytes += len;
        self.stats.queued += 1;
        Ok(())
    }

    /// Datagrams wait to be sent (the peer's parameters are needed first).
    pub fn has_pending(&self) -> bool {
        self.peer_known && !self.queue.is_empty()
    }

    /// Bytes queued.
    pub fn queued_bytes(&self) -> u64 {
        self.queued_bytes
    }

    /// The options of the next datagram to go out.
    pub fn front_options(&self) -> Option<DatagramOptions> {
        self.queue.front().filter(|_| self.peer_known).map(|q| q.options)
    }

    /// Bytes the next datagram's frame takes at least (type 0x30, the packet's last frame).
    pub fn front_need(&self) -> usize {
        self.queue.front().filter(|_| self.peer_known).map_or(0, |q| datagram_overhead(q.len, false) + q.len as usize)
    }

    /// How packets are filled.
    pub fn priority(&self) -> DatagramPriority {
        self.priority
    }

    /// Round robin: whether this packet starts with datagrams; the turn passes when both kinds
    /// wait (`both`).
    pub fn take_turn(&mut self, both: bool) -> bool {
        let first = self.datagrams_turn;
        if both {
            self.datagrams_turn = !first;
        }
        first
    }

    /// Adds queued datagrams to a packet while they fit in `avail` (type 0x31; the last one as
    /// type 0x30 when only that fits, and then nothing follows it), unless `held` says the
    /// front one waits. A queued datagram the peer turned out not to take is dropped as too
    /// large.
    pub fn fill(&mut self, frames: &mut Vec<Frame>, avail: &mut usize, held: impl Fn(DatagramOptions) -> bool) {
        if !self.peer_known {
            return;
        }
        while let Some(q) = self.queue.front() {
            let peer_limit = self.peer_max.and_then(|p| max_datagram_data(p.min(usize::MAX as u64) as usize, false)).unwrap_or(0);
            let (tag, len) = (q.tag, q.len);
            if len > peer_limit {
                self.queue.pop_front();
                self.queued_bytes -= len;
                self.stats.refused_too_large += 1;
                self.events.push_back(DatagramEvent::Dropped { tag });
                continue;
            }
            if held(q.options) {
                break;
            }
            let with_len = if datagram_overhead(len, true) + len as usize <= *avail {
                true
            } else if datagram_overhead(len, false) + len as usize <= *avail {
                false
            } else {
                break;
            };
            let q = self.queue.pop_front().expect("the front was just read");
            let f = Frame::Datagram { tag, len: len as u32, with_len, content: q.content };
            self.queued_bytes -= q.len;
            self.in_flight.insert(tag, InFlight { copies: 0, options: q.options });
            self.stats.sent += 1;
            let closes = matches!(f, Frame::Datagram { with_len: false, .. });
            *avail -= f.wire_size();
            frames.push(f);
            if closes {
                *avail = 0;
                break;
            }
        }
    }

    /// The options datagram `tag` was sent with, while it is in flight.
    pub fn options_in_flight(&self, tag: u64) -> Option<DatagramOptions> {
        self.in_flight.get(&tag).map(|d| d.options)
    }

    /// A frame carrying datagram `tag` went on the wire (the first one or a copy).
    pub fn on_frame_sent(&mut self, tag: u64) {
        self.stats.frames_sent += 1;
        if let Some(d) = self.in_flight.get_mut(&tag) {
            d.copies += 1;
        }
    }

    /// A packet carrying datagram `tag` was acknowledged: its first acknowledgement settles it
    /// (true then).
    pub fn on_acked(&mut self, tag: u64) -> bool {
        if self.in_flight.remove(&tag).is_none() {
            return false;
        }
        self.stats.acked += 1;
        self.events.push_back(DatagramEvent::Acked { tag });
        true
    }

    /// A packet carrying datagram `tag` was declared lost: the datagram is lost once no copy is
    /// left in flight (true then). It is never queued again.
    pub fn on_lost(&mut self, tag: u64) -> bool {
        let Some(d) = self.in_flight.get_mut(&tag) else { return false };
        d.copies = d.copies.saturating_sub(1);
        if d.copies > 0 {
            return false;
        }
        self.in_flight.remove(&tag);
        self.stats.lost += 1;
        self.events.push_back(DatagramEvent::Lost { tag });
        true
    }

    /// A DATAGRAM frame of `size` bytes arrived with datagram `tag` (and its bytes, if the
    /// sender gave them) at `now`; true if it was handed to the application.
    pub fn on_received(&mut self, now: Time, tag: u64, size: usize, content: Option<&Payload>) -> bool {
        if self.local_max.map_or(true, |max| size as u64 > max) {
            self.stats.invalid += 1;
            return false;
        }
        if self.received.contains(tag) {
            self.stats.duplicates += 1;
            return false;
        }
        self.received.insert(tag, tag + 1);
        self.stats.received += 1;
        self.events.push_back(DatagramEvent::Received { tag, at: now, content: content.cloned() });
        true
    }

    /// Moves the events since the last call to `out`.
    pub fn drain_events(&mut self, out: &mut Vec<DatagramEvent>) {
        out.extend(self.events.drain(..));
    }

    /// The counters so far.
    pub fn stats(&self) -> DatagramStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(client: Option<u64>, server: Option<u64>) -> DatagramParams {
        DatagramParams { client_max_frame_size: client, server_max_frame_size: server, priority: DatagramPriority::BeforeStreams, send_buffer: 3000 }
    }

    #[test]
    fn sending_is_refused_when_the_peer_left_the_parameter_out() {
        let opts = DatagramOptions::default();
        // This end advertises nothing: it may still send to a peer that does.
        let mut d = Datagrams::new(Some(&params(None, Some(65535))), Role::Client);
        assert_eq!(d.send(0, 100, opts, 1200), Ok(()));
        let mut d = Datagrams::new(None, Role::Server);
        assert_eq!(d.send(0, 100, opts, 1200), Err(AppError::DatagramsUnsupported));
        // The peer did not advertise it: refused once its parameters are known.
        let mut d = Datagrams::new(Some(&params(Some(65535), None)), Role::Client);
        d.on_peer_parameters();
        assert_eq!(d.send(0, 100, opts, 1200), Err(AppError::DatagramsUnsupported));
        let mut d = Datagrams::new(Some(&params(Some(65535), Some(65535))), Role::Client);
        d.on_peer_parameters();
        assert_eq!(d.send(0, 100, opts, 1200), Ok(()));
    }

    #[test]
    fn a_datagram_too_large_for_a_packet_or_the_peer_is_refused_and_counted() {
        let opts = DatagramOptions::default();
        let mut d = Datagrams::new(Some(&params(Some(500), Some(65535))), Role::Server);
        d.on_peer_parameters();
        // The client takes frames of at most 500 B: 1 type byte and a 2-byte Length leave 497.
        assert_eq!(d.max_size(1200), 497);
        assert_eq!(d.send(1, 498, opts, 1200), Err(AppError::DatagramTooLarge { size: 498, max: 497 }));
        assert_eq!(d.send(2, 497, opts, 1200), Ok(()));
        let mut d = Datagrams::new(Some(&params(Some(65535), Some(65535))), Role::Server);
        d.on_peer_parameters();
        assert_eq!(d.max_size(1171), 1170);
        assert!(d.send(3, 1171, opts, 1171).is_err());
        assert_eq!(d.stats().refused_too_large, 1);
    }

    #[test]
    fn a_full_send_buffer_drops_the_oldest() {
        let mut d = Datagrams::new(Some(&params(Some(65535), Some(65535))), Role::Server);
        d.on_peer_parameters();
        for tag in 0..4 {
            d.send(tag, 1000, DatagramOptions::default(), 1200).unwrap();
        }
        let mut ev = Vec::new();
        d.drain_events(&mut ev);
        assert_eq!(ev, [DatagramEvent::Dropped { tag: 0 }]);
        assert_eq!(d.queued_bytes(), 3000);
    }

    #[test]
    fn a_datagram_is_lost_only_when_every_copy_is_and_settles_once() {
        let mut d = Datagrams::new(Some(&params(Some(65535), Some(65535))), Role::Server);
        d.on_peer_parameters();
        d.send(7, 100, DatagramOptions::default(), 1200).unwrap();
        let (mut frames, mut avail) = (Vec::new(), 1000);
        d.fill(&mut frames, &mut avail, |_| false);
        assert_eq!(frames, [Frame::Datagram { tag: 7, len: 100, with_len: true, content: None }]);
        d.on_frame_sent(7);
        d.on_frame_sent(7);
        d.on_lost(7);
        d.on_acked(7);
        d.on_lost(7);
        let mut ev = Vec::new();
        d.drain_events(&mut ev);
        assert_eq!(ev, [DatagramEvent::Acked { tag: 7 }]);
        assert_eq!((d.stats().acked, d.stats().lost, d.stats().sent, d.stats().frames_sent), (1, 0, 1, 2));
    }

    #[test]
    fn a_datagrams_content_travels_in_its_frame_and_comes_out_at_the_peer() {
        let mut tx = Datagrams::new(Some(&params(Some(65535), Some(65535))), Role::Server);
        tx.on_peer_parameters();
        let content = Payload::new(42u32);
        tx.send_content(3, 500, DatagramOptions::default(), Some(content.clone()), 1200).unwrap();
        let (mut frames, mut avail) = (Vec::new(), 1000);
        tx.fill(&mut frames, &mut avail, |_| false);
        let [Frame::Datagram { tag: 3, len: 500, content: Some(carried), .. }] = frames.as_slice() else { panic!("{frames:?}") };
        // The same allocation, not a copy.
        assert_eq!(carried, &content);
        let mut rx = Datagrams::new(Some(&params(Some(65535), Some(65535))), Role::Client);
        assert!(rx.on_received(Time::ZERO, 3, frames[0].wire_size(), Some(carried)));
        assert!(!rx.on_received(Time::ZERO, 3, frames[0].wire_size(), Some(carried)), "a copy is not handed over again");
        let mut ev = Vec::new();
        rx.drain_events(&mut ev);
        let [DatagramEvent::Received { tag: 3, content: Some(got), .. }] = ev.as_slice() else { panic!("{ev:?}") };
        assert_eq!(got.get::<u32>(), Some(&42));
    }

    #[test]
    fn the_last_datagram_drops_its_length_only_when_it_must() {
        let mut d = Datagrams::new(Some(&params(Some(65535), Some(65535))), Role::Server);
        d.on_peer_parameters();
        d.send(0, 500, DatagramOptions::default(), 1200).unwrap();
        d.send(1, 600, DatagramOptions::default(), 1200).unwrap();
        let (mut frames, mut avail) = (Vec::new(), 1102);
        d.fill(&mut frames, &mut avail, |_| false);
        // 503 + 603 = 1106 > 1102; 503 + 601 = 1104 > 1102 too: the second waits.
        assert_eq!(frames.len(), 1);
        let (mut frames, mut avail) = (Vec::new(), 601);
        d.fill(&mut frames, &mut avail, |_| false);
        assert_eq!(frames, [Frame::Datagram { tag: 1, len: 600, with_len: false, content: None }]);
        assert_eq!(avail, 0);
    }

    #[test]
    fn the_receiver_hands_each_datagram_over_once_and_refuses_violations() {
        let mut d = Datagrams::new(Some(&params(Some(200), Some(65535))), Role::Client);
        d.on_received(Time::ZERO, 4, 150, None);
        d.on_received(Time::ZERO, 4, 150, None);
        d.on_received(Time::ZERO, 5, 201, None);
        let mut ev = Vec::new();
        d.drain_events(&mut ev);
        assert_eq!(ev, [DatagramEvent::Received { tag: 4, at: Time::ZERO, content: None }]);
        assert_eq!((d.stats().received, d.stats().duplicates, d.stats().invalid), (1, 1, 1));
        let mut none = Datagrams::new(None, Role::Client);
        none.on_received(Time::ZERO, 1, 10, None);
        assert_eq!(none.stats().invalid, 1);
    }
}
