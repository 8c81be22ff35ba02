//! The pieces together: a synthetic drive → capacities → channel table → every case, and inputs
//! at the edges (extreme RSRP values) that must give numbers, not panics.

use multiconn_radio::*;

#[test]
fn a_drive_runs_through_every_case() {
    let c = DriveConfig { duration_s: 900, ..DriveConfig::preset("road").unwrap() };
    let est = estimate(&generate(&c, 4).unwrap(), &EstimationParams::default()).unwrap();
    let table = est.channel_table();
    assert_eq!(table.channels().iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["A/1300", "A/6200", "B/1500", "B/6300"]);
    let delay = DelayModel::default();
    let timelines: Vec<Timeline> =
        Case::ALL.iter().map(|&case| run_case(&table, &HandoverParams::for_case(case), &delay).unwrap()).collect();
    for (i, s) in est.seconds.iter().enumerate() {
        // sp carries the best single path (up to the 0.01 Mbit/s floor of capacity_db ties).
        assert!((timelines[0].slots[0].rate_mbps[i] - s.levels.best_single_path_mbps).abs() <= 0.01);
        // Cases 2-4 carry the top 2, 3, 4 channels: their MP capacity grows with n and case 4's
        // is the multipath level (four channels at most here).
        assert!(timelines[2].mp_capacity_mbps[i] <= timelines[3].mp_capacity_mbps[i] + 1e-9);
        assert!(timelines[3].mp_capacity_mbps[i] <= timelines[4].mp_capacity_mbps[i] + 1e-9);
        assert!((timelines[4].mp_capacity_mbps[i] - s.levels.multipath_mbps).abs() < 1e-9);
        // Case 1 holds one channel, never more than the best.
        assert!(timelines[1].mp_capacity_mbps[i] <= s.levels.best_single_path_mbps + 1e-9);
    }
    // Case 1's hysteresis and time-to-trigger mean fewer handovers than sp's instant ones.
    assert!(timelines[1].handovers < timelines[0].handovers, "{} vs {}", timelines[1].handovers, timelines[0].handovers);
    assert!(timelines[0].events.is_empty() && !timelines[1].events.is_empty());
    // RSRP and SINR quantities work on an estimated table (their columns are filled).
    for quantity in [Quantity::Rsrp, Quantity::Sinr] {
        let p = HandoverParams { quantity, ..HandoverParams::for_case(Case::Two) };
        run_case(&table, &p, &delay).unwrap();
    }
    let p = HandoverParams { cell_change_is_handover: true, ..HandoverParams::for_case(Case::One) };
    assert!(run_case(&table, &p, &delay).unwrap().handovers > timelines[1].handovers);
}

#[test]
fn extreme_rsrp_values_give_numbers_not_panics() {
    let rows = vec![
        CellSample::new(0, "A", 1, "x", 1e300),
        CellSample::new(0, "A", 1, "y", 1e300),
        CellSample::new(0, "A", 2, "z", -1e300),
        CellSample::new(1, "B", 3, "w", 400.0),
        CellSample::new(1, "B", 4, "v", -139.9),
    ];
    let est = estimate(&DriveTable::new(rows).unwrap(), &EstimationParams::default()).unwrap();
    for s in &est.seconds {
        assert!(s.levels.multipath_mbps.is_finite() && s.levels.multipath_mbps >= 0.0);
    }
    let st = est.stats();
    assert!(st.multipath.mean.is_finite());
    let table = est.channel_table();
    for case in Case::ALL {
        run_case(&table, &HandoverParams::for_case(case), &DelayModel::default()).unwrap();
    }
}
