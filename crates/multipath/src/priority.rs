//! Stream priorities when packing one packet: which streams' data goes in, in what order and
//! how much (seed 004 §6.3 "Priority stream" and §6.4, the MPQUIC packet packer).
//!
//! Priority streams are always packed first; the other streams are served round-robin, so no
//! background stream starves another. Generalised to urgency levels: streams are grouped by
//! (priority flag, urgency) — priority streams before all others, then lower urgency first, as
//! in `multiconn-quic`'s stream scheduler and RFC 9218 — and each group is served round-robin
//! starting after the stream that was served last in that group (quic-go's
//! `RoundRobinIterate`, on which mp-quic and the seed's packer are built). Each stream put into
//! the packet costs `frame_overhead` bytes of STREAM-frame header plus its data.
//!
//! The scheduler ([`crate::scheduler`]) chooses the path from the packet's [`Content`]
//! ([`content_of`] on a [`StreamPacker::preview`]); the packet then carries the chunks of
//! [`StreamPacker::pack`], and each duplicate carries [`copy_part`] of them. When the
//! scheduler option `priority_ignores_cwnd` put the packet on a path whose window is full, pack
//! it with [`PackFilter::priority_only`]: only priority data may bypass the window (seed 004
//! §8.1.4).

use std::collections::BTreeMap;

use crate::scheduler::{Content, CopyScope};

/// One stream with data waiting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamDemand {
    /// The stream id.
    pub id: u64,
    /// A priority stream (seed 004's priority attribute): packed before every other stream and,
    /// with `priority_ignores_cwnd`, not held back by the congestion window.
    pub priority: bool,
    /// Order within the priority or the non-priority streams: lower first.
    pub urgency: u8,
    /// Duplicate this stream's data on every path (seed 004's duplication flag; SRE/RE).
    pub redundant: bool,
    /// Bytes ready to be sent (new data and retransmissions).
    pub pending: u64,
}

/// Data of one stream put into the packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// The stream id.
    pub stream: u64,
    /// Stream data bytes, the frame header not included.
    pub bytes: u64,
    /// The stream is a priority stream.
    pub priority: bool,
    /// The stream's data is duplicated on every path.
    pub redundant: bool,
}

/// Which streams may be packed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PackFilter {
    /// Only priority streams (a packet on a path whose window is full).
    pub priority_only: bool,
    /// Only redundant streams.
    pub redundant_only: bool,
}

impl PackFilter {
    /// Every stream.
    pub const ALL: PackFilter = PackFilter { priority_only: false, redundant_only: false };
    /// Only priority streams: for a packet on a path whose window is full.
    pub fn priority_only() -> PackFilter {
        PackFilter { priority_only: true, redundant_only: false }
    }
    fn admits(&self, s: &StreamDemand) -> bool {
        (!self.priority_only || s.priority) && (!self.redundant_only || s.redundant)
    }
}

/// Streams are served by groups: this key sorts priority streams first, then by urgency.
type GroupKey = (bool, u8);

fn group_of(s: &StreamDemand) -> GroupKey {
    (!s.priority, s.urgency)
}

/// Packs stream data into packets, remembering each group's round-robin position.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamPacker {
    frame_overhead: u64,
    /// Last stream served in each group.
    cursor: BTreeMap<GroupKey, u64>,
}

impl StreamPacker {
    /// `frame_overhead`: bytes of frame header per stream in a packet (0 to count data only).
    pub fn new(frame_overhead: u64) -> StreamPacker {
        StreamPacker { frame_overhead, cursor: BTreeMap::new() }
    }

    /// The order in which the streams with pending data would be served now.
    pub fn order(&self, streams: &[StreamDemand]) -> Vec<u64> {
        self.ordered(streams).into_iter().map(|s| s.id).collect()
    }

    fn ordered<'a>(&self, streams: &'a [StreamDemand]) -> Vec<&'a StreamDemand> {
        let mut v: Vec<&StreamDemand> = streams.iter().filter(|s| s.pending > 0).collect();
        // Group order, then ids from the one after the group's cursor, wrapping around.
        v.sort_by_key(|s| {
            let g = group_of(s);
            let after_cursor = match self.cursor.get(&g) {
                Some(&c) => s.id <= c,
                None => false,
            };
            (g, after_cursor, s.id)
        });
        v
    }

    /// What [`StreamPacker::pack`] would put into a packet with `space` bytes for stream
    /// frames, without moving the round-robin position.
    pub fn preview(&self, streams: &[StreamDemand], space: u64, filter: PackFilter) -> Vec<Chunk> {
        let mut left = space;
        let mut out = Vec::new();
        for s in self.ordered(streams) {
            if !filter.admits(s) {
                continue;
            }
            if left <= self.frame_overhead {
                break;
            }
            let bytes = s.pending.min(left - self.frame_overhead);
            left -= self.frame_overhead + bytes;
            out.push(Chunk { stream: s.id, bytes, priority: s.priority, redundant: s.redundant });
        }
        out
    }

    /// Fills a packet with `space` bytes for stream frames: priority streams first, then by
    /// urgency, round-robin within each group; a stream that does not fit is split. Each
    /// group's next packet starts after the last stream served here.
    pub fn pack(&mut self, streams: &[StreamDemand], space: u64, filter: PackFilter) -> Vec<Chunk> {
        let chunks = self.preview(streams, space, filter);
        for c in &chunks {
            if let Some(s) = streams.iter().find(|s| s.id == c.stream) {
                self.cursor.insert(group_of(s), c.stream);
            }
        }
        chunks
    }
}

/// The packet's content for the scheduler: `None` when no stream data is in it.
pub fn content_of(chunks: &[Chunk]) -> Option<Content> {
    if chunks.is_empty() {
        return None;
    }
    Some(Content::Stream { redundant: chunks.iter().any(|c| c.redundant), priority: chunks.iter().any(|c| c.priority) })
}

/// The chunks a duplicate carries ([`crate::scheduler::Decision::Send`]'s `scope`).
pub fn copy_part(chunks: &[Chunk], scope: CopyScope) -> Vec<Chunk> {
    chunks.iter().filter(|c| scope == CopyScope::AllStreams || c.redundant).copied().collect()
}
