//! Path-loss models and the link-budget pieces: published or hand-computed values, continuity
//! at the breakpoints, monotonicity, configuration from a file.

use multiconn_radio::budget::*;
use multiconn_radio::pathloss::*;

use crate::support::assert_sig;

#[test]
fn free_space_matches_friis() {
    // The textbook 2.4 GHz / 100 m example, and ns-3's reference loss at 5.15 GHz and 1 m.
    assert_sig(free_space_db(100.0, 2400.0), 80.05, 4, "2.4 GHz, 100 m");
    assert_sig(free_space_db(1.0, 5150.0), 46.68, 4, "5.15 GHz, 1 m");
    // 6 dB per doubling of distance or frequency.
    assert!((free_space_db(200.0, 2400.0) - free_space_db(100.0, 2400.0) - 6.0206).abs() < 1e-3);
    assert!((free_space_db(100.0, 4800.0) - free_space_db(100.0, 2400.0) - 6.0206).abs() < 1e-3);
}

#[test]
fn log_distance_gives_the_lte_cell_studys_losses() {
    // lte-cell reference §2: 97.6 dB at 50 m, 118.6 at 250 m, 136.7 at 1 km.
    let pl = PathLoss::LogDistance(LogDistance::ns3());
    for (d, db) in [(50.0, 97.6), (250.0, 118.6), (1000.0, 136.7)] {
        assert!((pl.loss_db(d, 2120.0) - db).abs() <= 0.05, "{d} m: {}", pl.loss_db(d, 2120.0));
    }
    // Frequency plays no part; at and below the reference distance the loss is L0.
    assert_eq!(pl.loss_db(250.0, 700.0), pl.loss_db(250.0, 3500.0));
    assert_eq!(pl.loss_db(0.5, 2120.0), 46.6777);
    assert_eq!(pl.loss_db(0.0, 2120.0), 46.6777);
}

#[test]
fn uma_follows_tr_38_901() {
    assert_sig(uma_nlos_db(1000.0, 2000.0, 25.0, 1.5), 136.8, 4, "UMa NLOS 2 GHz 1 km");
    assert_sig(uma_nlos_db(1000.0, 800.0, 25.0, 1.5), 128.8, 4, "UMa NLOS 800 MHz 1 km");
    assert_sig(uma_breakpoint_m(2000.0, 25.0, 1.5), 320.2, 4, "breakpoint at 2 GHz");
    assert_sig(uma_los_db(100.0, 2000.0, 25.0, 1.5), 78.28, 4, "UMa LOS 100 m");
    assert_sig(uma_los_db(1000.0, 2000.0, 25.0, 1.5), 108.9, 4, "UMa LOS 1 km (beyond the breakpoint)");
    // The two LOS slopes meet at the breakpoint.
    let bp = uma_breakpoint_m(1800.0, 25.0, 1.5);
    assert!((uma_los_db(bp, 1800.0, 25.0, 1.5) - uma_los_db(bp + 1e-6, 1800.0, 25.0, 1.5)).abs() < 1e-4);
    // NLOS never below LOS; 20 dB per decade of frequency.
    for d in [10.0, 50.0, 300.0, 2000.0, 5000.0] {
        assert!(uma_nlos_db(d, 1800.0, 25.0, 1.5) >= uma_los_db(d, 1800.0, 25.0, 1.5));
    }
    assert!((uma_nlos_db(700.0, 1800.0, 25.0, 1.5) - uma_nlos_db(700.0, 180.0, 25.0, 1.5) - 20.0).abs() < 1e-9);
    // Below 10 m the distance is held at 10 m.
    assert_eq!(uma_nlos_db(1.0, 1800.0, 25.0, 1.5), uma_nlos_db(10.0, 1800.0, 25.0, 1.5));
    assert_sig(uma_los_probability(18.0), 1.0, 4, "LOS probability at 18 m");
    assert_sig(uma_los_probability(100.0), 0.3477, 4, "LOS probability at 100 m");
}

