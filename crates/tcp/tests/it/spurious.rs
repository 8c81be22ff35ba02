//! Reordering: a delayed (not lost) segment is retransmitted, the D-SACK of the duplicate
//! marks the retransmission spurious and the window reduction is undone.
use crate::support;

use multiconn_core::{Rate, Time};
use multiconn_link::scripted::Verdict;
use multiconn_testkit::Route;
use multiconn_transport::Endpoint;
use support::*;

#[test]
fn reordered_segment_counts_as_spurious_and_the_reduction_is_undone() {
    let mut p = params(download(1_000_000));
    p.profile.cc.hystart = false;
    let mut h = tcp_pair(&p, path(deep(Rate(40_000_000), ms(10)), fast(ms(10))));
    let mss = h.server.mss();
    let late = response_seq(mss, 40);
    // The first transmission of segment 40 arrives 30 ms after it would have.
    h.script(0, Route::ToClient, on_segments(move |s, n| if s.seq == late && n == 1 { Verdict::Delay(ms(30)) } else { Verdict::Pass }));
    let mut cwnd_before = 0;
    let mut cwnd_reduced = 0;
    h.drive_until_by(Time(20_000_000_000), |h| {
        let ev = h.server.sender().congestion_events();
        if ev == 0 {
            cwnd_before = h.server.sample().cwnd;
        } else if cwnd_reduced == 0 {
            cwnd_reduced = h.server.sample().cwnd;
        }
        h.client_finished()
    });
    assert_eq!(delivered_bytes(&h.client_events), 1_000_000);
    assert_eq!(h.link(0, Route::ToClient).counters().delayed, 1);
    assert_eq!(h.counters(0, Route::ToClient).lost(), 0, "reordered, never lost");
    let s = h.server.sample();
    assert_eq!((s.retransmissions, s.spurious_retransmissions), (1, 1), "{s:?}");
    assert_eq!(h.server.sender().congestion_events(), 1);
    assert!(cwnd_reduced < cwnd_before);
    assert_eq!(h.server.sender().undos(), 1);
    assert!(s.cwnd >= cwnd_before, "undo restores the window: {} < {cwnd_before}", s.cwnd);
}
