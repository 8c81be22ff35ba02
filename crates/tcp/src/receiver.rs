//! The receiving half of a connection: in-order delivery with an out-of-order queue
//! (RFC 9293 §3.10.7.4), SACK generation (RFC 2018 §4: the block holding the most recently
//! received segment first, then the most recently reported ones; RFC 2883 D-SACK for
//! duplicates), delayed ACKs (RFC 5681 §4.2, RFC 9293 §3.8.6.3: ACK when more than
//! (threshold − 1) full-sized segments are unacknowledged or after the delayed-ACK timer,
//! at once for out-of-order data and for data that fills a hole), TS.Recent (RFC 7323 §4.3),
//! and the advertised window with window scaling (RFC 7323 §2) and without retracting the
//! right edge (RFC 9293 §3.8.6.2.2).
//!
//! With ECN agreed (RFC 3168 §6.1.3): a data segment that arrives CE-marked makes every ACK
//! carry ECE until a segment with CWR arrives. As Linux (`tcp_ecn_check_ce`,
//! `tcp_ecn_accept_cwr`, net/ipv4/tcp_input.c), the first CE of such a period and a
//! not-ECT data segment after ECT ones (a retransmission) put the receiver in quick-ACK mode
//! for two segments, and a data segment with CWR is acknowledged at once.
//!
//! With Accurate ECN agreed (RFC 9768 §3.2) the receiver counts CE-marked packets instead
//! (`r.cep`, starting at 5, §3.2.2.2; a segment coalesced by GRO counts as the packets it
//! merged) and every ACK carries that count modulo 8 in its ACE field, except the client's
//! first, which reflects the SYN-ACK's IP ECN field (§3.2.2.1). As Linux
//! (`tcp_ecn_received_counters`, `__tcp_accecn_process`), a data segment whose IP ECN field
//! differs from the previous one's is acknowledged at once (the change-triggered ACK of
//! §3.2.2.5.1), and so is the segment that brings the CE packets not yet reported to 6
//! (`TCP_ACCECN_ACE_MAX_DELTA`, so that the 3-bit field cannot wrap between two ACKs; the
//! increment-triggered ACK of §3.2.2.5.2). No ECE-until-CWR and no RFC 3168 quick-ACK mode.
//! The AccECN option (byte counters, §3.2.3) is not sent.
//!
//! Only sequence ranges are kept (the simulator carries no payload bytes). The application
//! reads with [`Receiver::read`]; the connection reads everything at once today, and
//! unread bytes count against the buffer, so a reader with a rate can be added there.

use multiconn_core::{Dur, Ecn, Time};

use crate::autotune::RcvBuf;
use crate::segment::{SackBlocks, Segment};

/// Settings of a [`Receiver`].
#[derive(Clone, Debug)]
pub struct ReceiverConfig {
    /// Full-sized segment in bytes (delayed-ACK counting).
    pub mss: u64,
    /// An ACK goes once more than `(ack_threshold − 1)` full-sized segments are unacknowledged.
    pub ack_threshold: u32,
    /// Delayed-ACK timer.
    pub max_ack_delay: Dur,
    /// Acknowledge out-of-order data and data that fills a hole at once.
    pub immediate_ack_on_reorder: bool,
    /// SACK negotiated.
    pub sack: bool,
    /// Timestamps negotiated.
    pub timestamps: bool,
    /// Our receive window scale shift.
    pub wscale: u8,
}

/// What goes into the ACK fields of the next segment we send.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo {
    /// Cumulative ACK: next expected sequence number.
    pub ack: u64,
    /// Window field, already scaled down by our window scale shift.
    pub window: u16,
    /// SACK blocks, a D-SACK first (empty without SACK).
    pub sack: SackBlocks,
    /// TS.Recent to echo in TSecr (0 without timestamps).
    pub tsecr: u64,
    /// ECN-Echo (RFC 3168 §6.1.3).
    pub ece: bool,
    /// With AccECN: the ACE field (AE, CWR, ECE as a 3-bit number; RFC 9768 §3.2.2).
    pub ace: Option<u8>,
}

