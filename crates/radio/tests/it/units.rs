//! dBm/mW/dB conversions and thermal noise (multi-operator reference §1.2).

use multiconn_radio::units::*;

use crate::support::assert_sig;

#[test]
fn dbm_and_mw_convert_both_ways() {
    assert_eq!(dbm_to_mw(0.0), 1.0);
    assert_sig(dbm_to_mw(-30.0), 1e-3, 6, "-30 dBm");
    assert_sig(dbm_to_mw(-125.24), 2.992e-13, 4, "-125.24 dBm");
    for dbm in [-140.0, -95.5, -44.0, 0.0, 23.0, 46.0] {
        assert!((mw_to_dbm(dbm_to_mw(dbm)) - dbm).abs() < 1e-9, "{dbm}");
    }
    assert_eq!(mw_to_dbm(0.0), f64::NEG_INFINITY);
}

#[test]
fn db_and_ratios_convert_both_ways() {
    assert_sig(db_to_ratio(3.0), 1.995, 4, "3 dB");
    assert_sig(db_to_ratio(20.76), 119.1, 4, "20.76 dB");
    assert_sig(ratio_to_db(119.2), 20.76, 4, "119.2");
    assert!((ratio_to_db(db_to_ratio(-7.3)) + 7.3).abs() < 1e-12);
}

#[test]
fn thermal_noise_per_resource_element_is_the_studys_value() {
    // −174 + 10·log10(15 000) = −132.239: the study's −132.24 dBm to the second decimal.
    assert!((thermal_noise_dbm(SUBCARRIER_SPACING_HZ) - (-132.24)).abs() < 0.005);
    assert_sig(thermal_noise_dbm(10e6), -104.0, 4, "10 MHz");
    assert_sig(thermal_noise_dbm(20e6), -101.0, 4, "20 MHz");
    // The noise figure adds in dB: −132.24 + 7 = −125.24 dBm.
    assert!((receiver_noise_dbm(SUBCARRIER_SPACING_HZ, 7.0) - (-125.24)).abs() < 0.005);
    // LENA's UE over 100 RBs (18 MHz) with a 9 dB noise figure.
    assert_sig(receiver_noise_dbm(100.0 * 180e3, 9.0), -92.45, 4, "LENA UE noise");
}
