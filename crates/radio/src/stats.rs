//! Statistics over seconds, as the study's Tables 2 and 3 report them (multi-operator reference
//! §2.1–2.2): mean, median and the 20th, 10th, 5th, 1st and 0.1th percentiles of each
//! aggregation level, the average number of available (and visible) cells and the distribution
//! of the available-cell count (the study's Figure 2).
//!
//! Percentiles interpolate linearly between order statistics (numpy's default): the q-th
//! percentile of n sorted values sits at rank q/100 · (n − 1).

use crate::aggregate::CapacityTable;

/// The q-th percentile (q in [0, 100]) of `values`, linear interpolation; `None` if there are
/// no values, q is outside [0, 100] or a value is NaN.
pub fn percentile(values: &[f64], q: f64) -> Option<f64> {
    if values.iter().any(|v| v.is_nan()) {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    percentile_sorted(&sorted, q)
}

/// [`percentile`] of values already sorted ascending.
pub fn percentile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=100.0).contains(&q) {
        return None;
    }
    let rank = q / 100.0 * (sorted.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64))
}

/// The columns of the study's Table 3 for one aggregation level.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub mean: f64,
    pub median: f64,
    pub p20: f64,
    pub p10: f64,
    pub p5: f64,
    pub p1: f64,
    pub p0_1: f64,
}

impl Summary {
    /// The summary of `values`; `None` if there are none or one is NaN.
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() || values.iter().any(|v| v.is_nan()) {
            return None;
        }
        let mut s = values.to_vec();
        s.sort_by(f64::total_cmp);
        let p = |q| percentile_sorted(&s, q).expect("non-empty, q in range");
        Some(Summary {
            mean: values.iter().sum::<f64>() / values.len() as f64,
            median: p(50.0),
            p20: p(20.0),
            p10: p(10.0),
            p5: p(5.0),
            p1: p(1.0),
            p0_1: p(0.1),
        })
    }
}

/// The statistics of a [`CapacityTable`] over its seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct AggregationStats {
    /// Number of seconds.
    pub seconds: usize,
    /// Average number of visible cells per second.
    pub mean_visible: f64,
    /// Average number of available cells per second (the study's Table 2).
    pub mean_available: f64,
    /// Fraction of the seconds with exactly n available cells, n = 0, 1, … (the largest count
    /// seen is the last entry).
    pub available_share: Vec<f64>,
    /// Per operator, in the table's operator order: (operator, summary).
    pub operators: Vec<(String, Summary)>,
    pub best_single_path: Summary,
    pub multipath: Summary,
}

impl AggregationStats {
    pub fn of(table: &CapacityTable) -> AggregationStats {
        let n = table.seconds.len();
        let max_available = table.seconds.iter().map(|s| s.available).max().unwrap_or(0);
        let mut counts = vec![0usize; max_available + 1];
        for s in &table.seconds {
            counts[s.available] += 1;
        }
        let available_share = counts.iter().map(|&c| c as f64 / n as f64).collect();
        let column = |f: &dyn Fn(&crate::aggregate::SecondLevels) -> f64| -> Summary {
            let v: Vec<f64> = table.seconds.iter().map(f).collect();
            Summary::of(&v).expect("a capacity table has at least one second and finite capacities")
        };
        AggregationStats {
            seconds: n,
            mean_visible: table.seconds.iter().map(|s| s.visible as f64).sum::<f64>() / n as f64,
            mean_available: table.seconds.iter().map(|s| s.available as f64).sum::<f64>() / n as f64,
            available_share,
            operators: table.operators.iter().enumerate().map(|(i, op)| (op.clone(), column(&|s| s.levels.operator_sp_mbps[i]))).collect(),
            best_single_path: column(&|s| s.levels.best_single_path_mbps),
            multipath: column(&|s| s.levels.multipath_mbps),
        }
    }

    /// P(available ≤ n) for n = 0, 1, …: the empirical CDF of the available-cell count.
    pub fn available_cdf(&self) -> Vec<f64> {
        self.available_share
            .iter()
            .scan(0.0, |acc, s| {
                *acc += s;
                Some(*acc)
            })
            .collect()
    }
}
