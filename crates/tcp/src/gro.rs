//! Receive-side coalescing of TCP segments as Linux's generic receive offload (GRO) does it,
//! so that a burst of back-to-back segments reaches the receiver as a few large segments and
//! gets one ACK decision each instead of one per segment.
//!
//! What is modelled, with the Linux sources it follows:
//!
//! * **The poll**: the driver's NAPI poll hands every packet it finds to `napi_gro_receive`
//!   (net/core/gro.c), which holds the flow's segments and passes the coalesced segment up
//!   when the poll completes (`napi_complete_done` → `gro_flush`). Here the poll is the
//!   simulated instant: segments of the connection arriving at the same instant may be
//!   coalesced; what is held is passed up at the end of that instant, never later.
//! * **What merges** (`tcp_gro_receive`, net/ipv4/tcp_offload.c): a data segment joins the
//!   held one when it continues it exactly in sequence, carries the same acknowledgment
//!   number and the same TCP options (timestamps, SACK blocks), and is no longer than the
//!   first segment (its `gso_size`). The timestamps option is compared as Linux sends it,
//!   in milliseconds (`tcp_time_stamp_ts`, TCP_TS_HZ = 1000): segments sent in the same
//!   millisecond of the sender's clock carry the same option.
//! * **The size limit** (`skb_gro_receive`, net/core/gro.c): a segment that would bring the
//!   held packet's length (IP and TCP headers of the first segment plus all payload) to
//!   `gro_max_size` or more (65536 by default, GRO_LEGACY_MAX_SIZE) is not merged.
//! * **Flushes**: a segment that does not merge passes the held one up first and is then held
//!   itself (`same_flow` cleared, `pp = p`); a merged segment shorter than the first passes
//!   the whole packet up at once (`flush = len < mss`); a segment without payload, or with
//!   SYN, is never held and passes the held one up before it (dev_gro_receive's `normal`
//!   path after flushing `pp`).
//! * **ECN**: segments merge only with the same IP ECN field (`inet_gro_receive` flushes on
//!   a different TOS byte), so a CE mark is never hidden in a merged segment; a segment with
//!   CWR is never held (`tcp_gro_receive`: `flush |= flags & TCP_FLAG_CWR`). A merged segment
//!   counts the segments it holds ([`Segment::packets`]), by which AccECN's receiver counts
//!   CE-marked packets (`tcp_ecn_received_counters`: `gso_segs`).
//!
//! Not modelled: the PSH flag (the model's segments carry none; Linux sets it at the end of
//! each write and when half a window has gone unpushed, and a PSH segment flushes after
//! merging), the per-poll budget (a held packet older than one jiffy is flushed at the end
//! of a poll that used its budget; within one instant it is not), GRO's limit of 8 flows per
//! NAPI context (each connection has its own), and the CPU time the receiver spends.

use multiconn_core::Time;

use crate::segment::Segment;

/// GRO settings of a receiving host (profile `[tcp]` `gro`, `gro_max_bytes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroConfig {
    /// Coalesce at all.
    pub enabled: bool,
    /// `gro_max_size`: a coalesced packet (headers of its first segment plus payload) stays
    /// below this many bytes.
    pub max_bytes: u64,
}

/// Linux's default `gro_max_size` (GRO_LEGACY_MAX_SIZE, include/linux/netdevice.h).
pub const GRO_MAX_SIZE: u64 = 65536;

#[derive(Clone, Debug)]
struct Held {
    at: Time,
    seg: Segment,
    /// Bytes on the wire of the first segment beyond its payload (IP, TCP, options).
    header: u64,
    /// Payload length of the first segment (the coalesced packet's `gso_size`).
    gso_size: u32,
    /// Segments coalesced so far.
    count: u32,
}

/// The segments of one connection held between their arrival and the end of their instant.
#[derive(Clone, Debug)]
pub struct Gro {
    cfg: GroConfig,
    held: Option<Held>,
    /// Segments that arrived and coalesced packets that were passed up, for tests and reports.
    segments_in: u64,
    packets_out: u64,
}

