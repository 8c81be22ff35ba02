//! A trace's `start`: the run's time 0 reads the trace there. Each trace kind (rate: csv, ucc,
//! mahimahi; delay series; loss trace) run from a start gives the same run as the trace cut
//! by hand at that point, and a different one from the trace read from its beginning; a start
//! the trace cannot take is one line naming the field.

use crate::common::*;
use serde_json::Value;

/// `BULK` (a saturating UDP source over one link) for `duration`, its link's `field` set to
/// `value`, the `files` written beside the scenario; the summary, or the load error.
fn try_bulk(tag: &str, duration: &str, field: &str, value: &str, files: &[(&str, String)]) -> Result<Value, String> {
    let line = match field {
        "rate" => "rate = \"40 Mbit/s\"",
        "delay" => "delay = \"10 ms\"",
        "loss" => "queue = \"100 packets\"",
        other => panic!("no field {other}"),
    };
    let replacement = if field == "loss" { format!("{line}\nloss = {value}") } else { format!("{field} = {value}") };
    let text = BULK.replace(line, &replacement).replace("duration = \"20 s\"", &format!("duration = \"{duration}\""));
    let dir = std::env::temp_dir().join(format!("multiconn-trace-start-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, content) in files {
        std::fs::write(dir.join(name), content).unwrap();
    }
    let origin = multiconn_scenario::Origin { name: "test.toml".into(), base_dir: dir };
    let scenario = multiconn_scenario::load(&text, &origin, &[]).map_err(|e| e.to_string())?;
    Ok(serde_json::from_str(&run_checked(&scenario, Some(1)).summary_json).unwrap())
}

fn bulk(tag: &str, duration: &str, field: &str, value: &str, files: &[(&str, String)]) -> Value {
    try_bulk(tag, duration, field, value, files).unwrap_or_else(|e| panic!("{tag}: {e}"))
}

/// What the run did: its flows' and links' summaries.
fn outcome(summary: &Value) -> (Value, Value) {
    (summary["flows"].clone(), summary["links"].clone())
}

fn goodput(summary: &Value) -> f64 {
    summary["flows"][0]["goodput_mbps"].as_f64().unwrap()
}

/// A csv rate trace of `rates[i]` Mbit/s in second `i`.
fn rate_csv(rates: impl IntoIterator<Item = f64>) -> String {
    let mut text = String::from("time,rate\n");
    for (i, r) in rates.into_iter().enumerate() {
        text.push_str(&format!("{i},{r}\n"));
    }
    text
}

/// 0.1 Mbit/s for 480 s, then 20 Mbit/s for 120 s (a drive that gets good at 480 s).
fn drive_rates() -> Vec<f64> {
    (0..600).map(|s| if s < 480 { 0.1 } else { 20.0 }).collect()
}

const CSV_RATE: &str = r#"{ model = "csv", file = "r.csv", column = "rate", unit = "Mbit/s" START }"#;

fn with_start(table: &str, start: &str) -> String {
    table.replace(" START", &if start.is_empty() { String::new() } else { format!(", start = {start}") })
}

#[test]
fn a_rate_trace_started_at_its_step_gives_the_post_step_rate_from_time_0() {
    let rates = drive_rates();
    let started = bulk("csv-480", "10 s", "rate", &with_start(CSV_RATE, "\"480 s\""), &[("r.csv", rate_csv(rates.clone()))]);
    // The same drive cut by hand at 480 s, the part before moved to its end (so that it loops
    // as the whole drive does, and has the same mean rate for the fair share).
    let rotated: Vec<f64> = rates[480..].iter().chain(&rates[..480]).copied().collect();
    let cut = bulk("csv-cut", "10 s", "rate", &with_start(CSV_RATE, ""), &[("r.csv", rate_csv(rotated))]);
    assert_eq!(outcome(&started), outcome(&cut));
    // Cut at 480 s and nothing after: the same link and goodput (only the fair share, which
    // is the mean over the trace's period, tells them apart).
    let tail = bulk("csv-tail", "10 s", "rate", &with_start(CSV_RATE, ""), &[("r.csv", rate_csv(rates[480..].iter().copied()))]);
    assert_eq!(started["links"], tail["links"]);
    assert_eq!(started["flows"][0]["bytes_delivered"], tail["flows"][0]["bytes_delivered"]);
    assert_eq!(started["links"][0]["capacity_mbps"], 20.0);
    // 1472 payload bytes of every 1500 at 20 Mbit/s, less the first packets' 10 ms on the way.
    let g = goodput(&started);
    assert!(g > 19.0 && g < 20.0, "goodput from 480 s: {g} Mbit/s");
    let from_zero = bulk("csv-0", "10 s", "rate", &with_start(CSV_RATE, ""), &[("r.csv", rate_csv(rates))]);
    assert!(goodput(&from_zero) < 0.1, "goodput from 0 s: {}", goodput(&from_zero));
}

#[test]
fn a_started_rate_trace_loops_to_its_beginning_at_its_end() {
    // 0.1 Mbit/s for 480 s, then 20 for 120: from 590 s, 10 s at 20 Mbit/s, then the trace
    // starts again at 0 s, 0.1 Mbit/s: the trace rotated by hand.
    let rates = drive_rates();
    let rotated: Vec<f64> = rates[590..].iter().chain(&rates[..590]).copied().collect();
    let started = bulk("csv-590", "15 s", "rate", &with_start(CSV_RATE, "\"590 s\""), &[("r.csv", rate_csv(rates))]);
    let cut = bulk("csv-rotated", "15 s", "rate", &with_start(CSV_RATE, ""), &[("r.csv", rate_csv(rotated))]);
    assert_eq!(outcome(&started), outcome(&cut));
    assert_eq!(started["links"][0]["capacity_mbps"], 13.366666667, "(10 s x 20 + 5 s x 0.1) / 15 s");
}

#[test]
fn a_start_beyond_the_trace_is_one_line_naming_the_field() {
    let files = [("r.csv", rate_csv(drive_rates()))];
    let e = try_bulk("csv-600", "1 s", "rate", &with_start(CSV_RATE, "\"600 s\""), &files).unwrap_err();
    assert_eq!(
        e,
        "test.toml:8: link.bottleneck.rate.start: start 600 s is not within the trace, which is 600 s long: a start must be at least 0 and less than the trace's length"
    );
    let e = try_bulk("csv-neg", "1 s", "rate", &with_start(CSV_RATE, "\"-1 s\""), &files).unwrap_err();
    assert!(e.contains("link.bottleneck.rate.start") && !e.contains('\n'), "{e}");
}

#[test]
fn a_ucc_trace_takes_a_start() {
    // G-NetTrack rows, kbit/s: 1 Mbit/s for 3 s, then 8 Mbit/s for 3 s.
    let ucc = |kbps: &[u32]| {
        let mut text = String::from("Timestamp,DL_bitrate\n");
        for (i, k) in kbps.iter().enumerate() {
            text.push_str(&format!("2020.02.14_13.21.{:02},{k}\n", 10 + i));
        }
        text
    };
    let table = r#"{ model = "ucc", file = "u.csv" START }"#;
    let started = bulk("ucc-3", "2 s", "rate", &with_start(table, "\"3 s\""), &[("u.csv", ucc(&[1000, 1000, 1000, 8000, 8000, 8000]))]);
    let cut = bulk("ucc-cut", "2 s", "rate", &with_start(table, ""), &[("u.csv", ucc(&[8000, 8000, 8000, 1000, 1000, 1000]))]);
    let from_zero = bulk("ucc-0", "2 s", "rate", &with_start(table, ""), &[("u.csv", ucc(&[1000, 1000, 1000, 8000, 8000, 8000]))]);
    assert_eq!(outcome(&started), outcome(&cut));
    assert_eq!(started["links"][0]["capacity_mbps"], 8.0);
    assert_eq!(from_zero["links"][0]["capacity_mbps"], 1.0);
}

#[test]
fn a_mahimahi_trace_takes_a_start() {
    // One opportunity every 10 ms for 1 s (1.2 Mbit/s), then one every ms for 1 s (12 Mbit/s).
    let slow: Vec<u64> = (1..=100).map(|i| i * 10).collect();
    let fast: Vec<u64> = (1001..=2000).collect();
    let lines = |times: &[u64]| times.iter().map(|t| format!("{t}\n")).collect::<String>();
    let trace = lines(&[slow.clone(), fast.clone()].concat());
    // By hand: the opportunities from 1 s on (the one at 1 s due at once), then the next
    // loop's first second; alike up to 2 s, where the file's own loop begins.
    let cut: Vec<u64> = std::iter::once(0).chain(fast.iter().map(|t| t - 1000)).chain(slow.iter().map(|t| t + 1000)).collect();
    let table = r#"{ model = "mahimahi", file = "m.down" START }"#;
    let started = bulk("mm-1", "1500 ms", "rate", &with_start(table, "\"1 s\""), &[("m.down", trace.clone())]);
    let by_hand = bulk("mm-cut", "1500 ms", "rate", &with_start(table, ""), &[("m.down", lines(&cut))]);
    let from_zero = bulk("mm-0", "1500 ms", "rate", &with_start(table, ""), &[("m.down", trace.clone())]);
    assert_eq!(started["links"], by_hand["links"]);
    assert_eq!(started["flows"][0]["bytes_delivered"], by_hand["flows"][0]["bytes_delivered"]);
    // Before 1.5 s: 1050 opportunities of 12 000 bits (0 ms, 1-1000 ms, 1010-1490 ms), against
    // 599 from the trace's beginning (10-1000 ms, 1001-1499 ms).
    assert_eq!(started["links"][0]["capacity_mbps"], 8.4);
    assert_eq!(from_zero["links"][0]["capacity_mbps"], 4.792);
    let e = try_bulk("mm-half", "1 s", "rate", &with_start(table, "\"1.5 ms\""), &[("m.down", trace)]).unwrap_err();
    assert!(e.contains("link.bottleneck.rate.start") && e.contains("whole number of milliseconds"), "{e}");
}

#[test]
fn a_delay_series_takes_a_start_and_holds_its_last_delay() {
    // 10 ms until 5 s, then 200 ms (steps); ends at 8 s.
    let series = "time_s,delay_ms\n0,10\n5,200\n8,200\n".to_string();
    let table = r#"{ model = "series", file = "d.csv", interpolation = "step" START }"#;
    let started = bulk("series-5", "4 s", "delay", &with_start(table, "\"5 s\""), &[("d.csv", series.clone())]);
    let cut = bulk("series-cut", "4 s", "delay", &with_start(table, ""), &[("d.csv", "time_s,delay_ms\n0,200\n3,200\n".into())]);
    let from_zero = bulk("series-0", "4 s", "delay", &with_start(table, ""), &[("d.csv", series.clone())]);
    assert_eq!(outcome(&started), outcome(&cut));
    // 4 s of a 40 Mbit/s link, the first bits arriving after 200 ms instead of 10 ms.
    let delivered = |s: &Value| s["flows"][0]["bytes_delivered"].as_f64().unwrap();
    assert!(delivered(&from_zero) - delivered(&started) > 0.18 * 40e6 / 8.0 * 0.95, "{} {}", delivered(&from_zero), delivered(&started));
    let e = try_bulk("series-8", "1 s", "delay", &with_start(table, "\"8 s\""), &[("d.csv", series)]).unwrap_err();
    assert!(e.ends_with("link.bottleneck.delay.start: start 8 s is not within the trace, which is 8 s long: a start must be at least 0 and less than the trace's length"), "{e}");
}

#[test]
fn a_loss_trace_starts_at_a_packet() {
    // Packets 0-4 delivered, 5-9 lost, looped.
    let pattern = "0\n0\n0\n0\n0\n1\n1\n1\n1\n1\n".to_string();
    let table = r#"{ model = "trace", file = "l.txt" START }"#;
    let started = bulk("loss-3", "1 s", "loss", &with_start(table, "3"), &[("l.txt", pattern.clone())]);
    let cut = bulk("loss-cut", "1 s", "loss", &with_start(table, ""), &[("l.txt", "0\n0\n1\n1\n1\n1\n1\n0\n0\n0\n".into())]);
    let from_zero = bulk("loss-0", "1 s", "loss", &with_start(table, ""), &[("l.txt", pattern.clone())]);
    assert_eq!(outcome(&started), outcome(&cut));
    assert_ne!(outcome(&started), outcome(&from_zero));
    let e = try_bulk("loss-secs", "1 s", "loss", &with_start(table, "\"480 s\""), &[("l.txt", pattern.clone())]).unwrap_err();
    assert!(e.contains("link.bottleneck.loss.start") && e.contains("whole number of packets"), "{e}");
    let e = try_bulk("loss-10", "1 s", "loss", &with_start(table, "10"), &[("l.txt", pattern)]).unwrap_err();
    assert!(e.ends_with("link.bottleneck.loss.start: start 10 packets is not within the trace, which is 10 packets long: a start must be at least 0 and less than the trace's length"), "{e}");
}
