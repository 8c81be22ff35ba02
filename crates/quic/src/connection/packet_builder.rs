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
//!   sample its bytes (RFC 9001 §5.4.2).
//! * Congestion control and pacing (RFC 9002 §7): ack-eliciting packets wait for window room
//!   and the pacer; ACK-only packets do neither. CRYPTO data of the Initial and Handshake
//!   spaces is not held back by the window (the pacer still applies). PTO probes ignore the
//!   window and pacing (§6.2.4) and, without new data, carry the oldest unacknowledged data
//!   again or a PING.
//! * Registration: each datagram sent goes into the path's recovery, pacer, ACK states,
//!   counters and qlog.

use multiconn_core::{Packet, Payload, Time};
use multiconn_transport::Role;

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
        let ack_due = if path_acks {
            self.push_path_acks(now, path, &mut frames, &mut avail)
        } else {
            let rx = self.ack_state(space, path);
            let ack = if ptype != PacketType::ZeroRtt && rx.has_new() { rx.build(now) } else { None };
            let ack_due = ack.is_some() && rx.ack_due(now);
            if let Some(a) = ack {
                let sz = a.wire_size();
                if sz <= avail {
                    avail -= sz;
                    frames.push(Frame::Ack(a));
                }
            }
            ack_due
        };
        let mut retransmit = false;
        if eliciting {
            retransmit = self.fill(space, ptype, &mut frames, &mut avail, path);
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
                retransmit |= self.fill(space, ptype, &mut frames, &mut avail, path);
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
    /// frames, then (1-RTT) the copies queued on the path, then stream data; true if any carries
    /// retransmitted data.
    fn fill(&mut self, space: Space, ptype: PacketType, frames: &mut Vec<Frame>, avail: &mut usize, path: usize) -> bool {
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
                retransmit |= self.fill_streams(frames, avail);
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
    use multiconn_transport::{ConnectionParams, Endpoint, Profile, Role, Workload};

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
}
