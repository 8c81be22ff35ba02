//! Time-correlated flat Rayleigh fading by a sum of sinusoids, in the manner of Zheng & Xiao
//! (Y. R. Zheng, C. Xiao, "Simulation models with correct statistical properties for Rayleigh
//! fading channels", IEEE Trans. Commun. 51(6), 2003): the classical Jakes (Clarke) spectrum.
//!
//! One process is
//!
//! h(t) = √(2/M) · Σₙ e^{jψₙ} · cos(2π f_d t · cos αₙ + φₙ),  αₙ = (2πn − π + θ) / (4M),
//!
//! n = 1..M, with θ uniform on [−π, π) and ψₙ, φₙ uniform on [0, 2π), from a seeded stream. Over realisations
//! E|h|² = 1, h tends to a circular complex Gaussian (so |h| is Rayleigh and |h|² exponential),
//! and E[h(t)·h*(t + τ)] = (1/M)·Σₙ cos(2π f_d τ cos αₙ) → J₀(2π f_d τ). Over one long
//! realisation the time-mean power also tends to 1.
//!
//! [`RicianFading`] adds a line-of-sight component (Rician fading, K-factor K): h(t) =
//! √(K/(K+1))·e^{j(2π f_d cos θ₀ t + φ₀)} + √(1/(K+1))·h_R(t), with h_R one of the Rayleigh
//! processes above and the line of sight's angle of arrival θ₀ and phase φ₀ uniform, drawn
//! after h_R's. E|h|² = 1 and Var|h|² = (2K+1)/(K+1)² (1 for Rayleigh, K = 0; Greenstein,
//! Michelson, Erceg, "Moment-method estimation of the Ricean K-factor", IEEE Commun. Lett.
//! 3(6), 1999).
//!
//! [`CellFading`] gives a power gain per resource block: one process for the whole band (flat),
//! an independent process per RB (frequency-selective with no correlation between RBs), or a
//! TS 36.104 tapped delay line (EPA, EVA, ETU: [`crate::tdl`]), whose RBs are correlated as the
//! profile's delays dictate. Times are in seconds, Doppler in Hz.
//!
//! A cell asks for the gains TTI after TTI ([`CellFading::gains_db_at_tti`]): the Rayleigh
//! processes' and the tapped delay lines' sinusoids'
//! phasors (cos θₙ, sin θₙ) are then advanced by one rotation per TTI (`Phasors`) instead of
//! a cosine each, and worked out afresh from θₙ = 2π f_d cos αₙ · t + φₙ after a gap and every
//! [`PHASOR_ANCHOR_TTIS`] TTIs, so the rounding of the rotations never builds up (the gains
//! stay within 10⁻⁹ dB of the direct evaluation).

use std::ops::Range;
use std::f64::consts::PI;

use multiconn_core::rng::RngStream;
use multiconn_radio::units::ratio_to_db;

use crate::error::{check_range, CellError};
use crate::channel::RB_BANDWIDTH_HZ;
use crate::sched::TTI_S;
use crate::tdl::{TdlFading, TdlProfile};

/// Speed of light, in m/s.
const SPEED_OF_LIGHT_MPS: f64 = 299_792_458.0;

/// The default number of sinusoids per process.
pub const DEFAULT_SINUSOIDS: usize = 16;

/// Maximum Doppler shift in Hz of a receiver moving at `speed_mps` (m/s) on a carrier of
/// `carrier_hz` (Hz): v·f_c / c. 3 km/h at 1.93 GHz gives 5.36 Hz, the Doppler of ns-3's
/// `JakesPropagationLossModel` default.
pub fn doppler_hz(speed_mps: f64, carrier_hz: f64) -> f64 {
    speed_mps * carrier_hz / SPEED_OF_LIGHT_MPS
}

/// How many TTIs the phasors are advanced by rotation before being worked out afresh.
pub const PHASOR_ANCHOR_TTIS: u32 = 1000;

/// The phasors of a set of sinusoids (each `[ω, φ, ·, ·]` as [`RayleighFading`] keeps them) at
/// one TTI: cos θₙ and sin θₙ for θₙ = ω t + φ, t the TTI's start. From one TTI to the next each
/// phasor turns by ω · 1 ms (a complex multiplication); the first TTI, a TTI after a gap and
/// every [`PHASOR_ANCHOR_TTIS`]-th are evaluated directly.
#[derive(Clone, Debug)]
pub(crate) struct Phasors {
    /// The sinusoids, `[ω, φ, ·, ·]` each.
    terms: Vec<[f64; 4]>,
    /// The TTI the phasors are at, once evaluated.
    tti: Option<u64>,
    /// Rotations since the last direct evaluation.
    since_anchor: u32,
    cos: Vec<f64>,
    sin: Vec<f64>,
    /// Per sinusoid: (cos ω·1 ms, sin ω·1 ms).
    turn: Vec<(f64, f64)>,
}

