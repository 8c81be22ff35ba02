//! The frames the model exchanges (RFC 9000 §19) and their exact sizes on the wire.
//!
//! Data is not carried, only its position and length: a STREAM frame says which bytes of which
//! stream it holds. Sizes count the frame type, every field with its varint length (§16) and
//! the data bytes, so packet sizes are those a real encoder would produce. STREAM frames always
//! carry the Length field (type 0x0a–0x0f), and the Offset field when it is not zero (§19.8).
//! The multipath frames follow draft-ietf-quic-multipath-21 §8 (PATH_ACK 0x3e, PATH_ABANDON
//! 0x3e75, PATH_STATUS_BACKUP 0x3e76, PATH_STATUS_AVAILABLE 0x3e77) and name a path by its
//! path ID; PATH_CHALLENGE and PATH_RESPONSE are RFC 9000 §19.17–18. DATAGRAM frames are RFC
//! 9221 §4: type 0x31 with a Length field, 0x30 without (the data then runs to the end of the
//! packet, so it is the packet's last frame).

use crate::ack_ranges::AckFrame;
use crate::varint;
use multiconn_core::Payload;

/// One QUIC frame: its type and the fields that decide its size (see the module header).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// `n` PADDING frames (type 0x00, one byte each).
    Padding(u32),
    /// PING (§19.2, type 0x01): elicits an ACK and carries nothing else.
    Ping,
    /// ACK (§19.3) for the packet number space of the packet carrying it.
    Ack(AckFrame),
    /// CRYPTO (§19.6): TLS handshake bytes of the packet's space.
    Crypto {
        /// Offset in the space's crypto stream, bytes.
        offset: u64,
        /// Data bytes.
        len: u32,
    },
    /// STREAM (§19.8): bytes of one stream.
    Stream {
        /// Stream ID.
        id: u64,
        /// Offset of the first byte in the stream.
        offset: u64,
        /// Data bytes.
        len: u32,
        /// The FIN bit: the stream ends after these bytes.
        fin: bool,
    },
    /// RESET_STREAM (§19.4): the sender abandons stream `id`; `final_size` is where its data
    /// ended. The application error code is 0 (one byte).
    ResetStream {
        /// Stream ID.
        id: u64,
        /// Final size of the stream in bytes.
        final_size: u64,
    },
    /// MAX_DATA (§19.9): the connection-level limit, in bytes, on the data the peer may send.
    MaxData(u64),
    /// MAX_STREAM_DATA (§19.10): a stream's limit on the data the peer may send.
    MaxStreamData {
        /// Stream ID.
        id: u64,
        /// Largest offset the peer may send on it, in bytes.
        max: u64,
    },
    /// HANDSHAKE_DONE (§19.20): the server confirms the handshake.
    HandshakeDone,
    /// An ACK for the packet number space of path ID `path` (multipath).
    PathAck {
        /// Path ID whose packets are acknowledged.
        path: u32,
        /// The ACK frame's fields.
        ack: AckFrame,
    },
    /// 8 bytes of challenge data (path validation).
    PathChallenge,
    /// PATH_RESPONSE: the 8 bytes of a PATH_CHALLENGE echoed.
    PathResponse,
    /// The sender stops using path ID `path` (multipath).
    PathAbandon {
        /// Path ID abandoned.
        path: u32,
    },
    /// PATH_STATUS_BACKUP (`backup`) or PATH_STATUS_AVAILABLE for path ID `path`; `seq` orders
    /// the status frames of one path (draft §3.3: only a greater one counts).
    PathStatus {
        /// Path ID the status is for.
        path: u32,
        /// Backup (PATH_STATUS_BACKUP) rather than available.
        backup: bool,
        /// Status sequence number.
        seq: u64,
    },
    /// DATAGRAM (RFC 9221 §4): `len` bytes of one application datagram, never retransmitted.
    /// `tag` names the datagram for the model (the sending application's number for it; no
    /// byte of it is on the wire, as a STREAM frame's offset names its data).
    Datagram {
        /// The application's tag for the datagram.
        tag: u64,
        /// Data bytes.
        len: u32,
        /// Type 0x31, with the Length field; false: type 0x30, the packet's last frame.
        with_len: bool,
        /// The datagram's bytes when the application gave them (a tunnel's datagram carries
        /// another flow's packet); shared, not copied, by a redundant scheduler's copies.
        content: Option<Payload>,
    },
}

