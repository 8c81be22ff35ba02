//! UE mobility routes in 2-D, the shadowing that is correlated along them, and the Doppler
//! shift of a moving UE.
//!
//! * [`Route`]: a start point and a list of [`Leg`]s, each a straight [`Leg::Move`] at constant
//!   speed or a [`Leg::Pause`]; after the last leg the UE stays where it is. The piecewise
//!   schedule (start and end time, start distance of every leg) is precomputed, so
//!   [`Route::position_at`], [`Route::velocity_at`], [`Route::speed_at`] and
//!   [`Route::distance_travelled_at`] cost O(log legs). Times are nanoseconds (`u64`), the
//!   simulator's clock; lengths are metres, speeds m/s. The single-cell `Trajectory` of
//!   `multiconn-cell` (a radial distance) is the one-leg case, [`Route::straight`].
//! * [`RouteShadowing`]: log-normal shadowing per site, correlated along the path length
//!   travelled (Gudmundson's AR(1) of [`crate::shadowing`], decorrelation distance d_corr) and
//!   between sites (a common part with weight √c, TR 36.942 / TR 38.901 practice c = 0.5):
//!   S_site = σ·(√c·Z_common + √(1 − c)·Z_site). It advances by the path length travelled, so a
//!   pause (no distance) freezes it.
//! * [`max_doppler_hz`]: f_d = v·f_c / c.
//!
//! Every bad input gives a [`RadioError`] naming the field (`route[3].speed`,
//! `route_shadowing.sigma_db`, …) and what is allowed; nothing here panics on user input.

use serde::{Deserialize, Serialize};

use multiconn_core::RngStream;

use crate::error::{check_above, check_range, RadioError};
use crate::pathloss::ShadowingDefaults;
use crate::shadowing::{combine, Gudmundson};

/// The highest speed a move may have, m/s (500 km/h).
pub const MAX_SPEED_MPS: f64 = 500.0 / 3.6;

/// The largest absolute coordinate of a route point, m (±1000 km).
pub const MAX_COORDINATE_M: f64 = 1_000_000.0;

/// The speed of light in vacuum, m/s.
pub const SPEED_OF_LIGHT_MPS: f64 = 299_792_458.0;

/// The highest carrier frequency [`max_doppler_hz`] accepts, MHz (TR 38.901's 100 GHz).
pub const MAX_CARRIER_MHZ: f64 = 100_000.0;

/// The largest shadowing standard deviation [`RouteShadowing`] accepts, dB.
pub const MAX_SIGMA_DB: f64 = 20.0;

/// Nanoseconds per second.
const NS_PER_S: f64 = 1e9;

/// The longest a single leg or the whole route may last, ns (2⁶³ ns ≈ 292 years).
const MAX_DURATION_NS: f64 = i64::MAX as f64;

/// One piece of a route.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Leg {
    /// A straight line from where the UE is to `to` (x, y in m) at a constant `speed_mps`.
    Move {
        /// The end point (x, y), m.
        to: (f64, f64),
        /// The speed, m/s, in (0, [`MAX_SPEED_MPS`]].
        speed_mps: f64,
    },
    /// Standing still for `duration_ns` nanoseconds (above 0).
    Pause {
        /// How long the UE stays, ns.
        duration_ns: u64,
    },
}

/// One leg as scheduled: when it runs, where it goes and how far along the route it starts.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Segment {
    /// Start time, ns.
    t0_ns: u64,
    /// End time, ns (above `t0_ns`).
    t1_ns: u64,
    /// Start point, m.
    from: (f64, f64),
    /// End point, m (equal to `from` for a pause).
    to: (f64, f64),
    /// Path length travelled before the leg, m.
    d0_m: f64,
    /// The leg's length, m (0 for a pause).
    length_m: f64,
    /// The velocity during the leg, m/s (zero for a pause).
    velocity: (f64, f64),
    /// The speed during the leg, m/s (0 for a pause).
    speed_mps: f64,
}

impl Segment {
    /// The fraction of the leg done at `t_ns` (in [0, 1]).
    fn fraction(&self, t_ns: u64) -> f64 {
        let done = t_ns.clamp(self.t0_ns, self.t1_ns) - self.t0_ns;
        done as f64 / (self.t1_ns - self.t0_ns) as f64
    }

    /// The position at `t_ns` within the leg.
    fn position(&self, t_ns: u64) -> (f64, f64) {
        let f = self.fraction(t_ns);
        if f >= 1.0 {
            return self.to;
        }
        (self.from.0 + f * (self.to.0 - self.from.0), self.from.1 + f * (self.to.1 - self.from.1))
    }

