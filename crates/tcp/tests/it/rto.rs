//! RFC 6298 timer values on scripted RTT samples, and the backoff seen on the wire.
use crate::support;

use multiconn_cc::{RttEstimator, RttVarRule};
use multiconn_core::{Dur, Time};
use multiconn_tcp::rto::RtoTimer;
use multiconn_transport::profile::RtoRule;
use support::*;

#[test]
fn backoff_doubles_and_clamps_on_scripted_samples() {
    let (min, max) = (ms(200), ms(3000));
    let mut rtt = RttEstimator::new(ms(1000), RttVarRule::Rfc9002);
    let mut t = RtoTimer::new(ms(1), min, max, ms(1000));
    // No sample: the initial RTO, doubling up to max_rto.
    let seq: Vec<Dur> = (0..4)
        .map(|_| {
            let r = t.rto(&rtt);
            t.on_expired();
            r
        })
        .collect();
    assert_eq!(seq, vec![ms(1000), ms(2000), ms(3000), ms(3000)]);
    // Samples 300, 260, 500 ms (Karn-valid): backoff cleared; RTO = SRTT + 4·RTTVAR per §2.3.
    let mut srtt = 0u64;
    let mut rttvar = 0u64;
    for (i, s) in [300u64, 260, 500].iter().enumerate() {
        let s_ns = s * 1_000_000;
        rtt.update(Dur(s_ns), Dur::ZERO);
        t.reset_backoff();
        if i == 0 {
            srtt = s_ns;
            rttvar = s_ns / 2;
        } else {
            rttvar = (3 * rttvar + srtt.abs_diff(s_ns)) / 4;
            srtt = (7 * srtt + s_ns) / 8;
        }
        let base = Dur(srtt + 4 * rttvar).max(min).min(max);
        assert_eq!(t.rto(&rtt), base, "sample {i}");
    }
    // 300 → 900 ms; 260 → 295 + 4·162.5 = 945 ms; 500 → ... then doubling clamps at 3 s.
    let base = t.rto(&rtt);
    t.on_expired();
    assert_eq!(t.rto(&rtt), Dur(2 * base.0).min(max));
    t.on_expired();
    assert_eq!(t.rto(&rtt), Dur(4 * base.0).min(max));
    t.on_expired();
    assert_eq!(t.rto(&rtt), max);
    // A tiny RTT is floored at min_rto, and its backoff starts from there.
    let mut fast = RttEstimator::new(ms(1000), RttVarRule::Rfc9002);
    fast.update(ms(1), Dur::ZERO);
    t.reset_backoff();
    assert_eq!(t.rto(&fast), min);
    t.on_expired();
    assert_eq!(t.rto(&fast), ms(400));
}

fn retransmission_gaps(max_rto: Dur, rule: RtoRule) -> Vec<Dur> {
    let mut p = params(download(100_000));
    p.profile.tcp.as_mut().unwrap().rack_tlp = false;
    p.profile.recovery.max_rto = max_rto;
    p.profile.recovery.rto_rule = rule;
    let mut h = Harness::new(&p, ms(10));
    // Black hole for the server's data once the handshake is done.
    h.s2c.drop = Some(Box::new(|s, _| s.len > 0));
    h.run_until(Time(8_000_000_000), |_| false);
    let tx: Vec<Time> = h
        .s2c
        .log
        .iter()
        .filter(|(_, s, _)| s.seq == 1 && s.len > 0)
        .map(|(t, _, _)| *t)
        .collect();
    tx.windows(2).map(|w| w[1] - w[0]).collect()
}

#[test]
fn the_head_is_retransmitted_with_exponential_backoff() {
    // SYN-ACK RTT sample 20 ms → RTO = max(200 ms, 20 + 4·10) = 200 ms.
    let gaps = retransmission_gaps(ms(120_000), RtoRule::Rfc6298);
    assert_eq!(&gaps[..5], &[ms(200), ms(400), ms(800), ms(1600), ms(3200)]);
    // Linux: 20 + max(4·10, 200) = 220 ms.
    let gaps = retransmission_gaps(ms(120_000), RtoRule::Linux);
    assert_eq!(&gaps[..4], &[ms(220), ms(440), ms(880), ms(1760)]);
    let gaps = retransmission_gaps(ms(1000), RtoRule::Rfc6298);
    assert_eq!(
        &gaps[..6],
        &[ms(200), ms(400), ms(800), ms(1000), ms(1000), ms(1000)]
    );
}
