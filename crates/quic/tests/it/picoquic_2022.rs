//! The `picoquic-2022` profile end to end (reference `multi-operator.md` §6.1): an abandoned
//! path's data in flight is left to that path's own retransmission timer (and requeued at the
//! path's deletion), a reopened path starts afresh, ACKs take the path with the smallest
//! minimum RTT, picoquic's scheduler spreads data over both paths, and the study's four
//! controllers run.

use crate::support;

use multiconn_cc::CcKind;
use multiconn_core::Time;
use multiconn_quic::frame::Frame;
use multiconn_transport::profile::{AbandonRule, LinkEvents, MultipathKnobs, TransportKind};
use multiconn_transport::{AckPath, ConnectionParams, Endpoint, FailoverProfile, MultipathParams, PathAction, PathStats, Profile, Role, SchedulerKind, SchedulerOptions};
use support::*;

fn picoquic() -> Profile {
    Profile::builtin("picoquic-2022", TransportKind::Quic).unwrap()
}

/// A two-path download with `profile`'s multipath rules, as a scenario resolves them.
fn mp_params(profile: Profile, cc: CcKind, size: u64) -> ConnectionParams {
    let m = profile.multipath.clone().unwrap_or(MultipathKnobs {
        scheduler: SchedulerKind::MinRtt,
        ack_path: AckPath::Same,
        failover: FailoverProfile::MpQuic,
        abandon: AbandonRule::Requeue,
        link_events: LinkEvents::React,
    });
    let mut p = params(download(size), Time::ZERO);
    p.profile = profile;
    p.cc = cc;
    p.multipath = Some(MultipathParams {
        paths: 2,
        scheduler: m.scheduler,
        options: SchedulerOptions::default(),
        ack_path: m.ack_path,
        failover: m.failover,
        coupled: None,
        opened_later: Vec::new(),
    });
    p
}

/// Path 0: 10 Mbit/s, 20 ms one way; path 1: 10 Mbit/s, 30 ms one way; 100 ms queues.
fn two_paths(p: &ConnectionParams) -> QuicPair {
    quic_pair(p, &[router_path(ms(20)), router_path(ms(30))])
}

fn secs(s: f64) -> Time {
    Time::from_secs_f64(s)
}

fn stats(ep: &dyn Endpoint) -> Vec<PathStats> {
    let mut out = Vec::new();
    ep.path_stats(&mut out);
    out
}

fn frames(w: &Sent) -> impl Iterator<Item = &Frame> {
    w.datagram().packets().flat_map(|q| q.frames.iter())
}

/// Stream ranges (sent, offset, len) the server put on `route` from `from` on.
fn server_ranges(h: &QuicPair, route: u8, from: Time) -> Vec<(Time, u64, u64)> {
    h.log()
        .iter()
        .filter(|w| w.from == Role::Server && w.pkt.path == route && w.sent >= from)
        .flat_map(|w| stream_frames(&w.pkt).into_iter().map(move |(_, off, len, _)| (w.sent, off, len)))
        .filter(|r| r.2 > 0)
        .collect()
}

/// For each range the server sent on path 1 from `from` (and that the network dropped), the
/// time it went out again on path 0: (first sent, sent again).
fn resent_on_path0(h: &QuicPair, from: Time) -> Vec<(Time, Time)> {
    let again = server_ranges(h, 0, from);
    server_ranges(h, 1, from)
        .into_iter()
        .map(|(sent, off, _)| {
            let r = again.iter().find(|(t, o, l)| *t > sent && *o <= off && off < o + l).unwrap_or_else(|| panic!("offset {off} never resent on path 0"));
            (sent, r.0)
        })
        .collect()
}

/// Path 1 goes dark both ways at `at` and the client abandons it then; returns the harness
/// after the download.
fn abandon_a_dark_path(profile: Profile, at: Time) -> QuicPair {
    let size = 8_000_000;
    let mut h = two_paths(&mp_params(profile, CcKind::NewReno, size));
    h.run_until(at);
    h.script(1, Route::ToServer, lose_when(|_, _| true));
    h.script(1, Route::ToClient, lose_when(|_, _| true));
    h.client.on_path_action(h.now, PathAction::Abandon { path: 1 });
    h.run_until_finished(secs(30.0)).expect("finished over path 0");
    assert_eq!(h.client.stats().delivered, size);
    h
}

