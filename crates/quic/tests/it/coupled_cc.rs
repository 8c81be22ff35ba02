//! Coupled congestion control (LIA, OLIA, BALIA; wVegas's delay-based rounds) on the paths of a Multipath QUIC connection:
//! every path's recovery reads its window from one shared controller, so that in congestion
//! avoidance the paths together grow as RFC 6356 says rather than as independent NewReno flows;
//! a path whose interface goes down leaves the coupling, an abandoned path is removed from it.

use crate::support;

use multiconn_cc::{CcKind, CcState, CoupledKind};
use multiconn_core::{Dur, FlowId, Packet, Payload, Time};
use multiconn_quic::frame::Frame;
use multiconn_quic::packet::{Datagram, PacketType, QuicPacket, Space};
use multiconn_transport::{AckPath, Endpoint, FailoverProfile, MultipathParams, PathStats, SchedulerKind, SchedulerOptions, Workload};
use multiconn_testkit::PathConfig;
use support::*;

const MSS: f64 = 1472.0;

fn mp_params(coupled: Option<CoupledKind>) -> multiconn_transport::ConnectionParams {
    let mut p = params(Workload::Download { size: None, request_size: 100 }, Time::ZERO);
    p.cc = CcKind::NewReno;
    p.multipath = Some(MultipathParams {
        paths: 2,
        scheduler: SchedulerKind::MinRtt,
        options: SchedulerOptions::default(),
        ack_path: AckPath::Same,
        failover: FailoverProfile::MpQuic,
        coupled,
        opened_later: Vec::new(),
    });
    p
}

/// Two paths of 20 ms one way and [`ideal`] links (one nanosecond per datagram: the RTTs stay
/// put and equal, so min-RTT keeps both paths window-limited); one data
/// packet is dropped early on each path so that both leave slow start, then nothing is lost.
fn two_paths(coupled: Option<CoupledKind>) -> QuicPair {
    let mut h = quic_pair(&mp_params(coupled), &[PathConfig::symmetric(ideal(ms(20))), PathConfig::symmetric(ideal(ms(20)))]);
    h.script(0, Route::ToClient, lose_when(|i, _| i == 60));
    h.script(1, Route::ToClient, lose_when(|i, _| i == 40));
    h.record_wire = false;
    h
}

/// (cwnd, srtt in seconds, state) of the server's paths.
fn windows(h: &QuicPair) -> Vec<(f64, f64, CcState)> {
    (0..2)
        .map(|p| {
            let r = h.server.path_recovery(p);
            (r.cwnd() as f64, r.rtt().smoothed().as_secs_f64(), r.controller().state())
        })
        .collect()
}

fn lost(h: &QuicPair) -> u64 {
    (0..2).map(|p| h.server.path_recovery(p).stats().lost_packets).sum()
}

/// Runs from `from` to `until` in steps of `step`; returns (measured total growth, growth the
/// formula predicts from the windows at each step). `rate(w)` is the formula's total growth per
/// second given the windows and RTTs.
fn grow(h: &mut QuicPair, from: Time, until: Time, step: Dur, rate: impl Fn(&[(f64, f64, CcState)]) -> f64) -> (f64, f64) {
    h.run_until(from);
    let lost_before = lost(h);
    let start: f64 = windows(h).iter().map(|w| w.0).sum();
    let mut predicted = 0.0;
    let mut t = from;
    while t < until {
        let w = windows(h);
        assert!(w.iter().all(|w| w.2 == CcState::CongestionAvoidance), "both paths in congestion avoidance at {t}: {w:?}");
        predicted += rate(&w) * step.as_secs_f64();
        t += step;
        h.run_until(t);
    }
    assert_eq!(lost(h), lost_before, "no loss while measuring");
    let end: f64 = windows(h).iter().map(|w| w.0).sum();
    (end - start, predicted)
}

/// NewReno on each path: MSS per RTT each.
fn reno_rate(w: &[(f64, f64, CcState)]) -> f64 {
    w.iter().map(|(_, rtt, _)| MSS / rtt).sum()
}

/// LIA (RFC 6356 §3): path i acknowledges w_i/rtt_i bytes per second, each adding
/// min(alpha·MSS/w_total, MSS/w_i) per byte.
fn lia_rate(w: &[(f64, f64, CcState)]) -> f64 {
    let total: f64 = w.iter().map(|x| x.0).sum();
    let best = w.iter().map(|(c, r, _)| c / (r * r)).fold(0.0, f64::max);
    let sum: f64 = w.iter().map(|(c, r, _)| c / r).sum();
    let alpha = total * best / (sum * sum);
    w.iter().map(|(c, r, _)| c / r * (alpha * MSS / total).min(MSS / c)).sum()
}