    /// The path length travelled at `t_ns`, m.
    fn distance(&self, t_ns: u64) -> f64 {
        let f = self.fraction(t_ns);
        if f >= 1.0 {
            return self.d0_m + self.length_m;
        }
        self.d0_m + f * self.length_m
    }
}

/// A UE's route in 2-D: a start point and legs, scheduled from time 0.
///
/// At a leg boundary the later leg applies (the schedule is right-continuous): at the instant a
/// pause starts the velocity is already zero, at the instant a move starts it is the move's.
/// From [`Route::end_time`] on the UE stands at [`Route::end_position`].
#[derive(Clone, Debug, PartialEq)]
pub struct Route {
    start: (f64, f64),
    legs: Vec<Leg>,
    segments: Vec<Segment>,
}

impl Route {
    /// A validated route; errors name `route.start.x_m`, `route[i].speed`, `route[i].to.y_m`,
    /// `route[i].duration_ns`, ….
    pub fn new(start: (f64, f64), legs: Vec<Leg>) -> Result<Route, RadioError> {
        Route::named("route", start, legs)
    }

    /// As [`Route::new`], with `field` instead of `route` in the names of errors (for a route
    /// inside a scenario, e.g. `ues[2].route`).
    pub fn named(field: &str, start: (f64, f64), legs: Vec<Leg>) -> Result<Route, RadioError> {
        check_point(&format!("{field}.start"), start)?;
        let segments = schedule(field, start, &legs)?;
        Ok(Route { start, legs, segments })
    }

    /// The linear case (the cell crate's trajectory): from `from` to `to` at `speed_mps`, then
    /// staying at `to`. Equal points give a stationary route, for which a speed of 0 is allowed.
    pub fn straight(from: (f64, f64), to: (f64, f64), speed_mps: f64) -> Result<Route, RadioError> {
        if from == to {
            check_range("route[0].speed", speed_mps, 0.0, MAX_SPEED_MPS, "m/s")?;
            return Route::new(from, Vec::new());
        }
        Route::new(from, vec![Leg::Move { to, speed_mps }])
    }

    /// A UE that stays at `at` for ever.
    pub fn stationary(at: (f64, f64)) -> Result<Route, RadioError> {
        Route::new(at, Vec::new())
    }

    /// The start point (x, y), m.
    pub fn start(&self) -> (f64, f64) {
        self.start
    }

    /// The legs as given.
    pub fn legs(&self) -> &[Leg] {
        &self.legs
    }

    /// When the last leg ends, ns (0 for a route without legs).
    pub fn end_time(&self) -> u64 {
        self.segments.last().map_or(0, |s| s.t1_ns)
    }

    /// Where the UE ends up (x, y), m.
    pub fn end_position(&self) -> (f64, f64) {
        self.segments.last().map_or(self.start, |s| s.to)
    }

    /// The total path length, m.
    pub fn length_m(&self) -> f64 {
        self.segments.last().map_or(0.0, |s| s.d0_m + s.length_m)
    }

    /// The index of the leg running at `t_ns` (`None` from the end on).
    pub fn leg_at(&self, t_ns: u64) -> Option<usize> {
        let i = self.segments.partition_point(|s| s.t1_ns <= t_ns);
        (i < self.segments.len()).then_some(i)
    }

    /// The position (x, y) at `t_ns`, m.
    pub fn position_at(&self, t_ns: u64) -> (f64, f64) {
        match self.leg_at(t_ns) {
            Some(i) => self.segments[i].position(t_ns),
            None => self.end_position(),
        }
    }

    /// The velocity (v_x, v_y) at `t_ns`, m/s: zero in pauses and from the end on.
    pub fn velocity_at(&self, t_ns: u64) -> (f64, f64) {
        self.leg_at(t_ns).map_or((0.0, 0.0), |i| self.segments[i].velocity)
    }

    /// The speed at `t_ns`, m/s: zero in pauses and from the end on.
    pub fn speed_at(&self, t_ns: u64) -> f64 {
        self.leg_at(t_ns).map_or(0.0, |i| self.segments[i].speed_mps)
    }

    /// The path length travelled by `t_ns`, m (the coordinate correlated shadowing moves
    /// along); it does not decrease with time and stays constant in pauses.
    pub fn distance_travelled_at(&self, t_ns: u64) -> f64 {
        match self.leg_at(t_ns) {
            Some(i) => self.segments[i].distance(t_ns),
            None => self.length_m(),
        }
    }
}

