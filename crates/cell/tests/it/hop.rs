//! The cell as a packet element (`hop`): the top-MCS TBS every TTI close to the eNB, the fall
//! with distance and which direction ends it, the schedulers' shares, the BLER the link
//! adaptation aims at, HARQ losses as RLC gaps closed by t-Reordering, the 512 kB RLC buffer,
//! conservation of packets, determinism and bad configurations.

use multiconn_cell::{
    tbs_for_mcs, AmcModel, BlerCurve, CellConfig, CellDirection, CellDropCause, CellHop, CellOutput,
    FadingConfig, FadingSpread, LinkBudget, SchedulerKind,
};
use multiconn_core::{FlowId, Packet, Time};

pub(crate) const MS: u64 = 1_000_000;
pub(crate) const PACKET: u32 = 1500;

pub(crate) fn packet(id: u64, ue: usize) -> Packet {
    Packet::new(id, FlowId(ue as u32), PACKET, id, Time(0))
}

pub(crate) fn quiet(distances: Vec<f64>) -> CellConfig {
    CellConfig { fading: FadingConfig::None, ..CellConfig::study(distances) }
}

/// When a test driving `cell` with a source must act next, at `now`: the next whole millisecond
/// (`next_ms`), the source's next packet (`next_send`, while before `until_ns`) or the cell's
/// own wake-up, whichever is first (never before `now`, the millisecond at least 1 ns later);
/// `None` once the source is done and the cell has nothing due.
pub(crate) fn next_instant(cell: &CellHop, now: u64, next_ms: u64, next_send: u64, until_ns: u64) -> Option<u64> {
    let mut next = (next_ms * MS).max(now + 1);
    if next_send < until_ns {
        next = next.min(next_send);
    }
    match cell.poll_timeout() {
        Some(t) => next = next.min(t.0.max(now)),
        None if next_send >= until_ns => return None,
        None => {}
    }
    Some(next.max(now))
}

/// What came out of a run.
#[derive(Default, Debug, PartialEq)]
pub(crate) struct Tally {
    /// Per UE and direction: packets delivered, their bytes, their delays (ns) in order.
    pub(crate) delivered: Vec<[u64; 2]>,
    pub(crate) bytes: Vec<[u64; 2]>,
    pub(crate) delays: Vec<Vec<u64>>,
    pub(crate) order: Vec<Vec<u64>>,
    pub(crate) dropped: Vec<(usize, CellDropCause)>,
    pub(crate) trace: Vec<(u64, usize, u64)>,
    /// Per UE: bytes delivered by the end of the sources (before the drain).
    pub(crate) by_end: Vec<u64>,
    /// Packets still in the cell after 5 s of draining (a UE out of range keeps its own).
    pub(crate) stuck: usize,
    /// Each UE's counters when the sources stopped.
    pub(crate) at_end: Vec<multiconn_cell::UeCounters>,
}

/// Runs `cell` for `ms` milliseconds, keeping every UE's queue in `dir` topped up to `backlog`
/// packets (saturated sources) when `backlog` > 0, then drains it.
pub(crate) fn run(cell: &mut CellHop, dir: CellDirection, backlog: usize, ms: u64) -> Tally {
    let n = cell.ue_count();
    let mut t = Tally {
        delivered: vec![[0; 2]; n],
        bytes: vec![[0; 2]; n],
        delays: vec![Vec::new(); n],
        order: vec![Vec::new(); n],
        by_end: vec![0; n],
        ..Tally::default()
    };
    let mut next_id = 0u64;
    let mut sent_at = std::collections::HashMap::new();
    let mut in_cell = vec![0usize; n];
    let mut now = 0u64;
    let end = ms * MS;
    loop {
        if now >= end && t.at_end.is_empty() {
            t.at_end = (0..n).map(|u| cell.ue_counters(u)).collect();
        }
        if now < end && backlog > 0 {
            for (ue, count) in in_cell.iter_mut().enumerate() {
                while *count < backlog {
                    let pkt = packet(next_id, ue);
                    sent_at.insert(next_id, now);
                    next_id += 1;
                    match cell.enqueue(Time(now), ue, dir, pkt) {
                        Ok(()) => *count += 1,
                        Err((_, cause)) => t.dropped.push((ue, cause)),
                    }
                }
            }
        }
        while let Some(out) = cell.poll(Time(now)).expect("a valid cell") {
            match out {
                CellOutput::Delivered { at, ue, dir: d, pkt } => {
                    assert_eq!(d, dir);
                    in_cell[ue] -= 1;
                    t.delivered[ue][d as usize] += 1;
                    t.bytes[ue][d as usize] += u64::from(pkt.size);
                    t.delays[ue].push(at.0 - sent_at[&pkt.id]);
                    t.order[ue].push(pkt.id);
                    t.trace.push((at.0, ue, pkt.id));
                    if at.0 <= end {
                        t.by_end[ue] += u64::from(pkt.size);
                    }
                }
                CellOutput::Dropped { ue, cause, .. } => {
                    in_cell[ue] -= 1;
                    t.dropped.push((ue, cause));
                }
            }
        }
        match cell.poll_timeout() {
            Some(next) if next.0 > now => now = next.0,
            Some(_) => {}
            None if now < end && backlog > 0 => now = (now / MS + 1) * MS,
            None => break,
        }
        if now > end + 5_000 * MS {
            break;
        }
    }
    t.stuck = in_cell.iter().sum();
    t
}

