//! ACK frames (RFC 9000 §19.3): the received packet numbers as Largest Acknowledged, ACK
//! Delay, First ACK Range and (Gap, ACK Range Length) pairs, descending.
//!
//! * [`AckFrame::from_ranges`] turns a [`RangeSet`] of received packet numbers into the frame
//!   fields (keeping the highest `max_ranges` ranges).
//! * [`AckFrame::ranges`] decodes the fields back into inclusive `(smallest, largest)` ranges,
//!   descending, refusing fields that would underflow (bad input from the peer).
//! * [`AckFrame::encode`] / [`AckFrame::decode`] write and read the real byte encoding;
//!   [`AckFrame::wire_size`] is the encoded length, computed without writing.
//!
//! The ACK Delay field is in units of 2^ack_delay_exponent microseconds (§18.2, default 3).
//! A frame with ECN counts (§19.3.2) is of type 0x03 and ends with the ECT(0), ECT(1) and
//! ECN-CE counts.

use crate::range_set::RangeSet;
use crate::varint;
use multiconn_core::Dur;

/// Default ack_delay_exponent (RFC 9000 §18.2).
pub const ACK_DELAY_EXPONENT: u32 = 3;

/// ACK frame type without ECN counts.
pub const ACK_FRAME_TYPE: u64 = 0x02;
/// ACK frame type with ECN counts (RFC 9000 §19.3).
pub const ACK_ECN_FRAME_TYPE: u64 = 0x03;

/// The ECN Counts of an ACK frame (RFC 9000 §19.3.2): packets of the space received with
/// each codepoint, since the connection began.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EcnCounts {
    /// Packets received with ECT(0).
    pub ect0: u64,
    /// Packets received with ECT(1).
    pub ect1: u64,
    /// Packets received with ECN-CE.
    pub ce: u64,
}

impl EcnCounts {
    /// Bytes of the three counts on the wire.
    pub fn wire_size(&self) -> usize {
        varint::len(self.ect0) + varint::len(self.ect1) + varint::len(self.ce)
    }
}

/// The fields of an ACK frame (RFC 9000 §19.3), as they go on the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AckFrame {
    /// Largest Acknowledged: the highest packet number acknowledged.
    pub largest: u64,
    /// Encoded ACK Delay field (units of 2^ACK_DELAY_EXPONENT µs).
    pub delay: u64,
    /// First ACK Range: packets acknowledged just below `largest`, not counting it.
    pub first_range: u64,
    /// (Gap, ACK Range Length) pairs after the first range, descending.
    pub ranges: Vec<(u64, u64)>,
    /// ECN counts: present in a frame of type 0x03.
    pub ecn: Option<EcnCounts>,
}

/// The fields of an ACK frame do not describe valid packet numbers, or its bytes are cut short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckError;

impl AckFrame {
    /// The frame acknowledging the highest `max_ranges` ranges of `received` (half-open
    /// ranges of packet numbers), or `None` if nothing was received.
    pub fn from_ranges(received: &RangeSet, delay: Dur, max_ranges: usize) -> Option<AckFrame> {
        let mut it = received.iter().rev();
        let (start, end) = it.next()?;
        let largest = end - 1;
        let first_range = largest - start;
        let mut smallest = start;
        let mut ranges = Vec::new();
        for (s, e) in it.take(max_ranges.saturating_sub(1)) {
            // e - 1 is the largest of this range; gap = previous smallest − this largest − 2.
            let gap = smallest - e - 1;
            let len = e - 1 - s;
            ranges.push((gap, len));
            smallest = s;
        }
        Some(AckFrame { largest, delay: encode_delay(delay), first_range, ranges, ecn: None })
    }

    /// The acknowledged ranges, inclusive `(smallest, largest)`, descending.
    pub fn ranges(&self) -> AckRangeIter<'_> {
        AckRangeIter { frame: self, next: 0, prev_smallest: None }
    }

    /// The decoded ACK Delay.
    pub fn delay(&self) -> Dur {
        decode_delay(self.delay)
    }

    /// Bytes of the frame on the wire, type byte included.
    pub fn wire_size(&self) -> usize {
        1 + varint::len(self.largest)
            + varint::len(self.delay)
            + varint::len(self.ranges.len() as u64)
            + varint::len(self.first_range)
            + self.ranges.iter().map(|(g, l)| varint::len(*g) + varint::len(*l)).sum::<usize>()
            + self.ecn.map_or(0, |e| e.wire_size())
    }

    /// Appends the frame's bytes (type 0x02, or 0x03 with ECN counts) to `buf`.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        varint::encode(if self.ecn.is_some() { ACK_ECN_FRAME_TYPE } else { ACK_FRAME_TYPE }, buf);
        varint::encode(self.largest, buf);
        varint::encode(self.delay, buf);
        varint::encode(self.ranges.len() as u64, buf);
        varint::encode(self.first_range, buf);
        for (g, l) in &self.ranges {
            varint::encode(*g, buf);
            varint::encode(*l, buf);
        }
        if let Some(e) = self.ecn {
            varint::encode(e.ect0, buf);
            varint::encode(e.ect1, buf);
            varint::encode(e.ce, buf);
        }
    }

    /// Reads one ACK frame (type included) at `*pos`, advancing it. Validates the ranges.
    pub fn decode(buf: &[u8], pos: &mut usize) -> Result<AckFrame, AckError> {
        let ty = varint::decode(buf, pos).map_err(|_| AckError)?;
        if ty != ACK_FRAME_TYPE && ty != ACK_ECN_FRAME_TYPE {
            return Err(AckError);
        }
        let mut read = || varint::decode(buf, pos).map_err(|_| AckError);
        let largest = read()?;
        let delay = read()?;
        let count = read()?;
        let first_range = read()?;
        // Each pair takes at least two bytes: refuse counts the buffer cannot hold.
        if count > (buf.len() as u64) / 2 {
            return Err(AckError);
        }
        let mut ranges = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let gap = read()?;
            let len = read()?;
            ranges.push((gap, len));
        }
        let ecn = if ty == ACK_ECN_FRAME_TYPE {
            let mut read = || varint::decode(buf, pos).map_err(|_| AckError);
            Some(EcnCounts { ect0: read()?, ect1: read()?, ce: read()? })
        } else {
            None
        };
        let frame = AckFrame { largest, delay, first_range, ranges, ecn };
        for r in frame.ranges() {
            r?;
        }
        Ok(frame)
    }
}

