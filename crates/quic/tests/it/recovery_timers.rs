//! RFC 9002 timer arithmetic on scripted RTT samples, checked to the nanosecond.
use crate::support;

use multiconn_cc::{CcKind, RttEstimator};
use multiconn_core::{Dur, Time};
use multiconn_quic::packet::Space;
use multiconn_quic::recovery::{Outcome, Recovery, RecoveryConfig, SentPacketInfo, TimeoutAction};
use multiconn_transport::profile::RetransmitTimer;
use multiconn_transport::Profile;
use support::*;

const MDS: u64 = 1200;

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

fn send_ack_only(r: &mut Recovery, t: Time) -> u64 {
    let pn = r.next_pn(Space::Data);
    let info = SentPacketInfo { pn, time_sent: t, size: 50, ack_eliciting: false, in_flight: false, app_limited: false, ect: false, content: None };
    assert!(r.on_packet_sent(Space::Data, info));
    pn
}

fn ack(r: &mut Recovery, now: Time, ranges: &[(u64, u64)], delay: Dur) -> Outcome {
    let mut out = Outcome::default();
    r.on_ack_received(now, Space::Data, ranges.iter().copied(), delay, None, &mut out);
    out
}

fn t(ms_: f64) -> Time {
    Time::from_secs_f64(ms_ / 1000.0)
}

fn pto_base(r: &Recovery, mad: Dur) -> Dur {
    let rtt = r.rtt();
    rtt.smoothed() + Dur((4 * rtt.rttvar().0).max(1_000_000)) + mad
}

#[test]
fn pto_deadline_is_exact_with_exponential_backoff() {
    let p = rfc9002();
    let mad = p.ack.max_ack_delay;
    let mut r = recovery(&p);
    send(&mut r, t(0.0));
    send(&mut r, t(1.0));
    ack(&mut r, t(100.0), &[(0, 0)], Dur::ZERO);
    // second sample 139 ms with 10 ms ack delay (capped at max_ack_delay after confirmation).
    ack(&mut r, t(140.0), &[(0, 1)], ms(10));
    let rtt = r.rtt();
    assert_eq!(rtt.smoothed(), Dur((7 * 100_000_000 + 129_000_000) / 8));
    assert_eq!(rtt.rttvar(), Dur((3 * 50_000_000 + 29_000_000) / 4));
    let base = pto_base(&r, mad);
    assert_eq!(base, r.rtt().pto_base(mad));

    let last = t(200.0);
    send(&mut r, last);
    assert_eq!(r.loss_detection_timer(), Some(last + base), "k = 0");
    let mut out = Outcome::default();
    // Not due a nanosecond early.
    assert_eq!(r.on_timeout(Time((last + base).0 - 1), &mut out), TimeoutAction::None);
    let fire1 = last + base;
    assert_eq!(r.on_timeout(fire1, &mut out), TimeoutAction::Probe { space: Space::Data, count: 2 });
    assert_eq!(r.pto_count(), 1);
    assert!(out.lost.is_empty(), "a PTO declares nothing lost");
    assert_eq!(r.loss_detection_timer(), Some(last + Dur(2 * base.0)), "k = 1 before the probe leaves");
    send(&mut r, fire1);
    assert_eq!(r.loss_detection_timer(), Some(fire1 + Dur(2 * base.0)), "k = 1 from the probe");
    let fire2 = fire1 + Dur(2 * base.0);
    assert_eq!(r.on_timeout(fire2, &mut out), TimeoutAction::Probe { space: Space::Data, count: 2 });
    send(&mut r, fire2);
    assert_eq!(r.loss_detection_timer(), Some(fire2 + Dur(4 * base.0)), "k = 2");
    // An ACK resets the backoff.
    ack(&mut r, fire2 + ms(50), &[(4, 4)], Dur::ZERO);
    assert_eq!(r.pto_count(), 0);
}

