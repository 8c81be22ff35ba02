//! Per-UE time series of a cell: fixed-width time bins, per UE and direction, of what the
//! radio and the MAC did (mean SINR, CQI and MCS, RBs per TTI, TBs and TB errors at the first
//! transmission and after HARQ) and of the RLC transmission buffer (largest and last fill).
//!
//! The cell ([`crate::CellHop`]) feeds it TTI by TTI when asked to
//! ([`crate::CellHop::record_series`]); the bins are those of the run's other time series, so
//! a bin of a cell row lines up with the flows' and links' bins of the same start. SINR and
//! CQI are sampled in every TTI the UE has data or HARQ work in that direction (downlink: the
//! wideband mean of the SINR per RB, and the mean of its subband CQIs, 36.213 §7.2; uplink: the
//! mean SINR over the UE's part of the band and the CQI the eNB chose the MCS on); the MCS is
//! the mean over the TBs sent (retransmissions keep their first MCS, 36.213 §7.1.7).

/// One bin of one UE in one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UeBin {
    /// TTIs with a SINR and CQI sample.
    pub samples: u64,
    /// Sum of the samples' SINR, dB.
    pub sinr_db_sum: f64,
    /// Sum of the samples' CQI.
    pub cqi_sum: u64,
    /// Sum of the TBs' MCS (one per TB sent).
    pub mcs_sum: u64,
    /// RB·TTIs allocated (new data and retransmissions).
    pub rb_ttis: u64,
    /// TBs sent, retransmissions included.
    pub tbs: u64,
    /// Transmissions in error.
    pub tb_errors: u64,
    /// First transmissions (new TBs).
    pub tbs_new: u64,
    /// First transmissions in error.
    pub tb_errors_first: u64,
    /// TBs still in error after the last transmission (given up by HARQ).
    pub tbs_lost: u64,
    /// Bytes of the packets that left the cell whole (IP packets, as links count them).
    pub bytes_delivered: u64,
    /// Packets refused by the full RLC buffer.
    pub drops_buffer: u64,
    /// Packets lost with a TB HARQ gave up, or given up by the receiving RLC.
    pub drops_radio: u64,
    /// The largest RLC buffer fill seen in the bin, bytes.
    pub rlc_max_bytes: u64,
    /// The RLC buffer fill at the last change in the bin, bytes (`None`: no change in the bin).
    pub rlc_last_bytes: Option<u64>,
}

impl UeBin {
    /// Counts a TB of `n_prb` PRBs at `mcs`, its `transmission` (1 = new data), whether it
    /// decoded and whether HARQ gave it up.
    pub fn record_tb(&mut self, n_prb: u16, mcs: u8, transmission: u8, decoded: bool, dropped: bool) {
        self.tbs += 1;
        self.mcs_sum += u64::from(mcs);
        self.rb_ttis += u64::from(n_prb);
        self.tb_errors += u64::from(!decoded);
        if transmission == 1 {
            self.tbs_new += 1;
            self.tb_errors_first += u64::from(!decoded);
        }
        self.tbs_lost += u64::from(dropped);
    }

    /// Mean SINR over the samples, dB.
    pub fn mean_sinr_db(&self) -> Option<f64> {
        (self.samples > 0).then(|| self.sinr_db_sum / self.samples as f64)
    }

    /// Mean CQI over the samples.
    pub fn mean_cqi(&self) -> Option<f64> {
        (self.samples > 0).then(|| self.cqi_sum as f64 / self.samples as f64)
    }

    /// Mean MCS over the TBs sent.
    pub fn mean_mcs(&self) -> Option<f64> {
        (self.tbs > 0).then(|| self.mcs_sum as f64 / self.tbs as f64)
    }
}

/// The bins of every UE and direction.
#[derive(Clone, Debug)]
pub struct CellSeries {
    bin_ns: u64,
    /// Per UE, per direction (0 down, 1 up), the bins from time 0.
    bins: Vec<[Vec<UeBin>; 2]>,
}

