//! A RAN of three LTE cells on a line and a UE driving past them (`crates/cell/src/ran.rs`):
//! A3 hands it over near each cell border, each handover leaves exactly its interruption in
//! the delivered downlink, forwarded packets arrive after it, DAPS leaves no gap, a UE
//! driving out of coverage fails its radio link after T310 and comes back, and conditional
//! handover prepares early, executes at A3 without waiting for a command, and turns a failure
//! at the edge into a handover.

use multiconn_cell::ran::{ConditionalConfig, FailureConfig, HandoverConfig, MeasurementConfig, Ran, RanConfig, RanEvent};
use multiconn_cell::rrc::RlmConfig;
use multiconn_cell::{CellConfig, CellDirection, CellOutput, FadingConfig};
use multiconn_core::{FlowId, Packet, Time};
use multiconn_radio::budget::SectorAntenna;
use multiconn_radio::layout::{Cell, Layout, Site};
use multiconn_radio::pathloss::{LogDistance, PathLoss};
use multiconn_radio::route::Route;

const MS: u64 = 1_000_000;

/// Three omnidirectional 10 MHz LTE cells at x = 0, 500 and 1000 m, a UE from (100, 50) to
/// (900, 50) at 20 m/s, ns-3's log-distance path loss, no fading.
fn line(handover: HandoverConfig) -> RanConfig {
    let mut cell = CellConfig { fading: FadingConfig::None, n_rb: 50, ..CellConfig::study(vec![100.0]) };
    cell.budget.carrier_mhz = 2120.0;
    let sites = (0..3).map(|i| Site { x_m: 500.0 * f64::from(i), y_m: 0.0, height_m: 30.0 }).collect();
    let placed = (0..3).map(|i| Cell { site: i, azimuth_deg: None, antenna: SectorAntenna::default(), tx_power_dbm: 46.0, carrier_mhz: 2120.0, n_rb: 50 }).collect();
    RanConfig {
        cells: vec![cell; 3],
        layout: Layout::from_sites(sites, placed).unwrap(),
        pathloss: PathLoss::LogDistance(LogDistance::ns3()),
        routes: vec![Route::straight((100.0, 50.0), (900.0, 50.0), 20.0).unwrap()],
        initial_cell: vec![Some(0)],
        shadowing: None,
        measurement: MeasurementConfig::default(),
        handover,
        failure: None,
        secondary: None,
    }
}

/// Runs `ran` for `ms`, keeping 200 downlink packets queued for UE 0; the delivery times (ns)
/// and packet ids, in order.
fn run(ran: &mut Ran, ms: u64) -> Vec<(u64, u64)> {
    let mut delivered = Vec::new();
    let (mut next, mut inside) = (0u64, 0usize);
    let mut now = 0;
    while now < ms * MS {
        // At most 200 offers a millisecond: one refused (the old cell before the path switch,
        // without forwarding) is dropped.
        for _ in 0..200 {
            if inside >= 200 {
                break;
            }
            if ran.enqueue(Time(now), 0, CellDirection::Down, Packet::new(next, FlowId(0), 1400, next, Time(now))).is_ok() {
                inside += 1;
            }
            next += 1;
        }
        while let Some(o) = ran.poll(Time(now)).unwrap() {
            inside -= 1;
            if let CellOutput::Delivered { at, pkt, .. } = o {
                delivered.push((at.0, pkt.id));
            }
        }
        now += MS;
    }
    delivered
}

