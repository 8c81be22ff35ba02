//! What an endpoint lets an invariant checker see of itself, when asked
//! ([`Endpoint::observe`](crate::Endpoint::observe)): the byte ranges of each stream it hands
//! to its application, the multipath path IDs it opens, and the QUIC datagrams (RFC 9221) it
//! hands over or settles.
//!
//! An endpoint notes these only while watched ([`Observations::watch`]); unwatched, noting is
//! one branch. The checker (in the scenario crate's run loop) takes them after every input to
//! the endpoint ([`Endpoint::drain_observations`](crate::Endpoint::drain_observations)) and
//! checks that each stream's ranges follow each other without gap or overlap, that no path ID
//! opens twice, and that no datagram is handed over twice or settled twice.

/// One thing an endpoint did that the invariants concern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Observation {
    /// Bytes `[from, to)` of stream `stream` went to the application, in order (TCP: the one
    /// byte stream, 0, counted from the first byte after the SYN; QUIC: a stream's offsets).
    Delivered {
        /// The stream (0 for TCP's byte stream).
        stream: u64,
        /// The first byte's offset.
        from: u64,
        /// The offset just past the last byte.
        to: u64,
    },
    /// Multipath: path ID `path_id` opened on the scenario path `path`.
    PathIdOpened {
        /// The scenario path (the route its packets take).
        path: u8,
        /// The transport's path identifier.
        path_id: u32,
    },
    /// The receiving end handed datagram `tag` to its application.
    DatagramDelivered {
        /// The sender's tag.
        tag: u64,
    },
    /// The sending end settled datagram `tag`: acknowledged, or declared lost.
    DatagramSettled {
        /// The datagram's tag.
        tag: u64,
    },
}

/// An endpoint's notes for the checker: nothing until watched.
#[derive(Debug, Clone, Default)]
pub struct Observations {
    log: Option<Vec<Observation>>,
}

impl Observations {
    /// From now on, notes what [`Observations::note`] is given (`on`), or nothing and forgets
    /// what was noted (`!on`).
    pub fn watch(&mut self, on: bool) {
        if on {
            self.log.get_or_insert_with(Vec::new);
        } else {
            self.log = None;
        }
    }

    /// Whether it is watched.
    pub fn watched(&self) -> bool {
        self.log.is_some()
    }

    /// Notes `o` when watched.
    #[inline]
    pub fn note(&mut self, o: Observation) {
        if let Some(log) = &mut self.log {
            log.push(o);
        }
    }

    /// Moves what was noted to `out`, oldest first.
    pub fn drain(&mut self, out: &mut Vec<Observation>) {
        if let Some(log) = &mut self.log {
            out.append(log);
        }
    }
}
