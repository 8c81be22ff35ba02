//! Helpers shared by the test modules.

/// `actual` rounds to `expected` at `digits` significant digits: within half a unit of the
/// last digit of `expected`.
#[track_caller]
pub fn assert_sig(actual: f64, expected: f64, digits: i32, what: &str) {
    let scale = if expected == 0.0 { 0.0 } else { expected.abs().log10().floor() };
    let half_unit = 0.5 * 10f64.powf(scale - (digits - 1) as f64);
    assert!(
        (actual - expected).abs() <= half_unit * (1.0 + 1e-9),
        "{what}: {actual} does not round to {expected} at {digits} significant digits"
    );
}
