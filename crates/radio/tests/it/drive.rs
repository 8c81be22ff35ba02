//! The synthetic drive generator (reference §5.3): determinism, stream separation, the visibility
//! rule, stops, site sharing, the presets' available cells against the study's Table 2, the
//! calibration configuration against the reference's prototype numbers (§7.2), validation.

use multiconn_radio::drive::*;
use multiconn_radio::*;

fn short(preset: &str, duration_s: u32) -> DriveConfig {
    DriveConfig { duration_s, ..DriveConfig::preset(preset).unwrap() }
}

#[test]
fn the_same_seed_gives_a_byte_identical_table() {
    let c = short("road", 600);
    let a = generate(&c, 42).unwrap().to_csv_string();
    let b = generate(&c, 42).unwrap().to_csv_string();
    assert_eq!(a, b);
    assert_ne!(a, generate(&c, 43).unwrap().to_csv_string());
    // And the file reads back to the same table.
    assert_eq!(DriveTable::read_csv(a.as_bytes()).unwrap(), generate(&c, 42).unwrap());
}

#[test]
fn adding_a_carrier_changes_no_other_cell() {
    let mut one = short("residential", 300);
    one.operators[0].carriers.truncate(1);
    let two = short("residential", 300);
    let (t1, t2) = (generate(&one, 7).unwrap(), generate(&two, 7).unwrap());
    let keep =
        |t: &DriveTable| -> Vec<CellSample> { t.rows().iter().filter(|r| !(r.operator == "A" && r.earfcn == 1300)).cloned().collect() };
    assert_eq!(keep(&t1), keep(&t2));
    assert!(t2.rows().iter().any(|r| r.earfcn == 1300));
    assert!(!t1.rows().iter().any(|r| r.earfcn == 1300));
}

#[test]
fn rows_follow_the_route_and_the_visibility_rule() {
    let c = short("residential", 400);
    let t = generate(&c, 3).unwrap();
    let v = c.speed_kmh / 3.6;
    let heading = c.heading_deg.to_radians();
    for r in t.rows() {
        let s = v * r.time_s as f64;
        assert!((r.x_m.unwrap() - s * heading.cos()).abs() < 1e-6 && (r.y_m.unwrap() - s * heading.sin()).abs() < 1e-6);
        assert_eq!(r.speed_mps, Some(v));
        assert!(r.rsrp_dbm >= c.visibility.min_rsrp_dbm);
    }
    for (_, rows) in t.seconds() {
        for carrier in [("A", 6200), ("A", 1300), ("B", 6300), ("B", 1500)] {
            let rsrp: Vec<f64> = rows.iter().filter(|r| (r.operator.as_str(), r.earfcn) == carrier).map(|r| r.rsrp_dbm).collect();
            assert!(rsrp.len() <= c.visibility.max_per_carrier);
            if let Some(&best) = rsrp.first() {
                assert!(rsrp.iter().all(|&x| x <= best && x >= best - c.visibility.rel_db), "{carrier:?}: {rsrp:?}");
            }
        }
    }
    assert_eq!(t.first_s(), 0);
    assert_eq!(t.last_s(), 399);
}

#[test]
fn a_bus_that_stops_stays_put() {
    let c = DriveConfig { stop_and_go: Some(StopAndGo::default()), ..short("residential", 600) };
    let t = generate(&c, 5).unwrap();
    let mut stopped = 0;
    let mut last: Option<(f64, f64)> = None; // previous second's position and speed
    for (_, rows) in t.seconds() {
        let (x, speed) = (rows[0].x_m.unwrap(), rows[0].speed_mps.unwrap());
        if speed == 0.0 {
            stopped += 1;
        }
        if let Some((lx, lspeed)) = last {
            // Each second moves by the previous second's speed (a stop does not move).
            let step = (x - lx) / c.heading_deg.to_radians().cos();
            assert!((step - lspeed).abs() < 1e-6, "moved {step} m at {lspeed} m/s");
        }
        last = Some((x, speed));
    }
    // 600 s at 30 km/h with a 10–30 s stop every 300 m: roughly a third of the time stopped.
    assert!((100..=350).contains(&stopped), "{stopped} s stopped");
    assert!(t.rows().iter().all(|r| r.speed_mps == Some(0.0) || r.speed_mps == Some(c.speed_kmh / 3.6)));
}

