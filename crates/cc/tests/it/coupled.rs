//! Coupled multipath congestion control (LIA, OLIA, BALIA) against the formulas of RFC 6356,
//! Khalili et al. and Peng et al. computed by hand, against NewReno, and in a small fluid loop.

use multiconn_cc::{
    build, build_multipath, share, AckEvent, CcConfig, CcKind, CcState, Controller, CoupledCc, CoupledKind, LossEvent, MultipathController,
    PathController, RttEstimator, RttVarRule,
};
use multiconn_core::{Dur, Time};
use proptest::prelude::*;

const MSS: u64 = 1000;

fn cfg(initial_window: u64) -> CcConfig {
    CcConfig { initial_window, ..CcConfig::quic_default(CcKind::NewReno, MSS) }
}
fn rtt_ms(ms: u64) -> RttEstimator {
    let mut r = RttEstimator::new(Dur::from_millis(333), RttVarRule::Rfc9002);
    r.update(Dur::from_millis(ms), Dur::ZERO);
    r
}
fn no_sample() -> RttEstimator {
    RttEstimator::new(Dur::from_millis(333), RttVarRule::Rfc9002)
}
fn ack(bytes: u64, sent: Time) -> AckEvent {
    AckEvent { bytes_acked: bytes, largest_acked_sent: sent, prior_in_flight: 0, bytes_in_flight: 0, app_limited: false, rate_sample: None }
}
fn loss(sent: Time) -> LossEvent {
    LossEvent { bytes_lost: MSS, largest_lost_sent: sent, bytes_in_flight: 0, prior_in_flight: MSS }
}
fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-9 * want.abs().max(1.0)
}
macro_rules! assert_close {
    ($got:expr, $want:expr) => {{
        let (g, w) = ($got, $want);
        assert!(close(g, w), "{} = {g}, expected {w}", stringify!($got));
    }};
}

/// Paths in congestion avoidance with the given window (bytes), smoothed RTT (ms) and OLIA loss
/// interval ℓ (bytes acknowledged since the last loss). Each path starts at twice its window,
/// takes a loss while no path has an RTT sample (so every algorithm halves), has ℓ bytes of
/// pre-loss packets acknowledged (no growth in recovery), then leaves recovery with an empty ACK
/// that brings its RTT sample.
fn setup(kind: CoupledKind, paths: &[(u64, u64, u64)]) -> CoupledCc {
    let mut cc = CoupledCc::new(kind);
    for &(w, _, _) in paths {
        let i = cc.add_path(&cfg(2 * w));
        cc.on_congestion_event(i, Time(1000), &loss(Time(999)), &no_sample());
    }
    for (i, &(_, _, ell)) in paths.iter().enumerate() {
        if ell > 0 {
            cc.on_ack(i, Time(2000), &ack(ell, Time(500)), &no_sample());
        }
    }
    for (i, &(w, rtt, _)) in paths.iter().enumerate() {
        cc.on_ack(i, Time(3000), &ack(0, Time(1500)), &rtt_ms(rtt));
        assert_eq!((cc.window(i), cc.ssthresh(i), cc.state(i)), (w, Some(w), CcState::CongestionAvoidance));
    }
    cc
}

// ---------------------------------------------------------------------------------------------
// LIA (RFC 6356 §3). With rtt in seconds: alpha = total·max(w/rtt²)/(Σ w/rtt)²; an ACK of b bytes
// adds min(alpha·b·MSS/total, b·MSS/w_i).

#[test]
fn lia_two_paths_match_rfc6356() {
    // w/rtt² = 10000/0.01 = 1e6 and 20000/0.0025 = 8e6; Σ w/rtt = 1e5 + 4e5 = 5e5.
    // alpha = 30000·8e6 / 2.5e11 = 0.96; increase = 0.96·1000·1000/30000 = 32 on both paths
    // (below the caps 100 and 50).
    let mut cc = setup(CoupledKind::Lia, &[(10_000, 100, 0), (20_000, 50, 0)]);
    assert_close!(cc.lia_alpha(), 0.96);
    assert_close!(cc.increase(0, 1000), 32.0);
    assert_close!(cc.increase(1, 1000), 32.0);
    cc.on_ack(0, Time(10_000), &ack(1000, Time(5000)), &rtt_ms(100));
    assert!(cc.window(0).abs_diff(10_032) <= 1, "{}", cc.window(0));
    assert_eq!(cc.window(1), 20_000);
}

#[test]
fn lia_three_paths_match_rfc6356() {
    // w/rtt²: 1e6, 8e6, 40000/0.04 = 1e6; Σ w/rtt = 1e5 + 4e5 + 2e5 = 7e5; total 70000.
    // alpha = 70000·8e6/4.9e11 = 8/7; increase = (8/7)·1e6/70000 = 800/49 ≈ 16.33 everywhere.
    let cc = setup(CoupledKind::Lia, &[(10_000, 100, 0), (20_000, 50, 0), (40_000, 200, 0)]);
    assert_close!(cc.lia_alpha(), 8.0 / 7.0);
    for i in 0..3 {
        assert_close!(cc.increase(i, 1000), 800.0 / 49.0);
    }
    // An ACK of 3000 bytes is three times one of 1000.
    assert_close!(cc.increase(2, 3000), 2400.0 / 49.0);
}

