//! The receive side of a connection (RFC 9000): datagrams in, their packets checked against
//! the keys this end holds and its ACK state (duplicates are dropped), and their frames acted
//! on.
//!
//! * A server takes a Handshake packet as proof of the client's address (§8.1) and drops its
//!   Initial keys (RFC 9001 §4.9.1); this end drops the Initial and Handshake keys once it
//!   has confirmed the handshake (RFC 9001 §4.1.2, §4.9.2).
//! * STREAM and RESET_STREAM frames are taken only on streams the peer may send on (§2.1),
//!   within stream and connection flow control (§4); a RESET_STREAM discards what was not
//!   delivered and counts its bytes up to the final size as consumed (§3.2, §4.5).
//! * ACK frames go to loss recovery (RFC 9002), path frames to the multipath half
//!   (draft-ietf-quic-multipath-21), DATAGRAM frames (RFC 9221, 0-RTT and 1-RTT packets only)
//!   to the datagram state, which learns the peer's transport parameters with the handshake.

use multiconn_core::{Dur, Ecn, Packet, Time};
use multiconn_transport::{AppEvent, Observation, Role, StreamProgress};

use super::Connection;
use crate::frame::Frame;
use crate::handshake::HandshakeEvent;
use crate::packet::{Datagram, PacketType, QuicPacket, Space, IP_UDP_OVERHEAD};
use crate::streams;

impl Connection {
    pub(super) fn on_datagram(&mut self, now: Time, pkt: &Packet) {
        let Some(payload) = pkt.payload.as_ref() else {
            self.stats.undecryptable += 1;
            return;
        };
        let Some(dg) = payload.get::<Datagram>() else {
            self.stats.undecryptable += 1;
            return;
        };
        let path = usize::from(pkt.path);
        if path >= self.paths.len() {
            // No such path: nothing to decrypt it with.
            self.stats.undecryptable += 1;
            return;
        }
        if !self.accept_path_id(now, path, dg.path_id) {
            // A late packet of a path ID this end has replaced: its CIDs are retired.
            self.stats.undecryptable += 1;
            return;
        }
        self.stats.datagrams_received += 1;
        let bytes = pkt.size.saturating_sub(IP_UDP_OVERHEAD) as u64;
        self.stats.bytes_received += bytes;
        if let Some(mp) = &mut self.mp {
            let state = &mut self.paths[path];
            state.counters.packets_received += 1;
            state.counters.bytes_received += bytes;
            mp.health.on_packet_received(path, now);
            mp.sync_coupling(path, state);
        }
        self.stats.ce_datagrams_received += u64::from(pkt.ecn == Ecn::Ce);
        for p in dg.packets() {
            self.on_packet(now, p, path, pkt.ecn);
        }
        self.update_amplification(now);
    }

    fn keys_for_receiving(&self, ptype: PacketType) -> bool {
        match ptype {
            PacketType::Initial => !self.handshake_path().recovery.is_discarded(Space::Initial),
            PacketType::Handshake => self.hs.has_handshake_keys() && !self.handshake_path().recovery.is_discarded(Space::Handshake),
            PacketType::ZeroRtt => self.role == Role::Server && self.hs.has_zero_rtt_keys(),
            PacketType::OneRtt => match self.role {
                Role::Client => self.hs.has_one_rtt_keys(),
                Role::Server => self.hs.is_complete(),
            },
        }
    }

    fn on_packet(&mut self, now: Time, p: &QuicPacket, path: usize, ecn: Ecn) {
        if !self.keys_for_receiving(p.ptype) || path > 0 && p.ptype != PacketType::OneRtt {
            self.stats.undecryptable += 1;
            return;
        }
        let space = p.ptype.space();
        let rx = self.ack_state_mut(space, path);
        if !rx.on_packet(now, p.pn, p.is_ack_eliciting()) {
            self.stats.duplicates += 1;
            return;
        }
        rx.on_ecn(ecn);
        self.stats.packets_received += 1;
        if let Some(q) = &mut self.qlog {
            q.packet_received(now, p);
        }
        if self.role == Role::Server && p.ptype == PacketType::Handshake {
            // RFC 9000 §8.1: a Handshake packet proves the address; RFC 9001 §4.9.1.
            self.address_validated = true;
            self.discard(now, Space::Initial);
        }
        for f in &p.frames {
            self.on_frame(now, space, f, path);
        }
    }