/// Per-second Pearson correlation of the two operators' strongest RSRP.
fn operator_correlation(t: &DriveTable) -> f64 {
    let mut pairs = Vec::new();
    for (_, rows) in t.seconds() {
        let best = |op: &str| rows.iter().filter(|r| r.operator == op).map(|r| r.rsrp_dbm).reduce(f64::max);
        if let (Some(a), Some(b)) = (best("A"), best("B")) {
            pairs.push((a, b));
        }
    }
    let n = pairs.len() as f64;
    let (ma, mb) = (pairs.iter().map(|p| p.0).sum::<f64>() / n, pairs.iter().map(|p| p.1).sum::<f64>() / n);
    let cov: f64 = pairs.iter().map(|p| (p.0 - ma) * (p.1 - mb)).sum();
    let va: f64 = pairs.iter().map(|p| (p.0 - ma).powi(2)).sum();
    let vb: f64 = pairs.iter().map(|p| (p.1 - mb).powi(2)).sum();
    cov / (va * vb).sqrt()
}

#[test]
fn shared_sites_correlate_the_operators_coverage() {
    let mut c = short("residential", 1800);
    c.operators[1].carriers.truncate(1);
    c.operators[0].carriers.truncate(1);
    c.shadowing.inter_site_correlation = 0.0;
    let apart = DriveConfig { site_sharing: 0.0, ..c.clone() };
    let shared = DriveConfig { site_sharing: 1.0, ..c.clone() };
    let (r_apart, r_shared) = (operator_correlation(&generate(&apart, 11).unwrap()), operator_correlation(&generate(&shared, 11).unwrap()));
    assert!(r_shared > r_apart + 0.2, "shared {r_shared:.2} vs apart {r_apart:.2}");
    assert!(r_shared > 0.7, "{r_shared:.2}");
    // With their own shadowing, co-located sites are less alike.
    let own = DriveConfig { shared_sites_share_shadowing: false, ..shared };
    assert!(operator_correlation(&generate(&own, 11).unwrap()) < r_shared);
}

#[test]
fn presets_give_the_studys_average_number_of_available_cells() {
    // Table 2: residential segment 3.99, road segment 3.19; within ±10 %.
    for (preset, study, seeds) in [("residential", 3.99, &[1u64][..]), ("road", 3.19, &[1, 2][..])] {
        let c = short(preset, 3600);
        let mean: f64 = seeds
            .iter()
            .map(|&s| estimate(&generate(&c, s).unwrap(), &EstimationParams::default()).unwrap().stats().mean_available)
            .sum::<f64>()
            / seeds.len() as f64;
        assert!((mean / study - 1.0).abs() <= 0.10, "{preset}: {mean:.3} available cells vs {study}");
    }
    // The road segment's shape: four cells in under a quarter of the seconds, two or three in
    // over three quarters.
    let st = estimate(&generate(&short("road", 3600), 2).unwrap(), &EstimationParams::default()).unwrap().stats();
    assert!(st.available_share[4] < 0.25, "{:?}", st.available_share);
    assert!(st.available_share[2] + st.available_share[3] > 0.75, "{:?}", st.available_share);
}

#[test]
fn the_calibration_configuration_lands_near_the_reference_prototype() {
    // Reference §5.3 [proto], 3 seeds × 2400 s: OP1 21.23, OP2 21.39, best SP 34.70, MP 48.47
    // Mbit/s (means). §7.2: within ±10 % (the random streams differ).
    let c = DriveConfig::preset("calibration").unwrap();
    assert_eq!(c.duration_s, 2400);
    let mut sums = [0.0; 4];
    for seed in 1..=3 {
        let st = estimate(&generate(&c, seed).unwrap(), &EstimationParams::default()).unwrap().stats();
        for (s, v) in sums.iter_mut().zip([st.operators[0].1.mean, st.operators[1].1.mean, st.best_single_path.mean, st.multipath.mean]) {
            *s += v / 3.0;
        }
        assert!(st.best_single_path.p0_1 > 5.0 && st.operators[0].1.p0_1 < 0.1, "a tail like the study's");
    }
    for (name, got, proto) in
        [("OP1 SP", sums[0], 21.23), ("OP2 SP", sums[1], 21.39), ("best SP", sums[2], 34.70), ("multipath", sums[3], 48.47)]
    {
        assert!((got / proto - 1.0).abs() <= 0.10, "{name}: {got:.2} vs {proto}");
    }
}

