//! The geometry of a synthetic drive: the route (a straight line driven at a speed, with
//! optional stops) and each operator's sites (a hexagonal lattice, randomly rotated and
//! translated, kept within range of the route, some moved onto another operator's masts).

use multiconn_core::RngStream;

use super::{DriveConfig, StopAndGo};

/// The route, one sample per second.
pub(crate) struct Route {
    /// Unit vector of the heading.
    pub dir: (f64, f64),
    /// Distance driven at each second, m.
    pub s: Vec<f64>,
    /// Speed at each second, m/s.
    pub speed: Vec<f64>,
}

impl Route {
    pub fn build(config: &DriveConfig, seed: u64) -> Route {
        let heading = config.heading_deg.to_radians();
        let v = config.speed_kmh / 3.6;
        let n = config.duration_s as usize;
        let mut rng = RngStream::derive(seed, "radio/drive/route");
        let mut s = Vec::with_capacity(n);
        let mut speed = Vec::with_capacity(n);
        let (mut pos, mut since_stop, mut stopped_for) = (0.0, 0.0, 0u32);
        for _ in 0..n {
            s.push(pos);
            let moving = stopped_for == 0;
            if !moving {
                stopped_for -= 1;
            }
            let vi = if moving { v } else { 0.0 };
            speed.push(vi);
            pos += vi;
            since_stop += vi;
            if let Some(StopAndGo { every_m, min_stop_s, max_stop_s }) = config.stop_and_go {
                if moving && since_stop >= every_m {
                    since_stop = 0.0;
                    let span = (max_stop_s - min_stop_s + 1) as f64;
                    stopped_for = min_stop_s + (rng.uniform() * span).floor() as u32;
                }
            }
        }
        Route { dir: (heading.cos(), heading.sin()), s, speed }
    }

    /// Position at second `i`.
    pub fn position(&self, i: usize) -> (f64, f64) {
        (self.dir.0 * self.s[i], self.dir.1 * self.s[i])
    }

    pub fn length(&self) -> f64 {
        self.s.last().copied().unwrap_or(0.0)
    }
}

/// One site of one operator.
#[derive(Clone, Debug)]
pub(crate) struct Site {
    /// Index within its operator, in order along the route.
    pub index: usize,
    pub x: f64,
    pub y: f64,
    /// Projection on the route, m.
    pub along: f64,
    /// Azimuth of sector 0, degrees.
    pub azimuth0_deg: f64,
    /// Label of the shadowing process (the physical site).
    pub shadow_key: String,
    /// Which of the operator's carriers the site has.
    pub carriers: Vec<bool>,
}

/// Each operator's sites within range of the route, sorted along it.
pub(crate) fn sites(config: &DriveConfig, route: &Route, seed: u64) -> Vec<Vec<Site>> {
    let mut all: Vec<Vec<Site>> = config
        .operators
        .iter()
        .map(|op| {
            let mut rng = RngStream::derive(seed, &format!("radio/drive/layout/{}", op.name));
            let rotation = rng.uniform() * 60.0;
            let (u, v) = (rng.uniform(), rng.uniform());
            let range = config.site_range_isd * op.isd_m;
            let points = lattice_near_route(op.isd_m, rotation, (u, v), route, range);
            points
                .into_iter()
                .enumerate()
                .map(|(index, (x, y, along))| Site {
                    index,
                    x,
                    y,
                    along,
                    azimuth0_deg: rotation + 30.0,
                    shadow_key: format!("{}/{index}", op.name),
                    carriers: Vec::new(),
                })
                .collect()
        })
        .collect();

    // Site sharing: a fraction of every later operator's sites moves onto the first operator's
    // nearest free mast (within one inter-site distance).
    if all.len() > 1 && config.site_sharing > 0.0 {
        let (first, rest) = all.split_at_mut(1);
        let host = &first[0];
        for (o, sites) in rest.iter_mut().enumerate() {
            let op = &config.operators[o + 1];
            let mut rng = RngStream::derive(seed, &format!("radio/drive/share/{}", op.name));
            let mut taken = vec![false; host.len()];
            for site in sites.iter_mut() {
                if rng.uniform() >= config.site_sharing {
                    continue;
                }
                let nearest = host
                    .iter()
                    .filter(|h| !taken[h.index])
                    .map(|h| (h, (h.x - site.x).hypot(h.y - site.y)))
                    .filter(|(_, d)| *d <= op.isd_m)
                    .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.index.cmp(&b.0.index)));
                if let Some((h, _)) = nearest {
                    taken[h.index] = true;
                    site.x = h.x;
                    site.y = h.y;
                    site.along = h.along;
                    if config.shared_sites_share_shadowing {
                        site.shadow_key = h.shadow_key.clone();
                    }
                }
            }
            sites.sort_by(|a, b| a.along.total_cmp(&b.along).then(a.index.cmp(&b.index)));
        }
    }

    // Carriers: each site has a carrier with that carrier's site fraction, one stream per
    // (operator, carrier) so that adding a carrier changes no other carrier's sites.
    for (o, op) in config.operators.iter().enumerate() {
        let mut by_index: Vec<usize> = (0..all[o].len()).collect();
        by_index.sort_by_key(|&i| all[o][i].index);
        for s in &by_index {
            all[o][*s].carriers = vec![false; op.carriers.len()];
        }
        for (c, carrier) in op.carriers.iter().enumerate() {
            let mut rng = RngStream::derive(seed, &format!("radio/drive/equip/{}/{}", op.name, carrier.earfcn));
            for &s in &by_index {
                all[o][s].carriers[c] = rng.uniform() < carrier.site_fraction;
            }
        }
    }
    all
}