#[test]
fn no_application_pto_before_handshake_confirmation() {
    let p = rfc9002();
    let cc = multiconn_cc::build(&p.cc_config(CcKind::NewReno, MDS).unwrap());
    let rtt = RttEstimator::new(p.recovery.initial_rtt, p.recovery.rttvar_rule);
    let mut r = Recovery::new(RecoveryConfig::from_knobs(&p.recovery, p.ack.max_ack_delay), rtt, cc, true);
    send(&mut r, t(0.0));
    assert_eq!(r.loss_detection_timer(), None);
    r.set_handshake_confirmed(t(5.0));
    // Before any RTT sample: 333 + 4·166.5 + 25 ms.
    assert_eq!(r.loss_detection_timer(), Some(t(0.0) + Dur(333_000_000 + 666_000_000 + 25_000_000)));
}

#[test]
fn time_threshold_loss_at_nine_eighths_of_the_rtt() {
    let mut r = recovery(&rfc9002());
    send(&mut r, t(0.0));
    send(&mut r, t(10.0));
    let out = ack(&mut r, t(110.0), &[(1, 1)], Dur::ZERO);
    assert!(out.lost.is_empty(), "one packet below the largest: not lost by packet threshold");
    // latest = smoothed = 100 ms: loss delay 112.5 ms from packet 0's send time.
    let expect = t(0.0) + Dur(100_000_000 * 9 / 8);
    assert_eq!(r.loss_time(Space::Data), Some(expect));
    assert_eq!(r.loss_detection_timer(), Some(expect));
    let mut out = Outcome::default();
    assert_eq!(r.on_timeout(expect, &mut out), TimeoutAction::LossDetected);
    assert_eq!(out.lost.iter().map(|p| p.pn).collect::<Vec<_>>(), vec![0]);
    assert_eq!(r.bytes_in_flight(), 0);
    // max(smoothed, latest): a larger latest RTT stretches the delay.
    let mut r = recovery(&rfc9002());
    send(&mut r, t(0.0));
    ack(&mut r, t(100.0), &[(0, 0)], Dur::ZERO);
    send(&mut r, t(100.0));
    send(&mut r, t(101.0));
    ack(&mut r, t(301.0), &[(2, 2)], Dur::ZERO); // latest 200 ms, smoothed 112.5 ms
    assert_eq!(r.rtt().latest(), ms(200));
    assert_eq!(r.loss_time(Space::Data), Some(t(100.0) + Dur(200_000_000 * 9 / 8)));
}

#[test]
fn packet_threshold_declares_packets_three_below_the_largest_lost() {
    let mut r = recovery(&rfc9002());
    for i in 0..6 {
        send(&mut r, t(i as f64));
    }
    let out = ack(&mut r, t(50.0), &[(3, 3)], Dur::ZERO);
    assert_eq!(out.lost.iter().map(|p| p.pn).collect::<Vec<_>>(), vec![0]);
    assert!(r.loss_time(Space::Data).is_some(), "packets 1 and 2 wait for the time threshold");
    let out = ack(&mut r, t(51.0), &[(3, 4)], Dur::ZERO);
    assert_eq!(out.lost.iter().map(|p| p.pn).collect::<Vec<_>>(), vec![1]);
    assert_eq!(r.stats().lost_packets, 2);
    // One congestion event per detection run; the second falls in the same recovery period.
    assert_eq!(r.stats().congestion_events, 2);
    assert_eq!(r.cwnd(), 12_000 / 2);
}

/// Sends packet A at `t_a` and B `span` later (both lost), then an ACK-only packet and acks
/// only that one: A and B are lost in one detection run with nothing acknowledged between.
fn persistent_congestion_case(profile: &Profile, span_delta: i64) -> (bool, u64, Dur) {
    let mut r = recovery(profile);
    send(&mut r, t(0.0));
    ack(&mut r, t(100.0), &[(0, 0)], Dur::ZERO); // srtt 100, rttvar 50
    let duration = Dur(pto_base(&r, profile.ack.max_ack_delay).0 * profile.recovery.persistent_congestion_threshold as u64);
    assert_eq!(duration, ms((100 + 200 + 25) * 3));
    let a = t(200.0);
    let b = Time((a.0 as i64 + duration.0 as i64 + span_delta) as u64);
    send(&mut r, a);
    send(&mut r, b);
    for k in 1..=3 {
        send_ack_only(&mut r, b + ms(k));
    }
    let out = ack(&mut r, b + ms(20), &[(5, 5)], Dur::ZERO);
    assert_eq!(out.lost.iter().map(|p| p.pn).collect::<Vec<_>>(), vec![1, 2], "both lost by packet threshold");
    assert!(!out.rtt_updated, "an ACK of an ACK-only packet is no RTT sample");
    (out.persistent_congestion, r.cwnd(), duration)
}

