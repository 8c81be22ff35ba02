//! SINR and the truncated Shannon capacity: the test vectors of the multi-operator reference
//! §1.3 (V1–V10 and the sensitivity table) to 4 significant digits, the cap, the parameters'
//! defaults, overrides and validation.

use multiconn_radio::units::ratio_to_db;
use multiconn_radio::{CapacityParams, Interference, RadioError};

use crate::support::assert_sig;

/// (id, serving dBm, interferers dBm, I+N mW, SINR linear, SINR dB, log branch Mbit/s, capacity Mbit/s)
type Vector = (&'static str, f64, &'static [f64], f64, f64, f64, f64, f64);

const VECTORS: [Vector; 10] = [
    ("V1", -80.0, &[], 2.992e-13, 3.342e4, 45.24, 132.1, 55.55),
    ("V2", -80.0, &[-90.0, -95.0], 1.319e-10, 75.80, 18.80, 49.51, 49.51),
    ("V3", -100.0, &[-105.0], 3.462e-12, 28.89, 14.61, 36.93, 36.93),
    ("V4", -115.0, &[], 2.992e-13, 10.57, 10.24, 24.71, 24.71),
    ("V5", -125.0, &[], 2.992e-13, 1.057, 0.2400, 5.643, 5.643),
    ("V6", -105.0, &[], 2.992e-13, 105.7, 20.24, 53.94, 53.94),
    ("V7", -100.0, &[-100.0], 1.030e-11, 9.709, 9.872, 23.75, 23.75),
    ("V8", -110.0, &[-100.0], 1.030e-11, 0.9709, -0.1280, 5.262, 5.262),
    ("V9", -90.0, &[-92.0, -94.0, -96.0, -98.0, -100.0], 1.542e-10, 6.486, 8.120, 19.39, 19.39),
    ("V10", -140.0, &[], 2.992e-13, 0.03342, -14.76, 0.2193, 0.2193),
];

/// (id, SINR dB with NF ignored, capacity NF ignored, SINR dB at QL = 100 %, capacity QL = 100 %)
const SENSITIVITY: [(&str, f64, f64, f64, f64); 10] = [
    ("V1", 52.24, 55.55, 45.24, 55.55),
    ("V2", 18.80, 49.53, 8.806, 21.05),
    ("V3", 14.92, 37.85, 4.959, 12.60),
    ("V4", 17.24, 44.78, 10.24, 24.71),
    ("V5", 7.240, 17.35, 0.2400, 5.643),
    ("V6", 27.24, 55.55, 20.24, 53.94),
    ("V7", 9.974, 24.02, -0.01298, 5.379),
    ("V8", -0.02585, 5.366, -10.01, 0.6440),
    ("V9", 8.127, 19.41, -1.873, 3.736),
    ("V10", -7.760, 1.065, -14.76, 0.2193),
];

fn mw(dbm: f64) -> f64 {
    10f64.powf(dbm / 10.0)
}

#[test]
fn the_ten_vectors_to_four_significant_digits() {
    let p = CapacityParams::default();
    for (id, serving, interferers, i_plus_n, sinr_lin, sinr_db, log_branch, capacity) in VECTORS {
        let interference: f64 = interferers.iter().map(|&r| mw(r)).sum();
        assert_sig(p.load * interference + p.noise_mw(), i_plus_n, 4, &format!("{id} I+N"));
        let s = p.sinr_dbm(serving, interferers);
        assert_sig(s, sinr_lin, 4, &format!("{id} SINR"));
        assert_sig(ratio_to_db(s), sinr_db, 4, &format!("{id} SINR dB"));
        let uncapped = p.bandwidth_hz * p.bandwidth_efficiency * (1.0 + p.sinr_efficiency * s).log2() / 1e6;
        assert_sig(uncapped, log_branch, 4, &format!("{id} log branch"));
        assert_sig(p.capacity_mbps(s), capacity, 4, &format!("{id} capacity"));
    }
}

#[test]
fn the_sensitivity_vectors_noise_figure_ignored_and_full_load() {
    let no_nf = CapacityParams { ue_noise_figure_db: 0.0, ..CapacityParams::default() };
    let full = CapacityParams { load: 1.0, ..CapacityParams::default() };
    for ((id, serving, interferers, ..), (id2, db_no_nf, cap_no_nf, db_full, cap_full)) in VECTORS.iter().zip(SENSITIVITY) {
        assert_eq!(*id, id2);
        let s = no_nf.sinr_dbm(*serving, interferers);
        assert_sig(ratio_to_db(s), db_no_nf, 4, &format!("{id} SINR dB, NF ignored"));
        assert_sig(no_nf.capacity_mbps(s), cap_no_nf, 4, &format!("{id} capacity, NF ignored"));
        let s = full.sinr_dbm(*serving, interferers);
        assert_sig(ratio_to_db(s), db_full, 4, &format!("{id} SINR dB, QL 100 %"));
        assert_sig(full.capacity_mbps(s), cap_full, 4, &format!("{id} capacity, QL 100 %"));
    }
}

