//! The steady-state window (`[run] measure_from`): each flow's goodput from then on, over the
//! bins the time series shows, and one-line errors for a window that does not fit the run.

use crate::common::{load_str, run};
use multiconn_scenario::Column;

const BULK: &str = r#"
[run]
duration = "10 s"
measure_from = "5 s"

[[link]]
name = "path"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "40 ms"
queue = "100 packets"

[[flow]]
name = "bulk"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
"#;

#[test]
fn the_steady_goodput_counts_the_bins_from_measure_from_on() {
    let (summary, out) = run(BULK, Some(1));
    assert_eq!(summary["measure_from_s"], 5.0);
    let flow = &summary["flows"][0];
    let steady = flow["steady_goodput_mbps"].as_f64().unwrap();
    let col = |name: &str| out.columns.iter().find(|(n, _)| n == name).unwrap().1.clone();
    let (Column::F64(time), Column::Str(kind), Column::I64(bytes)) = (col("time_s"), col("kind"), col("bytes_delivered")) else { panic!("column types") };
    let from_bins: i64 = (0..time.len()).filter(|&i| kind[i] == "flow" && time[i] >= 5.0).map(|i| bytes[i]).sum();
    assert!((steady - from_bins as f64 * 8.0 / 5.0 / 1e6).abs() < 1e-6, "{steady} vs {from_bins} bytes");
    // Slow start is left out: the steady goodput is above the whole run's, near the link's
    // 10 Mbit/s less the headers.
    assert!(steady > flow["goodput_mbps"].as_f64().unwrap() && steady > 9.0 && steady < 10.0, "{steady}");
    // Without the window, neither key appears.
    let (plain, _) = run(&BULK.replace("measure_from = \"5 s\"\n", ""), Some(1));
    assert!(plain.get("measure_from_s").is_none() && plain["flows"][0].get("steady_goodput_mbps").is_none());
}

#[test]
fn a_window_that_does_not_fit_is_refused_in_one_line() {
    for (value, expected) in [
        ("\"5.05 s\"", "run.measure_from: 5.05 s is not a multiple of the bin width run.bin = 0.1 s"),
        ("\"10 s\"", "run.measure_from: 10 s is not before the end of the run (run.duration)"),
    ] {
        let e = load_str(&BULK.replace("\"5 s\"", value)).unwrap_err().to_string();
        assert!(e.contains(expected) && e.lines().count() == 1, "{e}");
    }
}
