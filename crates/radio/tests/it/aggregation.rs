//! Available cells and the aggregation levels (multi-operator reference §1.3's worked example,
//! §1.4, §2.1): at most one usable cell per carrier, the levels' order at every second, the merge
//! and hold-over rules, the statistics.

use multiconn_radio::*;
use proptest::prelude::*;

use crate::support::assert_sig;

/// The worked example: OP1 on c1: −85, −95; OP1 on c2: −92; OP2 on c3: −90, −100; OP2 on c4: −104.
fn worked_example() -> Vec<CellSample> {
    [
        ("OP1", 1, "a", -85.0),
        ("OP1", 1, "b", -95.0),
        ("OP1", 2, "c", -92.0),
        ("OP2", 3, "d", -90.0),
        ("OP2", 3, "e", -100.0),
        ("OP2", 4, "f", -104.0),
    ]
    .into_iter()
    .map(|(op, earfcn, cell, rsrp)| CellSample::new(0, op, earfcn, cell, rsrp))
    .collect()
}

fn visible(rows: &[CellSample]) -> Vec<VisibleCell<'_>> {
    rows.iter().map(|r| VisibleCell { operator: &r.operator, earfcn: r.earfcn, cell_id: &r.cell_id, rsrp_dbm: r.rsrp_dbm }).collect()
}

#[test]
fn the_worked_example_under_both_interference_settings() {
    let rows = worked_example();
    let ops = vec!["OP1".to_string(), "OP2".to_string()];
    // (candidate RSRP, SINR dB, Mbit/s) for c1..c4; then OP1 SP, OP2 SP, best SP, multipath.
    let expected = [
        (
            Interference::AllVisible,
            [(-85.0, 11.80, 28.92), (-92.0, 1.352, 6.929), (-90.0, 3.714, 10.38), (-104.0, -11.17, 0.4960)],
            [28.92, 10.38, 28.92, 46.72],
        ),
        (
            Interference::SameCarrier,
            [(-85.0, 19.96, 53.07), (-92.0, 33.24, 55.55), (-90.0, 19.87, 52.80), (-104.0, 21.24, 55.55)],
            [55.55, 55.55, 55.55, 217.0],
        ),
    ];
    for (interference, channels, levels_expected) in expected {
        let p = CapacityParams { interference, ..CapacityParams::default() };
        let est = estimate_second(&visible(&rows), &p);
        assert_eq!(est.len(), 4, "one available cell per carrier");
        for (e, (rsrp, sinr_db, mbps)) in est.iter().zip(channels) {
            let what = format!("{interference:?} {}/{}", e.operator, e.earfcn);
            assert_eq!(e.rsrp_dbm, rsrp, "{what}: the candidate is the strongest cell");
            assert_sig(e.sinr_db, sinr_db, 4, &what);
            assert_sig(e.capacity_mbps, mbps, 4, &what);
        }
        assert_eq!(est.iter().map(|e| e.n_visible).collect::<Vec<_>>(), [2, 1, 2, 1]);
        assert_eq!(est.iter().map(|e| e.cell_id.as_str()).collect::<Vec<_>>(), ["a", "c", "d", "f"]);
        let l = levels(&est, &ops);
        let got = [l.operator_sp_mbps[0], l.operator_sp_mbps[1], l.best_single_path_mbps, l.multipath_mbps];
        for (g, e) in got.iter().zip(levels_expected) {
            assert_sig(*g, e, 4, &format!("{interference:?} levels"));
        }
    }
}

#[test]
fn the_table_estimation_gives_the_worked_example_too() {
    let table = DriveTable::new(worked_example()).unwrap();
    let est = estimate(&table, &EstimationParams::default()).unwrap();
    assert_eq!(est.operators, ["OP1", "OP2"]);
    assert_eq!(est.channels.iter().map(Carrier::label).collect::<Vec<_>>(), ["OP1/1", "OP1/2", "OP2/3", "OP2/4"]);
    assert_eq!(est.seconds.len(), 1);
    let s = &est.seconds[0];
    assert_eq!((s.visible, s.available), (6, 4));
    assert_sig(s.levels.multipath_mbps, 46.72, 4, "multipath");
    assert_eq!(est.rows.len(), 4);
    let ch = est.channel_table();
    assert_eq!(ch.len(), 1);
    assert_sig(ch.capacity(3, 0), 0.4960, 4, "c4");
    assert_eq!(ch.channels()[0].cell_id.as_ref().unwrap()[0].as_deref(), Some("a"));
}