/// `p` must have finite coordinates within ±[`MAX_COORDINATE_M`]; errors name `field.x_m`/`.y_m`.
fn check_point(field: &str, p: (f64, f64)) -> Result<(), RadioError> {
    check_range(&format!("{field}.x_m"), p.0, -MAX_COORDINATE_M, MAX_COORDINATE_M, "m")?;
    check_range(&format!("{field}.y_m"), p.1, -MAX_COORDINATE_M, MAX_COORDINATE_M, "m")
}

/// Validates the legs and lays them out in time and distance from `start`.
fn schedule(field: &str, start: (f64, f64), legs: &[Leg]) -> Result<Vec<Segment>, RadioError> {
    let mut segments = Vec::with_capacity(legs.len());
    let (mut at, mut t_ns, mut d_m) = (start, 0u64, 0.0);
    for (i, leg) in legs.iter().enumerate() {
        let leg_field = format!("{field}[{i}]");
        let seg = match *leg {
            Leg::Move { to, speed_mps } => move_segment(&leg_field, at, to, speed_mps, t_ns, d_m)?,
            Leg::Pause { duration_ns } => pause_segment(&leg_field, at, duration_ns, t_ns, d_m)?,
        };
        (at, t_ns, d_m) = (seg.to, seg.t1_ns, seg.d0_m + seg.length_m);
        segments.push(seg);
    }
    Ok(segments)
}

/// A move leg from `from`, starting at `t0_ns` after `d0_m` of path.
fn move_segment(field: &str, from: (f64, f64), to: (f64, f64), speed_mps: f64, t0_ns: u64, d0_m: f64) -> Result<Segment, RadioError> {
    check_point(&format!("{field}.to"), to)?;
    if to == from {
        return Err(RadioError::invalid(
            &format!("{field}.to"),
            format!("is ({}, {}), where the UE already is: a move must go somewhere; to stay, use a pause with a duration", to.0, to.1),
        ));
    }
    let length_m = (to.0 - from.0).hypot(to.1 - from.1);
    check_speed(field, speed_mps, length_m)?;
    let t1_ns = end_of(field, t0_ns, length_m / speed_mps * NS_PER_S)?;
    let velocity = ((to.0 - from.0) / length_m * speed_mps, (to.1 - from.1) / length_m * speed_mps);
    Ok(Segment { t0_ns, t1_ns, from, to, d0_m, length_m, velocity, speed_mps })
}

/// A pause leg at `at`, starting at `t0_ns` after `d0_m` of path.
fn pause_segment(field: &str, at: (f64, f64), duration_ns: u64, t0_ns: u64, d0_m: f64) -> Result<Segment, RadioError> {
    if duration_ns == 0 {
        return Err(RadioError::invalid(
            &format!("{field}.duration_ns"),
            "is 0: a pause needs a duration above 0 ns (leave the leg out for no pause)",
        ));
    }
    let t1_ns = end_of(field, t0_ns, duration_ns as f64)?;
    Ok(Segment { t0_ns, t1_ns, from: at, to: at, d0_m, length_m: 0.0, velocity: (0.0, 0.0), speed_mps: 0.0 })
}

/// A move's speed: finite, above 0 (a stop is a pause) and at most [`MAX_SPEED_MPS`].
fn check_speed(field: &str, speed_mps: f64, length_m: f64) -> Result<(), RadioError> {
    let speed_field = format!("{field}.speed");
    if !(speed_mps.is_finite() && speed_mps > 0.0) {
        return Err(RadioError::invalid(
            &speed_field,
            format!(
                "is {speed_mps} for a move of {length_m} m: a move needs a speed in (0, {MAX_SPEED_MPS:.2}] m/s (500 km/h); \
                 a stop is a pause with a duration (Leg::Pause {{ duration_ns }})"
            ),
        ));
    }
    if speed_mps > MAX_SPEED_MPS {
        return Err(RadioError::out_of_range(&speed_field, speed_mps, &format!("in (0, {MAX_SPEED_MPS:.2}] m/s (500 km/h)")));
    }
    Ok(())
}

/// The end time of a leg of `duration_ns` (at least 1 ns) starting at `t0_ns`, if it fits.
fn end_of(field: &str, t0_ns: u64, duration_ns: f64) -> Result<u64, RadioError> {
    let duration = duration_ns.round().max(1.0);
    if duration < MAX_DURATION_NS {
        if let Some(t1) = t0_ns.checked_add(duration as u64).filter(|&t| (t as f64) < MAX_DURATION_NS) {
            return Ok(t1);
        }
    }
    Err(RadioError::invalid(field, format!("ends after {:.3e} s: a route must end within 2^63 ns (about 292 years)", (t0_ns as f64 + duration) / NS_PER_S)))
}

