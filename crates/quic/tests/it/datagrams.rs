//! DATAGRAM frames (RFC 9221) over multipath QUIC (draft-ietf-quic-multipath-21): the
//! scheduler places datagrams on the paths as it places stream data, the redundant schedulers
//! copy them, and the receiver hands each datagram over once; checked from the wire.

use std::collections::{BTreeMap, BTreeSet};

use crate::support;

use multiconn_core::{Rate, Time};
use multiconn_quic::frame::Frame;
use multiconn_transport::{AckPath, DatagramEvent, DatagramOptions, DatagramParams, DatagramPriority, Endpoint, FailoverProfile, MultipathParams, Role, SchedulerKind, SchedulerOptions, Workload};
use support::*;

fn mp_datagram_params(scheduler: SchedulerKind) -> multiconn_transport::ConnectionParams {
    let mut p = params(Workload::Messages, Time::ZERO);
    p.multipath = Some(MultipathParams {
        paths: 2,
        scheduler,
        options: SchedulerOptions::default(),
        ack_path: AckPath::Same,
        failover: FailoverProfile::MpQuic,
        coupled: None,
        opened_later: Vec::new(),
    });
    p.datagrams = Some(DatagramParams { client_max_frame_size: Some(65535), server_max_frame_size: Some(65535), priority: DatagramPriority::BeforeStreams, send_buffer: DatagramParams::DEFAULT_SEND_BUFFER });
    p
}

/// The server sends `count` datagrams of `size` bytes, one every `every_ms`, from 0.5 s (the
/// handshake done), alternating `redundant` on and off if `alternate`; runs to `end_s`.
fn send_datagrams(h: &mut QuicPair, count: u64, size: u64, every_ms: u64, alternate: bool, end_s: f64) {
    for tag in 0..count {
        h.run_until(Time(ms(500 + every_ms * tag).0));
        let redundant = !alternate || tag % 2 == 0;
        h.server.send_datagram(tag, size, DatagramOptions { redundant, urgent: false }).unwrap();
    }
    h.run_until(Time::from_secs_f64(end_s));
}

/// By tag: the paths of the server's datagrams that carried it.
fn datagram_paths(h: &QuicPair) -> BTreeMap<u64, Vec<u8>> {
    let mut out: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
    for w in h.log().iter().filter(|w| w.from == Role::Server) {
        for f in w.datagram().packets().flat_map(|q| q.frames.iter()) {
            if let Frame::Datagram { tag, .. } = f {
                out.entry(*tag).or_default().push(w.pkt.path);
            }
        }
    }
    out
}

/// The tags the client received (each must come once) and the server's acknowledged and lost.
fn outcomes(h: &mut QuicPair) -> (BTreeSet<u64>, BTreeSet<u64>, BTreeSet<u64>) {
    let mut ev = Vec::new();
    h.client.drain_datagram_events(&mut ev);
    let mut received = BTreeSet::new();
    for e in ev.drain(..) {
        let DatagramEvent::Received { tag, .. } = e else { panic!("{e:?} at the receiver") };
        assert!(received.insert(tag), "datagram {tag} handed over twice");
    }
    h.server.drain_datagram_events(&mut ev);
    let (mut acked, mut lost) = (BTreeSet::new(), BTreeSet::new());
    for e in ev {
        match e {
            DatagramEvent::Acked { tag } => assert!(acked.insert(tag)),
            DatagramEvent::Lost { tag } => assert!(lost.insert(tag)),
            other => panic!("{other:?}"),
        }
    }
    (received, acked, lost)
}