#[test]
fn a3_hands_the_ue_over_near_each_border_leaving_exactly_the_interruption() {
    let mut ran = Ran::new(line(HandoverConfig::default()), 1, "ran").unwrap();
    let delivered = run(&mut ran, 40_000);
    let ends: Vec<_> = ran.events().iter().filter(|e| matches!(e.event, RanEvent::HandoverEnd { .. })).collect();
    assert_eq!(ends.len(), 2, "{:#?}", ran.events());
    // Each starts a little past the border (x = 250, 750): A3 needs the neighbour 4 dB above
    // (offset 3 + hysteresis 1), i.e. d_serving / d_neighbour = 10^(4/30) — the UE at 50 m from
    // the line reaches it about 30 m past the border — then 256 ms of time-to-trigger, the
    // filter's lag and 20 ms of preparation.
    let starts: Vec<_> = ran.events().iter().filter(|e| matches!(e.event, RanEvent::HandoverStart { .. })).collect();
    for (s, border) in starts.iter().zip([250.0, 750.0]) {
        let x = s.position_m.0;
        assert!(x > border + 20.0 && x < border + 120.0, "handover started at x = {x} m (border {border})");
    }
    assert!(matches!(ends[0].event, RanEvent::HandoverEnd { source: 0, target: 1, interruption_ns: 40_000_000 }));
    assert!(matches!(ends[1].event, RanEvent::HandoverEnd { source: 1, target: 2, interruption_ns: 40_000_000 }));
    // Nothing is delivered while the UE is in no cell: the gap covers the interruption.
    for (s, e) in starts.iter().zip(&ends) {
        let (from, to) = (s.at.0, e.at.0);
        assert!(!delivered.iter().any(|&(t, _)| t > from && t <= to), "a packet delivered in [{from}, {to}]");
        // Delivery resumes within a few ms of entering the target.
        assert!(delivered.iter().any(|&(t, _)| t > to && t < to + 5 * MS), "no delivery right after {to}");
    }
    assert_eq!(ran.ue_counters(0).handovers, 2);
    assert_eq!(ran.ue_counters(0).serving, Some(2));
}

#[test]
fn forwarded_packets_arrive_after_the_interruption_and_none_without_forwarding() {
    let mut ran = Ran::new(line(HandoverConfig::default()), 1, "ran").unwrap();
    let delivered = run(&mut ran, 20_000);
    let start = ran.events().iter().find(|e| matches!(e.event, RanEvent::HandoverStart { .. })).unwrap().at.0;
    let end = ran.events().iter().find(|e| matches!(e.event, RanEvent::HandoverEnd { .. })).unwrap().at.0;
    // The last packet delivered before the command and the first ones after: with forwarding,
    // the target's first packets continue right after the source's last ones (the UM source
    // forwards what it had not begun to send; what it had in HARQ or half sent is lost).
    let last_before = delivered.iter().filter(|&&(t, _)| t <= start).map(|&(_, id)| id).max().unwrap();
    let after: Vec<u64> = delivered.iter().filter(|&&(t, _)| t > end).map(|&(_, id)| id).take(50).collect();
    assert!(after[0] > last_before && after[0] < last_before + 30, "first after {}: {} (last before {last_before})", end, after[0]);
    assert!(after.windows(2).all(|w| w[1] > w[0]), "forwarded packets first, in order: {after:?}");
    // Without forwarding the source's packets are dropped: the first packet after is a later one.
    let mut ran = Ran::new(line(HandoverConfig { forwarding: false, ..HandoverConfig::default() }), 1, "ran").unwrap();
    let lost = run(&mut ran, 20_000);
    let start = ran.events().iter().find(|e| matches!(e.event, RanEvent::HandoverStart { .. })).unwrap().at.0;
    let end = ran.events().iter().find(|e| matches!(e.event, RanEvent::HandoverEnd { .. })).unwrap().at.0;
    let last_before = lost.iter().filter(|&&(t, _)| t <= start).map(|&(_, id)| id).max().unwrap();
    let first_after = lost.iter().find(|&&(t, _)| t > end).unwrap().1;
    assert!(first_after > last_before + 100, "{first_after} after {last_before}: the source's buffer should be lost");
}

