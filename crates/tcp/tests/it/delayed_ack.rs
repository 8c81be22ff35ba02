//! Delayed ACKs: one ACK per two full segments, a lone segment acknowledged after exactly
//! max_ack_delay.
use crate::support;

use multiconn_core::Time;
use multiconn_transport::Workload;
use support::*;

#[test]
fn one_ack_per_two_segments() {
    let mut h = Harness::new(&params(download(1_000_000)), ms(10));
    h.run_to_finish(Time(10_000_000_000));
    let mss = h.client.mss();
    let acks: Vec<u64> = h
        .c2s
        .log
        .iter()
        .filter(|(_, s, _)| s.len == 0 && !s.flags.syn && s.ack > 4001)
        .map(|(_, s, _)| s.ack)
        .collect();
    let gaps: Vec<u64> = acks.windows(2).map(|w| w[1] - w[0]).collect();
    let pairs = gaps.iter().filter(|&&g| g == 2 * mss).count();
    let big: Vec<_> = gaps
        .iter()
        .enumerate()
        .filter(|(_, &g)| g > 2 * mss)
        .collect();
    assert!(
        big.is_empty(),
        "ACKs covering more than two segments: {big:?} of {acks:?}"
    );
    assert!(pairs * 100 >= gaps.len() * 95, "{pairs} of {}", gaps.len());
    let data = h.s2c.log.iter().filter(|(_, s, _)| s.len > 0).count();
    assert!(
        (acks.len() as f64 - data as f64 / 2.0).abs() < 10.0,
        "{} ACKs for {data} segments",
        acks.len()
    );
}

#[test]
fn lone_segment_is_acked_after_max_ack_delay() {
    let w = Workload::Requests {
        count: 1,
        parallel: 1,
        request_size: 100,
        response_size: 500,
    };
    let mut h = Harness::new(&params(w), ms(10));
    h.run_to_finish(Time(10_000_000_000));
    h.run_until(Time(1_000_000_000), |_| false);
    let (sent, last) = h
        .s2c
        .log
        .iter()
        .rev()
        .find(|(_, s, _)| s.len > 0)
        .map(|(t, s, _)| (*t, s.clone()))
        .unwrap();
    assert_eq!(last.len, 500);
    let arrival = sent + ms(10);
    let ack = h
        .c2s
        .log
        .iter()
        .find(|(t, s, _)| *t >= arrival && s.ack >= last.end())
        .unwrap();
    assert_eq!(ack.0, arrival + ms(40));
    assert_eq!(ack.1.len, 0);
}
