//! Delayed ACKs: one ACK per two full segments, a lone segment acknowledged after exactly
//! max_ack_delay.
use crate::support;

use multiconn_core::Time;
use multiconn_testkit::Route;
use multiconn_transport::Workload;
use support::*;

#[test]
fn one_ack_per_two_segments() {
    let mut h = fast_pair(&params(download(1_000_000)), ms(10));
    run_to_finish(&mut h, Time(10_000_000_000));
    let mss = h.client.mss();
    let acks: Vec<u64> = sent(&h, Route::ToServer)
        .iter()
        .filter(|(_, s)| s.len == 0 && !s.flags.syn && s.ack > 4001)
        .map(|(_, s)| s.ack)
        .collect();
    let gaps: Vec<u64> = acks.windows(2).map(|w| w[1] - w[0]).collect();
    let pairs = gaps.iter().filter(|&&g| g == 2 * mss).count();
    let big: Vec<_> = gaps.iter().enumerate().filter(|(_, &g)| g > 2 * mss).collect();
    assert!(big.is_empty(), "ACKs covering more than two segments: {big:?} of {acks:?}");
    assert!(pairs * 100 >= gaps.len() * 95, "{pairs} of {}", gaps.len());
    let data = sent(&h, Route::ToClient).iter().filter(|(_, s)| s.len > 0).count();
    assert!((acks.len() as f64 - data as f64 / 2.0).abs() < 10.0, "{} ACKs for {data} segments", acks.len());
}

#[test]
fn lone_segment_is_acked_after_max_ack_delay() {
    let w = Workload::Requests { count: 1, parallel: 1, request_size: 100, response_size: 500 };
    let mut h = fast_pair(&params(w), ms(10));
    run_to_finish(&mut h, Time(10_000_000_000));
    h.drive_to(Time(1_000_000_000));
    let (sent_at, last) = sent(&h, Route::ToClient).into_iter().rev().find(|(_, s)| s.len > 0).unwrap();
    assert_eq!(last.len, 500);
    // It crosses in its serialization (one nanosecond per byte) and 10 ms.
    let arrival = delivered(&h, Route::ToClient).into_iter().find(|(_, s)| *s == last).unwrap().0;
    assert_eq!(arrival, sent_at + fast_tx(u64::from(last.wire_size())) + ms(10));
    let ack = sent(&h, Route::ToServer).into_iter().find(|(t, s)| *t >= arrival && s.ack >= last.end()).unwrap();
    assert_eq!(ack.0, arrival + ms(40));
    assert_eq!(ack.1.len, 0);
}
