//! Datagrams an application sends itself (RFC 9221: QUIC's unreliable DATAGRAM frames), as the
//! message workload ([`crate::messages`]) uses them for a source with `datagram` set: what it
//! asks of the transport ([`OpenStreams::send_datagram`](crate::streams::OpenStreams::send_datagram)),
//! how a datagram is to be sent ([`DatagramOptions`]) and what the two applications are told of
//! it afterwards ([`DatagramEvent`]).
//!
//! A datagram is never retransmitted (RFC 9221 §5): the sender's transport reports it
//! acknowledged, or lost when the packet that carried it (every copy, with a redundant
//! multipath scheduler) is declared lost, or dropped when it waited in the send buffer until
//! newer datagrams pushed it out; the receiver's transport hands each one over once. The model
//! carries no bytes, so a datagram is named by a `tag` the sending application chooses (a real
//! application would number its payloads).

use multiconn_core::{Payload, Time};

/// How the application wants a datagram sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DatagramOptions {
    /// Multipath: the redundant schedulers copy it onto every usable path (as a redundant
    /// stream's data).
    pub redundant: bool,
    /// A priority datagram in the sense of seed 004 §6.3, like an urgent stream's data.
    pub urgent: bool,
}

/// What became of a datagram, as told to the application at one end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DatagramEvent {
    /// Receiver: the datagram `tag` arrived and was handed over at `at` (a second copy is not).
    Received {
        /// The sender's tag.
        tag: u64,
        /// When the receiving application got it.
        at: Time,
        /// Its bytes, when the sender gave them (a tunnel's datagram carries a packet).
        content: Option<Payload>,
    },
    /// Sender: a packet carrying datagram `tag` was acknowledged (the peer's transport has it).
    Acked {
        /// The datagram's tag.
        tag: u64,
    },
    /// Sender: every packet carrying datagram `tag` was declared lost; it is not sent again.
    Lost {
        /// The datagram's tag.
        tag: u64,
    },
    /// Sender: datagram `tag` waited in the send buffer until newer ones pushed it out; it
    /// never went on the wire.
    Dropped {
        /// The datagram's tag.
        tag: u64,
    },
}