#[test]
fn persistent_congestion_exactly_when_the_span_exceeds_the_duration() {
    let p = rfc9002();
    let (pc, cwnd, _) = persistent_congestion_case(&p, 1);
    assert!(pc);
    assert_eq!(cwnd, 2 * MDS, "collapsed to the minimum window");
    let (pc, cwnd, _) = persistent_congestion_case(&p, 0);
    assert!(!pc, "equal to the duration is not more than it");
    // Slow start grew the window by the first packet, then the congestion event halved it.
    assert_eq!(cwnd, (12_000 + MDS) / 2);
    let (pc, _, _) = persistent_congestion_case(&p, -1);
    assert!(!pc);
}

#[test]
fn persistent_congestion_off_like_aioquic() {
    let mut p = rfc9002();
    p.recovery.persistent_congestion = false;
    let (pc, cwnd, _) = persistent_congestion_case(&p, 1_000_000);
    assert!(!pc);
    assert_eq!(cwnd, (12_000 + MDS) / 2, "an ordinary congestion event only");
}

/// Five packets sent; the ACK of 3 and 4 at 60 ms declares 0 and 1 lost and halves the
/// window; then 0 is acknowledged at 61 ms (spurious).
fn two_lost_then_one_spurious(r: &mut Recovery) {
    for i in 0..5 {
        send(r, t(i as f64));
    }
    let out = ack(r, t(60.0), &[(3, 4)], Dur::ZERO);
    assert_eq!(out.lost.iter().map(|p| p.pn).collect::<Vec<_>>(), vec![0, 1]);
    assert_eq!(r.cwnd(), 6_000);
    let out = ack(r, t(61.0), &[(3, 4), (0, 0)], Dur::ZERO);
    assert_eq!(out.spurious.len(), 1);
}

#[test]
fn acknowledged_lost_packet_is_spurious_and_undoes_the_reduction() {
    let mut r = recovery(&rfc9002());
    two_lost_then_one_spurious(&mut r);
    assert_eq!(r.cwnd(), 6_000, "one of two lost packets was spurious: no undo yet");
    let out = ack(&mut r, t(62.0), &[(0, 4)], Dur::ZERO);
    assert_eq!(out.spurious.iter().map(|p| p.pn).collect::<Vec<_>>(), vec![1]);
    assert_eq!(r.stats().spurious_losses, 2);
    assert_eq!(r.stats().spurious_congestion_events, 1);
    assert!(r.cwnd() >= 12_000, "reduction undone: {}", r.cwnd());
}

/// `spurious_undo = "picoquic-2022"`: the first lost packet found spurious within one
/// smoothed RTT of the reduction restores picoquic NewReno's window at once (twice its
/// ssthresh), without waiting for the event's other lost packet; no event-wide undo is
/// counted.
#[test]
fn picoquic_2022_undoes_at_the_first_spurious_packet_within_one_smoothed_rtt() {
    let mut p = rfc9002();
    p.recovery.spurious_undo = multiconn_transport::profile::SpuriousUndo::Picoquic2022;
    let mut r = recovery(&p);
    // srtt is about 57 ms: the notice 1 ms after the reduction is well within it.
    two_lost_then_one_spurious(&mut r);
    assert_eq!(r.cwnd(), 12_000, "restored at the first spurious packet");
    assert_eq!(r.stats().spurious_congestion_events, 0);
    // Without the knob the same ACK undoes nothing yet (the test above).
}

#[test]
fn invalid_acks_are_ignored() {
    let mut r = recovery(&rfc9002());
    send(&mut r, t(0.0));
    let out = ack(&mut r, t(10.0), &[(0, 7)], Dur::ZERO);
    assert!(out.acked.is_empty());
    assert_eq!(r.stats().invalid_acks, 1);
    assert_eq!(r.bytes_in_flight(), MDS);
}