impl Frame {
    /// Bytes on the wire.
    pub fn wire_size(&self) -> usize {
        match self {
            Frame::Padding(n) => *n as usize,
            Frame::Ping | Frame::HandshakeDone => 1,
            Frame::Ack(a) => a.wire_size(),
            Frame::Crypto { offset, len } => crypto_overhead(*offset, *len as u64) + *len as usize,
            Frame::Stream { id, offset, len, .. } => stream_overhead(*id, *offset, *len as u64) + *len as usize,
            Frame::ResetStream { id, final_size } => 1 + varint::len(*id) + 1 + varint::len(*final_size),
            Frame::MaxData(v) => 1 + varint::len(*v),
            Frame::MaxStreamData { id, max } => 1 + varint::len(*id) + varint::len(*max),
            // PATH_ACK is an ACK frame with a Path ID after the type (0x3e: one byte).
            Frame::PathAck { path, ack } => ack.wire_size() + varint::len(u64::from(*path)),
            Frame::PathChallenge | Frame::PathResponse => 1 + 8,
            // Type 0x3e75 (two bytes), Path ID, Error Code (NO_ERROR: one byte).
            Frame::PathAbandon { path } => 2 + varint::len(u64::from(*path)) + 1,
            // Type 0x3e76 / 0x3e77 (two bytes), Path ID, Path Status Sequence Number.
            Frame::PathStatus { path, seq, .. } => 2 + varint::len(u64::from(*path)) + varint::len(*seq),
            Frame::Datagram { len, with_len, .. } => datagram_overhead(u64::from(*len), *with_len) + *len as usize,
        }
    }

    /// Everything except ACK and PADDING elicits an acknowledgement (RFC 9000 §13.2).
    pub fn is_ack_eliciting(&self) -> bool {
        !matches!(self, Frame::Padding(_) | Frame::Ack(_) | Frame::PathAck { .. })
    }

    /// The qlog frame_type name.
    pub fn qlog_name(&self) -> &'static str {
        match self {
            Frame::Padding(_) => "padding",
            Frame::Ping => "ping",
            Frame::Ack(_) => "ack",
            Frame::Crypto { .. } => "crypto",
            Frame::Stream { .. } => "stream",
            Frame::ResetStream { .. } => "reset_stream",
            Frame::MaxData(_) => "max_data",
            Frame::MaxStreamData { .. } => "max_stream_data",
            Frame::HandshakeDone => "handshake_done",
            Frame::PathAck { .. } => "path_ack",
            Frame::PathChallenge => "path_challenge",
            Frame::PathResponse => "path_response",
            Frame::PathAbandon { .. } => "path_abandon",
            Frame::PathStatus { backup: true, .. } => "path_status_backup",
            Frame::PathStatus { backup: false, .. } => "path_status_available",
            Frame::Datagram { .. } => "datagram",
        }
    }
}

/// STREAM frame bytes other than data: type, Stream ID, Offset (if non-zero), Length.
#[inline]
pub fn stream_overhead(id: u64, offset: u64, len: u64) -> usize {
    1 + varint::len(id) + if offset > 0 { varint::len(offset) } else { 0 } + varint::len(len)
}

/// CRYPTO frame bytes other than data: type, Offset, Length.
#[inline]
pub fn crypto_overhead(offset: u64, len: u64) -> usize {
    1 + varint::len(offset) + varint::len(len)
}

/// DATAGRAM frame bytes other than data (RFC 9221 §4): the type (0x30 or 0x31, one byte) and,
/// with `with_len`, the Length field.
#[inline]
pub fn datagram_overhead(len: u64, with_len: bool) -> usize {
    1 + if with_len { varint::len(len) } else { 0 }
}

/// The most data bytes a DATAGRAM frame carries in a packet with `room` bytes left for frames:
/// type 0x30 (no Length) when it is the packet's last frame, else type 0x31 with the Length
/// field. `None` when not even an empty frame fits.
pub fn max_datagram_data(room: usize, last: bool) -> Option<u64> {
    if last {
        return room.checked_sub(1).map(|n| n as u64);
    }
    fit_data(room, room as u64, |l| datagram_overhead(l, true))
}

