//! Failure-detection transitions per profile (reference §2.1, §2.2, §2.4, §2.7).

use multiconn_core::{Dur, Time};
use multiconn_multipath::path_health::*;

fn t(ms: u64) -> Time {
    Time(Dur::from_millis(ms).0)
}

fn set(profile: FailoverProfile, paths: &[usize]) -> PathHealthSet {
    let mut s = PathHealthSet::new(HealthConfig::new(profile));
    for &id in paths {
        s.add_path(id, t(0));
    }
    s
}

const ACTIVE: PathStatus = PathStatus::Active;
const PF: PathStatus = PathStatus::PotentiallyFailed;
const FAILED: PathStatus = PathStatus::Failed;

// ---- mp-quic -----------------------------------------------------------------------------------

#[test]
fn mp_quic_first_rto_without_reception_since_the_last_send_is_potentially_failed() {
    let mut h = set(FailoverProfile::MpQuic, &[1, 2]);
    h.on_packet_sent(1, t(10));
    let r = h.on_timeout(1, t(210));
    assert_eq!(r, Reaction { transition: Some((ACTIVE, PF)), requeue_in_flight: true, probe: true });
    assert!(!h.usable(1));
    assert!(h.usable(2));
    // Any packet received on the path makes it active again.
    let r = h.on_packet_received(1, t(250));
    assert_eq!(r.transition, Some((PF, ACTIVE)));
    assert!(h.usable(1));
}

#[test]
fn mp_quic_rto_after_a_reception_since_the_last_send_is_an_ordinary_rto() {
    let mut h = set(FailoverProfile::MpQuic, &[1]);
    h.on_packet_sent(1, t(10));
    h.on_packet_received(1, t(40));
    assert_eq!(h.on_timeout(1, t(240)), Reaction::default());
    assert_eq!(h.status(1), Some(ACTIVE));
    // A later send re-arms the condition.
    h.on_packet_sent(1, t(250));
    assert_eq!(h.on_timeout(1, t(450)).transition, Some((ACTIVE, PF)));
}

#[test]
fn mp_quic_is_not_cleared_by_acks_arriving_over_other_paths_and_never_fails_by_itself() {
    let mut h = set(FailoverProfile::MpQuic, &[1, 2]);
    h.on_packet_sent(1, t(10));
    h.on_timeout(1, t(210));
    assert_eq!(h.on_ack_received(1, t(220)), Reaction::default());
    assert_eq!(h.status(1), Some(PF));
    for i in 0..50 {
        h.on_timeout(1, t(400 + i * 400));
    }
    assert_eq!(h.status(1), Some(PF));
    // When every path is potentially failed, mp-quic sends nothing but probes.
    h.on_packet_sent(2, t(10));
    h.on_timeout(2, t(300));
    assert!(!h.usable(1) && !h.usable(2));
}

#[test]
fn mp_quic_timeout_before_anything_was_sent_does_nothing() {
    let mut h = set(FailoverProfile::MpQuic, &[1]);
    assert_eq!(h.on_timeout(1, t(100)), Reaction::default());
    assert_eq!(h.status(1), Some(ACTIVE));
}

// ---- picoquic ----------------------------------------------------------------------------------

#[test]
fn picoquic_each_timer_repeat_requeues_in_flight_when_another_path_lives() {
    let mut h = set(FailoverProfile::Picoquic, &[0, 1]);
    h.on_packet_sent(0, t(1));
    let r = h.on_timeout(0, t(250));
    assert_eq!(r, Reaction { transition: Some((ACTIVE, PF)), requeue_in_flight: true, probe: true });
    assert_eq!(h.get(0).unwrap().consecutive_timeouts(), 1);
    // Progress (an acknowledgement of a packet sent on the path) resets the count.
    assert_eq!(h.on_ack_received(0, t(300)).transition, Some((PF, ACTIVE)));
    assert_eq!(h.get(0).unwrap().consecutive_timeouts(), 0);
    // A lone path keeps its packets (nothing else could carry them).
    let mut lone = set(FailoverProfile::Picoquic, &[0]);
    assert!(!lone.on_timeout(0, t(250)).requeue_in_flight);
}

