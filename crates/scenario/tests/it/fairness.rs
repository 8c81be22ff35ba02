//! Fairness: flows switched off, flows that would start after the end, the flows an index
//! covers, max-min fair shares on hand-checkable topologies, and a single-connectivity user
//! sharing a dual-connectivity leg; and queues given in bandwidth-delay products.

use crate::common;
use common::*;
use serde_json::Value;

fn error_of(text: &str) -> String {
    let e = load_str(text).expect_err("scenario should be rejected").to_string();
    assert!(!e.contains('\n'), "error must be one line: {e}");
    e
}

fn flow<'a>(summary: &'a Value, name: &str) -> &'a Value {
    summary["flows"].as_array().unwrap().iter().find(|f| f["name"] == name).unwrap_or_else(|| panic!("no flow {name}: {summary}"))
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Two bulk TCP flows over one 10 Mbit/s link; `EXTRA` is replaced by more settings.
const TWO_ON_ONE: &str = r#"
[run]
duration = "10 s"

[[link]]
name = "bottleneck"
between = ["server", "client"]
rate = "10 Mbit/s"
delay = "10 ms"
queue = "50 packets"

[[flow]]
name = "a"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"

[[flow]]
name = "b"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
EXTRA
"#;

#[test]
fn a_disabled_flow_is_checked_but_not_run() {
    let text = TWO_ON_ONE.replace("EXTRA", "");
    let s = run_with(&text, &[("flow.b.enabled", "false")], 1);
    let names: Vec<&str> = s["flows"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["a"]);
    assert_eq!(s["disabled_flows"], serde_json::json!(["b"]));
    assert_eq!(s["fairness"]["flows"], serde_json::json!(["a"]));
    // Alone on the link, flow a has all of it.
    assert!((num(&flow(&s, "a")["fair_share_mbps"]) - 10.0).abs() < 1e-9);
    assert!(num(&flow(&s, "a")["goodput_mbps"]) > 9.0);
    // Still checked: a bad setting of the disabled flow is an error.
    let e = error_of(&TWO_ON_ONE.replace("EXTRA", "enabled = false\ncc = \"nosuch\""));
    assert!(e.contains("flow.b.cc"), "{e}");
    // Every flow off is an error naming them.
    let e = load_with(&text, &[("flow.a.enabled", "false"), ("flow.b.enabled", "false")]).unwrap_err().to_string();
    assert!(e.contains("every flow has enabled = false (a, b)"), "{e}");
}

#[test]
fn a_flow_starting_at_or_after_the_end_is_an_error() {
    let e = error_of(&TWO_ON_ONE.replace("EXTRA", "start = \"10 s\""));
    assert!(e.starts_with("test.toml:"), "{e}");
    assert!(e.contains("flow.b.start"), "{e}");
    assert!(e.contains("starts at 10 s, not before the end of the run (run.duration = 10 s)"), "{e}");
    let e = error_of(&TWO_ON_ONE.replace("EXTRA", "start = \"12.5 s\""));
    assert!(e.contains("flow.b.start") && e.contains("12.5 s"), "{e}");
    // Just before the end is allowed; switched off, any start is.
    load_str(&TWO_ON_ONE.replace("EXTRA", "start = \"9.9 s\"")).unwrap();
    load_str(&TWO_ON_ONE.replace("EXTRA", "start = \"30 s\"\nenabled = false")).unwrap();
}

#[test]
fn the_fairness_table_chooses_the_flows_and_names_the_known_ones() {
    let s = run(&TWO_ON_ONE.replace("EXTRA", "\n[fairness]\nflows = [\"b\"]"), Some(1)).0;
    assert_eq!(s["fairness"]["flows"], serde_json::json!(["b"]));
    assert_eq!(s["jain_fairness"], 1.0);
    assert_eq!(s["fairness"]["jain"], 1.0);
    let e = error_of(&TWO_ON_ONE.replace("EXTRA", "\n[fairness]\nflows = [\"a\", \"c\"]"));
    assert!(e.contains("fairness.flows") && e.contains("there is no flow named \"c\" (flows: a, b)"), "{e}");
    let e = error_of(&TWO_ON_ONE.replace("EXTRA", "enabled = false\n\n[fairness]\nflows = [\"a\", \"b\"]"));
    assert!(e.contains("fairness.flows") && e.contains("flow \"b\" has enabled = false") && e.contains("(flows that run: a)"), "{e}");
    let e = error_of(&TWO_ON_ONE.replace("EXTRA", "\n[fairness]\nflows = []"));
    assert!(e.contains("fairness.flows") && e.contains("(flows: a, b)"), "{e}");
}

