//! Frequency-selective fading by a tapped delay line: the E-UTRA multipath profiles of 3GPP
//! TS 36.104 Annex B.2 (the same as TS 36.101 Annex B.2.1), Extended Pedestrian A (EPA),
//! Extended Vehicular A (EVA) and Extended Typical Urban (ETU).
//!
//! * Table B.2-1: the profiles' tap counts, r.m.s. delay spreads (EPA 43 ns, EVA 357 ns,
//!   ETU 991 ns) and maximum excess delays (410, 2510, 5000 ns).
//! * Tables B.2-2, B.2-3, B.2-4: each tap's excess delay (ns) and relative power (dB), for
//!   EPA, EVA and ETU.
//!
//! Each tap l is an independent time-correlated Rayleigh process h_l(t) with the classical
//! (Jakes) Doppler spectrum ([`RayleighFading`], unit mean power), weighted by the tap's power
//! p_l, the table's powers normalised so that Σ p_l = 1. The channel at resource block k, at
//! its centre frequency offset f_k = (k − (N_RB − 1)/2) · 180 kHz from the carrier, is
//!
//! H_k(t) = Σ_l √p_l · h_l(t) · e^{−j2π f_k τ_l},
//!
//! and its power gain |H_k(t)|². Over realisations E|H_k|² = 1, H_k is circular complex
//! Gaussian (|H_k|² exponential), E[H_k(t) H_k*(t + τ)] = J₀(2π f_d τ) as for one tap, and two
//! frequencies Δf apart are correlated as E[H(f + Δf) H*(f)] = Σ_l p_l e^{−j2π Δf τ_l}
//! ([`TdlProfile::frequency_correlation`]). One value per RB (taken at its centre); single
//! antenna at both ends (no spatial correlation, no MIMO).
//!
//! The table √p_l · e^{−j2π f_k τ_l} is computed once, so a TTI costs taps × sinusoids cosines
//! (rotations of the phasors, TTI after TTI: [`TdlFading::gains_db_at_tti`]) and N_RB × taps
//! complex multiply-adds, without allocating.

use std::f64::consts::PI;
use std::ops::Range;

use multiconn_core::rng::RngStream;
use multiconn_radio::units::ratio_to_db;

use crate::channel::RB_BANDWIDTH_HZ;
use crate::error::CellError;
use crate::fading::{Grid, Phasors, RayleighFading};
use crate::sched::TTI_S;

/// The most taps of any profile (EVA and ETU: 9).
pub const MAX_TAPS: usize = 9;

/// One tap of a delay profile: excess delay (ns) and relative power (dB), as the table gives
/// them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tap {
    /// Excess tap delay, ns.
    pub delay_ns: f64,
    /// Relative power, dB.
    pub power_db: f64,
}

const fn tap(delay_ns: f64, power_db: f64) -> Tap {
    Tap { delay_ns, power_db }
}

/// TS 36.104 Table B.2-2: Extended Pedestrian A model (EPA).
const EPA: [Tap; 7] = [tap(0.0, 0.0), tap(30.0, -1.0), tap(70.0, -2.0), tap(90.0, -3.0), tap(110.0, -8.0), tap(190.0, -17.2), tap(410.0, -20.8)];

/// TS 36.104 Table B.2-3: Extended Vehicular A model (EVA).
const EVA: [Tap; 9] = [
    tap(0.0, 0.0),
    tap(30.0, -1.5),
    tap(150.0, -1.4),
    tap(310.0, -3.6),
    tap(370.0, -0.6),
    tap(710.0, -9.1),
    tap(1090.0, -7.0),
    tap(1730.0, -12.0),
    tap(2510.0, -16.9),
];

/// TS 36.104 Table B.2-4: Extended Typical Urban model (ETU).
const ETU: [Tap; 9] = [
    tap(0.0, -1.0),
    tap(50.0, -1.0),
    tap(120.0, -1.0),
    tap(200.0, 0.0),
    tap(230.0, 0.0),
    tap(500.0, 0.0),
    tap(1600.0, -3.0),
    tap(2300.0, -5.0),
    tap(5000.0, -7.0),
];