#[test]
fn picoquic_fails_a_path_after_more_than_nine_repeats_if_another_path_is_active() {
    let mut h = set(FailoverProfile::Picoquic, &[0, 1]);
    for i in 1..=9 {
        h.on_timeout(0, t(i * 100));
        assert_eq!(h.status(0), Some(PF), "repeat {i}");
    }
    let r = h.on_timeout(0, t(1000));
    assert_eq!(r.transition, Some((PF, FAILED)));
    assert!(!h.usable(0));
    // Failed is final.
    assert_eq!(h.on_ack_received(0, t(1100)), Reaction::default());
    assert_eq!(h.status(0), Some(FAILED));
}

#[test]
fn picoquic_keeps_a_path_when_no_other_path_is_healthy_and_fails_it_once_one_is() {
    let mut h = set(FailoverProfile::Picoquic, &[0, 1]);
    h.on_timeout(1, t(50)); // path 1 has a timeout too: not active
    for i in 1..=12 {
        h.on_timeout(0, t(i * 100));
    }
    assert_eq!(h.status(0), Some(PF));
    h.on_ack_received(1, t(1300));
    assert_eq!(h.on_timeout(0, t(1400)).transition, Some((PF, FAILED)));
    assert!(!h.all_failed());
    for i in 0..10 {
        h.on_timeout(1, t(1500 + i * 100));
    }
    assert_eq!(h.status(1), Some(PF), "the last path is never failed by repeats");
}

#[test]
fn picoquic_schedules_only_the_paths_with_the_fewest_timeouts() {
    let mut h = set(FailoverProfile::Picoquic, &[0, 1, 2]);
    h.on_timeout(0, t(100));
    h.on_timeout(1, t(100));
    h.on_timeout(1, t(300));
    assert!(h.usable(2) && !h.usable(0) && !h.usable(1));
    h.on_timeout(2, t(400));
    h.on_timeout(2, t(800));
    // 0 has one timeout, 1 and 2 two: only 0.
    assert!(h.usable(0) && !h.usable(1) && !h.usable(2));
}

// ---- xquic -------------------------------------------------------------------------------------

#[test]
fn xquic_two_ptos_put_the_path_in_the_low_class_until_an_ack() {
    let mut h = set(FailoverProfile::Xquic, &[0, 1]);
    assert_eq!(h.on_timeout(0, t(100)), Reaction::default());
    assert_eq!(h.status(0), Some(ACTIVE));
    let r = h.on_timeout(0, t(300));
    assert_eq!(r, Reaction { transition: Some((ACTIVE, PF)), requeue_in_flight: false, probe: false });
    assert!(!h.usable(0), "LOW class is used only when nothing better is left");
    assert_eq!(h.on_ack_received(0, t(350)).transition, Some((PF, ACTIVE)));
    assert_eq!(h.get(0).unwrap().consecutive_timeouts(), 0);
    // One PTO, an ack, one PTO: still active (the count restarted).
    h.on_timeout(0, t(400));
    h.on_ack_received(0, t(420));
    h.on_timeout(0, t(600));
    assert_eq!(h.status(0), Some(ACTIVE));
}

#[test]
fn xquic_low_class_paths_carry_data_when_no_active_path_is_left_and_never_fail_by_timeouts() {
    let mut h = set(FailoverProfile::Xquic, &[0, 1]);
    for i in 0..30 {
        h.on_timeout(0, t(100 * i));
    }
    assert_eq!(h.status(0), Some(PF));
    h.on_timeout(1, t(100));
    h.on_timeout(1, t(200));
    assert!(h.usable(0) && h.usable(1));
    h.abandon(1, t(300));
    assert!(h.usable(0));
}

// ---- linux-mptcp -------------------------------------------------------------------------------