#[test]
fn two_flows_on_one_link_have_half_each() {
    let s = run(&TWO_ON_ONE.replace("EXTRA", ""), Some(1)).0;
    for name in ["a", "b"] {
        let f = flow(&s, name);
        assert_eq!(num(&f["fair_share_mbps"]), 5.0);
        let expected = num(&f["goodput_mbps"]) / 5.0;
        assert!((num(&f["normalised"]) - expected).abs() < 1e-8, "{f}");
    }
    let fairness = &s["fairness"];
    let (x, y) = (num(&flow(&s, "a")["normalised"]), num(&flow(&s, "b")["normalised"]));
    let jain = (x + y).powi(2) / (2.0 * (x * x + y * y));
    assert!((num(&fairness["normalised_jain"]) - jain).abs() < 1e-8, "{fairness}");
    assert!((num(&fairness["min_normalised"]) - x.min(y)).abs() < 1e-8, "{fairness}");
    // Equal shares: the normalised index is the raw one.
    assert!((num(&fairness["normalised_jain"]) - num(&s["jain_fairness"])).abs() < 1e-8);
}

#[test]
fn water_filling_gives_the_narrow_path_its_bottleneck_and_the_rest_to_the_other() {
    // "far" crosses the 10 Mbit/s link and a 4 Mbit/s one; "near" the 10 alone. By hand: the
    // 4 Mbit/s link fills first (4 < 10 / 2), freezing "far" at 4; "near" takes the 6 left.
    let text = r#"
[run]
duration = "10 s"

[[link]]
name = "shared"
between = ["server", "router"]
rate = "10 Mbit/s"
delay = "5 ms"
queue = "50 packets"

[[link]]
name = "narrow"
between = ["router", "far"]
rate = "4 Mbit/s"
delay = "5 ms"
queue = "50 packets"

[[flow]]
name = "far"
from = "server"
to = "far"
transport = "tcp"
app = "bulk"
route = ["shared", "narrow"]

[[flow]]
name = "near"
from = "server"
to = "router"
transport = "tcp"
app = "bulk"
"#;
    let s = run(text, Some(1)).0;
    assert_eq!(num(&flow(&s, "far")["fair_share_mbps"]), 4.0);
    assert_eq!(num(&flow(&s, "near")["fair_share_mbps"]), 6.0);
    for name in ["far", "near"] {
        let f = flow(&s, name);
        let n = num(&f["normalised"]);
        assert!((n - num(&f["goodput_mbps"]) / num(&f["fair_share_mbps"])).abs() < 1e-8, "{f}");
        // "far" reaches most of its share in 10 s (0.81: goodput counts payload, the share
        // wire bits, and CUBIC starts slowly over the longer path); "near" takes up what
        // "far" leaves (1.06).
        let expected = if name == "far" { 0.75..1.0 } else { 0.95..1.2 };
        assert!(expected.contains(&n), "{f}");
    }
}

/// A DC user (a split of an LTE and an NR leg) and a single-connectivity user on the LTE leg.
const DC_AND_SC: &str = r#"
[run]
duration = "20 s"

[[link]]
name = "lte"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = "20 ms"
queue = "100 packets"

[[link]]
name = "nr"
between = ["server", "client"]
rate = "40 Mbit/s"
delay = "10 ms"
queue = "100 packets"

[[split]]
name = "dc"
legs = ["lte", "nr"]
policy = { model = "alternate" }

[[flow]]
name = "dc"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
route = ["dc"]

[[flow]]
name = "sc"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
route = ["lte"]
"#;