/// Spatially correlated shadowing along a route for a set of sites.
///
/// Per site a unit Gudmundson process over the distance travelled, plus one common process,
/// combined as σ·(√c·common + √(1 − c)·own) ([`combine`]). Each process has its own stream,
/// `RngStream::derive(seed, "<label>/common")` and `"<label>/site/<key>"`, so adding or removing
/// a site leaves the others' values unchanged. The values depend on the distances at which they
/// are queried (the AR(1) draws once per step that moves); a step of 0 draws nothing.
#[derive(Clone, Debug)]
pub struct RouteShadowing {
    sigma_db: f64,
    inter_site_correlation: f64,
    common: Gudmundson,
    own: Vec<Gudmundson>,
    values_db: Vec<f64>,
    distance_m: f64,
}

impl RouteShadowing {
    /// Shadowing for the sites `sites` (distinct keys) at distance 0, with standard deviation
    /// `sigma_db` in [0, 20] dB, decorrelation distance `decorrelation_m` > 0 and inter-site
    /// correlation `inter_site_correlation` in [0, 1]; errors name `route_shadowing.<field>`.
    pub fn new<S: AsRef<str>>(
        seed: u64,
        label: &str,
        sites: &[S],
        sigma_db: f64,
        decorrelation_m: f64,
        inter_site_correlation: f64,
    ) -> Result<RouteShadowing, RadioError> {
        check_range("route_shadowing.sigma_db", sigma_db, 0.0, MAX_SIGMA_DB, "dB")?;
        check_above("route_shadowing.decorrelation_m", decorrelation_m, 0.0, MAX_COORDINATE_M, "m")?;
        check_range("route_shadowing.inter_site_correlation", inter_site_correlation, 0.0, 1.0, "")?;
        check_distinct(sites)?;
        let common = Gudmundson::new(RngStream::derive(seed, &format!("{label}/common")), decorrelation_m);
        let own: Vec<Gudmundson> = sites
            .iter()
            .map(|key| Gudmundson::new(RngStream::derive(seed, &format!("{label}/site/{}", key.as_ref())), decorrelation_m))
            .collect();
        let mut shadowing = RouteShadowing { sigma_db, inter_site_correlation, common, own, values_db: Vec::new(), distance_m: 0.0 };
        shadowing.refresh();
        Ok(shadowing)
    }

    /// As [`RouteShadowing::new`] with σ and d_corr from a path-loss model's
    /// [`ShadowingDefaults`] (e.g. `PathLoss::shadowing()`: UMa NLOS 6 dB, 50 m).
    pub fn with_defaults<S: AsRef<str>>(
        seed: u64,
        label: &str,
        sites: &[S],
        defaults: ShadowingDefaults,
        inter_site_correlation: f64,
    ) -> Result<RouteShadowing, RadioError> {
        RouteShadowing::new(seed, label, sites, defaults.sigma_db, defaults.decorrelation_m, inter_site_correlation)
    }

    /// Moves to path length `distance_m` (not behind the last one) and returns the shadowing
    /// per site, dB, in the order of the sites given. The same distance again changes nothing.
    pub fn advance_to(&mut self, distance_m: f64) -> Result<&[f64], RadioError> {
        if !(distance_m.is_finite() && distance_m >= 0.0) {
            return Err(RadioError::out_of_range("route_shadowing.distance_m", distance_m, "a finite path length >= 0 m"));
        }
        if distance_m < self.distance_m {
            return Err(RadioError::invalid(
                "route_shadowing.distance_m",
                format!("is {distance_m} m, behind the last one, {} m: the shadowing only moves forward along the route", self.distance_m),
            ));
        }
        let step = distance_m - self.distance_m;
        if step > 0.0 {
            self.common.advance(step);
            self.own.iter_mut().for_each(|g| {
                g.advance(step);
            });
            self.distance_m = distance_m;
            self.refresh();
        }
        Ok(&self.values_db)
    }

    /// Moves to where `route` is at `t_ns` ([`Route::distance_travelled_at`]); times must not
    /// go backwards.
    pub fn advance_along(&mut self, route: &Route, t_ns: u64) -> Result<&[f64], RadioError> {
        self.advance_to(route.distance_travelled_at(t_ns))
    }

    /// The current shadowing per site, dB.
    pub fn values(&self) -> &[f64] {
        &self.values_db
    }

    /// The path length the values belong to, m.
    pub fn distance_m(&self) -> f64 {
        self.distance_m
    }

    /// Recomputes the per-site values from the processes.
    fn refresh(&mut self) {
        let (sigma, c, common) = (self.sigma_db, self.inter_site_correlation, self.common.value());
        self.values_db.clear();
        self.values_db.extend(self.own.iter().map(|g| combine(sigma, c, common, g.value())));
    }
}

