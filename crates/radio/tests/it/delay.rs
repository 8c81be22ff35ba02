//! Capacity → delay (reference §3 and §7.3): both two-point forms through d(50) = 20 ms and
//! d(200) = 100 ms, their values at 5 / 20 / 100 Mbit/s, the constant form, validation.

use multiconn_radio::delay::{DelayForm, DelayModel};

use crate::support::assert_sig;

#[test]
fn exp2pt_goes_through_the_studys_points_and_gives_the_reference_values() {
    let d = DelayModel::default();
    assert_eq!(d.form, DelayForm::Exp2pt);
    assert_sig(d.delay_ms(50.0), 20.0, 6, "d(50)");
    assert_sig(d.delay_ms(200.0), 100.0, 6, "d(200)");
    for (c, ms) in [(5.0, 12.34), (20.0, 14.50), (100.0, 34.20), (55.547, 21.23), (0.0, 11.70)] {
        assert_sig(d.delay_ms(c), ms, 4, &format!("exp2pt d({c})"));
    }
}

#[test]
fn power2pt_goes_through_the_studys_points_and_gives_the_reference_values() {
    let d = DelayModel::with_form(DelayForm::Power2pt);
    assert_sig(d.delay_ms(50.0), 20.0, 6, "d(50)");
    assert_sig(d.delay_ms(200.0), 100.0, 6, "d(200)");
    for (c, ms) in [(5.0, 1.381), (20.0, 6.903), (100.0, 44.72), (55.547, 22.60), (1.0, 0.2131)] {
        assert_sig(d.delay_ms(c), ms, 4, &format!("power2pt d({c})"));
    }
    assert_eq!(d.delay_ms(0.0), 0.0);
}

#[test]
fn both_forms_rise_with_capacity_and_stay_positive_over_the_capacity_range() {
    for form in [DelayForm::Exp2pt, DelayForm::Power2pt] {
        let d = DelayModel::with_form(form);
        let mut last = -1.0;
        for i in 1..=556 {
            let v = d.delay_ms(i as f64 * 0.1);
            assert!(v > 0.0 && v > last, "{form:?} at {}", i as f64 * 0.1);
            last = v;
        }
    }
}

#[test]
fn constant_ignores_the_capacity_and_bad_capacities_count_as_zero() {
    let d = DelayModel { form: DelayForm::Constant, constant_ms: 15.0, ..DelayModel::default() };
    assert_eq!(d.delay_ms(0.0), 15.0);
    assert_eq!(d.delay_ms(55.0), 15.0);
    let e = DelayModel::default();
    assert_eq!(e.delay_ms(f64::NAN), e.delay_ms(0.0));
    assert_eq!(e.delay_ms(-3.0), e.delay_ms(0.0));
}

#[test]
fn the_model_reads_from_a_file_and_is_validated() {
    let d: DelayModel = toml::from_str("form = \"power2pt\"\nc1_mbps = 10.0\nd1_ms = 5.0").unwrap();
    assert_eq!((d.form, d.c1_mbps, d.d1_ms, d.c2_mbps), (DelayForm::Power2pt, 10.0, 5.0, 200.0));
    assert!(d.validate().is_ok());
    assert!(toml::from_str::<DelayModel>("form = \"linear\"").is_err(), "no unclamped linear form");
    assert!(toml::from_str::<DelayModel>("shape = \"exp2pt\"").is_err());
    let bad = DelayModel { d1_ms: -20.0, ..DelayModel::default() };
    assert_eq!(bad.validate().unwrap_err().to_string(), "delay.d1_ms = -20: must be in (0, 1000000] ms");
    let same = DelayModel { c2_mbps: 50.0, ..DelayModel::default() };
    assert!(same.validate().unwrap_err().to_string().starts_with("delay.c2_mbps: must differ"));
}

#[test]
fn above_the_points_the_delay_is_held_unless_extrapolation_is_asked_for() {
    let held = DelayModel::default();
    assert_eq!(held.delay_ms(600.0), held.delay_ms(200.0));
    assert!((held.delay_ms(200.0) - 100.0).abs() < 1e-9);
    // Below the larger point nothing changes.
    let free = DelayModel { hold_above: false, ..DelayModel::default() };
    for c in [0.0, 5.0, 55.547, 150.0, 200.0] {
        assert_eq!(held.delay_ms(c), free.delay_ms(c), "{c}");
    }
    // Extrapolated, the exponential reaches seconds at 5G capacities: 100·e^(0.010730·400).
    assert!((free.delay_ms(600.0) - 100.0 * (5f64.ln() / 150.0 * 400.0).exp()).abs() < 1e-6);
    assert!(free.delay_ms(600.0) > 7000.0);
    let power = DelayModel { form: DelayForm::Power2pt, ..DelayModel::default() };
    assert!((power.delay_ms(1000.0) - 100.0).abs() < 1e-9);
}