#[test]
fn lia_paths_grow_together_like_one_newreno_flow() {
    let (from, until, step) = (Time::from_secs_f64(3.0), Time::from_secs_f64(9.0), ms(50));
    let mut h = two_paths(None);
    assert_eq!(h.server.max_datagram_size() as f64, MSS);
    let (uncoupled, reno_predicted) = grow(&mut h, from, until, step, reno_rate);
    let mut h = two_paths(Some(CoupledKind::Lia));
    let (lia, lia_predicted) = grow(&mut h, from, until, step, lia_rate);
    let w = windows(&h);
    let rtts = until.since(from).as_secs_f64() / w[0].1;
    let per_rtt = |g: f64| g / rtts / MSS;
    eprintln!(
        "uncoupled {uncoupled:.0} B ({:.2} MSS/RTT, formula {reno_predicted:.0}), lia {lia:.0} B ({:.2} MSS/RTT, formula {lia_predicted:.0}), windows {w:?}",
        per_rtt(uncoupled),
        per_rtt(lia)
    );
    // Each growth is what its formula predicts from the windows and RTTs along the way.
    assert!((uncoupled / reno_predicted - 1.0).abs() < 0.05, "uncoupled {uncoupled} vs {reno_predicted}");
    assert!((lia / lia_predicted - 1.0).abs() < 0.05, "lia {lia} vs {lia_predicted}");
    // Uncoupled: two NewReno flows, 2 MSS per RTT. LIA: alpha MSS per RTT in all, with equal
    // RTTs alpha = w_max/w_total (between 1/2 and 1): at most one NewReno flow's MSS per RTT.
    assert!((1.9..2.1).contains(&per_rtt(uncoupled)), "{}", per_rtt(uncoupled));
    let alpha = w[0].0.max(w[1].0) / (w[0].0 + w[1].0);
    assert!((per_rtt(lia) - alpha).abs() < 0.1, "lia {} MSS/RTT, alpha {alpha}", per_rtt(lia));
    assert!(per_rtt(lia) <= 1.0 && lia < 0.5 * uncoupled, "lia {lia} uncoupled {uncoupled}");
}

#[test]
fn olia_and_balia_paths_together_grow_no_faster_than_one_newreno_flow() {
    let (from, until) = (Time::from_secs_f64(3.0), Time::from_secs_f64(9.0));
    for kind in [CoupledKind::Olia, CoupledKind::Balia] {
        let mut h = two_paths(Some(kind));
        let (growth, _) = grow(&mut h, from, until, ms(50), |_| 0.0);
        let w = windows(&h);
        let per_rtt = growth / (until.since(from).as_secs_f64() / w[0].1) / MSS;
        eprintln!("{kind:?}: {per_rtt:.2} MSS/RTT, windows {w:?}");
        assert!((0.4..=1.05).contains(&per_rtt), "{kind:?}: {per_rtt} MSS per RTT");
    }
}

#[test]
fn a_path_whose_interface_goes_down_leaves_the_coupling() {
    // LIA over two paths; at 4 s path 1's interface goes down at both ends (and its links lose
    // everything). Path 0 then grows alone: NewReno's MSS per RTT instead of its coupled share.
    let (down, until) = (Time::from_secs_f64(4.0), Time::from_secs_f64(8.0));
    let mut h = two_paths(Some(CoupledKind::Lia));
    h.run_until(Time::from_secs_f64(3.0));
    let w0 = h.server.path_recovery(0).cwnd() as f64;
    h.run_until(down);
    let coupled = h.server.path_recovery(0).cwnd() as f64 - w0;
    h.client.on_path_status(h.now, 1, false);
    h.server.on_path_status(h.now, 1, false);
    h.script(1, Route::ToServer, lose_when(|_, _| true));
    h.script(1, Route::ToClient, lose_when(|_, _| true));
    let at_down = h.server.path_recovery(0).cwnd() as f64;
    let path1 = h.server.path_recovery(1).cwnd();
    h.run_until(until);
    let alone = h.server.path_recovery(0).cwnd() as f64 - at_down;
    let rtt = h.server.path_recovery(0).rtt().smoothed().as_secs_f64();
    let per_rtt = |g: f64, secs: f64| g / (secs / rtt) / MSS;
    let (coupled, alone) = (per_rtt(coupled, 1.0), per_rtt(alone, until.since(down).as_secs_f64()));
    eprintln!("path 0: {coupled:.2} MSS/RTT coupled, {alone:.2} MSS/RTT alone; path 1 kept {path1} B");
    assert!(coupled < 0.7, "{coupled}");
    assert!((0.9..1.1).contains(&alone), "{alone}");
    // Suspended, not removed: the path keeps a window for when it comes back.
    assert!(h.server.path_recovery(1).cwnd() > 0);
    assert_eq!(stats(&*h.server)[1].status, "down");
    assert_eq!(h.server.path_recovery(0).controller().state(), CcState::CongestionAvoidance);
}

/// A 1-RTT packet from the client on path 0 carrying PATH_ABANDON for `path`, numbered as the
/// client's next packet on path 0 (which the server will then take for a duplicate).
fn abandon_from_client(h: &QuicPair, path: u8) -> Packet {
    let pn = h.client.path_recovery(0).next_pn(Space::Data);
    let qp = QuicPacket { ptype: PacketType::OneRtt, pn, pn_len: 4, frames: vec![Frame::PathAbandon { path: u32::from(path) }, Frame::Padding(20)], size: 60 };
    let mut pkt = Packet::new(u64::MAX, FlowId(0), 88, 0, h.now).with_payload(Payload::new(Datagram { first: qp, coalesced: Vec::new(), path_id: 0 }));
    pkt.path = 0;
    pkt
}

