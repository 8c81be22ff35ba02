//! DualPI2 (RFC 9332, Linux `sch_dualpi2`), counted on the link's output: the fractions of
//! Classic packets dropped or marked and of L4S packets marked under a held base probability
//! p' (p_C = p'², p_L = min(k·p', 1), overload), the PI2 controller against the reference's
//! worked vectors, a Classic overload settling at the 15 ms target, the WRR and time-shifted
//! FIFO schedules, the step and ramp thresholds, the two-MTU floor, overflow mode, packet
//! conservation and the ECN rules, and reproducibility from the seed.

use multiconn_core::units::QueueLimit;
use multiconn_core::{DropCause, Dur, Ecn, FlowId, Packet, Rate, RngStream, Time};
use multiconn_link::aqm::dualpi2::{pi2_update, DualPi2, DualPi2Params, DualScheduler, NativeAqm};
use multiconn_link::aqm::{AqmConfig, AqmLink, Qdisc};
use multiconn_link::rate::RateModel;
use multiconn_link::{Link, LinkOutput};
use proptest::prelude::*;

const MS: u64 = 1_000_000;

/// What became of a packet on the link.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Fate {
    /// Left the link at this instant with this ECN field.
    Delivered(Time, Ecn),
    /// Dropped by the discipline after it was accepted.
    Dropped(Time),
    /// Refused at the door.
    Refused,
}

struct Run {
    /// Per packet id: its arrival, its ECN field then, its size and its fate.
    arrived: Vec<(Time, Ecn, u32)>,
    fates: Vec<Fate>,
    /// Packet ids in the order they left the link.
    order: Vec<u64>,
    /// Bits per second of the link.
    rate_bps: f64,
}

impl Run {
    /// The instant packet `id` started transmission (it left when its last bit was out).
    fn start(&self, id: u64) -> Option<Time> {
        match self.fates[id as usize] {
            Fate::Delivered(at, _) => {
                let tx = (f64::from(self.arrived[id as usize].2) * 8.0 / self.rate_bps * 1e9).round() as u64;
                Some(Time(at.0 - tx))
            }
            _ => None,
        }
    }
    /// How long packet `id` waited before its transmission started.
    fn sojourn(&self, id: u64) -> Option<Dur> {
        self.start(id).map(|s| s.since(self.arrived[id as usize].0))
    }
}

fn link(mbps: f64, params: DualPi2Params, limit: QueueLimit, seed: u64) -> AqmLink {
    AqmLink::new(RateModel::Fixed(Rate::from_mbps(mbps)), AqmConfig::DualPi2(params).build(limit, RngStream::derive(seed, "link/x/forward/aqm")))
}

/// Offers `arrivals` (time, ECN field, size; in time order) to `link`, polling what is due
/// before each, then drains it.
fn drive(link: &mut AqmLink, mbps: f64, arrivals: &[(Time, Ecn, u32)]) -> Run {
    let mut run = Run { arrived: Vec::new(), fates: Vec::new(), order: Vec::new(), rate_bps: mbps * 1e6 };
    fn take(link: &mut AqmLink, now: Time, run: &mut Run) {
        while let Some(o) = link.poll(now) {
            match o {
                LinkOutput::Delivered { at, pkt } => {
                    run.fates[pkt.id as usize] = Fate::Delivered(at, pkt.ecn);
                    run.order.push(pkt.id);
                }
                LinkOutput::Dropped { at, pkt, cause } => {
                    assert_eq!(cause, DropCause::Queue);
                    run.fates[pkt.id as usize] = Fate::Dropped(at);
                }
            }
        }
    }
    for (i, &(at, ecn, size)) in arrivals.iter().enumerate() {
        take(link, at, &mut run);
        run.arrived.push((at, ecn, size));
        run.fates.push(Fate::Refused);
        let pkt = Packet::new(i as u64, FlowId(ecn.bits().into()), size, i as u64, at).with_ecn(ecn);
        if let Err((_, cause)) = link.enqueue(at, pkt) {
            assert_eq!(cause, DropCause::Queue);
        }
    }
    take(link, Time::MAX, &mut run);
    run
}