/// min-RTT with datagrams faster than one path carries (4.8 Mbit/s over two of 3 Mbit/s): the
/// faster path fills and the rest goes on the other; every datagram is sent once, and what was
/// received and what was lost make up what was sent.
#[test]
fn min_rtt_spreads_datagrams_over_both_paths_when_one_is_full() {
    let mut h = quic_pair(&mp_datagram_params(SchedulerKind::MinRtt), &[router_path_at(3.0, 20), router_path_at(3.0, 35)]);
    let count = 1500;
    send_datagrams(&mut h, count, 1200, 2, false, 8.0);
    let paths = datagram_paths(&h);
    assert!(paths.values().all(|p| p.len() == 1), "min-RTT sends each datagram once");
    let on = |path: u8| paths.values().filter(|p| p[0] == path).count();
    let (a, b) = (on(0), on(1));
    assert!(a > 400 && b > 400, "path 0 carried {a} datagrams, path 1 {b}");
    let (received, acked, lost) = outcomes(&mut h);
    let st = h.server.datagram_stats();
    // What did not go out was pushed out of the send buffer; none is still waiting.
    assert_eq!(paths.len() as u64 + st.dropped_send_buffer, count);
    assert!(received.is_disjoint(&lost));
    assert_eq!(received.len() + lost.len(), paths.len(), "delivered + lost = sent");
    assert_eq!(acked.len() + lost.len(), paths.len());
    // Each was acknowledged in its path's packet number space: the server's per-path ACKs.
    let mut per_path = Vec::new();
    h.server.path_stats(&mut per_path);
    assert!(per_path.iter().all(|p| p.packets_received > 50), "{per_path:?}");
}

/// Redundant scheduling copies every datagram onto the other path (RE), or only those marked
/// redundant (SRE); the receiver hands each over once and drops the second copy.
#[test]
fn redundant_schedulers_copy_datagrams_and_the_receiver_delivers_each_once() {
    for (scheduler, alternate) in [(SchedulerKind::Redundant, false), (SchedulerKind::SelectiveRedundant, true)] {
        // Redundant content waits until both paths have window room (as the seed's study built
        // it), so every copy goes out even while path 1's losses keep its window small.
        let mut p = mp_datagram_params(scheduler);
        if let Some(m) = &mut p.multipath {
            m.options.redundant_min_paths = 2;
        }
        let mut h = quic_pair(&p, &[router_path_at(10.0, 20), router_path_at(10.0, 40)]);
        // Path 1 loses one datagram in 6: a copy on path 0 still gets through.
        h.script(1, Route::ToClient, lose_when(|i, _| i % 6 == 1));
        let count = 100;
        send_datagrams(&mut h, count, 1000, 20, alternate, 6.0);
        let paths = datagram_paths(&h);
        assert_eq!(paths.len() as u64, count);
        for (tag, p) in &paths {
            let copied = !alternate || tag % 2 == 0;
            if copied {
                assert_eq!(p.len(), 2, "{scheduler:?}: datagram {tag} on {p:?}");
                assert_ne!(p[0], p[1], "{scheduler:?}: the copy goes on the other path");
            } else {
                assert_eq!(p.len(), 1, "{scheduler:?}: datagram {tag} is not redundant");
            }
        }
        let (received, acked, lost) = outcomes(&mut h);
        assert_eq!(received.len() as u64, count, "{scheduler:?}: path 0 loses nothing, so every datagram arrives");
        assert!(lost.is_empty(), "{scheduler:?}: {lost:?}");
        assert_eq!(acked.len() as u64, count);
        let copies = paths.values().filter(|p| p.len() == 2).count() as u64;
        let client = h.client.datagram_stats();
        // Every copy that arrived second was dropped; those lost on path 1 did not arrive.
        let lost_copies = h.log().iter().filter(|w| w.from == Role::Server && w.dropped).flat_map(|w| w.datagram().packets().flat_map(|q| q.frames.iter()).filter(|f| matches!(f, Frame::Datagram { .. })).cloned().collect::<Vec<_>>()).count() as u64;
        assert_eq!(client.received + client.duplicates, count + copies - lost_copies, "{scheduler:?}: {client:?}");
        assert!(client.duplicates > 0);
        assert_eq!(h.server.datagram_stats().frames_sent, count + copies);
    }
}

/// Same seed, same run: two runs give the same wire.
#[test]
fn datagram_runs_are_deterministic() {
    let run = || {
        let mut h = quic_pair(&mp_datagram_params(SchedulerKind::MinRtt), &[router_path_at(3.0, 20), router_path_at(3.0, 35)]);
        send_datagrams(&mut h, 300, 1200, 2, false, 3.0);
        (datagram_paths(&h), h.server.datagram_stats(), h.client.datagram_stats())
    };
    assert_eq!(run(), run());
}

/// A path of `mbps` both ways, `one_way_ms` of delay and a drop-tail queue of 100 ms.
fn router_path_at(mbps: f64, one_way_ms: u64) -> multiconn_testkit::PathConfig {
    multiconn_testkit::PathConfig::symmetric(bounded(Rate::from_mbps(mbps), ms(one_way_ms), ms(100)))
}