/// picoquic of early 2022 (`retransmit_timer = "picoquic-2022"`): the timer declares packets
/// lost, oldest first, each at its send time plus max(srtt + 4·rttvar + mad, 5/4·srtt + mad,
/// 50 ms), doubled after one episode and quadrupled after more; an acknowledgement resets it.
#[test]
fn picoquic_2022_timer_declares_loss_oldest_first_with_capped_backoff() {
    let p = Profile::builtin("picoquic-2022", multiconn_transport::profile::TransportKind::Quic).unwrap();
    let mut r = recovery(&p);
    send(&mut r, t(0.0));
    ack(&mut r, t(100.0), &[(0, 0)], Dur::ZERO);
    // srtt 100 ms, rttvar 50 ms, max_ack_delay 10 ms: 100 + 200 + 10 = 310 ms.
    assert_eq!(r.retransmit_timeout(), ms(310));
    send(&mut r, t(200.0));
    send(&mut r, t(210.0));
    send(&mut r, t(400.0));
    // Armed at the oldest outstanding packet, not the newest.
    assert_eq!(r.loss_detection_timer(), Some(t(510.0)));
    let mut out = Outcome::default();
    assert_eq!(r.on_timeout(t(509.0), &mut out), TimeoutAction::None);
    assert_eq!(r.on_timeout(t(510.0), &mut out), TimeoutAction::TimerLoss { episode: true, ack_lost: false });
    let lost: Vec<u64> = out.lost.iter().map(|l| l.pn).collect();
    assert_eq!(lost, [1], "packet 2 now waits for the doubled timer");
    assert_eq!(r.pto_count(), 1);
    assert_eq!(r.cwnd(), 3_072, "a timeout collapses the window to the minimum");
    assert_eq!(r.loss_detection_timer(), Some(t(210.0 + 620.0)));
    // Packets sent before the episode began do not start another.
    let mut out = Outcome::default();
    assert_eq!(r.on_timeout(t(830.0), &mut out), TimeoutAction::TimerLoss { episode: false, ack_lost: false });
    assert_eq!(r.loss_detection_timer(), Some(t(400.0 + 620.0)));
    let mut out = Outcome::default();
    assert_eq!(r.on_timeout(t(1020.0), &mut out), TimeoutAction::TimerLoss { episode: false, ack_lost: false });
    assert_eq!(r.pto_count(), 1);
    // A packet sent after the episode: a new one, ×4; then the backoff stays at ×4.
    send(&mut r, t(1100.0));
    assert_eq!(r.loss_detection_timer(), Some(t(1100.0 + 620.0)));
    assert_eq!(r.on_timeout(t(1720.0), &mut Outcome::default()), TimeoutAction::TimerLoss { episode: true, ack_lost: false });
    send(&mut r, t(1800.0));
    assert_eq!(r.loss_detection_timer(), Some(t(1800.0 + 1240.0)));
    assert_eq!(r.on_timeout(t(3040.0), &mut Outcome::default()), TimeoutAction::TimerLoss { episode: true, ack_lost: false });
    assert_eq!(r.pto_count(), 3);
    send(&mut r, t(3100.0));
    assert_eq!(r.loss_detection_timer(), Some(t(3100.0 + 1240.0)), "capped at ×4");
    assert_eq!(r.stats().timer_loss_episodes, 3);
    assert_eq!(r.stats().lost_packets, 5);
    // An acknowledgement resets the count (here by an ACK whose RTT sample is 200 ms).
    send(&mut r, t(3200.0));
    ack(&mut r, t(3300.0), &[(6, 6)], Dur::ZERO);
    assert_eq!(r.pto_count(), 0);
    assert_eq!(r.loss_detection_timer(), Some(t(3200.0) + r.retransmit_timeout()));
}

fn aioquic_1_7() -> Profile {
    Profile::builtin("aioquic-1.7", multiconn_transport::profile::TransportKind::Quic).unwrap()
}