impl CellSeries {
    /// Bins `bin_ns` wide (at least 1 ns) for `n_ues` UEs.
    pub fn new(bin_ns: u64, n_ues: usize) -> CellSeries {
        CellSeries { bin_ns: bin_ns.max(1), bins: (0..n_ues).map(|_| [Vec::new(), Vec::new()]).collect() }
    }

    /// The bins' width, ns.
    pub fn bin_ns(&self) -> u64 {
        self.bin_ns
    }

    /// The bin of UE `ue`, direction `dir` (0 down, 1 up), holding time `at_ns`.
    pub fn bin_mut(&mut self, ue: usize, dir: usize, at_ns: u64) -> &mut UeBin {
        let idx = (at_ns / self.bin_ns) as usize;
        let bins = &mut self.bins[ue][dir];
        if idx >= bins.len() {
            bins.resize(idx + 1, UeBin::default());
        }
        &mut bins[idx]
    }

    /// Notes the RLC buffer's fill `bytes` at `at_ns`.
    pub fn rlc_fill(&mut self, ue: usize, dir: usize, at_ns: u64, bytes: u64) {
        let b = self.bin_mut(ue, dir, at_ns);
        b.rlc_max_bytes = b.rlc_max_bytes.max(bytes);
        b.rlc_last_bytes = Some(bytes);
    }

    /// UE `ue`'s bins in direction `dir` covering [0, `end_ns`): empty bins where nothing was
    /// recorded, the RLC fill carried over from the bin before (its last value, which is also
    /// the largest of a bin without a change).
    pub fn rows(&self, ue: usize, dir: usize, end_ns: u64) -> Vec<UeBin> {
        let n = end_ns.div_ceil(self.bin_ns) as usize;
        let mut last = 0u64;
        (0..n)
            .map(|i| {
                let mut b = self.bins[ue][dir].get(i).copied().unwrap_or_default();
                match b.rlc_last_bytes {
                    Some(v) => {
                        b.rlc_max_bytes = b.rlc_max_bytes.max(last);
                        last = v;
                    }
                    None => {
                        b.rlc_max_bytes = last;
                        b.rlc_last_bytes = Some(last);
                    }
                }
                b
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_carry_the_buffer_fill_over_empty_bins() {
        let mut s = CellSeries::new(100, 1);
        s.rlc_fill(0, 0, 10, 500);
        s.rlc_fill(0, 0, 20, 300);
        s.rlc_fill(0, 0, 350, 0);
        let rows = s.rows(0, 0, 400);
        assert_eq!(rows.len(), 4);
        assert_eq!((rows[0].rlc_max_bytes, rows[0].rlc_last_bytes), (500, Some(300)));
        // Nothing changed in bins 1 and 2: the fill stayed at 300.
        assert_eq!((rows[1].rlc_max_bytes, rows[1].rlc_last_bytes), (300, Some(300)));
        assert_eq!((rows[2].rlc_max_bytes, rows[2].rlc_last_bytes), (300, Some(300)));
        // Bin 3 starts at 300 bytes and drops to 0.
        assert_eq!((rows[3].rlc_max_bytes, rows[3].rlc_last_bytes), (300, Some(0)));
        assert!(s.rows(0, 1, 400).iter().all(|b| b.rlc_max_bytes == 0 && b.mean_sinr_db().is_none()));
    }

    #[test]
    fn means_are_over_their_own_samples() {
        let mut s = CellSeries::new(1_000, 1);
        for (sinr, cqi) in [(10.0, 9), (20.0, 13)] {
            let b = s.bin_mut(0, 1, 5);
            b.samples += 1;
            b.sinr_db_sum += sinr;
            b.cqi_sum += cqi;
        }
        let b = s.bin_mut(0, 1, 999);
        b.tbs += 4;
        b.mcs_sum += 4 * 20 + 2;
        let row = s.rows(0, 1, 1_000)[0];
        assert_eq!(row.mean_sinr_db(), Some(15.0));
        assert_eq!(row.mean_cqi(), Some(11.0));
        assert_eq!(row.mean_mcs(), Some(20.5));
    }
}