#[test]
fn daps_leaves_no_interruption_only_the_x2_delay_of_the_last_packets() {
    // The longest stretch without a delivery around the first handover, with and without DAPS.
    let longest_gap = |daps: bool| {
        let mut ran = Ran::new(line(HandoverConfig { daps, ..HandoverConfig::default() }), 1, "ran").unwrap();
        let delivered = run(&mut ran, 20_000);
        let start = ran.events().iter().find(|e| matches!(e.event, RanEvent::HandoverStart { .. })).unwrap().at.0;
        let end = ran.events().iter().find(|e| matches!(e.event, RanEvent::HandoverEnd { .. })).unwrap().clone();
        let times: Vec<u64> = delivered.iter().map(|&(t, _)| t).filter(|&t| t + 100 * MS > start && t < end.at.0 + 100 * MS).collect();
        (times.windows(2).map(|w| w[1] - w[0]).max().unwrap(), end.event)
    };
    let (daps, end) = longest_gap(true);
    assert!(matches!(end, RanEvent::HandoverEnd { interruption_ns: 0, .. }), "{end:?}");
    let (plain, _) = longest_gap(false);
    // Without DAPS: the 40 ms interruption at least. With it: the source serves the UE until
    // it is in the target; what the source still held reaches the target after the 5 ms X2
    // delay (no early forwarding), and the target's first grant follows.
    assert!(plain >= 40 * MS, "{} ms", plain / MS);
    assert!(daps < 20 * MS && daps * 3 < plain, "DAPS {} ms against {} ms", daps / MS, plain / MS);
}

#[test]
fn a_ue_out_of_coverage_fails_after_t310_and_comes_back() {
    // The UE driving 4 km away and back: out of sync below −8 dB → T310 (1 s) → RLF,
    // re-established when back in coverage.
    let mut cfg = line(HandoverConfig::default());
    cfg.routes = vec![Route::new((100.0, 0.0), vec![
        multiconn_radio::route::Leg::Move { to: (-4000.0, 0.0), speed_mps: 130.0 },
        multiconn_radio::route::Leg::Move { to: (100.0, 0.0), speed_mps: 130.0 },
    ]).unwrap()];
    cfg.failure = Some(multiconn_cell::ran::FailureConfig { monitor: RlmConfig::default(), reestablishment_ns: 300 * MS });
    let mut ran = Ran::new(cfg, 1, "ran").unwrap();
    let _ = run(&mut ran, 64_000);
    let failures: Vec<_> = ran.events().iter().filter(|e| matches!(e.event, RanEvent::RadioLinkFailure { .. })).collect();
    assert!(!failures.is_empty(), "{:#?}", ran.events());
    let back = ran.events().iter().find(|e| matches!(e.event, RanEvent::Reestablished { .. }));
    assert!(back.is_some());
    assert!(ran.ue_counters(0).failures >= 1);
}

fn first_event_at(ran: &Ran, pick: impl Fn(&RanEvent) -> bool) -> u64 {
    ran.events().iter().find(|e| pick(&e.event)).unwrap_or_else(|| panic!("no such event in {:#?}", ran.events())).at.0
}

fn conditional() -> HandoverConfig {
    HandoverConfig { conditional: Some(ConditionalConfig::default()), ..HandoverConfig::default() }
}