    fn on_frame(&mut self, now: Time, space: Space, f: &Frame, path: usize) {
        match f {
            Frame::Padding(_) | Frame::Ping => {}
            Frame::Ack(a) => {
                if a.ranges().any(|r| r.is_err()) {
                    self.stats.invalid_frames += 1;
                    return;
                }
                let mut out = std::mem::take(&mut self.outcome);
                out.clear();
                // ACK frames are the handshake path's (the multipath sender sends PATH_ACKs).
                let rec = &mut self.handshake_path_mut().recovery;
                let before = rec.stats().invalid_acks;
                rec.on_ack_received(now, space, a.ranges().map_while(Result::ok), a.delay(), a.ecn, &mut out);
                if rec.stats().invalid_acks != before {
                    self.stats.invalid_frames += 1;
                }
                self.apply_outcome(now, &out);
                self.outcome = out;
            }
            Frame::Crypto { offset, len } => {
                let mut evs = std::mem::take(&mut self.hs_events);
                evs.clear();
                self.hs.on_crypto(space, *offset, *len as u64, &mut evs);
                for ev in &evs {
                    self.on_handshake_event(now, *ev);
                }
                self.hs_events = evs;
            }
            Frame::Stream { id, offset, len, fin } => self.on_stream_frame(now, *id, *offset, *len as u64, *fin),
            Frame::ResetStream { id, final_size } => self.on_reset_stream(now, *id, *final_size),
            Frame::MaxData(v) => {
                if self.conn_send.raise(*v) {
                    self.streams.unblock_connection();
                }
            }
            Frame::MaxStreamData { id, max } => {
                if let Some(s) = self.streams.get_mut(*id) {
                    if s.send_credit.raise(*max) {
                        self.streams.schedule(*id);
                    }
                }
            }
            Frame::HandshakeDone => {
                if space == Space::Data && self.hs.on_handshake_done() {
                    self.on_handshake_confirmed(now);
                }
            }
            Frame::PathAck { path: acked, ack } => self.on_path_ack(now, *acked, ack),
            Frame::PathChallenge => self.on_path_challenge(path),
            Frame::PathResponse => self.on_path_response(path),
            Frame::PathAbandon { path: gone } => self.on_path_abandon_frame(now, *gone),
            Frame::PathStatus { path: id, backup, seq } => self.on_path_status_frame(*id, *backup, *seq),
            Frame::Datagram { tag, len, content, .. } if space == Space::Data => {
                if self.dgram.on_received(now, *tag, f.wire_size(), content.as_ref()) {
                    self.observations.note(Observation::DatagramDelivered { tag: *tag });
                    // Application bytes delivered, as a stream's are (goodput counts them).
                    self.events.push_back(AppEvent::Delivered { bytes: u64::from(*len) });
                }
            }
            Frame::Datagram { .. } => self.stats.invalid_frames += 1,
        }
    }

    fn on_handshake_event(&mut self, now: Time, ev: HandshakeEvent) {
        match ev {
            HandshakeEvent::HandshakeKeys => {
                // The server has the client's transport parameters (in its ClientHello).
                if self.role == Role::Server {
                    self.dgram.on_peer_parameters();
                }
                self.handshake_path_mut().recovery.set_has_handshake_keys();
            }
            HandshakeEvent::OneRttKeys => self.app_can_send(),
            HandshakeEvent::Complete => {
                // The client has the server's (in EncryptedExtensions).
                self.dgram.on_peer_parameters();
                if self.role == Role::Server {
                    self.handshake_done_pending = true;
                    self.on_handshake_confirmed(now);
                }
            }
        }
    }

    /// This end confirmed the handshake (RFC 9001 §4.1.2: the server when it completes, the
    /// client on HANDSHAKE_DONE): the Initial and Handshake keys go (§4.9.2) and, with
    /// multipath, the other paths open.
    fn on_handshake_confirmed(&mut self, now: Time) {
        self.handshake_path_mut().recovery.set_handshake_confirmed(now);
        self.discard(now, Space::Initial);
        self.discard(now, Space::Handshake);
        self.start_multipath(now);
    }