#[test]
fn linux_mptcp_subflow_is_stale_after_four_retransmission_intervals() {
    let mut h = set(FailoverProfile::LinuxMptcp, &[0, 1]);
    for i in 1..=3 {
        assert_eq!(h.on_timeout(0, t(i * 200)), Reaction::default());
    }
    let r = h.on_timeout(0, t(800));
    assert_eq!(r, Reaction { transition: Some((ACTIVE, PF)), requeue_in_flight: true, probe: false });
    assert!(!h.usable(0));
    assert_eq!(h.on_ack_received(0, t(900)).transition, Some((PF, ACTIVE)));
}

// ---- common ------------------------------------------------------------------------------------

#[test]
fn link_hints_abandon_and_idle_timeout_apply_to_every_profile() {
    for profile in FailoverProfile::ALL {
        let mut cfg = HealthConfig::new(profile);
        cfg.idle_timeout = Some(Dur::from_secs(5));
        let mut h = PathHealthSet::new(cfg);
        h.add_path(0, t(0));
        h.add_path(1, t(0));
        let r = h.on_link_down_hint(0, t(100));
        assert_eq!(r, Reaction { transition: Some((ACTIVE, PF)), requeue_in_flight: true, probe: false }, "{profile}");
        assert!(h.on_link_up_hint(0, t(200)).probe, "{profile}");
        assert_eq!(h.status(0), Some(PF), "{profile}: active only on evidence");
        // mp-quic and Linux 5.15 come back on a reception on the path, the others on an
        // acknowledgement of a packet sent on it.
        let by_reception = matches!(profile, FailoverProfile::MpQuic | FailoverProfile::LinuxMptcp515);
        let back = if by_reception { h.on_packet_received(0, t(250)) } else { h.on_ack_received(0, t(250)) };
        assert_eq!(back.transition, Some((PF, ACTIVE)), "{profile}");

        // Idle: path 1 never received anything; path 0 last received at 250 ms.
        h.on_packet_received(0, t(250));
        assert_eq!(h.poll_timeout(), Some(t(5000)), "{profile}");
        assert!(h.on_tick(t(4999)).is_empty());
        let expired = h.on_tick(t(5000));
        assert_eq!(expired.len(), 1, "{profile}");
        assert_eq!(expired[0].0, 1);
        assert_eq!(expired[0].1.transition, Some((ACTIVE, FAILED)));
        assert_eq!(h.poll_timeout(), Some(t(5250)));

        assert_eq!(h.abandon(0, t(5100)).transition, Some((ACTIVE, FAILED)), "{profile}");
        assert!(h.all_failed());
        assert_eq!(h.poll_timeout(), None);
        assert_eq!(h.abandon(0, t(5200)), Reaction::default(), "{profile}: already failed");
    }
}

#[test]
fn unknown_paths_are_not_usable_and_events_on_them_do_nothing() {
    let mut h = set(FailoverProfile::Picoquic, &[0]);
    assert!(!h.usable(7));
    assert_eq!(h.on_timeout(7, t(1)), Reaction::default());
    assert_eq!(h.status(7), None);
    h.remove_path(0);
    assert!(h.all_failed(), "no path left");
}

#[test]
fn profile_names_round_trip_through_serde_and_from_str() {
    use serde::de::value::{Error, StrDeserializer};
    use serde::Deserialize;
    for (p, name) in FailoverProfile::ALL.into_iter().zip(["mp-quic", "picoquic", "xquic", "linux-mptcp", "picoquic-2022", "linux-mptcp-5.15"]) {
        assert_eq!(p.name(), name);
        assert_eq!(p.to_string(), name);
        assert_eq!(name.parse::<FailoverProfile>(), Ok(p));
        assert_eq!(FailoverProfile::deserialize(StrDeserializer::<Error>::new(name)), Ok(p));
    }
    assert!("mpquic".parse::<FailoverProfile>().unwrap_err().to_string().contains("mp-quic"));
}

