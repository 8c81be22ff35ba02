//! The transmitting side of an AM entity (TS 38.322 §5.2.3.1, §5.3.2, §5.3.3); see the
//! module header of [`crate::rlc_am`] for the model and its simplifications.

use std::collections::{BTreeSet, VecDeque};

use super::{am_header_bytes, AmConfig, AmPdu, AmStatus, ByteRanges, MAX_AM_SDU_BYTES, SO_FIELD_BYTES};
use crate::error::CellError;
use crate::rlc::{RlcBufferStatus, UmSegment};

/// Counts of a transmitter since the start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AmTxCounters {
    /// SDUs offered.
    pub offered_sdus: u64,
    /// Bytes of those.
    pub offered_bytes: u64,
    /// SDUs dropped because the buffer was full.
    pub dropped_sdus: u64,
    /// Bytes of those.
    pub dropped_bytes: u64,
    /// AMD PDUs built (first transmissions and retransmissions).
    pub pdus: u64,
    /// SDU bytes sent for the first time.
    pub new_bytes: u64,
    /// Header bytes of all PDUs built.
    pub header_bytes: u64,
    /// AMD PDUs that were retransmissions.
    pub retx_pdus: u64,
    /// SDU bytes retransmitted.
    pub retx_bytes: u64,
    /// PDUs sent with the poll bit.
    pub polls: u64,
    /// t-PollRetransmit expiries.
    pub poll_retransmit_expiries: u64,
    /// SDUs positively acknowledged.
    pub acked_sdus: u64,
    /// SDUs given up at RETX_COUNT = maxRetxThreshold.
    pub failed_sdus: u64,
    /// STATUS PDUs received.
    pub status_reports: u64,
}

/// One SDU the transmitter holds, from its arrival to its acknowledgement.
#[derive(Clone, Debug)]
struct TxSdu {
    id: u64,
    size: u32,
    arrival_us: u64,
    /// Bytes `0..sent` were sent at least once; new data goes out from `sent`.
    sent: u32,
    /// Bytes waiting for retransmission.
    retx: ByteRanges,
    /// RETX_COUNT; `None` until the SDU is first considered for retransmission.
    retx_count: Option<u8>,
    /// The STATUS (or expiry) that last counted RETX_COUNT.
    counted_at: u64,
    /// Acknowledged or given up.
    done: bool,
}

/// The transmitting side of one AM bearer.
#[derive(Clone, Debug)]
pub struct AmTx {
    cfg: AmConfig,
    window: u64,
    /// The SDUs from TX_Next_Ack (the front) to TX_Next − 1.
    sdus: VecDeque<TxSdu>,
    /// TX_Next_Ack: the SN of the front of `sdus`.
    tx_next_ack: u64,
    /// TX_Next: the SN the next SDU queued gets.
    tx_next: u64,
    /// The SN of the first SDU with bytes not yet sent (TX_Next if none).
    next_new: u64,
    /// The highest SN submitted to the lower layer.
    highest_sent: Option<u64>,
    poll_sn: u64,
    pdu_without_poll: u32,
    byte_without_poll: u64,
    /// t-PollRetransmit expired: the next PDU polls.
    poll_pending: bool,
    poll_timer_us: Option<u64>,
    /// Bytes not yet sent a first time.
    new_bytes: u64,
    /// Bytes waiting for retransmission.
    retx_bytes: u64,
    /// The SNs with bytes waiting for retransmission.
    retx_sns: BTreeSet<u64>,
    /// SDUs held and neither acknowledged nor given up.
    held: u64,
    /// Numbers the STATUS PDUs and expiries, for RETX_COUNT.
    round: u64,
    next_id: u64,
    counters: AmTxCounters,
}