#[test]
fn equal_rsrp_in_a_carrier_goes_to_the_smaller_cell_id() {
    let rows = vec![CellSample::new(0, "A", 1, "7", -90.0), CellSample::new(0, "A", 1, "3", -90.0)];
    let est = estimate_second(&visible(&rows), &CapacityParams::default());
    assert_eq!(est.len(), 1);
    assert_eq!(est[0].cell_id, "3");
    // The other cell of the carrier interferes with it at the load factor: SINR = 1e-9 / (0.1 ·
    // 1e-9 + N), just under 10 dB.
    let p = CapacityParams::default();
    let expected = 10.0 * (1e-9 / (0.1 * 1e-9 + p.noise_mw())).log10();
    assert!((est[0].sinr_db - expected).abs() < 1e-9 && expected < 10.0, "{}", est[0].sinr_db);
}

#[test]
fn seconds_without_rows_have_no_available_cell() {
    let rows = vec![CellSample::new(5, "A", 1, "x", -90.0), CellSample::new(8, "A", 1, "x", -91.0)];
    let est = estimate(&DriveTable::new(rows).unwrap(), &EstimationParams::default()).unwrap();
    assert_eq!(est.seconds.iter().map(|s| s.time_s).collect::<Vec<_>>(), [5, 6, 7, 8]);
    assert_eq!(est.seconds.iter().map(|s| s.available).collect::<Vec<_>>(), [1, 0, 0, 1]);
    assert_eq!(est.seconds[1].levels.multipath_mbps, 0.0);
    let ch = est.channel_table();
    assert_eq!(ch.start_s(), 5);
    assert_eq!(ch.channels()[0].capacity_mbps[1..3], [0.0, 0.0]);
    assert_eq!(ch.channels()[0].rsrp_dbm.as_ref().unwrap()[1], None);
}

#[test]
fn cells_below_the_reporting_range_are_not_visible() {
    let rows = vec![CellSample::new(0, "A", 1, "x", -141.0), CellSample::new(0, "B", 2, "y", -100.0)];
    let est = estimate(&DriveTable::new(rows).unwrap(), &EstimationParams::default()).unwrap();
    assert_eq!((est.seconds[0].visible, est.seconds[0].available), (1, 1));
    assert_eq!(est.seconds[0].levels.operator_sp_mbps[0], 0.0);
    // The invisible cell does not interfere either: the lone cell is noise-limited (V3's serving
    // power, alone: −100 + 125.24 dB).
    assert_sig(est.rows[0].sinr_db, 25.24, 4, "y alone");
}

#[test]
fn several_samples_of_a_cell_in_a_second_are_merged() {
    let rows = vec![CellSample::new(0, "A", 1, "x", -90.0), CellSample::new(0, "A", 1, "x", -100.0)];
    let table = DriveTable::new(rows).unwrap();
    let rsrp = |merge| {
        let p = EstimationParams { availability: AvailabilityParams { merge, ..Default::default() }, ..Default::default() };
        let est = estimate(&table, &p).unwrap();
        assert_eq!(est.seconds[0].visible, 1, "one cell, however many samples");
        est.rows[0].rsrp_dbm
    };
    assert_eq!(rsrp(SampleMerge::MeanDbm), -95.0);
    assert_sig(rsrp(SampleMerge::MeanMw), -92.60, 4, "mean of mW");
    assert_eq!(rsrp(SampleMerge::Last), -100.0);
}

#[test]
fn hold_over_keeps_a_cell_visible_for_hold_s_seconds() {
    let rows = vec![CellSample::new(0, "A", 1, "x", -90.0), CellSample::new(0, "B", 2, "y", -95.0), CellSample::new(4, "B", 2, "y", -95.0)];
    let table = DriveTable::new(rows).unwrap();
    let available = |hold_s| {
        let p = EstimationParams { availability: AvailabilityParams { hold_s, ..Default::default() }, ..Default::default() };
        estimate(&table, &p).unwrap().seconds.iter().map(|s| s.available).collect::<Vec<_>>()
    };
    assert_eq!(available(0), [2, 0, 0, 0, 1]);
    assert_eq!(available(2), [2, 2, 2, 0, 1]);
    assert_eq!(available(10), [2, 2, 2, 2, 2]);
}

#[test]
fn under_all_visible_interference_the_best_single_path_is_the_strongest_cell() {
    // Reference §1.4.3: the strongest cell overall has the highest SINR of all candidates.
    let rows = worked_example();
    let est = estimate_second(&visible(&rows), &CapacityParams::default());
    let strongest = est.iter().max_by(|a, b| a.rsrp_dbm.total_cmp(&b.rsrp_dbm)).unwrap();
    let best = est.iter().max_by(|a, b| a.capacity_mbps.total_cmp(&b.capacity_mbps)).unwrap();
    assert_eq!(strongest, best);
}

