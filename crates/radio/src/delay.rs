//! Capacity → one-way delay of an access link (the study's Figure 3; multi-operator reference
//! §3).
//!
//! The study fits a curve through two points it calls typical for 5G, d(50 Mbit/s) = 20 ms and
//! d(200 Mbit/s) = 100 ms, but not its form. Two forms stay positive over the whole capacity
//! range (0–55.547 Mbit/s):
//!
//! * `exp2pt` (default): d = a · e^(b·c), b = ln(d2/d1)/(c2 − c1), a = d1 · e^(−b·c1) —
//!   11.70 · e^(0.010730·c) through the study's points: 11.7 ms at no capacity, 21.2 ms at the
//!   cap;
//! * `power2pt`: d = d1 · (c/c1)^k, k = ln(d2/d1)/ln(c2/c1) — 20 · (c/50)^1.161; tends to 0 with
//!   the capacity (1 Mbit/s → 0.21 ms);
//! * `constant`: one delay for every capacity (sensitivity runs).
//!
//! Linear and logarithmic fits go negative inside the range and are not offered. The value is
//! the one-way delay of the access link, applied in each direction (as Minitopo's link delay).
//!
//! Above the larger of the two points' capacities the curve is held at that point's delay
//! (`hold_above = true`, the default): the study's curve serves LTE cells of at most
//! 55.5 Mbit/s, and extrapolated to 5G capacities the exponential gives seconds (7.3 s at
//! 600 Mbit/s). `hold_above = false` extrapolates.

use serde::{Deserialize, Serialize};

use crate::error::{check_above, check_range, RadioError};

/// The curve's form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DelayForm {
    /// Exponential through the two points.
    #[default]
    Exp2pt,
    /// Power law through the two points.
    Power2pt,
    /// `constant_ms` whatever the capacity.
    Constant,
}

/// A capacity-to-delay curve. `Default` is the study's points with the exponential form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DelayModel {
    pub form: DelayForm,
    /// First point: capacity (Mbit/s) and one-way delay (ms). (50, 20)
    pub c1_mbps: f64,
    pub d1_ms: f64,
    /// Second point. (200, 100)
    pub c2_mbps: f64,
    pub d2_ms: f64,
    /// The delay of the `constant` form, ms (20).
    pub constant_ms: f64,
    /// Hold the delay at the larger capacity's point above it, instead of extrapolating.
    /// (true)
    pub hold_above: bool,
}

impl Default for DelayModel {
    fn default() -> DelayModel {
        DelayModel { form: DelayForm::Exp2pt, c1_mbps: 50.0, d1_ms: 20.0, c2_mbps: 200.0, d2_ms: 100.0, constant_ms: 20.0, hold_above: true }
    }
}

impl DelayModel {
    /// The study's points with `form`.
    pub fn with_form(form: DelayForm) -> DelayModel {
        DelayModel { form, ..DelayModel::default() }
    }

    /// Checks the points (positive, finite, distinct capacities) and the constant.
    pub fn validate(&self) -> Result<(), RadioError> {
        check_above("delay.c1_mbps", self.c1_mbps, 0.0, 1e6, "Mbit/s")?;
        check_above("delay.c2_mbps", self.c2_mbps, 0.0, 1e6, "Mbit/s")?;
        check_above("delay.d1_ms", self.d1_ms, 0.0, 1e6, "ms")?;
        check_above("delay.d2_ms", self.d2_ms, 0.0, 1e6, "ms")?;
        check_range("delay.constant_ms", self.constant_ms, 0.0, 1e6, "ms")?;
        if self.c1_mbps == self.c2_mbps {
            return Err(RadioError::invalid("delay.c2_mbps", "must differ from delay.c1_mbps (two points fix the curve)"));
        }
        Ok(())
    }

    /// The one-way delay in ms at `capacity_mbps`. A capacity that is negative or not a number
    /// counts as 0; above the points' range it counts as the larger point's with `hold_above`.
    pub fn delay_ms(&self, capacity_mbps: f64) -> f64 {
        let mut c = if capacity_mbps > 0.0 { capacity_mbps } else { 0.0 };
        if self.hold_above {
            c = c.min(self.c1_mbps.max(self.c2_mbps));
        }
        match self.form {
            DelayForm::Constant => self.constant_ms,
            DelayForm::Exp2pt => {
                let b = (self.d2_ms / self.d1_ms).ln() / (self.c2_mbps - self.c1_mbps);
                self.d1_ms * (b * (c - self.c1_mbps)).exp()
            }
            DelayForm::Power2pt => {
                let k = (self.d2_ms / self.d1_ms).ln() / (self.c2_mbps / self.c1_mbps).ln();
                self.d1_ms * (c / self.c1_mbps).powf(k)
            }
        }
    }
}