#[test]
fn close_to_the_enb_without_fading_the_mac_delivers_the_top_mcs_tbs_every_tti() {
    let mut cell = CellHop::new(quiet(vec![50.0]), 1, "cell").unwrap();
    let ms = 1000;
    let t = run(&mut cell, CellDirection::Down, 200, ms);
    assert_eq!(t.stuck, 0, "every packet leaves the cell once");
    let c = cell.ue_counters(0);
    let top = tbs_for_mcs(28, 100).unwrap(); // 75 376 bits, TS 36.213 Table 7.1.7.2.1-1
    assert_eq!(c.last_mcs, 28);
    assert_eq!(c.dl_tb_errors, 0);
    // One TB of 100 PRBs each TTI while the source keeps the buffer full.
    assert!(c.dl_rb_ttis >= 100 * ms && c.dl_rb_ttis <= 100 * (ms + 60), "{c:?}");
    let capacity_bytes = f64::from(top) / 8.0 * ms as f64;
    let carried = t.bytes[0][0] as f64;
    // Delivered within 1 % of the top TBS over the run (RLC headers and the first TTI's
    // one-TTI-old report aside).
    assert!(carried > 0.99 * capacity_bytes && carried < 1.01 * capacity_bytes + 200_000.0, "{carried} of {capacity_bytes}");
}

fn goodput_mbps(distance: f64, dir: CellDirection) -> (f64, u64) {
    let mut cell = CellHop::new(quiet(vec![distance]), 1, "cell").unwrap();
    let t = run(&mut cell, dir, 100, 300);
    let c = cell.ue_counters(0);
    let out_of_range = match dir {
        CellDirection::Down => c.dl_out_of_range_ttis,
        CellDirection::Up => c.ul_out_of_range_ttis,
    };
    (t.bytes[0][dir as usize] as f64 * 8.0 / 0.3 / 1e6, out_of_range)
}

#[test]
fn throughput_falls_with_distance_and_the_uplink_ends_the_cell_first() {
    let distances = [50.0, 250.0, 500.0, 1000.0, 1500.0, 2500.0, 4000.0];
    let down: Vec<(f64, u64)> = distances.iter().map(|&d| goodput_mbps(d, CellDirection::Down)).collect();
    let up: Vec<(f64, u64)> = distances.iter().map(|&d| goodput_mbps(d, CellDirection::Up)).collect();
    for w in down.windows(2).chain(up.windows(2)) {
        assert!(w[1].0 <= w[0].0 + 1e-9, "{down:?} {up:?}");
    }
    assert!(down[0].0 > 70.0 && up[0].0 > 40.0, "{down:?} {up:?}");
    // The downlink's mean SNR is 138.45 − PL dB, the uplink's 119.45 − PL per RB over the whole
    // band (reference §2): the uplink reaches the end of the MCS table first.
    let edge = |v: &[(f64, u64)]| v.iter().position(|&(g, _)| g == 0.0);
    let (down_edge, up_edge) = (edge(&down), edge(&up));
    assert!(up_edge.is_some(), "{up:?}");
    assert!(down_edge.is_none_or(|d| up_edge.unwrap() <= d), "{down:?} {up:?}");
    // The counters say which direction could not be served.
    let (_, up_out) = up[up_edge.unwrap()];
    assert!(up_out > 0);
}

fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    s * s / (x.len() as f64 * x.iter().map(|v| v * v).sum::<f64>())
}

#[test]
fn pf_and_rr_share_equally_among_equal_ues_and_max_ci_starves_the_far_one() {
    for kind in [SchedulerKind::ProportionalFair, SchedulerKind::RoundRobin] {
        let mut cell = CellHop::new(CellConfig { scheduler: kind, ..quiet(vec![300.0; 4]) }, 1, "cell").unwrap();
        let t = run(&mut cell, CellDirection::Down, 100, 500);
        let shares: Vec<f64> = t.bytes.iter().map(|b| b[0] as f64).collect();
        assert!(jain(&shares) > 0.99, "{kind:?}: {shares:?}");
    }
    let mut cell = CellHop::new(CellConfig { scheduler: SchedulerKind::MaxCi, ..quiet(vec![100.0, 800.0]) }, 1, "cell").unwrap();
    let t = run(&mut cell, CellDirection::Down, 100, 500);
    assert!(t.by_end[0] > 0 && (t.by_end[1] as f64) < 0.01 * t.by_end[0] as f64, "{:?}", t.by_end);
    assert_eq!(t.stuck, 0);
}

