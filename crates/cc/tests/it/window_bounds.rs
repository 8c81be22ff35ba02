//! Property: under any sequence of sends, ACKs, losses, persistent congestion and undo, no
//! controller's window drops below its floor or runs away, and every reported value stays
//! consistent.

use multiconn_cc::{build, AckEvent, CcConfig, CcKind, CcState, EcnFeedback, LossEvent, RateSample, RttEstimator, RttVarRule};
use multiconn_core::{Dur, Rate, Time};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Ev {
    Send { bytes: u64 },
    Ack { bytes: u64, age_ms: u64, rtt_ms: u64, app_limited: bool, rate: Option<u64>, sample_app_limited: bool },
    Loss { bytes: u64, age_ms: u64 },
    Persistent,
    Spurious,
    Idle { ms: u64 },
    /// ECN feedback (a scalable controller's; the others ignore it).
    Ecn { ce: u64, ect: u64, age_ms: u64 },
}

fn event() -> impl Strategy<Value = Ev> {
    prop_oneof![
        4 => (1u64..3000).prop_map(|bytes| Ev::Send { bytes }),
        8 => (0u64..200_000, 0u64..500, 1u64..400, any::<bool>(), proptest::option::of(1u64..2_000_000_000), any::<bool>())
            .prop_map(|(bytes, age_ms, rtt_ms, app_limited, rate, sample_app_limited)| Ev::Ack { bytes, age_ms, rtt_ms, app_limited, rate, sample_app_limited }),
        2 => (1u64..100_000, 0u64..500).prop_map(|(bytes, age_ms)| Ev::Loss { bytes, age_ms }),
        2 => (0u64..50, 0u64..100, 0u64..500).prop_map(|(ce, ect, age_ms)| Ev::Ecn { ce, ect, age_ms }),
        1 => Just(Ev::Persistent),
        1 => Just(Ev::Spurious),
        2 => (1u64..20_000).prop_map(|ms| Ev::Idle { ms }),
    ]
}

fn config() -> impl Strategy<Value = CcConfig> {
    (
        prop_oneof![Just(CcKind::NewReno), Just(CcKind::Cubic), Just(CcKind::Bbr), Just(CcKind::Bbr3), Just(CcKind::Prague)],
        prop_oneof![Just(1200u64), Just(1460), Just(1472)],
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(kind, mds, tcp, hystart, fast_convergence, reduce_from_flight, app_limited_check)| {
            let base = if tcp { CcConfig::tcp_default(kind, mds) } else { CcConfig::quic_default(kind, mds) };
            CcConfig { hystart, fast_convergence, reduce_from_flight, app_limited_check, ..base }
        })
}

const MS: u64 = 1_000_000;
/// No plausible simulated path needs more than this (1 TB); beyond it something overflowed.
const RUNAWAY: u64 = 1 << 40;

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn windows_stay_between_floor_and_runaway(cfg in config(), events in proptest::collection::vec(event(), 1..400)) {
        let mut cc = build(&cfg);
        prop_assert_eq!(cc.kind(), cfg.kind);
        let floor = cfg.loss_window.min(cfg.minimum_window);
        let mut rtt = RttEstimator::new(Dur::from_millis(333), RttVarRule::Rfc9002);
        let mut now = Time(0);
        let mut in_flight = 0u64;
        for ev in events {
            now += Dur::from_millis(1);
            match ev {
                Ev::Send { bytes } => {
                    in_flight += bytes;
                    cc.on_packet_sent(now, bytes, in_flight);
                }
                Ev::Ack { bytes, age_ms, rtt_ms, app_limited, rate, sample_app_limited } => {
                    rtt.update(Dur::from_millis(rtt_ms), Dur::ZERO);
                    let acked = bytes.min(in_flight);
                    let ack = AckEvent {
                        bytes_acked: acked,
                        largest_acked_sent: Time(now.0.saturating_sub(age_ms * MS)),
                        prior_in_flight: in_flight,
                        bytes_in_flight: in_flight - acked,
                        app_limited,
                        rate_sample: rate.map(|bps| RateSample {
                            delivery_rate: Rate(bps),
                            delivered: acked,
                            interval: Dur::from_millis(rtt_ms),
                            is_app_limited: sample_app_limited,
                            prior_delivered: 0,
                            rtt: Dur::from_millis(rtt_ms),
                            tx_in_flight: 0,
                            lost: 0,
                            newly_lost: 0,
                        }),
                    };
                    in_flight -= acked;
                    cc.on_ack(now, &ack, &rtt);
                }
                Ev::Loss { bytes, age_ms } => {
                    let lost = bytes.min(in_flight);
                    let loss = LossEvent {
                        bytes_lost: lost,
                        largest_lost_sent: Time(now.0.saturating_sub(age_ms * MS)),
                        bytes_in_flight: in_flight - lost,
                        prior_in_flight: in_flight,
                    };
                    in_flight -= lost;
                    cc.on_congestion_event(now, &loss, &rtt);
                }
                Ev::Persistent => cc.on_persistent_congestion(now),
                Ev::Spurious => cc.on_spurious_congestion(now),
                Ev::Idle { ms } => now += Dur::from_millis(ms),
                Ev::Ecn { ce, ect, age_ms } => {
                    let fb = EcnFeedback { ce_packets: ce, ect_packets: ect, largest_acked_sent: Time(now.0.saturating_sub(age_ms * MS)) };
                    cc.on_ecn_feedback(now, &fb, &rtt);
                }
            }
            let w = cc.window();
            prop_assert!(w >= floor, "{:?}: window {} below floor {}", cfg.kind, w, floor);
            prop_assert!(w < RUNAWAY, "{:?}: window {} ran away", cfg.kind, w);
            if let Some(s) = cc.ssthresh() {
                prop_assert!(s >= floor && s < RUNAWAY, "{:?}: ssthresh {}", cfg.kind, s);
            }
            if let Some(rate) = cc.pacing_rate() {
                prop_assert!(rate.bps() > 0);
            }
            let state = cc.state();
            match cfg.kind {
                CcKind::Bbr | CcKind::Bbr3 => prop_assert!(matches!(state, CcState::Startup | CcState::Drain | CcState::ProbeBw | CcState::ProbeRtt)),
                _ => prop_assert!(matches!(state, CcState::SlowStart | CcState::CongestionAvoidance | CcState::Recovery)),
            }
        }
    }
}