impl Phasors {
    /// The phasors of `terms`, not yet evaluated, advanced by `step_s` seconds (the TTI or
    /// slot) from one index to the next.
    pub(crate) fn new(terms: Vec<[f64; 4]>, step_s: f64) -> Phasors {
        let turn = terms.iter().map(|&[w, ..]| ((w * step_s).cos(), (w * step_s).sin())).collect();
        Phasors { terms, tti: None, since_anchor: 0, cos: Vec::new(), sin: Vec::new(), turn }
    }

    /// The phasors at TTI `n` (`t_s` its start in seconds): cos θₙ in order.
    pub(crate) fn advance_to(&mut self, n: u64, t_s: f64) -> &[f64] {
        match self.tti {
            Some(last) if last == n => {}
            Some(last) if last + 1 == n && self.since_anchor < PHASOR_ANCHOR_TTIS => {
                for ((c, s), &(tc, ts)) in self.cos.iter_mut().zip(&mut self.sin).zip(&self.turn) {
                    let (c0, s0) = (*c, *s);
                    *c = c0 * tc - s0 * ts;
                    *s = s0 * tc + c0 * ts;
                }
                self.since_anchor += 1;
            }
            _ => {
                self.cos.clear();
                self.sin.clear();
                for &[w, phi, ..] in &self.terms {
                    let (s, c) = (w * t_s + phi).sin_cos();
                    self.cos.push(c);
                    self.sin.push(s);
                }
                self.since_anchor = 0;
            }
        }
        self.tti = Some(n);
        &self.cos
    }
}

/// One time-correlated flat Rayleigh fading process (complex gain with unit mean power).
#[derive(Clone, Debug)]
pub struct RayleighFading {
    /// Per sinusoid: angular frequency 2π f_d cos αₙ (rad/s), phase φₙ, and the weights
    /// √(2/M)·cos ψₙ and √(2/M)·sin ψₙ.
    terms: Vec<[f64; 4]>,
}

impl RayleighFading {
    /// A process with maximum Doppler `doppler_hz` (0..=2000 Hz; 0 gives a constant gain) from
    /// `sinusoids` sinusoids (4..=256), its phases drawn from `rng`.
    pub fn new(doppler_hz: f64, sinusoids: usize, rng: &mut RngStream) -> Result<RayleighFading, CellError> {
        check_range("fading.doppler_hz", doppler_hz, 0.0, 2000.0, "Hz")?;
        if !(4..=256).contains(&sinusoids) {
            return Err(CellError::out_of_range("fading.sinusoids", sinusoids as f64, "an integer in [4, 256]"));
        }
        let m = sinusoids as f64;
        let theta = 2.0 * PI * rng.uniform() - PI;
        let weight = (2.0 / m).sqrt();
        let terms = (1..=sinusoids)
            .map(|n| {
                let alpha = (2.0 * PI * n as f64 - PI + theta) / (4.0 * m);
                let psi = 2.0 * PI * rng.uniform();
                let phi = 2.0 * PI * rng.uniform();
                [2.0 * PI * doppler_hz * alpha.cos(), phi, weight * psi.cos(), weight * psi.sin()]
            })
            .collect();
        Ok(RayleighFading { terms })
    }

    /// The complex gain h(t) at time `t_s` (seconds) as (real, imaginary).
    pub fn coefficient(&self, t_s: f64) -> (f64, f64) {
        let mut re = 0.0;
        let mut im = 0.0;
        for &[w, phi, c, s] in &self.terms {
            let a = (w * t_s + phi).cos();
            re += c * a;
            im += s * a;
        }
        (re, im)
    }

    /// Its sinusoids, `[ω, φ, √(2/M)·cos ψ, √(2/M)·sin ψ]` each.
    pub(crate) fn terms(&self) -> &[[f64; 4]] {
        &self.terms
    }