/// The largest data length `n ≤ want` such that a frame with `overhead(n)` plus `n` bytes fits
/// in `room` bytes; `None` if not even an empty frame fits.
pub fn fit_data(room: usize, want: u64, overhead: impl Fn(u64) -> usize) -> Option<u64> {
    let mut n = want.min(room as u64);
    loop {
        let total = overhead(n) + n as usize;
        if total <= room {
            break;
        }
        if n == 0 {
            return None;
        }
        n = n.saturating_sub((total - room) as u64);
    }
    // Shrinking may have shortened the Length field: take back the byte it freed.
    while n < want && overhead(n + 1) + (n as usize) < room {
        n += 1;
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_frame_sizes_use_varint_lengths() {
        let f = Frame::Stream { id: 0, offset: 0, len: 1000, fin: false };
        assert_eq!(f.wire_size(), 1 + 1 + 2 + 1000);
        let f = Frame::Stream { id: 4, offset: 20_000, len: 1200, fin: true };
        assert_eq!(f.wire_size(), 1 + 1 + 4 + 2 + 1200);
        assert_eq!(Frame::MaxData(16 << 20).wire_size(), 1 + 4);
        // type, Stream ID 7 (1 byte), error code 0 (1), final size 1200 (2)
        assert_eq!(Frame::ResetStream { id: 7, final_size: 1200 }.wire_size(), 1 + 1 + 1 + 2);
    }

    /// RFC 9221 §4 sizes. A 1200-byte UDP payload with a 1-RTT short header (1 byte, an 8-byte
    /// DCID, a 2-byte packet number) and the 16-byte AEAD tag leaves 1173 bytes for frames: a
    /// type-0x30 frame carries 1172 bytes of data, a type-0x31 frame with its 2-byte Length 1170.
    #[test]
    fn datagram_frames_fill_a_1200_byte_packet_per_rfc_9221() {
        use crate::packet::{header_size, PacketType, AEAD_TAG};
        let room = 1200 - header_size(PacketType::OneRtt, 8, 8, 2, 0) - AEAD_TAG;
        assert_eq!(room, 1173);
        assert_eq!(max_datagram_data(room, true), Some(1172));
        assert_eq!(max_datagram_data(room, false), Some(1170));
        assert_eq!(Frame::Datagram { tag: 0, len: 1172, with_len: false, content: None }.wire_size(), room);
        assert_eq!(Frame::Datagram { tag: 0, len: 1170, with_len: true, content: None }.wire_size(), room);
        // One more byte does not fit in either form.
        assert_eq!(Frame::Datagram { tag: 0, len: 1171, with_len: true, content: None }.wire_size(), room + 1);
        // Length fields are varints: 63 bytes take one, 64 take two.
        assert_eq!(Frame::Datagram { tag: 9, len: 63, with_len: true, content: None }.wire_size(), 1 + 1 + 63);
        assert_eq!(Frame::Datagram { tag: 9, len: 64, with_len: true, content: None }.wire_size(), 1 + 2 + 64);
        assert_eq!(Frame::Datagram { tag: 9, len: 64, with_len: false, content: None }.wire_size(), 1 + 64);
        assert!(Frame::Datagram { tag: 9, len: 0, with_len: false, content: None }.is_ack_eliciting());
        assert_eq!(max_datagram_data(0, true), None);
        assert_eq!(max_datagram_data(1, false), None);
        assert_eq!(max_datagram_data(2, false), Some(0));
    }

    #[test]
    fn fit_data_fills_the_room_exactly() {
        for room in 3..3000usize {
            let Some(n) = fit_data(room, 1 << 20, |len| stream_overhead(8, 70_000, len)) else {
                assert!(stream_overhead(8, 70_000, 0) > room);
                continue;
            };
            let used = stream_overhead(8, 70_000, n) + n as usize;
            assert!(used <= room);
            // one more byte would not fit
            assert!(stream_overhead(8, 70_000, n + 1) + n as usize + 1 > room, "room {room} n {n}");
        }
    }
}
