//! The packet passed between hosts, links and transports.
//!
//! A packet carries only what the network needs to move and account for it: a run-unique id,
//! the flow it belongs to, its size on the wire, a per-flow sequence number and its creation
//! time. A transport attaches what its peer must read (frames, segment header) as an opaque
//! [`Payload`]; links never look inside it.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use crate::time::Time;
use crate::wire::WireHeader;

/// IPv4 (20 B) + UDP (8 B) header bytes carried by every datagram (RFC 791, RFC 768).
pub const IP_UDP_OVERHEAD: u32 = 28;

/// What a transport endpoint put inside a packet for its peer, shared (not copied) when a
/// packet is duplicated. Equality is identity: two payloads are equal if they are the same
/// allocation.
///
/// A payload made with [`Payload::with_header`] also answers [`WireHeader`]: a capture asks
/// it for its transport header ([`Payload::wire_header`]) without naming its type. The
/// capability costs nothing per packet but one function pointer beside the value in the
/// same allocation: the handle stays one fat pointer and [`Payload::get`] one downcast.
#[derive(Clone)]
pub struct Payload(Arc<Shared<dyn Any + Send + Sync>>);

/// Turns the payload's value back into its [`WireHeader`] (set by [`Payload::with_header`]).
type HeaderOf = for<'a> fn(&'a (dyn Any + Send + Sync)) -> Option<&'a dyn WireHeader>;

/// The allocation behind a [`Payload`]: the value and, if its type writes a header, how to
/// reach that capability.
struct Shared<T: ?Sized> {
    header: Option<HeaderOf>,
    value: T,
}

fn header_of<T: WireHeader + Any + Send + Sync>(value: &(dyn Any + Send + Sync)) -> Option<&dyn WireHeader> {
    value.downcast_ref::<T>().map(|v| v as &dyn WireHeader)
}

impl Payload {
    /// Wraps `value` for a packet; a capture shows it under a plain UDP header.
    pub fn new<T: Any + Send + Sync>(value: T) -> Payload {
        Payload(Arc::new(Shared { header: None, value }))
    }
    /// Wraps `value` for a packet whose transport header on the wire `value` writes.
    pub fn with_header<T: WireHeader + Any + Send + Sync>(value: T) -> Payload {
        Payload(Arc::new(Shared { header: Some(header_of::<T> as HeaderOf), value }))
    }
    /// The content, if it is a `T`.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0.value.downcast_ref::<T>()
    }
    /// The content's transport header, if it was wrapped with [`Payload::with_header`].
    pub fn wire_header(&self) -> Option<&dyn WireHeader> {
        self.0.header.and_then(|of| of(&self.0.value))
    }
}

impl PartialEq for Payload {
    fn eq(&self, other: &Payload) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
impl Eq for Payload {}

impl fmt::Debug for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Payload(..)")
    }
}

/// Index of a flow in its scenario (order of declaration).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId(pub u32);

/// Index of one direction of one link in its scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub u32);

/// Index of a split bearer in its network: one flow's path crossing one split, numbered in
/// the order of the flows, then of their paths, then of the hops of each path's forward route.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BearerId(pub u32);

/// A packet as it crosses the network: who sent it, its size on the wire, where it is on its
/// route, and what the sending endpoint put in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Unique within a run, in order of creation.
    pub id: u64,
    /// The flow it belongs to.
    pub flow: FlowId,
    /// Bytes on the wire, headers included.
    pub size: u32,
    /// Per-flow sequence number assigned by the sender.
    pub seq: u64,
    /// When the sender created it.
    pub created: Time,
    /// How many links of its route it has crossed so far.
    pub hop: u16,
    /// Which of its flow's routes it follows (0: the flow's own route from `from` to `to`;
    /// 1: the reverse route, for ACKs and requests). Set by the simulator, not by transports.
    pub route: u16,
    /// Sequence number a lower-layer entity the packet is crossing stamped on it (a PDCP
    /// split bearer's SN); meaningful only between that entity's two sides.
    pub lower_sn: u32,
    /// Which of its flow's paths it takes (a multipath transport's path ID, set by the sending
    /// endpoint; 0 for single-path flows). The simulator routes it over that path's route.
    pub path: u8,
    /// The ECN field of its IP header (RFC 3168 §5): set by the sending transport, changed
    /// to CE by an AQM queue that marks instead of dropping.
    pub ecn: Ecn,
    /// Transport content for the receiving endpoint; `None` for plain UDP traffic.
    pub payload: Option<Payload>,
}

