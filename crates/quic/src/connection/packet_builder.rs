//! Packet assembly (quinn-proto's `connection/packet_builder.rs`): the datagrams a connection
//! sends, built under the congestion window, pacing, the anti-amplification limit and flow
//! control.
//!
//! * Coalescing (RFC 9000 §12.2): until the multipath sender takes over, one datagram carries
//!   the Initial, Handshake and 1-RTT (or 0-RTT) packets that are ready, in that order, within
//!   the largest UDP payload; datagrams with an ack-eliciting Initial packet are padded to 1200
//!   bytes (§14.1).
//! * Anti-amplification (§8.1): before the client's address is validated, the server sends at
//!   most three times the bytes it received, and nothing once fewer than a quarter of 1200
//!   bytes are left.
//! * Packetization (§13): each packet starts with an ACK frame when its space has something
//!   new to acknowledge, then control frames (HANDSHAKE_DONE, MAX_DATA, RESET_STREAM,
//!   MAX_STREAM_DATA), the copies queued on the path, and STREAM (or CRYPTO) data while it
//!   fits and stream and connection credit allow; every packet gives the header protection
//!   sample its bytes (RFC 9001 §5.4.2). DATAGRAM frames (RFC 9221) go before the stream data
//!   or, with `datagram_priority = "round_robin"`, before it in every other packet; a DATAGRAM
//!   frame that ends the packet drops its Length field (type 0x30). An ACK frame not yet due
//!   waits for a later packet rather than keep the next datagram out of this one.
//! * Congestion control and pacing (RFC 9002 §7): ack-eliciting packets wait for window room
//!   and the pacer; ACK-only packets do neither. CRYPTO data of the Initial and Handshake
//!   spaces is not held back by the window (the pacer still applies). PTO probes ignore the
//!   window and pacing (§6.2.4) and, without new data, carry the oldest unacknowledged data
//!   again or a PING; never a DATAGRAM frame (a lost one is not sent again, a new one waits
//!   for the window).
//! * Registration: each datagram sent goes into the path's recovery, pacer, ACK states,
//!   counters and qlog.

use multiconn_core::{Packet, Payload, Time};
use multiconn_transport::{DatagramPriority, Role};

use super::{Connection, HANDSHAKE_PATH, MIN_FRAME_ROOM};
use crate::frame::{crypto_overhead, fit_data, stream_overhead, Frame};
use crate::packet::{header_size, overhead_estimate, pn_len, Datagram, PacketType, QuicPacket, Space, AEAD_TAG, IP_UDP_OVERHEAD, MIN_INITIAL_DATAGRAM, MIN_PN_AND_PAYLOAD};
use crate::recovery::{SentContent, SentPacketInfo};

impl Connection {
    pub(super) fn update_amplification(&mut self, now: Time) {
        if self.role == Role::Server {
            let at_limit = !self.address_validated && self.amplification_allowance() < MIN_INITIAL_DATAGRAM as u64 / 4;
            self.handshake_path_mut().recovery.set_at_amplification_limit(now, at_limit);
        }
    }

    /// Bytes the server may still send before its client's address is validated.
    fn amplification_allowance(&self) -> u64 {
        if self.address_validated {
            u64::MAX
        } else {
            (3 * self.stats.bytes_received).saturating_sub(self.stats.bytes_sent)
        }
    }


    fn data_packet_type(&self) -> Option<PacketType> {
        if self.hs.has_one_rtt_keys() {
            Some(PacketType::OneRtt)
        } else if self.role == Role::Client && self.hs.has_zero_rtt_keys() && self.started {
            Some(PacketType::ZeroRtt)
        } else {
            None
        }
    }

    fn packet_type(&self, space: Space) -> Option<PacketType> {
        match space {
            Space::Initial if !self.handshake_path().recovery.is_discarded(Space::Initial) && self.hs.started() => Some(PacketType::Initial),
            Space::Handshake if self.hs.has_handshake_keys() && !self.handshake_path().recovery.is_discarded(Space::Handshake) => {
                Some(PacketType::Handshake)
            }
            Space::Data => self.data_packet_type(),
            _ => None,
        }
    }

