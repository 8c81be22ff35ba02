//! Active queue management: CoDel's control law and drop schedule (RFC 8289), ECN marking,
//! FQ-CoDel's flow isolation, DRR shares and overflow drops (RFC 8290), PIE's probability
//! update and delay control (RFC 8033), and packet conservation for every discipline.

use multiconn_core::units::QueueLimit;
use multiconn_core::{DropCause, Dur, Ecn, FlowId, Packet, Rate, RngStream, Time};
use multiconn_link::aqm::codel::control_law;
use multiconn_link::aqm::fq_codel::flow_queue_index;
use multiconn_link::aqm::pie::next_drop_prob;
use multiconn_link::aqm::{AqmConfig, AqmLink, CodelParams, FqCodelParams, Pie, PieParams, Qdisc};
use multiconn_link::queue::DropTailLink;
use multiconn_link::rate::RateModel;
use multiconn_link::{Link, LinkOutput};
use proptest::prelude::*;

const MS: u64 = 1_000_000;
/// 1500 B at 10 Mbit/s.
const TX_1500: u64 = 1_200_000;

fn packet(id: u64, flow: u32, size: u32, ecn: Ecn) -> Packet {
    Packet::new(id, FlowId(flow), size, id, Time::ZERO).with_ecn(ecn)
}

fn aqm_link(aqm: &AqmConfig, limit: QueueLimit) -> AqmLink {
    AqmLink::new(RateModel::Fixed(Rate::from_mbps(10.0)), aqm.build(limit, RngStream::derive(7, "aqm-test")))
}

/// What happened to each packet: arrival, and delivery or drop instant.
#[derive(Debug, Default)]
struct Outcome {
    arrived: Vec<Time>,
    delivered: Vec<(Time, Packet)>,
    dropped: Vec<(Time, Packet)>,
    refused: Vec<(Time, Packet)>,
}

impl Outcome {
    /// When each delivered packet started transmission (delivery minus its serialization at
    /// 10 Mbit/s), and its sojourn in the queue.
    fn sojourns(&self) -> Vec<(Time, &Packet, Dur)> {
        self.delivered
            .iter()
            .map(|(at, pkt)| {
                let start = Time(at.0 - u64::from(pkt.size) * 8 * 100);
                (start, pkt, start.since(self.arrived[pkt.id as usize]))
            })
            .collect()
    }
}

/// Offers `arrivals` (in time order) to `link`, polling everything due before each one, then
/// drains the link.
fn drive(link: &mut dyn Link, arrivals: Vec<(Time, Packet)>) -> Outcome {
    let mut out = Outcome::default();
    let take = |link: &mut dyn Link, now: Time, out: &mut Outcome| {
        while let Some(o) = link.poll(now) {
            match o {
                LinkOutput::Delivered { at, pkt } => out.delivered.push((at, pkt)),
                LinkOutput::Dropped { at, pkt, cause } => {
                    assert_eq!(cause, DropCause::Queue);
                    out.dropped.push((at, pkt));
                }
            }
        }
    };
    for (at, pkt) in arrivals {
        take(link, at, &mut out);
        assert_eq!(pkt.id as usize, out.arrived.len(), "ids number the arrivals");
        out.arrived.push(at);
        if let Err((pkt, cause)) = link.enqueue(at, pkt) {
            assert_eq!(cause, DropCause::Queue);
            out.refused.push((at, pkt));
        }
    }
    take(link, Time::MAX, &mut out);
    out
}

/// `n` packets of 1500 B of flow 0 every `gap` ns.
fn steady(n: u64, gap: u64, ecn: Ecn) -> Vec<(Time, Packet)> {
    (0..n).map(|i| (Time(i * gap), packet(i, 0, 1500, ecn))).collect()
}

#[test]
fn codel_control_law_spaces_drops_by_interval_over_sqrt_count() {
    let interval = Dur::from_millis(100);
    assert_eq!(control_law(Time(0), interval, 1), Time(100 * MS));
    assert_eq!(control_law(Time(0), interval, 4), Time(50 * MS));
    assert_eq!(control_law(Time(10 * MS), interval, 2), Time(10 * MS + 70_710_678));
}