#[test]
fn conditional_handover_prepares_at_the_looser_trigger_and_executes_where_a3_reports() {
    let mut classic = Ran::new(line(HandoverConfig::default()), 1, "ran").unwrap();
    let _ = run(&mut classic, 20_000);
    let classic_report = first_event_at(&classic, |e| matches!(e, RanEvent::Report { .. }));
    let classic_start = first_event_at(&classic, |e| matches!(e, RanEvent::HandoverStart { .. }));
    assert_eq!(classic_start, classic_report + 20 * MS);

    let mut cho = Ran::new(line(conditional()), 1, "ran").unwrap();
    let delivered = run(&mut cho, 40_000);
    let report = cho.events().iter().find(|e| matches!(e.event, RanEvent::Report { .. })).unwrap().clone();
    let ready = cho.events().iter().find(|e| matches!(e.event, RanEvent::CandidateReady { .. })).unwrap().clone();
    let start = first_event_at(&cho, |e| matches!(e, RanEvent::HandoverStart { source: 0, target: 1 }));
    let end = first_event_at(&cho, |e| matches!(e, RanEvent::HandoverEnd { source: 0, target: 1, interruption_ns: 40_000_000 }));
    // The preparation trigger (offset 0 dB, the neighbour 1 dB above with the hysteresis)
    // comes well before the execution's (3 dB + 1 dB): 3 dB of the path-loss ratio is about
    // 40 m here, two seconds at 20 m/s.
    assert!(matches!(report.event, RanEvent::Report { source: 0, target: 1 }));
    assert!(report.at.0 + 1_000 * MS < classic_report, "prepared at {} ms, classic report at {} ms", report.at.0 / MS, classic_report / MS);
    // Ready at the first measurement instant (every 40 ms) after the 20 ms of preparation.
    assert!(ready.at.0 >= report.at.0 + 20 * MS && ready.at.0 < report.at.0 + 60 * MS, "ready at {} ms", ready.at.0 / MS);
    // Executed where the classic A3 reports (the same filter, offset, hysteresis and
    // time-to-trigger), the preparation's 20 ms earlier than the classic command.
    assert_eq!(start, classic_report);
    assert_eq!(end, start + 40 * MS);
    // The source hears of it from the target 5 ms after the UE is in, and forwards then: the
    // first packets reach the target 10 ms after the UE (two X2 delays), the source's first.
    assert!(!delivered.iter().any(|&(t, _)| t > start && t < end + 10 * MS), "a delivery before the forwarded packets could arrive");
    let last_before = delivered.iter().filter(|&&(t, _)| t <= start).map(|&(_, id)| id).max().unwrap();
    let first_after = delivered.iter().find(|&&(t, _)| t >= end + 10 * MS).unwrap();
    assert!(first_after.0 < end + 15 * MS, "first delivery at {} ms, the UE in at {} ms", first_after.0 / MS, end / MS);
    assert!(first_after.1 > last_before && first_after.1 < last_before + 30, "first after: {} (last before {last_before})", first_after.1);
    assert_eq!(cho.ue_counters(0).handovers, 2);
    assert_eq!(cho.ue_counters(0).serving, Some(2));
}

#[test]
fn a_failure_with_a_ready_candidate_becomes_a_conditional_handover() {
    // The execution condition set as late as it goes (A3 offset 15 dB) and radio link
    // monitoring strict enough (Qout 19 dB, T310 100 ms) that the link to cell 0 fails
    // first, some 70 m past the border, with cell 1 prepared long before.
    let edge = |attempt_after_failure: bool| {
        let mut cfg = line(HandoverConfig { a3_offset_db: 15.0, conditional: Some(ConditionalConfig { preparation_offset_db: 0.0, attempt_after_failure }), ..HandoverConfig::default() });
        cfg.failure = Some(FailureConfig { monitor: RlmConfig { t310_ms: 100, q_out_db: 19.0, q_in_db: 21.0, ..RlmConfig::default() }, reestablishment_ns: 300 * MS });
        let mut ran = Ran::new(cfg, 1, "ran").unwrap();
        let delivered = run(&mut ran, 20_000);
        (ran, delivered)
    };
    let (ran, delivered) = edge(true);
    let failed = first_event_at(&ran, |e| matches!(e, RanEvent::RadioLinkFailure { cell: 0 }));
    let ready = first_event_at(&ran, |e| matches!(e, RanEvent::CandidateReady { source: 0, target: 1 }));
    assert!(ready < failed);
    // The failure is followed at once by the execution to the candidate, not a
    // re-establishment: the outage is the interruption.
    assert_eq!(first_event_at(&ran, |e| matches!(e, RanEvent::HandoverStart { source: 0, target: 1 })), failed);
    assert_eq!(first_event_at(&ran, |e| matches!(e, RanEvent::HandoverEnd { source: 0, target: 1, .. })), failed + 40 * MS);
    assert!(!ran.events().iter().any(|e| matches!(e.event, RanEvent::Reestablished { .. })));
    assert_eq!((ran.ue_counters(0).failures, ran.ue_counters(0).handovers), (1, 1));
    // The source's packets are forwarded, not lost: delivery continues in order.
    let last_before = delivered.iter().filter(|&&(t, _)| t <= failed).map(|&(_, id)| id).max().unwrap();
    let first_after = delivered.iter().find(|&&(t, _)| t > failed).unwrap().1;
    assert!(first_after > last_before && first_after < last_before + 30, "first after: {first_after} (last before {last_before})");

    // Without attemptCondReconfig the same failure costs the re-establishment and the
    // source's buffer.
    let (ran, delivered) = edge(false);
    let failed = first_event_at(&ran, |e| matches!(e, RanEvent::RadioLinkFailure { cell: 0 }));
    assert_eq!(first_event_at(&ran, |e| matches!(e, RanEvent::Reestablished { cell: 1 })), failed + 300 * MS);
    let last_before = delivered.iter().filter(|&&(t, _)| t <= failed).map(|&(_, id)| id).max().unwrap();
    let first_after = delivered.iter().find(|&&(t, _)| t > failed).unwrap().1;
    assert!(first_after > last_before + 100, "{first_after} after {last_before}: the source's buffer should be lost");
}