/// Three packets after a first RTT sample, then two probe timeouts without an ACK.
fn two_ptos(profile: &Profile) -> (Recovery, [u64; 3], Time, Vec<Outcome>) {
    let mut r = recovery(profile);
    send(&mut r, t(0.0));
    ack(&mut r, t(100.0), &[(0, 0)], Dur::ZERO);
    let pns = [send(&mut r, t(200.0)), send(&mut r, t(201.0)), send(&mut r, t(202.0))];
    let base = r.retransmit_timeout();
    let fire1 = t(202.0) + base;
    assert_eq!(r.loss_detection_timer(), Some(fire1));
    let mut outs = Vec::new();
    let mut out = Outcome::default();
    let expected = if profile.recovery.retransmit_timer == RetransmitTimer::Aioquic17 { 1 } else { 2 };
    assert_eq!(r.on_timeout(fire1, &mut out), TimeoutAction::Probe { space: Space::Data, count: expected });
    outs.push(std::mem::take(&mut out));
    send(&mut r, fire1);
    let fire2 = fire1 + Dur(2 * base.0);
    assert_eq!(r.on_timeout(fire2, &mut out), TimeoutAction::Probe { space: Space::Data, count: expected });
    outs.push(out);
    send(&mut r, fire2);
    (r, pns, fire2, outs)
}

#[test]
fn an_aioquic_1_7_probe_timeout_resends_the_oldest_packet_without_a_congestion_event() {
    let p = aioquic_1_7();
    assert_eq!(p.recovery.retransmit_timer, RetransmitTimer::Aioquic17);
    let (mut r, [a, b, c], fire2, outs) = two_ptos(&p);
    let lost = |o: &Outcome| o.lost.iter().map(|x| x.pn).collect::<Vec<_>>();
    assert_eq!(lost(&outs[0]), vec![a], "the first PTO gives up the oldest packet");
    assert_eq!(lost(&outs[1]), vec![b], "the second the next oldest");
    let cwnd = r.cwnd();
    assert_eq!(cwnd, 12_000 + MDS, "the initial window grown by the first ACK, not reduced");
    // c and the two probes are in flight; a and b left the flight.
    assert_eq!(r.bytes_in_flight(), 3 * MDS);
    assert_eq!((r.stats().lost_packets, r.stats().congestion_events), (2, 0));

    // Everything but a is acknowledged: a is not found lost again (no congestion event), b
    // counts as a spurious loss, and slow start goes on.
    let probe2 = r.next_pn(Space::Data) - 1;
    let out = ack(&mut r, fire2 + ms(100), &[(b, probe2)], Dur::ZERO);
    assert!(out.lost.is_empty());
    assert_eq!(out.spurious.iter().map(|x| x.pn).collect::<Vec<_>>(), vec![b]);
    assert_eq!(r.stats().congestion_events, 0);
    assert_eq!(r.cwnd(), cwnd + 3 * MDS, "c and the two probes acknowledged in slow start");
    assert_eq!((r.bytes_in_flight(), r.pto_count()), (0, 0));
    let _ = c;
}

#[test]
fn an_rfc9002_probe_timeout_declares_nothing_and_the_later_ack_halves_the_window() {
    let (mut r, [a, b, _], fire2, outs) = two_ptos(&rfc9002());
    assert!(outs.iter().all(|o| o.lost.is_empty()));
    assert_eq!(r.bytes_in_flight(), 5 * MDS);
    let probe2 = r.next_pn(Space::Data) - 1;
    let out = ack(&mut r, fire2 + ms(100), &[(b, probe2)], Dur::ZERO);
    assert_eq!(out.lost.iter().map(|x| x.pn).collect::<Vec<_>>(), vec![a], "packet threshold");
    assert_eq!(r.stats().congestion_events, 1);
    assert!(r.cwnd() < 12_000, "the congestion event reduced the window: {}", r.cwnd());
}

#[test]
fn aioquic_1_7_collapses_the_window_on_persistent_congestion() {
    let (pc, cwnd, _) = persistent_congestion_case(&aioquic_1_7(), 1);
    assert!(pc);
    assert_eq!(cwnd, 2 * MDS);
    let (pc, _, _) = persistent_congestion_case(&aioquic_1_7(), 0);
    assert!(!pc);
}