/// Merges periodic streams: `(ecn, first, gap, count)` of 1500-byte packets, in time order
/// (ties in the order the streams are given).
fn streams(specs: &[(Ecn, u64, u64, u64)]) -> Vec<(Time, Ecn, u32)> {
    let mut all: Vec<(Time, usize, Ecn, u32)> = Vec::new();
    for (s, &(ecn, first, gap, count)) in specs.iter().enumerate() {
        all.extend((0..count).map(|i| (Time(first + i * gap), s, ecn, 1500)));
    }
    all.sort_by_key(|&(t, s, _, _)| (t, s));
    all.into_iter().map(|(t, _, e, z)| (t, e, z)).collect()
}

/// Whether `hits` successes in `n` draws agree with probability `p`: within 4 standard
/// deviations of the binomial mean (a 99.994 % interval), exact at p = 0 or 1.
fn binomial_ok(hits: u64, n: u64, p: f64) -> bool {
    let mean = n as f64 * p;
    let sd = (n as f64 * p * (1.0 - p)).sqrt();
    (hits as f64 - mean).abs() <= 4.0 * sd + 0.5
}

fn held(prob: f64, coupling: f64) -> DualPi2Params {
    DualPi2Params { fixed_prob: Some(prob), coupling, ..DualPi2Params::default() }
}

/// Per codepoint sent, among the packets that arrived in `window`: how many, how many were
/// dropped (after acceptance), how many left marked CE.
fn tally(run: &Run, sent: Ecn, window: (Time, Time)) -> (u64, u64, u64) {
    let (mut n, mut dropped, mut marked) = (0, 0, 0);
    for (i, &(at, ecn, _)) in run.arrived.iter().enumerate() {
        if ecn != sent || at < window.0 || at >= window.1 {
            continue;
        }
        n += 1;
        match run.fates[i] {
            Fate::Dropped(_) => dropped += 1,
            Fate::Delivered(_, Ecn::Ce) => marked += 1,
            Fate::Delivered(..) => {}
            Fate::Refused => panic!("packet {i} refused: the limit is out of reach"),
        }
    }
    (n, dropped, marked)
}

