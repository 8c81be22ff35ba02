//! wVegas (Cao, Xu, Fu, ICNP 2012; Linux MPTCP `wvegas`) against its update rules computed by
//! hand, and the delay-based and Westwood+ controllers against OLIA under random loss without
//! queueing.

use multiconn_cc::wvegas::Wvegas;
use multiconn_cc::{build_multipath, AckEvent, CcConfig, CcKind, CcState, CoupledKind, LossEvent, MultipathController, RttEstimator, RttVarRule};
use multiconn_core::{Dur, Time};

const MSS: u64 = 1000;
/// Send time of the packets acknowledged inside a round: after the setup's recovery period
/// (which starts at 1000 ns) and before every round's start.
const EARLY: Time = Time(2000);

fn cfg(initial_window: u64) -> CcConfig {
    CcConfig { initial_window, ..CcConfig::quic_default(CcKind::NewReno, MSS) }
}
fn est() -> RttEstimator {
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

/// Drives one path: its estimator and the clock (1 ms per ACK).
struct Path {
    i: usize,
    rtt: RttEstimator,
    now: u64,
}

impl Path {
    /// A path in congestion avoidance at `w` bytes: it starts at 2w, takes a loss (recovery
    /// from 1000 ns), and an ACK without RTT sample of a packet sent after that opens its first
    /// round.
    fn in_ca(cc: &mut Wvegas, w: u64) -> Path {
        let i = cc.add_path(&cfg(2 * w));
        cc.on_congestion_event(i, Time(1000), &loss(Time(999)), &est());
        let mut p = Path { i, rtt: est(), now: 0 };
        p.open(cc);
        assert_eq!((cc.window(i), cc.state(i)), (w, CcState::CongestionAvoidance));
        p
    }
    fn in_slow_start(cc: &mut Wvegas, w: u64) -> Path {
        let i = cc.add_path(&cfg(w));
        let mut p = Path { i, rtt: est(), now: 0 };
        p.open(cc);
        p
    }
    fn open(&mut self, cc: &mut Wvegas) {
        self.now += 1_000_000;
        cc.on_ack(self.i, Time(self.now), &ack(0, EARLY), &self.rtt);
    }
    /// One round: an ACK of `bytes` per entry, with an RTT sample of that many ms where given;
    /// the last ACK acknowledges a packet sent after the round began and ends it.
    fn round(&mut self, cc: &mut Wvegas, samples: &[Option<u64>], bytes: u64) {
        for (k, s) in samples.iter().enumerate() {
            self.now += 1_000_000;
            if let Some(ms) = s {
                self.rtt.update(Dur::from_millis(*ms), Dur::ZERO);
            }
            let sent = if k + 1 == samples.len() { Time(self.now - 1) } else { EARLY };
            cc.on_ack(self.i, Time(self.now), &ack(bytes, sent), &self.rtt);
        }
    }
    fn samples(&mut self, cc: &mut Wvegas, ms: &[u64]) {
        let s: Vec<_> = ms.iter().map(|&m| Some(m)).collect();
        self.round(cc, &s, 0);
    }
}

#[test]
fn congestion_avoidance_weight_alpha_steps_and_drain() {
    let mut cc = Wvegas::new();
    let mut a = Path::in_ca(&mut cc, 19_000);
    // Path b: 30 packets, smoothed RTT 150 ms (one sample, no evaluated round yet).
    let mut b = Path::in_ca(&mut cc, 30_000);
    b.rtt.update(Dur::from_millis(150), Dur::ZERO);
    b.round(&mut cc, &[None], 0);
    assert_eq!(cc.window(b.i), 30_000);

    // Round 1: no queueing. diff = 0 < α = 2: +1 MSS; α untouched, nothing to drain.
    a.samples(&mut cc, &[100, 100, 100]);
    assert_eq!(cc.base_rtt(a.i), Some(Dur::from_millis(100)));
    assert_close!(cc.last_round(a.i).unwrap().diff, 0.0);
    assert_eq!((cc.window(a.i), cc.alpha(a.i), cc.q_min(a.i)), (20_000, 2.0, None));

    // Round 2: mean 125 ms. diff = 20·25/125 = 4 ≥ α (2): weight = (20000/125)/(20000/125 +
    // 30000/150) = 160/360 = 4/9, α = max(2, 40/9) = 4.444; diff < α: +1 MSS. q = 25 ms = q_min.
    a.samples(&mut cc, &[100, 125, 150]);
    assert_close!(cc.last_round(a.i).unwrap().diff, 4.0);
    assert_close!(cc.weight(a.i), 4.0 / 9.0);
    assert_close!(cc.alpha(a.i), 40.0 / 9.0);
    assert_eq!(cc.window(a.i), 21_000);
    assert_close!(cc.q_min(a.i).unwrap(), 25e6);

    // Round 3: mean 160 ms. diff = 21·60/160 = 7.875 ≥ α: weight = (21000/160)/(21000/160 +
    // 200) = 131.25/331.25 = 21/53, α = 210/53 = 3.96; diff > α: −1 MSS = 20 packets. q = 60 ms
    // ≥ 2·25 ms: drain, cwnd = 20000·100/(2·160) = 6250, q_min forgotten; ssthresh follows.
    a.samples(&mut cc, &[160, 160, 160]);
    assert_close!(cc.last_round(a.i).unwrap().diff, 7.875);
    assert_close!(cc.weight(a.i), 21.0 / 53.0);
    assert_close!(cc.alpha(a.i), 210.0 / 53.0);
    assert_eq!((cc.window(a.i), cc.ssthresh(a.i), cc.q_min(a.i)), (6250, Some(6250), None));
    assert_eq!(cc.state(a.i), CcState::CongestionAvoidance);

    // Round 4: mean 110 ms, diff = 6.25·10/110 = 0.568 < α: +1 MSS = 7250; q_min = 10 ms.
    a.samples(&mut cc, &[110, 110, 110]);
    assert_close!(cc.last_round(a.i).unwrap().diff, 6.25 * 10.0 / 110.0);
    assert_eq!(cc.window(a.i), 7250);
    assert_close!(cc.q_min(a.i).unwrap(), 10e6);
    // Round 5: mean 125 ms, diff = 7.25·25/125 = 1.45 < α: +1 MSS = 8250; q = 25 ms ≥ 2·10 ms
    // (the smallest queueing delay seen, not the 25 ms of round 2): cwnd = 8250·100/250 = 3300.
    a.samples(&mut cc, &[125, 125, 125]);
    assert_close!(cc.last_round(a.i).unwrap().diff, 1.45);
    assert_close!(cc.alpha(a.i), 210.0 / 53.0);
    assert_eq!((cc.window(a.i), cc.q_min(a.i)), (3300, None));
    // Path b did not move.
    assert_eq!(cc.window(b.i), 30_000);
}

#[test]
fn a_round_above_alpha_takes_one_mss_off() {
    // One path: weight 1, α = max(2, 10) = 10 once recomputed. Base 100 ms; mean 200 ms with 30
    // packets: diff = 15 ≥ 2 → α = 10; 15 > 10 → 29 packets. q = 100 ms = q_min (first): no drain.
    let mut cc = Wvegas::new();
    let mut a = Path::in_ca(&mut cc, 30_000);
    a.samples(&mut cc, &[100, 100, 100]);
    assert_eq!(cc.window(a.i), 31_000);
    a.samples(&mut cc, &[200, 200, 200]);
    // 31 packets: diff = 15.5.
    assert_close!(cc.last_round(a.i).unwrap().diff, 15.5);
    assert_close!(cc.weight(a.i), 1.0);
    assert_close!(cc.alpha(a.i), 10.0);
    assert_eq!(cc.window(a.i), 30_000);
    // Mean 150 ms: diff = 30·50/150 = 10 = α: the window holds; q = 50 ms becomes q_min (it is
    // below the 100 ms of the round before), so no drain.
    a.samples(&mut cc, &[150, 150, 150]);
    assert_close!(cc.last_round(a.i).unwrap().diff, 10.0);
    assert_eq!(cc.window(a.i), 30_000);
    assert_close!(cc.q_min(a.i).unwrap(), 50e6);
}

#[test]
fn slow_start_ends_when_more_than_gamma_packets_queue() {
    // 20 packets, base 100 ms, mean 125 ms: diff = 20·25/125 = 4 > γ = 1; target = 20·100/125
    // = 16 packets, cwnd = min(20, 16 + 1) = 17 packets, and the path is in congestion avoidance.
    let mut cc = Wvegas::new();
    let mut a = Path::in_slow_start(&mut cc, 20_000);
    assert_eq!(cc.state(a.i), CcState::SlowStart);
    a.samples(&mut cc, &[100, 125, 150]);
    assert_close!(cc.last_round(a.i).unwrap().diff, 4.0);
    assert_eq!((cc.window(a.i), cc.ssthresh(a.i), cc.state(a.i)), (17_000, Some(17_000), CcState::CongestionAvoidance));

    // Without queueing slow start goes on: every ACK adds its bytes, also the round's last.
    let mut b = Path::in_slow_start(&mut cc, 20_000);
    b.round(&mut cc, &[Some(100), Some(100), Some(100)], 1000);
    assert_eq!((cc.window(b.i), cc.state(b.i)), (23_000, CcState::SlowStart));
    // diff = 23·1/101 = 0.23 ≤ γ: still slow start.
    b.round(&mut cc, &[Some(101), Some(101), Some(101)], 1000);
    assert_eq!((cc.window(b.i), cc.state(b.i)), (26_000, CcState::SlowStart));
}

#[test]
fn a_round_with_fewer_than_three_samples_is_a_reno_round() {
    // 9 ACKs of 1000 bytes, 2 of them with a sample: NewReno's increase for the round's bytes,
    // 9000·1000/20000 = 450 bytes, at the round's end.
    let mut cc = Wvegas::new();
    let mut a = Path::in_ca(&mut cc, 20_000);
    let mut samples = [None; 9];
    samples[2] = Some(300);
    samples[7] = Some(100);
    a.round(&mut cc, &samples, 1000);
    assert_eq!(cc.window(a.i), 20_450);
    assert!(cc.last_round(a.i).is_none());
    // Within a round congestion avoidance does not move the window.
    a.now += 1_000_000;
    cc.on_ack(a.i, Time(a.now), &ack(1000, EARLY), &a.rtt);
    assert_eq!(cc.window(a.i), 20_450);
}

#[test]
fn losses_are_reno_with_per_path_recovery_and_persistent_congestion() {
    let mut cc = Wvegas::new();
    let mut a = Path::in_ca(&mut cc, 40_000);
    a.samples(&mut cc, &[100, 100, 100]);
    assert_eq!(cc.window(a.i), 41_000);
    let now = a.now;
    cc.on_congestion_event(a.i, Time(now + 1), &loss(Time(now - 10)), &a.rtt);
    assert_eq!((cc.window(a.i), cc.ssthresh(a.i), cc.state(a.i)), (20_500, Some(20_500), CcState::Recovery));
    // A second loss of the same flight: no second reduction.
    cc.on_congestion_event(a.i, Time(now + 2), &loss(Time(now)), &a.rtt);
    assert_eq!(cc.window(a.i), 20_500);
    cc.on_persistent_congestion(a.i, Time(now + 3));
    assert_eq!((cc.window(a.i), cc.ssthresh(a.i)), (2 * MSS, Some(20_500)));
    assert_eq!(build_multipath(Some(CoupledKind::Wvegas)).coupling(), Some(CoupledKind::Wvegas));
}

// ---------------------------------------------------------------------------------------------
// Random loss without queueing: an ACK-clocked loop in which every packet arrives exactly one
// RTT after it was sent (each ACK brings an RTT sample equal to the base RTT) and every n-th
// packet of a path is lost. Returns each path's time-averaged window over the second half.

fn lossy_loop(mp: &mut dyn MultipathController, paths: &[(u64, u64)], secs: u64) -> Vec<f64> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let n = paths.len();
    let mut rtts: Vec<_> = (0..n).map(|_| est()).collect();
    let rtt_ns: Vec<u64> = paths.iter().map(|&(ms, _)| ms * 1_000_000).collect();
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
            rtts[i].update(Dur(rtt_ns[i]), Dur::ZERO);
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
fn under_random_loss_without_queueing_wvegas_and_westwood_keep_larger_windows_than_olia() {
    let paths = [(100, 400), (100, 400)];
    let total = |kind| -> f64 { lossy_loop(&mut *build_multipath(Some(kind)), &paths, 300).iter().sum() };
    let (olia, wvegas, westwood) = (total(CoupledKind::Olia), total(CoupledKind::Wvegas), total(CoupledKind::Westwood));
    let reno: f64 = lossy_loop(&mut *build_multipath(None), &paths[..1], 300)[0];
    eprintln!("mean total window, bytes: olia {olia:.0}, wvegas {wvegas:.0}, westwood {westwood:.0}; one NewReno path {reno:.0}");
    assert!(wvegas > 1.3 * olia, "wvegas {wvegas} vs olia {olia}");
    assert!(westwood > 1.3 * olia, "westwood {westwood} vs olia {olia}");
}
