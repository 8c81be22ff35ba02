//! Available cells, per-channel capacity and the aggregation levels, second by second
//! (multi-operator reference §1.4 and §2.1; the study's §3.2–3.3).
//!
//! * **Visible cell** (second t): a cell with an RSRP sample for t at or above
//!   [`AvailabilityParams::min_rsrp_dbm`] (−140 dBm, the bottom of LTE's reporting range).
//! * **Carrier**: a frequency channel of one operator, keyed by (operator, EARFCN).
//! * **Available cell**: the strongest visible cell of a carrier — at most one usable cell per
//!   carrier, since several cells of one carrier would interfere with each other. Ties go to
//!   the smaller cell id.
//! * **Channel capacity** c_k(t): the capacity of carrier k's available cell; its SINR counts
//!   as interferers every other visible cell of the second, or only the other visible cells of
//!   its carrier ([`crate::Interference`]).
//! * **Aggregation levels**: each operator alone (max over its carriers, 0 if none), best
//!   single path (max over all carriers), multipath (sum over all carriers).
//!
//! Several samples of one cell in one second are merged ([`SampleMerge`]); a cell without a
//! sample in a second is not visible in it unless [`AvailabilityParams::hold_s`] keeps its last
//! value. Every second from the table's first to its last is estimated; a second without rows
//! has no available cell.
//!
//! Data that gives capacities directly (throughput traces, no RSRP) goes through
//! [`aggregate_channels`] instead: a [`ChannelTable`] with one carrier per channel, a channel
//! being available where its capacity is above 0 and at least a threshold; the levels and
//! statistics are the same.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::capacity::{CapacityParams, Interference};
use crate::channels::{ChannelSeries, ChannelTable};
use crate::error::{check_range, RadioError};
use crate::stats::AggregationStats;
use crate::table::DriveTable;
use crate::units::{dbm_to_mw, mw_to_dbm, ratio_to_db};

/// How several samples of one cell in one second become one value (reference §1.4.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SampleMerge {
    /// Arithmetic mean of the dBm values (what drive-test tools export).
    #[default]
    MeanDbm,
    /// Mean of the powers in mW, back to dBm.
    MeanMw,
    /// The last sample in table order.
    Last,
}

/// Which cells are visible in a second.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AvailabilityParams {
    /// Merge rule for several samples of one cell in one second.
    pub merge: SampleMerge,
    /// A cell without a sample in a second keeps its last value for up to this many seconds
    /// (0: no hold-over).
    pub hold_s: u32,
    /// Samples below this RSRP (dBm) are not visible (−140, LTE's lowest reportable value).
    pub min_rsrp_dbm: f64,
}

impl Default for AvailabilityParams {
    fn default() -> AvailabilityParams {
        AvailabilityParams { merge: SampleMerge::MeanDbm, hold_s: 0, min_rsrp_dbm: -140.0 }
    }
}

/// Everything the estimation from a drive table needs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EstimationParams {
    pub capacity: CapacityParams,
    pub availability: AvailabilityParams,
}

impl EstimationParams {
    pub fn validate(&self) -> Result<(), RadioError> {
        self.capacity.validate()?;
        check_range("availability.min_rsrp_dbm", self.availability.min_rsrp_dbm, -250.0, 50.0, "dBm")
    }
}

/// A carrier: a frequency channel of one operator.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Carrier {
    pub operator: String,
    pub earfcn: u32,
}

impl Carrier {
    /// `operator/earfcn`, e.g. `A/6200`.
    pub fn label(&self) -> String {
        format!("{}/{}", self.operator, self.earfcn)
    }
}

/// One visible cell in one second, as the per-second step sees it (one entry per cell).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VisibleCell<'a> {
    pub operator: &'a str,
    pub earfcn: u32,
    pub cell_id: &'a str,
    pub rsrp_dbm: f64,
}

/// The available cell of one carrier in one second and what it gives.
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelEstimate {
    pub operator: String,
    pub earfcn: u32,
    /// The available (strongest) cell of the carrier.
    pub cell_id: String,
    /// Visible cells of this carrier in the second.
    pub n_visible: usize,
    pub rsrp_dbm: f64,
    pub sinr_db: f64,
    pub capacity_mbps: f64,
}