#[test]
fn held_base_probability_gives_p_prime_squared_for_classic_and_k_p_prime_for_l4s() {
    // 100 Mbit/s: a 1500-byte packet takes 120 µs. Classic Not-ECT and ECT(0) packets
    // together arrive at 1.25 / (1 − p_C) × the link's rate, so the C queue never empties
    // (drops take no transmission time) and the two-MTU floor never applies after the first
    // milliseconds; ECT(1) packets arrive at 10 % of the rate and are served ahead by the
    // WRR, so they wait for at most two transmissions and the 1 ms step never fires.
    let tx = 120_000u64;
    for (p, k) in [(0.05, 2.0), (0.1, 2.0), (0.2, 2.0), (0.3, 2.0), (0.45, 2.0), (0.2, 4.0), (0.6, 2.0), (0.8, 2.0)] {
        let p_c: f64 = p * p;
        let overload = k * p > 1.0;
        let classic_gap = (tx as f64 * (1.0 - p_c) / 1.25 * 2.0) as u64;
        let duration = 6_000 * MS;
        let arrivals = streams(&[
            (Ecn::NotEct, 0, classic_gap, duration / classic_gap),
            (Ecn::Ect0, classic_gap / 2, classic_gap, duration / classic_gap),
            (Ecn::Ect1, 7_777, 10 * tx, duration / (10 * tx)),
        ]);
        let mut l = link(100.0, held(p, k), QueueLimit::Packets(10_000_000), 1);
        let run = drive(&mut l, 100.0, &arrivals);
        let window = (Time(100 * MS), Time(duration - 100 * MS));
        let (n0, d0, m0) = tally(&run, Ecn::NotEct, window);
        let (n1, d1, m1) = tally(&run, Ecn::Ect0, window);
        let (nl, dl, ml) = tally(&run, Ecn::Ect1, window);
        let l_sojourn = (0..run.arrived.len() as u64).filter(|&i| run.arrived[i as usize].1 == Ecn::Ect1).filter_map(|i| run.sojourn(i)).max().unwrap();
        assert!(l_sojourn <= Dur::from_millis(1), "p' = {p}: an L4S packet waited {l_sojourn}, the step would mark it");
        eprintln!(
            "p' = {p}, k = {k}: Not-ECT dropped {:.5} ({d0}/{n0}), ECT(0) marked {:.5} dropped {:.5} ({m1}, {d1}/{n1}), ECT(1) marked {:.5} dropped {:.5} ({ml}, {dl}/{nl}); p'^2 = {p_c:.5}, k p' = {:.5}",
            d0 as f64 / n0 as f64,
            m1 as f64 / n1 as f64,
            d1 as f64 / n1 as f64,
            ml as f64 / nl as f64,
            dl as f64 / nl as f64,
            (k * p).min(1.0)
        );
        assert!(n0 > 10_000 && nl > 3_000, "enough packets: {n0}, {nl}");
        // Classic: p_C = p'², whatever the overload; a Not-ECT packet is always dropped.
        assert_eq!(m0, 0);
        assert!(binomial_ok(d0, n0, p_c), "p' = {p}: {d0} of {n0} Not-ECT dropped, p_C = {p_c}");
        if overload {
            // Overload: ECN no longer protects; Classic ECT(0) is dropped, L4S dropped with
            // p'² and every other L4S packet marked (Linux drop_on_overload).
            assert_eq!(m1, 0, "p' = {p}: no Classic mark on overload");
            assert!(binomial_ok(d1, n1, p_c), "p' = {p}: {d1} of {n1} ECT(0) dropped");
            assert!(binomial_ok(dl, nl, p_c), "p' = {p}: {dl} of {nl} ECT(1) dropped");
            assert_eq!(ml + dl, nl, "p' = {p}: every L4S packet not dropped is marked");
        } else {
            assert_eq!(d1, 0, "p' = {p}: ECT(0) is marked, not dropped");
            assert!(binomial_ok(m1, n1, p_c), "p' = {p}: {m1} of {n1} ECT(0) marked, p_C = {p_c}");
            assert_eq!(dl, 0, "p' = {p}: ECT(1) is marked, not dropped");
            assert!(binomial_ok(ml, nl, (k * p).min(1.0)), "p' = {p}, k = {k}: {ml} of {nl} ECT(1) marked, p_L = {}", k * p);
        }
    }
}

/// The reference's §1.11 (a) ramp: one Classic packet enqueued at 24 ms and never sent,
/// updates every 16 ms from 16 ms, RFC gains (alpha 0.16, beta 3.2, target 15 ms).
const RAMP_FLOAT: [f64; 10] = [0.0, 0.02448, 0.07712, 0.13232, 0.19008, 0.25040, 0.31328, 0.37872, 0.44672, 0.51728];
/// The same with Linux's integer gains (41/256 and 819/256 Hz, scaled to 44 and 879 per 64 ns).
const RAMP_LINUX: [f64; 10] = [0.0, 0.02446, 0.07707, 0.13223, 0.18996, 0.25025, 0.31310, 0.37851, 0.44648, 0.51701];

#[test]
fn the_pi2_controller_reproduces_the_reference_ramp() {
    let params = DualPi2Params::default();
    // The update on its own.
    let mut p = 0.0;
    let mut prev = Dur::ZERO;
    for n in 1..=10u64 {
        let q = Dur((16 * n).saturating_sub(24) * MS);
        p = pi2_update(&params, p, q, prev);
        prev = q;
        assert!((p - RAMP_FLOAT[n as usize - 1]).abs() < 1e-9, "update {n}: {p}");
        assert!((p - RAMP_LINUX[n as usize - 1]).abs() < 3e-4, "update {n}: {p} against Linux's integers");
    }
    // The discipline's own timer: a packet that waits from 24 ms.
    let mut d = DualPi2::new(params, QueueLimit::Packets(100), RngStream::derive(1, "x"));
    d.enqueue(Time(24 * MS), Packet::new(0, FlowId(0), 1500, 0, Time::ZERO), &mut Vec::new()).unwrap();
    for n in 1..=10u64 {
        d.advance(Time(16 * n * MS));
        assert!((d.base_prob() - RAMP_FLOAT[n as usize - 1]).abs() < 1e-9, "update {n} at {} ms: {}", 16 * n, d.base_prob());
    }
    // Past 0.5, k·p' > 1: overload, so even an ECT(0) packet would now be dropped.
    assert!(d.base_prob() > 0.5);
}