#[test]
fn the_quick_reference_curve() {
    let p = CapacityParams::default();
    for (db, mbps) in [(-10.0, 0.6459), (-5.0, 1.946), (0.0, 5.392), (5.0, 12.68), (10.0, 24.08), (15.0, 38.09), (20.0, 53.20)] {
        assert_sig(p.capacity_mbps(10f64.powf(db / 10.0)), mbps, 4, &format!("{db} dB"));
    }
}

#[test]
fn the_cap_is_f_times_c15_from_20_76_db_on() {
    let p = CapacityParams::default();
    assert_sig(p.max_capacity_bps() / 1e6, 55.547, 5, "cap");
    assert_sig(p.sinr_at_cap(), 119.2, 4, "SINR at the cap");
    assert_sig(ratio_to_db(p.sinr_at_cap()), 20.76, 4, "SINR at the cap, dB");
    let cap = p.max_capacity_bps();
    assert_eq!(p.capacity_bps(p.sinr_at_cap() * 1.0001), cap);
    assert!(p.capacity_bps(p.sinr_at_cap() * 0.999) < cap);
    for db in [20.77, 25.0, 45.24, 80.0, 300.0] {
        assert_eq!(p.capacity_bps(10f64.powf(db / 10.0)), cap, "{db} dB");
    }
    assert_eq!(p.capacity_bps(f64::INFINITY), cap);
    // The cap follows the bandwidth; the SINR at the cap does not.
    let wide = CapacityParams { bandwidth_hz: 20e6, ..CapacityParams::default() };
    assert_sig(wide.capacity_bps(1e9) / 1e6, 111.09, 5, "20 MHz cap");
    assert_eq!(wide.sinr_at_cap(), p.sinr_at_cap());
}

#[test]
fn capacity_is_zero_below_the_minimum_sinr_when_there_is_one() {
    let p = CapacityParams::default();
    let s = 10f64.powf(-14.76 / 10.0);
    assert!(p.capacity_bps(s) > 0.0, "no floor by default (the study)");
    let floored = CapacityParams { min_sinr_db: Some(-10.0), ..CapacityParams::default() };
    assert_eq!(floored.capacity_bps(s), 0.0);
    assert_eq!(floored.capacity_bps(10f64.powf(-10.01 / 10.0)), 0.0);
    assert_eq!(floored.capacity_bps(10f64.powf(-9.99 / 10.0)), p.capacity_bps(10f64.powf(-9.99 / 10.0)));
}

#[test]
fn capacity_grows_with_sinr_and_never_exceeds_the_cap() {
    let p = CapacityParams::default();
    let mut last = 0.0;
    for i in 0..=2000 {
        let db = -40.0 + i as f64 * 0.05;
        let c = p.capacity_bps(10f64.powf(db / 10.0));
        assert!(c >= last && c <= p.max_capacity_bps(), "{db} dB");
        last = c;
    }
}

#[test]
fn a_sinr_that_is_not_a_number_gives_no_capacity() {
    let p = CapacityParams::default();
    assert_eq!(p.capacity_bps(f64::NAN), 0.0);
    assert_eq!(p.capacity_bps(-1.0), 0.0);
    assert_eq!(p.capacity_bps(0.0), 0.0);
}

#[test]
fn defaults_are_the_studys_table_1() {
    let p = CapacityParams::default();
    assert_eq!(p.load, 0.10);
    assert_eq!(p.thermal_noise_dbm, -132.24);
    assert_eq!(p.ue_noise_figure_db, 7.0);
    assert_eq!(p.bandwidth_hz, 10e6);
    assert_eq!(p.sinr_efficiency, 0.4852);
    assert_eq!(p.max_spectral_efficiency, 5.5547);
    assert_eq!(p.bandwidth_efficiency, 0.9449);
    assert_eq!(p.min_sinr_db, None);
    assert_eq!(p.interference, Interference::AllVisible);
    assert_sig(p.noise_mw(), 2.992e-13, 4, "N");
    assert!(p.validate().is_ok());
}

