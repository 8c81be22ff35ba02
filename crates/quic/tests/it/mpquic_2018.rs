//! The `mpquic-2018` profile (mp-quic of 2018 on gQUIC-era quic-go, reference
//! `study-testbeds.md` §4): its timer arithmetic on scripted RTT samples, then its loss
//! recovery from the wire — a delay spike brings two tail-loss probes and a retransmission
//! timeout that collapses the window for good, a reordering of four packets declares nothing
//! lost, a lost packet waits for 9/8 of the RTT, and a path the RTO finds silent gives up
//! everything it has in flight.

use crate::support;

use multiconn_cc::{CcKind, RttEstimator};
use multiconn_core::{Dur, Rate, Time};
use multiconn_link::scripted::Verdict;
use multiconn_quic::packet::Space;
use multiconn_quic::recovery::{Outcome, Recovery, RecoveryConfig, SentPacketInfo, TimeoutAction};
use multiconn_transport::profile::{SpuriousUndo, TransportKind};
use multiconn_transport::{ConnectionParams, Endpoint, MultipathParams, Profile, Role, SchedulerOptions};
use support::*;

const MDS: u64 = 1200;

fn mpquic() -> Profile {
    Profile::builtin("mpquic-2018", TransportKind::Quic).unwrap()
}

fn recovery(profile: &Profile) -> Recovery {
    let cc = multiconn_cc::build(&profile.cc_config(CcKind::NewReno, MDS).unwrap());
    let rtt = RttEstimator::new(profile.recovery.initial_rtt, profile.recovery.rttvar_rule);
    let mut r = Recovery::new(RecoveryConfig::from_knobs(&profile.recovery, profile.ack.max_ack_delay), rtt, cc, true);
    r.set_handshake_confirmed(Time::ZERO);
    r
}

fn send(r: &mut Recovery, t: Time) -> u64 {
    let pn = r.next_pn(Space::Data);
    let info = SentPacketInfo { pn, time_sent: t, size: MDS as u32, ack_eliciting: true, in_flight: true, app_limited: false, ect: false, content: None };
    assert!(r.on_packet_sent(Space::Data, info));
    pn
}

fn send_ack_only(r: &mut Recovery, t: Time) {
    let pn = r.next_pn(Space::Data);
    let info = SentPacketInfo { pn, time_sent: t, size: 50, ack_eliciting: false, in_flight: false, app_limited: false, ect: false, content: None };
    assert!(r.on_packet_sent(Space::Data, info));
}

fn ack(r: &mut Recovery, now: Time, ranges: &[(u64, u64)]) -> Outcome {
    let mut out = Outcome::default();
    r.on_ack_received(now, Space::Data, ranges.iter().copied(), Dur::ZERO, None, &mut out);
    out
}

fn timeout(r: &mut Recovery, now: Time) -> (TimeoutAction, Vec<u64>) {
    let mut out = Outcome::default();
    let action = r.on_timeout(now, &mut out);
    (action, out.lost.iter().map(|p| p.pn).collect())
}

fn t(ms_: f64) -> Time {
    Time::from_secs_f64(ms_ / 1000.0)
}