#[test]
fn the_pi2_controller_matches_the_constant_delay_table() {
    // Reference §1.11 (b): p' after 1, 10 and 50 updates at a constant queue delay q
    // (q_prev = 0 before the first).
    let params = DualPi2Params::default();
    let table = [(5, [0.0144, 0.0, 0.0]), (10, [0.0312, 0.0240, 0.0]), (15, [0.0480, 0.0480, 0.0480]), (20, [0.0648, 0.0720, 0.1040]), (30, [0.0984, 0.1200, 0.2160]), (50, [0.1656, 0.2160, 0.4400])];
    for (q_ms, expected) in table {
        let q = Dur::from_millis(q_ms);
        let mut p = 0.0;
        let mut prev = Dur::ZERO;
        let mut got = Vec::new();
        for n in 1..=50 {
            p = pi2_update(&params, p, q, prev);
            prev = q;
            if [1, 10, 50].contains(&n) {
                got.push(p);
            }
        }
        for (g, e) in got.iter().zip(expected) {
            assert!((g - e).abs() < 1e-4, "q = {q_ms} ms: {got:?}, the reference says {expected:?}");
        }
    }
}

#[test]
fn tuning_from_rtts_follows_iproute2() {
    // Reference §1.4's table.
    let base = DualPi2Params::default();
    let close = |a: f64, b: f64| (a - b).abs() < 1e-3 * b.max(1e-9);
    let p = base.tuned_for(Some(Dur::from_millis(100)), Some(Dur::from_millis(15)));
    assert_eq!((p.target, p.tupdate), (Dur::from_millis(15), Dur::from_millis(15)));
    assert!(close(p.alpha, 0.150) && close(p.beta, 3.0), "{p:?}");
    let p = base.tuned_for(Some(Dur::from_millis(60)), None);
    assert_eq!((p.target, p.tupdate), (Dur::from_millis(10), Dur::from_millis(10)));
    assert!(close(p.alpha, 0.2778) && close(p.beta, 5.0), "{p:?}");
    let p = base.tuned_for(None, Some(Dur::from_millis(50)));
    assert_eq!((p.target, p.tupdate), (Dur::from_millis(50), Dur::from_millis(50)));
    assert!(close(p.alpha, 0.05556) && close(p.beta, 1.0), "{p:?}");
    assert_eq!(base.tuned_for(None, None), base);
}

#[test]
fn an_unresponsive_classic_overload_settles_at_the_target_delay() {
    // 1.25 × the link's rate of Not-ECT traffic: the integral term only rests where the
    // queue delay equals the target, with p_C = p'² = 0.2 dropping the excess.
    let params = DualPi2Params::default();
    let mut l = link(100.0, params, QueueLimit::Packets(100_000), 2);
    let arrivals = streams(&[(Ecn::NotEct, 0, 96_000, 40_000 * MS / 96_000)]);
    let run = drive(&mut l, 100.0, &arrivals);
    let late: Vec<u64> = (0..run.arrived.len() as u64).filter(|&i| run.arrived[i as usize].0 >= Time(20_000 * MS)).collect();
    let sojourns: Vec<f64> = late.iter().filter_map(|&i| run.sojourn(i)).map(|d| d.as_secs_f64()).collect();
    let mean = sojourns.iter().sum::<f64>() / sojourns.len() as f64;
    let dropped = late.iter().filter(|&&i| matches!(run.fates[i as usize], Fate::Dropped(_))).count() as f64 / late.len() as f64;
    eprintln!("unresponsive 1.25x Classic load: mean sojourn after 20 s {:.2} ms, {:.4} dropped", mean * 1e3, dropped);
    assert!((0.0125..0.0175).contains(&mean), "mean sojourn {mean} s, target 15 ms");
    // The drops take away the 20 % excess: 1 − 1/1.25.
    assert!((dropped - 0.2).abs() < 0.01, "{dropped} of the packets dropped");
    assert!(!run.fates.contains(&Fate::Refused));
}