    /// The complex gain from its sinusoids' cosines `cos θₙ` (as [`Phasors`] gives them).
    pub(crate) fn coefficient_from(&self, cos: &[f64]) -> (f64, f64) {
        let mut re = 0.0;
        let mut im = 0.0;
        for (&[_, _, c, s], &a) in self.terms.iter().zip(cos) {
            re += c * a;
            im += s * a;
        }
        (re, im)
    }

    /// The power gain |h(t)|² (linear, mean 1) at `t_s` seconds.
    pub fn power_gain(&self, t_s: f64) -> f64 {
        let (re, im) = self.coefficient(t_s);
        re * re + im * im
    }

    /// The power gain in dB at `t_s` seconds (mean of the linear gain 0 dB; −∞ never occurs in
    /// practice but is possible).
    pub fn gain_db(&self, t_s: f64) -> f64 {
        ratio_to_db(self.power_gain(t_s))
    }
}

/// Time-correlated flat Rician fading: a line of sight with K-factor `k` over a Rayleigh
/// process (unit mean power).
#[derive(Clone, Debug)]
pub struct RicianFading {
    scatter: RayleighFading,
    /// √(1/(K+1)).
    scatter_amplitude: f64,
    /// √(K/(K+1)).
    los_amplitude: f64,
    /// 2π f_d cos θ₀ (rad/s) and φ₀.
    los_angular: f64,
    los_phase: f64,
}

impl RicianFading {
    /// A process with K-factor `k` (linear, 0..=1000; 0 is Rayleigh fading), maximum Doppler
    /// `doppler_hz` and `sinusoids` for its scattered part, drawn from `rng`.
    pub fn new(k: f64, doppler_hz: f64, sinusoids: usize, rng: &mut RngStream) -> Result<RicianFading, CellError> {
        check_range("fading.k_factor", k, 0.0, 1000.0, "(linear)")?;
        let scatter = RayleighFading::new(doppler_hz, sinusoids, rng)?;
        let theta = 2.0 * PI * rng.uniform();
        let phase = 2.0 * PI * rng.uniform();
        Ok(RicianFading {
            scatter,
            scatter_amplitude: (1.0 / (k + 1.0)).sqrt(),
            los_amplitude: (k / (k + 1.0)).sqrt(),
            los_angular: 2.0 * PI * doppler_hz * theta.cos(),
            los_phase: phase,
        })
    }

    /// The complex gain h(t) at time `t_s` (seconds) as (real, imaginary).
    pub fn coefficient(&self, t_s: f64) -> (f64, f64) {
        let (re, im) = self.scatter.coefficient(t_s);
        let a = self.los_angular * t_s + self.los_phase;
        (self.scatter_amplitude * re + self.los_amplitude * a.cos(), self.scatter_amplitude * im + self.los_amplitude * a.sin())
    }

    /// The power gain |h(t)|² (linear, mean 1) at `t_s` seconds.
    pub fn power_gain(&self, t_s: f64) -> f64 {
        let (re, im) = self.coefficient(t_s);
        re * re + im * im
    }

    /// The power gain in dB at `t_s` seconds.
    pub fn gain_db(&self, t_s: f64) -> f64 {
        ratio_to_db(self.power_gain(t_s))
    }
}

/// How fading spreads over the band: common to all resource blocks, drawn per block, or from
/// a tapped delay line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FadingSpread {
    /// One process for the whole band: every RB sees the same gain.
    Flat,
    /// An independent process per resource block.
    PerRb,
    /// A TS 36.104 Annex B.2 tapped delay line: one process per tap, the RBs correlated through
    /// the taps' delays.
    Tdl(TdlProfile),
}

impl FadingSpread {
    /// The scenario's name of the spread: `rayleigh`, `rayleigh_per_rb`, `epa`, `eva`, `etu`.
    pub fn name(self) -> &'static str {
        match self {
            FadingSpread::Flat => "rayleigh",
            FadingSpread::PerRb => "rayleigh_per_rb",
            FadingSpread::Tdl(p) => p.name(),
        }
    }

    /// The spread called `name` (one of [`FadingSpread::NAMES`]).
    pub fn from_name(name: &str) -> Option<FadingSpread> {
        match name {
            "rayleigh" => Some(FadingSpread::Flat),
            "rayleigh_per_rb" => Some(FadingSpread::PerRb),
            other => TdlProfile::ALL.into_iter().find(|p| p.name() == other).map(FadingSpread::Tdl),
        }
    }

    /// Every name [`FadingSpread::from_name`] knows.
    pub const NAMES: [&'static str; 5] = ["rayleigh", "rayleigh_per_rb", "epa", "eva", "etu"];
}

