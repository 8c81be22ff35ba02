//! RLC AM (TS 38.322): a transmitter–receiver pair over a link with fixed delays (and, in the
//! property tests, losses and reordering): exactly-once delivery and byte conservation, repair
//! of a lost PDU within one status round, re-segmented retransmissions, maxRetxThreshold,
//! polling, t-StatusProhibit, window stall, in-order (LTE) against NR delivery, and bad input.

use std::collections::{BTreeMap, VecDeque};

use multiconn_cell::rlc::UmSegment;
use multiconn_cell::rlc_am::{am_header_bytes, AmConfig, AmNack, AmPdu, AmRx, AmStatus, AmTx};
use multiconn_cell::CellError;
use proptest::prelude::*;

const MS: u64 = 1_000;

/// A transmitter and a receiver joined by a link: PDUs arrive `dl_delay_us` after they are
/// pulled (plus a jitter the drop rule may add), STATUS PDUs `ul_delay_us` after they are sent.
struct Link {
    tx: AmTx,
    rx: AmRx,
    dl_delay_us: u64,
    ul_delay_us: u64,
    pdus: Vec<(u64, AmPdu)>,
    statuses: VecDeque<(u64, AmStatus)>,
    /// (time, SDU id) of every delivery.
    delivered: Vec<(u64, u64)>,
    acked: Vec<u64>,
    failed: Vec<u64>,
    /// (time, PDU) of every PDU pulled, dropped or not.
    sent: Vec<(u64, AmPdu)>,
    /// (time, STATUS) of every STATUS sent.
    status_log: Vec<(u64, AmStatus)>,
    /// Every how many STATUS PDUs one is lost (0: none).
    lose_status_every: usize,
    lost_statuses: u64,
}

impl Link {
    fn new(cfg: AmConfig, dl_delay_us: u64, ul_delay_us: u64) -> Link {
        Link {
            tx: AmTx::new(cfg).unwrap(),
            rx: AmRx::new(cfg).unwrap(),
            dl_delay_us,
            ul_delay_us,
            pdus: Vec::new(),
            statuses: VecDeque::new(),
            delivered: Vec::new(),
            acked: Vec::new(),
            failed: Vec::new(),
            sent: Vec::new(),
            status_log: Vec::new(),
            lose_status_every: 0,
            lost_statuses: 0,
        }
    }

    /// One TTI at `now`: arrivals, receiver timers and STATUS, STATUS arrivals, the
    /// transmitter's timer, then a grant of `grant` bytes. `fate(pdu)` is `None` to lose the
    /// PDU, else its extra delay.
    fn step(&mut self, now: u64, grant: u32, fate: &mut dyn FnMut(&AmPdu) -> Option<u64>) {
        let mut d = Vec::new();
        let (due, later): (Vec<_>, Vec<_>) = self.pdus.drain(..).partition(|(at, _)| *at <= now);
        self.pdus = later;
        for (_, p) in due {
            self.rx.receive(now, p, &mut d);
        }
        while self.rx.timer_expiry_us().is_some_and(|at| at <= now) {
            self.rx.expire(now);
        }
        if let Some(st) = self.rx.poll_status(now) {
            self.status_log.push((now, st.clone()));
            if self.lose_status_every == 0 || self.status_log.len() % self.lose_status_every != 0 {
                self.statuses.push_back((now + self.ul_delay_us, st));
            } else {
                self.lost_statuses += 1;
            }
        }
        while self.statuses.front().is_some_and(|(at, _)| *at <= now) {
            let (_, st) = self.statuses.pop_front().unwrap();
            self.tx.on_status(now, &st, &mut self.acked, &mut self.failed);
        }
        if let Some(id) = self.tx.handle_timeout(now) {
            self.failed.push(id);
        }
        let mut out = Vec::new();
        self.tx.pull(grant, now, &mut out);
        for p in out {
            assert!(p.size() <= grant);
            self.sent.push((now, p));
            if let Some(extra) = fate(&p) {
                self.pdus.push((now + self.dl_delay_us + extra, p));
            }
        }
        self.delivered.extend(d.into_iter().map(|id| (now, id)));
    }

    /// Nothing in flight and nothing held.
    fn idle(&self) -> bool {
        self.pdus.is_empty() && self.statuses.is_empty() && self.tx.unacked_sdus() == 0 && !self.rx.status_triggered()
    }

    fn delivered_at(&self, id: u64) -> Option<u64> {
        self.delivered.iter().find(|(_, i)| *i == id).map(|(t, _)| *t)
    }
}

fn lossless(_: &AmPdu) -> Option<u64> {
    Some(0)
}

fn cfg() -> AmConfig {
    AmConfig::nr_default(1 << 20)
}

/// The byte ranges of SDU `id` sent, first transmissions and retransmissions apart.
fn ranges_sent(link: &Link, id: u64) -> [Vec<(u32, u32)>; 2] {
    let mut first = Vec::new();
    let mut retx = Vec::new();
    for (_, p) in &link.sent {
        if p.segment.sdu_id == id {
            let r = (p.segment.offset, p.segment.offset + p.segment.len);
            if p.retransmission {
                retx.push(r);
            } else {
                first.push(r);
            }
        }
    }
    [first, retx]
}