#[test]
fn codel_never_drops_while_the_sojourn_stays_below_target() {
    let codel = AqmConfig::Codel(CodelParams::default());
    let mut link = aqm_link(&codel, QueueLimit::Packets(1000));
    // Bursts of 4 packets every 6 ms at 10 Mbit/s: the queue peaks at 3 packets (3.6 ms).
    let arrivals = (0..4000u64).map(|i| (Time((i / 4) * 6 * MS), packet(i, 0, 1500, Ecn::NotEct))).collect();
    let out = drive(&mut link, arrivals);
    assert!(out.dropped.is_empty() && out.refused.is_empty());
    assert_eq!(out.delivered.len(), 4000);
    assert!(out.sojourns().iter().any(|(_, _, s)| *s >= Dur::from_micros(3_600)), "the queue did build");
}

#[test]
fn codel_drops_after_a_full_interval_above_target_then_at_interval_over_sqrt_count() {
    let params = CodelParams::default();
    let mut link = aqm_link(&AqmConfig::Codel(params), QueueLimit::Packets(10_000));
    // 1.5 × the link's rate: the queue grows by one packet every 2.4 ms.
    let out = drive(&mut link, steady(6000, 800_000, Ecn::NotEct));
    assert!(out.refused.is_empty());
    // The first transmission whose sojourn reached the target (with more than an MTU behind it).
    let (first_above, _, _) = *out.sojourns().iter().find(|(_, _, s)| *s >= params.target).expect("the queue builds");
    let drops: Vec<Time> = out.dropped.iter().map(|(at, _)| *at).collect();
    assert!(drops.len() > 20, "CoDel drops under a 1.5× overload: {} drops", drops.len());
    // Dropping starts at the first dequeue a whole interval after the sojourn went above target.
    let due = first_above + params.interval;
    assert!(drops[0] >= due && drops[0].0 <= due.0 + TX_1500, "first drop at {} for {}", drops[0], due);
    // Then the k-th gap is interval / sqrt(k), to within one transmission (drops happen when a
    // packet is taken for transmission).
    for k in 1..20usize {
        let gap = drops[k].0 as f64 - drops[k - 1].0 as f64;
        let law = params.interval.as_nanos() as f64 / (k as f64).sqrt();
        assert!((gap - law).abs() <= TX_1500 as f64, "gap {k}: {gap} ns, the control law says {law} ns");
    }
    // Every packet is delivered or dropped, once.
    assert_eq!(out.delivered.len() + out.dropped.len(), 6000);
}

#[test]
fn codel_with_ecn_marks_capable_packets_and_drops_the_others() {
    let params = CodelParams { ecn: true, ..CodelParams::default() };
    let config = AqmConfig::Codel(params);
    let mut link = aqm_link(&config, QueueLimit::Packets(10_000));
    let out = drive(&mut link, steady(3000, 800_000, Ecn::Ect0));
    let stats = link.aqm_stats().expect("an AQM link");
    assert!(out.dropped.is_empty(), "ECN-capable packets are marked, not dropped");
    assert_eq!(stats.early_drops, 0);
    let marked = out.delivered.iter().filter(|(_, p)| p.ecn == Ecn::Ce).count() as u64;
    assert!(marked > 10);
    assert_eq!(marked, stats.marks);
    assert_eq!(out.delivered.len(), 3000);

    // The same overload without ECT: dropped, at the same schedule's first instant.
    let mut plain = aqm_link(&config, QueueLimit::Packets(10_000));
    let out_plain = drive(&mut plain, steady(3000, 800_000, Ecn::NotEct));
    assert!(!out_plain.dropped.is_empty());
    assert_eq!(plain.aqm_stats().unwrap().marks, 0);
    let first_mark = out.delivered.iter().find(|(_, p)| p.ecn == Ecn::Ce).map(|(at, _)| *at).unwrap();
    let first_drop = out_plain.dropped[0].0;
    assert_eq!(first_mark.0, first_drop.0 + TX_1500, "the first marked packet leaves the queue when the first drop would have happened");
}