/// The timestamps option as Linux puts it on the wire: its clock ticks in milliseconds.
fn ts_option_ms(seg: &Segment) -> Option<(u64, u64)> {
    let ms = |v: u64| if v == 0 { 0 } else { (v - 1) / 1_000_000 + 1 };
    seg.ts.map(|t| (ms(t.tsval), ms(t.tsecr)))
}

impl Gro {
    /// Coalescing as `cfg` sets it, nothing held.
    pub fn new(cfg: GroConfig) -> Gro {
        Gro { cfg, held: None, segments_in: 0, packets_out: 0 }
    }

    /// Coalescing is on (profile `gro`); when off, every segment is passed up alone.
    pub fn enabled(&self) -> bool {
        self.cfg.enabled
    }

    /// When what is held must be passed up: the end of the instant it arrived in.
    pub fn deadline(&self) -> Option<Time> {
        self.held.as_ref().map(|h| h.at)
    }

    /// Data segments offered so far and the packets they were passed up as.
    pub fn counts(&self) -> (u64, u64) {
        (self.segments_in, self.packets_out)
    }

    /// A segment of `wire_size` bytes arrived at `now`; the segments to process now, in
    /// order, are appended to `out` (none if it was held). With GRO off every segment passes
    /// straight through.
    pub fn receive(&mut self, now: Time, seg: Segment, wire_size: u32, out: &mut Vec<Segment>) {
        if !self.cfg.enabled {
            out.push(seg);
            return;
        }
        if self.held.as_ref().is_some_and(|h| h.at != now) {
            self.flush_into(out);
        }
        if seg.len == 0 || seg.flags.syn || seg.flags.cwr {
            self.flush_into(out);
            out.push(seg);
            return;
        }
        self.segments_in += 1;
        if let Some(h) = self.held.as_mut() {
            let fits = h.header + u64::from(h.seg.len) + u64::from(seg.len) < self.cfg.max_bytes;
            let merges = seg.seq == h.seg.seq.saturating_add(h.seg.len as u64)
                && seg.ack == h.seg.ack
                && seg.flags == h.seg.flags
                && seg.ip_ecn == h.seg.ip_ecn
                && ts_option_ms(&seg) == ts_option_ms(&h.seg)
                && seg.sack == h.seg.sack
                && seg.len <= h.gso_size
                && fits;
            if merges {
                h.seg.len += seg.len;
                h.seg.packets += seg.packets;
                h.count += 1;
                if seg.len < h.gso_size {
                    self.flush_into(out);
                }
                return;
            }
            self.flush_into(out);
        }
        let header = u64::from(wire_size.saturating_sub(seg.len));
        let gso_size = seg.len;
        self.held = Some(Held { at: now, seg, header, gso_size, count: 1 });
    }

    /// Passes up what is held (the end of the instant), if anything.
    pub fn flush(&mut self) -> Option<Segment> {
        let h = self.held.take()?;
        self.packets_out += 1;
        Some(h.seg)
    }

