//! The RLC UM transmission buffer: drop-tail with its own count, segmentation and headers,
//! head-of-line delay, byte conservation (also through HARQ) and bad input.

use std::collections::BTreeMap;

use multiconn_cell::rlc::{um_header_bytes, LENA_MAX_TX_BUFFER_BYTES, STUDY_MAX_TX_BUFFER_BYTES};
use multiconn_cell::{CellDropCause, DlMac, DlUeInput, MiCombining, Scheduler, SchedulerKind, UmPdu, UmTxBuffer};
use multiconn_core::rng::RngStream;
use proptest::prelude::*;

#[test]
fn an_sdu_that_does_not_fit_is_dropped_and_counted() {
    let mut b = UmTxBuffer::new(1000).unwrap();
    assert!(b.enqueue(600, 0).unwrap().is_some());
    assert_eq!(b.enqueue(600, 1).unwrap(), None);
    assert!(b.enqueue(400, 2).unwrap().is_some(), "exactly full is allowed");
    assert_eq!(b.enqueue(1, 3).unwrap(), None);
    let c = b.counters();
    assert_eq!((c.offered_sdus, c.offered_bytes, c.dropped_sdus, c.dropped_bytes), (4, 1601, 2, 601));
    assert_eq!(b.status(3).queued_bytes, 1000);
    // Sending frees room.
    let pdu = b.pull(502).unwrap();
    assert_eq!(pdu.data_bytes(), 500);
    assert!(b.enqueue(500, 4).unwrap().is_some());
    assert_eq!(CellDropCause::RlcBufferFull.name(), "rlc_buffer_full");
    assert_eq!((LENA_MAX_TX_BUFFER_BYTES, STUDY_MAX_TX_BUFFER_BYTES), (10_240, 524_288));
}

#[test]
fn headers_follow_36_322() {
    assert_eq!([1, 2, 3, 4, 5].map(um_header_bytes), [2, 4, 5, 7, 8]);
    // Three whole SDUs in one PDU: 2 fixed bytes and two 12-bit LIs.
    let mut b = UmTxBuffer::new(10_000).unwrap();
    for _ in 0..3 {
        b.enqueue(100, 0).unwrap();
    }
    let pdu = b.pull(1000).unwrap();
    assert_eq!((pdu.header_bytes, pdu.data_bytes(), pdu.segments.len()), (5, 300, 3));
    assert!(pdu.segments.iter().all(|s| s.ends_sdu()));
    // Too small for a header and a byte: nothing.
    b.enqueue(100, 0).unwrap();
    assert_eq!(b.pull(2), None);
    assert_eq!(b.pull(3).unwrap().data_bytes(), 1);
    // A data field over 2047 bytes cannot have a length indicator: it ends the PDU.
    let mut b = UmTxBuffer::new(10_000).unwrap();
    b.enqueue(3000, 0).unwrap();
    b.enqueue(100, 0).unwrap();
    let pdu = b.pull(5000).unwrap();
    assert_eq!((pdu.header_bytes, pdu.data_bytes()), (2, 3000));
    assert_eq!(b.pull(5000).unwrap().data_bytes(), 100);
    // Sequence numbers count PDUs modulo 1024.
    let mut b = UmTxBuffer::new(1 << 20).unwrap();
    b.enqueue(2000, 0).unwrap();
    let sns: Vec<u16> = (0..1030).map(|_| b.pull(3).unwrap().sn).collect();
    assert_eq!(&sns[1022..1026], &[1022, 1023, 0, 1]);
}

#[test]
fn an_sdu_split_over_several_tbs_reassembles() {
    let mut b = UmTxBuffer::new(10_000).unwrap();
    let id = b.enqueue(1500, 0).unwrap().unwrap();
    let mut pdus = Vec::new();
    while let Some(p) = b.pull(100) {
        assert!(p.size() <= 100);
        pdus.push(p);
    }
    assert_eq!(pdus.len(), 1500usize.div_ceil(98));
    let mut next = 0;
    for p in &pdus {
        assert_eq!(p.segments.len(), 1);
        let s = p.segments[0];
        assert_eq!((s.sdu_id, s.offset), (id, next));
        next += s.len;
    }
    assert_eq!(next, 1500);
    assert!(pdus.last().unwrap().segments[0].ends_sdu());
    assert_eq!(b.status(0).queued_bytes, 0);
}