/// Points of a hexagonal lattice (spacing `isd`, rotated by `rotation_deg`, translated by
/// `offset` lattice cells) within `range` of the route segment, as (x, y, along), sorted along
/// the route.
fn lattice_near_route(isd: f64, rotation_deg: f64, offset: (f64, f64), route: &Route, range: f64) -> Vec<(f64, f64, f64)> {
    let r = rotation_deg.to_radians();
    let a1 = (isd * r.cos(), isd * r.sin());
    let a2 = (isd * (r + std::f64::consts::FRAC_PI_3).cos(), isd * (r + std::f64::consts::FRAC_PI_3).sin());
    let origin = (offset.0 * a1.0 + offset.1 * a2.0, offset.0 * a1.1 + offset.1 * a2.1);
    let len = route.length();
    let end = (route.dir.0 * len, route.dir.1 * len);
    let (xmin, xmax) = (0f64.min(end.0) - range, 0f64.max(end.0) + range);
    let (ymin, ymax) = (0f64.min(end.1) - range, 0f64.max(end.1) + range);
    // Lattice coordinates of the bounding box's corners bound the indices to visit.
    let det = a1.0 * a2.1 - a1.1 * a2.0;
    let to_lattice = |x: f64, y: f64| {
        let (dx, dy) = (x - origin.0, y - origin.1);
        ((dx * a2.1 - dy * a2.0) / det, (a1.0 * dy - a1.1 * dx) / det)
    };
    let corners = [to_lattice(xmin, ymin), to_lattice(xmin, ymax), to_lattice(xmax, ymin), to_lattice(xmax, ymax)];
    let imin = corners.iter().map(|c| c.0).fold(f64::INFINITY, f64::min).floor() as i64 - 1;
    let imax = corners.iter().map(|c| c.0).fold(f64::NEG_INFINITY, f64::max).ceil() as i64 + 1;
    let jmin = corners.iter().map(|c| c.1).fold(f64::INFINITY, f64::min).floor() as i64 - 1;
    let jmax = corners.iter().map(|c| c.1).fold(f64::NEG_INFINITY, f64::max).ceil() as i64 + 1;
    let mut out = Vec::new();
    for i in imin..=imax {
        for j in jmin..=jmax {
            let x = origin.0 + i as f64 * a1.0 + j as f64 * a2.0;
            let y = origin.1 + i as f64 * a1.1 + j as f64 * a2.1;
            let along = x * route.dir.0 + y * route.dir.1;
            let t = along.clamp(0.0, len);
            let d = (x - route.dir.0 * t).hypot(y - route.dir.1 * t);
            if d <= range {
                out.push((x, y, along));
            }
        }
    }
    out.sort_by(|a, b| a.2.total_cmp(&b.2).then(a.0.total_cmp(&b.0)).then(a.1.total_cmp(&b.1)));
    out
}