/// Iterator over the inclusive ranges of an [`AckFrame`]; yields an error (once) on fields
/// that underflow.
pub struct AckRangeIter<'a> {
    frame: &'a AckFrame,
    next: usize,
    prev_smallest: Option<u64>,
}

impl Iterator for AckRangeIter<'_> {
    type Item = Result<(u64, u64), AckError>;

    fn next(&mut self) -> Option<Self::Item> {
        let f = self.frame;
        let (smallest, largest) = match self.prev_smallest {
            None => {
                if self.next > 0 {
                    return None;
                }
                self.next = 0;
                let Some(s) = f.largest.checked_sub(f.first_range) else {
                    self.next = usize::MAX;
                    self.prev_smallest = Some(0);
                    return Some(Err(AckError));
                };
                (s, f.largest)
            }
            Some(prev) => {
                let &(gap, len) = f.ranges.get(self.next)?;
                self.next += 1;
                let Some(largest) = prev.checked_sub(gap).and_then(|v| v.checked_sub(2)) else {
                    self.next = usize::MAX;
                    return Some(Err(AckError));
                };
                let Some(smallest) = largest.checked_sub(len) else {
                    self.next = usize::MAX;
                    return Some(Err(AckError));
                };
                (smallest, largest)
            }
        };
        self.prev_smallest = Some(smallest);
        Some(Ok((smallest, largest)))
    }
}

/// ACK Delay field for a delay (truncated to the exponent's unit).
pub fn encode_delay(d: Dur) -> u64 {
    (d.0 / 1_000) >> ACK_DELAY_EXPONENT
}

/// The delay an ACK Delay field stands for.
pub fn decode_delay(field: u64) -> Dur {
    Dur(field.saturating_mul(1 << ACK_DELAY_EXPONENT).saturating_mul(1_000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_follow_rfc9000_section_19_3_1() {
        // Received 0..=2, 5..=5, 7..=9.
        let mut r = RangeSet::new();
        r.insert(0, 3);
        r.insert(5, 6);
        r.insert(7, 10);
        let f = AckFrame::from_ranges(&r, Dur::from_micros(80), 32).unwrap();
        assert_eq!((f.largest, f.first_range, f.delay), (9, 2, 10));
        // largest of next = 7 − gap − 2 = 5 → gap 0; 5 − 0 − 2 ... → gap from 5 to 2 is 1.
        assert_eq!(f.ranges, vec![(0, 0), (1, 2)]);
        let got: Vec<_> = f.ranges().map(|r| r.unwrap()).collect();
        assert_eq!(got, vec![(7, 9), (5, 5), (0, 2)]);
        let mut buf = Vec::new();
        f.encode(&mut buf);
        assert_eq!(buf.len(), f.wire_size());
    }

    #[test]
    fn underflowing_fields_are_refused() {
        let f = AckFrame { largest: 3, delay: 0, first_range: 4, ranges: vec![], ecn: None };
        assert_eq!(f.ranges().next(), Some(Err(AckError)));
        let f = AckFrame { largest: 10, delay: 0, first_range: 2, ranges: vec![(7, 0)], ecn: None };
        let v: Vec<_> = f.ranges().collect();
        assert_eq!(v, vec![Ok((8, 10)), Err(AckError)]);
        let mut buf = Vec::new();
        f.encode(&mut buf);
        assert_eq!(AckFrame::decode(&buf, &mut 0), Err(AckError));
        assert_eq!(AckFrame::decode(&buf[..3], &mut 0), Err(AckError));
    }
}

#[cfg(test)]
mod ecn_tests {
    use super::*;

    /// RFC 9000 §19.3.2: type 0x03 carries the three counts; the size grows by their varints.
    #[test]
    fn ecn_counts_round_trip_and_grow_the_frame() {
        let mut r = RangeSet::new();
        r.insert(0, 100);
        let plain = AckFrame::from_ranges(&r, Dur::ZERO, 32).unwrap();
        let mut f = plain.clone();
        f.ecn = Some(EcnCounts { ect0: 90, ect1: 0, ce: 10 });
        assert_eq!(f.wire_size(), plain.wire_size() + 2 + 1 + 1);
        let mut buf = Vec::new();
        f.encode(&mut buf);
        assert_eq!(buf[0], 0x03);
        assert_eq!(buf.len(), f.wire_size());
        assert_eq!(AckFrame::decode(&buf, &mut 0), Ok(f));
        let mut buf = Vec::new();
        plain.encode(&mut buf);
        assert_eq!(buf[0], 0x02);
        assert_eq!(AckFrame::decode(&buf, &mut 0), Ok(plain));
    }
}