/// Both queues backlogged with `size`-byte packets from t = 0, p' held at 0: the classes in
/// the order they left ('L' or 'C'), after the first packet (which left alone).
fn wrr_order(params: DualPi2Params, size: u32, each: usize) -> String {
    let mut arrivals = Vec::new();
    for _ in 0..each {
        arrivals.push((Time::ZERO, Ecn::Ect1, size));
        arrivals.push((Time::ZERO, Ecn::NotEct, size));
    }
    let mut l = link(100.0, DualPi2Params { fixed_prob: Some(0.0), ..params }, QueueLimit::Packets(100_000), 3);
    let run = drive(&mut l, 100.0, &arrivals);
    run.order[1..].iter().map(|&id| if run.arrived[id as usize].1 == Ecn::Ect1 { 'L' } else { 'C' }).collect()
}

#[test]
fn wrr_serves_nine_l4s_packets_per_classic_one_by_default() {
    // Reference §1.11 (d): 1514-byte packets, psched_mtu 1514, credit from −121 120: 9 L then
    // 1 C, repeated, 90 %/10 % of the bytes; the same with this model's 1500-byte MTU.
    let cycle = "LLLLLLLLLC";
    for (mtu, size) in [(1514, 1514), (1500, 1500)] {
        let order = wrr_order(DualPi2Params { mtu, ..DualPi2Params::default() }, size, 200);
        assert_eq!(&order[..220], cycle.repeat(22), "mtu {mtu}");
    }
    // Other weights, from the same credit rule: 50 % alternates, 0 % is strict priority for
    // L, 100 % for C.
    let wrr = |wc: u8| DualPi2Params { scheduler: DualScheduler::Wrr { classic_protection: wc }, ..DualPi2Params::default() };
    assert_eq!(&wrr_order(wrr(50), 1500, 50)[..60], "LC".repeat(30));
    assert_eq!(&wrr_order(wrr(0), 1500, 50)[..49], "L".repeat(49));
    assert_eq!(&wrr_order(wrr(100), 1500, 50)[..49], "C".repeat(49));
}

#[test]
fn wrr_credit_does_not_move_while_only_one_queue_is_backlogged() {
    // 40 L4S packets from t = 0, Classic ones from the middle of the 21st transmission: the
    // 21 L packets sent alone left the credit where it started, so 9 more L go before the
    // first C.
    let tx = 120_000u64;
    let mut arrivals: Vec<(Time, Ecn, u32)> = (0..40).map(|_| (Time::ZERO, Ecn::Ect1, 1500)).collect();
    arrivals.extend((0..40).map(|_| (Time(20 * tx + tx / 2), Ecn::NotEct, 1500)));
    let mut l = link(100.0, held(0.0, 2.0), QueueLimit::Packets(1000), 3);
    let run = drive(&mut l, 100.0, &arrivals);
    let order: String = run.order.iter().map(|&id| if run.arrived[id as usize].1 == Ecn::Ect1 { 'L' } else { 'C' }).collect();
    assert_eq!(&order[..31], format!("{}C", "L".repeat(30)));
}