/// Checks that every accepted SDU was delivered once and acknowledged once, that the first
/// transmissions cover each SDU's bytes exactly once, and the counters agree.
fn check_exactly_once(link: &Link, sizes: &BTreeMap<u64, u32>, in_order: bool) -> Result<(), TestCaseError> {
    let mut got: Vec<u64> = link.delivered.iter().map(|(_, id)| *id).collect();
    if in_order {
        prop_assert!(got.windows(2).all(|w| w[0] < w[1]), "in order: {:?}", got);
    }
    got.sort_unstable();
    let want: Vec<u64> = sizes.keys().copied().collect();
    prop_assert_eq!(&got, &want);
    let mut acked = link.acked.clone();
    acked.sort_unstable();
    prop_assert_eq!(&acked, &want);
    prop_assert!(link.failed.is_empty());
    let mut covered: BTreeMap<u64, u32> = BTreeMap::new();
    for (_, p) in link.sent.iter().filter(|(_, p)| !p.retransmission) {
        let c = covered.entry(p.segment.sdu_id).or_insert(0);
        prop_assert_eq!(*c, p.segment.offset, "first transmissions go in order, without overlap");
        *c += p.segment.len;
        prop_assert_eq!(p.header_bytes, am_header_bytes(link.tx.config().sn_bits, p.segment.offset));
    }
    prop_assert_eq!(&covered, sizes);
    let (tc, rc) = (link.tx.counters(), link.rx.counters());
    prop_assert_eq!(tc.new_bytes, sizes.values().map(|&n| n as u64).sum::<u64>());
    prop_assert_eq!(tc.acked_sdus, sizes.len() as u64);
    prop_assert_eq!(rc.delivered_sdus, sizes.len() as u64);
    prop_assert_eq!(rc.status_reports, tc.status_reports + link.lost_statuses);
    prop_assert_eq!(rc.status_reports, link.status_log.len() as u64);
    prop_assert_eq!(link.tx.status(0).queued_bytes, 0);
    Ok(())
}

const GRANTS: [u32; 5] = [40, 300, 1_500, 9_000, 120];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// (1) Lossless: every SDU delivered and acknowledged exactly once, bytes conserved, no
    /// retransmission, for random SDU sizes, grants and both delivery modes.
    #[test]
    fn lossless_link_delivers_every_sdu_once(
        sizes in prop::collection::vec(1u32..4_000, 1..150),
        grant_shift in 0usize..5,
        sn_bits in prop::sample::select(vec![12u8, 18]),
        in_order in any::<bool>(),
    ) {
        let mut link = Link::new(AmConfig { sn_bits, in_order, ..cfg() }, 4 * MS, 3 * MS);
        let mut accepted = BTreeMap::new();
        let mut t = 0;
        while t < 20_000 * MS {
            if let Some(&n) = sizes.get((t / MS) as usize) {
                let id = link.tx.enqueue(n, t).unwrap().unwrap();
                accepted.insert(id, n);
            }
            link.step(t, GRANTS[((t / MS) as usize + grant_shift) % GRANTS.len()], &mut lossless);
            if t / MS >= sizes.len() as u64 && link.idle() {
                break;
            }
            t += MS;
        }
        prop_assert!(link.idle(), "not done by {} ms", t / MS);
        check_exactly_once(&link, &accepted, in_order)?;
        prop_assert_eq!(link.tx.counters().retx_pdus, 0);
        prop_assert_eq!(link.rx.counters().duplicate_pdus, 0);
    }

    /// (1b) The same over a lossy link that also reorders PDUs (HARQ) and loses STATUS PDUs:
    /// still exactly once, in SN order in the in-order mode; every loss repaired.
    #[test]
    fn lossy_reordering_link_still_delivers_every_sdu_once(
        sizes in prop::collection::vec(1u32..3_000, 1..120),
        loss_pct in 0u64..30,
        seed in any::<u64>(),
        in_order in any::<bool>(),
        lose_status_every in prop::sample::select(vec![0usize, 2, 3, 7]),
    ) {
        let mut link = Link::new(AmConfig { max_retx_threshold: 32, in_order, ..cfg() }, 4 * MS, 3 * MS);
        link.lose_status_every = lose_status_every;
        let mut rng = seed | 1;
        let mut fate = move |_: &AmPdu| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            if rng % 100 < loss_pct { None } else { Some((rng >> 8) % 8 * MS) }
        };
        let mut accepted = BTreeMap::new();
        let mut t = 0;
        while t < 60_000 * MS {
            if let Some(&n) = sizes.get((t / MS) as usize) {
                accepted.insert(link.tx.enqueue(n, t).unwrap().unwrap(), n);
            }
            link.step(t, GRANTS[(t / MS) as usize % GRANTS.len()], &mut fate);
            if t / MS >= sizes.len() as u64 && link.idle() {
                break;
            }
            t += MS;
        }
        prop_assert!(link.idle(), "not done by {} ms", t / MS);
        check_exactly_once(&link, &accepted, in_order)?;
        let lost = link.sent.len() as u64 - link.rx.counters().pdus;
        prop_assert!(lost == 0 || link.tx.counters().retx_pdus > 0);
    }
}