/// The available cell of every carrier among `cells` (one entry per visible cell) and its
/// SINR and capacity, sorted by (operator, EARFCN). Cells are taken as visible as given.
pub fn estimate_second(cells: &[VisibleCell<'_>], params: &CapacityParams) -> Vec<ChannelEstimate> {
    // Strongest cell per carrier; ties to the smaller cell id.
    let mut best: BTreeMap<(&str, u32), (usize, usize)> = BTreeMap::new(); // carrier -> (index, count)
    for (i, c) in cells.iter().enumerate() {
        best.entry((c.operator, c.earfcn))
            .and_modify(|(b, n)| {
                *n += 1;
                let cur = &cells[*b];
                if c.rsrp_dbm > cur.rsrp_dbm || (c.rsrp_dbm == cur.rsrp_dbm && c.cell_id < cur.cell_id) {
                    *b = i;
                }
            })
            .or_insert((i, 1));
    }
    let mw: Vec<f64> = cells.iter().map(|c| dbm_to_mw(c.rsrp_dbm)).collect();
    best.into_iter()
        .map(|((operator, earfcn), (s, n_visible))| {
            let interference: f64 = cells
                .iter()
                .enumerate()
                .filter(|&(i, c)| {
                    i != s
                        && match params.interference {
                            Interference::AllVisible => true,
                            Interference::SameCarrier => c.operator == operator && c.earfcn == earfcn,
                        }
                })
                .map(|(i, _)| mw[i])
                .sum();
            let sinr = params.sinr(mw[s], interference);
            ChannelEstimate {
                operator: operator.to_string(),
                earfcn,
                cell_id: cells[s].cell_id.to_string(),
                n_visible,
                rsrp_dbm: cells[s].rsrp_dbm,
                sinr_db: ratio_to_db(sinr),
                capacity_mbps: params.capacity_mbps_on(earfcn, sinr),
            }
        })
        .collect()
}

/// The aggregation levels of one second.
#[derive(Clone, Debug, PartialEq)]
pub struct Levels {
    /// Per operator (in the order given): max over its carriers, 0 if none.
    pub operator_sp_mbps: Vec<f64>,
    /// Max over all carriers, 0 if none.
    pub best_single_path_mbps: f64,
    /// Sum over all carriers.
    pub multipath_mbps: f64,
}

/// The aggregation levels of one second's channel estimates, for `operators` in that order.
pub fn levels(channels: &[ChannelEstimate], operators: &[String]) -> Levels {
    let pairs: Vec<(&str, f64)> = channels.iter().map(|c| (c.operator.as_str(), c.capacity_mbps)).collect();
    levels_of(&pairs, operators)
}

/// The aggregation levels of one second's (operator, capacity in Mbit/s) pairs, one per carrier.
fn levels_of(channels: &[(&str, f64)], operators: &[String]) -> Levels {
    let operator_sp_mbps =
        operators.iter().map(|op| channels.iter().filter(|(o, _)| o == op).map(|&(_, c)| c).fold(0.0, f64::max)).collect();
    Levels {
        operator_sp_mbps,
        best_single_path_mbps: channels.iter().map(|&(_, c)| c).fold(0.0, f64::max),
        multipath_mbps: channels.iter().map(|&(_, c)| c).sum(),
    }
}

/// One (second, channel) row of the estimation (reference §5.2's output), for channels with an
/// available cell in that second.
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelRow {
    pub time_s: u32,
    /// Index into [`CapacityTable::channels`].
    pub channel: usize,
    pub cell_id: String,
    /// Visible cells of this carrier in the second.
    pub n_visible: usize,
    /// RSRP of the available cell, dBm; `None` when the input has capacities only.
    pub rsrp_dbm: Option<f64>,
    /// SINR of the available cell, dB; `None` when the input has capacities only.
    pub sinr_db: Option<f64>,
    pub capacity_mbps: f64,
}

/// The counts and aggregation levels of one second.
#[derive(Clone, Debug, PartialEq)]
pub struct SecondLevels {
    pub time_s: u32,
    /// Visible cells (all operators and carriers).
    pub visible: usize,
    /// Available cells: carriers with at least one visible cell.
    pub available: usize,
    pub levels: Levels,
}

/// The estimation of a whole drive table.
#[derive(Clone, Debug, PartialEq)]
pub struct CapacityTable {
    /// Operators, sorted.
    pub operators: Vec<String>,
    /// Carriers that appear in the table, sorted by (operator, EARFCN); channel k is `channels[k]`.
    pub channels: Vec<Carrier>,
    /// One entry per second from the table's first to its last.
    pub seconds: Vec<SecondLevels>,
    /// One row per (second, channel with an available cell), in time then channel order.
    pub rows: Vec<ChannelRow>,
}

/// Estimates every second of `table` (see the module documentation).
pub fn estimate(table: &DriveTable, params: &EstimationParams) -> Result<CapacityTable, RadioError> {
    params.validate()?;
    let avail = &params.availability;
    let mut channels: Vec<Carrier> = table.rows().iter().map(|r| Carrier { operator: r.operator.clone(), earfcn: r.earfcn }).collect();
    channels.sort();
    channels.dedup();
    let mut operators: Vec<String> = channels.iter().map(|c| c.operator.clone()).collect();
    operators.dedup();
    let channel_of: BTreeMap<(&str, u32), usize> = channels.iter().enumerate().map(|(k, c)| ((c.operator.as_str(), c.earfcn), k)).collect();

    // Last merged value of each cell: (channel, cell id) -> (second, dBm).
    let mut last: BTreeMap<(usize, &str), (u32, f64)> = BTreeMap::new();
    let mut by_second = table.seconds().peekable();
    let mut seconds = Vec::new();
    let mut rows = Vec::new();
    for t in table.first_s()..=table.last_s() {
        // Merge this second's samples per cell.
        let mut merged: BTreeMap<(usize, &str), (f64, usize)> = BTreeMap::new(); // sum or last, count
        if by_second.peek().is_some_and(|(s, _)| *s == t) {
            let (_, samples) = by_second.next().expect("peeked");
            for r in samples {
                let k = channel_of[&(r.operator.as_str(), r.earfcn)];
                let v = match avail.merge {
                    SampleMerge::MeanDbm | SampleMerge::Last => r.rsrp_dbm,
                    SampleMerge::MeanMw => dbm_to_mw(r.rsrp_dbm),
                };
                let e = merged.entry((k, r.cell_id.as_str())).or_insert((0.0, 0));
                match avail.merge {
                    SampleMerge::Last => *e = (v, 1),
                    _ => *e = (e.0 + v, e.1 + 1),
                }
            }
        }
        for (key, (v, n)) in merged {
            let dbm = match avail.merge {
                SampleMerge::MeanDbm => v / n as f64,
                SampleMerge::MeanMw => mw_to_dbm(v / n as f64),
                SampleMerge::Last => v,
            };
            last.insert(key, (t, dbm));
        }
        last.retain(|_, (seen, _)| t - *seen <= avail.hold_s);
        let cells: Vec<VisibleCell<'_>> = last
            .iter()
            .filter(|(_, (_, dbm))| *dbm >= avail.min_rsrp_dbm)
            .map(|(&(k, cell_id), &(_, rsrp_dbm))| VisibleCell {
                operator: &channels[k].operator,
                earfcn: channels[k].earfcn,
                cell_id,
                rsrp_dbm,
            })
            .collect();
        let estimates = estimate_second(&cells, &params.capacity);
        for e in &estimates {
            rows.push(ChannelRow {
                time_s: t,
                channel: channel_of[&(e.operator.as_str(), e.earfcn)],
                cell_id: e.cell_id.clone(),
                n_visible: e.n_visible,
                rsrp_dbm: Some(e.rsrp_dbm),
                sinr_db: Some(e.sinr_db),
                capacity_mbps: e.capacity_mbps,
            });
        }
        seconds.push(SecondLevels { time_s: t, visible: cells.len(), available: estimates.len(), levels: levels(&estimates, &operators) });
    }
    Ok(CapacityTable { operators, channels, seconds, rows })
}

/// The aggregation of a table that gives capacities directly (no RSRP): channel k of `table`
/// is carrier `carriers[k]`, at most one channel per carrier.
///
/// Per second, a channel is *visible* where its capacity is above 0 and *available* where it is
/// also at least `min_capacity_mbps` (0: every channel with a capacity above 0); an available
/// channel counts with its capacity, the others with 0. The levels are those of [`estimate`]:
/// each operator alone (the max over its channels), best single path (the max over all),
/// multipath (the sum). The rows (one per second and available channel) take the cell id from
/// the channel's `cell_id` series where it has one, else the carrier's label, one visible cell
/// per channel, and the channel's RSRP and SINR series where it has them (else none).
pub fn aggregate_channels(table: &ChannelTable, carriers: &[Carrier], min_capacity_mbps: f64) -> Result<CapacityTable, RadioError> {
    let series = table.channels();
    if carriers.len() != series.len() {
        return Err(RadioError::LengthMismatch { field: "carriers".into(), expected: series.len(), got: carriers.len() });
    }
    check_range("min_capacity_mbps", min_capacity_mbps, 0.0, 1e9, "Mbit/s")?;
    if table.start_s() as u64 + table.len() as u64 - 1 > u32::MAX as u64 {
        return Err(RadioError::invalid("channel table", format!("{} seconds from second {} go past second {}", table.len(), table.start_s(), u32::MAX)));
    }
    let mut channels: Vec<Carrier> = carriers.to_vec();
    channels.sort();
    if let Some(w) = channels.windows(2).find(|w| w[0] == w[1]) {
        return Err(RadioError::invalid(
            "carriers",
            format!("carrier {} is given to more than one channel; at most one channel per (operator, carrier)", w[0].label()),
        ));
    }
    let mut operators: Vec<String> = channels.iter().map(|c| c.operator.clone()).collect();
    operators.dedup();
    // Channel k of the input is channel index_of[k] of the result (sorted by carrier).
    let index_of: Vec<usize> = carriers.iter().map(|c| channels.binary_search(c).expect("every carrier is in the list")).collect();
    let mut order: Vec<usize> = (0..series.len()).collect();
    order.sort_by_key(|&k| index_of[k]);
    let mut seconds = Vec::with_capacity(table.len());
    let mut rows = Vec::new();
    for i in 0..table.len() {
        let time_s = table.start_s() + i as u32;
        let mut visible = 0;
        let mut available: Vec<(&str, f64)> = Vec::new();
        for &k in &order {
            let c = table.capacity(k, i);
            if c <= 0.0 {
                continue;
            }
            visible += 1;
            if c < min_capacity_mbps {
                continue;
            }
            let s = &series[k];
            available.push((carriers[k].operator.as_str(), c));
            rows.push(ChannelRow {
                time_s,
                channel: index_of[k],
                cell_id: s.cell_id.as_ref().and_then(|v| v[i].clone()).unwrap_or_else(|| carriers[k].label()),
                n_visible: 1,
                rsrp_dbm: s.rsrp_dbm.as_ref().and_then(|v| v[i]),
                sinr_db: s.sinr_db.as_ref().and_then(|v| v[i]),
                capacity_mbps: c,
            });
        }
        seconds.push(SecondLevels { time_s, visible, available: available.len(), levels: levels_of(&available, &operators) });
    }
    Ok(CapacityTable { operators, channels, seconds, rows })
}

impl CapacityTable {
    /// The first second.
    pub fn start_s(&self) -> u32 {
        self.seconds[0].time_s
    }

    /// The per-channel table the handover cases read: c_k(t) with the RSRP, SINR and id of the
    /// available cell, 0 and `None` where the carrier has none.
    pub fn channel_table(&self) -> ChannelTable {
        let n = self.seconds.len();
        let mut series: Vec<ChannelSeries> = self
            .channels
            .iter()
            .map(|c| ChannelSeries {
                name: c.label(),
                capacity_mbps: vec![0.0; n],
                rsrp_dbm: Some(vec![None; n]),
                sinr_db: Some(vec![None; n]),
                cell_id: Some(vec![None; n]),
            })
            .collect();
        let start = self.start_s();
        for r in &self.rows {
            let i = (r.time_s - start) as usize;
            let s = &mut series[r.channel];
            s.capacity_mbps[i] = r.capacity_mbps;
            s.rsrp_dbm.as_mut().expect("set above")[i] = r.rsrp_dbm;
            // A SINR of −∞ dB cannot happen with a positive noise term; keep the column finite.
            s.sinr_db.as_mut().expect("set above")[i] = r.sinr_db.filter(|v| v.is_finite());
            s.cell_id.as_mut().expect("set above")[i] = Some(r.cell_id.clone());
        }
        ChannelTable::new(start, series).expect("an estimation always yields a valid channel table")
    }

    /// Mean, median and percentiles of each aggregation level, and the available-cell counts.
    pub fn stats(&self) -> AggregationStats {
        AggregationStats::of(self)
    }
}
