//! RFC 6298 timer values on scripted RTT samples, the backoff seen on the wire, and Linux's
//! restart of the timer when the head segment is retransmitted.
use crate::support;

use multiconn_cc::{RttEstimator, RttVarRule};
use multiconn_core::{Dur, Rate, Time};
use multiconn_link::scripted::Verdict;
use multiconn_tcp::rto::RtoTimer;
use multiconn_testkit::Route;
use multiconn_transport::profile::{RtoRestart, RtoRule};
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

/// A 1 MB download over a 40 Mbit/s, 10 ms path whose segment 40 is lost, and whose
/// connection then stalls twice as behind a PDCP reordering timer: the segments sent after the
/// loss reach the client `stall` late, so the sender learns of the hole that much later; the
/// head's retransmission and everything after it reach the client `late` late. Returns the
/// sequence number of segment 40, the times the server sent it, the ACKs (time, cumulative
/// ACK) that reached the server, and the server's timeouts.
fn stalled_head_retransmission(restart: RtoRestart, stall: Dur, late: Dur) -> (u64, Vec<Time>, Vec<(Time, u64)>, u64) {
    let mut p = params(download(1_000_000));
    p.profile.cc.hystart = false;
    p.profile.recovery.rto_restart = restart;
    let mut h = tcp_pair(&p, path(deep(Rate(40_000_000), ms(10)), fast(ms(10))));
    let head = response_seq(h.server.mss(), 40);
    let mut head_sent = 0;
    h.script(0, Route::ToClient, move |_, pkt| {
        let s = segment(pkt);
        if s.len > 0 && s.seq == head {
            head_sent += 1;
            if head_sent == 1 {
                return Verdict::Drop;
            }
        }
        match head_sent {
            0 => Verdict::Pass,
            1 => Verdict::Delay(stall),
            _ => Verdict::Delay(late),
        }
    });
    run_to_finish(&mut h, Time(20_000_000_000));
    assert_eq!(delivered_bytes(&h.client_events), 1_000_000);
    let tx = sent(&h, Route::ToClient).iter().filter(|(_, s)| s.seq == head && s.len > 0).map(|(t, _)| *t).collect();
    let acks = delivered(&h, Route::ToServer).iter().map(|(t, s)| (*t, s.ack)).collect();
    (head, tx, acks, h.server.sender().timeouts())
}

#[test]
fn retransmitting_the_head_restarts_the_rto_with_the_linux_rule() {
    let (stall, late) = (ms(150), ms(150));
    // When an ACK first covered `seq`; the highest cumulative ACK by `t`.
    let covers = |acks: &[(Time, u64)], seq: u64| acks.iter().find(|(_, a)| *a > seq).map(|(t, _)| *t).unwrap();
    let before = |acks: &[(Time, u64)], t: Time| acks.iter().filter(|(at, _)| *at <= t).map(|(_, a)| *a).max().unwrap();

    // Restarted by advancing ACKs only: the timer runs from the last ACK that advanced, before
    // the stall, and expires while the head's retransmission is still on its way.
    let (head, tx, acks, timeouts) = stalled_head_retransmission(RtoRestart::Ack, stall, late);
    assert_eq!((tx.len(), timeouts), (3, 1), "the head sent {tx:?}");
    let head_acked = covers(&acks, head);
    assert!(tx[2] < head_acked, "the go-back retransmission at {} precedes the ACK of the head at {head_acked}", tx[2]);
    let last_advance = acks.iter().filter(|(t, a)| *t <= tx[1] && *a == before(&acks, tx[1])).map(|(t, _)| *t).next().unwrap();
    let since = tx[2] - last_advance;
    // The Linux RTO is srtt + max(4·rttvar, 200 ms): more than 200 ms after the last ACK
    // that advanced, less than 200 ms after the head's retransmission.
    assert!(since > ms(200), "{since:?} after the last advancing ACK");
    assert!(tx[2] - tx[1] < ms(200), "{:?} after the head's retransmission", tx[2] - tx[1]);

    // Linux: retransmitting the head restarts the timer, which then outlasts the late
    // retransmission; the ACK of the head arrives after the old deadline, without a timeout.
    let (_, tx_on, acks_on, timeouts_on) = stalled_head_retransmission(RtoRestart::HeadRetransmit, stall, late);
    assert_eq!(tx_on, tx[..2], "the same until the old deadline");
    assert_eq!(timeouts_on, 0);
    let head_acked_on = covers(&acks_on, head);
    assert!(head_acked_on > tx[2], "the head acknowledged at {head_acked_on}, after the old deadline {}", tx[2]);
    assert!(head_acked_on - tx_on[1] < ms(200 + 20));
}