/// Feeds 1000-byte SDUs for `n` ms (one per ms, or all `n` at 0 as a backlog) through grants
/// of `grant` bytes, losing the first transmission of SN `lost` only; runs until idle.
fn one_loss(cfg: AmConfig, n: u64, lost: u64, backlog: bool, grant: u32) -> Link {
    let mut link = Link::new(cfg, 4 * MS, 4 * MS);
    let mut fate = |p: &AmPdu| if p.sn == lost && !p.retransmission { None } else { Some(0) };
    let mut t = 0;
    while t < 5_000 * MS {
        if backlog && t == 0 {
            for _ in 0..n {
                link.tx.enqueue(1000, 0).unwrap().unwrap();
            }
        } else if !backlog && t / MS < n {
            link.tx.enqueue(1000, t).unwrap().unwrap();
        }
        link.step(t, grant, &mut fate);
        if t / MS >= n && link.idle() {
            break;
        }
        t += MS;
    }
    assert!(link.idle());
    link
}

/// (2) A lost PDU amid traffic: the gap starts t-Reassembly, its expiry sends a STATUS with the
/// NACK, the retransmission arrives: repaired in t-Reassembly + the two delays.
#[test]
fn a_lost_pdu_is_repaired_after_t_reassembly() {
    // A backlog of 100 SDUs, one PDU per 1 ms TTI (pollPDU 64: SNs 63 and 99 poll).
    let link = one_loss(cfg(), 100, 10, true, 1003);
    // SN 10 sent at 10 ms, lost; SN 11 arrives at 15 ms: t-Reassembly runs to 50 ms; the
    // STATUS reaches the transmitter at 54 ms, the retransmission the receiver at 58 ms.
    let first = link.sent.iter().find(|(_, p)| p.sn == 10).unwrap().0;
    assert_eq!(first, 10 * MS);
    let nack = link.status_log.iter().find(|(_, s)| s.nacks.iter().any(|n| n.sn == 10)).unwrap();
    assert_eq!(nack.0, 15 * MS + 35 * MS);
    assert_eq!(nack.1, AmStatus { ack_sn: 47, nacks: vec![AmNack { sn: 10, so: None }] });
    let retx: Vec<_> = link.sent.iter().filter(|(_, p)| p.retransmission).collect();
    assert_eq!(retx.len(), 1);
    assert_eq!((retx[0].0, retx[0].1.sn, retx[0].1.segment.len), (54 * MS, 10, 1000));
    assert_eq!(link.delivered_at(10), Some(58 * MS));
    assert_eq!(link.delivered.len(), 100);
    // 35 ms of t-Reassembly + 4 ms back + 4 ms forth after the PDU's expected arrival (14 ms),
    // plus the 1 ms until the next PDU revealed the gap.
    assert_eq!(58 * MS - (first + 4 * MS), 35 * MS + 8 * MS + MS);
    let (tc, rc) = (link.tx.counters(), link.rx.counters());
    assert_eq!((tc.retx_pdus, tc.retx_bytes, tc.failed_sdus, tc.acked_sdus, tc.polls), (1, 1000, 0, 100, 2));
    assert_eq!((rc.reassembly_expiries, rc.duplicate_pdus, rc.delivered_sdus, rc.status_reports), (1, 0, 100, 3));
}

/// (2c) When every PDU polls (the buffers empty after each), STATUS PDUs sent while the
/// retransmission is in flight NACK the SDU again and it is resent again (38.322 allows it):
/// t-StatusProhibit at least the round trip keeps it to one retransmission.
#[test]
fn t_status_prohibit_avoids_duplicate_retransmissions() {
    let link = one_loss(cfg(), 100, 10, false, 2000);
    assert!(link.tx.counters().retx_pdus > 1);
    assert!(link.rx.counters().duplicate_pdus > 0);
    assert_eq!(link.delivered_at(10), Some(58 * MS));
    let link = one_loss(AmConfig { t_status_prohibit_us: 10 * MS, ..cfg() }, 100, 10, false, 2000);
    assert_eq!((link.tx.counters().retx_pdus, link.rx.counters().duplicate_pdus), (1, 0));
    assert_eq!(link.delivered.len(), 100);
    let d = link.delivered_at(10).unwrap();
    assert!((58 * MS..=68 * MS).contains(&d), "{d}");
}

