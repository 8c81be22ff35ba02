//! The multipath client's path management (draft-ietf-quic-multipath-21 §3, RFC 9000 §8.2):
//! validation that survives a lost PATH_CHALLENGE or PATH_RESPONSE and gives up on a dead path,
//! paths abandoned, opened again under a new path ID, opened late, and set to backup.

use crate::support;

use multiconn_cc::CcKind;
use multiconn_core::Time;
use multiconn_quic::frame::Frame;
use multiconn_transport::{AckPath, Endpoint, FailoverProfile, MultipathParams, PathAction, PathStats, Role, SchedulerKind, SchedulerOptions};
use support::*;

fn mp_params(size: u64, opened_later: Vec<u8>) -> multiconn_transport::ConnectionParams {
    let mut p = params(download(size), Time::ZERO);
    p.cc = CcKind::NewReno;
    p.multipath = Some(MultipathParams {
        paths: 2,
        scheduler: SchedulerKind::MinRtt,
        options: SchedulerOptions::default(),
        ack_path: AckPath::Same,
        failover: FailoverProfile::MpQuic,
        coupled: None,
        opened_later,
    });
    p
}

/// Path 0: 10 Mbit/s, 20 ms one way; path 1: 10 Mbit/s, 30 ms one way; 100 ms queues.
fn two_paths(size: u64, opened_later: Vec<u8>) -> QuicPair {
    quic_pair(&mp_params(size, opened_later), &[router_path(ms(20)), router_path(ms(30))])
}

fn stats(ep: &dyn Endpoint) -> Vec<PathStats> {
    let mut out = Vec::new();
    ep.path_stats(&mut out);
    out
}

fn secs(s: f64) -> Time {
    Time::from_secs_f64(s)
}

fn frames(w: &Sent) -> impl Iterator<Item = &Frame> {
    w.datagram().packets().flat_map(|q| q.frames.iter())
}

/// Times the client sent a PATH_CHALLENGE on route 1.
fn challenges(h: &QuicPair) -> Vec<Time> {
    h.log().iter().filter(|w| w.from == Role::Client && w.pkt.path == 1 && frames(w).any(|f| *f == Frame::PathChallenge)).map(|w| w.sent).collect()
}

/// STREAM bytes the server put on route 1 between `from` and `to`.
fn stream_bytes_on_path1(h: &QuicPair, from: Time, to: Time) -> u64 {
    h.log()
        .iter()
        .filter(|w| w.from == Role::Server && w.pkt.path == 1 && w.sent >= from && w.sent < to)
        .map(|w| stream_frames(&w.pkt).iter().map(|f| f.2).sum::<u64>())
        .sum()
}

#[test]
fn a_lost_path_challenge_is_sent_again_after_a_pto() {
    let mut h = two_paths(4_000_000, Vec::new());
    h.script(1, Route::ToServer, lose_when(|i, _| i == 0));
    h.run_until_finished(secs(20.0)).expect("finished");
    let c = challenges(&h);
    assert_eq!(c.len(), 2, "{c:?}");
    // No RTT sample on the new path yet: its PTO is the initial one, 333 + 4·166.5 + 25 ms.
    let gap = c[1].since(c[0]).as_millis_f64();
    assert!((1000.0..1050.0).contains(&gap), "{gap} ms");
    assert_eq!(stats(&*h.client)[1].status, "active");
    assert!(stream_bytes_on_path1(&h, c[1], secs(20.0)) > 1_000_000, "path 1 carried data once validated");
    assert_eq!(h.client.stats().path_validation_failures, 0);
    assert_eq!(h.client.stats().delivered, 4_000_000);
}

#[test]
fn a_lost_path_response_is_answered_by_the_next_challenge() {
    let mut h = two_paths(4_000_000, Vec::new());
    // The server's first datagram on path 1 (the PATH_RESPONSE) is lost. Its PATH_ACK of the
    // challenge packet is lost with it, so the path has no RTT sample either.
    h.script(1, Route::ToClient, lose_when(|i, _| i == 0));
    h.run_until_finished(secs(20.0)).expect("finished");
    let c = challenges(&h);
    assert_eq!(c.len(), 2, "{c:?}");
    let responses = h.log().iter().filter(|w| w.from == Role::Server && w.pkt.path == 1 && frames(w).any(|f| *f == Frame::PathResponse)).count();
    assert_eq!(responses, 2, "one response per challenge");
    assert_eq!(stats(&*h.client)[1].status, "active");
    // The server took the path on the first challenge (it proves the client reaches it there).
    assert!(stream_bytes_on_path1(&h, Time::ZERO, secs(20.0)) > 1_000_000);
}

