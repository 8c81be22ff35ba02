//! Loss recovery on a 1 MB download: SACK fast retransmit, burst loss, a lost retransmission,
//! tail loss, and the RTO's window collapse.
use crate::support;

use multiconn_core::{Rate, Time};
use multiconn_testkit::Route;
use multiconn_transport::{AppEvent, Endpoint};
use support::*;

const SIZE: u64 = 1_000_000;

fn harness(rack_tlp: bool) -> TcpPair {
    let mut p = params(download(SIZE));
    p.profile.tcp.as_mut().unwrap().rack_tlp = rack_tlp;
    // 40 Mbit/s keeps the window from exploding and spreads ACKs out; the queue never fills,
    // so the scripted drops are the only losses.
    tcp_pair(&p, path(deep(Rate(40_000_000), ms(10)), fast(ms(10))))
}

fn check_complete(h: &TcpPair) {
    assert_eq!(delivered_bytes(&h.client_events), SIZE);
    assert_eq!(h.client_events.last().unwrap().1, AppEvent::Finished);
    let after_finish = h.client_events.iter().skip_while(|(_, e)| *e != AppEvent::Finished).count();
    assert_eq!(after_finish, 1);
    // Every loss was a scripted one: nothing dropped inside the link, nothing refused but
    // what the script refused.
    let c = h.counters(0, Route::ToClient);
    assert_eq!(c.dropped, 0);
    assert_eq!(c.refused, h.link(0, Route::ToClient).counters().dropped);
}

fn clean_cwnd(rack: bool) -> u64 {
    let mut h = harness(rack);
    run_to_finish(&mut h, Time(20_000_000_000));
    h.server.sample().cwnd
}

#[test]
fn single_loss_is_repaired_by_fast_retransmit() {
    for rack in [true, false] {
        let mut h = harness(rack);
        let mss = h.server.mss();
        h.script(0, Route::ToClient, drop_first(vec![response_seq(mss, 40)]));
        run_to_finish(&mut h, Time(20_000_000_000));
        check_complete(&h);
        assert_eq!(h.counters(0, Route::ToClient).refused, 1);
        let s = h.server.sample();
        assert_eq!((s.retransmissions, s.spurious_retransmissions), (1, 0), "rack {rack}");
        assert_eq!(s.lost, 1);
        assert_eq!((h.server.sender().timeouts(), h.server.sender().congestion_events()), (0, 1), "rack {rack}");
        // Repaired about one round trip after the loss (20 ms RTT), long before min_rto.
        let tx: Vec<Time> =
            sent(&h, Route::ToClient).iter().filter(|(_, s)| s.seq == response_seq(mss, 40) && s.len > 0).map(|(t, _)| *t).collect();
        assert_eq!(tx.len(), 2);
        assert!(tx[1] - tx[0] < ms(40), "rack {rack}: {:?}", tx[1] - tx[0]);
        assert!(h.server.sample().cwnd < clean_cwnd(rack), "the window was reduced");
    }
}

#[test]
fn burst_loss_is_repaired_in_one_recovery_with_one_reduction() {
    for rack in [true, false] {
        let mut h = harness(rack);
        let mss = h.server.mss();
        let holes: Vec<u64> = [30, 31, 32, 35, 37].iter().map(|&k| response_seq(mss, k)).collect();
        h.script(0, Route::ToClient, drop_first(holes));
        let mut cwnd_before = 0;
        h.drive_until_by(Time(20_000_000_000), |h| {
            if h.server.sender().congestion_events() == 0 {
                cwnd_before = h.server.sample().cwnd;
            }
            h.client_finished()
        });
        check_complete(&h);
        let s = h.server.sample();
        assert_eq!((s.retransmissions, s.lost, s.spurious_retransmissions), (5, 5, 0), "rack {rack}");
        assert_eq!((h.server.sender().timeouts(), h.server.sender().congestion_events()), (0, 1), "rack {rack}");
        assert!(cwnd_before > 0);
    }
}

#[test]
fn lost_retransmission_is_recovered() {
    // With RACK the lost retransmission is detected by time; without it the RTO repairs it.
    for rack in [true, false] {
        let mut h = harness(rack);
        let mss = h.server.mss();
        h.script(0, Route::ToClient, drop_times(response_seq(mss, 50), 2));
        run_to_finish(&mut h, Time(20_000_000_000));
        check_complete(&h);
        let s = h.server.sample();
        assert_eq!(s.retransmissions, 2, "rack {rack}");
        assert_eq!(s.spurious_retransmissions, 0);
        let timeouts = h.server.sender().timeouts();
        if rack {
            assert_eq!(timeouts, 0, "RACK detects the lost retransmission");
        } else {
            assert_eq!(timeouts, 1);
        }
    }
}

#[test]
fn tail_loss_is_probed_with_rack_tlp_and_timed_out_without() {
    let last = |mss: u64| response_seq(mss, SIZE / mss);
    // RACK-TLP: the probe retransmits the last segment; no RTO.
    let mut h = harness(true);
    let mss = h.server.mss();
    h.script(0, Route::ToClient, drop_first(vec![last(mss)]));
    run_to_finish(&mut h, Time(20_000_000_000));
    check_complete(&h);
    assert_eq!(h.server.sender().timeouts(), 0);
    assert_eq!(h.server.sample().retransmissions, 1);
    // The probe repaired a real loss: TLP's congestion response follows the ACK beyond it, if
    // any; here the transfer ends at the probe, so the window stays.
    let mut h = harness(false);
    h.script(0, Route::ToClient, drop_first(vec![last(mss)]));
    let mut cwnd_after_rto = None;
    h.drive_until_by(Time(20_000_000_000), |h| {
        if cwnd_after_rto.is_none() && h.server.sender().timeouts() == 1 {
            cwnd_after_rto = Some(h.server.sample().cwnd);
        }
        h.client_finished()
    });
    check_complete(&h);
    assert_eq!(h.server.sender().timeouts(), 1);
    assert_eq!(cwnd_after_rto, Some(mss), "cwnd after RTO is one segment");
    assert_eq!(h.server.cc_state(), "slow_start");
}

#[test]
fn rto_retransmits_everything_not_sacked_go_back_n() {
    // Drop a whole window's tail and the head's retransmissions: the RTO re-sends from snd_una.
    let mut h = harness(false);
    let mss = h.server.mss();
    let drops: Vec<u64> = (20..30).map(|k| response_seq(mss, k)).collect();
    let first = drops[0];
    h.script(0, Route::ToClient, drop_when(move |s, n| (n == 1 && drops.contains(&s.seq)) || (s.seq == first && n <= 2)));
    run_to_finish(&mut h, Time(20_000_000_000));
    check_complete(&h);
    assert!(h.server.sender().timeouts() >= 1);
    // Segments received at the client exactly once except retransmissions.
    let s = h.server.sample();
    assert!(s.retransmissions >= 11, "{s:?}");
}