#[test]
fn any_field_can_be_overridden_from_a_file_and_unknown_keys_are_refused() {
    let p: CapacityParams = toml::from_str("load = 1.0\ninterference = \"same_carrier\"\nmin_sinr_db = -10.0").unwrap();
    assert_eq!(p.load, 1.0);
    assert_eq!(p.interference, Interference::SameCarrier);
    assert_eq!(p.min_sinr_db, Some(-10.0));
    assert_eq!(p.bandwidth_efficiency, 0.9449, "untouched fields keep their default");
    let all = "load = 0.5\nthermal_noise_dbm = -130.0\nue_noise_figure_db = 9.0\nbandwidth_hz = 20e6\n\
               bandwidth_efficiency = 0.75\nsinr_efficiency = 0.6\nmax_spectral_efficiency = 4.4\n\
               min_sinr_db = -10.0\ninterference = \"all_visible\"";
    let q: CapacityParams = toml::from_str(all).unwrap();
    assert_eq!((q.thermal_noise_dbm, q.ue_noise_figure_db, q.bandwidth_hz), (-130.0, 9.0, 20e6));
    assert_eq!((q.bandwidth_efficiency, q.sinr_efficiency, q.max_spectral_efficiency), (0.75, 0.6, 4.4));
    let err = toml::from_str::<CapacityParams>("noise_figure = 7.0").unwrap_err().to_string();
    assert!(err.contains("unknown field") && err.contains("noise_figure"), "{err}");
    let err = toml::from_str::<CapacityParams>("interference = \"everything\"").unwrap_err().to_string();
    assert!(err.contains("all_visible") && err.contains("same_carrier"), "{err}");
}

#[test]
fn validation_names_the_field_and_its_range() {
    let cases: [(CapacityParams, &str); 6] = [
        (CapacityParams { load: 1.5, ..Default::default() }, "capacity.load = 1.5: must be in [0, 1]"),
        (CapacityParams { load: f64::NAN, ..Default::default() }, "capacity.load = NaN"),
        (CapacityParams { ue_noise_figure_db: -1.0, ..Default::default() }, "capacity.ue_noise_figure_db = -1"),
        (CapacityParams { bandwidth_hz: 0.0, ..Default::default() }, "capacity.bandwidth_hz = 0: must be in (0"),
        (CapacityParams { bandwidth_efficiency: 1.2, ..Default::default() }, "capacity.bandwidth_efficiency = 1.2"),
        (CapacityParams { min_sinr_db: Some(f64::INFINITY), ..Default::default() }, "capacity.min_sinr_db = inf"),
    ];
    for (p, expected) in cases {
        let err = p.validate().unwrap_err();
        assert!(matches!(err, RadioError::OutOfRange { .. }));
        assert!(err.to_string().starts_with(expected), "{err} vs {expected}");
    }
}

#[test]
fn a_20_mhz_carrier_has_twice_the_capacity_and_the_cap_of_a_10_mhz_one() {
    let p = CapacityParams { carrier_bandwidth_mhz: [(1300, 20.0), (6200, 5.0)].into_iter().collect(), ..CapacityParams::default() };
    p.validate().unwrap();
    let study = CapacityParams::default();
    // The noise is per resource element, so the SINR of a cell does not depend on the bandwidth.
    assert_eq!(p.noise_mw(), study.noise_mw());
    for db in [-10.0, 0.0, 10.0, 20.0, 20.76, 30.0] {
        let s = 10f64.powf(db / 10.0);
        let ten = p.capacity_mbps_on(6300, s); // no entry: `bandwidth_hz`
        assert_eq!(ten, study.capacity_mbps(s), "{db} dB");
        assert_eq!(p.capacity_mbps_on(1300, s), 2.0 * ten, "{db} dB");
        assert_eq!(p.capacity_mbps_on(6200, s), 0.5 * ten, "{db} dB");
    }
    assert_eq!(p.max_capacity_bps_on(1300), 2.0 * study.max_capacity_bps());
    assert_sig(p.capacity_mbps_on(1300, 1e9), 111.09, 5, "20 MHz cap");
    assert_eq!(p.max_capacity_bps_on(6300), study.max_capacity_bps());
}

#[test]
fn a_carrier_bandwidth_that_lte_does_not_have_is_refused() {
    for bad in [12.0, 0.0, -10.0, 1.5, f64::NAN] {
        let p = CapacityParams { carrier_bandwidth_mhz: [(1300, 20.0), (1500, bad)].into_iter().collect(), ..CapacityParams::default() };
        let e = p.validate().unwrap_err().to_string();
        assert!(e.starts_with(&format!("capacity.carrier_bandwidth_mhz.1500 = {bad}: must be an LTE channel bandwidth: 1.4, 3, 5, 10, 15 or 20 MHz")), "{e}");
    }
    for ok in [1.4, 3.0, 5.0, 10.0, 15.0, 20.0] {
        CapacityParams { carrier_bandwidth_mhz: [(1, ok)].into_iter().collect(), ..CapacityParams::default() }.validate().unwrap();
    }
    // From a file: keys are EARFCNs.
    let p: CapacityParams = toml::from_str("[carrier_bandwidth_mhz]\n1300 = 20.0\n100 = 1.4").unwrap();
    assert_eq!(p.bandwidth_hz_of(1300), 20e6);
    assert_eq!(p.bandwidth_hz_of(100), 1.4e6);
    assert_eq!(p.bandwidth_hz_of(6300), 10e6);
    assert!(toml::from_str::<CapacityParams>("[carrier_bandwidth_mhz]\nband3 = 20.0").is_err());
}