fn stats(ep: &dyn Endpoint) -> Vec<PathStats> {
    let mut out = Vec::new();
    ep.path_stats(&mut out);
    out
}

#[test]
fn an_abandoned_path_is_removed_from_the_coupling() {
    let mut h = two_paths(Some(CoupledKind::Lia));
    h.run_until(Time::from_secs_f64(4.0));
    assert!(h.server.path_recovery(1).cwnd() > 0);
    let pkt = abandon_from_client(&h, 1);
    let now = h.now;
    h.server.handle_packet(now, pkt);
    h.script(1, Route::ToServer, lose_when(|_, _| true));
    h.script(1, Route::ToClient, lose_when(|_, _| true));
    let at = h.server.path_recovery(0).cwnd() as f64;
    h.run_until(Time::from_secs_f64(8.0));
    let s = stats(&*h.server);
    assert_eq!(s[1].status, "abandoned", "{s:?}");
    // Removed: its window reads 0 and path 0 grows as NewReno.
    assert_eq!(h.server.path_recovery(1).cwnd(), 0);
    let rtt = h.server.path_recovery(0).rtt().smoothed().as_secs_f64();
    let per_rtt = (h.server.path_recovery(0).cwnd() as f64 - at) / (4.0 / rtt) / MSS;
    eprintln!("path 0 after the abandon: {per_rtt:.2} MSS/RTT");
    assert!((0.9..1.1).contains(&per_rtt), "{per_rtt}");
}

#[test]
fn every_path_runs_the_coupled_controller_and_uncoupled_paths_their_own() {
    // `cc = cubic` with LIA: the coupled algorithm (Reno-based) runs on every path, path 0
    // included; without coupling each path runs its own CUBIC.
    let kinds = |coupled| {
        let mut p = mp_params(coupled);
        p.cc = CcKind::Cubic;
        let mut h = quic_pair(&p, &[symmetric(ms(20), None), symmetric(ms(20), None)]);
        h.run_until(Time::from_secs_f64(1.0));
        (0..2).map(|i| h.server.path_recovery(i).controller().kind()).collect::<Vec<_>>()
    };
    assert_eq!(kinds(Some(CoupledKind::Lia)), [CcKind::NewReno, CcKind::NewReno]);
    assert_eq!(kinds(None), [CcKind::Cubic, CcKind::Cubic]);
}

#[test]
fn coupled_runs_are_deterministic() {
    let run = |kind| {
        let mut h = two_paths(Some(kind));
        h.run_until(Time::from_secs_f64(5.0));
        (h.next_id, windows(&h).iter().map(|w| w.0 as u64).collect::<Vec<_>>())
    };
    for kind in CoupledKind::ALL {
        assert_eq!(run(kind), run(kind), "{kind:?}");
    }
}

#[test]
fn wvegas_paths_leave_slow_start_on_delay_and_keep_the_queues_short() {
    // Two paths of 20 ms one way through 10 Mbit/s with unbounded queues, nothing dropped: LIA
    // keeps filling the queues (hundreds of ms of RTT after 8 s, even though HyStart++ ends
    // its slow start near the BDP: its congestion avoidance never stops growing); wVegas leaves slow start when more than
    // γ packets queue and keeps its queues at a few ms, without a loss. It also stays well
    // below the paths' capacity here: the drain rule fires on sub-millisecond changes of the
    // queueing delay (q_min ≈ 0.4 ms from one round, then ≥ 0.8 ms, one packet's serialization
    // at 10 Mbit/s, takes cwnd·base/(2·rtt)), so each path's window saws between about 5 and
    // 11 packets of a 34-packet BDP.
    let run = |coupled| {
        let rate = Some(multiconn_core::Rate::from_mbps(10.0));
        let mut h = quic_pair(&mp_params(Some(coupled)), &[symmetric(ms(20), rate), symmetric(ms(20), rate)]);
        h.record_wire = false;
        h.run_until(Time::from_secs_f64(8.0));
        (windows(&h), lost(&h), h.client.stats().delivered)
    };
    let (w, lost_packets, delivered) = run(CoupledKind::Wvegas);
    let (lia, _, _) = run(CoupledKind::Lia);
    eprintln!("wvegas: {w:?}, {lost_packets} lost, {delivered} B delivered; lia: {lia:?}");
    assert_eq!(lost_packets, 0);
    for (cwnd, srtt, state) in &w {
        assert_eq!(*state, CcState::CongestionAvoidance);
        assert!(*srtt < 0.045, "srtt {srtt}");
        assert!(*cwnd >= 4.0 * MSS, "cwnd {cwnd}");
    }
    assert!(delivered > 2_500_000, "{delivered}");
    assert!(lia.iter().all(|l| l.1 > 0.3), "lia queues: {lia:?}");
}