#[test]
fn umi_street_canyon_follows_tr_38_901() {
    // Hand-computed from Table 7.4.1-1 at 3.5 GHz, h_BS 10 m, h_UT 1.5 m: d'_BP = 4·9·0.5·f/c.
    assert_sig(uma_breakpoint_m(3500.0, 10.0, 1.5), 210.1, 4, "UMi breakpoint at 3.5 GHz");
    assert_sig(umi_los_db(100.0, 3500.0, 10.0, 1.5), 85.31, 4, "UMi LOS 100 m (PL1)");
    assert_sig(umi_los_db(500.0, 3500.0, 10.0, 1.5), 107.1, 4, "UMi LOS 500 m (PL2, beyond the breakpoint)");
    assert_sig(umi_nlos_db(100.0, 3500.0, 10.0, 1.5), 104.6, 4, "UMi NLOS 100 m");
    assert_sig(umi_nlos_db(500.0, 3500.0, 10.0, 1.5), 129.3, 4, "UMi NLOS 500 m");
    assert_sig(umi_nlos_db(100.0, 2000.0, 10.0, 1.5), 99.47, 4, "UMi NLOS 2 GHz 100 m");
    // Continuous at the breakpoint; NLOS never below LOS; the 10 m floor.
    let bp = uma_breakpoint_m(2000.0, 10.0, 1.5);
    assert!((umi_los_db(bp, 2000.0, 10.0, 1.5) - umi_los_db(bp + 1e-6, 2000.0, 10.0, 1.5)).abs() < 1e-4);
    for d in [10.0, 50.0, 200.0, 800.0, 3000.0] {
        assert!(umi_nlos_db(d, 2000.0, 10.0, 1.5) >= umi_los_db(d, 2000.0, 10.0, 1.5));
    }
    assert_eq!(umi_nlos_db(3.0, 2000.0, 10.0, 1.5), umi_nlos_db(10.0, 2000.0, 10.0, 1.5));
    assert_sig(umi_los_probability(100.0), 0.2310, 4, "UMi LOS probability at 100 m");
    assert_eq!(umi_los_probability(10.0), 1.0);
    // Through the enum, with Table 7.5-6's shadowing.
    let nlos = PathLoss::Umi(Umi::default());
    assert_eq!(nlos.loss_db(100.0, 3500.0), umi_nlos_db(100.0, 3500.0, 10.0, 1.5));
    assert_eq!(nlos.shadowing(), Some(ShadowingDefaults { sigma_db: 7.82, decorrelation_m: 13.0 }));
    let los = PathLoss::Umi(Umi { sight: Sight::Los, ..Umi::default() });
    assert_eq!(los.shadowing(), Some(ShadowingDefaults { sigma_db: 4.0, decorrelation_m: 10.0 }));
    let parsed: PathLoss = toml::from_str("model = \"umi\"\nsight = \"los\"\nh_bs_m = 10.0").unwrap();
    assert_eq!(parsed, los);
    assert!(PathLoss::Umi(Umi { h_ut_m: 0.5, ..Umi::default() }).validate("cell.x.pathloss").unwrap_err().to_string().contains("cell.x.pathloss.h_ut_m"));
}

#[test]
fn rma_follows_tr_38_901() {
    let p = Rma::default();
    assert_sig(rma_breakpoint_m(800.0, 35.0, 1.5), 880.3, 4, "RMa breakpoint at 800 MHz");
    for (d, los, nlos) in [(500.0, 85.79, 106.0), (2000.0, 105.6, 129.2), (5000.0, 121.5, 144.6)] {
        assert_sig(rma_los_db(d, 800.0, &p), los, 4, &format!("RMa LOS {d} m"));
        assert_sig(rma_nlos_db(d, 800.0, &p), nlos, 4, &format!("RMa NLOS {d} m"));
    }
    let bp = rma_breakpoint_m(1800.0, 35.0, 1.5);
    // Continuous at the breakpoint up to the 2D/3D distance difference there.
    assert!((rma_los_db(bp - 1e-6, 1800.0, &p) - rma_los_db(bp + 1e-6, 1800.0, &p)).abs() < 0.02);
}

#[test]
fn hata_gives_the_textbook_values() {
    let medium = Hata::default();
    assert_sig(cost231_hata_db(1000.0, 900.0, &medium), 126.4, 4, "Okumura–Hata 900 MHz 1 km");
    assert_sig(cost231_hata_db(5000.0, 900.0, &medium), 151.0, 4, "Okumura–Hata 900 MHz 5 km");
    assert_sig(cost231_hata_db(1000.0, 1800.0, &medium), 136.2, 4, "COST-231 1800 MHz 1 km");
    let metro = Hata { metropolitan: true, ..Hata::default() };
    assert_sig(cost231_hata_db(1000.0, 1800.0, &metro), 139.2, 4, "COST-231 metropolitan");
}

#[test]
fn every_model_loses_more_with_distance() {
    let models = [
        PathLoss::FreeSpace {},
        PathLoss::LogDistance(LogDistance::ns3()),
        PathLoss::Uma(Uma::default()),
        PathLoss::Uma(Uma { sight: Sight::Los, ..Uma::default() }),
        PathLoss::Rma(Rma::default()),
        PathLoss::Rma(Rma { sight: Sight::Los, ..Rma::default() }),
        PathLoss::Cost231Hata(Hata::default()),
    ];
    for m in models {
        m.validate("path_loss").unwrap();
        let mut last = f64::NEG_INFINITY;
        for i in 1..400 {
            let d = 10.0 + i as f64 * 25.0;
            let l = m.loss_db(d, 1800.0);
            assert!(l.is_finite() && l >= last, "{m:?} at {d} m");
            last = l;
        }
    }
}

#[test]
fn shadowing_defaults_follow_table_7_5_6() {
    let s = PathLoss::Uma(Uma::default()).shadowing().unwrap();
    assert_eq!((s.sigma_db, s.decorrelation_m), (6.0, 50.0));
    let s = PathLoss::Uma(Uma { sight: Sight::Los, ..Uma::default() }).shadowing().unwrap();
    assert_eq!((s.sigma_db, s.decorrelation_m), (4.0, 37.0));
    let s = PathLoss::Rma(Rma::default()).shadowing().unwrap();
    assert_eq!((s.sigma_db, s.decorrelation_m), (8.0, 120.0));
    assert_eq!(PathLoss::FreeSpace {}.shadowing(), None);
}