#[test]
fn time_shifted_fifo_serves_classic_once_its_head_is_tshift_older() {
    // RFC 9332's time-shifted FIFO: one Classic packet at 1 ms among a 5 % L4S overload at
    // 10 Mbit/s. It leaves at the first dequeue whose L head arrived more than tshift after it.
    let tshift = Dur::from_millis(50);
    let params = DualPi2Params { scheduler: DualScheduler::TsFifo { tshift }, fixed_prob: Some(0.0), ..DualPi2Params::default() };
    let tx = 1_200_000u64;
    let gap = tx * 100 / 105;
    let mut arrivals: Vec<(Time, Ecn, u32)> = (0..200).map(|i| (Time(i * gap), Ecn::Ect1, 1500)).collect();
    let c_at = Time(MS);
    let pos = arrivals.iter().position(|a| a.0 > c_at).unwrap();
    arrivals.insert(pos, (c_at, Ecn::NotEct, 1500));
    let mut l = link(10.0, params, QueueLimit::Packets(1000), 4);
    let run = drive(&mut l, 10.0, &arrivals);
    let c_id = pos as u64;
    let k = run.order.iter().position(|&id| id == c_id).unwrap();
    let (before, after) = (run.order[k - 1], run.order[k + 1]);
    assert!(run.arrived[before as usize].0 <= c_at + tshift, "the L packet sent just before arrived at {}", run.arrived[before as usize].0);
    assert!(run.arrived[after as usize].0 > c_at + tshift, "the L packet sent just after arrived at {}", run.arrived[after as usize].0);
    let waited = run.sojourn(c_id).unwrap();
    assert!(waited > tshift, "the Classic packet waited {waited}");
    // The WRR would have let it go after at most 9 L packets.
    let mut l = link(10.0, held(0.0, 2.0), QueueLimit::Packets(1000), 4);
    let run = drive(&mut l, 10.0, &arrivals);
    assert!(run.sojourn(c_id).unwrap() < Dur(11 * tx));
}

#[test]
fn the_step_marks_above_one_millisecond_of_sojourn_and_not_at_it() {
    // Reference §1.11 (e). At 8 Mbit/s a byte takes 1 µs: an L4S packet queued behind a
    // Classic one of 1000 B waits exactly 1.000 ms, behind 1001 B 1.001 ms. p' is held at 0.
    for (classic, marked) in [(1000, false), (1001, true), (999, false), (1500, true)] {
        let mut l = link(8.0, held(0.0, 2.0), QueueLimit::Packets(100), 5);
        let run = drive(&mut l, 8.0, &[(Time::ZERO, Ecn::NotEct, classic), (Time::ZERO, Ecn::Ect1, 100)]);
        assert_eq!(run.sojourn(1), Some(Dur::from_micros(u64::from(classic))));
        let Fate::Delivered(_, ecn) = run.fates[1] else { panic!("{:?}", run.fates[1]) };
        assert_eq!(ecn == Ecn::Ce, marked, "behind {classic} B");
    }
    // Step in packets: mark while more than 2 L packets are left behind the one leaving.
    let params = DualPi2Params { native: NativeAqm::Step { threshold: multiconn_link::aqm::dualpi2::StepThreshold::Packets(2), min_qlen: 0 }, fixed_prob: Some(0.0), ..DualPi2Params::default() };
    let mut l = link(100.0, params, QueueLimit::Packets(100), 5);
    let arrivals: Vec<_> = (0..6).map(|_| (Time::ZERO, Ecn::Ect1, 1500)).collect();
    let run = drive(&mut l, 100.0, &arrivals);
    // The first leaves at once with 0 behind; then 4, 3, 2, 1, 0 are left behind.
    let marks: Vec<bool> = (0..6).map(|i| matches!(run.fates[i], Fate::Delivered(_, Ecn::Ce))).collect();
    assert_eq!(marks, [false, true, true, false, false, false]);
}

