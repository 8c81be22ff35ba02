//! MPTCP options on the wire (RFC 8684 §3) and the segment that carries them: a subflow's TCP
//! [`Segment`] plus what its MPTCP options say.
//!
//! Only what the model needs travels: which handshake option a SYN, SYN-ACK or third ACK
//! carries (MP_CAPABLE §3.1, MP_JOIN §3.2), the DATA_ACK with the connection-level receive
//! window (§3.3.2, §3.3.4) and the DSS mapping of the payload (§3.3.1). Keys, tokens, HMACs and
//! nonces are not modelled; their bytes are counted.
//!
//! Sizes follow Linux, which sends 64-bit DATA_ACKs and data sequence numbers and no DSS
//! checksum (`net.mptcp.checksum_enabled = 0`). Options are padded to 4 bytes. SACK blocks get
//! the option space left after the timestamps and MPTCP options (Linux
//! `tcp_established_options`): a data segment with timestamps and a full DSS (28 bytes) has room
//! for none, a pure ACK with timestamps and a DATA_ACK (12 bytes) for one.
//!
//! The TCP window field of a subflow segment carries the connection-level window, relative to
//! the DATA_ACK (§3.3.4). The model keeps that window in [`DataAck::window`] (bytes, already
//! scaled) and sets the field itself so that a subflow's own window check never binds: only the
//! connection-level window limits what is sent. SYN and SYN-ACK windows are the connection's
//! initial window, as on the wire.

use crate::segment::{Segment, IP_HEADER, TCP_HEADER, TIMESTAMPS_OPTION};

/// RFC 8684 §3.1: MP_CAPABLE in a SYN (version 1 carries no key).
pub const MP_CAPABLE_SYN: u32 = 4;
/// MP_CAPABLE in a SYN-ACK: the responder's key.
pub const MP_CAPABLE_SYNACK: u32 = 12;
/// MP_CAPABLE in the third ACK: both keys.
pub const MP_CAPABLE_ACK: u32 = 20;
/// MP_CAPABLE in the third ACK carrying data: both keys and the data-level length.
pub const MP_CAPABLE_ACK_DATA: u32 = 22;
/// RFC 8684 §3.2: MP_JOIN in a SYN (token, nonce, address id).
pub const MP_JOIN_SYN: u32 = 12;
/// MP_JOIN in a SYN-ACK (truncated HMAC, nonce).
pub const MP_JOIN_SYNACK: u32 = 16;
/// MP_JOIN in the third ACK (full HMAC).
pub const MP_JOIN_ACK: u32 = 24;
/// RFC 8684 §3.3: DSS kind, length, subtype and flags.
pub const DSS_BASE: u32 = 4;
/// A 64-bit DATA_ACK.
pub const DSS_DATA_ACK64: u32 = 8;
/// A mapping with a 64-bit data sequence number: DSN, subflow sequence number, data-level
/// length.
pub const DSS_MAPPING64: u32 = 14;
/// The largest DSS option (DATA_ACK and mapping), padded: 28 bytes. Data segments carry it, so
/// the payload of a subflow segment is the TCP MSS minus this.
pub const DSS_FULL: u32 = 28;
/// TCP option space (RFC 9293 §3.1: data offset at most 15 words).
pub const MAX_OPTION_SPACE: u32 = 40;

/// The handshake option a segment carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandshakeOption {
    /// MP_CAPABLE in the initiator's SYN.
    CapableSyn,
    /// MP_CAPABLE in the responder's SYN-ACK.
    CapableSynAck,
    /// The initiator's third ACK of the initial subflow (with data if the segment has a
    /// payload).
    CapableAck,
    /// MP_JOIN in a SYN opening an additional subflow.
    JoinSyn,
    /// MP_JOIN in the SYN-ACK answering it.
    JoinSynAck,
    /// MP_JOIN in the initiator's third ACK.
    JoinAck,
}

impl HandshakeOption {
    /// Bytes of the option, before padding; `with_data` for MP_CAPABLE carrying data.
    pub fn size(self, with_data: bool) -> u32 {
        match self {
            HandshakeOption::CapableSyn => MP_CAPABLE_SYN,
            HandshakeOption::CapableSynAck => MP_CAPABLE_SYNACK,
            HandshakeOption::CapableAck if with_data => MP_CAPABLE_ACK_DATA,
            HandshakeOption::CapableAck => MP_CAPABLE_ACK,
            HandshakeOption::JoinSyn => MP_JOIN_SYN,
            HandshakeOption::JoinSynAck => MP_JOIN_SYNACK,
            HandshakeOption::JoinAck => MP_JOIN_ACK,
        }
    }
}

/// The connection-level acknowledgement: everything below `ack` in the data sequence space has
/// arrived; the receiver accepts data up to `ack + window`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataAck {
    /// Next expected data sequence number.
    pub ack: u64,
    /// Connection-level receive window in bytes, counted from `ack`.
    pub window: u64,
}

/// A DSS mapping: the segment's payload, which starts at subflow sequence number `ssn`, is the
/// data-level bytes `[dsn, dsn + len)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// Data sequence number of the payload's first byte.
    pub dsn: u64,
    /// Subflow sequence number of the payload's first byte.
    pub ssn: u64,
    /// Payload bytes mapped.
    pub len: u32,
}