/// The initial value of the CE packet counter `r.cep` (RFC 9768 §3.2.2.2; Linux
/// `TCP_ACCECN_CEP_INIT_OFFSET`).
pub const ACCECN_CEP_INIT: u64 = 5;

/// CE packets not yet reported after which the next ACK goes at once (Linux
/// `TCP_ACCECN_ACE_MAX_DELTA`).
pub const ACCECN_MAX_DELTA: u64 = 6;

/// Linux's `tcp_enter_quickack_mode(sk, 2)` on an ECN event: the next two ACKs go at once.
const ECN_QUICKACKS: u32 = 2;

/// The receiving half of one connection (see the module header).
#[derive(Clone, Debug)]
pub struct Receiver {
    cfg: ReceiverConfig,
    rcv_nxt: u64,
    /// Sorted, disjoint, non-adjacent ranges above rcv_nxt.
    ooo: Vec<(u64, u64)>,
    ooo_bytes: u64,
    /// Starts of recently received out-of-order segments, most recent first.
    recent: Vec<u64>,
    dsack: Option<(u64, u64)>,
    ack_now: bool,
    unacked_bytes: u64,
    delack: Option<Time>,
    ts_recent: u64,
    last_ack_sent: u64,
    right_edge: u64,
    unread: u64,
    copied: u64,
    buf: RcvBuf,
    /// ECN agreed in the handshake.
    ecn: bool,
    /// A CE mark was seen and no CWR since (Linux `TCP_ECN_DEMAND_CWR`).
    demand_cwr: bool,
    /// An ECT or CE segment arrived (Linux `TCP_ECN_SEEN`).
    ecn_seen: bool,
    /// ACKs still to be sent at once (Linux `icsk_ack.quick`).
    quick_acks: u32,
    ce_segments: u64,
    ece_acks: u64,
    /// AccECN agreed in the handshake (RFC 9768).
    accecn: bool,
    /// CE-marked packets received plus 5 (`r.cep`).
    r_cep: u64,
    /// CE-marked packets since the last ACK.
    ce_pending: u64,
    /// The IP ECN field of the last data segment (change-triggered ACKs).
    prev_ecn: Ecn,
    /// The ACE of the next ACK when it is the client's first (the SYN-ACK's reflection).
    first_ace: Option<u8>,
}

/// Result of one arriving segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataOutcome {
    /// Bytes that became readable in order.
    pub in_order: u64,
    /// The segment carried nothing new.
    pub duplicate: bool,
}

impl Receiver {
    /// `irs_next`: the first data sequence number (peer ISN + 1).
    pub fn new(cfg: ReceiverConfig, buf: RcvBuf, irs_next: u64) -> Receiver {
        Receiver {
            cfg,
            rcv_nxt: irs_next,
            ooo: Vec::new(),
            ooo_bytes: 0,
            recent: Vec::new(),
            dsack: None,
            ack_now: false,
            unacked_bytes: 0,
            delack: None,
            ts_recent: 0,
            last_ack_sent: irs_next,
            right_edge: irs_next,
            unread: 0,
            copied: 0,
            buf,
            ecn: false,
            demand_cwr: false,
            ecn_seen: false,
            quick_acks: 0,
            ce_segments: 0,
            ece_acks: 0,
            accecn: false,
            r_cep: ACCECN_CEP_INIT,
            ce_pending: 0,
            prev_ecn: Ecn::NotEct,
            first_ace: None,
        }
    }

    /// Options negotiated in the handshake (our window scale is 0 if the peer offered none).
    pub fn negotiate(&mut self, sack: bool, timestamps: bool, wscale: u8) {
        self.cfg.sack = sack;
        self.cfg.timestamps = timestamps;
        self.cfg.wscale = wscale;
    }