#[test]
fn conditional_handover_refuses_daps_and_a_preparation_after_execution() {
    let daps = HandoverConfig { daps: true, ..conditional() };
    let e = Ran::new(line(daps), 1, "ran").err().unwrap().to_string();
    assert!(e.contains("ran.handover.conditional") && e.contains("DAPS"), "{e}");
    let late = HandoverConfig { conditional: Some(ConditionalConfig { preparation_offset_db: 4.0, attempt_after_failure: true }), ..HandoverConfig::default() };
    let e = Ran::new(line(late), 1, "ran").err().unwrap().to_string();
    assert!(e.contains("preparation_offset_db") && e.contains("a3_offset_db"), "{e}");
    let odd = HandoverConfig { conditional: Some(ConditionalConfig { preparation_offset_db: 0.3, attempt_after_failure: true }), ..HandoverConfig::default() };
    let e = Ran::new(line(odd), 1, "ran").err().unwrap().to_string();
    assert!(e.contains("preparation_offset_db") && e.contains("0.5"), "{e}");
}

#[test]
fn a_secondary_nodes_radio_link_failure_releases_the_scg_hands_back_its_packets_and_b1_adds_it_again() {
    // The UE drives out of coverage and back as above; the RAN an EN-DC secondary node under
    // RLC AM: the failure is an SCG failure (no re-establishment), what the cell held goes back
    // to the PDCP entity, nothing is taken meanwhile, and B1 adds the SCG when the UE is back.
    let mut cfg = line(HandoverConfig::default());
    for c in &mut cfg.cells {
        c.rlc = multiconn_cell::RlcMode::Am(multiconn_cell::rlc_am::AmConfig::nr_default(c.rlc_buffer_bytes));
    }
    cfg.routes = vec![Route::new((100.0, 0.0), vec![
        multiconn_radio::route::Leg::Move { to: (-4000.0, 0.0), speed_mps: 130.0 },
        multiconn_radio::route::Leg::Move { to: (100.0, 0.0), speed_mps: 130.0 },
    ]).unwrap()];
    cfg.failure = Some(FailureConfig { monitor: RlmConfig::default(), reestablishment_ns: 300 * MS });
    cfg.secondary = Some(multiconn_cell::ran::SecondaryNodeConfig { addition_rsrp_dbm: -100.0, release_rsrp_dbm: None });
    let mut ran = Ran::new(cfg, 1, "ran").unwrap();
    let (mut handed_back, mut refused_while_released) = (0, 0);
    let mut now = 0;
    let mut next = 0u64;
    let mut released_at = None;
    while now < 64_000 * MS {
        // A packet a millisecond offered; while released every one comes straight back.
        let present = ran.scg_present(0);
        // (A full RLC buffer refuses it while the SCG is there; while released none is refused.)
        let taken = ran.enqueue(Time(now), 0, CellDirection::Down, Packet::new(next, FlowId(0), 1400, next, Time(now))).is_ok();
        assert!(taken || present);
        next += 1;
        while ran.poll(Time(now)).unwrap().is_some() {}
        while let Some((at, ue, dir, _)) = ran.poll_handed_back(Time(now)) {
            assert_eq!((ue, dir), (0, CellDirection::Down));
            assert!(at.0 <= now);
            handed_back += 1;
            if !present {
                refused_while_released += 1;
            }
        }
        if released_at.is_none() && !ran.scg_present(0) {
            released_at = Some((now, handed_back));
        }
        now += MS;
    }
    let failed = first_event_at(&ran, |e| matches!(e, RanEvent::RadioLinkFailure { .. }));
    assert_eq!(first_event_at(&ran, |e| matches!(e, RanEvent::ScgReleased { failure: true, .. })), failed);
    assert!(!ran.events().iter().any(|e| matches!(e.event, RanEvent::Reestablished { .. })));
    let added = ran.events().iter().find(|e| matches!(e.event, RanEvent::ScgAdded { .. })).unwrap().clone();
    let report = first_event_at(&ran, |e| matches!(e, RanEvent::ScgAdditionReport { .. }));
    assert_eq!(added.at.0, report + 60 * MS, "B1, then 20 ms of preparation and 40 of random access");
    assert!(matches!(added.event, RanEvent::ScgAdded { outage_ns, .. } if outage_ns == added.at.0 - failed));
    // Released at the failure with the cell's undelivered packets handed back at once.
    let (at, back_then) = released_at.unwrap();
    assert_eq!(at, failed);
    assert!(back_then > 0, "nothing handed back at the release");
    // Every packet offered while released came back: one a millisecond.
    assert_eq!(refused_while_released as u64, (added.at.0 - failed) / MS);
    assert_eq!(ran.ue_counters(0).releases, 1);
    assert!(ran.scg_present(0));
}