/// (2b/5) The last PDU (the poll) lost: no gap is seen, t-PollRetransmit's expiry resends the
/// last SDU with a poll and the STATUS then acknowledges everything.
#[test]
fn a_lost_last_pdu_is_repaired_by_t_poll_retransmit() {
    let link = one_loss(cfg(), 5, 4, false, 2000);
    // Each PDU empties the buffers: each polls; SN 4's poll is lost, 45 ms later the timer
    // resends it, polling.
    let polls: Vec<_> = link.sent.iter().filter(|(_, p)| p.poll).map(|(t, p)| (*t / MS, p.sn, p.retransmission)).collect();
    assert_eq!(polls, vec![(0, 0, false), (1, 1, false), (2, 2, false), (3, 3, false), (4, 4, false), (49, 4, true)]);
    assert_eq!(link.delivered_at(4), Some(53 * MS));
    assert_eq!(link.rx.counters().reassembly_expiries, 0);
    let tc = link.tx.counters();
    assert_eq!((tc.poll_retransmit_expiries, tc.retx_pdus, tc.polls, tc.acked_sdus), (1, 1, 6, 5));
    // Every poll that arrived was answered; the last STATUS acknowledges all.
    let acks: Vec<u64> = link.status_log.iter().map(|(_, s)| s.ack_sn).collect();
    assert_eq!(acks, vec![1, 2, 3, 4, 5]);
    assert!(link.status_log.iter().all(|(_, s)| s.nacks.is_empty()));
    assert_eq!(link.tx.poll_timeout(), None);
}

/// (3) A NACKed SDU retransmitted through small grants is re-segmented (SO headers); a segment
/// of it lost again gives a NACK with that byte range; the SDU is reassembled.
#[test]
fn retransmissions_are_resegmented_and_nacks_carry_byte_ranges() {
    let c = AmConfig { poll_pdu: None, poll_byte: None, ..cfg() };
    let (mut tx, mut rx) = (AmTx::new(c).unwrap(), AmRx::new(c).unwrap());
    let (mut out, mut d, mut acked, mut failed) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    tx.enqueue(1000, 0).unwrap();
    tx.enqueue(200, 0).unwrap();
    tx.pull(2000, 0, &mut out);
    assert_eq!(out.iter().map(|p| (p.sn, p.size(), p.poll)).collect::<Vec<_>>(), vec![(0, 1003, false), (1, 203, true)]);
    // SN 0 lost; SN 1 arrives: gap; t-Reassembly expires; the STATUS NACKs SN 0 whole.
    rx.receive(MS, out[1], &mut d);
    assert_eq!(d, vec![1]);
    rx.expire(36 * MS);
    let st = rx.poll_status(36 * MS).unwrap();
    assert_eq!(st, AmStatus { ack_sn: 2, nacks: vec![AmNack { sn: 0, so: None }] });
    tx.on_status(37 * MS, &st, &mut acked, &mut failed);
    assert_eq!(acked, vec![1]);
    assert_eq!((tx.tx_next_ack(), tx.status(37 * MS).queued_bytes), (0, 1000));
    // The retransmission through 300-byte grants: 297 bytes, then segments with SO (5 bytes).
    let mut segs = Vec::new();
    for _ in 0..4 {
        out.clear();
        tx.pull(300, 38 * MS, &mut out);
        assert_eq!(out.len(), 1);
        segs.push(out[0]);
    }
    let shape: Vec<_> = segs.iter().map(|p| (p.segment.offset, p.segment.len, p.header_bytes, p.retransmission)).collect();
    assert_eq!(shape, vec![(0, 297, 3, true), (297, 295, 5, true), (592, 295, 5, true), (887, 113, 5, true)]);
    assert!(segs[3].poll && !segs[2].poll, "the last one empties the buffers: it polls");
    // The second segment is lost again: the poll's STATUS NACKs bytes 297..592 only.
    for p in [segs[0], segs[2], segs[3]] {
        rx.receive(40 * MS, p, &mut d);
    }
    let st = rx.poll_status(40 * MS).unwrap();
    assert_eq!(st, AmStatus { ack_sn: 2, nacks: vec![AmNack { sn: 0, so: Some((297, 592)) }] });
    assert_eq!(st.size_bytes(18), 3 + 3 + 4);
    tx.on_status(41 * MS, &st, &mut acked, &mut failed);
    out.clear();
    tx.pull(2000, 42 * MS, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].segment, out[0].header_bytes), (UmSegment { sdu_id: 0, sdu_bytes: 1000, offset: 297, len: 295 }, 5));
    // A duplicate byte range is discarded; the missing one completes the SDU.
    rx.receive(43 * MS, segs[2], &mut d);
    assert_eq!(rx.counters().duplicate_pdus, 1);
    rx.receive(43 * MS, out[0], &mut d);
    assert_eq!(d, vec![1, 0]);
    let st = rx.poll_status(43 * MS).unwrap();
    assert_eq!(st, AmStatus { ack_sn: 2, nacks: vec![] });
    tx.on_status(44 * MS, &st, &mut acked, &mut failed);
    assert_eq!(acked, vec![1, 0]);
    assert!(failed.is_empty());
    assert_eq!((tx.tx_next_ack(), tx.unacked_sdus(), tx.poll_timeout()), (2, 0, None));
    let tc = tx.counters();
    assert_eq!((tc.retx_pdus, tc.retx_bytes), (5, 1295));
}

