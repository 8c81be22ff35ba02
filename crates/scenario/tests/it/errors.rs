//! Bad scenarios give one-line errors naming the file, the line where known, the field and
//! what is allowed — and never panic.

use crate::common;
use common::*;
use proptest::prelude::*;

fn error_of(text: &str) -> String {
    let e = load_str(text).expect_err("scenario should be rejected").to_string();
    assert!(!e.contains('\n'), "error must be one line: {e}");
    e
}

#[test]
fn wrong_unit_names_file_line_field_and_allowed_units() {
    let e = error_of(&BULK.replace("\"40 Mbit/s\"", "\"40 Mbit\""));
    assert!(e.starts_with("test.toml:8:"), "{e}");
    assert!(e.contains("link.bottleneck.rate"), "{e}");
    assert!(e.contains("Mbit/s"), "{e}");
}

#[test]
fn missing_field() {
    let e = error_of(&BULK.replace("transport = \"udp\"\n", ""));
    assert!(e.contains("flow.bulk") && e.contains("transport"), "{e}");
    let e = error_of(&BULK.replace("rate = \"40 Mbit/s\"\n", ""));
    assert!(e.contains("link.bottleneck.rate") && e.contains("missing"), "{e}");
}

#[test]
fn negative_rate_and_bare_numbers() {
    let e = error_of(&BULK.replace("\"40 Mbit/s\"", "\"-40 Mbit/s\""));
    assert!(e.contains("negative") && e.contains("link.bottleneck.rate"), "{e}");
    let e = error_of(&BULK.replace("\"40 Mbit/s\"", "40"));
    assert!(e.contains("needs a unit"), "{e}");
}

#[test]
fn unknown_key_lists_the_allowed_ones() {
    let e = error_of(&BULK.replace("queue = \"100 packets\"", "queue = \"100 packets\"\nqeueu = 3"));
    assert!(e.contains("qeueu") && e.contains("expected one of"), "{e}");
    assert!(e.starts_with("test.toml:11:"), "{e}");
}

#[test]
fn bad_model_name_and_invalid_toml() {
    let e = error_of(&BULK.replace("\"10 ms\"", "{ model = \"gaussian\", mean = \"1 ms\" }"));
    assert!(e.contains("gaussian") && e.contains("normal"), "{e}");
    let e = error_of("[run\nduration = 1");
    assert!(e.starts_with("test.toml:1:") && e.contains("invalid TOML"), "{e}");
}

#[test]
fn semantic_errors_point_at_the_field() {
    let e = error_of(&BULK.replace("to = \"client\"", "to = \"moon\""));
    assert!(e.contains("flow.bulk.route") && e.contains("moon"), "{e}");
    let e = error_of(&BULK.replace("duration = \"20 s\"", ""));
    assert!(e.contains("run.duration") && e.contains("required"), "{e}");
    let e = error_of(&BULK.replace("app = \"bulk\"", "app = \"cbr\""));
    assert!(e.contains("flow.bulk.rate") && e.contains("needs a rate"), "{e}");
}

#[test]
fn a_percentage_written_as_a_bare_number_gets_a_hint() {
    let e = load_with(BULK, &[("link.bottleneck.loss", "75")]).unwrap_err().to_string();
    assert!(e.contains("link.bottleneck.loss") && e.contains("got 75 (for 75 %, write 0.75 or \"75 %\")"), "{e}");
    let e = error_of(&BULK.replace("queue = ", "loss = 1.5\nqueue = "));
    assert!(e.contains("got 1.5 (for 1.5 %, write 0.015 or \"1.5 %\")"), "{e}");
    // Beyond 100 there is no percentage to suggest.
    let e = error_of(&BULK.replace("queue = ", "loss = 250\nqueue = "));
    assert!(e.contains("got 250") && !e.contains("write"), "{e}");
}

