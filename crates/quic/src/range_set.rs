//! A set of `u64` values kept as sorted, disjoint, non-adjacent half-open ranges.
//!
//! One structure serves every place QUIC tracks ranges: received packet numbers for ACK
//! frames (RFC 9000 §13.2.3), packet numbers already processed as acknowledged, acknowledged
//! and to-be-retransmitted stream and crypto data (RFC 9000 §2.2, §13.3) and stream
//! reassembly. Operations at the high end (the common case: data arrives in order) cost O(1);
//! others a binary search plus the ranges touched.

/// A set of `u64` values as sorted, disjoint, non-adjacent ranges `[start, end)` (see the
/// module header).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeSet {
    ranges: Vec<(u64, u64)>,
}

impl RangeSet {
    /// The empty set.
    pub fn new() -> RangeSet {
        RangeSet { ranges: Vec::new() }
    }

    /// No value in the set.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Number of disjoint ranges.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Ranges `[start, end)` in ascending order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (u64, u64)> + '_ {
        self.ranges.iter().copied()
    }

    /// The lowest range `[start, end)`.
    pub fn first(&self) -> Option<(u64, u64)> {
        self.ranges.first().copied()
    }

    /// The highest range `[start, end)`.
    pub fn last(&self) -> Option<(u64, u64)> {
        self.ranges.last().copied()
    }

    /// Total number of values covered.
    pub fn covered(&self) -> u64 {
        self.ranges.iter().map(|(s, e)| e - s).sum()
    }

    /// `v` is in the set.
    pub fn contains(&self, v: u64) -> bool {
        let i = self.ranges.partition_point(|r| r.1 <= v);
        self.ranges.get(i).is_some_and(|r| r.0 <= v)
    }

    /// True if all of `[start, end)` is covered.
    pub fn contains_range(&self, start: u64, end: u64) -> bool {
        if start >= end {
            return true;
        }
        let i = self.ranges.partition_point(|r| r.1 <= start);
        self.ranges.get(i).is_some_and(|r| r.0 <= start && r.1 >= end)
    }

    /// The first maximal sub-range of `[start, end)` not covered, if any.
    pub fn first_uncovered(&self, start: u64, end: u64) -> Option<(u64, u64)> {
        let mut s = start;
        let mut i = self.ranges.partition_point(|r| r.1 <= s);
        while s < end {
            match self.ranges.get(i) {
                Some(r) if r.0 <= s => {
                    s = r.1;
                    i += 1;
                }
                Some(r) => return Some((s, r.0.min(end))),
                None => return Some((s, end)),
            }
        }
        None
    }

    /// Adds `[start, end)`; returns how many values were not yet covered.
    pub fn insert(&mut self, start: u64, end: u64) -> u64 {
        let mut added = 0;
        self.insert_with(start, end, |s, e| added += e - s);
        added
    }

    /// Adds `[start, end)`, calling `new_piece(s, e)` for each maximal sub-range that was not
    /// yet covered, in ascending order.
    pub fn insert_with(&mut self, start: u64, end: u64, mut new_piece: impl FnMut(u64, u64)) {
        if start >= end {
            return;
        }
        // Fast paths at the high end.
        match self.ranges.last_mut() {
            None => {
                self.ranges.push((start, end));
                new_piece(start, end);
                return;
            }
            Some(last) if start > last.1 => {
                self.ranges.push((start, end));
                new_piece(start, end);
                return;
            }
            Some(last) if start >= last.0 => {
                if end > last.1 {
                    new_piece(last.1, end);
                    last.1 = end;
                }
                return;
            }
            _ => {}
        }
        let i = self.ranges.partition_point(|r| r.1 < start);
        let mut j = i;
        let mut cur = start;
        let (mut lo, mut hi) = (start, end);
        while j < self.ranges.len() && self.ranges[j].0 <= end {
            let r = self.ranges[j];
            if r.0 > cur {
                new_piece(cur, r.0);
            }
            cur = cur.max(r.1);
            lo = lo.min(r.0);
            hi = hi.max(r.1);
            j += 1;
        }
        if cur < end {
            new_piece(cur, end);
        }
        if j == i {
            self.ranges.insert(i, (lo, hi));
        } else {
            self.ranges[i] = (lo, hi);
            self.ranges.drain(i + 1..j);
        }
    }

    /// Removes `[start, end)`.
    pub fn remove(&mut self, start: u64, end: u64) {
        if start >= end {
            return;
        }
        let i = self.ranges.partition_point(|r| r.1 <= start);
        let mut j = i;
        while j < self.ranges.len() && self.ranges[j].0 < end {
            j += 1;
        }
        if i == j {
            return;
        }
        let first = self.ranges[i];
        let last = self.ranges[j - 1];
        let mut keep: [(u64, u64); 2] = [(0, 0); 2];
        let mut n = 0;
        if first.0 < start {
            keep[n] = (first.0, start);
            n += 1;
        }
        if last.1 > end {
            keep[n] = (end, last.1);
            n += 1;
        }
        self.ranges.splice(i..j, keep[..n].iter().copied());
    }

    /// Removes every value below `v`.
    pub fn remove_below(&mut self, v: u64) {
        let i = self.ranges.partition_point(|r| r.1 <= v);
        if i > 0 {
            self.ranges.drain(..i);
        }
        if let Some(first) = self.ranges.first_mut() {
            first.0 = first.0.max(v);
        }
    }

    /// Drops the lowest ranges until at most `n` remain; returns the new lowest value.
    pub fn keep_highest(&mut self, n: usize) -> Option<u64> {
        if self.ranges.len() > n {
            let excess = self.ranges.len() - n;
            self.ranges.drain(..excess);
        }
        self.first().map(|r| r.0)
    }

    /// Removes and returns up to `max_len` values from the start of the lowest range.
    pub fn pop_front(&mut self, max_len: u64) -> Option<(u64, u64)> {
        let first = self.ranges.first_mut()?;
        let end = first.1.min(first.0.saturating_add(max_len.max(1)));
        let piece = (first.0, end);
        if end == first.1 {
            self.ranges.remove(0);
        } else {
            first.0 = end;
        }
        Some(piece)
    }

    /// Empties the set.
    pub fn clear(&mut self) {
        self.ranges.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn model(set: &RangeSet) -> BTreeSet<u64> {
        set.iter().flat_map(|(s, e)| s..e).collect()
    }

    #[test]
    fn insert_reports_only_new_pieces() {
        let mut s = RangeSet::new();
        s.insert(10, 20);
        s.insert(30, 40);
        let mut pieces = Vec::new();
        s.insert_with(5, 45, |a, b| pieces.push((a, b)));
        assert_eq!(pieces, vec![(5, 10), (20, 30), (40, 45)]);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![(5, 45)]);
    }

    proptest! {
        #[test]
        fn behaves_like_a_set(ops in proptest::collection::vec((0u8..4, 0u64..200, 0u64..30), 0..60)) {
            let mut s = RangeSet::new();
            let mut m = BTreeSet::new();
            for (op, start, len) in ops {
                let end = start + len;
                match op {
                    0 | 1 => {
                        let mut new = 0;
                        s.insert_with(start, end, |a, b| { new += b - a; });
                        let before = m.len() as u64;
                        m.extend(start..end);
                        prop_assert_eq!(new, m.len() as u64 - before);
                    }
                    2 => { s.remove(start, end); for v in start..end { m.remove(&v); } }
                    _ => { s.remove_below(start); m.retain(|v| *v >= start); }
                }
                prop_assert_eq!(model(&s), m.clone());
                let want = (start..end).find(|v| !m.contains(v)).map(|a| (a, (a..end).find(|v| m.contains(v)).unwrap_or(end)));
                prop_assert_eq!(s.first_uncovered(start, end), want);
                let r: Vec<_> = s.iter().collect();
                for w in r.windows(2) { prop_assert!(w[0].1 < w[1].0); }
                for (a, b) in r { prop_assert!(a < b); }
            }
        }
    }
}