#[test]
fn two_tail_loss_probes_then_timeouts_that_double_all_from_the_last_send() {
    let p = mpquic();
    let mut r = recovery(&p);
    for i in 0..3 {
        send(&mut r, t(i as f64));
    }
    ack(&mut r, t(100.0), &[(0, 0)]);
    // First sample: srtt 100 ms, rttvar 50 ms.
    assert_eq!((r.rtt().smoothed(), r.rtt().rttvar()), (ms(100), ms(50)));
    // Two packets outstanding: the TLP after max(2·srtt, 3/2·srtt + min_rto/2) = 250 ms, from
    // the last send (2 ms), not from the oldest outstanding packet.
    assert_eq!(r.loss_detection_timer(), Some(t(252.0)));
    assert_eq!(timeout(&mut r, Time(t(252.0).0 - 1)).0, TimeoutAction::None);
    // The first probe declares the newest packet lost, and the controller hears nothing.
    let cwnd = r.cwnd();
    assert_eq!(cwnd, 46_720 + MDS, "slow start grew it by the acknowledged packet");
    assert_eq!(timeout(&mut r, t(252.0)), (TimeoutAction::TailLossProbe, vec![2]));
    assert_eq!((r.cwnd(), r.stats().congestion_events, r.bytes_in_flight()), (cwnd, 0, MDS));
    // The probe leaves at once; with two packets outstanding again, the second TLP is 250 ms
    // after it.
    send(&mut r, t(252.0));
    assert_eq!(r.loss_detection_timer(), Some(t(502.0)));
    assert_eq!(timeout(&mut r, t(502.0)), (TimeoutAction::TailLossProbe, vec![3]));
    // One packet outstanding: a TLP would be max(2·srtt, 10 ms), but two were sent, so the
    // RTO follows: max(srtt + 4·rttvar, min_rto) = 300 ms after the last send.
    send(&mut r, t(502.0));
    assert_eq!(r.loss_detection_timer(), Some(t(802.0)));
    assert_eq!(r.stats().tail_loss_probes, 2);
    // The RTO declares the two oldest outstanding packets lost, one congestion event (×0.85),
    // then halves the threshold and collapses the window to 2 × 1460 bytes.
    assert_eq!(timeout(&mut r, t(802.0)), (TimeoutAction::Rto, vec![1, 4]));
    let reduced = (cwnd as f64 * 0.85) as u64;
    assert_eq!((r.cwnd(), r.controller().ssthresh()), (2_920, Some(reduced / 2)));
    assert_eq!((r.stats().retransmission_timeouts, r.stats().congestion_events, r.stats().lost_packets), (1, 1, 4));
    assert_eq!(r.loss_detection_timer(), None, "nothing outstanding");
    // The retransmissions go out; the next RTO is doubled.
    send(&mut r, t(802.0));
    send(&mut r, t(802.0));
    assert_eq!(r.loss_detection_timer(), Some(t(1402.0)));
    assert_eq!(timeout(&mut r, t(1402.0)), (TimeoutAction::Rto, vec![5, 6]));
    send(&mut r, t(1402.0));
    assert_eq!(r.loss_detection_timer(), Some(t(2602.0)), "×4");
    // An ACK-only packet re-arms the timer from its own send time, as any packet does.
    send_ack_only(&mut r, t(1500.0));
    assert_eq!(r.loss_detection_timer(), Some(t(2700.0)));
    // An acknowledgement of a new packet resets both counts: a TLP is next again (packet 7 is
    // lost by the time threshold at that ACK, so one packet is outstanding: max(2·srtt, 10 ms)).
    send(&mut r, t(1600.0));
    assert_eq!(ack(&mut r, t(1700.0), &[(9, 9)]).lost.iter().map(|p| p.pn).collect::<Vec<_>>(), vec![7]);
    send(&mut r, t(1700.0));
    let tlp = Dur(2 * r.rtt().smoothed().0).max(ms(10));
    assert_eq!(r.loss_detection_timer(), Some(t(1700.0) + tlp));
    assert_eq!(timeout(&mut r, t(1700.0) + tlp).0, TimeoutAction::TailLossProbe);
}

#[test]
fn before_any_rtt_sample_no_tail_loss_probe_and_the_initial_rto_backed_off_up_to_max_rto() {
    let p = mpquic();
    let mut r = recovery(&p);
    send(&mut r, t(0.0));
    // defaultRTOTimeout 500 ms, no TLP without a smoothed RTT.
    assert_eq!(r.loss_detection_timer(), Some(t(500.0)));
    assert_eq!(timeout(&mut r, t(500.0)), (TimeoutAction::Rto, vec![0]));
    let mut last = t(500.0);
    let mut expected = Vec::new();
    for k in 1..=8u32 {
        send(&mut r, last);
        let rto = ms(500 << k).min(p.recovery.max_rto);
        expected.push(rto);
        let fire = r.loss_detection_timer().unwrap();
        assert_eq!(fire, last + rto, "RTO {k}");
        assert_eq!(timeout(&mut r, fire).0, TimeoutAction::Rto);
        last = fire;
    }
    assert_eq!(expected.last(), Some(&Dur::from_secs(60)), "500 ms × 2^7 is 64 s: capped at max_rto");
    // A single outstanding packet once there is a sample: TLP at max(2·srtt, 10 ms).
    let mut r = recovery(&p);
    send(&mut r, t(0.0));
    ack(&mut r, t(2.0), &[(0, 0)]);
    send(&mut r, t(3.0));
    assert_eq!(r.loss_detection_timer(), Some(t(3.0) + ms(10)), "2·srtt = 4 ms is below the 10 ms floor");
}

