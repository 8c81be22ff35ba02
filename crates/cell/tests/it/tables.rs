//! The 36.213 tables: entries checked against the specification, shapes and bad input.

use multiconn_cell::tables::{check_bandwidth_rb, CQI_TABLE, LENA_CQI_EFFICIENCY, MAX_ITBS, MAX_PRB};
use multiconn_cell::{cqi_entry, cqi_for_efficiency, mcs_entry, mcs_for_cqi, rbg_count, rbg_size, tbs_bits, tbs_for_mcs, Modulation};

#[test]
fn cqi_table_rows_match_the_specification() {
    let e = cqi_entry(1).unwrap();
    assert_eq!((e.modulation, e.code_rate_x1024, e.efficiency), (Modulation::Qpsk, 78, 0.1523));
    let e = cqi_entry(7).unwrap();
    assert_eq!((e.modulation, e.code_rate_x1024, e.efficiency), (Modulation::Qam16, 378, 1.4766));
    let e = cqi_entry(10).unwrap();
    assert_eq!((e.modulation, e.code_rate_x1024, e.efficiency), (Modulation::Qam64, 466, 2.7305));
    let e = cqi_entry(15).unwrap();
    assert_eq!((e.modulation, e.code_rate_x1024, e.efficiency), (Modulation::Qam64, 948, 5.5547));
    // Every efficiency is Q_m × rate / 1024 to the table's four decimals, and grows with CQI.
    for (i, e) in CQI_TABLE.iter().enumerate() {
        assert_eq!(e.cqi as usize, i + 1);
        let eff = e.modulation.order() as f64 * e.code_rate_x1024 as f64 / 1024.0;
        assert!((eff - e.efficiency).abs() < 0.6e-4, "CQI {}: {eff} vs {}", e.cqi, e.efficiency);
        if i > 0 {
            assert!(e.efficiency > CQI_TABLE[i - 1].efficiency);
        }
    }
    assert!(cqi_entry(0).is_err());
    assert!(cqi_entry(16).is_err());
}

#[test]
fn mcs_table_rows_match_the_specification() {
    let rows: Vec<(u8, u8)> = (0..=28).map(|m| mcs_entry(m).map(|e| (e.modulation.order(), e.itbs)).unwrap()).collect();
    assert_eq!(rows[0], (2, 0));
    assert_eq!(rows[9], (2, 9));
    assert_eq!(rows[10], (4, 9));
    assert_eq!(rows[16], (4, 15));
    assert_eq!(rows[17], (6, 15));
    assert_eq!(rows[28], (6, 26));
    for m in 1..29 {
        assert!(rows[m].1 >= rows[m - 1].1 && rows[m].0 >= rows[m - 1].0, "MCS {m}");
    }
    let err = mcs_entry(29).unwrap_err().to_string();
    assert!(err.contains("mcs = 29") && err.contains("[0, 28]"), "{err}");
}

#[test]
fn tbs_entries_match_the_specification() {
    // (I_TBS, N_PRB, bits) from 36.213 Table 7.1.7.2.1-1.
    let known = [
        (0, 1, 16),
        (26, 1, 712),
        (6, 1, 328),
        (0, 100, 2792),
        (9, 100, 15840),
        (15, 100, 30576),
        (26, 100, 75376),
        (26, 6, 4392),
        (26, 25, 18336),
        (26, 50, 36696),
        (26, 75, 55056),
        (26, 110, 75376),
        (0, 110, 3112),
        (19, 110, 46888),
        (11, 110, 22152),
    ];
    for (itbs, nprb, bits) in known {
        assert_eq!(tbs_bits(itbs, nprb).unwrap(), bits, "I_TBS {itbs}, N_PRB {nprb}");
    }
    // The top MCS over a 20 MHz carrier is the LTE single-layer peak, 75 376 bits per TTI.
    assert_eq!(tbs_for_mcs(28, 100).unwrap(), 75376);
    assert_eq!(tbs_for_mcs(10, 100).unwrap(), tbs_for_mcs(9, 100).unwrap());
}