/// The resource grid fading is evaluated on: how many resource blocks, how wide (a tapped
/// delay line's channel is taken at each block's centre frequency), and the time from one
/// TTI or slot to the next (the phasors' turn).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grid {
    /// Resource blocks, 1..=275.
    pub n_rb: usize,
    /// Width of one block, Hz (LTE: 180 kHz; NR: 12 subcarriers of 15·2^μ kHz).
    pub rb_hz: f64,
    /// The TTI or slot, seconds.
    pub slot_s: f64,
}

impl Grid {
    /// The grid if its fields are in range.
    pub(crate) fn checked(self) -> Result<Grid, CellError> {
        if !(1..=275).contains(&self.n_rb) {
            return Err(CellError::out_of_range("fading.n_rb", self.n_rb as f64, "an integer in [1, 275]"));
        }
        crate::error::check_range("fading.rb_hz", self.rb_hz, 1.0e5, 2.0e6, "Hz")?;
        crate::error::check_range("fading.slot_s", self.slot_s, 1e-5, 1e-3, "s")?;
        Ok(self)
    }
}

/// The processes behind a [`CellFading`].
#[derive(Clone, Debug)]
enum Model {
    /// One process for the band, or one per RB, and all their sinusoids' phasors TTI by TTI.
    Processes(Vec<RayleighFading>, Box<Phasors>),
    /// Rician: one process for the band, or one per RB.
    Rician(Vec<RicianFading>),
    /// A tapped delay line.
    Tdl(TdlFading),
}

/// The fading of one link (one direction between an eNB and a UE) over `n_rb` resource blocks.
#[derive(Clone, Debug)]
pub struct CellFading {
    model: Model,
    n_rb: usize,
}

impl CellFading {
    /// Fading over `n_rb` (1..=110) LTE resource blocks with Doppler `doppler_hz` and
    /// `sinusoids` per process, flat, per RB or from a tapped delay line, drawn from `rng`,
    /// asked for TTI by TTI.
    pub fn new(spread: FadingSpread, n_rb: usize, doppler_hz: f64, sinusoids: usize, rng: &mut RngStream) -> Result<CellFading, CellError> {
        if !(1..=110).contains(&n_rb) {
            return Err(CellError::out_of_range("fading.n_rb", n_rb as f64, "an integer in [1, 110]"));
        }
        CellFading::on_grid(spread, Grid { n_rb, rb_hz: RB_BANDWIDTH_HZ, slot_s: TTI_S }, doppler_hz, sinusoids, rng)
    }

    /// As [`CellFading::new`] over any resource grid (an NR carrier's: up to 275 PRBs of
    /// 12 subcarriers of 15·2^μ kHz, asked for slot by slot).
    pub fn on_grid(spread: FadingSpread, grid: Grid, doppler_hz: f64, sinusoids: usize, rng: &mut RngStream) -> Result<CellFading, CellError> {
        let n_rb = grid.checked()?.n_rb;
        let count = match spread {
            FadingSpread::Flat => 1,
            FadingSpread::PerRb => n_rb,
            FadingSpread::Tdl(profile) => {
                let tdl = TdlFading::on_grid(profile, grid, doppler_hz, sinusoids, rng)?;
                return Ok(CellFading { model: Model::Tdl(tdl), n_rb });
            }
        };
        let processes = (0..count).map(|_| RayleighFading::new(doppler_hz, sinusoids, rng)).collect::<Result<Vec<_>, _>>()?;
        let phasors = Phasors::new(processes.iter().flat_map(|p| p.terms().iter().copied()).collect(), grid.slot_s);
        Ok(CellFading { model: Model::Processes(processes, Box::new(phasors)), n_rb })
    }

    /// Rician fading with K-factor `k` (linear) over `n_rb` resource blocks: one process for
    /// the band (`Flat`) or one per RB (`PerRb`); a tapped delay line's taps are Rayleigh
    /// (TS 36.104 Annex B.2), so `Tdl` is refused.
    pub fn rician(spread: FadingSpread, k: f64, n_rb: usize, doppler_hz: f64, sinusoids: usize, rng: &mut RngStream) -> Result<CellFading, CellError> {
        if !(1..=110).contains(&n_rb) {
            return Err(CellError::out_of_range("fading.n_rb", n_rb as f64, "an integer in [1, 110]"));
        }
        CellFading::rician_on_grid(spread, k, Grid { n_rb, rb_hz: RB_BANDWIDTH_HZ, slot_s: TTI_S }, doppler_hz, sinusoids, rng)
    }