#[test]
fn no_packet_threshold_only_nine_eighths_of_the_larger_rtt() {
    let p = mpquic();
    let mut r = recovery(&p);
    for i in 0..6 {
        send(&mut r, t(i as f64));
    }
    // Five later packets acknowledged: RFC 9002 would declare packet 0 lost at once.
    let out = ack(&mut r, t(105.0), &[(1, 5)]);
    assert!(out.lost.is_empty());
    // latest = smoothed = 100 ms: 112.5 ms after packet 0 left, no granularity floor.
    assert_eq!(r.loss_time(Space::Data), Some(t(112.5)));
    assert_eq!(r.loss_detection_timer(), Some(t(112.5)));
    assert_eq!(timeout(&mut r, t(112.5)), (TimeoutAction::LossDetected, vec![0]));
    // The same with the profile's packet threshold set to 3.
    let mut three = p.clone();
    three.recovery.packet_threshold = 3;
    let mut r = recovery(&three);
    for i in 0..6 {
        send(&mut r, t(i as f64));
    }
    assert_eq!(ack(&mut r, t(105.0), &[(1, 5)]).lost.iter().map(|p| p.pn).collect::<Vec<_>>(), vec![0]);
}

#[test]
fn a_later_acknowledgement_of_what_the_rto_declared_lost_undoes_nothing() {
    // Without undo (the profile): the window stays collapsed.
    let run = |undo: SpuriousUndo| {
        let mut p = mpquic();
        p.recovery.spurious_undo = undo;
        let mut r = recovery(&p);
        send(&mut r, t(0.0));
        ack(&mut r, t(100.0), &[(0, 0)]);
        for i in 0..4 {
            send(&mut r, t(100.0 + i as f64));
        }
        let mut fire = r.loss_detection_timer().unwrap();
        for expected in [TimeoutAction::TailLossProbe, TimeoutAction::TailLossProbe, TimeoutAction::Rto] {
            assert_eq!(timeout(&mut r, fire).0, expected);
            send(&mut r, fire);
            fire = r.loss_detection_timer().unwrap();
        }
        assert_eq!(r.cwnd(), 2_920);
        // Everything sent before the spike arrives after all.
        let out = ack(&mut r, Time(fire.0 - ms(1).0), &[(1, 7)]);
        assert!(out.spurious.len() >= 2, "{:?}", out.spurious);
        (r.cwnd(), r.stats().spurious_congestion_events)
    };
    let (cwnd, undone) = run(SpuriousUndo::None);
    assert_eq!(undone, 0);
    assert!(cwnd < 46_720 / 2, "slow start from the minimum only: {cwnd}");
    // With RFC 9002's event undo the same acknowledgement restores the window.
    let (cwnd, undone) = run(SpuriousUndo::Event);
    assert_eq!(undone, 1);
    assert!(cwnd >= 46_720, "{cwnd}");
}

// ---- from the wire ----

fn mp_params(profile: Profile, size: u64, paths: u8) -> ConnectionParams {
    let mut p = params(download(size), Time::ZERO);
    let m = profile.multipath.clone().unwrap();
    p.profile = profile;
    p.cc = CcKind::NewReno;
    if paths > 1 {
        p.multipath = Some(MultipathParams {
            paths,
            scheduler: m.scheduler,
            options: SchedulerOptions::default(),
            ack_path: m.ack_path,
            failover: m.failover,
            coupled: None,
            opened_later: Vec::new(),
        });
    }
    p
}

fn secs(s: f64) -> Time {
    Time::from_secs_f64(s)
}

/// Every datagram the server put on path `path` from `from` to `to`, by send time.
fn server_sends(h: &QuicPair, path: u8, from: Time, to: Time) -> Vec<Time> {
    h.log().iter().filter(|w| w.from == Role::Server && w.pkt.path == path && w.sent >= from && w.sent < to).map(|w| w.sent).collect()
}

/// Everything that enters path `path` in `[at, at + length)`, either way, takes `length`
/// longer (KauNetem replaying one-way-delay traces with a spike).
fn spike(h: &mut QuicPair, path: u8, at: Time, length: Dur) {
    let end = at + length;
    for route in [Route::ToClient, Route::ToServer] {
        h.script(path, route, move |_, pkt| if pkt.created >= at && pkt.created < end { Verdict::Delay(length) } else { Verdict::Pass });
    }
}

struct SpikeRun {
    h: QuicPair,
    /// The server's window, smoothed RTT and RTT variation 200 ms into the spike, once the
    /// last ACK of data sent before it came back (and before any timer fired).
    cwnd1: u64,
    srtt: Dur,
    rttvar: Dur,
}