    /// ECN as agreed in the handshake (RFC 3168 §6.1.1).
    pub fn set_ecn(&mut self, on: bool) {
        self.ecn = on;
    }
    /// AccECN as agreed in the handshake (RFC 9768); `first_ace`: the ACE of the first ACK
    /// (the client's reflection of the SYN-ACK's IP ECN field), `None` for a server.
    pub fn set_accecn(&mut self, first_ace: Option<u8>) {
        self.ecn = true;
        self.accecn = true;
        self.first_ace = first_ace;
    }
    /// AccECN agreed.
    pub fn accecn(&self) -> bool {
        self.accecn
    }
    /// The CE packet counter `r.cep` (5 plus the CE-marked packets received; AccECN only).
    pub fn r_cep(&self) -> u64 {
        self.r_cep
    }
    /// Data segments that arrived CE-marked (after GRO: a coalesced segment counts once).
    pub fn ce_segments(&self) -> u64 {
        self.ce_segments
    }
    /// ACKs sent with ECE set (AccECN: ACKs whose ACE reported new CE marks).
    pub fn ece_acks(&self) -> u64 {
        self.ece_acks
    }
    /// The next ACKs carry ECE.
    pub fn echoing_ce(&self) -> bool {
        self.ecn && self.demand_cwr
    }