#[test]
fn fq_codel_serves_a_sparse_flow_ahead_of_a_backlogged_one() {
    let config = AqmConfig::FqCodel(FqCodelParams::default());
    assert_ne!(flow_queue_index(&packet(0, 0, 1500, Ecn::NotEct), 1024), flow_queue_index(&packet(0, 1, 100, Ecn::NotEct), 1024));
    let mut link = aqm_link(&config, QueueLimit::Packets(10_000));
    let mut arrivals: Vec<(Time, u32, u32)> = (0..5000u64).map(|i| (Time(i * 800_000), 0, 1500)).collect();
    arrivals.extend((0..80u64).map(|i| (Time(i * 50 * MS + 123_456), 1, 100)));
    arrivals.sort_by_key(|a| a.0);
    let arrivals = arrivals.into_iter().enumerate().map(|(i, (t, f, s))| (t, packet(i as u64, f, s, Ecn::NotEct))).collect();
    let out = drive(&mut link, arrivals);
    let sojourns = out.sojourns();
    let sparse: Vec<Dur> = sojourns.iter().filter(|(_, p, _)| p.flow == FlowId(1)).map(|(_, _, s)| *s).collect();
    assert_eq!(sparse.len(), 80);
    // The very first one finds the backlogged flow itself still new, with a quantum of credit
    // left: it waits for at most two of its packets. Later ones wait at most for the packet in
    // transmission.
    assert!(sparse[0] <= Dur(2 * TX_1500), "first sparse packet waited {}", sparse[0]);
    let sparse_max = sparse[1..].iter().copied().max().unwrap();
    let heavy: Vec<Dur> = sojourns.iter().filter(|(_, p, _)| p.flow == FlowId(0)).map(|(_, _, s)| *s).collect();
    let heavy_mean = heavy.iter().map(|d| d.as_secs_f64()).sum::<f64>() / heavy.len() as f64;
    // A sparse packet waits at most for the packet in transmission.
    assert!(sparse_max <= Dur(TX_1500), "sparse flow waited {sparse_max}");
    assert!(heavy_mean > 0.004, "the backlogged flow queues: mean sojourn {heavy_mean} s");
    assert!(out.dropped.iter().all(|(_, p)| p.flow == FlowId(0)), "only the backlogged flow is dropped");
}

#[test]
fn fq_codel_shares_bytes_equally_between_backlogged_flows_whatever_their_packet_size() {
    // CoDel held back (long target), so only DRR decides.
    let codel = CodelParams { target: Dur::from_secs(10), interval: Dur::from_secs(20), ..CodelParams::default() };
    let config = AqmConfig::FqCodel(FqCodelParams { codel, ..FqCodelParams::default() });
    let mut link = aqm_link(&config, QueueLimit::Packets(100_000));
    // Both flows offer far more than the link carries: 1500 B and 500 B packets.
    let mut arrivals = Vec::new();
    for i in 0..6000u64 {
        arrivals.push((Time(i * 400_000), 0u32, 1500u32));
        arrivals.push((Time(i * 400_000), 1, 500));
        arrivals.push((Time(i * 400_000), 1, 500));
        arrivals.push((Time(i * 400_000), 1, 500));
    }
    let arrivals = arrivals.into_iter().enumerate().map(|(i, (t, f, s))| (t, packet(i as u64, f, s, Ecn::NotEct))).collect();
    let out = drive(&mut link, arrivals);
    let horizon = Time(2_000 * MS);
    let bytes = |f: u32| out.delivered.iter().filter(|(at, p)| *at <= horizon && p.flow == FlowId(f)).map(|(_, p)| u64::from(p.size)).sum::<u64>();
    let (a, b) = (bytes(0), bytes(1));
    assert!(a + b > 2_400_000, "the link was busy: {} B", a + b);
    assert!(a.abs_diff(b) <= 2 * 1514, "DRR shares: {a} B vs {b} B");
}

#[test]
fn fq_codel_overflow_drops_from_the_fattest_queue() {
    let codel = CodelParams { target: Dur::from_secs(10), interval: Dur::from_secs(20), ..CodelParams::default() };
    let config = AqmConfig::FqCodel(FqCodelParams { codel, drop_batch: 64, ..FqCodelParams::default() });
    let mut link = aqm_link(&config, QueueLimit::Packets(100));
    // A flood from flow 0 and a light flow 1, all at once.
    let mut arrivals = Vec::new();
    for i in 0..400u64 {
        arrivals.push((Time(i * 10_000), packet(arrivals.len() as u64, 0, 1500, Ecn::NotEct)));
        if i % 20 == 0 {
            arrivals.push((Time(i * 10_000), packet(arrivals.len() as u64, 1, 1500, Ecn::NotEct)));
        }
    }
    let out = drive(&mut link, arrivals);
    let stats = link.aqm_stats().unwrap();
    assert!(stats.overflow_drops > 0);
    assert_eq!(stats.overflow_drops as usize, out.dropped.len());
    assert!(out.dropped.iter().all(|(_, p)| p.flow == FlowId(0)), "the light flow keeps its packets");
    assert_eq!(out.delivered.iter().filter(|(_, p)| p.flow == FlowId(1)).count(), 20);
}