#[test]
fn validation_of_a_dead_path_is_given_up_and_the_path_abandoned() {
    let mut h = two_paths(8_000_000, Vec::new());
    h.script(1, Route::ToServer, lose_when(|_, _| true));
    h.script(1, Route::ToClient, lose_when(|_, _| true));
    h.run_until_finished(secs(30.0)).expect("finished over path 0");
    assert_eq!(h.client.stats().delivered, 8_000_000);
    let c = challenges(&h);
    // Sent again at PTO pace, doubling: about 1 s then 2 s later; given up three initial
    // PTOs (3 × 1.024 s) after the first.
    assert!(c.len() >= 2, "{c:?}");
    assert_eq!(h.client.stats().path_validation_failures, 1);
    let log = h.log();
    let abandon = log
        .iter()
        .find(|w| w.from == Role::Client && frames(w).any(|f| *f == Frame::PathAbandon { path: 1 }))
        .expect("the client closes the path it could not validate");
    assert_eq!(abandon.pkt.path, 0, "PATH_ABANDON goes on another path");
    let after = abandon.sent.since(c[0]).as_millis_f64();
    assert!((3000.0..3200.0).contains(&after), "{after} ms");
    assert_eq!(stats(&*h.client)[1].status, "abandoned");
    assert_eq!(stats(&*h.server)[1].status, "abandoned");
    // Nothing more is tried on the abandoned path.
    assert!(challenges(&h).iter().all(|t| *t < abandon.sent));
}

#[test]
fn an_abandoned_path_stops_carrying_data_and_every_byte_arrives() {
    let size = 12_000_000;
    let mut h = two_paths(size, Vec::new());
    h.run_until(secs(1.0));
    let before = stream_bytes_on_path1(&h, Time::ZERO, secs(1.0));
    assert!(before > 200_000, "path 1 in use before: {before}");
    h.client.on_path_action(h.now, PathAction::Abandon { path: 1 });
    h.run_until_finished(secs(30.0)).expect("finished");
    assert_eq!(h.client.stats().delivered, size);
    // The client's PATH_ABANDON goes on path 0; the server answers with its own.
    let abandons = |role: Role| h.log().iter().filter(move |w| w.from == role && frames(w).any(|f| matches!(f, Frame::PathAbandon { path: 1 }))).map(|w| (w.sent, w.pkt.path)).collect::<Vec<_>>();
    let (c, s) = (abandons(Role::Client), abandons(Role::Server));
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].1, 0);
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!(s[0].1, 0);
    // Once the server knows (one way, 20 ms), no stream data goes on path 1.
    assert_eq!(stream_bytes_on_path1(&h, secs(1.021), secs(30.0)), 0);
    for ep in [&*h.client as &dyn Endpoint, &*h.server] {
        let p = stats(ep);
        assert_eq!(p[1].status, "abandoned");
        assert_eq!(p[1].path_id, None);
        assert_eq!(p[0].status, "active");
    }
}

#[test]
fn a_path_opened_again_gets_a_new_path_id_and_fresh_state() {
    let size = 20_000_000;
    let mut h = two_paths(size, Vec::new());
    h.run_until(secs(1.0));
    let old: Vec<Sent> = h.log().iter().filter(|w| w.from == Role::Client && w.pkt.path == 1).cloned().collect();
    h.client.on_path_action(h.now, PathAction::Abandon { path: 1 });
    h.run_until(secs(2.0));
    let opened = h.now;
    h.client.on_path_action(h.now, PathAction::Open { path: 1, path_id: 2, backup: false });
    h.run_until(secs(2.5));
    // The new path ID starts its own packet numbers with a challenge.
    let log = h.log();
    let first = log.iter().find(|w| w.from == Role::Client && w.pkt.path == 1 && w.sent >= opened).expect("path 1 used again");
    assert_eq!(first.datagram().path_id, 2);
    let q = first.datagram().packets().next().expect("a packet");
    assert_eq!(q.pn, 0);
    assert!(q.frames.contains(&Frame::PathChallenge));
    // A late packet of the old path ID is not taken for the new one.
    let undecryptable = h.server.stats().undecryptable;
    let stale = old.last().expect("path 1 was used").pkt.clone();
    assert_eq!(datagram(&stale).path_id, 1);
    h.server.handle_packet(h.now, stale);
    assert_eq!(h.server.stats().undecryptable, undecryptable + 1);
    h.run_until_finished(secs(30.0)).expect("finished");
    assert_eq!(h.client.stats().delivered, size);
    assert!(stream_bytes_on_path1(&h, secs(2.1), secs(30.0)) > 1_000_000, "the new path carries data");
    for ep in [&*h.client as &dyn Endpoint, &*h.server] {
        let p = stats(ep);
        assert_eq!(p[1].status, "active");
        assert_eq!(p[1].path_id, Some(2));
        assert_eq!(p[1].path_ids_opened, 2);
    }
    // The server acknowledges the new path ID's packets as path 2.
    assert!(h.log().iter().any(|w| w.from == Role::Server && w.sent > secs(2.1) && frames(w).any(|f| matches!(f, Frame::PathAck { path: 2, .. }))));
}