#[test]
fn tbs_grows_with_both_indices() {
    for itbs in 0..=MAX_ITBS {
        for n in 2..=MAX_PRB {
            // The specification's 328 bits at I_TBS 6, N_PRB 1 exceeds the 176 at N_PRB 2.
            if (itbs, n) == (6, 2) {
                continue;
            }
            assert!(tbs_bits(itbs, n).unwrap() >= tbs_bits(itbs, n - 1).unwrap(), "I_TBS {itbs}, N_PRB {n}");
        }
    }
    for n in 1..=MAX_PRB {
        for itbs in 1..=MAX_ITBS {
            // The specification's one exception: 328 bits at I_TBS 6, N_PRB 1.
            if n == 1 && (itbs == 6 || itbs == 7) {
                continue;
            }
            assert!(tbs_bits(itbs, n).unwrap() > tbs_bits(itbs - 1, n).unwrap(), "I_TBS {itbs}, N_PRB {n}");
        }
    }
    // Every size is a whole number of bytes.
    for itbs in 0..=MAX_ITBS {
        for n in 1..=MAX_PRB {
            assert_eq!(tbs_bits(itbs, n).unwrap() % 8, 0);
        }
    }
}

#[test]
fn tbs_refuses_indices_outside_the_table() {
    assert!(tbs_bits(27, 1).unwrap_err().to_string().contains("itbs = 27"));
    assert!(tbs_bits(0, 0).unwrap_err().to_string().contains("n_prb = 0"));
    assert!(tbs_bits(0, 111).unwrap_err().to_string().contains("[1, 110]"));
    assert!(tbs_for_mcs(29, 10).is_err());
}

#[test]
fn cqi_maps_to_mcs_as_lena_does() {
    assert_eq!(mcs_for_cqi(0).unwrap(), None);
    // LENA's map is by efficiency alone: CQI 6 (QPSK, 1.18) picks MCS 10, a 16QAM MCS.
    assert_eq!(mcs_entry(10).unwrap().modulation, Modulation::Qam16);
    for cqi in 1..=15u8 {
        assert_eq!(mcs_for_cqi(cqi).unwrap(), Some(2 * (cqi - 1)), "CQI {cqi}");
    }
    assert!(mcs_for_cqi(16).is_err());
    // Efficiency → CQI: the highest CQI whose efficiency is strictly below.
    assert_eq!(cqi_for_efficiency(0.0), 0);
    assert_eq!(cqi_for_efficiency(0.15), 0);
    assert_eq!(cqi_for_efficiency(0.16), 1);
    assert_eq!(cqi_for_efficiency(5.55), 14);
    assert_eq!(cqi_for_efficiency(9.0), 15);
    assert_eq!(LENA_CQI_EFFICIENCY.len(), 16);
}

#[test]
fn rbg_size_follows_table_7_1_6_1_1() {
    let got: Vec<u16> = [6, 15, 25, 50, 75, 100].iter().map(|&n| rbg_size(n).unwrap()).collect();
    assert_eq!(got, vec![1, 2, 2, 3, 4, 4]);
    assert_eq!((rbg_size(10).unwrap(), rbg_size(11).unwrap()), (1, 2));
    assert_eq!((rbg_size(26).unwrap(), rbg_size(27).unwrap()), (2, 3));
    assert_eq!((rbg_size(63).unwrap(), rbg_size(64).unwrap()), (3, 4));
    assert_eq!(rbg_count(100).unwrap(), 25);
    assert_eq!(rbg_count(50).unwrap(), 17);
    assert_eq!(rbg_count(25).unwrap(), 13);
    assert!(rbg_size(0).is_err() && rbg_size(111).is_err());
    assert!(check_bandwidth_rb(100).is_ok());
    let err = check_bandwidth_rb(20).unwrap_err().to_string();
    assert!(err.starts_with("bandwidth_rb = 20") && err.contains("6, 15, 25, 50, 75, 100"), "{err}");
}