#[test]
fn pf_gives_a_near_and_a_far_ue_equal_time_shares() {
    let mut cell = CellHop::new(quiet(vec![100.0, 800.0]), 1, "cell").unwrap();
    let t = run(&mut cell, CellDirection::Down, 100, 1000);
    // While both are saturated (the far UE drains its backlog alone afterwards). New transmissions: the far UE also spends RBs on its retransmissions (its MCS sits near
    // the 10 % BLER target), which PF's averages do not count.
    let (near, far) = (t.at_end[0].dl_new_rb_ttis as f64, t.at_end[1].dl_new_rb_ttis as f64);
    assert!((near / far - 1.0).abs() < 0.05, "RB·TTIs of new data: near {near}, far {far}");
}

#[test]
fn the_first_transmission_bler_is_what_the_chosen_mcs_gives_below_the_target() {
    // Without fading the SINR is constant, so every TB uses the MCS of one CQI and fails with
    // that MCS's error probability at that SINR, which link adaptation keeps at most 10 %.
    let d = 1000.0;
    let cfg = quiet(vec![d]);
    let mut cell = CellHop::new(cfg.clone(), 7, "cell").unwrap();
    run(&mut cell, CellDirection::Down, 50, 3000);
    let c = cell.ue_counters(0);
    let sinr = LinkBudget::study().enb_power_dbm - 20.0 - cfg.budget.loss_db(d) - (-174.0 + 10.0 * 180_000f64.log10() + 9.0);
    let sinrs = vec![sinr; 100];
    let p = BlerCurve::default().tb_error_probability(c.last_mcs, &sinrs).unwrap();
    assert!(p <= 0.1 && p > 0.001, "expected BLER {p} at MCS {} and {sinr:.1} dB", c.last_mcs);
    let n = c.dl_new_tbs as f64;
    let measured = c.dl_first_tx_errors as f64 / n;
    let sd = (p * (1.0 - p) / n).sqrt();
    assert!((measured - p).abs() < 4.0 * sd, "first-transmission BLER {measured:.4} over {n} TBs, expected {p:.4} ± {sd:.4}");
}

#[test]
fn a_tb_harq_gives_up_becomes_an_rlc_gap_that_t_reordering_closes() {
    // At vehicular Doppler (300 Hz: 150 km/h at 2.1 GHz) the channel decorrelates within a
    // few TTIs: the one-TTI-old CQI misses fades, retransmissions land in new ones, and now
    // and then a TB fails four times.
    let fading = FadingConfig::Rayleigh { doppler_hz: 300.0, spread: FadingSpread::Flat };
    let cfg = CellConfig { fading, ..CellConfig::study(vec![1100.0]) };
    let mut cell = CellHop::new(cfg, 3, "cell").unwrap();
    let t = run(&mut cell, CellDirection::Down, 60, 8000);
    assert_eq!(t.stuck, 0, "{:?} queued {}", cell.ue_counters(0), cell.rlc_queued_bytes(0, CellDirection::Down));
    let harq = t.dropped.iter().filter(|(_, c)| *c == CellDropCause::HarqMaxRetx).count();
    assert!(harq > 0, "no TB was given up: {:?}", cell.ue_counters(0));
    assert_eq!(harq as u64, cell.ue_counters(0).harq_drops);
    // Delivery stays in order, and the packets behind a gap wait for t-Reordering (100 ms).
    assert!(t.order[0].windows(2).all(|w| w[0] < w[1]));
    assert!(t.delays[0].iter().any(|&d| d >= 100 * MS), "no packet waited for t-Reordering");
}

#[test]
fn the_rlc_buffer_overflows_at_512_kb_with_its_own_cause() {
    let mut cell = CellHop::new(quiet(vec![100.0]), 1, "cell").unwrap();
    let fits = 524_288 / PACKET as usize; // 349 packets of 1500 bytes
    for i in 0..fits {
        cell.enqueue(Time(0), 0, CellDirection::Down, packet(i as u64, 0)).unwrap();
    }
    let refused = cell.enqueue(Time(0), 0, CellDirection::Down, packet(999, 0));
    assert!(matches!(refused, Err((ref p, CellDropCause::RlcBufferFull)) if p.id == 999));
    assert_eq!(cell.ue_counters(0).rlc_buffer_drops, 1);
    assert_eq!(cell.rlc_queued_bytes(0, CellDirection::Down), fits as u64 * u64::from(PACKET));
    assert_eq!(CellDropCause::RlcBufferFull.name(), "rlc_buffer_full");
}