    /// Whether a STREAM or RESET_STREAM frame for stream `id` is taken. Only the peer opens
    /// streams by sending on them (RFC 9000 §2.1: bit 0 names the initiator), and nobody
    /// receives on a unidirectional stream it opened. A late frame for a finished stream is
    /// ignored; a frame for a stream this end never opened is counted invalid.
    fn takes_peer_stream_frame(&mut self, id: u64) -> bool {
        let exists = self.streams.get(id).is_some();
        let opened_here = streams::is_server_initiated(id) == (self.role == Role::Server);
        let receivable = !(opened_here && streams::is_unidirectional(id));
        if !receivable || (!exists && (opened_here || self.streams.is_closed(id))) {
            if !self.streams.is_closed(id) {
                self.stats.invalid_frames += 1;
            }
            return false;
        }
        true
    }

    /// The first path's minimum RTT, which picoquic's flow-control growth reads
    /// (`picoquic_cc_increased_window`); `None` before a sample.
    fn flow_control_rtt_min(&self) -> Option<Dur> {
        let rtt = self.handshake_path().recovery.rtt();
        rtt.has_sample().then(|| rtt.min())
    }

    fn on_stream_frame(&mut self, now: Time, id: u64, offset: u64, len: u64, fin: bool) {
        if !self.takes_peer_stream_frame(id) {
            return;
        }
        let rtt_min = self.flow_control_rtt_min();
        let conn_received = self.conn_recv.received;
        let Some(s) = self.streams.get_or_open(id) else {
            self.stats.invalid_frames += 1;
            return;
        };
        let end = offset.saturating_add(len);
        let before = s.recv.highest();
        let grow = end.saturating_sub(before);
        if !s.recv_window.on_received(end) || !self.conn_recv.on_received(conn_received + grow) {
            self.stats.invalid_frames += 1;
            return;
        }
        if self.conn_recv.picoquic_grow(self.conn_recv.received, rtt_min).is_some() {
            self.max_data_pending = true;
        }
        let delivered = s.recv.on_data(offset, len, fin);
        let mut msd = None;
        if delivered > 0 && s.recv.final_size().is_none() {
            msd = s.recv_window.on_consumed(delivered).or_else(|| s.recv_window.picoquic_grow(s.recv_window.consumed, rtt_min));
        } else if delivered > 0 {
            s.recv_window.consumed += delivered;
        }
        if msd.is_some() && !s.max_stream_data_pending {
            s.max_stream_data_pending = true;
            self.msd_pending.push(id);
        }
        let complete = s.recv.is_complete() && !s.recv_reported;
        if complete {
            s.recv_reported = true;
        }
        if delivered > 0 {
            let to = s.recv.delivered();
            self.observations.note(Observation::Delivered { stream: id, from: to - delivered, to });
        }
        if delivered > 0 && streams::is_unidirectional(id) {
            self.progress.push(StreamProgress { stream: id, delivered: s.recv.delivered(), at: now, reset: false });
        }
        if delivered > 0 {
            self.stats.delivered += delivered;
            self.events.push_back(AppEvent::Delivered { bytes: delivered });
            if self.conn_recv.on_consumed(delivered).is_some() {
                self.max_data_pending = true;
            }
        }
        if complete {
            self.on_stream_received(id);
        }
    }

    /// RESET_STREAM from the peer (RFC 9000 §3.2, §19.4): unless all of the stream's data was
    /// already delivered ("Data Recvd": the reset changes nothing), what has not been
    /// delivered is discarded, the stream is closed (later STREAM frames for it are ignored)
    /// and its bytes up to the final size count as consumed for connection flow control
    /// (§4.5). A final size below what arrived, or other than a FIN's, is invalid.
    fn on_reset_stream(&mut self, now: Time, id: u64, final_size: u64) {
        if !self.takes_peer_stream_frame(id) {
            return;
        }
        let conn_received = self.conn_recv.received;
        let Some(s) = self.streams.get_or_open(id) else {
            self.stats.invalid_frames += 1;
            return;
        };
        if s.recv.is_complete() {
            return;
        }
        if final_size < s.recv.highest() || s.recv.final_size().is_some_and(|f| f != final_size) {
            self.stats.invalid_frames += 1;
            return;
        }
        let grow = final_size - s.recv.highest();
        if !s.recv_window.on_received(final_size) || !self.conn_recv.on_received(conn_received + grow) {
            self.stats.invalid_frames += 1;
            return;
        }
        let delivered = s.recv.delivered();
        let unread = final_size - delivered;
        self.streams.close(id);
        self.stats.resets_received += 1;
        if unread > 0 && self.conn_recv.on_consumed(unread).is_some() {
            self.max_data_pending = true;
        }
        if streams::is_unidirectional(id) {
            self.progress.push(StreamProgress { stream: id, delivered, at: now, reset: true });
        }
    }
}