#[test]
fn rural_has_the_800_mhz_layer_only() {
    let c = DriveConfig::preset("rural").unwrap();
    assert!(c.operators.iter().all(|o| o.carriers.len() == 1 && o.carriers[0].freq_mhz < 1000.0));
    let st = estimate(&generate(&short("rural", 900), 1).unwrap(), &EstimationParams::default()).unwrap().stats();
    assert!(st.mean_available <= 2.0 && st.mean_available > 1.8, "{}", st.mean_available);
}

#[test]
fn presets_and_configs_are_checked() {
    assert_eq!(
        DriveConfig::preset("city").unwrap_err().to_string(),
        "unknown drive preset \"city\"; known: residential, road, rural, calibration"
    );
    for name in PRESETS {
        DriveConfig::preset(name).unwrap().validate().unwrap();
    }
    assert_eq!(DriveConfig::default(), DriveConfig::preset("residential").unwrap());
    let mut c = DriveConfig::default();
    c.operators[1].carriers[0].site_fraction = 1.5;
    assert_eq!(generate(&c, 1).unwrap_err().to_string(), "drive.operators[1].carriers[0].site_fraction = 1.5: must be in [0, 1]");
    let mut c = DriveConfig::default();
    c.operators[0].carriers[1].bandwidth_mhz = 12.0;
    assert!(generate(&c, 1).unwrap_err().to_string().starts_with("drive.operators[0].carriers[1].bandwidth_mhz = 12"));
    let mut c = DriveConfig::default();
    c.operators[1].name = "A".into();
    assert!(generate(&c, 1).unwrap_err().to_string().contains("used by an earlier operator"));
    let c = DriveConfig { duration_s: 0, ..DriveConfig::default() };
    assert!(generate(&c, 1).unwrap_err().to_string().starts_with("drive.duration_s = 0"));
    let mut c = DriveConfig::default();
    c.shadowing.sigma_db = -1.0;
    assert!(generate(&c, 1).unwrap_err().to_string().starts_with("drive.shadowing.sigma_db = -1"));
    // Nothing visible at all is an error, not an empty table.
    let mut c = short("residential", 10);
    c.operators.iter_mut().for_each(|o| o.tx_power_dbm = -50.0);
    assert!(matches!(generate(&c, 1).unwrap_err(), RadioError::Empty { .. }));
}

#[test]
fn a_config_reads_from_a_file() {
    let text = r#"
        duration_s = 60
        speed_kmh = 50.0
        site_sharing = 0.0
        path_loss = { model = "rma" }
        stop_and_go = { every_m = 500.0 }
        [shadowing]
        sigma_db = 8.0
        [[operators]]
        name = "X"
        isd_m = 1000.0
        carriers = [{ earfcn = 6200, freq_mhz = 796.0 }]
    "#;
    let c: DriveConfig = toml::from_str(text).unwrap();
    assert_eq!((c.duration_s, c.operators.len(), c.operators[0].carriers[0].site_fraction), (60, 1, 1.0));
    assert_eq!(c.shadowing.decorrelation_m, 50.0);
    assert_eq!(c.stop_and_go.unwrap().max_stop_s, 30);
    let t = generate(&c, 1).unwrap();
    assert!(t.rows().iter().all(|r| r.operator == "X"));
    assert!(toml::from_str::<DriveConfig>("speed = 3.0").is_err());
    assert!(toml::from_str::<DriveConfig>("[[operators]]\nname = \"X\"\ncarriers = []\nisd = 5.0").is_err());
}

#[test]
fn a_route_too_long_for_its_sites_is_refused() {
    let c = DriveConfig { duration_s: 864_000, speed_kmh: 300.0, ..DriveConfig::default() };
    let err = generate(&c, 1).unwrap_err().to_string();
    assert!(err.starts_with("drive.operators[0].isd_m: a 72000 km route"), "{err}");
}