#[test]
fn head_of_line_delay() {
    let mut b = UmTxBuffer::new(10_000).unwrap();
    assert_eq!(b.status(500).hol_delay_us, 0);
    b.enqueue(1000, 1_000).unwrap();
    b.enqueue(1000, 4_000).unwrap();
    let s = b.status(6_000);
    assert_eq!((s.hol_delay_us, s.queued_sdus, s.queued_bytes, s.tx_queue_bytes), (5_000, 2, 2000, 2004));
    // A part of the head SDU sent: it still heads the queue.
    b.pull(500).unwrap();
    assert_eq!(b.status(6_000).hol_delay_us, 5_000);
    // The rest of it sent (and part of the next): the next SDU's wait.
    b.pull(700).unwrap();
    assert_eq!(b.status(6_000).hol_delay_us, 2_000);
}

#[test]
fn bad_parameters_are_errors() {
    assert!(UmTxBuffer::new(0).is_err());
    assert!(UmTxBuffer::new(1 << 40).is_err());
    let mut b = UmTxBuffer::new(100).unwrap();
    assert!(b.enqueue(0, 0).is_err());
}

proptest! {
    #[test]
    fn bytes_are_conserved(cap in 1u64..20_000, ops in prop::collection::vec((any::<bool>(), 1u32..4000), 1..200)) {
        let mut b = UmTxBuffer::new(cap).unwrap();
        let mut sizes = BTreeMap::new();
        let mut got: BTreeMap<u64, u32> = BTreeMap::new();
        for (t, (push, n)) in ops.into_iter().enumerate() {
            if push {
                if let Some(id) = b.enqueue(n, t as u64).unwrap() {
                    sizes.insert(id, n);
                }
            } else if let Some(p) = b.pull(n) {
                prop_assert!(p.size() <= n);
                prop_assert_eq!(p.header_bytes, um_header_bytes(p.segments.len() as u32));
                for s in &p.segments {
                    let e = got.entry(s.sdu_id).or_insert(0);
                    prop_assert_eq!(*e, s.offset);
                    *e += s.len;
                }
            }
            let c = b.counters();
            let st = b.status(t as u64);
            prop_assert_eq!(c.offered_bytes, c.dropped_bytes + c.sent_bytes + st.queued_bytes);
            prop_assert!(st.queued_bytes <= cap);
        }
        for (id, n) in got {
            prop_assert!(n <= sizes[&id]);
        }
    }
}

#[test]
fn bytes_are_conserved_through_harq() {
    // Two UEs with RLC buffers fed 512-byte SDUs at a moderate SINR where HARQ retransmits and
    // sometimes drops: offered = dropped at RLC + delivered + lost in HARQ + still queued.
    let n_ues = 2;
    let mut mac: DlMac<UmPdu, MiCombining> = DlMac::new(
        Scheduler::new(SchedulerKind::ProportionalFair, 25, n_ues).unwrap(),
        MiCombining::default(),
        RngStream::derive(3, "mac"),
    );
    let mut rlc: Vec<UmTxBuffer> = (0..n_ues).map(|_| UmTxBuffer::new(20_000).unwrap()).collect();
    let mut ch = RngStream::derive(3, "channel");
    let (mut delivered, mut lost) = (0u64, 0u64);
    let cqi = vec![9u8; 13];
    for t in 0..3000u64 {
        if t < 2500 {
            for b in &mut rlc {
                for _ in 0..3 {
                    b.enqueue(512, t * 1000).unwrap();
                }
            }
        }
        let sinr: Vec<Vec<f64>> = (0..n_ues).map(|_| vec![-15.0 + 30.0 * ch.uniform(); 25]).collect();
        let status: Vec<u64> = rlc.iter().map(|b| b.status(t * 1000).tx_queue_bytes).collect();
        let ues: Vec<DlUeInput> = (0..n_ues).map(|u| DlUeInput { rbg_cqi: &cqi, sinr_db: &sinr[u], buffer_bytes: status[u] }).collect();
        let out = mac.tti(t, &ues, |u, bytes| rlc[u].pull(bytes)).unwrap();
        delivered += out.delivered.iter().map(|(_, p)| p.data_bytes() as u64).sum::<u64>();
        lost += out.lost.iter().map(|(_, p)| p.data_bytes() as u64).sum::<u64>();
    }
    let c = mac.counters();
    assert!(c.retransmissions > 0 && c.dropped_tbs > 0, "{c:?}");
    let mut offered = 0;
    let mut rest = 0;
    for b in &rlc {
        let k = b.counters();
        offered += k.offered_bytes;
        rest += k.dropped_bytes + b.status(0).queued_bytes;
        assert!(k.dropped_sdus > 0, "the load exceeds the cell");
    }
    // 500 TTIs without new SDUs and every HARQ process has settled.
    assert!((0..n_ues).all(|u| mac.harq(u).unwrap().pending_retx(u64::MAX).is_empty()));
    assert_eq!(offered, rest + delivered + lost);
}