#[test]
fn percentiles_interpolate_linearly_between_order_statistics() {
    // numpy.percentile([1, 2, 3, 4], q): 10 → 1.3, 50 → 2.5, 0 → 1, 100 → 4.
    let v = [4.0, 1.0, 3.0, 2.0];
    assert!((percentile(&v, 10.0).unwrap() - 1.3).abs() < 1e-12);
    assert_eq!(percentile(&v, 50.0), Some(2.5));
    assert_eq!(percentile(&v, 0.0), Some(1.0));
    assert_eq!(percentile(&v, 100.0), Some(4.0));
    assert_eq!(percentile(&[], 50.0), None);
    assert_eq!(percentile(&v, 101.0), None);
    assert_eq!(percentile(&[1.0, f64::NAN], 50.0), None);
    // 1001 values 0..=1000: the 0.1th percentile is 1, the 20th 200.
    let w: Vec<f64> = (0..=1000).map(f64::from).collect();
    let s = Summary::of(&w).unwrap();
    assert_eq!((s.mean, s.median, s.p20, s.p10, s.p5, s.p1), (500.0, 500.0, 200.0, 100.0, 50.0, 10.0));
    assert!((s.p0_1 - 1.0).abs() < 1e-9);
}

#[test]
fn statistics_count_available_cells_and_summarise_each_level() {
    let mut rows = worked_example();
    rows.push(CellSample::new(1, "OP1", 1, "a", -85.0));
    rows.push(CellSample::new(1, "OP2", 4, "f", -104.0));
    let est = estimate(&DriveTable::new(rows).unwrap(), &EstimationParams::default()).unwrap();
    let st = est.stats();
    assert_eq!(st.seconds, 2);
    assert_eq!(st.mean_available, 3.0);
    assert_eq!(st.mean_visible, 4.0);
    assert_eq!(st.available_share, [0.0, 0.0, 0.5, 0.0, 0.5]);
    assert_eq!(st.available_cdf(), [0.0, 0.0, 0.5, 0.5, 1.0]);
    assert_eq!(st.operators.iter().map(|(o, _)| o.as_str()).collect::<Vec<_>>(), ["OP1", "OP2"]);
    let mp: Vec<f64> = est.seconds.iter().map(|s| s.levels.multipath_mbps).collect();
    assert!((st.multipath.mean - (mp[0] + mp[1]) / 2.0).abs() < 1e-9);
    assert!(st.multipath.p0_1 <= st.multipath.median);
}

/// Random tables: 1–3 operators with 1–3 carriers each, 0–6 cells per carrier and second,
/// RSRP anywhere from −150 to −40 dBm, seconds possibly skipped.
fn arb_table() -> impl Strategy<Value = Vec<CellSample>> {
    prop::collection::vec((0u32..3, 0u32..3, 0u32..6, -150.0f64..-40.0, 0u32..3), 1..120).prop_map(|cells| {
        let mut t = 0;
        let mut rows = Vec::new();
        for (op, carrier, cell, rsrp, dt) in cells {
            t += dt / 2;
            rows.push(CellSample::new(t, ["A", "B", "C"][op as usize], 100 * op + carrier, &cell.to_string(), rsrp));
        }
        rows
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn each_operator_never_beats_the_best_single_path_which_never_beats_multipath(
        rows in arb_table(),
        same_carrier in any::<bool>(),
        load in 0.0f64..=1.0,
        merge in prop_oneof![Just(SampleMerge::MeanDbm), Just(SampleMerge::MeanMw), Just(SampleMerge::Last)],
    ) {
        let table = DriveTable::new(rows).unwrap();
        let interference = if same_carrier { Interference::SameCarrier } else { Interference::AllVisible };
        let p = EstimationParams {
            capacity: CapacityParams { interference, load, ..CapacityParams::default() },
            availability: AvailabilityParams { merge, ..AvailabilityParams::default() },
        };
        let est = estimate(&table, &p).unwrap();
        let cap = p.capacity.max_capacity_bps() / 1e6;
        for s in &est.seconds {
            let l = &s.levels;
            for op in &l.operator_sp_mbps {
                prop_assert!(*op <= l.best_single_path_mbps);
            }
            prop_assert!(l.best_single_path_mbps <= l.multipath_mbps);
            prop_assert!(l.best_single_path_mbps <= cap);
            prop_assert!(l.multipath_mbps <= cap * s.available as f64 + 1e-9);
            prop_assert!(s.available <= s.visible);
            prop_assert!(s.available <= est.channels.len());
            // At most one row (one usable cell) per (second, carrier), and as many as available.
            let mut chans: Vec<usize> = est.rows.iter().filter(|r| r.time_s == s.time_s).map(|r| r.channel).collect();
            prop_assert_eq!(chans.len(), s.available);
            chans.dedup();
            prop_assert_eq!(chans.len(), s.available);
        }
        let st = est.stats();
        for (_, op) in &st.operators {
            prop_assert!(op.mean <= st.best_single_path.mean + 1e-9);
        }
        prop_assert!(st.best_single_path.mean <= st.multipath.mean + 1e-9);
        // The channel table agrees with the rows.
        let ch = est.channel_table();
        prop_assert_eq!(ch.len(), est.seconds.len());
        for r in &est.rows {
            prop_assert_eq!(ch.capacity(r.channel, (r.time_s - ch.start_s()) as usize), r.capacity_mbps);
        }
    }
}
