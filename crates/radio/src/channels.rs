//! The per-second, per-channel table that the handover cases read (multi-operator reference
//! §2.1 "channel", §4.4 input): channel k's capacity c_k(t) in Mbit/s (0 = no available cell),
//! and optionally the RSRP, SINR and cell id of its available cell.
//!
//! Built by [`crate::aggregate::CapacityTable::channel_table`] from a drive table, or by hand
//! (tests, throughput traces that have no RSRP).

use crate::error::RadioError;

/// One channel's series, one value per second.
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelSeries {
    /// A label, e.g. `A/6200` (operator/EARFCN).
    pub name: String,
    /// c_k(t), Mbit/s; 0 when the channel has no available cell.
    pub capacity_mbps: Vec<f64>,
    /// RSRP of the channel's available cell, dBm; `None` where there is none.
    pub rsrp_dbm: Option<Vec<Option<f64>>>,
    /// SINR of the channel's available cell, dB; `None` where there is none.
    pub sinr_db: Option<Vec<Option<f64>>>,
    /// Id of the channel's available cell; `None` where there is none.
    pub cell_id: Option<Vec<Option<String>>>,
}

impl ChannelSeries {
    /// A channel with capacities only.
    pub fn new(name: &str, capacity_mbps: Vec<f64>) -> ChannelSeries {
        ChannelSeries { name: name.to_string(), capacity_mbps, rsrp_dbm: None, sinr_db: None, cell_id: None }
    }
}

/// Channels sampled on the same one-second grid from `start_s`.
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelTable {
    start_s: u32,
    len: usize,
    channels: Vec<ChannelSeries>,
}

impl ChannelTable {
    /// Validates the series: at least one channel and one second, equal lengths, finite
    /// non-negative capacities, finite RSRP and SINR values.
    pub fn new(start_s: u32, channels: Vec<ChannelSeries>) -> Result<ChannelTable, RadioError> {
        let Some(first) = channels.first() else {
            return Err(RadioError::Empty { what: "channel table (no channels)".into() });
        };
        let len = first.capacity_mbps.len();
        if len == 0 {
            return Err(RadioError::Empty { what: format!("channel table (channel {:?} has no seconds)", first.name) });
        }
        for (k, ch) in channels.iter().enumerate() {
            let field = |what: &str| format!("channels[{k}].{what}");
            let check_len = |what: &str, got: usize| {
                if got == len {
                    Ok(())
                } else {
                    Err(RadioError::LengthMismatch { field: field(what), expected: len, got })
                }
            };
            check_len("capacity_mbps", ch.capacity_mbps.len())?;
            for (i, &c) in ch.capacity_mbps.iter().enumerate() {
                if !(c.is_finite() && c >= 0.0) {
                    return Err(RadioError::BadValue {
                        row: i,
                        column: field("capacity_mbps"),
                        value: c.to_string(),
                        allowed: "must be a finite number of Mbit/s, at least 0".into(),
                    });
                }
            }
            for (what, series) in [("rsrp_dbm", &ch.rsrp_dbm), ("sinr_db", &ch.sinr_db)] {
                if let Some(s) = series {
                    check_len(what, s.len())?;
                    if let Some((i, v)) = s.iter().enumerate().find_map(|(i, v)| v.filter(|v| !v.is_finite()).map(|v| (i, v))) {
                        return Err(RadioError::BadValue {
                            row: i,
                            column: field(what),
                            value: v.to_string(),
                            allowed: "must be a finite number (or absent)".into(),
                        });
                    }
                }
            }
            if let Some(s) = &ch.cell_id {
                check_len("cell_id", s.len())?;
            }
        }
        Ok(ChannelTable { start_s, len, channels })
    }

    /// A table of capacities only, channels named `ch0`, `ch1`, …
    pub fn from_capacities(start_s: u32, capacities_mbps: Vec<Vec<f64>>) -> Result<ChannelTable, RadioError> {
        let channels = capacities_mbps.into_iter().enumerate().map(|(k, c)| ChannelSeries::new(&format!("ch{k}"), c)).collect();
        ChannelTable::new(start_s, channels)
    }

    /// The second of the first sample.
    pub fn start_s(&self) -> u32 {
        self.start_s
    }

    /// Number of seconds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: a table has at least one second.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn channels(&self) -> &[ChannelSeries] {
        &self.channels
    }

    /// c_k at sample `i`, Mbit/s.
    pub fn capacity(&self, k: usize, i: usize) -> f64 {
        self.channels[k].capacity_mbps[i]
    }
}