#[test]
fn an_abandoned_path_keeps_its_data_in_flight_until_its_own_timer_declares_it_lost() {
    // rfc9002 requeues at once: what path 1 had in flight goes out again on path 0 from the
    // moment the server hears of the abandonment (20 ms), oldest first, as path 0's full
    // window lets it: what was sent on path 1 after 1 s, the newest, within 0.2 s.
    let h = abandon_a_dark_path(rfc9002(), secs(1.0));
    let resent = resent_on_path0(&h, secs(1.0));
    assert!(resent.len() > 5, "{resent:?}");
    assert!(resent.iter().all(|(_, r)| *r >= secs(1.02) && *r < secs(1.2)), "{resent:?}");

    // picoquic-2022 leaves it in flight on the abandoned path: each range is declared lost by
    // path 1's retransmission timer T (about 200 ms here, its RTT with a queue) at its send time plus T, the first
    // one, and plus 2T for the others (the first loss began an episode, which doubles the
    // timer), long before the path's state is deleted (3 s after the server hears of it).
    // Path 1 goes dark at 0.95 s, while it sends (from 0.98 s its window is full, in
    // recovery from a queue overflow).
    let at = secs(0.95);
    let h = abandon_a_dark_path(picoquic(), at);
    let resent = resent_on_path0(&h, at);
    assert!(resent.len() > 5, "{resent:?}");
    let timer = h.server.path_recovery(1).retransmit_timeout();
    assert!(timer >= ms(60) && timer < ms(300), "{timer:?}");
    let (first_sent, first_again) = resent[0];
    assert!(first_again >= first_sent + timer && first_again < first_sent + timer + ms(10), "{resent:?}");
    for &(sent, again) in resent.iter().filter(|r| r.0 > first_sent) {
        assert!(again >= sent + timer + timer && again < at + ms(1000), "resent at {again:?}, sent at {sent:?}");
    }
    assert!(h.server.path_recovery(1).stats().timer_loss_episodes >= 1);
    let st = stats(&*h.server);
    assert_eq!((st[1].status, st[0].status), ("abandoned", "active"));
}

#[test]
fn without_a_timer_that_declares_loss_the_data_waits_for_the_deletion_of_the_path() {
    // RFC 9002 recovery never declares loss on a PTO, and an abandoned path sends no probes:
    // with `abandon = "drain"` the data waits for the path's deletion, 3 × max(PTO, 1 s)
    // after the server abandons it.
    let mut profile = rfc9002();
    profile.multipath = Some(MultipathKnobs {
        scheduler: SchedulerKind::MinRtt,
        ack_path: AckPath::Same,
        failover: FailoverProfile::MpQuic,
        abandon: AbandonRule::Drain,
        link_events: LinkEvents::React,
    });
    let h = abandon_a_dark_path(profile, secs(1.0));
    let resent = resent_on_path0(&h, secs(1.0));
    assert!(resent.len() > 5, "{resent:?}");
    // The server hears of the abandonment at 1.02 s (path 0, one way): deleted at 4.02 s,
    // then the data goes out on path 0 at its pace.
    let first = resent.iter().map(|r| r.1).min().unwrap();
    assert!(first >= secs(4.02) && first < secs(4.021), "{resent:?}");
    assert!(resent.iter().all(|(_, r)| *r < secs(4.1)), "{resent:?}");
    assert_eq!(h.server.path_recovery(1).bytes_in_flight(), 0, "nothing left once deleted");
}