impl AmTx {
    /// An idle transmitter; the configuration is validated.
    pub fn new(cfg: AmConfig) -> Result<AmTx, CellError> {
        cfg.validate()?;
        Ok(AmTx {
            cfg,
            window: cfg.window_size(),
            sdus: VecDeque::new(),
            tx_next_ack: 0,
            tx_next: 0,
            next_new: 0,
            highest_sent: None,
            poll_sn: 0,
            pdu_without_poll: 0,
            byte_without_poll: 0,
            poll_pending: false,
            poll_timer_us: None,
            new_bytes: 0,
            retx_bytes: 0,
            retx_sns: BTreeSet::new(),
            held: 0,
            round: 0,
            next_id: 0,
            counters: AmTxCounters::default(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &AmConfig {
        &self.cfg
    }

    /// The counts since the start.
    pub fn counters(&self) -> AmTxCounters {
        self.counters
    }

    /// TX_Next_Ack: the oldest SN not yet acknowledged (or given up).
    pub fn tx_next_ack(&self) -> u64 {
        self.tx_next_ack
    }

    /// TX_Next: the SN the next SDU queued gets.
    pub fn tx_next(&self) -> u64 {
        self.tx_next
    }

    /// POLL_SN: the highest SN submitted when the last poll was sent.
    pub fn poll_sn(&self) -> u64 {
        self.poll_sn
    }

    /// SDUs held (queued or sent) and neither acknowledged nor given up.
    pub fn unacked_sdus(&self) -> u64 {
        self.held
    }

    /// When t-PollRetransmit expires, if it runs.
    pub fn poll_timeout(&self) -> Option<u64> {
        self.poll_timer_us
    }

    /// The id of the oldest SDU not yet acknowledged nor given up (the SDU at TX_Next_Ack), or
    /// the id the next SDU will take when every SDU is: every SDU with a smaller id is done.
    pub fn oldest_open_id(&self) -> u64 {
        self.sdus.front().map_or(self.next_id, |s| s.id)
    }

    /// Offers an SDU of `bytes` (1–65 535) arriving at `now_us`: `Some(id)` if queued (it takes
    /// SN = TX_Next), `None` if the bytes not yet sent would exceed the capacity (dropped).
    pub fn enqueue(&mut self, bytes: u32, now_us: u64) -> Result<Option<u64>, CellError> {
        if bytes == 0 || bytes > MAX_AM_SDU_BYTES {
            return Err(CellError::out_of_range("sdu_bytes", bytes as f64, "an integer in [1, 65535] bytes (the 16-bit SO field)"));
        }
        self.counters.offered_sdus += 1;
        self.counters.offered_bytes += bytes as u64;
        if self.new_bytes + bytes as u64 > self.cfg.capacity_bytes {
            self.counters.dropped_sdus += 1;
            self.counters.dropped_bytes += bytes as u64;
            return Ok(None);
        }
        let id = self.next_id;
        self.next_id += 1;
        self.sdus.push_back(TxSdu {
            id,
            size: bytes,
            arrival_us: now_us,
            sent: 0,
            retx: ByteRanges::default(),
            retx_count: None,
            counted_at: 0,
            done: false,
        });
        self.tx_next += 1;
        self.new_bytes += bytes as u64;
        self.held += 1;
        Ok(Some(id))
    }

    /// The buffer status at `now_us` (38.322 §5.5): bytes not yet sent plus bytes waiting for
    /// retransmission (window-stalled data included); headers estimated as the PDUs they would
    /// make at one PDU per SDU or pending range; the wait of the oldest SDU with bytes to send.
    pub fn status(&self, now_us: u64) -> RlcBufferStatus {
        let hdr = am_header_bytes(self.cfg.sn_bits, 0) as u64;
        let new_sdus = self.tx_next - self.next_new;
        let mut headers = hdr * new_sdus;
        let mut hol_arrival: Option<u64> = None;
        if let Some(s) = self.sdu(self.next_new) {
            if s.sent > 0 {
                headers += SO_FIELD_BYTES as u64;
            }
            hol_arrival = Some(s.arrival_us);
        }
        for &sn in &self.retx_sns {
            if let Some(s) = self.sdu(sn) {
                for &(a, _) in s.retx.ranges() {
                    headers += am_header_bytes(self.cfg.sn_bits, a) as u64;
                }
                hol_arrival = Some(hol_arrival.map_or(s.arrival_us, |h| h.min(s.arrival_us)));
            }
        }
        let queued = self.new_bytes + self.retx_bytes;
        RlcBufferStatus {
            queued_bytes: queued,
            queued_sdus: new_sdus + self.retx_sns.len() as u64,
            tx_queue_bytes: queued + headers,
            hol_delay_us: hol_arrival.map_or(0, |a| now_us.saturating_sub(a)),
        }
    }

    /// Fills a grant of `grant_bytes` at `now_us` with AMD PDUs, appended to `out`:
    /// retransmissions first (re-segmented to fit), then new data, as long as a header and one
    /// data byte fit. Sets the poll bit per §5.3.3.2 and (re)starts t-PollRetransmit on a poll.
    pub fn pull(&mut self, grant_bytes: u32, now_us: u64, out: &mut Vec<AmPdu>) {
        let mut room = grant_bytes;
        loop {
            if let Some(pdu) = self.next_retx(room) {
                room -= pdu.size();
                self.submit(pdu, now_us, out);
                continue;
            }
            if let Some(pdu) = self.next_new(room) {
                room -= pdu.size();
                self.submit(pdu, now_us, out);
                continue;
            }
            break;
        }
    }

    /// Handles a STATUS PDU received at `now_us` (§5.2.3.1.2, §5.3.2, §5.3.3.3): the SDUs it
    /// acknowledges whole are appended to `acked`, NACKed bytes are queued for retransmission,
    /// and SDUs reaching RETX_COUNT = maxRetxThreshold are given up and appended to `failed`.
    /// NACKs outside TX_Next_Ack ..= the highest SN sent, and bytes never sent, are ignored.
    pub fn on_status(&mut self, now_us: u64, status: &AmStatus, acked: &mut Vec<u64>, failed: &mut Vec<u64>) {
        let _ = now_us;
        self.counters.status_reports += 1;
        self.round += 1;
        let Some(highest) = self.highest_sent else { return };
        let ack_sn = status.ack_sn.min(highest + 1);
        if self.poll_timer_us.is_some() && self.poll_sn < ack_sn {
            // POLL_SN is acknowledged positively or negatively (§5.3.3.3).
            self.poll_timer_us = None;
        }
        let mut nacks: Vec<_> = status.nacks.iter().filter(|n| n.sn >= self.tx_next_ack && n.sn < ack_sn).copied().collect();
        nacks.sort_by_key(|n| (n.sn, n.so.map_or(0, |s| s.0)));
        let mut j = 0;
        for sn in self.tx_next_ack..ack_sn {
            let first = j;
            while j < nacks.len() && nacks[j].sn == sn {
                j += 1;
            }
            let Some(idx) = self.index(sn) else { continue };
            if self.sdus[idx].done {
                continue;
            }
            if first == j {
                let s = &self.sdus[idx];
                // Positively acknowledged (an ACK of bytes never sent is ignored).
                if s.sent == s.size {
                    acked.push(s.id);
                    self.counters.acked_sdus += 1;
                    self.finish(sn);
                }
                continue;
            }
            let sent = self.sdus[idx].sent;
            let ranges: Vec<(u32, u32)> = nacks[first..j]
                .iter()
                .map(|n| n.so.map_or((0, sent), |(a, b)| (a.min(sent), b.min(sent))))
                .filter(|&(a, b)| a < b)
                .collect();
            self.consider_for_retx(sn, &ranges, failed);
        }
        self.advance_ack();
    }

    /// Handles t-PollRetransmit's expiry by `now_us` (§5.3.3.4): if there is nothing to send
    /// nor to retransmit, or the window stalls, the SDU with the highest SN sent and not
    /// acknowledged is queued for retransmission (unless all of it is already); the next PDU
    /// polls. That counts in
    /// the SDU's RETX_COUNT: if it reaches maxRetxThreshold the SDU is given up and its id
    /// returned (the failure indication, as `failed` of [`AmTx::on_status`]; at most one SDU per
    /// expiry). Nothing happens (`None`) if the timer does not run or expires later.
    pub fn handle_timeout(&mut self, now_us: u64) -> Option<u64> {
        match self.poll_timer_us {
            Some(at) if at <= now_us => {}
            _ => return None,
        }
        self.poll_timer_us = None;
        self.counters.poll_retransmit_expiries += 1;
        self.round += 1;
        self.poll_pending = true;
        let buffers_empty = self.next_new == self.tx_next && self.retx_sns.is_empty();
        if !buffers_empty && !self.stalled() {
            return None;
        }
        let highest = self.highest_sent?;
        // The highest SN sent and neither acknowledged nor given up.
        let sn = (self.tx_next_ack..=highest).rev().find(|&sn| self.sdu(sn).is_some_and(|s| !s.done))?;
        let sent = self.sdu(sn).map_or(0, |s| s.sent);
        let mut failed = Vec::new();
        self.consider_for_retx(sn, &[(0, sent)], &mut failed);
        self.advance_ack();
        failed.pop()
    }

    /// RLC re-establishment (§5.1.2), as RRC orders it after a radio link failure or at
    /// handover: every SDU held is discarded (their ids appended to `discarded`, in SN order),
    /// the timers stop and the state variables return to 0. Counters and SDU ids go on.
    pub fn reestablish(&mut self, discarded: &mut Vec<u64>) {
        discarded.extend(self.sdus.iter().filter(|s| !s.done).map(|s| s.id));
        let (cfg, next_id, counters) = (self.cfg, self.next_id, self.counters);
        if let Ok(fresh) = AmTx::new(cfg) {
            *self = fresh;
        }
        self.next_id = next_id;
        self.counters = counters;
    }

    fn index(&self, sn: u64) -> Option<usize> {
        let i = sn.checked_sub(self.tx_next_ack)?;
        if i < self.sdus.len() as u64 {
            Some(i as usize)
        } else {
            None
        }
    }

    fn sdu(&self, sn: u64) -> Option<&TxSdu> {
        self.index(sn).map(|i| &self.sdus[i])
    }

    /// No new SDU can be sent: the next one falls outside the transmitting window.
    fn stalled(&self) -> bool {
        self.next_new < self.tx_next && self.next_new >= self.tx_next_ack + self.window
    }

    /// The next retransmission PDU that fits in `room`, its bytes taken off the queue.
    fn next_retx(&mut self, room: u32) -> Option<AmPdu> {
        let hdr_bits = self.cfg.sn_bits;
        loop {
            let sn = *self.retx_sns.first()?;
            let Some(idx) = self.index(sn) else {
                self.retx_sns.remove(&sn);
                continue;
            };
            let s = &mut self.sdus[idx];
            let Some(&(a, b)) = s.retx.ranges().first() else {
                self.retx_sns.remove(&sn);
                continue;
            };
            let header = am_header_bytes(hdr_bits, a);
            if room <= header {
                return None;
            }
            let take = (b - a).min(room - header);
            s.retx.remove(a, a + take);
            let segment = UmSegment { sdu_id: s.id, sdu_bytes: s.size, offset: a, len: take };
            if s.retx.is_empty() {
                self.retx_sns.remove(&sn);
            }
            self.retx_bytes -= take as u64;
            return Some(AmPdu { sn, segment, header_bytes: header, poll: false, retransmission: true });
        }
    }

    /// The next PDU of new data that fits in `room` and in the window, its bytes marked sent.
    fn next_new(&mut self, room: u32) -> Option<AmPdu> {
        if self.next_new >= self.tx_next || self.stalled() {
            return None;
        }
        let sn = self.next_new;
        let idx = self.index(sn)?;
        let hdr_bits = self.cfg.sn_bits;
        let s = &mut self.sdus[idx];
        let header = am_header_bytes(hdr_bits, s.sent);
        if room <= header {
            return None;
        }
        let take = (s.size - s.sent).min(room - header);
        let segment = UmSegment { sdu_id: s.id, sdu_bytes: s.size, offset: s.sent, len: take };
        s.sent += take;
        if s.sent == s.size {
            self.next_new += 1;
        }
        self.new_bytes -= take as u64;
        Some(AmPdu { sn, segment, header_bytes: header, poll: false, retransmission: false })
    }

    /// Sets the poll bit (§5.3.3.2), updates POLL_SN and t-PollRetransmit, counts, and submits.
    fn submit(&mut self, mut pdu: AmPdu, now_us: u64, out: &mut Vec<AmPdu>) {
        let mut poll = self.poll_pending;
        if !pdu.retransmission {
            self.pdu_without_poll = self.pdu_without_poll.saturating_add(1);
            self.byte_without_poll += pdu.segment.len as u64;
            poll |= self.cfg.poll_pdu.is_some_and(|p| self.pdu_without_poll >= p);
            poll |= self.cfg.poll_byte.is_some_and(|b| self.byte_without_poll >= b);
        }
        let buffers_empty = self.next_new == self.tx_next && self.retx_sns.is_empty();
        poll |= buffers_empty || self.stalled();
        self.highest_sent = Some(self.highest_sent.map_or(pdu.sn, |h| h.max(pdu.sn)));
        if poll {
            pdu.poll = true;
            self.pdu_without_poll = 0;
            self.byte_without_poll = 0;
            self.poll_pending = false;
            self.poll_sn = self.highest_sent.unwrap_or(pdu.sn);
            self.poll_timer_us = Some(now_us.saturating_add(self.cfg.t_poll_retransmit_us));
            self.counters.polls += 1;
        }
        self.counters.pdus += 1;
        self.counters.header_bytes += pdu.header_bytes as u64;
        if pdu.retransmission {
            self.counters.retx_pdus += 1;
            self.counters.retx_bytes += pdu.segment.len as u64;
        } else {
            self.counters.new_bytes += pdu.segment.len as u64;
        }
        out.push(pdu);
    }

    /// Considers `ranges` of SDU `sn` for retransmission (§5.3.2): RETX_COUNT is set to 0 the
    /// first time, else incremented once per round if some of these bytes were not pending
    /// already; at maxRetxThreshold the SDU is given up.
    fn consider_for_retx(&mut self, sn: u64, ranges: &[(u32, u32)], failed: &mut Vec<u64>) {
        let Some(idx) = self.index(sn) else { return };
        let round = self.round;
        let max = self.cfg.max_retx_threshold;
        let s = &mut self.sdus[idx];
        let mut added = 0u64;
        for &(a, b) in ranges {
            added += s.retx.insert(a, b.min(s.sent)) as u64;
        }
        if added == 0 {
            return;
        }
        self.retx_bytes += added;
        let count = match s.retx_count {
            None => 0,
            Some(c) if s.counted_at != round => c.saturating_add(1),
            Some(c) => c,
        };
        s.retx_count = Some(count);
        s.counted_at = round;
        if count >= max {
            failed.push(s.id);
            self.counters.failed_sdus += 1;
            self.finish(sn);
        } else {
            self.retx_sns.insert(sn);
        }
    }

    /// SDU `sn` is acknowledged or given up: it leaves every queue.
    fn finish(&mut self, sn: u64) {
        let Some(idx) = self.index(sn) else { return };
        let s = &mut self.sdus[idx];
        if s.done {
            return;
        }
        s.done = true;
        self.retx_bytes -= s.retx.total();
        s.retx.clear();
        self.new_bytes -= (s.size - s.sent) as u64;
        s.sent = s.size;
        self.retx_sns.remove(&sn);
        self.held -= 1;
        if self.next_new == sn {
            self.next_new += 1;
        }
    }

    /// TX_Next_Ack moves to the first SDU neither acknowledged nor given up.
    fn advance_ack(&mut self) {
        while self.sdus.front().is_some_and(|s| s.done) {
            self.sdus.pop_front();
            self.tx_next_ack += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::AmNack;
    use super::*;

    fn cfg() -> AmConfig {
        AmConfig { poll_pdu: None, poll_byte: None, ..AmConfig::nr_default(100_000) }
    }

    #[test]
    fn new_data_is_segmented_with_so_headers() {
        let mut tx = AmTx::new(cfg()).unwrap();
        let id = tx.enqueue(1000, 0).unwrap().unwrap();
        let mut out = Vec::new();
        tx.pull(403, 0, &mut out);
        tx.pull(3, 0, &mut out); // too small for a header and a byte
        tx.pull(505, 0, &mut out);
        tx.pull(200, 0, &mut out);
        let shape: Vec<_> = out.iter().map(|p| (p.segment.offset, p.segment.len, p.header_bytes, p.poll)).collect();
        assert_eq!(shape, vec![(0, 400, 3, false), (400, 500, 5, false), (900, 100, 5, true)]);
        assert!(out.iter().all(|p| p.sn == 0 && p.segment.sdu_id == id && !p.retransmission));
        assert_eq!((tx.poll_sn(), tx.poll_timeout()), (0, Some(45_000)));
        let c = tx.counters();
        assert_eq!((c.pdus, c.new_bytes, c.header_bytes, c.polls), (3, 1000, 13, 1));
    }

    #[test]
    fn a_stalled_window_resends_the_highest_sn_on_expiry_even_with_retransmissions_pending() {
        let mut tx = AmTx::new(AmConfig { sn_bits: 12, ..cfg() }).unwrap();
        for _ in 0..2049 {
            tx.enqueue(10, 0).unwrap();
        }
        let (mut out, mut acked, mut failed) = (Vec::new(), Vec::new(), Vec::new());
        tx.pull(1_000_000, 0, &mut out);
        assert_eq!((out.len(), out[2047].poll, tx.stalled()), (2048, true, true));
        tx.on_status(1_000, &AmStatus { ack_sn: 1, nacks: vec![AmNack { sn: 0, so: None }] }, &mut acked, &mut failed);
        assert_eq!((tx.tx_next_ack(), tx.poll_timeout()), (0, Some(45_000)));
        assert_eq!(tx.handle_timeout(45_000), None);
        out.clear();
        tx.pull(1_000_000, 45_000, &mut out);
        let shape: Vec<_> = out.iter().map(|p| (p.sn, p.retransmission, p.poll)).collect();
        assert_eq!(shape, vec![(0, true, true), (2047, true, true)], "stalled: every PDU polls");
    }

    #[test]
    fn retx_count_counts_once_per_status_and_not_while_pending() {
        let mut tx = AmTx::new(AmConfig { max_retx_threshold: 2, ..cfg() }).unwrap();
        tx.enqueue(1000, 0).unwrap();
        let (mut out, mut acked, mut failed) = (Vec::new(), Vec::new(), Vec::new());
        tx.pull(2000, 0, &mut out);
        // Two NACKs of the same SDU in one STATUS: RETX_COUNT = 0.
        let st = AmStatus { ack_sn: 1, nacks: vec![AmNack { sn: 0, so: Some((0, 100)) }, AmNack { sn: 0, so: Some((500, 600)) }] };
        tx.on_status(1, &st, &mut acked, &mut failed);
        assert_eq!((tx.sdus[0].retx_count, tx.retx_bytes), (Some(0), 200));
        // The same NACK again before the retransmission: already pending, not counted.
        tx.on_status(2, &st, &mut acked, &mut failed);
        assert_eq!(tx.sdus[0].retx_count, Some(0));
        out.clear();
        tx.pull(2000, 3, &mut out);
        assert_eq!(out.iter().map(|p| (p.segment.offset, p.segment.len)).collect::<Vec<_>>(), vec![(0, 100), (500, 100)]);
        tx.on_status(4, &st, &mut acked, &mut failed);
        assert_eq!((tx.sdus[0].retx_count, failed.len()), (Some(1), 0));
        out.clear();
        tx.pull(2000, 5, &mut out);
        tx.on_status(6, &st, &mut acked, &mut failed);
        assert_eq!(failed, vec![0]);
        assert_eq!((tx.tx_next_ack(), tx.unacked_sdus(), tx.status(6).queued_bytes), (1, 0, 0));
        assert!(acked.is_empty());
    }
}