impl Packet {
    /// A packet at its first hop on route 0, without transport content.
    pub fn new(id: u64, flow: FlowId, size: u32, seq: u64, created: Time) -> Packet {
        Packet { id, flow, size, seq, created, hop: 0, route: 0, lower_sn: 0, path: 0, ecn: Ecn::NotEct, payload: None }
    }

    /// The same packet with the ECN field `ecn`.
    pub fn with_ecn(mut self, ecn: Ecn) -> Packet {
        self.ecn = ecn;
        self
    }

    /// The same packet carrying `payload`.
    pub fn with_payload(mut self, payload: Payload) -> Packet {
        self.payload = Some(payload);
        self
    }
}

/// The two-bit ECN field of the IP header (RFC 3168 §5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Ecn {
    /// `00`: the transport does not support ECN; a congested queue drops the packet.
    #[default]
    NotEct,
    /// `10`: ECN-Capable Transport, codepoint ECT(0).
    Ect0,
    /// `01`: ECN-Capable Transport, codepoint ECT(1).
    Ect1,
    /// `11`: Congestion Experienced, set by a queue that marks instead of dropping.
    Ce,
}

impl Ecn {
    /// Whether a queue may mark the packet instead of dropping it (ECT(0), ECT(1) or already
    /// CE, RFC 3168 §5).
    pub fn is_capable(self) -> bool {
        self != Ecn::NotEct
    }

    /// The field's two bits as in the IP header (RFC 3168 §5).
    pub fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0b00,
            Ecn::Ect1 => 0b01,
            Ecn::Ect0 => 0b10,
            Ecn::Ce => 0b11,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Ends, PROTO_UDP};

    /// A payload that writes one byte as its header.
    struct Tagged(u8);

    impl WireHeader for Tagged {
        fn protocol(&self) -> u8 {
            PROTO_UDP
        }
        fn write_header(&self, buf: &mut Vec<u8>, _size: u32, _ends: &Ends) -> Option<String> {
            buf.push(self.0);
            Some(format!("tag {}", self.0))
        }
    }

    #[test]
    fn a_payload_gives_back_its_value_and_only_a_header_it_was_given() {
        let ends = Ends { src: [0; 4], dst: [0; 4], sport: 1, dport: 2, ttl: 64, id: 0, ecn: 0 };
        let plain = Payload::new(Tagged(3));
        assert_eq!(plain.get::<Tagged>().map(|t| t.0), Some(3));
        assert!(plain.get::<u8>().is_none());
        assert!(plain.wire_header().is_none());

        let tagged = Payload::with_header(Tagged(5));
        assert_eq!(tagged.get::<Tagged>().map(|t| t.0), Some(5));
        let header = tagged.wire_header().expect("made with its header");
        let mut buf = vec![0xaa];
        assert_eq!(header.protocol(), PROTO_UDP);
        assert_eq!(header.write_header(&mut buf, 100, &ends).as_deref(), Some("tag 5"));
        assert_eq!(buf, [0xaa, 5]);
        assert_eq!(tagged.clone(), tagged);
        assert_ne!(Payload::with_header(Tagged(5)), tagged);
    }

    #[test]
    fn a_payload_in_a_packet_is_one_fat_pointer() {
        assert_eq!(std::mem::size_of::<Payload>(), 2 * std::mem::size_of::<usize>());
        assert_eq!(std::mem::size_of::<Option<Payload>>(), 2 * std::mem::size_of::<usize>());
    }
}
