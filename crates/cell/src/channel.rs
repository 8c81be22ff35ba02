//! SINR per resource block and TTI between the eNB and one UE, in either direction (the LTE
//! cell reference §2–3, as LENA's `LteSpectrumPhy` computes it for one cell): the transmitter's
//! power per RB, the path loss at the UE's distance, the fading gain of the RB at that instant,
//! and the receiver's thermal noise over one RB (180 kHz; an NR PRB: 12·15·2^μ kHz) with its noise figure. One cell: no
//! interference.
//!
//! * Downlink: the eNB spreads its power evenly over all the band's RBs, whatever the
//!   allocation (LENA: fixed power per RB).
//! * Uplink: the UE spreads its power over the RBs it is allocated (LENA 3.37; 3.29 spread
//!   it over the whole band), so the SINR per RB depends on the allocation's size.

use multiconn_radio::pathloss::PathLoss;
use multiconn_radio::units::receiver_noise_dbm;

use crate::error::CellError;
use crate::fading::CellFading;

/// Bandwidth of one resource block: 12 subcarriers of 15 kHz.
pub const RB_BANDWIDTH_HZ: f64 = 180_000.0;

/// The powers, noise figures and path loss of a cell's links.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkBudget {
    /// eNB transmit power over the whole band, dBm (LENA: 30; the study: 46).
    pub enb_power_dbm: f64,
    /// UE maximum transmit power, dBm (23).
    pub ue_power_dbm: f64,
    /// eNB noise figure, dB (5).
    pub enb_noise_figure_db: f64,
    /// UE noise figure, dB (9).
    pub ue_noise_figure_db: f64,
    /// The path-loss model.
    pub pathloss: PathLoss,
    /// Carrier frequency for the path-loss model, MHz (Band 4 downlink: 2120; NR up to FR2's
    /// 71 GHz).
    pub carrier_mhz: f64,
}

impl LinkBudget {
    /// The study's set-up: 46 dBm, 23 dBm, noise figures 5 and 9 dB, ns-3's log-distance path
    /// loss (46.6777 dB at 1 m, exponent 3), Band 4.
    pub fn study() -> LinkBudget {
        LinkBudget {
            enb_power_dbm: 46.0,
            ue_power_dbm: 23.0,
            enb_noise_figure_db: 5.0,
            ue_noise_figure_db: 9.0,
            pathloss: PathLoss::LogDistance(multiconn_radio::pathloss::LogDistance::ns3()),
            carrier_mhz: 2120.0,
        }
    }

    /// Checks every field; the error names `cell.<field>`.
    pub fn validate(&self) -> Result<(), CellError> {
        let check = |field: &str, v: f64, lo: f64, hi: f64| {
            if v.is_finite() && (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(CellError::out_of_range(field, v, &format!("a number in [{lo}, {hi}]")))
            }
        };
        check("cell.enb_power_dbm", self.enb_power_dbm, -30.0, 60.0)?;
        check("cell.ue_power_dbm", self.ue_power_dbm, -40.0, 33.0)?;
        check("cell.enb_noise_figure_db", self.enb_noise_figure_db, 0.0, 30.0)?;
        check("cell.ue_noise_figure_db", self.ue_noise_figure_db, 0.0, 30.0)?;
        check("cell.carrier_mhz", self.carrier_mhz, 400.0, 100_000.0)?;
        self.pathloss.validate("cell.pathloss").map_err(|e| CellError::invalid("cell.pathloss", e.to_string()))
    }

    /// The path loss at `distance_m`, dB.
    pub fn loss_db(&self, distance_m: f64) -> f64 {
        self.pathloss.loss_db(distance_m, self.carrier_mhz)
    }

    /// Downlink SINR of every RB (dB) at a UE with path loss `loss_db`, over `n_rb` RBs, the
    /// fading gains `fading_db` added (one per RB), written to `out`.
    pub fn downlink_sinr(&self, n_rb: u16, loss_db: f64, fading_db: &[f64], out: &mut Vec<f64>) {
        self.downlink_sinr_rb(n_rb, RB_BANDWIDTH_HZ, loss_db, fading_db, out);
    }