    fn flush_into(&mut self, out: &mut Vec<Segment>) {
        if let Some(s) = self.flush() {
            out.push(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::{Flags, SackBlocks, Timestamps};

    const MSS: u32 = 1448;

    fn data(seq: u64, len: u32, sent_ms: u64) -> Segment {
        Segment {
            seq,
            ack: 1,
            flags: Flags { syn: false, ack: true, ..Flags::default() },
            window: 1000,
            wscale: None,
            sack_permitted: false,
            mss: None,
            ts: Some(Timestamps { tsval: sent_ms * 1_000_000 + 1, tsecr: 7 }),
            sack: SackBlocks::new(),
            len,
            ip_ecn: multiconn_core::Ecn::NotEct,
            packets: 1,
        }
    }

    fn gro() -> Gro {
        Gro::new(GroConfig { enabled: true, max_bytes: GRO_MAX_SIZE })
    }

    /// Offers `segs` at `now` and ends the instant; returns the (seq, len) passed up.
    fn burst(g: &mut Gro, now: Time, segs: Vec<Segment>) -> Vec<(u64, u32)> {
        let mut out = Vec::new();
        for s in segs {
            let w = s.wire_size();
            g.receive(now, s, w, &mut out);
        }
        out.extend(g.flush());
        out.iter().map(|s| (s.seq, s.len)).collect()
    }

    #[test]
    fn a_burst_coalesces_into_packets_below_64_kib() {
        let mut g = gro();
        let segs = (0..100u64).map(|i| data(1 + i * MSS as u64, MSS, 5)).collect();
        let up = burst(&mut g, Time(1), segs);
        // 52 header bytes (IP, TCP, timestamps) + 45 × 1448 = 65212 < 65536, a 46th would make
        // 66660: 45 segments per packet, 100 = 45 + 45 + 10.
        assert_eq!(up, vec![(1, 45 * MSS), (1 + 45 * MSS as u64, 45 * MSS), (1 + 90 * MSS as u64, 10 * MSS)]);
        assert_eq!(g.counts(), (100, 3));
    }

    #[test]
    fn a_gap_passes_the_held_packet_up_and_starts_another() {
        let mut g = gro();
        let m = MSS as u64;
        let segs = vec![data(1, MSS, 5), data(1 + m, MSS, 5), data(1 + 3 * m, MSS, 5), data(1 + 4 * m, MSS, 5)];
        assert_eq!(burst(&mut g, Time(1), segs), vec![(1, 2 * MSS), (1 + 3 * m, 2 * MSS)]);
    }

    #[test]
    fn another_millisecond_of_the_senders_clock_or_another_ack_does_not_merge() {
        let mut g = gro();
        let m = MSS as u64;
        let mut other_ack = data(1 + 3 * m, MSS, 6);
        other_ack.ack = 2;
        // Same millisecond (different nanoseconds) merges; the next millisecond does not.
        let mut same_ms = data(1 + m, MSS, 5);
        same_ms.ts = Some(Timestamps { tsval: 5 * 1_000_000 + 999_999, tsecr: 7 });
        let segs = vec![data(1, MSS, 5), same_ms, data(1 + 2 * m, MSS, 6), other_ack];
        assert_eq!(burst(&mut g, Time(1), segs), vec![(1, 2 * MSS), (1 + 2 * m, MSS), (1 + 3 * m, MSS)]);
    }

    #[test]
    fn a_short_segment_ends_the_packet_and_acks_pass_at_once() {
        let mut g = gro();
        let m = MSS as u64;
        let mut out = Vec::new();
        for s in [data(1, MSS, 5), data(1 + m, 100, 5)] {
            let w = s.wire_size();
            g.receive(Time(1), s, w, &mut out);
        }
        assert_eq!(out.iter().map(|s| (s.seq, s.len)).collect::<Vec<_>>(), vec![(1, MSS + 100)]);
        assert_eq!(g.deadline(), None);
        out.clear();
        g.receive(Time(2), data(1 + m + 100, MSS, 6), 1500, &mut out);
        assert!(out.is_empty());
        assert_eq!(g.deadline(), Some(Time(2)));
        let ack = data(5, 0, 6);
        g.receive(Time(2), ack, 52, &mut out);
        assert_eq!(out.iter().map(|s| s.len).collect::<Vec<_>>(), vec![MSS, 0], "held data first, then the ACK");
    }

    #[test]
    fn a_later_instant_never_joins_and_off_passes_everything() {
        let mut g = gro();
        let mut out = Vec::new();
        g.receive(Time(1), data(1, MSS, 5), 1500, &mut out);
        g.receive(Time(2), data(1 + MSS as u64, MSS, 5), 1500, &mut out);
        assert_eq!(out.iter().map(|s| (s.seq, s.len)).collect::<Vec<_>>(), vec![(1, MSS)]);
        let mut off = Gro::new(GroConfig { enabled: false, max_bytes: GRO_MAX_SIZE });
        let mut out = Vec::new();
        off.receive(Time(1), data(1, MSS, 5), 1500, &mut out);
        off.receive(Time(1), data(1 + MSS as u64, MSS, 5), 1500, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(off.deadline(), None);
    }
}