    /// Next expected sequence number (RCV.NXT).
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }
    /// The receive buffer and its autotuning.
    pub fn buffer(&self) -> &RcvBuf {
        &self.buf
    }
    /// Bytes held out of order, above a hole.
    pub fn ooo_bytes(&self) -> u64 {
        self.ooo_bytes
    }
    /// Bytes the application has read so far.
    pub fn copied(&self) -> u64 {
        self.copied
    }
    /// An ACK must go out now.
    pub fn ack_due(&self) -> bool {
        self.ack_now
    }
    /// When the delayed-ACK timer fires.
    pub fn delack_deadline(&self) -> Option<Time> {
        self.delack
    }
    /// The delayed-ACK timer fires by `now`: an ACK is due.
    pub fn on_timeout(&mut self, now: Time) {
        if self.delack.is_some_and(|d| d <= now) {
            self.delack = None;
            self.ack_now = true;
        }
    }
    /// Asks for an immediate ACK (duplicate SYN, window update, ...).
    pub fn force_ack(&mut self) {
        self.ack_now = true;
    }
    /// The connection is established at `now`: autotuning measures from here.
    pub fn start(&mut self, now: Time) {
        self.buf.start(now, self.copied);
    }

    /// Window currently offered, bytes.
    pub fn window_bytes(&self) -> u64 {
        let max = 65535u64 << self.cfg.wscale;
        self.buf.window(self.ooo_bytes + self.unread).min(max)
    }

    /// The application reads up to `max` bytes; returns how many it got.
    pub fn read(&mut self, now: Time, max: u64) -> u64 {
        let n = self.unread.min(max);
        self.unread -= n;
        self.copied += n;
        if n > 0 {
            self.buf.on_consumed(now, self.copied);
        }
        n
    }

    /// A segment arrived (any segment: TS.Recent is tracked for all).
    pub fn on_segment(&mut self, now: Time, seg: &Segment) -> DataOutcome {
        if let Some(ts) = seg.ts.filter(|_| self.cfg.timestamps) {
            if seg.seq <= self.last_ack_sent && ts.tsval >= self.ts_recent {
                self.ts_recent = ts.tsval;
            }
            if let Some(echo) =
                crate::segment::ts_to_time(ts.tsecr).filter(|_| seg.len as u64 >= self.cfg.mss)
            {
                self.buf.on_ts_sample(now.since(echo));
            }
        }
        if seg.len == 0 {
            return DataOutcome::default();
        }
        if self.accecn {
            self.accecn_on_data(seg);
        } else if self.ecn {
            self.ecn_on_data(seg);
        }
        let start = seg.seq;
        let end = seg.seq.saturating_add(seg.len as u64);
        let mut out = DataOutcome::default();
        if end <= self.rcv_nxt {
            self.dsack = Some((start, end));
            self.ack_now = true;
            out.duplicate = true;
            return out;
        }
        let limit = self
            .right_edge
            .max(self.rcv_nxt + self.window_bytes())
            .max(self.rcv_nxt + self.cfg.mss);
        if start >= limit {
            // Beyond the window: drop and tell the sender where we are.
            self.ack_now = true;
            out.duplicate = true;
            return out;
        }
        let end = end.min(limit.max(start + 1));
        if start > self.rcv_nxt {
            let i = self.ooo.partition_point(|r| r.1 < start);
            if i < self.ooo.len() && self.ooo[i].0 <= start && self.ooo[i].1 >= end {
                self.dsack = Some((start, end));
                out.duplicate = true;
            } else {
                self.insert_ooo(start, end);
            }
            self.recent.retain(|&s| s != start);
            self.recent.insert(0, start);
            self.recent.truncate(8);
            if self.cfg.immediate_ack_on_reorder || out.duplicate {
                self.ack_now = true;
            } else {
                self.count_for_delack(now, end - start);
            }
            return out;
        }
        // In order (possibly overlapping already-received bytes).
        if start < self.rcv_nxt {
            self.dsack = Some((start, self.rcv_nxt));
        }
        let had_holes = !self.ooo.is_empty();
        let before = self.rcv_nxt;
        self.rcv_nxt = end;
        while let Some(&(a, b)) = self.ooo.first() {
            if a > self.rcv_nxt {
                break;
            }
            self.ooo.remove(0);
            self.ooo_bytes -= b - a;
            self.rcv_nxt = self.rcv_nxt.max(b);
        }
        let got = self.rcv_nxt - before;
        self.unread += got;
        out.in_order = got;
        if !self.cfg.timestamps {
            let w = self.window_bytes();
            self.buf.on_data_no_ts(now, self.rcv_nxt, w);
        }
        if had_holes && self.cfg.immediate_ack_on_reorder {
            self.ack_now = true;
        } else {
            self.count_for_delack(now, got);
        }
        out
    }

    /// RFC 3168 §6.1.3 with Linux's `tcp_ecn_accept_cwr` then `tcp_ecn_check_ce`.
    fn ecn_on_data(&mut self, seg: &Segment) {
        if seg.flags.cwr {
            self.demand_cwr = false;
            self.ack_now = true;
        }
        match seg.ip_ecn {
            Ecn::NotEct => {
                if self.ecn_seen {
                    self.quick_acks = self.quick_acks.max(ECN_QUICKACKS);
                }
            }
            Ecn::Ce => {
                self.ce_segments += 1;
                if !self.demand_cwr {
                    self.quick_acks = self.quick_acks.max(ECN_QUICKACKS);
                    self.demand_cwr = true;
                }
                self.ecn_seen = true;
            }
            Ecn::Ect0 | Ecn::Ect1 => self.ecn_seen = true,
        }
    }

    /// RFC 9768 §3.2.2.2 and §3.2.2.5 as Linux's `tcp_ecn_received_counters`.
    fn accecn_on_data(&mut self, seg: &Segment) {
        if seg.ip_ecn == Ecn::Ce {
            let n = u64::from(seg.packets.max(1));
            self.ce_segments += 1;
            self.r_cep += n;
            self.ce_pending += n;
            if self.ce_pending >= ACCECN_MAX_DELTA {
                self.ack_now = true;
            }
        }
        if seg.ip_ecn != self.prev_ecn {
            self.prev_ecn = seg.ip_ecn;
            self.ack_now = true;
        }
    }

    fn count_for_delack(&mut self, now: Time, bytes: u64) {
        self.unacked_bytes += bytes;
        if self.quick_acks > 0 || self.unacked_bytes > (self.cfg.ack_threshold.max(1) as u64 - 1) * self.cfg.mss {
            self.ack_now = true;
        } else if self.delack.is_none() {
            self.delack = Some(now + self.cfg.max_ack_delay);
        }
    }

    fn insert_ooo(&mut self, a: u64, b: u64) {
        let i = self.ooo.partition_point(|r| r.1 < a);
        let j = self.ooo.partition_point(|r| r.0 <= b);
        let removed: u64 = self.ooo[i..j].iter().map(|r| r.1 - r.0).sum();
        let merged = if i < j {
            (a.min(self.ooo[i].0), b.max(self.ooo[j - 1].1))
        } else {
            (a, b)
        };
        self.ooo.splice(i..j, std::iter::once(merged));
        self.ooo_bytes = self.ooo_bytes - removed + (merged.1 - merged.0);
    }

    fn ooo_range_of(&self, seq: u64) -> Option<(u64, u64)> {
        let i = self.ooo.partition_point(|r| r.1 <= seq);
        self.ooo.get(i).copied().filter(|r| r.0 <= seq)
    }

    /// The ACK fields for a segment leaving now; clears the pending-ACK state.
    pub fn build_ack(&mut self, max_blocks: usize) -> AckInfo {
        let mut sack = SackBlocks::new();
        if self.cfg.sack {
            if let Some(d) = self.dsack.take() {
                sack.push(d.0, d.1);
            }
            let mut i = 0;
            while i < self.recent.len() && sack.len() < max_blocks {
                match self.ooo_range_of(self.recent[i]) {
                    Some(r) if !sack.as_slice().contains(&r) => {
                        sack.push(r.0, r.1);
                        i += 1;
                    }
                    Some(_) => i += 1,
                    None => {
                        self.recent.remove(i);
                    }
                }
            }
            sack.truncate(max_blocks);
        }
        self.dsack = None;
        self.ack_now = false;
        self.unacked_bytes = 0;
        self.delack = None;
        self.last_ack_sent = self.rcv_nxt;
        self.quick_acks = self.quick_acks.saturating_sub(1);
        let ece = self.echoing_ce();
        if ece {
            self.ece_acks += 1;
        }
        let ace = self.accecn.then(|| {
            self.ece_acks += u64::from(self.ce_pending > 0);
            self.ce_pending = 0;
            self.first_ace.take().unwrap_or((self.r_cep % 8) as u8)
        });
        // Window: never retract the right edge; round the scaled field so it does not.
        let ws = self.cfg.wscale;
        let want = self.rcv_nxt + self.window_bytes();
        let keep = self.right_edge.saturating_sub(self.rcv_nxt);
        let field = ((want - self.rcv_nxt) >> ws)
            .max(keep.div_ceil(1u64 << ws))
            .min(65535);
        self.right_edge = self.right_edge.max(self.rcv_nxt + (field << ws));
        AckInfo {
            ack: self.rcv_nxt,
            window: field as u16,
            sack,
            tsecr: self.ts_recent,
            ece,
            ace,
        }
    }

    /// The window for our SYN or SYN-ACK (never scaled, at most 65535).
    pub fn syn_window(&mut self) -> u16 {
        let w = self.window_bytes().min(65535);
        self.right_edge = self.rcv_nxt + w;
        w as u16
    }
    /// TS.Recent (RFC 7323 §4.3): the timestamp to echo.
    pub fn ts_recent(&self) -> u64 {
        self.ts_recent
    }
    /// Records the peer's SYN timestamp.
    pub fn set_ts_recent(&mut self, v: u64) {
        self.ts_recent = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::{Flags, Timestamps};

    fn rx() -> Receiver {
        let cfg = ReceiverConfig {
            mss: 100,
            ack_threshold: 2,
            max_ack_delay: Dur::from_millis(40),
            immediate_ack_on_reorder: true,
            sack: true,
            timestamps: true,
            wscale: 7,
        };
        Receiver::new(cfg, RcvBuf::new([4096, 131072, 6291456], true, 0.5, 100), 1)
    }
    fn data(seq: u64, len: u32) -> Segment {
        Segment {
            seq,
            ack: 1,
            flags: Flags {
                syn: false,
                ack: true,
                ..Flags::default()
            },
            window: 100,
            wscale: None,
            sack_permitted: false,
            mss: None,
            ts: Some(Timestamps {
                tsval: seq,
                tsecr: 0,
            }),
            sack: SackBlocks::new(),
            len,
            ip_ecn: multiconn_core::Ecn::NotEct,
            packets: 1,
        }
    }

    fn marked(seq: u64, len: u32, ecn: multiconn_core::Ecn, cwr: bool) -> Segment {
        let mut s = data(seq, len);
        s.ip_ecn = ecn;
        s.flags.cwr = cwr;
        s
    }

    /// RFC 3168 §6.1.3: from the first CE-marked segment every ACK carries ECE until a
    /// segment with CWR arrives; the first CE is acknowledged at once (Linux quick-ACK).
    #[test]
    fn ece_from_the_first_ce_until_cwr() {
        use multiconn_core::Ecn::{Ce, Ect0};
        let mut r = rx();
        r.set_ecn(true);
        r.on_segment(Time(0), &marked(1, 100, Ect0, false));
        assert!(!r.ack_due(), "ECT(0) alone changes nothing: delayed ACK");
        r.on_segment(Time(1), &marked(101, 100, Ect0, false));
        assert!(!r.build_ack(3).ece);
        r.on_segment(Time(2), &marked(201, 100, Ce, false));
        assert!(r.ack_due(), "a CE mark is acknowledged at once");
        assert!(r.build_ack(3).ece);
        // Later segments, marked or not: ECE stays on every ACK.
        for (i, e) in [Ect0, Ce, Ect0, Ect0].into_iter().enumerate() {
            r.on_segment(Time(3 + i as u64), &marked(301 + 100 * i as u64, 100, e, false));
            assert!(r.build_ack(3).ece);
        }
        // CWR arrives: the ACK for it goes at once, without ECE.
        r.on_segment(Time(10), &marked(701, 100, Ect0, true));
        assert!(r.ack_due());
        assert!(!r.build_ack(3).ece);
        r.on_segment(Time(11), &marked(801, 100, Ect0, false));
        assert!(!r.build_ack(3).ece);
        // A CE in the same segment as CWR starts a new echo (accept CWR, then check CE).
        r.on_segment(Time(12), &marked(901, 100, Ce, true));
        assert!(r.build_ack(3).ece);
        assert_eq!(r.ce_segments(), 3);
        assert_eq!(r.ece_acks(), 6);
    }

    /// RFC 9768 §3.2.2: with AccECN every ACK carries `r.cep` = 5 + CE packets, modulo 8, in
    /// its ACE field; a coalesced segment counts its packets, so one ACK may pass a wrap;
    /// ECE is never held until CWR. The client's first ACK reflects the SYN-ACK instead.
    #[test]
    fn the_ace_field_counts_ce_packets_modulo_8() {
        use multiconn_core::Ecn::{Ce, Ect1};
        let mut r = rx();
        r.set_accecn(Some(0b010));
        assert_eq!(r.build_ack(3).ace, Some(0b010), "the first ACK reflects a not-ECT SYN-ACK");
        assert_eq!(r.build_ack(3).ace, Some(5), "then r.cep, starting at 5");
        let mut seq = 1;
        let mut arrive = |r: &mut Receiver, ecn, packets: u32| {
            let mut s = marked(seq, 100 * packets, ecn, false);
            s.packets = packets;
            seq += 100 * u64::from(packets);
            r.on_segment(Time(seq), &s);
        };
        // Two ECT(1) segments: the first is an ECN change (not-ECT before): at once.
        arrive(&mut r, Ect1, 1);
        assert!(r.ack_due(), "change-triggered ACK");
        let a = r.build_ack(3);
        assert_eq!((a.ace, a.ece), (Some(5), false));
        arrive(&mut r, Ect1, 1);
        assert!(!r.ack_due(), "no change, one segment: delayed");
        // One CE: a change, so at once; 6 mod 8.
        arrive(&mut r, Ce, 1);
        assert!(r.ack_due());
        assert_eq!(r.build_ack(3).ace, Some(6));
        // Back to ECT(1): a change again, the count stays.
        arrive(&mut r, Ect1, 1);
        assert!(r.ack_due());
        assert_eq!(r.build_ack(3).ace, Some(6));
        // A coalesced CE segment of 10 packets: 6 + 10 = 16 → 0, past a wrap in one ACK.
        arrive(&mut r, Ce, 10);
        assert_eq!(r.build_ack(3).ace, Some(0));
        assert_eq!(r.r_cep(), 16);
        // CE after CE, one at a time, delayed ACKs every second segment: each ACK counts 2.
        let mut aces = Vec::new();
        for _ in 0..6 {
            arrive(&mut r, Ce, 1);
            if r.ack_due() {
                aces.push(r.build_ack(3).ace.unwrap());
            }
        }
        assert_eq!(aces, vec![2, 4, 6]);
        // Six CE packets not yet reported send an ACK at once even without a change (a short
        // segment standing for six, which the delayed-ACK rule would hold).
        let mut six = marked(seq, 50, Ce, false);
        six.packets = 6;
        r.on_segment(Time(seq), &six);
        assert!(r.ack_due());
        assert_eq!(r.build_ack(3).ace, Some(((22 + 6) % 8) as u8));
        assert_eq!(r.r_cep(), 28);
        assert_eq!(r.ce_segments(), 9);
    }

    #[test]
    fn without_ecn_ce_is_not_echoed() {
        let mut r = rx();
        r.on_segment(Time(0), &marked(1, 100, multiconn_core::Ecn::Ce, false));
        assert!(!r.ack_due());
        assert!(!r.build_ack(3).ece);
        assert_eq!(r.ce_segments(), 0);
    }

    #[test]
    fn delayed_ack_every_second_segment() {
        let mut r = rx();
        assert_eq!(r.on_segment(Time(0), &data(1, 100)).in_order, 100);
        assert!(!r.ack_due());
        assert_eq!(r.delack_deadline(), Some(Time(40_000_000)));
        r.on_segment(Time(1), &data(101, 100));
        assert!(r.ack_due());
        let a = r.build_ack(3);
        assert_eq!((a.ack, a.tsecr), (201, 1));
        assert_eq!(r.delack_deadline(), None);
    }

    #[test]
    fn sack_blocks_most_recent_first_and_dsack() {
        let mut r = rx();
        r.on_segment(Time(0), &data(201, 100));
        r.on_segment(Time(0), &data(501, 100));
        r.on_segment(Time(0), &data(301, 100));
        assert!(r.ack_due());
        let a = r.build_ack(3);
        assert_eq!(a.ack, 1);
        assert_eq!(a.sack.as_slice(), &[(201, 401), (501, 601)]);
        r.on_segment(Time(0), &data(1, 100));
        assert!(r.ack_due(), "filling a hole acks at once");
        // Duplicate of an out-of-order segment → D-SACK first.
        r.on_segment(Time(0), &data(501, 100));
        let a = r.build_ack(3);
        assert_eq!(a.sack.as_slice(), &[(501, 601), (201, 401)]);
        r.on_segment(Time(0), &data(101, 100));
        assert_eq!(r.rcv_nxt(), 401);
        let _ = r.build_ack(3);
        r.on_segment(Time(0), &data(101, 100));
        assert_eq!(r.build_ack(3).sack.as_slice(), &[(101, 201), (501, 601)]);
    }

    #[test]
    fn window_is_scaled_and_never_retracts() {
        let mut r = rx();
        assert_eq!(r.syn_window(), 65535);
        let a = r.build_ack(3);
        assert_eq!(a.window, (65536 >> 7) as u16);
        r.on_segment(Time(0), &data(1001, 100));
        let a = r.build_ack(3);
        // 100 bytes out of order shrink the offer but the right edge stays.
        assert_eq!(a.window, 512);
    }
}