#[test]
fn nothing_is_marked_or_dropped_by_pi2_while_less_than_two_mtus_wait() {
    // Reference §1.11 (e), the floor. k·p' = 1 (not overload): an L4S packet is marked
    // whenever at least 2 × 1500 B are left waiting, never otherwise.
    let mut l = link(100.0, held(0.5, 2.0), QueueLimit::Packets(100), 6);
    let arrivals: Vec<_> = std::iter::once((Time::ZERO, Ecn::NotEct, 1500)).chain((0..4).map(|_| (Time::ZERO, Ecn::Ect1, 1500))).collect();
    let run = drive(&mut l, 100.0, &arrivals);
    let ecns: Vec<Ecn> = (1..5).map(|i| match run.fates[i] {
        Fate::Delivered(_, e) => e,
        ref f => panic!("{f:?}"),
    }).collect();
    // Left behind each: 4500, 3000, 1500, 0 bytes.
    assert_eq!(ecns, [Ecn::Ce, Ecn::Ce, Ecn::Ect1, Ecn::Ect1]);
    // p' = 1 is overload with p_C = 1: Classic packets are dropped exactly while 2 MTUs wait.
    let mut l = link(100.0, held(1.0, 2.0), QueueLimit::Packets(100), 6);
    let arrivals: Vec<_> = (0..5).map(|_| (Time::ZERO, Ecn::Ect0, 1500)).collect();
    let run = drive(&mut l, 100.0, &arrivals);
    let dropped: Vec<bool> = run.fates.iter().map(|f| matches!(f, Fate::Dropped(_))).collect();
    assert_eq!(dropped, [false, true, true, false, false]);
}

#[test]
fn the_rfc_ramp_marks_linearly_between_800_and_1200_microseconds_above_one_packet() {
    // At 8 Mbit/s: every 5 ms, a Classic packet of B bytes and two L4S packets of 100 B arrive
    // together; the first L4S packet waits B µs with its twin behind it, the second waits
    // B + 100 µs alone (at most th_len = 1 packet: no native mark).
    let params = DualPi2Params { native: DualPi2Params::RFC_RAMP, fixed_prob: Some(0.0), ..DualPi2Params::default() };
    for (bytes, p) in [(700u32, 0.0), (800, 0.0), (900, 0.25), (1000, 0.5), (1100, 0.75), (1200, 1.0), (3000, 1.0)] {
        let mut arrivals = Vec::new();
        for c in 0..2000u64 {
            let t = Time(c * 5 * MS);
            arrivals.extend([(t, Ecn::NotEct, bytes), (t, Ecn::Ect1, 100), (t, Ecn::Ect1, 100)]);
        }
        let mut l = link(8.0, params, QueueLimit::Packets(100), 7);
        let run = drive(&mut l, 8.0, &arrivals);
        let first = (0..2000).filter(|c| matches!(run.fates[c * 3 + 1], Fate::Delivered(_, Ecn::Ce))).count() as u64;
        assert_eq!(run.sojourn(1), Some(Dur::from_micros(u64::from(bytes))));
        let second = (0..2000).filter(|c| matches!(run.fates[c * 3 + 2], Fate::Delivered(_, Ecn::Ce))).count();
        eprintln!("ramp at {bytes} us: {first} of 2000 marked (p = {p})");
        assert!(binomial_ok(first, 2000, p), "sojourn {bytes} µs: {first} of 2000 marked, ramp says {p}");
        assert_eq!(second, 0, "a lone L4S packet is never marked by the ramp");
    }
}

#[test]
fn overflow_mode_never_drops_l4s_where_drop_on_overload_does() {
    // An unresponsive L4S overload (1.5 × the rate): marking cannot relieve it, so p' climbs.
    // With drop_on_overload (Linux's default) p' passes 1/k and L4S packets are dropped with
    // p'²; in overflow mode p' stops at 1/k and the L queue fills to the limit instead.
    let arrivals = streams(&[(Ecn::Ect1, 0, 80_000, 5_000 * MS / 80_000)]);
    let mut l = link(100.0, DualPi2Params::default(), QueueLimit::Packets(5_000), 8);
    let run = drive(&mut l, 100.0, &arrivals);
    let aqm_drops = run.fates.iter().filter(|f| matches!(f, Fate::Dropped(_))).count();
    assert!(aqm_drops > 1000, "drop_on_overload: {aqm_drops} L4S drops");
    let mut l = link(100.0, DualPi2Params { drop_overload: false, ..DualPi2Params::default() }, QueueLimit::Packets(5_000), 8);
    let run = drive(&mut l, 100.0, &arrivals);
    assert_eq!(run.fates.iter().filter(|f| matches!(f, Fate::Dropped(_))).count(), 0, "overflow: no AQM drop");
    assert!(run.fates.iter().filter(|f| **f == Fate::Refused).count() > 1000, "overflow: the limit tail-drops");
    // Every L4S packet that left after the queue built is marked (k·p' = 1).
    assert!(run.fates.iter().skip(20_000).all(|f| matches!(f, Fate::Delivered(_, Ecn::Ce) | Fate::Refused)));
}