#[test]
fn pie_drop_probability_updates_as_rfc_8033_computes_them() {
    let p = PieParams::default();
    let ms = Dur::from_millis;
    // From zero, 30 ms steady: alpha × 15 ms, scaled by 1/2048 below 1e-6.
    assert!((next_drop_prob(&p, 0.0, ms(30), ms(30)) - 0.125 * 0.015 / 2048.0).abs() < 1e-15);
    // At 5 %: (alpha × 15 ms + beta × 10 ms) / 2.
    assert!((next_drop_prob(&p, 0.05, ms(30), ms(20)) - (0.05 + (0.001875 + 0.0125) / 2.0)).abs() < 1e-12);
    // Above 10 %, a large step is capped at 2 %.
    assert!((next_drop_prob(&p, 0.5, ms(200), ms(0)) - 0.52).abs() < 1e-12);
    // An empty queue twice in a row: the negative step, then a 2 % decay.
    assert!((next_drop_prob(&p, 0.01, ms(0), ms(0)) - (0.01 - 0.001875 / 2.0) * 0.98).abs() < 1e-12);
    // Never below 0 or above 1.
    assert_eq!(next_drop_prob(&p, 0.0, ms(0), ms(0)), 0.0);
    assert_eq!(next_drop_prob(&p, 0.999, Dur::from_secs(5), ms(0)), 1.0);
}

#[test]
fn pie_holds_the_queueing_delay_near_its_target_where_drop_tail_fills_up() {
    let params = PieParams::default();
    let mut link = aqm_link(&AqmConfig::Pie(params), QueueLimit::Packets(1000));
    // 1.25 × the link's rate for 40 s.
    let arrivals = steady(40_000, 960_000, Ecn::NotEct);
    let out = drive(&mut link, arrivals.clone());
    let late: Vec<f64> = out.sojourns().iter().filter(|(start, _, _)| *start >= Time(20_000 * MS)).map(|(_, _, s)| s.as_secs_f64()).collect();
    let mean = late.iter().sum::<f64>() / late.len() as f64;
    assert!((0.005..0.030).contains(&mean), "PIE's mean sojourn after 20 s: {mean} s (target 15 ms)");
    let stats = link.aqm_stats().unwrap();
    assert!(stats.early_drops > 0 && stats.tail_drops == 0, "{stats:?}");

    let mut tail = DropTailLink::new(RateModel::Fixed(Rate::from_mbps(10.0)), QueueLimit::Packets(1000));
    let out = drive(&mut tail, arrivals);
    let late: Vec<f64> = out.sojourns().iter().filter(|(start, _, _)| *start >= Time(20_000 * MS)).map(|(_, _, s)| s.as_secs_f64()).collect();
    assert!(late.iter().sum::<f64>() / late.len() as f64 > 1.0, "drop-tail sits at its 1000-packet limit");
}

/// Drives a PIE queue directly behind a 10 Mbit/s server; for each arrival, whether it was
/// marked or dropped early and the drop probability PIE decided with.
fn drive_pie(pie: &mut Pie, arrivals: &[(Time, Packet)]) -> Vec<(f64, Option<bool>)> {
    let mut busy_until = Time::ZERO;
    let mut in_queue = 0usize;
    let mut decisions = Vec::new();
    let mut scratch = Vec::new();
    for (t, pkt) in arrivals {
        while in_queue > 0 && busy_until <= *t {
            let sent = pie.dequeue(busy_until, &mut scratch).expect("a packet waits");
            in_queue -= 1;
            busy_until = Time(busy_until.0 + u64::from(sent.size) * 800);
        }
        let before = pie.stats();
        let accepted = pie.enqueue(*t, pkt.clone(), &mut scratch).is_ok();
        let after = pie.stats();
        let outcome = if after.marks > before.marks { Some(true) } else if after.early_drops > before.early_drops { Some(false) } else { None };
        decisions.push((pie.drop_prob(), outcome));
        if accepted {
            if in_queue == 0 && busy_until <= *t {
                let sent = pie.dequeue(*t, &mut scratch).expect("just queued");
                busy_until = Time(t.0 + u64::from(sent.size) * 800);
            } else {
                in_queue += 1;
            }
        }
    }
    decisions
}