    /// Ack-eliciting data waits in `space` (ignoring the window and pacing).
    pub(super) fn has_data(&self, space: Space) -> bool {
        match space {
            Space::Initial | Space::Handshake => self.hs.has_crypto_to_send(space),
            Space::Data => {
                self.handshake_done_pending
                    || self.max_data_pending
                    || !self.msd_pending.is_empty()
                    || !self.resets_pending.is_empty()
                    || self.streams.front().is_some()
                    || self.dgram.has_pending()
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn build_packet(&mut self, now: Time, space: Space, ptype: PacketType, room: usize, eliciting: bool, probe: bool, path: usize) -> Option<QuicPacket> {
        let path_acks = space == Space::Data && self.multipath_ready();
        if !eliciting && !path_acks && !self.ack_state(space, path).ack_due(now) {
            // Only an ACK could go, and it is not due: nothing to build.
            return None;
        }
        let pn = self.paths[path].recovery.next_pn(space);
        let pn_len = pn_len(pn, self.paths[path].recovery.largest_acked(space));
        let overhead = overhead_estimate(ptype, self.dcid_len, self.dcid_len, pn_len);
        if room < overhead + MIN_PN_AND_PAYLOAD {
            return None;
        }
        let mut avail = room - overhead;
        let mut frames = Vec::with_capacity(3);
        // Room kept for the next datagram: an ACK that is not due waits rather than keep it out.
        let reserve = if eliciting && !probe && space == Space::Data { self.dgram.front_need() } else { 0 };
        let reserve = if reserve <= avail { reserve } else { 0 };
        let ack_due = if path_acks {
            let mut ack_room = avail - reserve;
            let due = self.push_path_acks(now, path, &mut frames, &mut ack_room);
            avail = ack_room + reserve;
            due
        } else {
            let rx = self.ack_state(space, path);
            let ack = if ptype != PacketType::ZeroRtt && rx.has_new() { rx.build(now) } else { None };
            let ack_due = ack.is_some() && rx.ack_due(now);
            if let Some(a) = ack {
                let sz = a.wire_size();
                if sz <= avail && (ack_due || sz + reserve <= avail) {
                    avail -= sz;
                    frames.push(Frame::Ack(a));
                }
            }
            ack_due
        };
        let mut retransmit = false;
        if eliciting {
            retransmit = self.fill(space, ptype, &mut frames, &mut avail, path, !probe);
            if probe && !frames.iter().any(Frame::is_ack_eliciting) {
                // Probe without new data: resend the oldest unacknowledged data (RFC 9002 §6.2.4).
                let mut contents = std::mem::take(&mut self.probe_contents);
                contents.clear();
                self.paths[path].recovery.oldest_unacked(space, 1, &mut contents);
                for c in &contents {
                    if let Some(pkt) = c.payload.get::<Datagram>().and_then(|d| d.get(c.index as usize)) {
                        self.requeue(pkt);
                    }
                }
                contents.clear();
                self.probe_contents = contents;
                retransmit |= self.fill(space, ptype, &mut frames, &mut avail, path, false);
            }
            if probe && !frames.iter().any(Frame::is_ack_eliciting) && avail >= 1 {
                frames.push(Frame::Ping);
            }
        }
        let has_ack = matches!(frames.first(), Some(Frame::Ack(_) | Frame::PathAck { .. }));
        let eliciting_frames = frames.iter().any(Frame::is_ack_eliciting);
        if !(eliciting_frames || has_ack && ack_due) {
            // Put back nothing: fill() added nothing ack-eliciting and an ACK alone is not due.
            return None;
        }
        if space == Space::Data && !eliciting_frames && self.paths[path].ping_on_ack && avail >= 1 {
            // ACK-only packets of this path were lost (`picoquic-2022`): this ACK asks for one.
            frames.push(Frame::Ping);
        }
        if retransmit {
            self.stats.retransmissions += 1;
            self.paths[path].counters.retransmissions += 1;
        }
        Some(sealed_packet(ptype, pn, pn_len, frames, self.dcid_len))
    }

    /// Adds ack-eliciting frames of `space` while they fit, for a packet on `path`: control
    /// frames, then (1-RTT) the copies queued on the path, then stream data and, if `datagrams`,
    /// DATAGRAM frames in the order of the datagram priority; true if any carries retransmitted
    /// data.
    fn fill(&mut self, space: Space, ptype: PacketType, frames: &mut Vec<Frame>, avail: &mut usize, path: usize, datagrams: bool) -> bool {
        let mut retransmit = false;
        match space {
            Space::Initial | Space::Handshake => {
                let Some(buf) = self.hs.send_buffer(space) else { return false };
                while *avail >= MIN_FRAME_ROOM {
                    let room = *avail;
                    let Some(c) = buf.next_chunk(u64::MAX, |off, want| fit_data(room, want, |l| crypto_overhead(off, l))) else {
                        break;
                    };
                    let f = Frame::Crypto { offset: c.offset, len: c.len as u32 };
                    *avail -= f.wire_size();
                    retransmit |= c.retransmit;
                    frames.push(f);
                }
            }
            Space::Data => {
                if self.handshake_done_pending && ptype == PacketType::OneRtt && self.role == Role::Server && *avail >= 1 {
                    self.handshake_done_pending = false;
                    frames.push(Frame::HandshakeDone);
                    *avail -= 1;
                }
                if self.max_data_pending {
                    let f = Frame::MaxData(self.conn_recv.max);
                    if f.wire_size() <= *avail {
                        *avail -= f.wire_size();
                        frames.push(f);
                        self.max_data_pending = false;
                    }
                }
                while let Some(&id) = self.resets_pending.first() {
                    let Some(final_size) = self.streams.get(id).filter(|s| !s.send.is_done()).and_then(|s| s.send.end()) else {
                        self.resets_pending.remove(0);
                        continue;
                    };
                    let f = Frame::ResetStream { id, final_size };
                    if f.wire_size() > *avail {
                        break;
                    }
                    *avail -= f.wire_size();
                    frames.push(f);
                    self.resets_pending.remove(0);
                }
                while let Some(&id) = self.msd_pending.last() {
                    let Some(s) = self.streams.get_mut(id) else {
                        self.msd_pending.pop();
                        continue;
                    };
                    let f = Frame::MaxStreamData { id, max: s.recv_window.max };
                    if f.wire_size() > *avail {
                        break;
                    }
                    s.max_stream_data_pending = false;
                    *avail -= f.wire_size();
                    frames.push(f);
                    self.msd_pending.pop();
                }
                if ptype == PacketType::OneRtt {
                    self.fill_queued_copies(path, frames, avail);
                }
                if !(datagrams && self.dgram.has_pending()) {
                    retransmit |= self.fill_streams(frames, avail);
                    return retransmit;
                }
                let first = match self.dgram.priority() {
                    DatagramPriority::BeforeStreams => true,
                    DatagramPriority::RoundRobin => {
                        let both = self.streams.front().is_some();
                        self.dgram.take_turn(both)
                    }
                };
                if first {
                    self.fill_datagrams(frames, avail);
                    retransmit |= self.fill_streams(frames, avail);
                } else {
                    retransmit |= self.fill_streams(frames, avail);
                    self.fill_datagrams(frames, avail);
                }
            }
        }
        retransmit
    }

    /// The copies queued on `path` (tquic's redundant scheduler), oldest first, while they fit:
    /// of each, only what is not acknowledged yet, one unacknowledged range per frame; a range
    /// cut short leaves its tail at the front of the queue, without the FIN. Ranges of streams
    /// reset or gone, and ranges fully acknowledged, are dropped. A packet that carries a copy
    /// counts in the path's `copies_sent`.
    fn fill_queued_copies(&mut self, path: usize, frames: &mut Vec<Frame>, avail: &mut usize) {
        let mut carried = false;
        while *avail >= MIN_FRAME_ROOM {
            let Some(c) = self.paths[path].queued_copies.front().copied() else { break };
            let end = c.offset.saturating_add(c.len);
            let unacked = self.streams.get(c.stream).filter(|s| !s.send.is_reset()).and_then(|s| s.send.first_unacked(c.offset, end));
            let Some((a, b)) = unacked else {
                self.paths[path].queued_copies.pop_front();
                continue;
            };
            let room = *avail;
            let Some(len) = fit_data(room, b - a, |l| stream_overhead(c.stream, a, l)).filter(|&l| l > 0) else { break };
            let queue = &mut self.paths[path].queued_copies;
            if a + len < end {
                queue[0] = crate::path::QueuedCopy { offset: a + len, len: end - (a + len), ..c };
            } else {
                queue.pop_front();
            }
            let f = Frame::Stream { id: c.stream, offset: a, len: len as u32, fin: c.fin && a + len == end };
            *avail -= f.wire_size();
            frames.push(f);
            carried = true;
        }
        if carried {
            self.paths[path].counters.copies_sent += 1;
        }
    }

    /// Queued datagrams while they fit. Under a decision with `hold_new` the datagrams within
    /// its copy scope wait, as those streams' new data does.
    fn fill_datagrams(&mut self, frames: &mut Vec<Frame>, avail: &mut usize) {
        let hold = self.hold_new;
        self.dgram.fill(frames, avail, |o| hold.is_some_and(|scope| scope == multiconn_multipath::CopyScope::AllStreams || o.redundant));
    }

    fn fill_streams(&mut self, frames: &mut Vec<Frame>, avail: &mut usize) -> bool {
        let mut retransmit = false;
        while *avail >= MIN_FRAME_ROOM {
            let Some(id) = self.streams.front() else { break };
            let conn_credit = self.conn_send.available();
            let Some(s) = self.streams.get_mut(id) else {
                self.streams.rotate(false);
                continue;
            };
            let held = self.hold_new.is_some_and(|scope| scope == multiconn_multipath::CopyScope::AllStreams || s.redundant);
            if held && !s.send.has_retransmit() {
                // Sequential redundancy checks: this stream's new data waits for a packet that
                // can be copied.
                break;
            }
            let credit = s.send_credit.available().min(conn_credit);
            let room = *avail;
            match s.send.next_chunk(credit, |off, want| fit_data(room, want, |l| stream_overhead(id, off, l))) {
                Some(c) => {
                    if !c.retransmit {
                        s.send_credit.used += c.len;
                        self.conn_send.used += c.len;
                    }
                    retransmit |= c.retransmit;
                    let again = s.can_send(self.conn_send.available());
                    let blocked_on_conn = !again && s.send.has_new() && s.send.new_bytes() > 0 && s.send_credit.available() > 0;
                    let f = Frame::Stream { id, offset: c.offset, len: c.len as u32, fin: c.fin };
                    *avail -= f.wire_size();
                    frames.push(f);
                    self.streams.rotate(again);
                    if blocked_on_conn {
                        self.streams.block_on_connection(id);
                    }
                }
                None => {
                    if s.can_send(conn_credit) {
                        // Data waits but did not fit in what is left of this packet.
                        break;
                    }
                    let blocked_on_conn = s.send.has_new() && s.send.new_bytes() > 0 && s.send_credit.available() > 0;
                    self.streams.rotate(false);
                    if blocked_on_conn {
                        self.streams.block_on_connection(id);
                    }
                }
            }
        }
        retransmit
    }

    /// The next datagram to send. Until this end has confirmed a multipath handshake (and
    /// always without multipath) the packets of the three spaces go coalesced on the
    /// handshake path; then the multipath sender takes over.
    pub(super) fn transmit(&mut self, now: Time, next_id: &mut u64) -> Option<Packet> {
        if self.multipath_ready() {
            return self.transmit_multipath(now, next_id);
        }
        let mds = self.mds as u64;
        self.maybe_start(now);
        if !self.started && self.role == Role::Client {
            return None;
        }
        // The packet type each space can send now (None: no keys, or the space is discarded).
        let spaces: [Option<PacketType>; 3] = [self.packet_type(Space::Initial), self.packet_type(Space::Handshake), self.packet_type(Space::Data)];
        // Fast exits when only ack-eliciting data could go out and something holds it back.
        let probe_pending = Space::ALL.iter().any(|s| self.probes_in(*s) > 0) || self.anti_deadlock.is_some();
        if !probe_pending && !Space::ALL.iter().any(|s| self.ack_state(*s, HANDSHAKE_PATH).ack_due(now)) {
            if self.handshake_path().pacing_release.is_some_and(|t| t > now) {
                return None;
            }
            if !Space::ALL.iter().any(|s| spaces[s.index()].is_some() && self.has_data(*s)) {
                if self.handshake_path().has_window_room(mds) {
                    self.app_limited = true;
                    self.handshake_path_mut().recovery.on_app_limited();
                }
                return None;
            }
        }
        let allowance = self.amplification_allowance();
        if allowance < MIN_INITIAL_DATAGRAM as u64 / 4 {
            self.update_amplification(now);
            return None;
        }
        let budget = mds.min(allowance) as usize;

        // Probes first: they ignore the congestion window and pacing.
        let probe_space = Space::ALL
            .into_iter()
            .find(|s| spaces[s.index()].is_some() && (self.probes_in(*s) > 0 || self.anti_deadlock == Some(*s)));
        for s in Space::ALL {
            if spaces[s.index()].is_none() {
                self.set_probes_in(s, 0);
                if self.anti_deadlock == Some(s) {
                    self.anti_deadlock = None;
                }
            }
        }

        let has_data = Space::ALL.iter().any(|s| spaces[s.index()].is_some() && self.has_data(*s));
        let cwnd_room = self.handshake_path().has_window_room(mds);
        let mut eliciting_ok = probe_space.is_some();
        // CRYPTO data of the Initial and Handshake spaces is not held back by the congestion
        // window (the pacer still applies). 0.5-RTT (or 0-RTT) packets can fill the window,
        // and they cannot be acknowledged until the handshake completes. RFC 9002's PTO does
        // not cover this case: the space has nothing in flight once its lost packet is declared
        // lost, and the Application Data PTO waits for the handshake. A lost CRYPTO frame would
        // then never be sent again (quicwg/base-drafts#2886: "It was not intended for crypto
        // timeout retransmissions to be blocked by the congestion controller"). ngtcp2 does the
        // same (ngtcp2/ngtcp2#663); the anti-amplification limit still applies.
        let crypto_pending = [Space::Initial, Space::Handshake].into_iter().any(|s| spaces[s.index()].is_some() && self.has_data(s));
        let mut crypto_over_window = false;
        if probe_space.is_none() {
            if !has_data {
                if cwnd_room {
                    self.app_limited = true;
                    self.handshake_path_mut().recovery.on_app_limited();
                }
            } else if !cwnd_room {
                self.app_limited = false;
                crypto_over_window = crypto_pending && self.handshake_path_mut().paced_until(now, mds).is_none();
            } else {
                self.app_limited = false;
                eliciting_ok = self.handshake_path_mut().paced_until(now, mds).is_none();
            }
        }

        let mut packets: [Option<QuicPacket>; 3] = [None, None, None];
        let mut count = 0;
        let mut remaining = budget;
        let mut probe_used = None;
        for space in Space::ALL {
            let Some(ptype) = spaces[space.index()] else { continue };
            let probe = probe_space == Some(space);
            let crypto = crypto_over_window && space != Space::Data;
            let eliciting = if probe_space.is_some() { probe } else { eliciting_ok || crypto };
            if let Some(p) = self.build_packet(now, space, ptype, remaining, eliciting, probe, HANDSHAKE_PATH) {
                if probe {
                    probe_used = Some(space);
                }
                remaining = remaining.saturating_sub(p.size as usize);
                packets[count] = Some(p);
                count += 1;
            }
        }
        if count == 0 {
            return None;
        }
        let packets = &mut packets[..count];

        // RFC 9000 §14.1: pad datagrams with ack-eliciting Initial packets to 1200 bytes.
        let needs_padding = packets.iter().flatten().any(|p| p.ptype == PacketType::Initial && p.is_ack_eliciting());
        let total: usize = packets.iter().flatten().map(|p| p.size as usize).sum();
        let target = MIN_INITIAL_DATAGRAM.min(budget);
        if needs_padding && total < target {
            let dcid = self.dcid_len;
            if let Some(Some(last)) = packets.last_mut() {
                pad_packet(last, target - total, dcid);
            }
        }

        if let Some(space) = probe_used {
            self.stats.probes_sent += 1;
            if self.anti_deadlock == Some(space) {
                self.anti_deadlock = None;
            } else {
                self.set_probes_in(space, self.probes_in(space).saturating_sub(1));
            }
        }
        let sent_handshake = packets.iter().flatten().any(|p| p.ptype == PacketType::Handshake);
        let mut it = packets.iter_mut().filter_map(Option::take);
        let first = it.next()?;
        // The handshake path's ID is 0 (draft-ietf-quic-multipath-21 §2); 0 without multipath.
        let dg = Datagram { first, coalesced: it.collect(), path_id: 0 };
        let pkt = self.register_datagram(now, HANDSHAKE_PATH, dg, next_id);
        if self.role == Role::Client && sent_handshake {
            // RFC 9001 §4.9.1: the client discards Initial keys when it first sends a
            // Handshake packet.
            self.discard(now, Space::Initial);
        }
        self.update_amplification(now);
        Some(pkt)
    }

    /// Registers a datagram going out on `path` and wraps it for the network: qlog, the ACK
    /// states whose ACK frames it carries, the statistics, each packet in the path's recovery,
    /// the path's pacer and, once the multipath sender runs, the path's counters and health
    /// (the datagrams of the handshake phase are not counted there).
    pub(super) fn register_datagram(&mut self, now: Time, path: usize, dg: Datagram, next_id: &mut u64) -> Packet {
        if let Some(q) = &mut self.qlog {
            for p in dg.packets() {
                q.packet_sent(now, p);
            }
        }
        let udp_size = dg.size();
        let payload = Payload::with_header(dg);
        let dg = payload.get::<Datagram>().expect("just built");
        let app_limited = self.app_limited;
        // The datagram's IP ECN field (RFC 9000 §13.4.2: per path, while validation allows).
        let ect = self.paths[path].recovery.ecn_mark();
        let (mut in_flight_any, mut ack_eliciting_any) = (false, false);
        for (i, p) in dg.packets().enumerate() {
            let space = p.ptype.space();
            let in_flight = p.counts_in_flight();
            let ack_eliciting = p.is_ack_eliciting();
            for f in &p.frames {
                match f {
                    Frame::Ack(a) | Frame::PathAck { ack: a, .. } if a.ecn.is_some() => self.stats.ack_ecn_frames_sent += 1,
                    _ => {}
                }
                match f {
                    Frame::Datagram { tag, .. } => self.dgram.on_frame_sent(*tag),
                    Frame::Ack(_) => self.ack_state_mut(space, path).on_ack_sent(),
                    Frame::PathAck { path: id, .. } => {
                        if let Some(q) = self.route_of(*id) {
                            self.paths[q].rx.on_ack_sent();
                        }
                    }
                    _ => {}
                }
            }
            self.stats.packets_sent += 1;
            if !ack_eliciting {
                self.stats.ack_only_packets += 1;
            }
            self.paths[path].recovery.on_packet_sent(
                space,
                SentPacketInfo {
                    pn: p.pn,
                    time_sent: now,
                    size: p.size,
                    ack_eliciting,
                    in_flight,
                    app_limited,
                    ect: ect.is_some(),
                    content: Some(SentContent { payload: payload.clone(), index: i as u8 }),
                },
            );
            in_flight_any |= in_flight;
            ack_eliciting_any |= ack_eliciting;
        }
        if in_flight_any {
            self.paths[path].pacer.on_sent(udp_size as u64);
        }
        if ack_eliciting_any {
            self.paths[path].ping_on_ack = false;
        }
        if let Some(mp) = self.mp.as_mut().filter(|mp| mp.ready) {
            self.paths[path].last_sent = Some(now);
            let c = &mut self.paths[path].counters;
            c.packets_sent += 1;
            c.bytes_sent += udp_size as u64;
            if ack_eliciting_any {
                mp.health.on_packet_sent(path, now);
            }
        }
        self.stats.datagrams_sent += 1;
        self.stats.bytes_sent += udp_size as u64;
        self.seq += 1;
        let id = *next_id;
        *next_id += 1;
        let mut pkt = Packet::new(id, self.flow, udp_size + IP_UDP_OVERHEAD, self.seq, now).with_payload(payload);
        pkt.path = path as u8;
        if let Some(codepoint) = ect {
            pkt.ecn = codepoint;
            self.stats.ect_datagrams_sent += 1;
        }
        pkt
    }
}

/// Grows a packet by about `extra` bytes of PADDING, keeping its size exact (the Length field
/// of a long header may grow with it).
fn pad_packet(p: &mut QuicPacket, extra: usize, dcid_len: usize) {
    let target = p.size as usize + extra;
    // PADDING follows: a DATAGRAM frame there needs its Length field back (type 0x31).
    let mut extra = extra;
    if let Some(Frame::Datagram { len, with_len, .. }) = p.frames.last_mut() {
        if !*with_len {
            *with_len = true;
            extra = extra.saturating_sub(crate::varint::len(u64::from(*len)));
        }
    }
    let payload: usize = p.frames.iter().map(Frame::wire_size).sum();
    let mut pad = extra;
    for _ in 0..3 {
        let size = header_size(p.ptype, dcid_len, dcid_len, p.pn_len, payload + pad) + payload + pad + AEAD_TAG;
        if size == target || (size < target && pad == extra) {
            break;
        }
        if size > target {
            pad -= (size - target).min(pad);
        } else {
            pad += target - size;
        }
    }
    match p.frames.last_mut() {
        Some(Frame::Padding(n)) => *n += pad as u32,
        _ => p.frames.push(Frame::Padding(pad as u32)),
    }
    let payload: usize = p.frames.iter().map(Frame::wire_size).sum();
    p.size = (header_size(p.ptype, dcid_len, dcid_len, p.pn_len, payload) + payload + AEAD_TAG) as u32;
}

/// The packet with `frames`, padded so that the packet number and payload give the header
/// protection sample its bytes (RFC 9001 §5.4.2), and its size on the wire.
pub(super) fn sealed_packet(ptype: PacketType, pn: u64, pn_len: u8, mut frames: Vec<Frame>, dcid_len: usize) -> QuicPacket {
    // RFC 9221 §4: a DATAGRAM frame that ends the packet needs no Length field (type 0x30).
    let payload: usize = frames.iter().map(Frame::wire_size).sum();
    if let Some(Frame::Datagram { len, with_len, .. }) = frames.last_mut() {
        let without = payload - crate::varint::len(u64::from(*len));
        if *with_len && without + (pn_len as usize) >= MIN_PN_AND_PAYLOAD {
            *with_len = false;
        }
    }
    let mut payload: usize = frames.iter().map(Frame::wire_size).sum();
    if payload + (pn_len as usize) < MIN_PN_AND_PAYLOAD {
        let pad = MIN_PN_AND_PAYLOAD - payload - pn_len as usize;
        frames.push(Frame::Padding(pad as u32));
        payload += pad;
    }
    let size = header_size(ptype, dcid_len, dcid_len, pn_len, payload) + payload + AEAD_TAG;
    QuicPacket { ptype, pn, pn_len, frames, size: size as u32 }
}

#[cfg(test)]
mod tests {
    use multiconn_cc::CcKind;
    use multiconn_core::{Dur, FlowId, Packet, Time, IP_UDP_OVERHEAD};
    use multiconn_transport::profile::TransportKind;
    use multiconn_transport::{AppError, ConnectionParams, Endpoint, Profile, Role, Workload};

    use crate::handshake::HandshakeSizes;
    use crate::packet::{Datagram, PacketType, Space, MIN_INITIAL_DATAGRAM};
    use crate::Connection;

    fn params(size: u64) -> ConnectionParams {
        ConnectionParams {
            flow: FlowId(0),
            start: Time::ZERO,
            workload: Workload::Download { size: Some(size), request_size: 100 },
            profile: Profile::default_for(TransportKind::Quic),
            cc: CcKind::NewReno,
            max_packet_size: 1500,
            resume: false,
            address_token: false,
            qlog: false,
            multipath: None,
            external_cc: None,
            external_workload: None,
            datagrams: None,
        }
    }

    fn datagram(p: &Packet) -> &Datagram {
        p.payload.as_ref().and_then(|p| p.get::<Datagram>()).expect("a QUIC datagram")
    }

    fn udp_size(p: &Packet) -> u64 {
        u64::from(p.size - IP_UDP_OVERHEAD)
    }

    /// Everything `ep` sends at `now`.
    fn drain(ep: &mut Connection, now: Time, next_id: &mut u64) -> Vec<Packet> {
        std::iter::from_fn(|| ep.poll_transmit(now, next_id)).collect()
    }

    #[test]
    fn the_client_initial_datagram_is_padded_to_1200_bytes() {
        let mut client = Connection::new(&params(10_000), Role::Client).unwrap();
        let mut id = 0;
        let sent = drain(&mut client, Time::ZERO, &mut id);
        assert_eq!(sent.len(), 1, "one Initial datagram before any answer");
        let dg = datagram(&sent[0]);
        assert!(dg.packets().all(|p| p.ptype == PacketType::Initial));
        assert!(dg.packets().any(|p| p.is_ack_eliciting()));
        // The ClientHello alone is far smaller; the datagram is padded (RFC 9000 §14.1) to
        // exactly the minimum, its size on the wire the sum of its packets'.
        assert_eq!(udp_size(&sent[0]), MIN_INITIAL_DATAGRAM as u64);
        assert_eq!(u64::from(dg.size()), udp_size(&sent[0]));
    }

    #[test]
    fn the_server_coalesces_initial_and_handshake_packets_within_the_datagram_size() {
        let p = params(10_000);
        let mut client = Connection::new(&p, Role::Client).unwrap();
        let mut server = Connection::new(&p, Role::Server).unwrap();
        let mut id = 0;
        for pkt in drain(&mut client, Time::ZERO, &mut id) {
            server.handle_packet(Time::ZERO, pkt);
        }
        let flight = drain(&mut server, Time::ZERO, &mut id);
        let first = datagram(&flight[0]);
        let types: Vec<PacketType> = first.packets().map(|q| q.ptype).collect();
        // RFC 9000 §12.2: the ServerHello's Initial, then the Handshake packet, in one datagram.
        assert_eq!(&types[..2], &[PacketType::Initial, PacketType::Handshake], "{types:?}");
        for pkt in &flight {
            assert!(udp_size(pkt) <= server.max_datagram_size() as u64, "{} bytes", udp_size(pkt));
            assert_eq!(u64::from(datagram(pkt).size()), udp_size(pkt));
        }
        // The Handshake flight needs more than the first datagram: it fills it.
        assert_eq!(udp_size(&flight[0]), server.max_datagram_size() as u64);
    }

    #[test]
    fn the_server_sends_at_most_three_times_what_it_received_before_validation() {
        let p = params(10_000);
        let sizes = HandshakeSizes { certificate: 9000, ..HandshakeSizes::default() };
        let mut client = Connection::with_handshake(&p, Role::Client, sizes).unwrap();
        let mut server = Connection::with_handshake(&p, Role::Server, sizes).unwrap();
        let mut id = 0;
        let mut received = 0;
        for pkt in drain(&mut client, Time::ZERO, &mut id) {
            received += udp_size(&pkt);
            server.handle_packet(Time::ZERO, pkt);
        }
        let flight = drain(&mut server, Time::ZERO, &mut id);
        let sent: u64 = flight.iter().map(udp_size).sum();
        assert!(!server.address_validated());
        assert!(sent <= 3 * received, "sent {sent}, received {received} (RFC 9000 §8.1)");
        // What is left of the allowance is less than a datagram worth sending, and the 9 kB
        // certificate is still waiting.
        assert!(3 * received - sent < MIN_INITIAL_DATAGRAM as u64 / 4, "sent {sent}, received {received}");
        assert!(server.hs.has_crypto_to_send(Space::Handshake));
        // Nothing more goes out later either (the limit, not a timer, holds it back)...
        let later = Time::ZERO + Dur::from_millis(5);
        assert!(server.poll_transmit(later, &mut id).is_none());
        // ...until the client's Handshake packet proves its address.
        for pkt in flight {
            client.handle_packet(later, pkt);
        }
        let mut t = later;
        while !server.address_validated() {
            t += Dur::from_millis(1);
            for pkt in drain(&mut client, t, &mut id) {
                server.handle_packet(t, pkt);
            }
            for pkt in drain(&mut server, t, &mut id) {
                client.handle_packet(t, pkt);
            }
            for ep in [&mut client, &mut server] {
                if ep.poll_timeout().is_some_and(|w| w <= t) {
                    ep.handle_timeout(t);
                }
            }
            assert!(t < Time::from_secs_f64(1.0), "the handshake is stuck");
        }
        assert!(server.stats().bytes_sent > 3 * received);
    }

    /// The server's datagrams once its packets stop reaching the client: while the window is
    /// full, only PTO probes (RFC 9002 §6.2.4) and ACK-only packets go out.
    #[test]
    fn nothing_is_sent_into_a_full_window_except_a_probe() {
        let p = params(50_000_000);
        let mut client = Connection::new(&p, Role::Client).unwrap();
        let mut server = Connection::new(&p, Role::Server).unwrap();
        let delay = Dur::from_millis(10);
        let cut = Time::ZERO + Dur::from_millis(200);
        let end = Time::from_secs_f64(2.0);
        let mut id = 0;
        let mut now = Time::ZERO;
        // (arrival, to the server, datagram)
        let mut wire: Vec<(Time, bool, Packet)> = Vec::new();
        let mut probes_into_full_window = 0;
        while now < end {
            for (to_server, ep) in [(true, &mut client), (false, &mut server)] {
                loop {
                    let (in_flight, cwnd) = (ep.recovery().bytes_in_flight(), ep.recovery().cwnd());
                    let probes = ep.stats().probes_sent;
                    let Some(pkt) = ep.poll_transmit(now, &mut id) else { break };
                    let probe = ep.stats().probes_sent > probes;
                    let eliciting = datagram(&pkt).packets().any(|q| q.counts_in_flight());
                    if !to_server && now >= cut {
                        let room = in_flight + ep.max_datagram_size() as u64 <= cwnd;
                        if eliciting && !room {
                            assert!(probe, "a datagram into a full window at {now} ({in_flight} of {cwnd} in flight)");
                            probes_into_full_window += 1;
                        }
                        // The server's datagrams are lost from here on.
                        continue;
                    }
                    wire.push((now + delay, to_server, pkt));
                }
            }
            let next_arrival = wire.iter().map(|w| w.0).min();
            let Some(next) = [next_arrival, client.poll_timeout(), server.poll_timeout()].into_iter().flatten().min() else { break };
            now = next.max(now);
            let (due, rest): (Vec<_>, Vec<_>) = wire.drain(..).partition(|w| w.0 <= now);
            wire = rest;
            for (_, to_server, pkt) in due {
                if to_server {
                    server.handle_packet(now, pkt);
                } else {
                    client.handle_packet(now, pkt);
                }
            }
            for ep in [&mut client, &mut server] {
                if ep.poll_timeout().is_some_and(|t| t <= now) {
                    ep.handle_timeout(now);
                }
            }
        }
        assert!(server.hs.is_complete(), "the download was running at the cut");
        assert!(probes_into_full_window >= 2, "{probes_into_full_window} probes into a full window");
    }

    // ------------------------------------------------------------ DATAGRAM frames (RFC 9221)

    use multiconn_transport::{DatagramEvent, DatagramOptions, DatagramParams, DatagramPriority};

    fn datagram_params(client: Option<u64>, priority: DatagramPriority, send_buffer: u64) -> ConnectionParams {
        let mut p = params(0);
        p.workload = Workload::Messages;
        p.datagrams = Some(DatagramParams { client_max_frame_size: client, server_max_frame_size: Some(65535), priority, send_buffer });
        p
    }

    /// What the server sent: every datagram with the window before it and whether it was a
    /// probe.
    struct ServerSend {
        pkt: Packet,
        in_flight: u64,
        cwnd: u64,
        probe: bool,
        lost: bool,
    }

    /// Runs a connection until `end`: the server's packets cross a bottleneck of `rate_bps` with
    /// a drop-tail queue of `queue` packets, then `delay`; the client's cross `delay` alone.
    /// `lose(i)` loses the server's `i`-th datagram after the bottleneck. Every `interval`,
    /// `app` runs at the server.
    #[allow(clippy::too_many_arguments)]
    fn drive(
        client: &mut Connection,
        server: &mut Connection,
        end: Time,
        rate_bps: u64,
        queue: usize,
        delay: Dur,
        lose: impl Fn(u64) -> bool,
        interval: Dur,
        mut app: impl FnMut(Time, &mut Connection),
    ) -> Vec<ServerSend> {
        let mut id = 0;
        let mut now = Time::ZERO;
        let mut next_app = Time::ZERO + Dur::from_millis(100);
        let mut free_at = Time::ZERO;
        let mut departures: Vec<Time> = Vec::new();
        let mut wire: Vec<(Time, bool, Packet)> = Vec::new();
        let mut log = Vec::new();
        let mut index = 0u64;
        while now < end {
            if now >= next_app {
                app(now, server);
                next_app += interval;
            }
            loop {
                let Some(pkt) = client.poll_transmit(now, &mut id) else { break };
                wire.push((now + delay, true, pkt));
            }
            loop {
                let (in_flight, cwnd, probes) = (server.recovery().bytes_in_flight(), server.recovery().cwnd(), server.stats().probes_sent);
                let Some(pkt) = server.poll_transmit(now, &mut id) else { break };
                let probe = server.stats().probes_sent > probes;
                departures.retain(|&t| t > now);
                let mut lost = departures.len() >= queue;
                if !lost {
                    free_at = free_at.max(now) + Dur::from_nanos(u64::from(pkt.size) * 8 * 1_000_000_000 / rate_bps);
                    departures.push(free_at);
                    lost = lose(index);
                    index += 1;
                    if !lost {
                        wire.push((free_at + delay, false, pkt.clone()));
                    }
                }
                log.push(ServerSend { pkt, in_flight, cwnd, probe, lost });
            }
            let next_arrival = wire.iter().map(|w| w.0).min();
            let Some(next) = [next_arrival, client.poll_timeout(), server.poll_timeout(), Some(next_app)].into_iter().flatten().min() else { break };
            now = next.max(now);
            let (due, rest): (Vec<_>, Vec<_>) = wire.drain(..).partition(|w| w.0 <= now);
            wire = rest;
            for (_, to_server, pkt) in due {
                if to_server {
                    server.handle_packet(now, pkt);
                } else {
                    client.handle_packet(now, pkt);
                }
            }
            for ep in [&mut *client, &mut *server] {
                if ep.poll_timeout().is_some_and(|t| t <= now) {
                    ep.handle_timeout(now);
                }
            }
        }
        log
    }

    /// (tag, len, with Length) of the DATAGRAM frames of a datagram.
    fn datagram_frames(p: &Packet) -> Vec<(u64, u32, bool)> {
        datagram(p)
            .packets()
            .flat_map(|q| q.frames.iter())
            .filter_map(|f| match f {
                crate::frame::Frame::Datagram { tag, len, with_len, .. } => Some((*tag, *len, *with_len)),
                _ => None,
            })
            .collect()
    }

    fn events(ep: &mut Connection) -> Vec<DatagramEvent> {
        let mut out = Vec::new();
        ep.drain_datagram_events(&mut out);
        out
    }

    /// A lossy link: every datagram is sent once (no DATAGRAM frame on the wire twice, PTO
    /// probes included), each is acknowledged or declared lost, and what the client received
    /// plus what the server declared lost is exactly what was sent.
    #[test]
    fn a_lost_datagram_is_never_sent_again_and_delivered_plus_lost_is_sent() {
        let p = datagram_params(Some(65535), DatagramPriority::BeforeStreams, DatagramParams::DEFAULT_SEND_BUFFER);
        let mut client = Connection::new(&p, Role::Client).unwrap();
        let mut server = Connection::new(&p, Role::Server).unwrap();
        let mut tag = 0;
        // One datagram in 20 (and a burst of 5 in a row) lost after the bottleneck.
        let lose = |i: u64| i % 20 == 3 || (150..155).contains(&i);
        let log = drive(&mut client, &mut server, Time::from_secs_f64(8.0), 10_000_000, 1000, Dur::from_millis(20), lose, Dur::from_millis(10), |now, s| {
            if now < Time::from_secs_f64(5.0) {
                s.send_datagram(tag, 1000, DatagramOptions::default()).unwrap();
                tag += 1;
            }
        });
        let sent = tag;
        assert!(sent > 400);
        let mut on_wire = std::collections::HashMap::new();
        let mut lost_on_wire = std::collections::BTreeSet::new();
        for s in &log {
            for (t, len, _) in datagram_frames(&s.pkt) {
                assert_eq!(len, 1000);
                assert!(on_wire.insert(t, s.probe).is_none(), "datagram {t} went on the wire twice");
                assert!(!s.probe, "a PTO probe carried datagram {t}");
                if s.lost {
                    lost_on_wire.insert(t);
                }
            }
        }
        assert!(log.iter().any(|s| s.probe) || server.stats().probes_sent == 0);
        assert_eq!(on_wire.len() as u64, sent, "every datagram went out once");
        assert!(lost_on_wire.len() > 20, "{} lost", lost_on_wire.len());
        let received: Vec<u64> = events(&mut client).iter().filter_map(|e| if let DatagramEvent::Received { tag, .. } = e { Some(*tag) } else { None }).collect();
        let unique: std::collections::BTreeSet<u64> = received.iter().copied().collect();
        assert_eq!(unique.len(), received.len(), "a datagram delivered twice");
        let (mut acked, mut lost) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
        for e in events(&mut server) {
            match e {
                DatagramEvent::Acked { tag } => assert!(acked.insert(tag)),
                DatagramEvent::Lost { tag } => assert!(lost.insert(tag)),
                other => panic!("{other:?}"),
            }
        }
        // The invariant: delivered + lost = sent, the two apart; the losses are the wire's.
        assert_eq!(server.path_recovery(0).stats().spurious_losses, 0);
        assert!(unique.is_disjoint(&lost));
        assert_eq!(unique.len() as u64 + lost.len() as u64, sent);
        assert_eq!(lost, lost_on_wire);
        assert_eq!(acked.len() + lost.len(), sent as usize, "every datagram settled once");
        let st = server.datagram_stats();
        assert_eq!((st.queued, st.sent, st.frames_sent, st.acked, st.lost), (sent, sent, sent, acked.len() as u64, lost.len() as u64));
        assert_eq!(client.datagram_stats().received, unique.len() as u64);
        // Lost datagrams did not make the connection retransmit anything.
        assert_eq!(server.stats().retransmissions, 0);
    }

    /// A source three times faster than the bottleneck: datagrams go out only with room in the
    /// window (probes aside), and the rest waits in the send buffer, the oldest pushed out.
    #[test]
    fn datagrams_are_congestion_controlled_and_the_excess_is_dropped_at_the_sender() {
        let p = datagram_params(Some(65535), DatagramPriority::BeforeStreams, 20 * 1200);
        let mut client = Connection::new(&p, Role::Client).unwrap();
        let mut server = Connection::new(&p, Role::Server).unwrap();
        let mut tag = 0;
        let rate = 3_000_000;
        let log = drive(&mut client, &mut server, Time::from_secs_f64(5.0), rate, 30, Dur::from_millis(20), |_| false, Dur::from_millis(1), |now, s| {
            if now < Time::from_secs_f64(4.0) {
                s.send_datagram(tag, 1200, DatagramOptions::default()).unwrap();
                tag += 1;
            }
        });
        let mut on_wire = 0u64;
        for s in &log {
            let frames = datagram_frames(&s.pkt);
            if frames.is_empty() {
                continue;
            }
            on_wire += frames.len() as u64;
            assert!(!s.probe);
            // RFC 9002 §7: an ack-eliciting packet goes only with room for it in the window.
            assert!(s.in_flight + server.max_datagram_size() as u64 <= s.cwnd, "{} in flight of {}", s.in_flight, s.cwnd);
        }
        let st = server.datagram_stats();
        // At most what the link carries in the run: 3 Mbit/s, 5 s, datagrams of ~1250 B.
        let capacity = (rate as f64 * 5.0 / 8.0 / 1250.0) as u64;
        assert!(on_wire <= capacity, "{on_wire} datagrams sent into a link that carries {capacity}");
        assert!(on_wire > capacity / 2, "{on_wire} sent, capacity {capacity}");
        assert!(st.dropped_send_buffer > tag / 2, "{st:?}");
        assert_eq!(st.queued, tag);
        assert!(st.sent + st.dropped_send_buffer <= st.queued);
        assert!(st.queued - st.sent - st.dropped_send_buffer <= 20, "at most the buffer is left");
        // The sender, not the network, dropped the excess: the link's queue overflowed only
        // as the controller probed (blasting would lose two datagrams in three there).
        let lost_on_link: usize = log.iter().filter(|s| s.lost).map(|s| datagram_frames(&s.pkt).len()).sum();
        assert!((lost_on_link as u64) < on_wire / 20, "{lost_on_link} of {on_wire} lost in the link's queue");
    }

    /// The largest datagram the API takes fills a 1-RTT packet with a type-0x30 frame.
    #[test]
    fn the_largest_datagram_fills_one_packet_as_a_type_0x30_frame() {
        let mut p = datagram_params(Some(65535), DatagramPriority::BeforeStreams, DatagramParams::DEFAULT_SEND_BUFFER);
        p.max_packet_size = 1200 + IP_UDP_OVERHEAD;
        let mut client = Connection::new(&p, Role::Client).unwrap();
        let mut server = Connection::new(&p, Role::Server).unwrap();
        let mut sizes = Vec::new();
        let log = drive(&mut client, &mut server, Time::from_secs_f64(1.0), 10_000_000, 100, Dur::from_millis(10), |_| false, Dur::from_millis(50), |_, s| {
            let max = s.max_datagram_payload();
            sizes.push(max);
            assert_eq!(s.send_datagram(99, max + 1, DatagramOptions::default()), Err(AppError::DatagramTooLarge { size: max + 1, max }));
            s.send_datagram(sizes.len() as u64, max, DatagramOptions::default()).unwrap();
        });
        // 1200 − (1 + 8-byte DCID + 4-byte packet number) − 16 (AEAD) − 1 (type) = 1170.
        assert!(sizes.iter().all(|&m| m == 1170), "{sizes:?}");
        let carrying: Vec<&ServerSend> = log.iter().filter(|s| !datagram_frames(&s.pkt).is_empty()).collect();
        assert_eq!(carrying.len(), sizes.len());
        for s in carrying {
            let q = &datagram(&s.pkt).first;
            assert_eq!(datagram_frames(&s.pkt), [(datagram_frames(&s.pkt)[0].0, 1170, false)]);
            assert_eq!(q.frames.len(), 1, "alone in its packet: {:?}", q.frames);
            assert_eq!(q.size as usize, 1 + 8 + q.pn_len as usize + 1 + 1170 + 16);
            assert!(udp_size(&s.pkt) <= 1200);
        }
        assert_eq!(server.datagram_stats().refused_too_large, sizes.len() as u64);
    }

    /// The client leaves max_datagram_frame_size out: the server may not send any.
    #[test]
    fn without_the_peers_transport_parameter_sending_is_refused() {
        let p = datagram_params(None, DatagramPriority::BeforeStreams, DatagramParams::DEFAULT_SEND_BUFFER);
        let mut client = Connection::new(&p, Role::Client).unwrap();
        let mut server = Connection::new(&p, Role::Server).unwrap();
        let mut results = Vec::new();
        let log = drive(&mut client, &mut server, Time::from_secs_f64(0.5), 10_000_000, 100, Dur::from_millis(10), |_| false, Dur::from_millis(50), |_, s| {
            results.push(s.send_datagram(0, 100, DatagramOptions::default()));
        });
        assert!(!results.is_empty());
        assert!(results.iter().all(|r| *r == Err(AppError::DatagramsUnsupported)), "{results:?}");
        assert!(log.iter().all(|s| datagram_frames(&s.pkt).is_empty()));
        // The client advertises none, but the server does: the client may send (RFC 9221 §3).
        assert_eq!(client.send_datagram(1, 100, DatagramOptions::default()), Ok(()));
    }

    /// A resuming client's 0-RTT datagram rides with its Initial in a datagram padded to 1200
    /// bytes (RFC 9000 §14.1): the DATAGRAM frame keeps its Length field there (PADDING follows
    /// it), and the sizes stay exact.
    #[test]
    fn a_zero_rtt_datagram_before_padding_keeps_its_length_field() {
        let mut p = datagram_params(Some(65535), DatagramPriority::BeforeStreams, DatagramParams::DEFAULT_SEND_BUFFER);
        p.resume = true;
        let mut client = Connection::new(&p, Role::Client).unwrap();
        client.handle_timeout(Time::ZERO);
        client.send_datagram(5, 200, DatagramOptions::default()).unwrap();
        let mut id = 0;
        let sent = drain(&mut client, Time::ZERO, &mut id);
        let dg = datagram(&sent[0]);
        let types: Vec<PacketType> = dg.packets().map(|q| q.ptype).collect();
        assert_eq!(types, [PacketType::Initial, PacketType::ZeroRtt]);
        assert_eq!(udp_size(&sent[0]), MIN_INITIAL_DATAGRAM as u64);
        assert_eq!(u64::from(dg.size()), udp_size(&sent[0]));
        let zero_rtt = dg.packets().nth(1).unwrap();
        assert_eq!(zero_rtt.frames[0], crate::frame::Frame::Datagram { tag: 5, len: 200, with_len: true, content: None });
        assert!(matches!(zero_rtt.frames.last(), Some(crate::frame::Frame::Padding(_))), "{:?}", zero_rtt.frames);
        let payload: usize = zero_rtt.frames.iter().map(crate::frame::Frame::wire_size).sum();
        assert_eq!(zero_rtt.size as usize, crate::packet::header_size(PacketType::ZeroRtt, 8, 8, zero_rtt.pn_len, payload) + payload + crate::packet::AEAD_TAG);
    }

    /// Datagrams first, or in turns with stream data.
    #[test]
    fn the_datagram_priority_orders_frames_in_packets() {
        let order = |priority: DatagramPriority| {
            let p = datagram_params(Some(65535), priority, DatagramParams::DEFAULT_SEND_BUFFER);
            let mut client = Connection::new(&p, Role::Client).unwrap();
            let mut server = Connection::new(&p, Role::Server).unwrap();
            let mut tag = 0;
            let mut stream = None;
            let log = drive(&mut client, &mut server, Time::from_secs_f64(2.0), 5_000_000, 1000, Dur::from_millis(10), |_| false, Dur::from_millis(2), |_, s| {
                let id = *stream.get_or_insert_with(|| s.open_stream(multiconn_transport::StreamOptions::default()).unwrap());
                // Stream data and a datagram wait together for each packet.
                s.write(id, 200).unwrap();
                s.send_datagram(tag, 300, DatagramOptions::default()).unwrap();
                tag += 1;
            });
            let (mut streams_first, mut datagrams_first) = (0, 0);
            for s in &log {
                let frames = &datagram(&s.pkt).first.frames;
                let d = frames.iter().position(|f| matches!(f, crate::frame::Frame::Datagram { .. }));
                let st = frames.iter().position(|f| matches!(f, crate::frame::Frame::Stream { .. }));
                match (d, st) {
                    (Some(d), Some(st)) if st < d => streams_first += 1,
                    (Some(_), _) => datagrams_first += 1,
                    _ => {}
                }
            }
            (streams_first, datagrams_first)
        };
        let (sf, df) = order(DatagramPriority::BeforeStreams);
        assert_eq!(sf, 0);
        assert!(df > 100);
        let (sf, df) = order(DatagramPriority::RoundRobin);
        assert!(sf > 50 && df > 50, "{sf} packets with stream data first, {df} with datagrams first");
    }
}