#[test]
fn missing_and_malformed_trace_files() {
    let e = error_of(&BULK.replace("\"40 Mbit/s\"", "{ model = \"mahimahi\", file = \"data/nope.down\" }"));
    assert!(e.contains("link.bottleneck.rate.file") && e.contains("cannot read"), "{e}");
    assert!(e.contains("a relative path is looked up from the scenario's folder"), "{e}");
    assert!(!e.contains("does not exist"), "the folder exists: {e}");
    let e = error_of(&BULK.replace("\"40 Mbit/s\"", "{ model = \"mahimahi\", file = \"nofolder/x.down\" }"));
    assert!(e.contains("nofolder\" does not exist"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    let e = error_of(&BULK.replace("\"40 Mbit/s\"", "{ model = \"mahimahi\", file = \"data/empty.down\" }"));
    assert!(e.contains("empty.down"), "{e}");
    let e = error_of(&BULK.replace("\"40 Mbit/s\"", "{ model = \"mahimahi\", file = \"data/malformed.down\" }"));
    assert!(e.contains("malformed.down:3"), "{e}");
}

#[test]
fn overrides_are_applied_and_bad_ones_named() {
    let s = load_with(BULK, &[("link.bottleneck.rate", "30Mbit/s"), ("run.seed", "9")]).unwrap();
    assert_eq!(s.seed(), Some(9));
    assert!(s.to_json().contains("30Mbit/s"));
    let e = load_with(BULK, &[("link.nosuch.rate", "1Mbit/s")]).unwrap_err().to_string();
    assert!(e.contains("no link named \"nosuch\"") && e.contains("bottleneck"), "{e}");
    let e = load_with(BULK, &[("link.bottleneck.rate", "fast")]).unwrap_err().to_string();
    assert!(e.contains("--set link.bottleneck.rate=fast") && e.contains("invalid rate"), "{e}");
    let e = load_with(BULK, &[("link.bottleneck.colour", "red")]).unwrap_err().to_string();
    assert!(e.contains("colour") && e.contains("--set"), "{e}");
}

#[test]
fn an_error_carries_its_file_line_field_and_message() {
    let e = load_str(&BULK.replace("\"40 Mbit/s\"", "\"-40 Mbit/s\"")).unwrap_err();
    assert_eq!((e.file.as_deref(), e.line, e.set.as_deref()), (Some("test.toml"), Some(8), None));
    assert_eq!(e.path.as_deref(), Some("link.bottleneck.rate"));
    assert!(e.message.contains("negative") && !e.message.contains("test.toml"), "{e:?}");
    assert_eq!(e.to_string(), format!("test.toml:8: link.bottleneck.rate: {}", e.message));
    // Under an override: the --set instead of a line.
    let e = load_with(BULK, &[("link.bottleneck.rate", "fast")]).unwrap_err();
    assert_eq!((e.line, e.set.as_deref()), (None, Some("link.bottleneck.rate=fast")));
    assert_eq!(e.to_string(), format!("test.toml (--set link.bottleneck.rate=fast): link.bottleneck.rate: {}", e.message));
    // Invalid TOML has a line but no field.
    let e = load_str("[run\nduration = 1").unwrap_err();
    assert_eq!((e.line, e.path.as_deref()), (Some(1), None));
    assert!(e.message.starts_with("invalid TOML: "), "{e:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    /// Random text, and random edits of a valid scenario, never panic.
    #[test]
    fn random_scenarios_never_panic(s in "(\\PC|\n){0,200}") {
        let _ = load_str(&s);
    }

    #[test]
    fn random_edits_never_panic(pos in 0usize..400, insert in "[\\[\\]=\"a-z0-9 .{}/,\n-]{0,12}") {
        let mut text = BULK.to_string();
        let p = pos.min(text.len());
        if text.is_char_boundary(p) {
            text.insert_str(p, &insert);
            let _ = load_str(&text);
        }
    }

    #[test]
    fn random_overrides_never_panic(key in "[a-z.]{0,20}", value in "\\PC{0,16}") {
        let _ = load_with(BULK, &[(key.as_str(), value.as_str())]);
    }
}

/// A connection its transport refuses is an error before the run, naming the field the
/// transport's own rule concerns; nothing is substituted.
#[test]
fn transport_refusals_name_the_field_and_substitute_nothing() {
    let two_paths = r#"
[run]
duration = "5 s"
[[link]]
name = "a"
between = ["server", "client"]
rate = "10 Mbit/s"
queue = "50 packets"
[[link]]
name = "b"
between = ["server", "client"]
rate = "10 Mbit/s"
queue = "50 packets"
[[flow]]
name = "f"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
paths = [["a"], ["b"]]
"#;
    let refused = |sets: &[(&str, &str)]| load_with(two_paths, sets).expect_err("refused").to_string();
    let e = refused(&[("flow.f.multipath", "{ scheduler = \"selective_redundant\" }")]);
    assert!(e.contains("flow.f.multipath.scheduler: \"selective_redundant\" duplicates the streams flagged redundant"), "{e}");
    let e = refused(&[("flow.f.multipath", "{ ack_path = \"fastest\" }")]);
    assert!(e.contains("flow.f.multipath.ack_path: an MPTCP subflow acknowledges its own segments"), "{e}");
    let e = refused(&[("flow.f.packet_size", "80 B")]);
    assert!(e.contains("flow.f.packet_size: packets of 80 bytes leave no room for data after the IP, TCP and MPTCP headers"), "{e}");
    let e = refused(&[("flow.f.transport", "quic"), ("flow.f.profile", "aioquic"), ("flow.f.cc", "bbr")]);
    assert!(e.contains("flow.f.cc: profile \"aioquic\" does not offer congestion control \"bbr\"; it offers: newreno, cubic"), "{e}");
    let e = refused(&[("flow.f.cc", "vegas")]);
    assert!(e.contains("flow.f.cc: unknown congestion control \"vegas\"; known: newreno, cubic, bbr, fast, bbr3, prague, reno"), "{e}");
    // The same connection with settings the transport takes loads.
    assert!(load_with(two_paths, &[("flow.f.multipath", "{ scheduler = \"redundant\" }")]).is_ok());
}

/// A link-level rate trace throttles the reverse direction too: a warning says so, naming the
/// field, and is silenced by a reverse rate of its own. The scenario stays valid.
#[test]
fn a_trace_on_both_directions_is_a_warning_that_a_reverse_rate_silences() {
    let traced = BULK.replace("\"40 Mbit/s\"", "{ model = \"mahimahi\", file = \"data/five.down\" }");
    let s = load_str(&traced).expect("valid");
    assert_eq!(s.warnings().len(), 1, "{:?}", s.warnings());
    let w = &s.warnings()[0];
    assert!(w.starts_with("link.bottleneck.rate: the trace \"data/five.down\" throttles both directions"), "{w}");
    assert!(w.contains("client -> server") && w.contains("[link.reverse]"), "{w}");
    assert!(!w.contains('\n'));
    let with_reverse = load_with(&traced, &[("link.bottleneck.reverse.rate", "100 Mbit/s")]).expect("valid");
    assert!(with_reverse.warnings().is_empty(), "{:?}", with_reverse.warnings());
    assert!(load_str(BULK).expect("valid").warnings().is_empty(), "a fixed rate warns of nothing");
}

#[test]
fn the_scenarios_warnings_are_recorded_in_the_summary_and_a_clean_run_has_none() {
    let traced = BULK.replace("\"40 Mbit/s\"", "{ model = \"mahimahi\", file = \"data/five.down\" }");
    let s = load_with(&traced, &[("run.duration", "2 s")]).expect("valid");
    let summary: serde_json::Value = serde_json::from_str(&run_checked(&s, Some(1)).summary_json).unwrap();
    let recorded = summary["warnings"].as_array().expect("a warnings list");
    assert_eq!(recorded[0], s.warnings()[0].as_str());
    // A constant-rate bottleneck and one bulk flow: nothing to warn of, and no key at all.
    let clean: serde_json::Value = serde_json::from_str(&run_checked(&load_with(BULK, &[("run.duration", "2 s")]).unwrap(), Some(1)).summary_json).unwrap();
    assert!(clean.get("warnings").is_none(), "{}", clean["warnings"]);
}

#[test]
fn a_queue_limit_ending_in_a_multi_byte_character_is_an_error() {
    // The "BDP" suffix test sliced the last three bytes, inside the character: a panic.
    for q in ["é", "1 é", "\u{11660}", "1.5 BDé"] {
        let e = load_with(BULK, &[("link.bottleneck.queue", q)]).unwrap_err().to_string();
        assert!(e.contains("link.bottleneck.queue: invalid queue limit"), "{e}");
    }
}

#[test]
fn control_characters_in_a_value_keep_the_error_on_one_line() {
    // A newline in an override's value (or escaped in a TOML string) is echoed as `\n`.
    let e = load_with(BULK, &[("flow.bulk.size", "1\r\n2")]).unwrap_err();
    assert_eq!(e.set.as_deref(), Some("flow.bulk.size=1\r\n2"));
    let shown = e.to_string();
    assert!(!shown.contains(['\n', '\r']) && shown.starts_with("test.toml (--set flow.bulk.size=1\\r\\n2): flow.bulk.size: "), "{shown}");
    let e = load_with(BULK, &[("link.bottleneck.rate", "\u{7}fast")]).unwrap_err().to_string();
    assert!(e.contains("\"\\u{7}fast\"") && !e.contains('\u{7}'), "{e}");
    let e = load_with(BULK, &[("flow.bulk.receiver", "\n")]).unwrap_err().to_string();
    assert!(e.starts_with("test.toml (--set flow.bulk.receiver=\\n): "), "{e}");
}

#[test]
fn a_bulk_udp_flow_needs_a_queue_it_can_fill() {
    // The source fills its first link's queue at once: 10^16 packets took every byte of memory.
    let e = load_with(BULK, &[("link.bottleneck.queue", "9999999999999999 packets")]).unwrap_err().to_string();
    assert!(e.starts_with("test.toml (--set link.bottleneck.queue=9999999999999999 packets): link.bottleneck.queue: the forward queue holds"), "{e}");
    assert!(e.contains("the bulk udp flow \"bulk\" fills it at once: at most 1000000 packets"), "{e}");
    let e = load_with(BULK, &[("link.bottleneck.forward.queue", "1 GB"), ("flow.bulk.packet_size", "29 B")]).unwrap_err().to_string();
    assert!(e.contains("holds 34482759 packets of 29 B"), "{e}");
    assert!(load_with(BULK, &[("link.bottleneck.queue", "1000000 packets")]).is_ok());
    assert!(load_with(BULK, &[("link.bottleneck.reverse.queue", "9999999999999999 packets")]).is_ok(), "the reverse direction is not the flow's first link");
}

#[test]
fn a_run_may_have_at_most_a_million_bins() {
    // 1 us bins over 1000 s allocated gigabytes and aborted the process.
    let e = load_with(BULK, &[("run.bin", "1 us"), ("run.duration", "1000 s")]).unwrap_err().to_string();
    assert!(e.contains("run.bin: 0.000001 s bins over run.duration = 1000 s make 1000000000 bins; at most 1000000"), "{e}");
    assert!(load_with(BULK, &[("run.bin", "1 ms"), ("run.duration", "1000 s")]).is_ok());
    assert!(load_with(BULK, &[("run.bin", "1 ms"), ("run.duration", "1000.001 s")]).is_err());
}
