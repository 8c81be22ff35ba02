//! Coupled Westwood+ (LIA's increase, Westwood+'s decrease): the bandwidth filter and the
//! threshold after a loss, computed by hand.

use multiconn_cc::westwood::{BandwidthEstimator, CoupledWestwood};
use multiconn_cc::{build_multipath, AckEvent, CcConfig, CcKind, CcState, CoupledKind, LossEvent, MultipathController, RttEstimator, RttVarRule};
use multiconn_core::{Dur, Time};

const MSS: u64 = 1000;
const MS: u64 = 1_000_000;

fn cfg(initial_window: u64) -> CcConfig {
    CcConfig { initial_window, ..CcConfig::quic_default(CcKind::NewReno, MSS) }
}
fn rtt_ms(ms: u64) -> RttEstimator {
    let mut r = RttEstimator::new(Dur::from_millis(333), RttVarRule::Rfc9002);
    r.update(Dur::from_millis(ms), Dur::ZERO);
    r
}
fn ack(bytes: u64, sent: Time) -> AckEvent {
    AckEvent { bytes_acked: bytes, largest_acked_sent: sent, prior_in_flight: 0, bytes_in_flight: 0, app_limited: false, rate_sample: None }
}
fn loss(sent: Time) -> LossEvent {
    LossEvent { bytes_lost: MSS, largest_lost_sent: sent, bytes_in_flight: 0, prior_in_flight: MSS }
}
fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-12 * want.abs().max(1e-9)
}

#[test]
fn the_bandwidth_estimate_is_filtered_twice_by_seven_eighths() {
    let mut b = BandwidthEstimator::default();
    let rtt = Dur::from_millis(100);
    // The first ACK opens the interval (its bytes count); it closes only after max(RTT, 50 ms).
    b.on_ack(Time(0), 1000, rtt);
    b.on_ack(Time(50 * MS), 4000, rtt);
    b.on_ack(Time(100 * MS), 0, rtt);
    assert_eq!(b.estimate(), None);
    // 125 ms: 10000 bytes / 125 ms = 8e-5 B/ns; the first sample fills both stages.
    b.on_ack(Time(125 * MS), 5000, rtt);
    assert!(close(b.once_filtered().unwrap(), 8e-5) && close(b.estimate().unwrap(), 8e-5), "{b:?}");
    // 250 ms: 25000 bytes / 125 ms = 2e-4. bw_ns = (7·8e-5 + 2e-4)/8 = 9.5e-5;
    // BWE = (7·8e-5 + 9.5e-5)/8 = 8.1875e-5.
    b.on_ack(Time(250 * MS), 25_000, rtt);
    assert!(close(b.once_filtered().unwrap(), 9.5e-5), "{b:?}");
    assert!(close(b.estimate().unwrap(), 8.1875e-5), "{b:?}");
    // With a 20 ms RTT the interval is at least 50 ms: 40 ms is too short, 60 ms closes it with
    // 6000/60 ms = 1e-4: bw_ns = (7·9.5e-5 + 1e-4)/8 = 9.5625e-5,
    // BWE = (7·8.1875e-5 + 9.5625e-5)/8 = 8.359375e-5.
    let short = Dur::from_millis(20);
    b.on_ack(Time(290 * MS), 3000, short);
    assert!(close(b.estimate().unwrap(), 8.1875e-5));
    b.on_ack(Time(310 * MS), 3000, short);
    assert!(close(b.once_filtered().unwrap(), 9.5625e-5), "{b:?}");
    assert!(close(b.estimate().unwrap(), 8.359375e-5), "{b:?}");
}

#[test]
fn a_loss_sets_ssthresh_to_the_estimate_times_the_minimum_rtt() {
    let mut cc = CoupledWestwood::new();
    let p = cc.add_path(&cfg(100_000));
    let rtt = rtt_ms(100);
    // 10000 bytes in 125 ms: BWE = 8e-5 B/ns; BWE·RTT_min = 8e-5·100 ms = 8000 bytes.
    cc.on_ack(p, Time(MS), &ack(1000, Time(1)), &rtt);
    cc.on_ack(p, Time(126 * MS), &ack(9000, Time(2)), &rtt);
    assert_eq!(cc.window(p), 110_000);
    assert_eq!(cc.bdp(p), Some(8000));
    cc.on_congestion_event(p, Time(130 * MS), &loss(Time(129 * MS)), &rtt);
    assert_eq!((cc.window(p), cc.ssthresh(p), cc.state(p)), (8000, Some(8000), CcState::Recovery));
    // Persistent congestion: the loss window, ssthresh BWE·RTT_min.
    cc.on_persistent_congestion(p, Time(140 * MS));
    assert_eq!((cc.window(p), cc.ssthresh(p)), (2 * MSS, Some(8000)));

    // A tiny estimate is floored at 2 MSS; a large one never raises the window.
    let mut cc = CoupledWestwood::new();
    let p = cc.add_path(&cfg(100_000));
    cc.on_ack(p, Time(MS), &ack(100, Time(1)), &rtt);
    cc.on_ack(p, Time(126 * MS), &ack(0, Time(2)), &rtt);
    cc.on_congestion_event(p, Time(130 * MS), &loss(Time(129 * MS)), &rtt);
    assert_eq!(cc.window(p), 2 * MSS);
    let mut cc = CoupledWestwood::new();
    let p = cc.add_path(&cfg(10_000));
    // Application-limited ACKs: the window does not grow, the estimate counts them (80000 B).
    let limited = AckEvent { app_limited: true, ..ack(100_000, Time(1)) };
    cc.on_ack(p, Time(MS), &limited, &rtt);
    cc.on_ack(p, Time(126 * MS), &AckEvent { bytes_acked: 0, ..limited }, &rtt);
    assert_eq!((cc.window(p), cc.bdp(p)), (10_000, Some(80_000)));
    cc.on_congestion_event(p, Time(130 * MS), &loss(Time(129 * MS)), &rtt);
    assert_eq!(cc.window(p), 10_000);
}

#[test]
fn before_the_first_estimate_a_loss_halves_and_the_increase_is_lia() {
    let mut cc = build_multipath(Some(CoupledKind::Westwood));
    assert_eq!(cc.coupling(), Some(CoupledKind::Westwood));
    let p = cc.add_path(&cfg(40_000));
    cc.on_congestion_event(p, Time(1000), &loss(Time(999)), &rtt_ms(100));
    assert_eq!((cc.window(p), cc.ssthresh(p)), (20_000, Some(20_000)));
    // Alone, LIA is NewReno in congestion avoidance: 1000 bytes add 1000·1000/20000 = 50.
    let mut ww = CoupledWestwood::new();
    let q = ww.add_path(&cfg(40_000));
    ww.on_congestion_event(q, Time(1000), &loss(Time(999)), &rtt_ms(100));
    ww.on_ack(q, Time(2000), &ack(1000, Time(1500)), &rtt_ms(100));
    assert_eq!(ww.window(q), 20_050);
    assert!((ww.lia().increase(q, 1000) - 1000.0 * 1000.0 / 20_050.0).abs() < 1e-9);
}
