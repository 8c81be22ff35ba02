//! Queue disciplines on a scenario's links: CoDel, FQ-CoDel and PIE keep a saturating TCP
//! flow's standing queue near their targets where drop-tail fills its buffer; the summary's
//! `aqm` block and drop counters agree; per-direction settings; one-line errors.

use crate::common::{load_str, run};

const BULK: &str = r#"
[run]
duration = "20 s"

[[link]]
name = "bottleneck"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "20 ms"
queue = "1000 packets"
AQM

[[flow]]
name = "bulk"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
"#;

/// The forward direction's mean queueing delay in seconds (mean waiting packets × the
/// 1.2 ms a 1500-byte packet takes at 10 Mbit/s), its utilization and summary entry.
fn bottleneck(aqm: &str) -> (f64, f64, serde_json::Value) {
    let (summary, _) = run(&BULK.replace("AQM", aqm), Some(1));
    let link = summary["links"][0].clone();
    assert_eq!(link["direction"], "forward");
    let mean_queue = link["mean_queue_packets"].as_f64().unwrap();
    (mean_queue * 1500.0 * 8.0 / 10e6, link["utilization"].as_f64().unwrap(), link)
}

#[test]
fn aqm_keeps_the_standing_queue_near_its_target_where_drop_tail_fills_the_buffer() {
    let (tail_delay, tail_util, tail) = bottleneck("");
    assert!(tail_delay > 0.2, "drop-tail's standing queue: {tail_delay} s");
    assert!(tail.get("aqm").is_none(), "drop-tail links carry no aqm block");
    for (aqm, ceiling) in [("aqm = \"codel\"", 0.010), ("aqm = \"fq_codel\"", 0.010), ("aqm = \"pie\"", 0.030)] {
        let (delay, util, link) = bottleneck(aqm);
        assert!(delay < ceiling, "{aqm}: mean queueing delay {delay} s");
        // The link stays busy: TCP loses little throughput to the shorter queue.
        assert!(util > 0.9 && util > tail_util - 0.07, "{aqm}: utilization {util} (drop-tail {tail_util})");
        let block = &link["aqm"];
        let drops = ["tail_drops", "early_drops", "overflow_drops"].iter().map(|k| block[k].as_u64().unwrap()).sum::<u64>();
        assert!(block["early_drops"].as_u64().unwrap() > 0, "{aqm}: {block}");
        assert_eq!(drops, link["drops"]["queue"].as_u64().unwrap(), "{aqm}: the aqm block splits the queue drops");
        assert_eq!(block["ecn_marks"], 0, "nothing is ECN-capable by default");
    }
}

#[test]
fn a_direction_can_set_or_switch_off_the_links_discipline() {
    let text = BULK.replace("AQM", "aqm = \"pie\"\n[link.reverse]\naqm = \"none\"");
    let (summary, _) = run(&text, Some(1));
    assert_eq!(summary["links"][0]["aqm"]["discipline"], "pie");
    assert!(summary["links"][1].get("aqm").is_none());
    let text = BULK.replace("AQM", "[link.forward]\naqm = { model = \"codel\", target = \"2 ms\", interval = \"50 ms\" }");
    let (summary, _) = run(&text, Some(1));
    assert_eq!(summary["links"][0]["aqm"]["discipline"], "codel");
    assert!(summary["links"][1].get("aqm").is_none());
}

#[test]
fn pie_runs_are_reproducible_and_depend_on_the_seed() {
    let text = BULK.replace("AQM", "aqm = \"pie\"");
    let (a, _) = run(&text, Some(3));
    let (b, _) = run(&text, Some(3));
    assert_eq!(a, b);
    let (c, _) = run(&text, Some(4));
    assert_ne!(a["links"][0]["aqm"], c["links"][0]["aqm"], "PIE's drops are random draws");
}

#[test]
fn bad_disciplines_are_refused_in_one_line_naming_the_field() {
    for (aqm, expected) in [
        ("aqm = \"red\"", "link.bottleneck.aqm: unknown aqm \"red\"; known: "),
        ("aqm = { model = \"codel\", target = \"200 ms\" }", "link.bottleneck.aqm.target: target (200 ms) must be shorter than interval (100 ms)"),
        ("aqm = { model = \"fq_codel\", flows = 0 }", "link.bottleneck.aqm.flows: flows must be from 1 to 65536, got 0"),
        ("aqm = { model = \"pie\", tupdate = \"0 ms\" }", "link.bottleneck.aqm.tupdate: tupdate must be above zero"),
        ("aqm = { model = \"pie\", alpha = -1 }", "link.bottleneck.aqm.alpha: alpha must be a finite number at or above zero, got -1"),
        ("aqm = { model = \"codel\", quantum = \"1500 B\" }", "unknown field `quantum`"),
        ("[link.reverse]\naqm = { model = \"fq_codel\", quantum = \"10 B\" }", "link.bottleneck.reverse.aqm.quantum: quantum must be from 64 B to 64 KiB, got 10 B"),
    ] {
        let e = load_str(&BULK.replace("AQM", aqm)).unwrap_err().to_string();
        assert!(e.contains(expected) && e.lines().count() == 1, "{aqm}: {e}");
    }
}