#[test]
fn pie_with_ecn_marks_while_the_probability_is_at_most_ten_percent_and_drops_above() {
    let params = PieParams { ecn: true, ..PieParams::default() };
    let mut pie = Pie::new(params, QueueLimit::Packets(100_000), RngStream::derive(3, "pie"));
    // An unresponsive 1.2 × overload: marking does not relieve the queue, so the
    // probability climbs through 10 % and PIE turns to dropping.
    let decisions = drive_pie(&mut pie, &steady(30_000, 1_000_000, Ecn::Ect0));
    let marks: Vec<f64> = decisions.iter().filter(|d| d.1 == Some(true)).map(|d| d.0).collect();
    let drops: Vec<f64> = decisions.iter().filter(|d| d.1 == Some(false)).map(|d| d.0).collect();
    assert!(marks.len() > 10 && drops.len() > 10, "{} marks, {} drops", marks.len(), drops.len());
    assert!(marks.iter().all(|&p| p <= params.mark_ecn_th));
    assert!(drops.iter().all(|&p| p > params.mark_ecn_th));
    // Without ECT the same load is dropped from the start.
    let mut pie = Pie::new(params, QueueLimit::Packets(100_000), RngStream::derive(3, "pie"));
    let decisions = drive_pie(&mut pie, &steady(30_000, 1_000_000, Ecn::NotEct));
    assert!(decisions.iter().all(|d| d.1 != Some(true)));
    assert!(decisions.iter().any(|d| d.1 == Some(false) && d.0 <= params.mark_ecn_th));
}

fn any_config() -> impl Strategy<Value = AqmConfig> {
    prop_oneof![
        any::<bool>().prop_map(|ecn| AqmConfig::Codel(CodelParams { ecn, ..CodelParams::default() })),
        (1u32..8, any::<bool>()).prop_map(|(flows, ecn)| AqmConfig::FqCodel(FqCodelParams {
            flows,
            codel: CodelParams { ecn, ..CodelParams::default() },
            ..FqCodelParams::default()
        })),
        any::<bool>().prop_map(|ecn| AqmConfig::Pie(PieParams { ecn, ..PieParams::default() })),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Every packet offered is delivered, dropped or refused exactly once; each flow's
    /// packets keep their order; nothing leaves before its transmission could end.
    #[test]
    fn every_discipline_conserves_packets_and_keeps_flow_order(
        config in any_config(),
        limit in 1u64..60,
        gaps in prop::collection::vec((0u64..3_000_000, 0u32..4, 60u32..1500, any::<bool>()), 1..400),
    ) {
        let mut link = aqm_link(&config, QueueLimit::Packets(limit));
        let mut t = 0;
        let arrivals: Vec<(Time, Packet)> = gaps.iter().enumerate().map(|(i, &(gap, flow, size, ect))| {
            t += gap;
            (Time(t), packet(i as u64, flow, size, if ect { Ecn::Ect0 } else { Ecn::NotEct }))
        }).collect();
        let n = arrivals.len();
        let out = drive(&mut link, arrivals);
        let mut seen = vec![0u8; n];
        for (_, p) in out.delivered.iter().chain(&out.dropped).chain(&out.refused) {
            seen[p.id as usize] += 1;
        }
        prop_assert!(seen.iter().all(|&c| c == 1));
        for flow in 0..4 {
            let ids: Vec<u64> = out.delivered.iter().filter(|(_, p)| p.flow == FlowId(flow)).map(|(_, p)| p.id).collect();
            prop_assert!(ids.windows(2).all(|w| w[0] < w[1]), "flow {} out of order: {:?}", flow, ids);
        }
        for (at, p) in &out.delivered {
            prop_assert!(at.0 >= out.arrived[p.id as usize].0 + u64::from(p.size) * 800);
        }
        let stats = link.aqm_stats().unwrap();
        prop_assert_eq!(stats.drops() as usize, out.dropped.len() + out.refused.len());
        prop_assert_eq!(stats.marks as usize, out.delivered.iter().filter(|(_, p)| p.ecn == Ecn::Ce).count());
    }
}
