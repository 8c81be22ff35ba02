//! RFC 6298 timer values on scripted RTT samples, and the backoff seen on the wire.
use crate::support;

use multiconn_cc::{RttEstimator, RttVarRule};
use multiconn_core::{Dur, Time};
use multiconn_tcp::rto::RtoTimer;
use multiconn_testkit::Route;
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
    let mut h = fast_pair(&p, ms(10));
    // Black hole for the server's data once the handshake is done.
    h.script(0, Route::ToClient, drop_when(|s, _| s.len > 0));
    h.drive_to(Time(8_000_000_000));
    let tx: Vec<Time> = sent(&h, Route::ToClient).iter().filter(|(_, s)| s.seq == 1 && s.len > 0).map(|(t, _)| *t).collect();
    tx.windows(2).map(|w| w[1] - w[0]).collect()
}

/// The server's only RTT sample, from its SYN-ACK to the handshake ACK: 20 ms plus the
/// serialization, at one nanosecond per byte, of the SYN-ACK (60 B) and of the ACK, which
/// carries the ClientHello (300 B of data, 52 B of headers and timestamps).
fn syn_ack_rtt() -> Dur {
    ms(20) + fast_tx(60 + 352)
}

#[test]
fn the_head_is_retransmitted_with_exponential_backoff() {
    // RFC 6298: RTO = max(200 ms, SRTT + 4·RTTVAR) = max(200 ms, 3 · 20.000412 ms) = 200 ms.
    let gaps = retransmission_gaps(ms(120_000), RtoRule::Rfc6298);
    assert_eq!(&gaps[..5], &[ms(200), ms(400), ms(800), ms(1600), ms(3200)]);
    // Linux: SRTT + max(4·RTTVAR, 200 ms) = 20.000412 ms + 200 ms, then doubling.
    let base = syn_ack_rtt() + ms(200);
    let gaps = retransmission_gaps(ms(120_000), RtoRule::Linux);
    assert_eq!(&gaps[..4], &[base, Dur(2 * base.0), Dur(4 * base.0), Dur(8 * base.0)]);
    let gaps = retransmission_gaps(ms(1000), RtoRule::Rfc6298);
    assert_eq!(&gaps[..6], &[ms(200), ms(400), ms(800), ms(1000), ms(1000), ms(1000)]);
}