#[test]
fn a_path_opened_later_carries_nothing_before_it_opens() {
    let size = 12_000_000;
    let mut h = two_paths(size, vec![1]);
    h.run_until(secs(1.5));
    assert!(!h.log().iter().any(|w| w.pkt.path == 1), "nothing on path 1 before it opens");
    assert_eq!(stats(&*h.client)[1].status, "closed");
    h.client.on_path_action(h.now, PathAction::Open { path: 1, path_id: 1, backup: false });
    h.run_until_finished(secs(30.0)).expect("finished");
    assert_eq!(h.client.stats().delivered, size);
    assert!(stream_bytes_on_path1(&h, secs(1.5), secs(30.0)) > 1_000_000);
    assert_eq!(stats(&*h.server)[1].path_id, Some(1));
}

#[test]
fn a_backup_path_gets_no_new_data_while_the_other_is_usable() {
    let size = 30_000_000;
    let mut h = two_paths(size, Vec::new());
    h.run_until(secs(1.0));
    h.client.on_path_action(h.now, PathAction::SetStatus { path: 1, backup: true });
    h.run_until(secs(2.0));
    h.client.on_path_action(h.now, PathAction::SetStatus { path: 1, backup: false });
    h.run_until_finished(secs(40.0)).expect("finished");
    assert_eq!(h.client.stats().delivered, size);
    let status: Vec<(bool, u64)> = h
        .log()
        .iter()
        .filter(|w| w.from == Role::Client)
        .flat_map(|w| frames(w).filter_map(|f| if let Frame::PathStatus { path: 1, backup, seq } = f { Some((*backup, *seq)) } else { None }).collect::<Vec<_>>())
        .collect();
    assert_eq!(status, vec![(true, 1), (false, 2)]);
    assert!(stream_bytes_on_path1(&h, secs(0.5), secs(1.0)) > 100_000);
    // From the status's arrival plus what was already queued (the server's decisions stop;
    // the 100 ms queue drains): nothing new.
    assert_eq!(stream_bytes_on_path1(&h, secs(1.03), secs(2.0)), 0);
    assert!(stream_bytes_on_path1(&h, secs(2.1), secs(3.0)) > 100_000, "available again");
}

/// STREAM bytes the server put on route 0 under path ID `id` between `from` and `to`.
fn stream_bytes_on_path0(h: &QuicPair, id: u32, from: Time, to: Time) -> u64 {
    h.log()
        .iter()
        .filter(|w| w.from == Role::Server && w.pkt.path == 0 && w.datagram().path_id == id && w.sent >= from && w.sent < to)
        .map(|w| stream_frames(&w.pkt).iter().map(|f| f.2).sum::<u64>())
        .sum()
}

/// Reference `multi-operator.md` §4.5: the handshake's path is a path like the others once
/// abandoned; opening it again takes a new path ID, validated and carrying data.
#[test]
fn path_0_abandoned_and_opened_again_carries_data_on_a_new_path_id() {
    let size = 20_000_000;
    let mut h = two_paths(size, Vec::new());
    h.run_until(secs(1.0));
    assert!(stream_bytes_on_path0(&h, 0, Time::ZERO, secs(1.0)) > 200_000);
    h.client.on_path_action(h.now, PathAction::Abandon { path: 0 });
    h.run_until(secs(2.0));
    // Once the server knows (20 ms), path 0 carries nothing; path 1 carries the transfer.
    assert_eq!(stream_bytes_on_path0(&h, 0, secs(1.021), secs(2.0)), 0);
    assert!(stream_bytes_on_path1(&h, secs(1.1), secs(2.0)) > 800_000);
    let opened = h.now;
    h.client.on_path_action(h.now, PathAction::Open { path: 0, path_id: 2, backup: false });
    h.run_until_finished(secs(40.0)).expect("finished");
    assert_eq!(h.client.stats().delivered, size);
    // The client validates the new path ID with a challenge, packet numbers from 0.
    let log = h.log();
    let first = log.iter().find(|w| w.from == Role::Client && w.pkt.path == 0 && w.sent >= opened).expect("route 0 used again");
    assert_eq!(first.datagram().path_id, 2);
    let q = first.datagram().packets().next().expect("a packet");
    assert_eq!((q.ptype, q.pn), (multiconn_quic::packet::PacketType::OneRtt, 0));
    assert!(q.frames.contains(&Frame::PathChallenge));
    assert!(stream_bytes_on_path0(&h, 2, opened, secs(40.0)) > 1_000_000, "path ID 2 on route 0 carries data");
    assert_eq!(stream_bytes_on_path0(&h, 0, opened, secs(40.0)), 0);
    for ep in [&*h.client as &dyn Endpoint, &*h.server] {
        let p = stats(ep);
        assert_eq!((p[0].status, p[0].path_id, p[0].path_ids_opened), ("active", Some(2), 2));
        assert_eq!((p[1].status, p[1].path_id), ("active", Some(1)));
    }
    assert!(h.log().iter().any(|w| w.from == Role::Server && w.sent > opened && frames(w).any(|f| matches!(f, Frame::PathAck { path: 2, .. }))));
}