fn spike_run(profile: Profile, at: Time) -> SpikeRun {
    let mut h = single_path(&mp_params(profile, 50_000_000, 1), ms(50), None);
    h.run_until(at);
    spike(&mut h, 0, at, Dur::from_secs(1));
    h.run_until(at + ms(200));
    let r = h.server.recovery();
    assert_eq!((r.stats().tail_loss_probes, r.stats().retransmission_timeouts), (0, 0));
    let (cwnd1, srtt, rttvar) = (r.cwnd(), r.rtt().smoothed(), r.rtt().rttvar());
    SpikeRun { h, cwnd1, srtt, rttvar }
}

#[test]
fn a_one_second_delay_spike_brings_two_tail_loss_probes_then_an_rto_that_collapses_the_window_for_good() {
    let at = secs(1.0);
    let SpikeRun { mut h, cwnd1, srtt, rttvar } = spike_run(mpquic(), at);
    // RTT 100 ms; the download is limited by flow control (1 MiB), far below the window.
    assert!(srtt >= ms(100) && srtt < ms(110), "{srtt:?}");
    assert!(cwnd1 > 1 << 20, "{cwnd1}");
    // Nothing comes back from the client in the spike's second.
    h.run_until(at + ms(1000));
    let r = h.server.recovery();
    assert_eq!((r.stats().tail_loss_probes, r.stats().retransmission_timeouts), (2, 1));
    assert_eq!(r.cwnd(), 2_920, "the minimum, 2 × 1460 bytes");
    assert_eq!(r.controller().ssthresh(), Some((cwnd1 as f64 * 0.85) as u64 / 2));
    // On the wire: the server stops sending as the spike begins (no ACK comes back), then
    // sends one probe after each TLP timeout, each from the previous send, then the RTO's two
    // retransmissions at least 200 ms after the second probe.
    let sends = server_sends(&h, 0, secs(0.9), at + ms(1000));
    let n = sends.len();
    assert!(n > 5, "{sends:?}");
    let tail = &sends[n - 4..];
    let last_data = sends[n - 5];
    assert!(last_data < at + ms(1), "{last_data:?}");
    let tlp = Dur(2 * srtt.0).max(Dur(srtt.0 * 3 / 2) + ms(100));
    let rto = (srtt + Dur(4 * rttvar.0)).max(ms(200));
    assert_eq!(tail, [last_data + tlp, last_data + tlp + tlp, last_data + tlp + tlp + rto, last_data + tlp + tlp + rto]);
    assert!(rto >= ms(200));
    // The spike ends: the ACKs the client sent in it arrive, of everything in flight, the
    // four packets the probes and the RTO declared lost among it. Nothing is undone: the
    // window grows from the minimum by what they acknowledge, in slow start (mp-quic's
    // OnPacketAcked adds a packet per packet), and stays below the window before the spike.
    h.run_until(at + ms(1100));
    let r = h.server.recovery();
    assert!(r.stats().spurious_losses >= 2, "{:?}", r.stats());
    assert_eq!(r.stats().spurious_congestion_events, 0);
    assert!(r.cwnd() < cwnd1, "{} against {cwnd1} before", r.cwnd());
    assert!(h.run_until_finished(secs(60.0)).is_some());

    // With RFC 9002's event undo, the same acknowledgements give the window back.
    let mut p = mpquic();
    p.recovery.spurious_undo = SpuriousUndo::Event;
    let SpikeRun { mut h, cwnd1, .. } = spike_run(p, at);
    h.run_until(at + ms(1100));
    let r = h.server.recovery();
    assert_eq!(r.stats().retransmission_timeouts, 1);
    assert_eq!(r.stats().spurious_congestion_events, 1);
    assert!(r.cwnd() >= cwnd1, "{} against {cwnd1}", r.cwnd());
}

/// A 10 Mbit/s path, 50 ms one way: 1378-byte datagrams 1.1 ms apart when the window is full.
fn rated(profile: Profile) -> QuicPair {
    single_path(&mp_params(profile, 4_000_000, 1), ms(50), Some(Rate::from_mbps(10.0)))
}

/// The first server datagram with stream data created at or after `at`: its verdict is `v`.
fn once_at(h: &mut QuicPair, at: Time, v: Verdict) {
    let mut done = false;
    h.script(0, Route::ToClient, move |_, pkt| {
        if !done && pkt.created >= at && !stream_frames(pkt).is_empty() {
            done = true;
            v
        } else {
            Verdict::Pass
        }
    });
}