/// A mixed load with the controller running: Classic Not-ECT and ECT(0) at 1.2 × a
/// 100 Mbit/s link, L4S at 10 %.
fn mixed(seed: u64) -> Vec<Fate> {
    let arrivals = streams(&[(Ecn::NotEct, 0, 200_000, 25_000), (Ecn::Ect0, 100_000, 200_000, 25_000), (Ecn::Ect1, 3_333, 1_200_000, 4_000)]);
    let mut l = link(100.0, DualPi2Params::default(), QueueLimit::Packets(10_000), seed);
    drive(&mut l, 100.0, &arrivals).fates
}

#[test]
fn same_seed_same_marks_and_drops_another_seed_others() {
    let a = mixed(11);
    assert_eq!(a, mixed(11));
    let marks = a.iter().filter(|f| matches!(f, Fate::Delivered(_, Ecn::Ce))).count();
    let drops = a.iter().filter(|f| matches!(f, Fate::Dropped(_))).count();
    assert!(marks > 100 && drops > 100, "{marks} marks, {drops} drops");
    assert_ne!(a, mixed(12), "the marks and drops are random draws");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Every packet is delivered, dropped or refused once; each flow (one codepoint each) keeps
    /// its order; only ECT(0) and ECT(1) change, and only to CE; the marks counted are the
    /// packets changed to CE.
    #[test]
    fn dualpi2_conserves_packets_and_keeps_the_ecn_rules(
        limit in 1u64..60,
        ramp in any::<bool>(),
        ts_fifo in any::<bool>(),
        early in any::<bool>(),
        prob in prop::option::of(0.0f64..1.0),
        gaps in prop::collection::vec((0u64..3_000_000, 0u8..4, 60u32..1500), 1..400),
    ) {
        let params = DualPi2Params {
            native: if ramp { DualPi2Params::RFC_RAMP } else { DualPi2Params::default().native },
            scheduler: if ts_fifo { DualScheduler::TsFifo { tshift: Dur::from_millis(5) } } else { DualScheduler::Wrr { classic_protection: 10 } },
            drop_early: early,
            fixed_prob: prob,
            ..DualPi2Params::default()
        };
        let mut l = link(10.0, params, QueueLimit::Packets(limit), 9);
        let codepoints = [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce];
        let mut t = 0;
        let arrivals: Vec<(Time, Ecn, u32)> = gaps.iter().map(|&(gap, c, size)| {
            t += gap;
            (Time(t), codepoints[c as usize], size)
        }).collect();
        let run = drive(&mut l, 10.0, &arrivals);
        let mut changed = 0;
        for (i, f) in run.fates.iter().enumerate() {
            let sent = run.arrived[i].1;
            if let Fate::Delivered(at, ecn) = *f {
                prop_assert!(ecn == sent || (ecn == Ecn::Ce && matches!(sent, Ecn::Ect0 | Ecn::Ect1)), "{:?} became {:?}", sent, ecn);
                changed += u64::from(ecn != sent);
                prop_assert!(at.as_nanos() >= run.arrived[i].0.as_nanos() + u64::from(run.arrived[i].2) * 800);
            }
        }
        prop_assert_eq!(run.order.len() + run.fates.iter().filter(|f| !matches!(f, Fate::Delivered(..))).count(), arrivals.len());
        for c in codepoints {
            let ids: Vec<u64> = run.order.iter().copied().filter(|&id| run.arrived[id as usize].1 == c).collect();
            prop_assert!(ids.windows(2).all(|w| w[0] < w[1]), "{:?} out of order", c);
        }
        let stats = l.aqm_stats().unwrap();
        prop_assert_eq!(stats.marks, changed);
        prop_assert_eq!(stats.drops() as usize, run.fates.iter().filter(|f| !matches!(f, Fate::Delivered(..))).count());
    }
}