#[test]
fn lia_increase_is_capped_by_the_single_path_increase() {
    // Fast small path A (10000 B, 10 ms): w/rtt² = 1e8, w/rtt = 1e6. Slow big path B (40000 B,
    // 100 ms): 4e6 and 4e5. alpha = 50000·1e8/(1.4e6)² = 5e12/1.96e12 = 125/49.
    // A: min(alpha·1e6/50000 = 2500/49, 1e6/10000 = 100) = 2500/49; B: min(2500/49, 25) = 25.
    let cc = setup(CoupledKind::Lia, &[(10_000, 10, 0), (40_000, 100, 0)]);
    assert_close!(cc.lia_alpha(), 125.0 / 49.0);
    assert_close!(cc.increase(0, 1000), 2500.0 / 49.0);
    assert_close!(cc.increase(1, 1000), 25.0);
}

#[test]
fn lia_on_one_path_is_newreno_in_congestion_avoidance() {
    let mut lia = setup(CoupledKind::Lia, &[(20_000, 100, 0)]);
    assert_close!(lia.lia_alpha(), 1.0);
    assert_close!(lia.increase(0, 1000), 50.0);
    let mut reno = build(&cfg(40_000));
    reno.on_congestion_event(Time(1000), &loss(Time(999)), &no_sample());
    reno.on_ack(Time(3000), &ack(0, Time(1500)), &rtt_ms(100));
    assert_eq!(reno.window(), 20_000);
    let mut now = Time(10_000);
    for round in 1..=50u64 {
        // One window of ACKs, one MSS each: NewReno adds exactly one MSS, LIA a little less
        // (its per-ACK divisor grows within the round) but never more.
        let (l0, r0) = (lia.window(0), reno.window());
        for _ in 0..r0 / MSS {
            now += Dur::from_micros(100);
            lia.on_ack(0, now, &ack(MSS, now), &rtt_ms(100));
            reno.on_ack(now, &ack(MSS, now), &rtt_ms(100));
        }
        let grew = lia.window(0) - l0;
        assert!((940..=MSS).contains(&grew), "round {round}: LIA grew {grew}");
        assert_eq!(reno.window(), r0 + MSS);
        assert!(lia.window(0) <= reno.window() && reno.window() - lia.window(0) < MSS, "round {round}");
    }
}

#[test]
fn fractions_of_a_byte_accumulate() {
    // 1000·1000/4e6 = 0.25 byte per ACK: forty ACKs make about ten bytes, not zero.
    let mut cc = setup(CoupledKind::Lia, &[(4_000_000, 100, 0)]);
    for k in 0..40 {
        cc.on_ack(0, Time(10_000 + k), &ack(1000, Time(5000)), &rtt_ms(100));
    }
    assert!((4_000_009..=4_000_010).contains(&cc.window(0)), "{}", cc.window(0));
}

#[derive(Clone, Debug)]
enum Ev {
    Ack { path: usize, bytes: u64, fresh: bool, app_limited: bool },
    Loss { path: usize, fresh: bool },
}