/// (4) An SDU lost at every transmission is given up after maxRetxThreshold retransmissions:
/// `failed` names it once; the other SDUs go through.
#[test]
fn max_retx_threshold_gives_an_sdu_up_once() {
    for max in [1u8, 4, 8] {
        let mut link = Link::new(AmConfig { max_retx_threshold: max, ..cfg() }, 4 * MS, 4 * MS);
        let mut fate = |p: &AmPdu| if p.sn == 3 { None } else { Some(0) };
        for t in 0..3_000u64 {
            if t < 20 {
                link.tx.enqueue(500, t * MS).unwrap();
            }
            link.step(t * MS, 5000, &mut fate);
        }
        assert_eq!(link.failed, vec![3], "max {max}");
        let [first, retx] = ranges_sent(&link, 3);
        assert_eq!((first.len(), retx.len()), (1, max as usize), "max {max}: one transmission and {max} retransmissions");
        let tc = link.tx.counters();
        assert_eq!((tc.failed_sdus, tc.acked_sdus, tc.retx_pdus), (1, 19, max as u64));
        assert_eq!(link.tx.unacked_sdus(), 0);
        assert_eq!(link.delivered.len(), 19);
        // The receiver still waits for SN 3 (RRC would now re-establish both ends).
        assert_eq!(link.rx.rx_next(), 3);
    }
}

/// (5) pollPDU: with a backlog, every 64th new PDU polls; POLL_SN and t-PollRetransmit follow.
#[test]
fn poll_pdu_polls_every_64th_pdu() {
    let mut tx = AmTx::new(AmConfig { poll_byte: None, ..cfg() }).unwrap();
    for _ in 0..300 {
        tx.enqueue(100, 0).unwrap();
    }
    let mut out = Vec::new();
    for t in 0..200u64 {
        tx.pull(103, t * MS, &mut out);
    }
    let polled: Vec<u64> = out.iter().filter(|p| p.poll).map(|p| p.sn).collect();
    assert_eq!(polled, vec![63, 127, 191]);
    assert_eq!((tx.poll_sn(), tx.poll_timeout()), (191, Some(191 * MS + 45 * MS)));
    assert_eq!(tx.counters().polls, 3);
    // pollByte: 2000 bytes without a poll → every 20th 100-byte PDU.
    let mut tx = AmTx::new(AmConfig { poll_pdu: None, poll_byte: Some(2000), ..cfg() }).unwrap();
    for _ in 0..50 {
        tx.enqueue(100, 0).unwrap();
    }
    out.clear();
    tx.pull(49 * 103, 0, &mut out);
    assert_eq!(out.iter().filter(|p| p.poll).map(|p| p.sn).collect::<Vec<_>>(), vec![19, 39]);
}

/// (5) The buffers-empty poll, and t-PollRetransmit's expiry: the last SDU resent with a poll,
/// again at each expiry while no STATUS comes, until maxRetxThreshold gives it up.
#[test]
fn poll_on_empty_buffers_and_t_poll_retransmit() {
    let mut tx = AmTx::new(AmConfig { max_retx_threshold: 2, ..cfg() }).unwrap();
    for _ in 0..3 {
        tx.enqueue(100, 0).unwrap();
    }
    let mut out = Vec::new();
    tx.pull(1000, 0, &mut out);
    assert_eq!(out.iter().map(|p| p.poll).collect::<Vec<_>>(), vec![false, false, true]);
    assert_eq!((tx.poll_sn(), tx.poll_timeout()), (2, Some(45 * MS)));
    assert_eq!(tx.handle_timeout(44 * MS), None);
    assert_eq!(tx.counters().poll_retransmit_expiries, 0);
    // Expiry: SN 2 (the highest sent) is resent, polling.
    assert_eq!(tx.handle_timeout(45 * MS), None);
    assert_eq!(tx.status(45 * MS).queued_bytes, 100);
    out.clear();
    tx.pull(1000, 46 * MS, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].sn, out[0].poll, out[0].retransmission, out[0].segment.len), (2, true, true, 100));
    assert_eq!(tx.poll_timeout(), Some(91 * MS));
    // No STATUS again: RETX_COUNT 1, resent; then 2 = maxRetxThreshold: given up.
    assert_eq!(tx.handle_timeout(91 * MS), None);
    out.clear();
    tx.pull(1000, 91 * MS, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(tx.handle_timeout(136 * MS), Some(2));
    let c = tx.counters();
    assert_eq!((c.poll_retransmit_expiries, c.retx_pdus, c.polls, c.failed_sdus), (3, 2, 3, 1));
    // Nothing to resend: the poll waits for the next PDU (new data).
    out.clear();
    tx.pull(1000, 137 * MS, &mut out);
    assert!(out.is_empty());
    tx.enqueue(50, 138 * MS).unwrap();
    tx.pull(1000, 138 * MS, &mut out);
    assert_eq!((out[0].sn, out[0].poll), (3, true));
    // A STATUS acknowledging POLL_SN stops t-PollRetransmit.
    let (mut acked, mut failed) = (Vec::new(), Vec::new());
    tx.on_status(140 * MS, &AmStatus { ack_sn: 4, nacks: vec![] }, &mut acked, &mut failed);
    assert_eq!((acked, tx.poll_timeout(), tx.tx_next_ack()), (vec![0, 1, 3], None, 4));
}