/// A TS 36.104 Annex B.2 multipath profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TdlProfile {
    /// Extended Pedestrian A: 7 taps, 43 ns r.m.s. delay spread.
    Epa,
    /// Extended Vehicular A: 9 taps, 357 ns.
    Eva,
    /// Extended Typical Urban: 9 taps, 991 ns.
    Etu,
}

impl TdlProfile {
    /// Every profile, in the table's order.
    pub const ALL: [TdlProfile; 3] = [TdlProfile::Epa, TdlProfile::Eva, TdlProfile::Etu];

    /// The profile's name in lower case: `epa`, `eva`, `etu`.
    pub fn name(self) -> &'static str {
        match self {
            TdlProfile::Epa => "epa",
            TdlProfile::Eva => "eva",
            TdlProfile::Etu => "etu",
        }
    }

    /// The profile called `name` (`epa`, `eva` or `etu`, any case).
    pub fn from_name(name: &str) -> Option<TdlProfile> {
        TdlProfile::ALL.into_iter().find(|p| p.name().eq_ignore_ascii_case(name))
    }

    /// The taps as Tables B.2-2 to B.2-4 give them.
    pub fn taps(self) -> &'static [Tap] {
        match self {
            TdlProfile::Epa => &EPA,
            TdlProfile::Eva => &EVA,
            TdlProfile::Etu => &ETU,
        }
    }

    /// The r.m.s. delay spread Table B.2-1 states, ns (43, 357, 991).
    pub fn stated_rms_delay_spread_ns(self) -> f64 {
        match self {
            TdlProfile::Epa => 43.0,
            TdlProfile::Eva => 357.0,
            TdlProfile::Etu => 991.0,
        }
    }

    /// The taps' linear powers normalised to sum 1, in the table's order (the first
    /// `taps().len()` entries; the rest 0).
    pub fn powers(self) -> [f64; MAX_TAPS] {
        let mut p = [0.0; MAX_TAPS];
        for (slot, t) in p.iter_mut().zip(self.taps()) {
            *slot = 10f64.powf(t.power_db / 10.0);
        }
        let total: f64 = p.iter().sum();
        p.iter_mut().for_each(|v| *v /= total);
        p
    }

    /// The r.m.s. delay spread computed from the taps, ns: √(Σ p_l τ_l² − (Σ p_l τ_l)²).
    pub fn rms_delay_spread_ns(self) -> f64 {
        let p = self.powers();
        let mean: f64 = self.taps().iter().zip(&p).map(|(t, p)| p * t.delay_ns).sum();
        let second: f64 = self.taps().iter().zip(&p).map(|(t, p)| p * t.delay_ns * t.delay_ns).sum();
        (second - mean * mean).max(0.0).sqrt()
    }

    /// The normalised frequency correlation R(Δf) = E[H(f + Δf)·H*(f)] / E|H|² =
    /// Σ_l p_l e^{−j2π Δf τ_l} at a separation of `df_hz`, as (real, imaginary).
    pub fn frequency_correlation(self, df_hz: f64) -> (f64, f64) {
        let p = self.powers();
        self.taps().iter().zip(&p).fold((0.0, 0.0), |(re, im), (t, p)| {
            let phase = -2.0 * PI * df_hz * t.delay_ns * 1e-9;
            (re + p * phase.cos(), im + p * phase.sin())
        })
    }
}

/// Frequency-selective fading over `n_rb` resource blocks from a [`TdlProfile`].
#[derive(Clone, Debug)]
pub struct TdlFading {
    profile: TdlProfile,
    taps: Vec<RayleighFading>,
    n_rb: usize,
    /// The real parts of the weights √p_l · e^{−j2π f_k τ_l}, tap by tap: entry l·N_RB + k.
    /// Tap-major, so that one tap's contribution to a run of RBs is one pass over contiguous
    /// memory (which the compiler vectorises) while each RB still adds its taps in order.
    weights_re: Vec<f64>,
    /// Their imaginary parts, laid out as `weights_re`.
    weights_im: Vec<f64>,
    /// Every tap's sinusoids in tap order, their phasors TTI by TTI.
    phasors: Phasors,
}