/// One segment of a subflow with its MPTCP options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MptcpSegment {
    /// The subflow's TCP segment.
    pub tcp: Segment,
    /// MP_CAPABLE or MP_JOIN option, on handshake segments.
    pub handshake: Option<HandshakeOption>,
    /// The DATA_ACK, on every segment without a handshake option.
    pub data_ack: Option<DataAck>,
    /// Present on every segment with a payload (MP_CAPABLE with data implies it on the wire).
    pub mapping: Option<Mapping>,
}

impl MptcpSegment {
    /// Bytes of MPTCP options, padded to 4.
    pub fn mptcp_options_size(&self) -> u32 {
        mptcp_options_size(self.handshake, self.data_ack.is_some(), self.tcp.len > 0)
    }

    /// Bytes on the wire: IP and TCP headers, TCP options, MPTCP options, payload.
    pub fn wire_size(&self) -> u32 {
        IP_HEADER + TCP_HEADER + self.tcp.options_size() + self.mptcp_options_size() + self.tcp.len
    }
}

/// Bytes of the MPTCP options of a segment with the handshake option `hs` (if any), a DATA_ACK
/// (`data_ack`) and a payload (`data`: a DSS mapping, implied by MP_CAPABLE with data), padded.
pub fn mptcp_options_size(hs: Option<HandshakeOption>, data_ack: bool, data: bool) -> u32 {
    let raw = match hs {
        Some(HandshakeOption::CapableAck) => HandshakeOption::CapableAck.size(data),
        Some(h) => {
            let dss = dss_size(data_ack, data);
            h.size(false) + dss
        }
        None => dss_size(data_ack, data),
    };
    raw.next_multiple_of(4)
}

fn dss_size(data_ack: bool, mapping: bool) -> u32 {
    if !data_ack && !mapping {
        return 0;
    }
    DSS_BASE + if data_ack { DSS_DATA_ACK64 } else { 0 } + if mapping { DSS_MAPPING64 } else { 0 }
}

/// SACK blocks that fit beside the timestamps option and `mptcp` bytes of MPTCP options (Linux
/// `tcp_established_options`: 2 bytes of kind and length padded to 4, 8 per block, at most 4).
pub fn sack_blocks_that_fit(timestamps: bool, mptcp: u32) -> usize {
    let used = if timestamps { TIMESTAMPS_OPTION } else { 0 } + mptcp;
    let left = MAX_OPTION_SPACE.saturating_sub(used);
    if left < 4 + 8 {
        return 0;
    }
    (((left - 4) / 8) as usize).min(crate::segment::MAX_SACK_BLOCKS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::{Flags, SackBlocks, Timestamps};

    fn seg(len: u32) -> MptcpSegment {
        MptcpSegment {
            tcp: Segment {
                seq: 1,
                ack: 1,
                flags: Flags { syn: false, ack: true, ..Flags::default() },
                window: 0,
                wscale: None,
                sack_permitted: false,
                mss: None,
                ts: Some(Timestamps::default()),
                sack: SackBlocks::new(),
                len,
                ip_ecn: multiconn_core::Ecn::NotEct,
                packets: 1,
            },
            handshake: None,
            data_ack: Some(DataAck { ack: 0, window: 0 }),
            mapping: (len > 0).then_some(Mapping { dsn: 0, ssn: 1, len }),
        }
    }

    #[test]
    fn a_full_data_segment_fills_the_option_space() {
        // 20 + 20 + 12 (timestamps) + 28 (DSS) + 1420 = 1500.
        assert_eq!(seg(1420).wire_size(), 1500);
        assert_eq!(seg(1420).mptcp_options_size(), DSS_FULL);
        assert_eq!(sack_blocks_that_fit(true, DSS_FULL), 0);
    }

    #[test]
    fn a_pure_ack_has_room_for_one_sack_block() {
        let a = seg(0);
        assert_eq!(a.mptcp_options_size(), 12);
        assert_eq!(a.wire_size(), 40 + 12 + 12);
        assert_eq!(sack_blocks_that_fit(true, 12), 1);
        assert_eq!(sack_blocks_that_fit(false, 12), 3);
        // Plain TCP: 3 blocks with timestamps, 4 without (RFC 2018 §3).
        assert_eq!(sack_blocks_that_fit(true, 0), 3);
        assert_eq!(sack_blocks_that_fit(false, 0), 4);
    }

    #[test]
    fn handshake_options_have_their_rfc_sizes() {
        assert_eq!(mptcp_options_size(Some(HandshakeOption::CapableSyn), false, false), 4);
        assert_eq!(mptcp_options_size(Some(HandshakeOption::CapableSynAck), false, false), 12);
        assert_eq!(mptcp_options_size(Some(HandshakeOption::CapableAck), false, false), 20);
        // 22 bytes with the data-level length, padded to 24; the mapping is implied.
        assert_eq!(mptcp_options_size(Some(HandshakeOption::CapableAck), false, true), 24);
        assert_eq!(mptcp_options_size(Some(HandshakeOption::JoinSyn), false, false), 12);
        assert_eq!(mptcp_options_size(Some(HandshakeOption::JoinSynAck), false, false), 16);
        assert_eq!(mptcp_options_size(Some(HandshakeOption::JoinAck), false, false), 24);
        let mut syn = seg(0);
        syn.tcp.flags.syn = true;
        syn.handshake = Some(HandshakeOption::JoinSynAck);
        syn.data_ack = None;
        // 40 + 20 (MSS, SACK-permitted, timestamps, window scale) + 16.
        assert_eq!(syn.wire_size(), 76);
    }
}
