//! Streams an application opens itself (RFC 9000 §2: QUIC's unidirectional streams), as the
//! message workload ([`crate::messages`]) uses them: what it asks of the transport
//! ([`OpenStreams`]), how a stream is to be sent ([`StreamOptions`]), what the receiving
//! application is told ([`StreamProgress`]) and why a call is refused ([`AppError`]).
//!
//! The simulator's transports implement [`OpenStreams`] through their `Endpoint`; a real QUIC
//! library driven in virtual time implements it over its own stream API, and the message
//! workload runs over either unchanged.

use multiconn_core::Time;

use crate::datagrams::DatagramOptions;

/// How the application wants a stream it opens to be sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamOptions {
    /// Packing order: streams of a lower level go first; round-robin within a level.
    pub priority: u8,
    /// A priority stream in the sense of seed 004 §6.3 (V2X messages): with the multipath
    /// option `priority_ignores_cwnd`, its data is not held back by a path's congestion window.
    pub urgent: bool,
    /// Multipath: the selective redundant scheduler sends this stream's data on every usable
    /// path.
    pub redundant: bool,
}

/// The receiving application got stream `stream` in order up to byte `delivered` at `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamProgress {
    /// The stream's id.
    pub stream: u64,
    /// Bytes of the stream handed to the application in order so far (the offset reached).
    pub delivered: u64,
    /// When they were handed over.
    pub at: Time,
    /// The peer reset the stream (RFC 9000 §3.2): nothing more of it arrives and the bytes
    /// beyond `delivered` are gone.
    pub reset: bool,
}

/// Why an application call on an endpoint was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AppError {
    /// The transport has no application-opened streams (only QUIC carries the message
    /// workload).
    #[error("this transport has no application-opened streams (only quic carries the messages workload)")]
    Unsupported,
    /// The stream with this id was not opened by this endpoint.
    #[error("stream {0} is not a stream this endpoint opened")]
    UnknownStream(u64),
    /// The stream with this id was finished: nothing more can be written on it.
    #[error("stream {0} was finished; nothing more can be written on it")]
    Finished(u64),
    /// This end or its peer does not take DATAGRAM frames (RFC 9221 §3: the transport parameter
    /// max_datagram_frame_size was not sent).
    #[error("datagrams are not supported on this connection (max_datagram_frame_size was not advertised)")]
    DatagramsUnsupported,
    /// The datagram does not fit in one packet, or exceeds the peer's max_datagram_frame_size
    /// (RFC 9221 §5): it is refused, not split.
    #[error("a datagram of {size} B does not fit: at most {max} B")]
    DatagramTooLarge {
        /// The datagram's size, bytes.
        size: u64,
        /// The largest datagram the connection sends now, bytes.
        max: u64,
    },
}

/// What an application that opens its own streams asks of the transport at its end.
pub trait OpenStreams {
    /// Opens a unidirectional stream to the peer and returns its id (QUIC: 3, 7, 11, ...
    /// from the server; 2, 6, 10, ... from the client, RFC 9000 §2.1).
    fn open_stream(&mut self, options: StreamOptions) -> Result<u64, AppError>;
    /// Writes `bytes` more on `stream`, which this end opened.
    fn write(&mut self, stream: u64, bytes: u64) -> Result<(), AppError>;
    /// No more writes on `stream` (a FIN follows).
    fn finish(&mut self, stream: u64) -> Result<(), AppError>;
    /// Abandons `stream` (QUIC: RESET_STREAM, RFC 9000 §3.1): what was not acknowledged is
    /// never sent again. `Ok(false)` when nothing was left to abandon (all acknowledged, or
    /// reset before).
    fn reset_stream(&mut self, stream: u64) -> Result<bool, AppError>;
    /// Queues datagram `tag` of `bytes` bytes for the peer (QUIC: a DATAGRAM frame, RFC
    /// 9221); refused when the connection has no datagrams or it does not fit in one packet.
    fn send_datagram(&mut self, _tag: u64, _bytes: u64, _options: DatagramOptions) -> Result<(), AppError> {
        Err(AppError::Unsupported)
    }
}