fn lia_event(paths: usize) -> impl Strategy<Value = Ev> {
    prop_oneof![
        20 => (0..paths, 1u64..=2 * MSS, prop::bool::weighted(0.9), prop::bool::weighted(0.05))
            .prop_map(|(path, bytes, fresh, app_limited)| Ev::Ack { path, bytes, fresh, app_limited }),
        1 => (0..paths, any::<bool>()).prop_map(|(path, fresh)| Ev::Loss { path, fresh }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// RFC 6356 goal 2: no path increases faster than a single TCP on it would.
    #[test]
    fn lia_increase_never_exceeds_newreno(
        paths in prop::collection::vec((2 * MSS..2_000_000, 1u64..1000), 1..=5),
        bytes in 1u64..100_000,
    ) {
        let spec: Vec<_> = paths.iter().map(|&(w, rtt)| (w, rtt, 0)).collect();
        let cc = setup(CoupledKind::Lia, &spec);
        for (i, &(w, _)) in paths.iter().enumerate() {
            let reno = bytes as f64 * MSS as f64 / w as f64;
            prop_assert!(cc.increase(i, bytes) <= reno * (1.0 + 1e-12));
            prop_assert!(cc.increase(i, bytes) > 0.0);
        }
    }

    /// The same events fed to LIA and to uncoupled NewReno: no LIA window ever gets ahead of its
    /// NewReno twin by more than the granularity difference (NewReno adds whole MSS steps).
    #[test]
    fn lia_windows_never_outgrow_uncoupled_newreno(
        n in 1usize..=4,
        events in prop::collection::vec(lia_event(4), 1..600),
    ) {
        let mut lia = build_multipath(Some(CoupledKind::Lia));
        let mut reno = build_multipath(None);
        for _ in 0..n {
            lia.add_path(&cfg(10 * MSS));
            reno.add_path(&cfg(10 * MSS));
        }
        let rtts: Vec<_> = (0..n).map(|i| rtt_ms(10 + 37 * i as u64)).collect();
        let mut now = Time(1_000_000);
        for ev in events {
            now += Dur::from_millis(1);
            // A "fresh" packet was sent after any recovery started; a stale one long before.
            let sent = |fresh: bool| if fresh { Time(now.0 - 1) } else { Time(0) };
            match ev {
                Ev::Ack { path, bytes, fresh, app_limited } => {
                    let path = path % n;
                    let a = AckEvent { app_limited, ..ack(bytes, sent(fresh)) };
                    lia.on_ack(path, now, &a, &rtts[path]);
                    reno.on_ack(path, now, &a, &rtts[path]);
                }
                Ev::Loss { path, fresh } => {
                    let path = path % n;
                    lia.on_congestion_event(path, now, &loss(sent(fresh)), &rtts[path]);
                    reno.on_congestion_event(path, now, &loss(sent(fresh)), &rtts[path]);
                }
            }
            for i in 0..n {
                prop_assert!(lia.window(i) <= reno.window(i) + 2 * MSS, "path {}: lia {} reno {}", i, lia.window(i), reno.window(i));
                prop_assert!(lia.window(i) >= 2 * MSS);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// OLIA (Khalili et al.): per ACK of b bytes, b·MSS·[(w_r/rtt_r²)/(Σ w_p/rtt_p)² + α_r/w_r].

#[test]
fn olia_alpha_moves_window_from_the_largest_to_the_best_paths() {
    // A: 30000 B, 100 ms, ℓ = 50000 → ℓ/rtt² = 5e6 (largest window: M = {A}).
    // B: 10000 B, 50 ms, ℓ = 20000 → 8e6 (best). C: 10000 B, 100 ms, ℓ = 80000 → 8e6 (best, an
    // exact tie with B). B∖M = {B, C}: α_B = α_C = 1/(3·2), α_A = −1/(3·1).
    let cc = setup(CoupledKind::Olia, &[(30_000, 100, 50_000), (10_000, 50, 20_000), (10_000, 100, 80_000)]);
    assert_close!(cc.olia_alpha(0), -1.0 / 3.0);
    assert_close!(cc.olia_alpha(1), 1.0 / 6.0);
    assert_close!(cc.olia_alpha(2), 1.0 / 6.0);
    // Σ w/rtt = 3e5 + 2e5 + 1e5 = 6e5, squared 3.6e11. With b·MSS = 1e6:
    // A: 1e6·(3e6/3.6e11 − 1/90000) = 1e6·(1/120000 − 1/90000) = −25/9;
    // B: 1e6·(4e6/3.6e11 + 1/60000) = 250/9;  C: 1e6·(1e6/3.6e11 + 1/60000) = 175/9.
    assert_close!(cc.increase(0, 1000), -25.0 / 9.0);
    assert_close!(cc.increase(1, 1000), 250.0 / 9.0);
    assert_close!(cc.increase(2, 1000), 175.0 / 9.0);
}

#[test]
fn olia_alpha_is_zero_when_a_best_path_has_the_largest_window() {
    // B (the best, ℓ/rtt² = 8e6) also has the largest window: B∖M is empty.
    let cc = setup(CoupledKind::Olia, &[(10_000, 100, 50_000), (30_000, 50, 20_000)]);
    assert_eq!((cc.olia_alpha(0), cc.olia_alpha(1)), (0.0, 0.0));
    // Σ w/rtt = 1e5 + 6e5 = 7e5: A: 1e6·1e6/4.9e11 = 100/49, B: 1e6·1.2e7/4.9e11 = 1200/49.
    assert_close!(cc.increase(0, 1000), 100.0 / 49.0);
    assert_close!(cc.increase(1, 1000), 1200.0 / 49.0);
}

#[test]
fn olia_negative_term_shrinks_a_window_but_keeps_it_in_congestion_avoidance() {
    let mut cc = setup(CoupledKind::Olia, &[(30_000, 100, 50_000), (10_000, 50, 20_000), (10_000, 100, 80_000)]);
    for k in 0..9 {
        cc.on_ack(0, Time(10_000 + k), &ack(1000, Time(5000)), &rtt_ms(100));
    }
    // Nine ACKs of about −25/9 bytes each (the window barely moves between them).
    assert!((29_973..=29_976).contains(&cc.window(0)), "{}", cc.window(0));
    assert_eq!(cc.state(0), CcState::CongestionAvoidance);
    assert_eq!(cc.ssthresh(0), Some(cc.window(0)));
}

#[test]
fn olia_loss_intervals_follow_the_acknowledged_bytes() {
    let mut cc = setup(CoupledKind::Olia, &[(10_000, 100, 7000)]);
    assert_eq!(cc.loss_intervals(0), (0, 7000));
    cc.on_ack(0, Time(10_000), &ack(5000, Time(5000)), &rtt_ms(100));
    assert_eq!(cc.loss_intervals(0), (0, 12_000));
    cc.on_congestion_event(0, Time(20_000), &loss(Time(15_000)), &rtt_ms(100));
    assert_eq!(cc.loss_intervals(0), (12_000, 0));
    // Bytes acknowledged in recovery count towards the new interval.
    cc.on_ack(0, Time(21_000), &ack(3000, Time(19_000)), &rtt_ms(100));
    assert_eq!(cc.loss_intervals(0), (12_000, 3000));
    cc.on_congestion_event(0, Time(30_000), &loss(Time(25_000)), &rtt_ms(100));
    assert_eq!(cc.loss_intervals(0), (3000, 0));
    // A loss with nothing acknowledged since the last one does not erase the history.
    cc.on_ack(0, Time(31_000), &ack(0, Time(30_500)), &rtt_ms(100));
    cc.on_congestion_event(0, Time(40_000), &loss(Time(35_000)), &rtt_ms(100));
    assert_eq!(cc.loss_intervals(0), (3000, 0));
}

// ---------------------------------------------------------------------------------------------
// BALIA (Peng et al.): x_r = w_r/rtt_r, α_r = max x / x_r; per ACK of b bytes
// b·MSS·x_r/(rtt_r·(Σx)²)·(1+α_r)/2·(4+α_r)/5; on loss w_r −= w_r/2·min(α_r, 1.5).

#[test]
fn balia_increase_matches_the_formula() {
    // P0: 20000 B, 50 ms → x = 4e5 (α = 1). P1: 30000 B, 150 ms → x = 2e5 (α = 2). Σx = 6e5.
    // P0: 1e6·4e5/(0.05·3.6e11)·1·1 = 200/9. P1: 1e6·2e5/(0.15·3.6e11)·(3/2)·(6/5) = 20/3.
    let cc = setup(CoupledKind::Balia, &[(20_000, 50, 0), (30_000, 150, 0)]);
    assert_close!(cc.balia_alpha(0), 1.0);
    assert_close!(cc.balia_alpha(1), 2.0);
    assert_close!(cc.increase(0, 1000), 200.0 / 9.0);
    assert_close!(cc.increase(1, 1000), 20.0 / 3.0);
}

#[test]
fn balia_decrease_matches_the_formula() {
    // Same RTT; x ∝ w: α = 1 for 20000, 2 for 10000, 1.25 for 16000.
    let mut cc = setup(CoupledKind::Balia, &[(20_000, 100, 0), (10_000, 100, 0), (16_000, 100, 0)]);
    assert_close!(cc.balia_alpha(2), 1.25);
    // α = 2 is capped at 1.5: 10000 − 10000/2·1.5 = 2500.
    cc.on_congestion_event(1, Time(10_000), &loss(Time(9000)), &rtt_ms(100));
    assert_eq!((cc.window(1), cc.ssthresh(1)), (2500, Some(2500)));
    // α = 1.25: 16000 − 16000/2·1.25 = 6000.
    cc.on_congestion_event(2, Time(10_000), &loss(Time(9000)), &rtt_ms(100));
    assert_eq!(cc.window(2), 6000);
    // The best path halves.
    cc.on_congestion_event(0, Time(10_000), &loss(Time(9000)), &rtt_ms(100));
    assert_eq!(cc.window(0), 10_000);
}

// ---------------------------------------------------------------------------------------------
// Per-path slow start, recovery, persistent congestion, undo and removal.

#[test]
fn slow_start_is_per_path_and_uncoupled() {
    for kind in CoupledKind::LINKED {
        let mut cc = setup(kind, &[(100_000, 20, 0)]);
        let fresh = cc.add_path(&cfg(12_000));
        assert_eq!(cc.state(fresh), CcState::SlowStart);
        cc.on_ack(fresh, Time(10_000), &ack(12_000, Time(5000)), &rtt_ms(100));
        assert_eq!(cc.window(fresh), 24_000, "{kind:?}");
        cc.on_ack(fresh, Time(11_000), &ack(5000, Time(5000)), &rtt_ms(100));
        assert_eq!(cc.window(fresh), 29_000, "{kind:?}");
        // Meanwhile the other path's congestion avoidance is coupled to the newcomer.
        assert!(cc.increase(0, 1000) < 1000.0 * 1000.0 / 100_000.0 + 1e-9, "{kind:?}");
    }
}

#[test]
fn recovery_period_prevents_a_second_reduction() {
    for kind in CoupledKind::LINKED {
        let mut cc = setup(kind, &[(40_000, 100, 0), (40_000, 100, 0)]);
        cc.on_congestion_event(0, Time(100_000), &loss(Time(90_000)), &rtt_ms(100));
        let (w, ss) = (cc.window(0), cc.ssthresh(0));
        assert_eq!(w, 20_000, "{kind:?}");
        assert_eq!(cc.state(0), CcState::Recovery);
        // Losses and ACKs of packets sent before the period started change nothing.
        cc.on_congestion_event(0, Time(110_000), &loss(Time(99_000)), &rtt_ms(100));
        cc.on_ack(0, Time(120_000), &ack(5000, Time(100_000)), &rtt_ms(100));
        assert_eq!((cc.window(0), cc.ssthresh(0), cc.state(0)), (w, ss, CcState::Recovery), "{kind:?}");
        // The other path has its own recovery state.
        assert_eq!((cc.window(1), cc.state(1)), (40_000, CcState::CongestionAvoidance));
        // An ACK of a packet sent after the start ends the period; a later loss reduces again.
        cc.on_ack(0, Time(130_000), &ack(1000, Time(100_001)), &rtt_ms(100));
        assert_eq!(cc.state(0), CcState::CongestionAvoidance);
        cc.on_congestion_event(0, Time(140_000), &loss(Time(100_002)), &rtt_ms(100));
        assert!(cc.window(0) < w, "{kind:?}");
    }
}

#[test]
fn persistent_congestion_collapses_to_the_loss_window() {
    let mut cc = setup(CoupledKind::Lia, &[(40_000, 100, 0), (40_000, 100, 0)]);
    cc.on_persistent_congestion(0, Time(100_000));
    assert_eq!((cc.window(0), cc.ssthresh(0), cc.state(0)), (2 * MSS, Some(20_000), CcState::SlowStart));
    // Inside a recovery period ssthresh was already set by the loss.
    cc.on_congestion_event(1, Time(100_000), &loss(Time(90_000)), &rtt_ms(100));
    cc.on_persistent_congestion(1, Time(200_000));
    assert_eq!((cc.window(1), cc.ssthresh(1)), (2 * MSS, Some(20_000)));
}

#[test]
fn a_gquic_retransmission_timeout_halves_the_threshold_and_collapses_the_window() {
    // mp-quic's OliaSender: the RTO's losses reduce the window by β first (here 0.5: the
    // test's config), then OnRetransmissionTimeout(true) sets ssthresh to half of what is left
    // and the window to the minimum, ends the recovery and restarts OLIA's loss intervals.
    let mut cc = setup(CoupledKind::Olia, &[(40_000, 100, 6000), (40_000, 100, 0)]);
    cc.on_congestion_event(0, Time(100_000), &loss(Time(90_000)), &rtt_ms(100));
    assert_eq!(cc.window(0), 20_000);
    cc.on_retransmission_timeout(0, Time(100_000));
    assert_eq!((cc.window(0), cc.ssthresh(0), cc.state(0)), (2 * MSS, Some(10_000), CcState::SlowStart));
    assert_eq!(cc.loss_intervals(0), (0, 0));
    // Slow start from the minimum: an ACK of a packet sent before the timeout grows the window
    // by what it acknowledges (the recovery is over), up to the new threshold.
    cc.on_ack(0, Time(150_000), &ack(3 * MSS, Time(95_000)), &rtt_ms(100));
    assert_eq!((cc.window(0), cc.state(0)), (5 * MSS, CcState::SlowStart));
    // Through a path's view, as the QUIC model calls it; the other path is untouched.
    let shared = share(Box::new(cc));
    let mut view = PathController::new(shared.clone(), 1);
    view.on_retransmission_timeout(Time(200_000));
    assert_eq!((view.window(), view.ssthresh()), (2 * MSS, Some(20_000)));
    // Uncoupled paths forward it to their own controllers (NewReno: the same rule).
    let mut mp = build_multipath(None);
    let i = mp.add_path(&cfg(40_000));
    mp.on_retransmission_timeout(i, Time(1000));
    assert_eq!((mp.window(i), mp.ssthresh(i)), (2 * MSS, Some(20_000)));
    // A controller without the rule collapses as on persistent congestion.
    let mut cubic = build(&CcConfig { initial_window: 40_000, ..CcConfig::quic_default(CcKind::Cubic, MSS) });
    cubic.on_retransmission_timeout(Time(1000));
    assert_eq!((cubic.window(), cubic.ssthresh()), (2 * MSS, Some(28_000)));
}

#[test]
fn spurious_congestion_event_is_undone() {
    let mut cc = setup(CoupledKind::Olia, &[(40_000, 100, 6000)]);
    cc.on_congestion_event(0, Time(100_000), &loss(Time(90_000)), &rtt_ms(100));
    cc.on_ack(0, Time(110_000), &ack(2000, Time(95_000)), &rtt_ms(100));
    assert_eq!((cc.window(0), cc.loss_intervals(0)), (20_000, (6000, 2000)));
    cc.on_spurious_congestion(0, Time(120_000));
    assert_eq!((cc.window(0), cc.ssthresh(0), cc.loss_intervals(0)), (40_000, Some(40_000), (0, 8000)));
    assert_eq!(cc.state(0), CcState::CongestionAvoidance);
}

#[test]
fn a_removed_path_no_longer_counts() {
    let mut cc = setup(CoupledKind::Lia, &[(10_000, 100, 0), (20_000, 50, 0)]);
    assert_close!(cc.increase(0, 1000), 32.0);
    assert_eq!(cc.total_window(), 30_000);
    cc.remove_path(1);
    assert!(!cc.is_active(1));
    assert_eq!((cc.window(1), cc.ssthresh(1), cc.total_window()), (0, None, 10_000));
    // Alone again: alpha = 1 and the increase is NewReno's.
    assert_close!(cc.lia_alpha(), 1.0);
    assert_close!(cc.increase(0, 1000), 100.0);
    // Late events for the removed path are ignored.
    cc.on_ack(1, Time(10_000), &ack(10_000, Time(5000)), &rtt_ms(50));
    cc.on_congestion_event(1, Time(10_000), &loss(Time(9000)), &rtt_ms(50));
    assert_eq!((cc.window(1), cc.path_count()), (0, 2));
    let next = cc.add_path(&cfg(12_000));
    assert_eq!(next, 2);
}

#[test]
fn a_suspended_path_leaves_the_coupling_until_resumed() {
    let mut cc = setup(CoupledKind::Lia, &[(10_000, 100, 0), (20_000, 50, 0)]);
    cc.set_suspended(1, true);
    // Path 0 grows as if alone; path 1 keeps its state and still counts in the total window.
    assert_close!(cc.lia_alpha(), 1.0);
    assert_close!(cc.increase(0, 1000), 100.0);
    assert!(cc.is_active(1));
    assert_eq!((cc.window(1), cc.total_window()), (20_000, 30_000));
    cc.set_suspended(1, false);
    assert_close!(cc.lia_alpha(), 0.96);
    assert_close!(cc.increase(0, 1000), 32.0);
}

#[test]
fn path_controllers_are_views_of_one_shared_controller() {
    // Two PathControllers over a shared LIA fed the events of `setup`, and a CoupledCc fed
    // them directly, agree on every window.
    let shared = share(build_multipath(Some(CoupledKind::Lia)));
    let paths = [(10_000u64, 100u64), (20_000, 50)];
    for &(w, _) in &paths {
        multiconn_cc::coupled::lock(&shared).add_path(&cfg(2 * w));
    }
    let mut views: Vec<PathController> = (0..2).map(|i| PathController::new(shared.clone(), i)).collect();
    let mut direct = CoupledCc::new(CoupledKind::Lia);
    for (i, &(w, rtt)) in paths.iter().enumerate() {
        direct.add_path(&cfg(2 * w));
        views[i].on_congestion_event(Time(1000), &loss(Time(999)), &no_sample());
        direct.on_congestion_event(i, Time(1000), &loss(Time(999)), &no_sample());
        views[i].on_ack(Time(3000), &ack(0, Time(1500)), &rtt_ms(rtt));
        direct.on_ack(i, Time(3000), &ack(0, Time(1500)), &rtt_ms(rtt));
    }
    for step in 0..200u64 {
        let i = (step % 2) as usize;
        let now = Time(10_000 + step * 1000);
        views[i].on_packet_sent(now, 1000, 1000);
        direct.on_packet_sent(i, now, 1000, 1000);
        views[i].on_ack(now, &ack(1000, Time(now.0 - 1)), &rtt_ms(paths[i].1));
        direct.on_ack(i, now, &ack(1000, Time(now.0 - 1)), &rtt_ms(paths[i].1));
        for (j, v) in views.iter().enumerate() {
            assert_eq!((v.window(), v.ssthresh(), v.state()), (direct.window(j), direct.ssthresh(j), direct.state(j)));
        }
    }
    // The coupling slowed both paths below NewReno's 100 B per 1000-B ACK.
    assert!(views[0].window() < 10_000 + 100 * 100 && views[1].window() < 20_000 + 100 * 50);
    assert_eq!((views[0].kind(), views[1].path(), views[0].pacing_rate()), (CcKind::NewReno, 1, None));
    multiconn_cc::coupled::lock(&shared).remove_path(1);
    assert_eq!(views[1].window(), 0);
}

#[test]
#[should_panic(expected = "never added")]
fn a_view_of_a_path_never_added_panics() {
    let shared = share(build_multipath(Some(CoupledKind::Olia)));
    PathController::new(shared, 0);
}

#[test]
fn a_path_without_rtt_sample_is_not_coupled() {
    let mut cc = setup(CoupledKind::Lia, &[(10_000, 100, 0)]);
    let i = cc.add_path(&cfg(40_000));
    cc.on_congestion_event(i, Time(1000), &loss(Time(999)), &no_sample());
    cc.on_ack(i, Time(3000), &ack(0, Time(1500)), &no_sample());
    assert_close!(cc.increase(i, 1000), 50.0);
    assert_close!(cc.increase(0, 1000), 100.0);
    cc.on_rtt_sample(i, &rtt_ms(100));
    // Now coupled: equal RTTs, alpha = 30000·(20000/rtt²)/(30000/rtt)² = 2/3, increase 1e6·(2/3)/30000.
    assert_close!(cc.lia_alpha(), 2.0 / 3.0);
    assert_close!(cc.increase(0, 1000), 200.0 / 9.0);
}

#[test]
fn uncoupled_runs_one_independent_controller_per_path() {
    let mut mp = build_multipath(None);
    assert_eq!(mp.coupling(), None);
    let cfgs = [CcConfig::quic_default(CcKind::NewReno, 1200), CcConfig::quic_default(CcKind::Cubic, 1200)];
    let mut alone: Vec<_> = cfgs.iter().map(build).collect();
    for c in &cfgs {
        mp.add_path(c);
    }
    let mut now = Time(0);
    for step in 0..400u64 {
        now += Dur::from_millis(5);
        let i = (step % 2) as usize;
        let r = rtt_ms(40 + 20 * i as u64);
        if step % 37 == 36 {
            mp.on_congestion_event(i, now, &loss(Time(now.0 - 1)), &r);
            alone[i].on_congestion_event(now, &loss(Time(now.0 - 1)), &r);
        } else {
            mp.on_ack(i, now, &ack(1200, Time(now.0 - 1)), &r);
            alone[i].on_ack(now, &ack(1200, Time(now.0 - 1)), &r);
        }
        for (j, a) in alone.iter().enumerate() {
            assert_eq!((mp.window(j), mp.ssthresh(j), mp.state(j)), (a.window(), a.ssthresh(), a.state()));
        }
    }
    assert_eq!((mp.kind(0), mp.kind(1)), (CcKind::NewReno, CcKind::Cubic));
    mp.set_suspended(1, true);
    assert_eq!(mp.window(1), alone[1].window(), "independent controllers ignore suspension");
    mp.remove_path(0);
    assert_eq!((mp.window(0), mp.total_window()), (0, alone[1].window()));
}

#[test]
fn kinds_parse_and_deserialize() {
    use serde::de::{value::StrDeserializer, Deserialize, IntoDeserializer};
    for k in CoupledKind::ALL {
        assert_eq!(build_multipath(Some(k)).coupling(), Some(k));
        assert_eq!(k.name().parse::<CoupledKind>(), Ok(k));
        let de: StrDeserializer<serde::de::value::Error> = k.name().into_deserializer();
        assert_eq!(CoupledKind::deserialize(de).unwrap(), k);
    }
    assert_eq!("coupled".parse::<CoupledKind>(), Ok(CoupledKind::Lia));
    assert_eq!("reno".parse::<CoupledKind>().unwrap_err().to_string(), "unknown coupled congestion control \"reno\"; available: lia, olia, balia, wvegas, westwood");
    assert_eq!(build_multipath(Some(CoupledKind::Balia)).coupling(), Some(CoupledKind::Balia));
}

// ---------------------------------------------------------------------------------------------
// Fluid sanity: an ACK-clocked loop without a bottleneck. Every packet arrives one RTT after it
// was sent and the n-th packet of a path (counted across the run) is lost, so each path sees a
// fixed loss probability 1/n. At each arrival the path sends while its window allows. The first
// window of each path is spread over its RTT and the paths are offset by half a packet interval.
// Returns each path's time-averaged window over the second half of the run.

fn fluid(mp: &mut dyn MultipathController, paths: &[(u64, u64)], secs: u64) -> Vec<f64> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let n = paths.len();
    let rtts: Vec<_> = paths.iter().map(|&(ms, _)| rtt_ms(ms)).collect();
    let rtt_ns: Vec<u64> = paths.iter().map(|&(ms, _)| ms * 1_000_000).collect();
    // (arrival, sequence, path, sent)
    let mut arrivals = BinaryHeap::new();
    let mut seq = 0u64;
    let mut in_flight = vec![0u64; n];
    let mut arrived = vec![0u64; n];
    for i in 0..n {
        mp.add_path(&cfg(10 * MSS));
        for j in 0..10 {
            let sent = 1 + j * rtt_ns[i] / 10 + i as u64 * rtt_ns[i] / 20;
            arrivals.push(Reverse((sent + rtt_ns[i], seq, i, sent)));
            seq += 1;
            in_flight[i] += MSS;
        }
    }
    let (end, half) = (secs * 1_000_000_000, secs * 500_000_000);
    let mut area = vec![0f64; n];
    let mut last = vec![half; n];
    while let Some(Reverse((t, _, i, sent))) = arrivals.pop() {
        if t > end {
            break;
        }
        if t > half {
            area[i] += mp.window(i) as f64 * (t - last[i]) as f64;
            last[i] = t;
        }
        in_flight[i] -= MSS;
        arrived[i] += 1;
        let (now, sent) = (Time(t), Time(sent));
        if arrived[i] % paths[i].1 == 0 {
            let l = LossEvent { bytes_lost: MSS, largest_lost_sent: sent, bytes_in_flight: in_flight[i], prior_in_flight: in_flight[i] + MSS };
            mp.on_congestion_event(i, now, &l, &rtts[i]);
        } else {
            let a = AckEvent { prior_in_flight: in_flight[i] + MSS, bytes_in_flight: in_flight[i], ..ack(MSS, sent) };
            mp.on_ack(i, now, &a, &rtts[i]);
        }
        while in_flight[i] + MSS <= mp.window(i) {
            in_flight[i] += MSS;
            mp.on_packet_sent(i, now, MSS, in_flight[i]);
            arrivals.push(Reverse((t + rtt_ns[i], seq, i, t)));
            seq += 1;
        }
    }
    area.iter().map(|a| a / half as f64).collect()
}

#[test]
fn equal_paths_take_one_fair_share_together() {
    // Reno's window for p = 1/400 is about sqrt(2/p) = 28 packets (the sawtooth averages less).
    // The linked-increase kinds only: wVegas and Westwood+ do not take one loss-based fair
    // share under random loss without queueing (see wvegas.rs in these tests).
    let reno = fluid(&mut *build_multipath(None), &[(100, 400)], 300)[0];
    assert!((15_000.0..30_000.0).contains(&reno), "{reno}");
    let uncoupled: f64 = fluid(&mut *build_multipath(None), &[(100, 400), (100, 400)], 300).iter().sum();
    assert!((1.8..2.2).contains(&(uncoupled / reno)), "uncoupled {uncoupled} vs reno {reno}");
    for kind in CoupledKind::LINKED {
        let w = fluid(&mut *build_multipath(Some(kind)), &[(100, 400), (100, 400)], 300);
        let total: f64 = w.iter().sum();
        assert!((0.8..1.25).contains(&(total / reno)), "{kind:?}: total {total} vs reno {reno}");
        assert!((0.8..1.25).contains(&(w[0] / w[1])), "{kind:?}: {w:?}");
    }
}

#[test]
fn traffic_moves_to_the_less_congested_path() {
    let best = fluid(&mut *build_multipath(None), &[(100, 1000)], 300)[0];
    for kind in CoupledKind::LINKED {
        let w = fluid(&mut *build_multipath(Some(kind)), &[(100, 100), (100, 1000)], 300);
        assert!(w[1] > 5.0 * w[0], "{kind:?}: {w:?}");
        let total = w[0] + w[1];
        assert!((0.8..1.25).contains(&(total / best)), "{kind:?}: total {total} vs a single flow on the better path {best}");
    }
}

#[test]
fn olia_moves_to_the_path_a_single_flow_would_prefer() {
    // Same loss rate, RTTs 40 and 100 ms: a single flow does best on the 40 ms path. OLIA sends
    // (almost) everything there (ℓ/rtt² picks it); LIA keeps about equal windows on both.
    let olia = fluid(&mut *build_multipath(Some(CoupledKind::Olia)), &[(40, 400), (100, 400)], 300);
    assert!(olia[0] > 5.0 * olia[1], "{olia:?}");
    let lia = fluid(&mut *build_multipath(Some(CoupledKind::Lia)), &[(40, 400), (100, 400)], 300);
    assert!((0.75..1.33).contains(&(lia[0] / lia[1])), "{lia:?}");
}

#[test]
fn build_paths_gives_each_path_a_view_of_one_shared_controller() {
    use multiconn_cc::{build_paths, coupled::lock, CcConfig, CcKind};
    let cfg = CcConfig::tcp_default(CcKind::NewReno, 1000);
    let (shared, mut views) = build_paths(Some(CoupledKind::Lia), &[cfg.clone(), cfg]);
    assert_eq!(views.iter().map(|v| v.window()).collect::<Vec<_>>(), vec![10_000, 10_000]);
    views[0].on_persistent_congestion(multiconn_core::Time::ZERO);
    assert_eq!(views.iter().map(|v| v.window()).collect::<Vec<_>>(), vec![1000, 10_000], "a path's event moves only its own window");
    assert_eq!(lock(&shared).total_window(), 11_000);
    assert_eq!(lock(&shared).coupling(), Some(CoupledKind::Lia));
    assert!(views.iter().all(|v| v.kind() == CcKind::NewReno), "the coupled algorithms are Reno-based");
    let (_, views) = build_paths(None, &[CcConfig::tcp_default(CcKind::Cubic, 1000)]);
    assert_eq!(views[0].kind(), CcKind::Cubic, "uncoupled paths run their own controller");
}