#[test]
fn same_seed_same_run_and_fading_makes_seeds_differ() {
    let faded = |seed| {
        let cfg = CellConfig { fading: FadingConfig::Rayleigh { doppler_hz: 5.89, spread: FadingSpread::PerRb }, ..CellConfig::study(vec![200.0, 600.0]) };
        let mut cell = CellHop::new(cfg, seed, "cell").unwrap();
        run(&mut cell, CellDirection::Down, 40, 300).trace
    };
    assert_eq!(faded(5), faded(5));
    assert_ne!(faded(5), faded(6));
}

#[test]
fn bad_configurations_name_the_field() {
    let err = |cfg: CellConfig| CellHop::new(cfg, 1, "cell").err().expect("refused").to_string();
    assert!(err(CellConfig { n_rb: 30, ..quiet(vec![100.0]) }).contains("cell.bandwidth_rb"));
    assert!(err(quiet(vec![100.0, -5.0])).contains("cell.ues[1].distance_m"));
    assert!(err(quiet(vec![])).contains("cell.ues"));
    let loud = LinkBudget { enb_power_dbm: 90.0, ..LinkBudget::study() };
    assert!(err(CellConfig { budget: loud, ..quiet(vec![100.0]) }).contains("cell.enb_power_dbm"));
    assert!(err(CellConfig { fading: FadingConfig::Rayleigh { doppler_hz: -1.0, spread: FadingSpread::Flat }, ..quiet(vec![1.0]) }).contains("doppler"));
    assert!(multiconn_cell::SchedulerKind::from_name("fifo").unwrap_err().to_string().contains("pf, rr, maxci"));
    let _ = AmcModel::shannon_gap();
}


mod receiver {
    use multiconn_cell::{UmPdu, UmReceiver, UmSegment};

    fn pdu(segments: &[(u64, u32, u32, u32)]) -> UmPdu {
        UmPdu {
            sn: 0,
            header_bytes: 2,
            segments: segments.iter().map(|&(sdu_id, sdu_bytes, offset, len)| UmSegment { sdu_id, sdu_bytes, offset, len }).collect(),
        }
    }

    #[test]
    fn pdus_out_of_order_are_reordered_and_sdus_reassembled() {
        let mut rx = UmReceiver::new(100_000);
        let (mut out, mut lost) = (Vec::new(), Vec::new());
        // SDU 0 (1000 B) in PDUs 0 and 1, SDU 1 whole in PDU 1, SDU 2 in PDU 2.
        rx.receive(0, 1, pdu(&[(0, 1000, 600, 400), (1, 300, 0, 300)]), &mut out, &mut lost);
        assert!(out.is_empty() && rx.timer_expiry_us() == Some(100_000));
        rx.receive(8_000, 0, pdu(&[(0, 1000, 0, 600)]), &mut out, &mut lost);
        assert_eq!(out, vec![0, 1]);
        assert_eq!(rx.timer_expiry_us(), None);
        rx.receive(9_000, 2, pdu(&[(2, 500, 0, 500)]), &mut out, &mut lost);
        assert_eq!(out, vec![0, 1, 2]);
        assert!(lost.is_empty());
    }

    #[test]
    fn t_reordering_gives_a_missing_pdu_up_and_its_sdus_are_lost() {
        let mut rx = UmReceiver::new(100_000);
        let (mut out, mut lost) = (Vec::new(), Vec::new());
        // PDU 0 (the start of SDU 0) never comes; PDU 1 ends SDU 0 and carries SDU 1.
        rx.receive(1_000, 1, pdu(&[(0, 1000, 600, 400), (1, 300, 0, 300)]), &mut out, &mut lost);
        rx.expire(100_999, &mut out, &mut lost);
        assert!(out.is_empty(), "not yet");
        rx.expire(101_000, &mut out, &mut lost);
        assert_eq!((out.as_slice(), lost.as_slice()), (&[1u64][..], &[0u64][..]));
        let c = rx.counters();
        assert_eq!((c.missing_pdus, c.lost_sdus, c.delivered_sdus, c.reordering_expiries), (1, 1, 1, 1));
        // It arrives after all: too late, its SDUs are lost.
        lost.clear();
        rx.receive(120_000, 0, pdu(&[(0, 1000, 0, 600)]), &mut out, &mut lost);
        assert_eq!(lost, vec![0]);
        assert_eq!(rx.counters().late_pdus, 1);
    }
}