#[test]
fn a_model_reads_from_a_file_and_is_validated() {
    let m: PathLoss = toml::from_str("model = \"uma\"\nsight = \"los\"\nh_bs_m = 30.0").unwrap();
    assert_eq!(m, PathLoss::Uma(Uma { h_bs_m: 30.0, h_ut_m: 1.5, sight: Sight::Los }));
    let m: PathLoss = toml::from_str("model = \"log_distance\"\nexponent = 3.5").unwrap();
    assert_eq!(m, PathLoss::LogDistance(LogDistance { exponent: 3.5, ..LogDistance::ns3() }));
    assert_eq!(toml::from_str::<PathLoss>("model = \"free_space\"").unwrap(), PathLoss::FreeSpace {});
    assert!(toml::from_str::<PathLoss>("model = \"free_space\"\nexponent = 2").is_err());
    assert!(toml::from_str::<PathLoss>("model = \"uma\"\nheight = 25").is_err());
    assert!(toml::from_str::<PathLoss>("model = \"hata\"").is_err());
    let bad = PathLoss::Uma(Uma { h_ut_m: 0.5, ..Uma::default() });
    assert_eq!(bad.validate("drive.path_loss").unwrap_err().to_string(), "drive.path_loss.h_ut_m = 0.5: must be in [1.5, 22.5] m");
    assert_eq!(PathLoss::default(), PathLoss::Uma(Uma::default()));
}

#[test]
fn reference_signal_power_and_resource_blocks() {
    assert_eq!(resource_blocks(10.0, "bw").unwrap(), 50);
    assert_eq!(resource_blocks(1.4, "bw").unwrap(), 6);
    assert_eq!(resource_blocks(20.0, "bw").unwrap(), 100);
    assert!(resource_blocks(12.0, "drive.bandwidth_mhz").unwrap_err().to_string().starts_with("drive.bandwidth_mhz = 12"));
    // 46 dBm over 50 RB: 18.2 dBm; over 100 RB: 15.2 dBm.
    assert_sig(rs_epre_dbm(46.0, 50), 18.22, 4, "10 MHz");
    assert_sig(rs_epre_dbm(46.0, 100), 15.21, 4, "20 MHz");
}

#[test]
fn the_sector_pattern_of_tr_36_814() {
    let a = SectorAntenna::default();
    assert_eq!(a.pattern_db(0.0), 0.0);
    assert!((a.pattern_db(35.0) + 3.0).abs() < 1e-12, "half the beamwidth is 3 dB down");
    assert!((a.pattern_db(-35.0) + 3.0).abs() < 1e-12);
    assert_eq!(a.pattern_db(180.0), -25.0);
    assert_eq!(a.pattern_db(110.0), -25.0, "capped at the front-to-back ratio");
    assert!((a.pattern_db(100.0) + 24.49).abs() < 0.01, "just under the cap");
    assert!((a.pattern_db(395.0) + 3.0).abs() < 1e-9, "angles wrap");
    assert_eq!(a.gain_towards_db(0.0), 14.0);
    assert_eq!(wrap_deg(190.0), -170.0);
    assert!(SectorAntenna { beamwidth_deg: 0.0, ..a }.validate("antenna").is_err());
}

#[test]
fn rma_los_probability_and_every_3gpp_models_los_state() {
    use multiconn_radio::pathloss::{rma_los_probability, PathLoss, Rma, Sight, Uma};
    // TR 38.901 Table 7.4.2-1 (the reference's vectors at 18, 50, 100, 200, 500 m).
    for (d, p) in [(18.0, 0.992), (50.0, 0.9608), (100.0, 0.9139), (200.0, 0.8270), (500.0, 0.6126)] {
        assert_sig(rma_los_probability(d), p, 4, &format!("RMa LOS probability at {d} m"));
    }
    assert_eq!(rma_los_probability(10.0), 1.0);
    let uma = PathLoss::Uma(Uma::default());
    assert_eq!(uma.los_probability(100.0), Some(uma_los_probability(100.0)));
    assert_eq!(PathLoss::FreeSpace {}.los_probability(100.0), None);
    assert_eq!((uma.los_correlation_m(), PathLoss::Rma(Rma::default()).los_correlation_m()), (Some(50.0), Some(60.0)));
    // The LOS state picks the model's LOS or NLOS formula.
    let (los, nlos) = (uma.with_sight(Sight::Los), uma.with_sight(Sight::Nlos));
    assert_eq!(los.loss_db(200.0, 3500.0), uma_los_db(200.0, 3500.0, 25.0, 1.5));
    assert!(nlos.loss_db(200.0, 3500.0) > los.loss_db(200.0, 3500.0) + 20.0);
}
