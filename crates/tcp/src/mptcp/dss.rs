//! Data sequence mappings (RFC 8684 §3.3.1): which bytes of the connection's one data sequence
//! space each range of a subflow's own sequence space carries.
//!
//! * [`TxMap`], at the sender: filled when the connection hands a chunk of data to a subflow,
//!   read when the subflow (re)transmits a segment (a retransmission keeps its mapping: §3.3.1,
//!   "a mapping is fixed once sent"), emptied as the subflow's cumulative ACK passes, and read
//!   whole when the subflow fails and its unacknowledged data is reinjected elsewhere (§3.3.6).
//! * [`RxMap`], at the receiver: filled from the DSS option of each arriving segment, drained
//!   as the subflow's data becomes in order, so that subflow-level holes hold data back at the
//!   subflow (as Linux does) and in-order subflow data moves to the connection level.
//!
//! A chunk never spans two segments' worth of mappings: the connection hands a subflow one
//! chunk of at most one segment at a time, so every segment lies inside one chunk.

use std::collections::BTreeMap;

use super::option::Mapping;

/// A run of data-level bytes on a subflow: `[ssn, ssn + len)` carries `[dsn, dsn + len)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// First subflow sequence number.
    pub ssn: u64,
    /// First data sequence number.
    pub dsn: u64,
    /// Length in bytes.
    pub len: u64,
}

impl Chunk {
    /// End of the subflow range (exclusive).
    pub fn ssn_end(&self) -> u64 {
        self.ssn + self.len
    }
    /// End of the data range (exclusive).
    pub fn dsn_end(&self) -> u64 {
        self.dsn + self.len
    }
}

/// Sender-side mappings of one subflow, keyed by subflow sequence number.
#[derive(Clone, Debug, Default)]
pub struct TxMap {
    chunks: BTreeMap<u64, Chunk>,
}

/// Why a mapping could not be found for a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MapError {
    /// No mapping holds the segment's first subflow sequence number.
    #[error("no mapping covers subflow sequence number {0}")]
    Unmapped(u64),
    /// The segment `[start, end)` runs past the end of the mapping holding its start.
    #[error("segment [{start}, {end}) crosses the end of its mapping at {chunk_end}")]
    Straddles {
        /// First subflow sequence number of the segment.
        start: u64,
        /// Subflow sequence number just past the segment.
        end: u64,
        /// Subflow sequence number just past the mapping.
        chunk_end: u64,
    },
}

impl TxMap {
    /// No mappings.
    pub fn new() -> TxMap {
        TxMap::default()
    }
    /// Mappings held.
    pub fn len(&self) -> usize {
        self.chunks.len()
    }
    /// No mappings held.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// Subflow bytes `[ssn, ssn + len)` carry data bytes `[dsn, dsn + len)`.
    pub fn insert(&mut self, ssn: u64, dsn: u64, len: u64) {
        if len > 0 {
            self.chunks.insert(ssn, Chunk { ssn, dsn, len });
        }
    }

    /// The mapping of the segment `[ssn, ssn + len)`.
    pub fn lookup(&self, ssn: u64, len: u32) -> Result<Mapping, MapError> {
        let (_, c) = self.chunks.range(..=ssn).next_back().ok_or(MapError::Unmapped(ssn))?;
        if ssn >= c.ssn_end() {
            return Err(MapError::Unmapped(ssn));
        }
        let end = ssn + u64::from(len);
        if end > c.ssn_end() {
            return Err(MapError::Straddles { start: ssn, end, chunk_end: c.ssn_end() });
        }
        Ok(Mapping { dsn: c.dsn + (ssn - c.ssn), ssn, len })
    }

    /// The subflow's cumulative ACK reached `snd_una`: chunks wholly below it are done.
    pub fn forget_below(&mut self, snd_una: u64) {
        while let Some((&k, c)) = self.chunks.first_key_value() {
            if c.ssn_end() > snd_una {
                break;
            }
            self.chunks.remove(&k);
        }
    }

    /// Data-level ranges `[start, end)` still unacknowledged on the subflow (at or above
    /// `snd_una`) and at the data level (at or above `data_una`), in subflow order: what a
    /// failed subflow's reinjection must resend elsewhere.
    pub fn unacknowledged(&self, snd_una: u64, data_una: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        for c in self.chunks.values() {
            if c.ssn_end() <= snd_una {
                continue;
            }
            let skip = snd_una.saturating_sub(c.ssn);
            let start = (c.dsn + skip).max(data_una);
            let end = c.dsn_end();
            if start < end {
                out.push((start, end));
            }
        }
        out
    }
}

/// Receiver-side mappings of one subflow, keyed by subflow sequence number.
#[derive(Clone, Debug, Default)]
pub struct RxMap {
    chunks: BTreeMap<u64, Chunk>,
}