#[test]
fn a5_hands_over_once_the_serving_cell_is_below_threshold1_and_the_neighbour_above_threshold2() {
    // The serving cell's RSRP along the route (no shadowing: the coupling alone).
    let cfg = line(HandoverConfig::default());
    let rsrp = |cell: usize, x: f64| multiconn_radio::layout::rsrp_dbm(&cfg.layout, cell, &multiconn_radio::layout::Ue::at(x, 50.0), &cfg.pathloss, 0.0).unwrap();
    // Where the serving cell's RSRP reaches threshold1 − hysteresis (1 dB): 100 m past the
    // border, with the neighbour far above threshold2 there.
    let t1 = rsrp(0, 350.0) + 1.0;
    let t2 = rsrp(1, 350.0) - 10.0;
    let a5 = HandoverConfig { a5_thresholds_dbm: Some((t1, t2)), ..HandoverConfig::default() };
    let mut ran = Ran::new(line(a5), 1, "ran").unwrap();
    let _ = run(&mut ran, 20_000);
    let report = ran.events().iter().find(|e| matches!(e.event, RanEvent::Report { source: 0, target: 1 })).unwrap().clone();
    // A3 (4 dB) would have reported about 30 m past the border; A5 waits for the serving cell
    // to fall: the condition holds from x = 350 m on (the filter's lag and the 256 ms of
    // time-to-trigger, about 5 m at 20 m/s, after it).
    let x = report.position_m.0;
    assert!(x > 350.0 && x < 400.0, "A5 reported at x = {x} m");
    let mut classic = Ran::new(line(HandoverConfig::default()), 1, "ran").unwrap();
    let _ = run(&mut classic, 20_000);
    let a3_x = classic.events().iter().find(|e| matches!(e.event, RanEvent::Report { .. })).unwrap().position_m.0;
    assert!(a3_x < 320.0, "A3 reported at x = {a3_x} m");
    // A threshold2 above the neighbour's best RSRP on the route: no handover at all.
    let never = HandoverConfig { a5_thresholds_dbm: Some((t1, rsrp(1, 500.0) + 3.0)), ..HandoverConfig::default() };
    let mut ran = Ran::new(line(never), 1, "ran").unwrap();
    let _ = run(&mut ran, 20_000);
    assert_eq!(ran.ue_counters(0).handovers, 0);
}