// ---- picoquic-2022 -----------------------------------------------------------------------------

#[test]
fn picoquic_2022_requeues_nothing_avoids_the_path_and_fails_after_more_than_seven_episodes() {
    let mut h = set(FailoverProfile::Picoquic2022, &[0, 1]);
    assert_eq!(h.get(0).unwrap().config().max_timer_repeats, 7);
    // The path's own timer declared its packets lost: no requeue, a probe, avoided.
    let r = h.on_timeout(0, t(300));
    assert_eq!(r, Reaction { transition: Some((ACTIVE, PF)), requeue_in_flight: false, probe: true });
    assert!(!h.usable(0) && h.usable(1));
    for i in 1..7 {
        assert_eq!(h.on_timeout(0, t(300 + 1000 * i)).transition, None, "episode {}", i + 1);
    }
    assert_eq!(h.status(0), Some(PF));
    // The eighth episode (more than 7) fails the path, even though path 1 had timeouts too.
    h.on_timeout(1, t(7_500));
    let r = h.on_timeout(0, t(8_000));
    assert_eq!(r, Reaction { transition: Some((PF, FAILED)), requeue_in_flight: false, probe: false });
    // An acknowledgement resets path 1's count.
    assert_eq!(h.on_ack_received(1, t(8_100)).transition, Some((PF, ACTIVE)));
    assert_eq!(h.get(1).unwrap().consecutive_timeouts(), 0);
}

#[test]
fn picoquic_2022_never_fails_the_last_path() {
    let mut h = set(FailoverProfile::Picoquic2022, &[0]);
    for i in 0..20 {
        h.on_timeout(0, t(1000 * i));
    }
    assert_eq!(h.status(0), Some(PF));
    assert!(h.usable(0));
}

// ---- linux-mptcp-5.15 --------------------------------------------------------------------------

#[test]
fn linux_5_15_is_stale_when_the_count_exceeds_four_and_another_subflow_is_fresh() {
    let mut h = set(FailoverProfile::LinuxMptcp515, &[0, 1]);
    for i in 1..=4 {
        assert_eq!(h.on_timeout(0, t(200 * i)), Reaction::default(), "timeout {i}");
    }
    assert_eq!(h.status(0), Some(ACTIVE));
    // The fifth timeout without reception: stale, data reinjected.
    let r = h.on_timeout(0, t(6_200));
    assert_eq!(r, Reaction { transition: Some((ACTIVE, PF)), requeue_in_flight: true, probe: false });
    assert!(!h.usable(0) && h.usable(1));
    // Anything received makes it active again and restarts the count.
    assert_eq!(h.on_packet_received(0, t(9_000)).transition, Some((PF, ACTIVE)));
    assert_eq!(h.get(0).unwrap().consecutive_timeouts(), 0);
}

#[test]
fn linux_5_15_needs_an_alternative_below_three_timeouts() {
    let mut h = set(FailoverProfile::LinuxMptcp515, &[0, 1]);
    // Subflow 1 has three timeouts of its own: not an alternative (needs fewer than 3).
    for i in 0..3 {
        h.on_timeout(1, t(100 + i));
    }
    for i in 0..8 {
        h.on_timeout(0, t(1000 * (i + 1)));
    }
    assert_eq!(h.status(0), Some(ACTIVE));
    // A reception on subflow 1 resets its count: subflow 0's next timeout makes it stale.
    h.on_packet_received(1, t(9_000));
    assert_eq!(h.on_timeout(0, t(10_000)).transition, Some((ACTIVE, PF)));
    // A reception in the middle of a run of timeouts restarts the count.
    let mut h = set(FailoverProfile::LinuxMptcp515, &[0, 1]);
    for i in 0..4 {
        h.on_timeout(0, t(200 * (i + 1)));
    }
    h.on_packet_received(0, t(900));
    assert_eq!(h.on_timeout(0, t(1_000)), Reaction::default());
    assert_eq!(h.get(0).unwrap().consecutive_timeouts(), 1);
}