impl TdlFading {
    /// The profile's fading over `n_rb` (1..=110) RBs, every tap with maximum Doppler
    /// `doppler_hz` and `sinusoids` sinusoids, drawn from `rng` in tap order.
    pub fn new(profile: TdlProfile, n_rb: usize, doppler_hz: f64, sinusoids: usize, rng: &mut RngStream) -> Result<TdlFading, CellError> {
        if !(1..=110).contains(&n_rb) {
            return Err(CellError::out_of_range("fading.n_rb", n_rb as f64, "an integer in [1, 110]"));
        }
        TdlFading::on_grid(profile, Grid { n_rb, rb_hz: RB_BANDWIDTH_HZ, slot_s: TTI_S }, doppler_hz, sinusoids, rng)
    }

    /// As [`TdlFading::new`] over any resource grid: the channel of each block at its centre,
    /// f_k = (k − (N_RB − 1)/2) · block width.
    pub fn on_grid(profile: TdlProfile, grid: Grid, doppler_hz: f64, sinusoids: usize, rng: &mut RngStream) -> Result<TdlFading, CellError> {
        let Grid { n_rb, rb_hz, slot_s } = grid.checked()?;
        let taps = profile.taps();
        let processes = taps.iter().map(|_| RayleighFading::new(doppler_hz, sinusoids, rng)).collect::<Result<Vec<_>, _>>()?;
        let p = profile.powers();
        let centre = (n_rb as f64 - 1.0) / 2.0;
        let (mut weights_re, mut weights_im) = (vec![0.0; n_rb * taps.len()], vec![0.0; n_rb * taps.len()]);
        for k in 0..n_rb {
            let f_k = (k as f64 - centre) * rb_hz;
            for (l, (t, p)) in taps.iter().zip(&p).enumerate() {
                let phase = -2.0 * PI * f_k * t.delay_ns * 1e-9;
                let a = p.sqrt();
                weights_re[l * n_rb + k] = a * phase.cos();
                weights_im[l * n_rb + k] = a * phase.sin();
            }
        }
        let phasors = Phasors::new(processes.iter().flat_map(|p| p.terms().iter().copied()).collect(), slot_s);
        Ok(TdlFading { profile, taps: processes, n_rb, weights_re, weights_im, phasors })
    }

    /// The profile.
    pub fn profile(&self) -> TdlProfile {
        self.profile
    }

    /// Number of resource blocks.
    pub fn n_rb(&self) -> usize {
        self.n_rb
    }

    fn check(&self, len: usize) -> Result<(), CellError> {
        if len == self.n_rb {
            Ok(())
        } else {
            Err(CellError::invalid("out", format!("{len} values for {} resource blocks", self.n_rb)))
        }
    }

    /// Calls `each(k, re, im)` with H_k(t_s) for every RB k.
    fn for_each_rb(&self, t_s: f64, each: impl FnMut(usize, f64, f64)) {
        self.for_each_rb_in(t_s, 0..self.n_rb, each)
    }

    /// Calls `each(k, re, im)` with H_k(t_s) for every RB k in `rbs`; the taps are not
    /// evaluated when `rbs` is empty.
    fn for_each_rb_in(&self, t_s: f64, rbs: Range<usize>, each: impl FnMut(usize, f64, f64)) {
        if rbs.is_empty() {
            return;
        }
        let mut h = [(0.0, 0.0); MAX_TAPS];
        for (slot, tap) in h.iter_mut().zip(&self.taps) {
            *slot = tap.coefficient(t_s);
        }
        self.combine(&h, rbs, each);
    }