    /// [`LinkBudget::downlink_sinr`] over blocks `rb_hz` wide (an NR carrier's PRBs: 12
    /// subcarriers of 15·2^μ kHz): the noise is that of one block.
    pub fn downlink_sinr_rb(&self, n_rb: u16, rb_hz: f64, loss_db: f64, fading_db: &[f64], out: &mut Vec<f64>) {
        let per_rb = self.enb_power_dbm - 10.0 * f64::from(n_rb).log10();
        let noise = receiver_noise_dbm(rb_hz, self.ue_noise_figure_db);
        out.clear();
        out.extend(fading_db.iter().map(|g| per_rb - loss_db + g - noise));
    }

    /// Uplink SINR (dB) of each of `n_alloc` RBs starting at RB `first`, the UE's power spread
    /// over them, at the eNB, with path loss `loss_db` and fading `fading_db` (one per RB of
    /// the band), written to `out`.
    pub fn uplink_sinr(&self, first: usize, n_alloc: usize, loss_db: f64, fading_db: &[f64], out: &mut Vec<f64>) {
        self.uplink_sinr_rb(first, n_alloc, RB_BANDWIDTH_HZ, loss_db, fading_db, out);
    }

    /// [`LinkBudget::uplink_sinr`] over blocks `rb_hz` wide.
    pub fn uplink_sinr_rb(&self, first: usize, n_alloc: usize, rb_hz: f64, loss_db: f64, fading_db: &[f64], out: &mut Vec<f64>) {
        let per_rb = self.ue_power_dbm - 10.0 * (n_alloc.max(1) as f64).log10();
        let noise = receiver_noise_dbm(rb_hz, self.enb_noise_figure_db);
        out.clear();
        out.extend(fading_db[first..first + n_alloc].iter().map(|g| per_rb - loss_db + g - noise));
    }
}

/// The fading of one UE's two directions, or none.
#[derive(Clone, Debug)]
pub struct UeChannel {
    /// Path loss to the eNB, dB.
    pub loss_db: f64,
    /// Downlink and uplink fading; `None`: no fading (0 dB on every RB).
    pub fading: Option<[CellFading; 2]>,
}

impl UeChannel {
    /// The fading gains (dB) of every RB at `t_s` in direction `dir` (0 down, 1 up), into `out`
    /// (resized to `n_rb`).
    pub fn gains_db(&self, dir: usize, n_rb: usize, t_s: f64, out: &mut Vec<f64>) -> Result<(), CellError> {
        self.gains_db_in(dir, n_rb, t_s, 0..n_rb, out)
    }

    /// As [`UeChannel::gains_db`], but only the RBs `rbs` are worked out (the rest are 0 dB).
    pub fn gains_db_in(&self, dir: usize, n_rb: usize, t_s: f64, rbs: std::ops::Range<usize>, out: &mut Vec<f64>) -> Result<(), CellError> {
        out.clear();
        out.resize(n_rb, 0.0);
        if let Some(f) = &self.fading {
            f[dir].gains_db_in(t_s, rbs, out)?;
        }
        Ok(())
    }

    /// The fading gains (dB) of the RBs `rbs` in direction `dir` at the start of TTI `n`
    /// (`t_s` seconds), the rest 0 dB, into `out` (resized to `n_rb`): for the cell, which asks
    /// TTI after TTI ([`CellFading::gains_db_at_tti`]).
    ///
    /// `out` is a buffer the caller gives only to this function (the cell keeps one per use).
    /// Without fading it is only ever written with zeros, so one of the right length holds them
    /// already and is left as it is.
    pub fn gains_db_at_tti(&mut self, dir: usize, n_rb: usize, n: u64, t_s: f64, rbs: std::ops::Range<usize>, out: &mut Vec<f64>) -> Result<(), CellError> {
        let Some(f) = &mut self.fading else {
            if out.len() != n_rb {
                out.clear();
                out.resize(n_rb, 0.0);
            }
            return Ok(());
        };
        out.clear();
        out.resize(n_rb, 0.0);
        f[dir].gains_db_at_tti(n, t_s, rbs, out)
    }
}