/// (5) A STATUS that NACKs POLL_SN also stops t-PollRetransmit; one that stops below it does not.
#[test]
fn a_status_covering_poll_sn_stops_t_poll_retransmit() {
    let mut tx = AmTx::new(cfg()).unwrap();
    for _ in 0..4 {
        tx.enqueue(100, 0).unwrap();
    }
    let mut out = Vec::new();
    tx.pull(1000, 0, &mut out);
    assert_eq!(tx.poll_sn(), 3);
    let (mut acked, mut failed) = (Vec::new(), Vec::new());
    tx.on_status(MS, &AmStatus { ack_sn: 2, nacks: vec![] }, &mut acked, &mut failed);
    assert_eq!((tx.poll_timeout(), tx.tx_next_ack()), (Some(45 * MS), 2));
    tx.on_status(2 * MS, &AmStatus { ack_sn: 4, nacks: vec![AmNack { sn: 3, so: None }] }, &mut acked, &mut failed);
    assert_eq!((tx.poll_timeout(), tx.tx_next_ack(), acked.clone()), (None, 3, vec![0, 1, 2]));
    // NACKs out of range (acknowledged already, or never sent) are ignored.
    let nacks = vec![AmNack { sn: 0, so: None }, AmNack { sn: 3, so: Some((0, 50)) }, AmNack { sn: 50, so: None }];
    tx.on_status(3 * MS, &AmStatus { ack_sn: 99, nacks }, &mut acked, &mut failed);
    assert_eq!(tx.status(3 * MS).queued_bytes, 100, "only SN 3 waits for retransmission, once");
    assert_eq!((acked.len(), failed.len(), tx.tx_next_ack()), (3, 0, 3));
}

/// (6) t-StatusProhibit: a second trigger within it waits; one STATUS when it expires, however
/// many triggers came meanwhile.
#[test]
fn t_status_prohibit_holds_the_second_status() {
    let c = AmConfig { t_status_prohibit_us: 20 * MS, ..cfg() };
    let (mut tx, mut rx) = (AmTx::new(c).unwrap(), AmRx::new(c).unwrap());
    let mut d = Vec::new();
    let mut polls = Vec::new();
    for t in 0..3u64 {
        tx.enqueue(100, t * MS).unwrap();
        let mut out = Vec::new();
        tx.pull(1000, t * MS, &mut out);
        assert!(out[0].poll, "each PDU empties the buffers");
        polls.push(out[0]);
    }
    rx.receive(0, polls[0], &mut d);
    assert_eq!(rx.poll_status(0).unwrap().ack_sn, 1);
    assert_eq!(rx.timer_expiry_us(), Some(20 * MS));
    rx.receive(5 * MS, polls[1], &mut d);
    rx.receive(6 * MS, polls[2], &mut d);
    assert!(rx.status_triggered());
    assert_eq!(rx.poll_status(6 * MS), None);
    assert_eq!(rx.poll_status(19 * MS), None);
    rx.expire(20 * MS);
    assert_eq!(rx.timer_expiry_us(), None);
    assert_eq!(rx.poll_status(20 * MS), Some(AmStatus { ack_sn: 3, nacks: vec![] }));
    assert_eq!(rx.poll_status(21 * MS), None, "one STATUS for the two triggers");
    assert_eq!(rx.counters().status_reports, 2);
    assert_eq!(rx.timer_expiry_us(), Some(40 * MS));
}

/// A poll in a PDU beyond a gap waits for RX_Highest_Status to pass it (§5.3.4): its STATUS
/// goes out at t-Reassembly's expiry, once.
#[test]
fn a_poll_beyond_a_gap_waits_for_rx_highest_status() {
    let (mut tx, mut rx) = (AmTx::new(cfg()).unwrap(), AmRx::new(cfg()).unwrap());
    let mut d = Vec::new();
    for _ in 0..3 {
        tx.enqueue(100, 0).unwrap();
    }
    let mut out = Vec::new();
    tx.pull(1000, 0, &mut out);
    rx.receive(MS, out[0], &mut d);
    rx.receive(MS, out[2], &mut d); // SN 2 polls; SN 1 is missing
    assert!(out[2].poll && !rx.status_triggered());
    assert_eq!(rx.poll_status(MS), None);
    rx.expire(36 * MS);
    assert_eq!(rx.poll_status(36 * MS), Some(AmStatus { ack_sn: 3, nacks: vec![AmNack { sn: 1, so: None }] }));
    assert_eq!(rx.poll_status(37 * MS), None);
}

