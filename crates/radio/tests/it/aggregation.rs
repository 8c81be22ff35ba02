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
    assert_sig(est.rows[0].sinr_db.unwrap(), 25.24, 4, "y alone");
}

#[test]
fn several_samples_of_a_cell_in_a_second_are_merged() {
    let rows = vec![CellSample::new(0, "A", 1, "x", -90.0), CellSample::new(0, "A", 1, "x", -100.0)];
    let table = DriveTable::new(rows).unwrap();
    let rsrp = |merge| {
        let p = EstimationParams { availability: AvailabilityParams { merge, ..Default::default() }, ..Default::default() };
        let est = estimate(&table, &p).unwrap();
        assert_eq!(est.seconds[0].visible, 1, "one cell, however many samples");
        est.rows[0].rsrp_dbm.unwrap()
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

#[test]
fn the_estimation_uses_each_carriers_bandwidth() {
    // One cell on a 20 MHz carrier, one on a 10 MHz carrier: same SINRs, capacities ×2 and ×1.
    let rows = vec![CellSample::new(0, "A", 1300, "x", -90.0), CellSample::new(0, "A", 6200, "y", -95.0)];
    let table = DriveTable::new(rows).unwrap();
    let study = estimate(&table, &EstimationParams::default()).unwrap();
    let mut p = EstimationParams::default();
    p.capacity.carrier_bandwidth_mhz.insert(1300, 20.0);
    let wide = estimate(&table, &p).unwrap();
    assert_eq!(wide.channels[0].earfcn, 1300);
    assert_eq!(wide.rows[0].sinr_db, study.rows[0].sinr_db);
    assert_eq!(wide.rows[0].capacity_mbps, 2.0 * study.rows[0].capacity_mbps);
    assert_eq!(wide.rows[1].capacity_mbps, study.rows[1].capacity_mbps);
    assert_eq!(wide.seconds[0].levels.multipath_mbps, 2.0 * study.rows[0].capacity_mbps + study.rows[1].capacity_mbps);
    p.capacity.carrier_bandwidth_mhz.insert(6200, 25.0);
    let e = estimate(&table, &p).unwrap_err().to_string();
    assert!(e.starts_with("capacity.carrier_bandwidth_mhz.6200 = 25: must be an LTE channel bandwidth"), "{e}");
}

#[test]
fn the_generators_carriers_give_their_bandwidths() {
    let mut c = DriveConfig::preset("residential").unwrap();
    let all_ten = c.carrier_bandwidths_mhz().unwrap();
    assert_eq!(all_ten.into_iter().collect::<Vec<_>>(), vec![(1300, 10.0), (1500, 10.0), (6200, 10.0), (6300, 10.0)]);
    c.operators[0].carriers[1].bandwidth_mhz = 20.0;
    let p = CapacityParams { carrier_bandwidth_mhz: c.carrier_bandwidths_mhz().unwrap(), ..CapacityParams::default() };
    assert_eq!(p.bandwidth_hz_of(1300), 20e6);
    assert_eq!(p.bandwidth_hz_of(6200), 10e6);
    c.operators[1].carriers[1].earfcn = 1300; // B's 1800 MHz carrier on A's EARFCN, at 10 MHz
    assert!(c.carrier_bandwidths_mhz().unwrap_err().to_string().contains("EARFCN 1300 has 10 MHz here and 20 MHz"));
}

fn carrier(op: &str, earfcn: u32) -> Carrier {
    Carrier { operator: op.into(), earfcn }
}

#[test]
fn capacities_give_the_levels_directly() {
    // Channels given out of carrier order: V (two carriers) and S.
    let table = ChannelTable::new(
        5,
        vec![
            ChannelSeries::new("v2", vec![3.0, 0.0, 10.0, 0.0]),
            ChannelSeries::new("s", vec![20.0, 1.0, 0.0, 0.0]),
            ChannelSeries::new("v1", vec![5.0, 2.0, 0.5, 0.0]),
        ],
    )
    .unwrap();
    let carriers = [carrier("V", 2), carrier("S", 0), carrier("V", 1)];
    let est = aggregate_channels(&table, &carriers, 0.0).unwrap();
    assert_eq!(est.operators, vec!["S".to_string(), "V".to_string()]);
    assert_eq!(est.channels, vec![carrier("S", 0), carrier("V", 1), carrier("V", 2)]);
    let got: Vec<(u32, usize, usize, Vec<f64>, f64, f64)> = est
        .seconds
        .iter()
        .map(|s| (s.time_s, s.visible, s.available, s.levels.operator_sp_mbps.clone(), s.levels.best_single_path_mbps, s.levels.multipath_mbps))
        .collect();
    assert_eq!(
        got,
        vec![
            (5, 3, 3, vec![20.0, 5.0], 20.0, 28.0),
            (6, 2, 2, vec![1.0, 2.0], 2.0, 3.0),
            (7, 2, 2, vec![0.0, 10.0], 10.0, 10.5),
            (8, 0, 0, vec![0.0, 0.0], 0.0, 0.0),
        ]
    );
    // Rows in time then channel order, indices into the sorted channels, labelled by carrier.
    let rows: Vec<(u32, usize, &str, f64)> = est.rows.iter().map(|r| (r.time_s, r.channel, r.cell_id.as_str(), r.capacity_mbps)).collect();
    assert_eq!(rows[..3], [(5, 0, "S/0", 20.0), (5, 1, "V/1", 5.0), (5, 2, "V/2", 3.0)]);
    assert!(est.rows.iter().all(|r| r.rsrp_dbm.is_none() && r.sinr_db.is_none() && r.n_visible == 1));
    assert_eq!(est.channel_table().channels()[2].capacity_mbps, vec![3.0, 0.0, 10.0, 0.0]);
    let st = est.stats();
    assert_eq!(st.mean_available, 7.0 / 4.0);
    assert_eq!(st.available_share, vec![0.25, 0.0, 0.5, 0.25]);
    assert_eq!(st.multipath.mean, 41.5 / 4.0);
    assert_eq!(st.best_single_path.median, 6.0);

    // A threshold: channels below it are visible but not available and count 0.
    let est = aggregate_channels(&table, &carriers, 2.0).unwrap();
    let s: Vec<(usize, usize, f64, f64)> =
        est.seconds.iter().map(|s| (s.visible, s.available, s.levels.best_single_path_mbps, s.levels.multipath_mbps)).collect();
    assert_eq!(s, vec![(3, 3, 20.0, 28.0), (2, 1, 2.0, 2.0), (2, 1, 10.0, 10.0), (0, 0, 0.0, 0.0)]);
}

#[test]
fn capacity_tables_that_cannot_be_aggregated_are_refused() {
    let table = ChannelTable::from_capacities(0, vec![vec![1.0], vec![2.0]]).unwrap();
    let e = aggregate_channels(&table, &[carrier("A", 0), carrier("A", 0)], 0.0).unwrap_err().to_string();
    assert_eq!(e, "carriers: carrier A/0 is given to more than one channel; at most one channel per (operator, carrier)");
    let e = aggregate_channels(&table, &[carrier("A", 0)], 0.0).unwrap_err().to_string();
    assert!(e.starts_with("carriers: 1 values, expected 2"), "{e}");
    let e = aggregate_channels(&table, &[carrier("A", 0), carrier("B", 0)], -1.0).unwrap_err().to_string();
    assert!(e.starts_with("min_capacity_mbps = -1: must be in [0,"), "{e}");
    let late = ChannelTable::from_capacities(u32::MAX, vec![vec![1.0, 2.0]]).unwrap();
    assert!(aggregate_channels(&late, &[carrier("A", 0)], 0.0).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn capacity_levels_are_ordered_and_are_the_max_and_the_sum(
        caps in prop::collection::vec(prop::collection::vec(prop_oneof![Just(0.0), 0.0..200.0f64], 1..30), 1..6),
        ops in prop::collection::vec(0usize..3, 6),
        threshold in prop_oneof![Just(0.0), 0.0..50.0f64],
    ) {
        let len = caps[0].len();
        let caps: Vec<Vec<f64>> = caps.into_iter().map(|mut c| { c.resize(len, 0.0); c }).collect();
        let carriers: Vec<Carrier> = (0..caps.len()).map(|k| carrier(&format!("op{}", ops[k]), k as u32)).collect();
        let table = ChannelTable::from_capacities(10, caps.clone()).unwrap();
        let est = aggregate_channels(&table, &carriers, threshold).unwrap();
        for (i, s) in est.seconds.iter().enumerate() {
            let usable: Vec<f64> = caps.iter().map(|c| c[i]).filter(|&c| c > 0.0 && c >= threshold).collect();
            let l = &s.levels;
            for op in &l.operator_sp_mbps {
                prop_assert!(*op <= l.best_single_path_mbps);
            }
            prop_assert!(l.best_single_path_mbps <= l.multipath_mbps);
            prop_assert_eq!(l.best_single_path_mbps, usable.iter().copied().fold(0.0, f64::max));
            prop_assert!((l.multipath_mbps - usable.iter().sum::<f64>()).abs() <= 1e-9 * l.multipath_mbps.max(1.0));
            prop_assert_eq!(s.available, usable.len());
        }
    }
}