/// Site keys must differ (two equal keys would share one stream); errors name `route_shadowing.sites[i]`.
fn check_distinct<S: AsRef<str>>(sites: &[S]) -> Result<(), RadioError> {
    for (i, key) in sites.iter().enumerate() {
        if let Some(j) = sites[..i].iter().position(|k| k.as_ref() == key.as_ref()) {
            return Err(RadioError::invalid(
                &format!("route_shadowing.sites[{i}]"),
                format!("{:?} is also sites[{j}]: site keys must be distinct", key.as_ref()),
            ));
        }
    }
    Ok(())
}

/// The maximum Doppler shift f_d = v·f_c / c, Hz, for a speed in [0, 500 km/h] and a carrier
/// in (0, 100 000] MHz; errors name `speed_mps` or `carrier_mhz`.
pub fn max_doppler_hz(speed_mps: f64, carrier_mhz: f64) -> Result<f64, RadioError> {
    check_range("speed_mps", speed_mps, 0.0, MAX_SPEED_MPS, "m/s")?;
    check_above("carrier_mhz", carrier_mhz, 0.0, MAX_CARRIER_MHZ, "MHz")?;
    Ok(speed_mps * carrier_mhz * 1e6 / SPEED_OF_LIGHT_MPS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pathloss::PathLoss;

    const S: u64 = 1_000_000_000;

    fn kmh(v: f64) -> f64 {
        v / 3.6
    }

    /// (0, 0) → (1000, 0) at 50 km/h (72 s), a 10 s pause, → (1000, 500) at 10 m/s (50 s).
    fn two_legs_and_a_pause() -> Route {
        Route::new(
            (0.0, 0.0),
            vec![
                Leg::Move { to: (1000.0, 0.0), speed_mps: kmh(50.0) },
                Leg::Pause { duration_ns: 10 * S },
                Leg::Move { to: (1000.0, 500.0), speed_mps: 10.0 },
            ],
        )
        .unwrap()
    }

    fn close(a: (f64, f64), b: (f64, f64)) -> bool {
        (a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9
    }

    #[test]
    fn a_route_with_a_pause_is_scheduled_leg_by_leg() {
        let r = two_legs_and_a_pause();
        // 50 km/h over 1 km takes 72 s; then 10 s of pause and 50 s for 500 m.
        assert_eq!(r.end_time(), 132 * S);
        assert_eq!(r.length_m(), 1500.0);
        // Start.
        assert_eq!(r.position_at(0), (0.0, 0.0));
        assert!(close(r.velocity_at(0), (kmh(50.0), 0.0)));
        assert_eq!(r.distance_travelled_at(0), 0.0);
        // Mid-leg.
        assert!(close(r.position_at(36 * S), (500.0, 0.0)));
        assert!((r.speed_at(36 * S) - 13.888_888_888_9).abs() < 1e-9);
        assert!((r.distance_travelled_at(36 * S) - 500.0).abs() < 1e-9);
        // The end of the first move is the start of the pause: there, and stopped.
        assert_eq!(r.position_at(72 * S), (1000.0, 0.0));
        assert_eq!(r.velocity_at(72 * S), (0.0, 0.0));
        assert_eq!(r.distance_travelled_at(72 * S), 1000.0);
        assert!(close(r.velocity_at(72 * S - 1), (kmh(50.0), 0.0)));
        // Inside the pause.
        assert_eq!(r.position_at(77 * S), (1000.0, 0.0));
        assert_eq!(r.velocity_at(77 * S), (0.0, 0.0));
        assert_eq!(r.speed_at(77 * S), 0.0);
        assert_eq!(r.distance_travelled_at(77 * S), 1000.0);
        assert_eq!(r.leg_at(77 * S), Some(1));
        // The end of the pause is the start of the second move.
        assert_eq!(r.position_at(82 * S), (1000.0, 0.0));
        assert!(close(r.velocity_at(82 * S), (0.0, 10.0)));
        assert!(close(r.position_at(107 * S), (1000.0, 250.0)));
        assert!((r.distance_travelled_at(107 * S) - 1250.0).abs() < 1e-9);
        // The end, and after it.
        for t in [132 * S, 1000 * S, u64::MAX] {
            assert_eq!(r.position_at(t), (1000.0, 500.0));
            assert_eq!(r.velocity_at(t), (0.0, 0.0));
            assert_eq!(r.speed_at(t), 0.0);
            assert_eq!(r.distance_travelled_at(t), 1500.0);
            assert_eq!(r.leg_at(t), None);
        }
        assert!(close(r.velocity_at(132 * S - 1), (0.0, 10.0)));
    }

    #[test]
    fn distance_travelled_is_the_sum_of_leg_lengths_and_never_decreases() {
        let r = Route::new(
            (10.0, 20.0),
            vec![
                Leg::Move { to: (13.0, 24.0), speed_mps: 1.0 },
                Leg::Pause { duration_ns: S / 2 },
                Leg::Move { to: (13.0, -6.0), speed_mps: 30.0 },
                Leg::Move { to: (-27.0, 24.0), speed_mps: 5.0 },
            ],
        )
        .unwrap();
        assert_eq!(r.length_m(), 5.0 + 30.0 + 50.0);
        assert_eq!(r.end_time(), 5 * S + S / 2 + S + 10 * S);
        assert_eq!(r.distance_travelled_at(5 * S + S / 2), 5.0);
        assert_eq!(r.distance_travelled_at(6 * S + S / 2), 35.0);
        assert!(close(r.velocity_at(7 * S), (-4.0, 3.0)));
        let mut last = 0.0;
        for k in 0..=200 {
            let d = r.distance_travelled_at(k * r.end_time() / 200);
            assert!(d >= last, "distance went back at step {k}: {d} < {last}");
            last = d;
        }
        assert_eq!(last, 85.0);
    }

    #[test]
    fn straight_is_the_linear_trajectory() {
        let r = Route::straight((100.0, 0.0), (400.0, 0.0), 10.0).unwrap();
        assert_eq!(r.end_time(), 30 * S);
        assert_eq!(r.position_at(12 * S + S / 2), (225.0, 0.0));
        assert_eq!(r.position_at(100 * S), (400.0, 0.0));
        let still = Route::straight((50.0, 5.0), (50.0, 5.0), 0.0).unwrap();
        assert_eq!(still.end_time(), 0);
        assert_eq!(still.position_at(7 * S), (50.0, 5.0));
        assert_eq!(still.velocity_at(0), (0.0, 0.0));
        assert!(Route::straight((0.0, 0.0), (1.0, 0.0), 0.0).is_err());
    }

    #[test]
    fn a_stop_must_be_a_pause() {
        let legs = |speed_mps: f64| {
            vec![
                Leg::Move { to: (100.0, 0.0), speed_mps: 10.0 },
                Leg::Pause { duration_ns: S },
                Leg::Move { to: (100.0, 100.0), speed_mps: 10.0 },
                Leg::Move { to: (0.0, 100.0), speed_mps },
            ]
        };
        for bad in [0.0, -3.0, f64::NAN, f64::INFINITY] {
            let msg = Route::new((0.0, 0.0), legs(bad)).unwrap_err().to_string();
            assert!(msg.starts_with("route[3].speed: "), "{msg}");
            assert!(msg.contains("a stop is a pause with a duration"), "{msg}");
        }
        let msg = Route::new((0.0, 0.0), legs(kmh(600.0))).unwrap_err().to_string();
        assert!(msg.starts_with("route[3].speed = 166.6"), "{msg}");
        assert!(msg.contains("500 km/h"), "{msg}");
        assert!(Route::new((0.0, 0.0), legs(kmh(500.0))).is_ok());
        // A move to where the UE already is.
        let msg = Route::new((5.0, 5.0), vec![Leg::Move { to: (5.0, 5.0), speed_mps: 0.0 }]).unwrap_err().to_string();
        assert!(msg.starts_with("route[0].to: ") && msg.contains("pause"), "{msg}");
    }

    #[test]
    fn bad_pauses_and_coordinates_are_refused() {
        let msg = Route::new((0.0, 0.0), vec![Leg::Pause { duration_ns: 0 }]).unwrap_err().to_string();
        assert!(msg.starts_with("route[0].duration_ns: is 0"), "{msg}");
        // A negative duration cannot be written (u64), nor read from a scenario.
        assert!(a_negative_pause_does_not_parse());
        let msg = Route::new((f64::NAN, 0.0), vec![]).unwrap_err().to_string();
        assert!(msg.starts_with("route.start.x_m = NaN"), "{msg}");
        let msg = Route::new((0.0, 0.0), vec![Leg::Move { to: (0.0, f64::INFINITY), speed_mps: 1.0 }]).unwrap_err().to_string();
        assert!(msg.starts_with("route[0].to.y_m = inf"), "{msg}");
        let msg = Route::new((0.0, 2e6), vec![]).unwrap_err().to_string();
        assert!(msg.starts_with("route.start.y_m = 2000000: must be in [-1000000, 1000000] m"), "{msg}");
        let msg = Route::named("ues[4].route", (0.0, 0.0), vec![Leg::Pause { duration_ns: S }, Leg::Pause { duration_ns: u64::MAX }])
            .unwrap_err()
            .to_string();
        assert!(msg.starts_with("ues[4].route[1]: ends after"), "{msg}");
        let slow = Route::new((0.0, 0.0), vec![Leg::Move { to: (1e6, 0.0), speed_mps: 1e-12 }]).unwrap_err().to_string();
        assert!(slow.starts_with("route[0]: ends after"), "{slow}");
    }

    /// A scenario's `duration_ns = -1` fails to parse: the type has no negative durations.
    fn a_negative_pause_does_not_parse() -> bool {
        toml::from_str::<Leg>("kind = \"pause\"\nduration_ns = -1").is_err()
            && toml::from_str::<Leg>("kind = \"pause\"\nduration_ns = 5").unwrap() == Leg::Pause { duration_ns: 5 }
    }

    /// Sample mean, standard deviation and the correlation of `a` with `b`.
    fn correlation(a: &[f64], b: &[f64]) -> f64 {
        let n = a.len() as f64;
        let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
        let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
        let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
        let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
        cov / (va * vb).sqrt()
    }

    fn std_dev(a: &[f64]) -> f64 {
        let n = a.len() as f64;
        let m = a.iter().sum::<f64>() / n;
        (a.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    }

    /// Per-site series along 200 km sampled every 5 m (25 m/s, every 0.2 s), UMa NLOS (6 dB, 50 m).
    fn long_drive(seed: u64, sites: &[&str], c: f64) -> Vec<Vec<f64>> {
        let route = Route::straight((-100_000.0, 0.0), (100_000.0, 0.0), 25.0).unwrap();
        let defaults = PathLoss::default().shadowing().unwrap();
        assert_eq!((defaults.sigma_db, defaults.decorrelation_m), (6.0, 50.0));
        let mut sh = RouteShadowing::with_defaults(seed, "test/shadow", sites, defaults, c).unwrap();
        let mut series = vec![Vec::new(); sites.len()];
        let mut t = 0;
        while t <= route.end_time() {
            let v = sh.advance_along(&route, t).unwrap();
            series.iter_mut().zip(v).for_each(|(s, &x)| s.push(x));
            t += S / 5;
        }
        assert_eq!(series[0].len(), 40_001);
        series
    }

    #[test]
    fn shadowing_has_the_gudmundson_statistics() {
        let series = long_drive(11, &["a", "b"], 0.5);
        let a = &series[0];
        let lag = 10; // 50 m = d_corr
        let r = correlation(&a[..a.len() - lag], &a[lag..]);
        println!("autocorrelation at d_corr: {r:.4} (e^-1 = {:.4})", (-1.0f64).exp());
        assert!((r - (-1.0f64).exp()).abs() < 0.05, "autocorrelation {r}");
        let r1 = correlation(&a[..a.len() - 1], &a[1..]);
        println!("autocorrelation at 5 m: {r1:.4} (expected {:.4})", (-0.1f64).exp());
        assert!((r1 - (-0.1f64).exp()).abs() < 0.02, "lag-1 autocorrelation {r1}");
        for s in &series {
            let sd = std_dev(s);
            println!("std: {sd:.4} dB (sigma 6)");
            assert!((sd / 6.0 - 1.0).abs() < 0.05, "std {sd}");
        }
        let cross = correlation(&series[0], &series[1]);
        println!("inter-site correlation: {cross:.4} (c = 0.5)");
        assert!((cross - 0.5).abs() < 0.05, "inter-site correlation {cross}");
        let independent = long_drive(11, &["a", "b"], 0.0);
        let cross0 = correlation(&independent[0], &independent[1]);
        println!("inter-site correlation with c = 0: {cross0:.4}");
        assert!(cross0.abs() < 0.05, "c = 0 correlation {cross0}");
    }

    #[test]
    fn shadowing_is_frozen_while_paused() {
        let moving = Route::straight((0.0, 0.0), (200.0, 0.0), 10.0).unwrap();
        let pausing = Route::new(
            (0.0, 0.0),
            vec![Leg::Move { to: (100.0, 0.0), speed_mps: 10.0 }, Leg::Pause { duration_ns: 30 * S }, Leg::Move { to: (200.0, 0.0), speed_mps: 10.0 }],
        )
        .unwrap();
        let new = || RouteShadowing::new(3, "test/pause", &["x", "y"], 6.0, 50.0, 0.5).unwrap();
        let (mut m, mut p) = (new(), new());
        // Up to the pause, the same.
        for k in 0..=10 {
            assert_eq!(m.advance_along(&moving, k * S).unwrap(), p.advance_along(&pausing, k * S).unwrap());
        }
        let at_stop = p.values().to_vec();
        for k in 10..=40 {
            assert_eq!(p.advance_along(&pausing, k * S).unwrap(), &at_stop[..], "changed at {k} s in the pause");
        }
        // After the pause, the same as without it at the same distances (up to the rounding of
        // the distances, which are interpolated within different legs).
        for k in 11..=20 {
            let (a, b) = (m.advance_along(&moving, k * S).unwrap().to_vec(), p.advance_along(&pausing, (k + 30) * S).unwrap());
            assert!(a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9), "{a:?} vs {b:?} at {k} s of motion");
        }
        assert_eq!(p.distance_m(), 200.0);
    }

    fn first_values(seed: u64, sites: &[&str]) -> Vec<Vec<f64>> {
        let mut sh = RouteShadowing::new(seed, "test/seed", sites, 8.0, 37.0, 0.5).unwrap();
        (0..50).map(|k| sh.advance_to(k as f64 * 7.5).unwrap().to_vec()).collect()
    }

    #[test]
    fn shadowing_is_reproducible_and_per_site() {
        let a = first_values(5, &["s0", "s1"]);
        assert_eq!(a, first_values(5, &["s0", "s1"]));
        let other = first_values(6, &["s0", "s1"]);
        assert!(a.iter().zip(&other).all(|(x, y)| x[0] != y[0] && x[1] != y[1]));
        let three = first_values(5, &["s0", "s1", "s2"]);
        for (two, three) in a.iter().zip(&three) {
            assert_eq!(&two[..], &three[..2]);
        }
        // A site's values follow its key, not its place in the list.
        let reordered = first_values(5, &["s1", "s0"]);
        assert!(a.iter().zip(&reordered).all(|(x, y)| x[0] == y[1] && x[1] == y[0]));
    }

    #[test]
    fn bad_shadowing_parameters_name_the_field() {
        let msg = |r: Result<RouteShadowing, RadioError>| r.unwrap_err().to_string();
        let sites = ["a", "b"];
        assert!(msg(RouteShadowing::new(1, "l", &sites, 25.0, 50.0, 0.5)).starts_with("route_shadowing.sigma_db = 25: must be in [0, 20] dB"));
        assert!(msg(RouteShadowing::new(1, "l", &sites, f64::NAN, 50.0, 0.5)).starts_with("route_shadowing.sigma_db"));
        assert!(msg(RouteShadowing::new(1, "l", &sites, 6.0, 0.0, 0.5)).starts_with("route_shadowing.decorrelation_m = 0"));
        assert!(msg(RouteShadowing::new(1, "l", &sites, 6.0, 50.0, 1.5)).starts_with("route_shadowing.inter_site_correlation = 1.5: must be in [0, 1]"));
        assert!(msg(RouteShadowing::new(1, "l", &["a", "b", "a"], 6.0, 50.0, 0.5)).starts_with("route_shadowing.sites[2]: \"a\" is also sites[0]"));
        let mut sh = RouteShadowing::new(1, "l", &sites, 6.0, 50.0, 0.5).unwrap();
        sh.advance_to(100.0).unwrap();
        let back = sh.advance_to(99.0).unwrap_err().to_string();
        assert!(back.starts_with("route_shadowing.distance_m: is 99 m, behind"), "{back}");
        assert!(sh.advance_to(f64::NAN).unwrap_err().to_string().starts_with("route_shadowing.distance_m = NaN"));
        assert_eq!(sh.distance_m(), 100.0);
        let none: [&str; 0] = [];
        assert!(RouteShadowing::new(1, "l", &none, 6.0, 50.0, 0.5).unwrap().advance_to(10.0).unwrap().is_empty());
        // σ = 0: no shadowing.
        let mut flat = RouteShadowing::new(1, "l", &sites, 0.0, 50.0, 0.5).unwrap();
        assert_eq!(flat.advance_to(10.0).unwrap(), &[0.0, 0.0]);
    }

    #[test]
    fn doppler_is_v_f_over_c() {
        let f = max_doppler_hz(kmh(50.0), 3500.0).unwrap();
        println!("Doppler at 50 km/h, 3.5 GHz: {f:.3} Hz");
        assert!((f - 162.15).abs() < 0.01, "{f}");
        assert_eq!(max_doppler_hz(0.0, 3500.0).unwrap(), 0.0);
        assert!(max_doppler_hz(-1.0, 3500.0).unwrap_err().to_string().starts_with("speed_mps = -1"));
        assert!(max_doppler_hz(10.0, 0.0).unwrap_err().to_string().starts_with("carrier_mhz = 0"));
        assert!(max_doppler_hz(10.0, f64::NAN).is_err());
    }
}