impl RxMap {
    /// No mappings.
    pub fn new() -> RxMap {
        RxMap::default()
    }
    /// Mappings held.
    pub fn len(&self) -> usize {
        self.chunks.len()
    }
    /// No mappings held.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// A segment with mapping `m` arrived; `rcv_nxt` is the subflow's next expected sequence
    /// number before it (bytes below are already passed up).
    pub fn insert(&mut self, m: Mapping, rcv_nxt: u64) {
        let len = u64::from(m.len);
        let end = m.ssn + len;
        if len == 0 || end <= rcv_nxt {
            return;
        }
        let skip = rcv_nxt.saturating_sub(m.ssn);
        let ssn = m.ssn + skip;
        self.chunks.insert(ssn, Chunk { ssn, dsn: m.dsn + skip, len: len - skip });
    }

    /// The subflow's data is in order up to `rcv_nxt`: appends the data-level ranges
    /// `(dsn, len)` that became in order to `out` and forgets them.
    pub fn take_in_order(&mut self, rcv_nxt: u64, out: &mut Vec<(u64, u64)>) {
        while let Some((&k, &c)) = self.chunks.first_key_value() {
            if c.ssn >= rcv_nxt {
                break;
            }
            self.chunks.remove(&k);
            if c.ssn_end() <= rcv_nxt {
                out.push((c.dsn, c.len));
            } else {
                let done = rcv_nxt - c.ssn;
                out.push((c.dsn, done));
                self.chunks.insert(rcv_nxt, Chunk { ssn: rcv_nxt, dsn: c.dsn + done, len: c.len - done });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_find_their_data_sequence_numbers() {
        let mut m = TxMap::new();
        // Subflow bytes 1.. carry data 5000..; the next chunk, data 9000.. (another subflow
        // took 6000..9000).
        m.insert(1, 5000, 1000);
        m.insert(1001, 9000, 500);
        assert_eq!(m.lookup(1, 1000), Ok(Mapping { dsn: 5000, ssn: 1, len: 1000 }));
        assert_eq!(m.lookup(1001, 500), Ok(Mapping { dsn: 9000, ssn: 1001, len: 500 }));
        // A part of a chunk (never produced by the sender, but well defined).
        assert_eq!(m.lookup(501, 100).map(|x| x.dsn), Ok(5500));
        assert_eq!(m.lookup(901, 200), Err(MapError::Straddles { start: 901, end: 1101, chunk_end: 1001 }));
        assert_eq!(m.lookup(1501, 1), Err(MapError::Unmapped(1501)));
        assert_eq!(m.lookup(0, 1), Err(MapError::Unmapped(0)));
        m.forget_below(1001);
        assert_eq!(m.len(), 1);
        assert_eq!(m.lookup(1, 1000), Err(MapError::Unmapped(1)));
    }

    #[test]
    fn unacknowledged_ranges_skip_what_either_level_acknowledged() {
        let mut m = TxMap::new();
        m.insert(1, 0, 1000);
        m.insert(1001, 3000, 1000);
        m.insert(2001, 6000, 1000);
        // Subflow acked up to 501; data level up to 3500 (the second chunk's first half came
        // over another subflow too).
        assert_eq!(m.unacknowledged(501, 3500), vec![(3500, 4000), (6000, 7000)]);
        assert_eq!(m.unacknowledged(501, 0), vec![(500, 1000), (3000, 4000), (6000, 7000)]);
        assert!(m.unacknowledged(3001, 0).is_empty());
    }

    #[test]
    fn receiver_passes_up_only_in_order_subflow_data() {
        let mut r = RxMap::new();
        let mut out = Vec::new();
        // Segments 2 and 3 of the subflow arrive before segment 1.
        r.insert(Mapping { dsn: 8000, ssn: 1001, len: 1000 }, 1);
        r.insert(Mapping { dsn: 2000, ssn: 2001, len: 1000 }, 1);
        r.take_in_order(1, &mut out);
        assert!(out.is_empty(), "a hole at the subflow holds everything back");
        r.insert(Mapping { dsn: 0, ssn: 1, len: 1000 }, 1);
        r.take_in_order(3001, &mut out);
        assert_eq!(out, vec![(0, 1000), (8000, 1000), (2000, 1000)]);
        assert!(r.is_empty());
        // A duplicate below rcv_nxt is ignored; one overlapping it is trimmed.
        r.insert(Mapping { dsn: 0, ssn: 1, len: 1000 }, 3001);
        assert!(r.is_empty());
        r.insert(Mapping { dsn: 4000, ssn: 2501, len: 1000 }, 3001);
        out.clear();
        r.take_in_order(3501, &mut out);
        assert_eq!(out, vec![(4500, 500)]);
    }

    #[test]
    fn a_partly_in_order_chunk_is_split() {
        let mut r = RxMap::new();
        let mut out = Vec::new();
        r.insert(Mapping { dsn: 100, ssn: 1, len: 1000 }, 1);
        r.take_in_order(401, &mut out);
        assert_eq!(out, vec![(100, 400)]);
        out.clear();
        r.take_in_order(1001, &mut out);
        assert_eq!(out, vec![(500, 600)]);
    }
}