/// (7) Window stall: with a 12-bit SN and no STATUS, at most 2048 SNs beyond TX_Next_Ack go
/// out, the last one polls; t-PollRetransmit resends it; a STATUS reopens the window.
#[test]
fn the_window_stalls_at_2048_sns_and_polls() {
    let mut tx = AmTx::new(AmConfig { sn_bits: 12, poll_pdu: None, poll_byte: None, ..cfg() }).unwrap();
    for _ in 0..3000 {
        tx.enqueue(10, 0).unwrap();
    }
    let mut out = Vec::new();
    for t in 0..10u64 {
        tx.pull(100_000, t * MS, &mut out);
    }
    assert_eq!(out.len(), 2048);
    assert_eq!(out.iter().map(|p| p.sn).max(), Some(2047));
    assert_eq!(out.iter().filter(|p| p.poll).map(|p| p.sn).collect::<Vec<_>>(), vec![2047]);
    assert_eq!(out[0].header_bytes, 2);
    let st = tx.status(10 * MS);
    assert_eq!((st.queued_sdus, st.queued_bytes), (952, 9520), "stalled data still counts");
    // The timer: SN 2047 again, polling.
    tx.handle_timeout(45 * MS);
    out.clear();
    tx.pull(100_000, 45 * MS, &mut out);
    assert_eq!(out.iter().map(|p| (p.sn, p.poll, p.retransmission)).collect::<Vec<_>>(), vec![(2047, true, true)]);
    // A STATUS acknowledging 100 SNs lets 100 more out.
    let (mut acked, mut failed) = (Vec::new(), Vec::new());
    tx.on_status(50 * MS, &AmStatus { ack_sn: 100, nacks: vec![] }, &mut acked, &mut failed);
    assert_eq!((acked.len(), tx.tx_next_ack()), (100, 100));
    out.clear();
    tx.pull(100_000, 51 * MS, &mut out);
    assert_eq!(out.len(), 100);
    assert_eq!((out[0].sn, out[99].sn, out[99].poll), (2048, 2147, true));
    // The receiver's window: an SN 2048 above RX_Next is outside it.
    let mut rx = AmRx::new(*tx.config()).unwrap();
    let mut d = Vec::new();
    rx.receive(0, out[0], &mut d);
    assert_eq!((rx.counters().out_of_window_pdus, d.len()), (1, 0));
}

/// (8) In-order (LTE) mode holds the SDUs after a gap until it is repaired; NR delivers them
/// at once.
#[test]
fn in_order_mode_holds_sdus_behind_a_gap() {
    for in_order in [false, true] {
        let c = AmConfig { in_order, ..cfg() };
        let (mut tx, mut rx) = (AmTx::new(c).unwrap(), AmRx::new(c).unwrap());
        for _ in 0..4 {
            tx.enqueue(100, 0).unwrap();
        }
        let mut out = Vec::new();
        tx.pull(1000, 0, &mut out);
        let mut d = Vec::new();
        for i in [0, 2, 3] {
            rx.receive(MS, out[i], &mut d);
        }
        if in_order {
            assert_eq!(d, vec![0]);
        } else {
            assert_eq!(d, vec![0, 2, 3]);
        }
        rx.receive(2 * MS, out[1], &mut d);
        if in_order {
            assert_eq!(d, vec![0, 1, 2, 3]);
        } else {
            assert_eq!(d, vec![0, 2, 3, 1]);
        }
        assert_eq!((rx.rx_next(), rx.counters().delivered_sdus, rx.reassembly_timeout()), (4, 4, None));
    }
}

/// Re-establishment discards what both ends hold and restarts the SNs from 0.
#[test]
fn reestablishment_discards_and_restarts() {
    let (mut tx, mut rx) = (AmTx::new(cfg()).unwrap(), AmRx::new(cfg()).unwrap());
    for _ in 0..3 {
        tx.enqueue(100, 0).unwrap();
    }
    let mut out = Vec::new();
    tx.pull(103, 0, &mut out);
    let mut d = Vec::new();
    rx.receive(MS, out[0], &mut d);
    let mut discarded = Vec::new();
    tx.reestablish(&mut discarded);
    rx.reestablish();
    assert_eq!(discarded, vec![0, 1, 2]);
    assert_eq!((tx.tx_next(), tx.unacked_sdus(), tx.poll_timeout(), tx.status(0).queued_bytes), (0, 0, None, 0));
    assert_eq!(tx.enqueue(100, 2 * MS).unwrap(), Some(3), "SDU ids go on");
    out.clear();
    tx.pull(1000, 2 * MS, &mut out);
    assert_eq!(out[0].sn, 0);
    rx.receive(3 * MS, out[0], &mut d);
    assert_eq!(d, vec![0, 3]);
    assert_eq!(tx.counters().offered_sdus, 4);
}

/// The buffer: capacity in bytes not yet sent; status counts retransmissions and headers.
#[test]
fn buffer_capacity_and_status() {
    let mut tx = AmTx::new(AmConfig { capacity_bytes: 1000, ..cfg() }).unwrap();
    assert!(tx.enqueue(600, MS).unwrap().is_some());
    assert_eq!(tx.enqueue(401, MS).unwrap(), None);
    assert!(tx.enqueue(400, 3 * MS).unwrap().is_some(), "exactly full");
    let st = tx.status(5 * MS);
    assert_eq!((st.queued_bytes, st.queued_sdus, st.tx_queue_bytes, st.hol_delay_us), (1000, 2, 1006, 4 * MS));
    let mut out = Vec::new();
    tx.pull(303, 5 * MS, &mut out);
    let st = tx.status(5 * MS);
    assert_eq!((st.queued_bytes, st.tx_queue_bytes, st.hol_delay_us), (700, 708, 4 * MS), "a segment: SO in the estimate");
    assert!(tx.enqueue(300, 6 * MS).unwrap().is_some(), "sent bytes free room, though not acknowledged");
    out.clear();
    tx.pull(10_000, 7 * MS, &mut out);
    let (mut acked, mut failed) = (Vec::new(), Vec::new());
    tx.on_status(8 * MS, &AmStatus { ack_sn: 3, nacks: vec![AmNack { sn: 0, so: Some((100, 200)) }] }, &mut acked, &mut failed);
    assert_eq!(acked, vec![1, 2]);
    let st = tx.status(9 * MS);
    assert_eq!((st.queued_bytes, st.queued_sdus, st.tx_queue_bytes, st.hol_delay_us), (100, 1, 105, 8 * MS));
    let c = tx.counters();
    assert_eq!((c.offered_sdus, c.offered_bytes, c.dropped_sdus, c.dropped_bytes, c.new_bytes), (4, 1701, 1, 401, 1300));
}