    /// As [`CellFading::rician`] over any resource grid.
    pub fn rician_on_grid(spread: FadingSpread, k: f64, grid: Grid, doppler_hz: f64, sinusoids: usize, rng: &mut RngStream) -> Result<CellFading, CellError> {
        let n_rb = grid.checked()?.n_rb;
        let count = match spread {
            FadingSpread::Flat => 1,
            FadingSpread::PerRb => n_rb,
            FadingSpread::Tdl(profile) => {
                return Err(CellError::invalid("fading.k_factor", format!("the {} tapped delay line's taps are Rayleigh (TS 36.104 Annex B.2): a K-factor needs flat or per-RB fading", profile.name())))
            }
        };
        let processes = (0..count).map(|_| RicianFading::new(k, doppler_hz, sinusoids, rng)).collect::<Result<Vec<_>, _>>()?;
        Ok(CellFading { model: Model::Rician(processes), n_rb })
    }

    /// Number of resource blocks.
    pub fn n_rb(&self) -> usize {
        self.n_rb
    }

    /// The power gain in dB of every resource block at `t_s` seconds, written to `out` (its
    /// length must be the number of RBs).
    pub fn gains_db(&self, t_s: f64, out: &mut [f64]) -> Result<(), CellError> {
        self.gains_db_in(t_s, 0..self.n_rb, out)
    }

    /// As [`CellFading::gains_db`], but only the blocks `rbs` are worked out and written (an
    /// uplink allocation); the rest of `out` is left as it was.
    pub fn gains_db_in(&self, t_s: f64, rbs: Range<usize>, out: &mut [f64]) -> Result<(), CellError> {
        if out.len() != self.n_rb {
            return Err(CellError::invalid("out", format!("{} values for {} resource blocks", out.len(), self.n_rb)));
        }
        if rbs.end > self.n_rb {
            return Err(CellError::invalid("rbs", format!("blocks {}..{} of {}", rbs.start, rbs.end, self.n_rb)));
        }
        match &self.model {
            Model::Processes(processes, _) => fill(processes, t_s, rbs, out, RayleighFading::gain_db),
            Model::Rician(processes) => fill(processes, t_s, rbs, out, RicianFading::gain_db),
            Model::Tdl(tdl) => tdl.gains_db_in(t_s, rbs, out)?,
        }
        Ok(())
    }

    /// As [`CellFading::gains_db_in`] at the start of TTI `n` (`t_s`), for a caller asking TTI
    /// after TTI: the Rayleigh processes and a tapped delay line advance their phasors by
    /// rotation (see the module header).
    pub fn gains_db_at_tti(&mut self, n: u64, t_s: f64, rbs: Range<usize>, out: &mut [f64]) -> Result<(), CellError> {
        if rbs.is_empty() || out.len() != self.n_rb || rbs.end > self.n_rb {
            return self.gains_db_in(t_s, rbs, out);
        }
        match &mut self.model {
            Model::Tdl(tdl) => tdl.gains_db_at_tti(n, t_s, rbs, out),
            Model::Processes(processes, phasors) => {
                let m = processes[0].terms().len();
                let cos = phasors.advance_to(n, t_s);
                let gain_db = |p: &RayleighFading, k: usize| {
                    let (re, im) = p.coefficient_from(&cos[k * m..(k + 1) * m]);
                    ratio_to_db(re * re + im * im)
                };
                if let [one] = processes.as_slice() {
                    let g = gain_db(one, 0);
                    out[rbs].iter_mut().for_each(|v| *v = g);
                } else {
                    for k in rbs {
                        out[k] = gain_db(&processes[k], k);
                    }
                }
                Ok(())
            }
            Model::Rician(_) => self.gains_db_in(t_s, rbs, out),
        }
    }
}

/// Writes the gain in dB at `t_s` of each RB in `rbs`: one process's for every RB (flat), or
/// the RB's own.
fn fill<P>(processes: &[P], t_s: f64, rbs: Range<usize>, out: &mut [f64], gain_db: impl Fn(&P, f64) -> f64) {
    if let [one] = processes {
        if !rbs.is_empty() {
            let g = gain_db(one, t_s);
            out[rbs].iter_mut().for_each(|v| *v = g);
        }
    } else {
        for (v, p) in out[rbs.clone()].iter_mut().zip(&processes[rbs]) {
            *v = gain_db(p, t_s);
        }
    }
}