#[test]
fn a_reopened_path_starts_with_fresh_congestion_state() {
    let size = 30_000_000;
    let mut h = two_paths(&mp_params(picoquic(), CcKind::Fast, size));
    h.run_until(secs(1.5));
    let grown = h.server.path_recovery(1).cwnd();
    assert!(grown > 4 * 15_360, "path 1 grew: {grown}");
    h.client.on_path_action(h.now, PathAction::Abandon { path: 1 });
    h.run_until(secs(2.0));
    h.client.on_path_action(h.now, PathAction::Open { path: 1, path_id: 2, backup: false });
    // The challenge reaches the server 30 ms later: path ID 2 starts from picoquic's initial
    // window (10 × 1536 bytes) in fast's initial phase, with no RTT sample.
    h.run_until(secs(2.0) + ms(31));
    let r = h.server.path_recovery(1);
    assert_eq!(stats(&*h.server)[1].path_id, Some(2));
    assert_eq!((r.cwnd(), r.controller().kind(), r.controller().state().name()), (15_360, CcKind::Fast, "slow_start"));
    assert!(!r.rtt().has_sample());
    h.run_until_finished(secs(60.0)).expect("finished");
    assert_eq!(h.client.stats().delivered, size);
}

#[test]
fn acks_take_the_path_with_the_smallest_min_rtt() {
    let mut h = two_paths(&mp_params(picoquic(), CcKind::NewReno, 6_000_000));
    h.run_until_finished(secs(30.0)).expect("finished");
    // Path 0 (20 ms) has the smaller minimum RTT: the client's PATH_ACKs of path 1 go there.
    let acks_of_1 = |route: u8| {
        h.log().iter().filter(|w| w.from == Role::Client && w.pkt.path == route && w.sent > secs(0.5) && frames(w).any(|f| matches!(f, Frame::PathAck { path: 1, .. }))).count()
    };
    assert!(acks_of_1(0) > 100, "{}", acks_of_1(0));
    assert_eq!(acks_of_1(1), 0);
    // With ack_path = "same" they travel on path 1 itself.
    let mut p = mp_params(picoquic(), CcKind::NewReno, 6_000_000);
    p.multipath.as_mut().unwrap().ack_path = AckPath::Same;
    let mut h = two_paths(&p);
    h.run_until_finished(secs(30.0)).expect("finished");
    assert!(h.log().iter().any(|w| w.from == Role::Client && w.pkt.path == 1 && frames(w).any(|f| matches!(f, Frame::PathAck { path: 1, .. }))));
}

#[test]
fn the_studys_four_controllers_run_and_picoquics_scheduler_uses_both_paths() {
    for cc in [CcKind::Bbr, CcKind::Cubic, CcKind::Fast, CcKind::NewReno] {
        let size = 10_000_000;
        let mut h = two_paths(&mp_params(picoquic(), cc, size));
        let done = h.run_until_finished(secs(60.0)).unwrap_or_else(|| panic!("{cc:?} finishes"));
        assert_eq!(h.client.stats().delivered, size, "{cc:?}");
        let on = |route: u8| server_ranges(&h, route, Time::ZERO).iter().map(|r| r.2).sum::<u64>();
        let (a, b) = (on(0), on(1));
        // Least recently used among the paths with room: both carry a real share.
        assert!(a > size / 4 && b > size / 4, "{cc:?}: {a} / {b}");
        // 80 Mbit over 20 Mbit/s takes 4 s at best.
        assert!(done < secs(12.0), "{cc:?}: {done:?}");
        assert_eq!(h.server.path_recovery(0).controller().kind(), cc);
    }
}

/// A route opened again before its abandoned path ID's deletion: the data the old ID still
/// held (not yet declared lost by its timer) goes out again, on the new path ID or the other
/// path, instead of vanishing with the old state.
#[test]
fn reopening_a_route_before_its_old_path_is_deleted_keeps_the_data_it_held() {
    let size = 8_000_000;
    let mut h = two_paths(&mp_params(picoquic(), CcKind::NewReno, size));
    h.run_until(secs(1.0));
    // What the server sends on path 1 in the next 20 ms is lost; then the path works again.
    let from = h.counters(1, Route::ToClient).sent;
    h.script(1, Route::ToClient, lose_when(move |i, _| i >= from && i < from + 12));
    h.client.on_path_action(h.now, PathAction::Abandon { path: 1 });
    h.run_until(secs(1.03));
    h.client.on_path_action(h.now, PathAction::Open { path: 1, path_id: 2, backup: false });
    h.run_until_finished(secs(30.0)).expect("finished: nothing held by the old path ID is lost for good");
    assert_eq!(h.client.stats().delivered, size);
    assert_eq!(stats(&*h.server)[1].path_id, Some(2));
}