    /// The power gain in dB of the RBs `rbs` at the start of TTI `n` (`t_s` seconds), into
    /// those entries of `out`, the taps' phasors advanced from the TTI before
    /// (see [`crate::fading`]); for a caller asking TTI after TTI.
    pub fn gains_db_at_tti(&mut self, n: u64, t_s: f64, rbs: Range<usize>, out: &mut [f64]) -> Result<(), CellError> {
        self.check(out.len())?;
        if rbs.end > self.n_rb {
            return Err(CellError::invalid("rbs", format!("blocks {}..{} of {}", rbs.start, rbs.end, self.n_rb)));
        }
        if rbs.is_empty() {
            return Ok(());
        }
        let cos = self.phasors.advance_to(n, t_s);
        let mut h = [(0.0, 0.0); MAX_TAPS];
        let mut start = 0;
        for (slot, tap) in h.iter_mut().zip(&self.taps) {
            let m = tap.terms().len();
            *slot = tap.coefficient_from(&cos[start..start + m]);
            start += m;
        }
        self.combine(&h, rbs, |k, re, im| out[k] = ratio_to_db(re * re + im * im));
        Ok(())
    }

    /// Calls `each(k, re, im)` with H_k = Σ_l h_l · w_kl for every RB k in `rbs`, from the taps'
    /// gains `h`.
    /// Each RB's sum runs over the taps in order, as written (`re += hr·wr − hi·wi`), so the
    /// result is the same to the bit whichever way the loops are nested; they run tap by tap
    /// over blocks of RBs.
    fn combine(&self, h: &[(f64, f64); MAX_TAPS], rbs: Range<usize>, mut each: impl FnMut(usize, f64, f64)) {
        const BLOCK: usize = 64;
        let n = self.taps.len();
        let mut start = rbs.start;
        while start < rbs.end {
            let end = (start + BLOCK).min(rbs.end);
            let len = end - start;
            let (mut re, mut im) = ([0.0; BLOCK], [0.0; BLOCK]);
            let (re, im) = (&mut re[..len], &mut im[..len]);
            for (l, &(hr, hi)) in h[..n].iter().enumerate() {
                let row = l * self.n_rb + start;
                let (wr, wi) = (&self.weights_re[row..row + len], &self.weights_im[row..row + len]);
                for k in 0..len {
                    re[k] += hr * wr[k] - hi * wi[k];
                    im[k] += hr * wi[k] + hi * wr[k];
                }
            }
            for (j, (&r, &i)) in re.iter().zip(im.iter()).enumerate() {
                each(start + j, r, i);
            }
            start = end;
        }
    }

    /// The complex channel H_k(t) of every RB at `t_s` seconds, as (real, imaginary), into
    /// `out` (its length must be the number of RBs).
    pub fn channel(&self, t_s: f64, out: &mut [(f64, f64)]) -> Result<(), CellError> {
        self.check(out.len())?;
        self.for_each_rb(t_s, |k, re, im| out[k] = (re, im));
        Ok(())
    }

    /// The power gain |H_k(t)|² (linear, mean 1) of every RB at `t_s` seconds, into `out`.
    pub fn power_gains(&self, t_s: f64, out: &mut [f64]) -> Result<(), CellError> {
        self.check(out.len())?;
        self.for_each_rb(t_s, |k, re, im| out[k] = re * re + im * im);
        Ok(())
    }

    /// The power gain in dB of every RB at `t_s` seconds, into `out`.
    pub fn gains_db(&self, t_s: f64, out: &mut [f64]) -> Result<(), CellError> {
        self.gains_db_in(t_s, 0..self.n_rb, out)
    }

    /// The power gain in dB of the RBs `rbs` at `t_s` seconds, into those entries of `out`
    /// (whose length must be the number of RBs).
    pub fn gains_db_in(&self, t_s: f64, rbs: Range<usize>, out: &mut [f64]) -> Result<(), CellError> {
        self.check(out.len())?;
        if rbs.end > self.n_rb {
            return Err(CellError::invalid("rbs", format!("blocks {}..{} of {}", rbs.start, rbs.end, self.n_rb)));
        }
        self.for_each_rb_in(t_s, rbs, |k, re, im| out[k] = ratio_to_db(re * re + im * im));
        Ok(())
    }
}