#[test]
fn normalised_fairness_shows_the_single_connectivity_users_loss() {
    let s = run(DC_AND_SC, Some(1)).0;
    let (dc, sc) = (flow(&s, "dc"), flow(&s, "sc"));
    // By hand: the DC flow puts every other packet on the LTE leg, so at rate r it loads it
    // with r / 2, the NR leg too; the LTE leg fills first, at r / 2 + r = 20 Mbit/s: both
    // flows' max-min share is 13.33 Mbit/s.
    for f in [dc, sc] {
        assert!((num(&f["fair_share_mbps"]) - 40.0 / 3.0).abs() < 1e-6, "{f}");
    }
    let raw = num(&s["jain_fairness"]);
    let (n_dc, n_sc) = (num(&dc["normalised"]), num(&sc["normalised"]));
    println!("dc {dc}\nsc {sc}\nfairness {}", s["fairness"]);
    // Jain's raw index reads fairer than the single-connectivity user fares ... (here DC 19.5
    // and SC 9.3 Mbit/s, raw 0.89; kernel TCP through the emulator gave DC 17.3-24.2 and SC
    // 7.0-10.5 Mbit/s in three runs, raw 0.77-0.94)
    assert!(raw > n_sc + 0.1, "raw {raw}, sc {n_sc}");
    // ... while the single-connectivity user gets well under its share, the DC user over.
    assert!(n_sc < 0.9, "sc {n_sc}");
    assert!(n_dc > 1.1, "dc {n_dc}");
    assert_eq!(num(&s["fairness"]["min_normalised"]), sc["normalised"].as_f64().unwrap());
}

#[test]
fn a_queue_in_bdp_resolves_to_bytes() {
    let queue_of = |text: &str| {
        let scenario = load_str(text).unwrap_or_else(|e| panic!("{e}"));
        let links = &scenario.resolved().links;
        links.iter().map(|l| format!("{:?}", l.model)).collect::<Vec<_>>()
    };
    // 1.5 × 20 Mbit/s × 2 × 25 ms = 1.5 × 1 Mbit = 187 500 B; the reverse direction's
    // 2 Mbit/s gives 18 750 B.
    let text = common::BULK
        .replace("\"40 Mbit/s\"", "\"20 Mbit/s\"\nreverse = { rate = \"2 Mbit/s\" }")
        .replace("\"10 ms\"", "\"25 ms\"")
        .replace("\"100 packets\"", "\"1.5 BDP\"");
    let models = queue_of(&text);
    assert!(models[0].contains("queue: Bytes(187500)"), "{}", models[0]);
    assert!(models[1].contains("queue: Bytes(18750)"), "{}", models[1]);
    // At least one 1500-byte packet.
    let tiny = text.replace("\"1.5 BDP\"", "\"0.001 BDP\"");
    assert!(queue_of(&tiny)[0].contains("queue: Bytes(1500)"));
    // No delay, or a bad number: errors at the field.
    let e = error_of(&common::BULK.replace("delay = \"10 ms\"\n", "").replace("\"100 packets\"", "\"2 BDP\""));
    assert!(e.contains("link.bottleneck.queue") && e.contains("a queue in BDP needs a delay, and the forward direction's is zero"), "{e}");
    let e = error_of(&common::BULK.replace("\"100 packets\"", "\"-2 BDP\""));
    assert!(e.contains("link.bottleneck.queue") && e.contains("\"1.5 BDP\""), "{e}");
    let e = error_of(&common::BULK.replace("\"100 packets\"", "\"100 pakets\""));
    assert!(e.contains("or a multiple of the bandwidth-delay product (\"1.5 BDP\")"), "{e}");
}

#[test]
fn a_queue_in_bdp_needs_a_fixed_rate() {
    let e = error_of(
        &common::BULK
            .replace("\"40 Mbit/s\"", "{ model = \"mahimahi\", file = \"data/five.down\" }")
            .replace("\"100 packets\"", "\"1 BDP\""),
    );
    assert!(e.contains("link.bottleneck.queue") && e.contains("needs a fixed rate, and the forward direction's rate is a trace"), "{e}");
}