#[test]
fn four_packets_overtaking_one_declare_nothing_lost() {
    // 4.5 ms late: the four datagrams behind it arrive first and are acknowledged at once.
    let run = |profile: Profile| {
        let mut h = rated(profile);
        once_at(&mut h, secs(0.8), Verdict::Delay(Dur::from_micros(4500)));
        h.run_until_finished(secs(30.0)).expect("finished");
        h.server.recovery().stats()
    };
    let stats = run(mpquic());
    assert_eq!((stats.lost_packets, stats.spurious_losses), (0, 0), "{stats:?}");
    // With a packet threshold of 3 the reordering is a loss, found spurious later.
    let mut three = mpquic();
    three.recovery.packet_threshold = 3;
    let stats = run(three);
    assert!(stats.lost_packets >= 1 && stats.spurious_losses >= 1, "{stats:?}");
}

#[test]
fn a_lost_packet_is_declared_lost_nine_eighths_of_an_rtt_after_it_left() {
    // A download over 50 ms each way without a queue; one datagram lost at 0.8 s. Returns how
    // long after it left it was declared lost, and 9/8 of max(latest, smoothed RTT) then.
    let run = |profile: Profile| {
        let mut h = single_path(&mp_params(profile, 20_000_000, 1), ms(50), None);
        once_at(&mut h, secs(0.8), Verdict::Lose);
        h.run_while(secs(5.0), |h| h.server.recovery().stats().lost_packets == 0);
        let r = h.server.recovery();
        assert_eq!(r.stats().lost_packets, 1);
        let rtt = r.rtt().latest().max(r.rtt().smoothed());
        let lost = h.log().into_iter().find(|w| w.from == Role::Server && w.dropped).expect("the lost datagram");
        (h.now - lost.sent, Dur(rtt.0 * 9 / 8))
    };
    let (after, threshold) = run(mpquic());
    assert!(threshold > ms(110), "{threshold:?}");
    assert!(after >= threshold && after < threshold + ms(1), "{after:?} after it left, threshold {threshold:?}");
    // With a packet threshold of 3 it is declared lost as soon as the ACK of three later
    // packets arrives, about one RTT after it left.
    let mut three = mpquic();
    three.recovery.packet_threshold = 3;
    let (after, threshold) = run(three);
    assert!(after < threshold && after < ms(105), "{after:?} after it left, threshold {threshold:?}");
}

#[test]
fn an_rto_on_a_silent_path_gives_up_everything_in_flight_there() {
    // Two 10 Mbit/s paths, 50 ms one way, 100 ms queues; path 1 stalls for 3 s both ways. Its
    // window fills, two TLPs go out, and at the RTO mp-quic's onRTO finds nothing received on
    // path 1 since its last send: potentially failed, every packet in flight there declared
    // lost (their data goes out on path 0), a PING on path 1.
    let at = secs(2.0);
    let mut h = quic_pair(&mp_params(mpquic(), 50_000_000, 2), &[router_path(ms(50)), router_path(ms(50))]);
    h.run_until(at);
    assert!(h.server.path_recovery(1).bytes_in_flight() > 0);
    spike(&mut h, 1, at, Dur::from_secs(3));
    h.run_while(at + Dur::from_secs(3), |h| h.server.path_recovery(1).stats().retransmission_timeouts == 0);
    let rto = h.now;
    assert!(rto < at + Dur::from_secs(2), "{rto:?}");
    let r = h.server.path_recovery(1);
    assert_eq!(r.stats().tail_loss_probes, 2);
    // All of it declared lost; in flight now is only the PING that went out at once.
    assert_eq!(r.ack_eliciting_in_flight(Space::Data), 1);
    assert!(r.bytes_in_flight() < 100, "{}", r.bytes_in_flight());
    assert_eq!(r.cwnd(), 2_920);
    let mut st = Vec::new();
    h.server.path_stats(&mut st);
    assert_eq!(st[1].status, "potentially_failed");
    // What path 1 had in flight goes out on path 0 at once; path 1 carries one PING.
    h.run_until(rto + ms(1));
    let log = h.log();
    let after: Vec<_> = log.iter().filter(|w| w.from == Role::Server && w.sent >= rto).collect();
    assert!(after.iter().any(|w| w.pkt.path == 0 && !stream_frames(&w.pkt).is_empty()), "data resent on path 0");
    let on1: Vec<_> = after.iter().filter(|w| w.pkt.path == 1).collect();
    assert_eq!(on1.len(), 1);
    assert!(stream_frames(&on1[0].pkt).is_empty(), "a PING, no data");
    // The spike ends: the client's packets sent in it arrive on path 1, which is active again.
    h.run_until(at + Dur::from_secs(3) + ms(200));
    let mut st = Vec::new();
    h.server.path_stats(&mut st);
    assert_eq!(st[1].status, "active");
    assert!(h.run_until_finished(secs(60.0)).is_some());
}
