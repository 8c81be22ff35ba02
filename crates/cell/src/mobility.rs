//! UE trajectories: a UE's distance from the eNB moving linearly from a start to an end
//! distance at a constant speed, then staying at the end (the cell study's set-up places UEs
//! at fixed distances; a trajectory sweeps them within one run). The cell re-evaluates the
//! path loss of a moving UE every TTI from this distance, and a moving UE's Doppler shift
//! follows its speed (f_d = v·f_c / c) unless the cell sets one.
//!
//! The motion is radial: only the distance to the eNB matters in a single cell without
//! interference, so a straight line through the eNB is not modelled.

use crate::error::CellError;

/// The farthest a UE may be from its eNB, m.
pub const MAX_DISTANCE_M: f64 = 100_000.0;

/// A radial trajectory.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trajectory {
    /// Distance at time 0, m.
    pub start_m: f64,
    /// Distance at which the UE stops, m.
    pub end_m: f64,
    /// Speed, m/s (0 only when start and end are equal).
    pub speed_mps: f64,
    /// The UE's own maximum Doppler shift, Hz (`None`: the cell's).
    pub doppler_hz: Option<f64>,
}

impl Trajectory {
    /// The distance at `t_s` seconds: from start towards end at the speed, clamped at the end.
    pub fn distance_at(&self, t_s: f64) -> f64 {
        let span = self.end_m - self.start_m;
        if span == 0.0 || self.speed_mps <= 0.0 {
            return self.start_m;
        }
        let travelled = (self.speed_mps * t_s.max(0.0)).min(span.abs());
        self.start_m + travelled * span.signum()
    }

    /// When the UE reaches its end distance, s (0 for a static one).
    pub fn arrival_s(&self) -> f64 {
        if self.speed_mps > 0.0 {
            (self.end_m - self.start_m).abs() / self.speed_mps
        } else {
            0.0
        }
    }

    /// Checks the trajectory of UE `ue`; the error names `cell.ues[<ue>].trajectory.<field>`.
    pub fn validate(&self, ue: usize) -> Result<(), CellError> {
        let field = |f: &str| format!("cell.ues[{ue}].trajectory.{f}");
        for (name, d) in [("start_m", self.start_m), ("end_m", self.end_m)] {
            if !(d.is_finite() && d > 0.0 && d <= MAX_DISTANCE_M) {
                return Err(CellError::out_of_range(&field(name), d, "a number in (0, 100000] m"));
            }
        }
        if !(self.speed_mps.is_finite() && (0.0..=150.0).contains(&self.speed_mps)) {
            return Err(CellError::out_of_range(&field("speed"), self.speed_mps, "a speed in [0, 150] m/s"));
        }
        if self.speed_mps == 0.0 && self.start_m != self.end_m {
            return Err(CellError::invalid(&field("speed"), "is 0 but start_m and end_m differ: give a speed above 0, or equal distances"));
        }
        if let Some(f) = self.doppler_hz {
            if !(f.is_finite() && f > 0.0 && f <= 2000.0) {
                return Err(CellError::out_of_range(&field("doppler_hz"), f, "a number in (0, 2000] Hz"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn away() -> Trajectory {
        Trajectory { start_m: 100.0, end_m: 400.0, speed_mps: 10.0, doppler_hz: None }
    }

    #[test]
    fn the_distance_moves_linearly_and_stops_at_the_end() {
        let t = away();
        assert_eq!(t.distance_at(0.0), 100.0);
        assert_eq!(t.distance_at(12.5), 225.0);
        assert_eq!(t.arrival_s(), 30.0);
        assert_eq!(t.distance_at(30.0), 400.0);
        assert_eq!(t.distance_at(100.0), 400.0);
        let towards = Trajectory { start_m: 400.0, end_m: 100.0, ..t };
        assert_eq!(towards.distance_at(10.0), 300.0);
        assert_eq!(towards.distance_at(50.0), 100.0);
        let still = Trajectory { start_m: 50.0, end_m: 50.0, speed_mps: 0.0, doppler_hz: None };
        assert_eq!(still.distance_at(7.0), 50.0);
    }

    #[test]
    fn bad_trajectories_name_the_field() {
        let msg = |t: Trajectory| t.validate(2).unwrap_err().to_string();
        assert!(msg(Trajectory { start_m: -1.0, ..away() }).starts_with("cell.ues[2].trajectory.start_m"));
        assert!(msg(Trajectory { end_m: 0.0, ..away() }).starts_with("cell.ues[2].trajectory.end_m"));
        assert!(msg(Trajectory { speed_mps: 0.0, ..away() }).starts_with("cell.ues[2].trajectory.speed"));
        assert!(msg(Trajectory { speed_mps: 400.0, ..away() }).starts_with("cell.ues[2].trajectory.speed"));
        assert!(Trajectory { speed_mps: 0.0, end_m: 100.0, ..away() }.validate(0).is_ok());
    }
}