/// (9) Every configuration field out of range names itself; a zero-byte (or too long) SDU is
/// refused; nothing panics on odd input.
#[test]
fn bad_parameters_name_their_field() {
    let ok = cfg();
    let field = |c: AmConfig| match AmTx::new(c).map(|_| ()).unwrap_err() {
        CellError::OutOfRange { field, .. } | CellError::Invalid { field, .. } => field,
    };
    let cases: Vec<(AmConfig, &str)> = vec![
        (AmConfig { capacity_bytes: 0, ..ok }, "rlc.max_tx_buffer_bytes"),
        (AmConfig { sn_bits: 10, ..ok }, "rlc.sn_field_length"),
        (AmConfig { t_poll_retransmit_us: 999, ..ok }, "rlc.t_poll_retransmit"),
        (AmConfig { t_poll_retransmit_us: 4_000_001, ..ok }, "rlc.t_poll_retransmit"),
        (AmConfig { poll_pdu: Some(3), ..ok }, "rlc.poll_pdu"),
        (AmConfig { poll_pdu: Some(65_537), ..ok }, "rlc.poll_pdu"),
        (AmConfig { poll_byte: Some(999), ..ok }, "rlc.poll_byte"),
        (AmConfig { poll_byte: Some(40_000_001), ..ok }, "rlc.poll_byte"),
        (AmConfig { max_retx_threshold: 5, ..ok }, "rlc.max_retx_threshold"),
        (AmConfig { max_retx_threshold: 0, ..ok }, "rlc.max_retx_threshold"),
        (AmConfig { t_reassembly_us: 200_001, ..ok }, "rlc.t_reassembly"),
        (AmConfig { t_status_prohibit_us: 2_400_001, ..ok }, "rlc.t_status_prohibit"),
    ];
    for (c, name) in cases {
        assert_eq!(field(c), name);
        assert!(AmRx::new(c).is_err());
    }
    let msg = AmTx::new(AmConfig { max_retx_threshold: 5, ..ok }).unwrap_err().to_string();
    assert!(msg.contains("rlc.max_retx_threshold") && msg.contains("1, 2, 3, 4, 6, 8, 16, 32"), "{msg}");
    // The range ends are allowed.
    for c in [
        AmConfig { sn_bits: 12, t_poll_retransmit_us: 1_000, poll_pdu: Some(4), poll_byte: Some(1_000), max_retx_threshold: 1, ..ok },
        AmConfig { t_poll_retransmit_us: 4_000_000, poll_pdu: Some(65_536), poll_byte: None, max_retx_threshold: 32, ..ok },
        AmConfig { t_reassembly_us: 0, t_status_prohibit_us: 2_400_000, ..ok },
        AmConfig { t_reassembly_us: 200_000, ..ok },
    ] {
        assert_eq!(c.validate(), Ok(()));
    }
    let mut tx = AmTx::new(ok).unwrap();
    for bad in [0, 65_536] {
        match tx.enqueue(bad, 0).unwrap_err() {
            CellError::OutOfRange { field, .. } => assert_eq!(field, "sdu_bytes"),
            e => panic!("{e}"),
        }
    }
    assert_eq!(tx.counters().offered_sdus, 0);
    // Odd input does not panic: a STATUS before anything was sent, grants of 0 bytes, a
    // timeout that does not run.
    let (mut acked, mut failed) = (Vec::new(), Vec::new());
    tx.on_status(0, &AmStatus { ack_sn: u64::MAX, nacks: vec![AmNack { sn: u64::MAX, so: Some((9, 3)) }] }, &mut acked, &mut failed);
    tx.enqueue(10, 0).unwrap();
    let mut out = Vec::new();
    tx.pull(0, 0, &mut out);
    tx.pull(3, 0, &mut out);
    assert!(out.is_empty());
    assert_eq!(tx.handle_timeout(u64::MAX), None);
    let mut rx = AmRx::new(ok).unwrap();
    rx.expire(u64::MAX);
    let seg = UmSegment { sdu_id: 0, sdu_bytes: 10, offset: u32::MAX, len: 2 };
    rx.receive(0, AmPdu { sn: u64::MAX, segment: seg, header_bytes: 3, poll: true, retransmission: false }, &mut Vec::new());
    assert_eq!(rx.counters().malformed_pdus, 1);
}
