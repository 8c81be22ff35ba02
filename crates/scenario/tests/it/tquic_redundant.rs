//! tquic's schedulers in scenarios: over the fidelity table's two-path point
//! (docs/fidelity.md) its redundant scheduler (`scheduler = "tquic_redundant"`) stays at the
//! faster path alone, below that path's rate, where the simulator's RE adds the slower path;
//! its min-RTT (`tquic_minrtt`) lets BBR use both paths where the generic min-RTT keeps it on
//! the faster one; and the scenario file refuses them where they do not apply, in one line
//! naming the field.

use crate::common;
use common::*;

/// The fidelity table's two-path point: a 20 Mbit/s, 10 ms and a 10 Mbit/s, 30 ms path,
/// 100-packet queues, a 20 MB download, here as multipath QUIC with CUBIC ([`QUIC`]).
const FIDELITY_TWO_PATHS: &str = include_str!("../../../../bench/scenarios/two_paths.toml");
/// The table's multipath QUIC rows set these over the file's MPTCP flow.
const QUIC: [(&str, &str); 2] = [("flow.dc.transport", "quic"), ("flow.dc.profile", "rfc9002")];

fn quic_with<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    QUIC.iter().chain(extra).copied().collect()
}

fn goodput(text: &str, sets: &[(&str, &str)]) -> (f64, serde_json::Value) {
    let summary = run_with(text, sets, 1);
    let flow = summary["flows"][0].clone();
    assert_eq!(flow["bytes_delivered"], 20_000_000u64, "{flow}");
    (flow["goodput_mbps"].as_f64().expect("goodput"), flow)
}

#[test]
fn over_the_fidelity_point_tquic_redundant_stays_at_the_faster_path_alone_where_re_exceeds_it() {
    let single = FIDELITY_TWO_PATHS.replace(r#"paths = [["a"], ["b"]]"#, r#"route = ["a"]"#);
    let (alone, _) = goodput(&single, &quic_with(&[]));
    let (tquic, flow) = goodput(FIDELITY_TWO_PATHS, &quic_with(&[("flow.dc.multipath.scheduler", "tquic_redundant")]));
    let (re, _) = goodput(FIDELITY_TWO_PATHS, &quic_with(&[("flow.dc.multipath.scheduler", "redundant")]));
    eprintln!("faster path alone {alone:.2}, tquic_redundant {tquic:.2}, redundant {re:.2} Mbit/s");
    // The slower path spends its window on copies of data the faster one carries.
    assert!(tquic < 20.0 && tquic <= alone * 1.01, "tquic_redundant {tquic} vs the faster path alone {alone}");
    assert!(re > 20.0 && re > alone * 1.3, "redundant {re} vs the faster path alone {alone}");
    // Yet the slower path was busy: it sent about as many bytes as its rate allows.
    let done = flow["completion_s"].as_f64().unwrap();
    let slow_sent = flow["paths"][1]["server"]["bytes_sent"].as_u64().unwrap() as f64;
    assert!(slow_sent * 8.0 / done / 1e6 > 8.0, "slow path sent {slow_sent} B in {done} s: {flow}");
}

#[test]
fn tquic_redundant_is_named_in_errors_and_refused_for_mptcp() {
    let e = load_with(FIDELITY_TWO_PATHS, &quic_with(&[("flow.dc.multipath.scheduler", "tquic")])).unwrap_err().to_string();
    assert!(e.contains("flow.dc.multipath.scheduler") && e.contains("tquic_redundant") && e.contains("picoquic"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    let mptcp = [("flow.dc.transport", "tcp"), ("flow.dc.profile", "linux-tcp"), ("flow.dc.multipath.scheduler", "tquic_redundant")];
    let e = load_with(FIDELITY_TWO_PATHS, &mptcp).unwrap_err().to_string();
    assert!(e.contains("flow.dc.multipath.scheduler: \"tquic_redundant\" is tquic's Multipath QUIC scheduler"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(load_with(FIDELITY_TWO_PATHS, &quic_with(&[("flow.dc.multipath.scheduler", "tquic_redundant")])).is_ok());
    let mptcp = [("flow.dc.transport", "tcp"), ("flow.dc.profile", "linux-tcp"), ("flow.dc.multipath.scheduler", "tquic_minrtt")];
    let e = load_with(FIDELITY_TWO_PATHS, &mptcp).unwrap_err().to_string();
    assert!(e.contains("flow.dc.multipath.scheduler: \"tquic_minrtt\" is tquic's Multipath QUIC scheduler"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
}

/// BBR is paced, seldom window-limited: the generic min-RTT keeps choosing the faster path and
/// waits for its pacer, so the slower path carries little; tquic's min-RTT passes over the
/// paced-out path and fills both, as tquic 1.6 does in the emulator (docs/fidelity.md: 25.8
/// Mbit/s emulated). CUBIC, window-limited, gets the same from both.
#[test]
fn tquic_minrtt_lets_bbr_fill_both_paths_where_minrtt_keeps_it_on_the_faster_one() {
    for cc in ["bbr", "bbr3"] {
        let (minrtt, _) = goodput(FIDELITY_TWO_PATHS, &quic_with(&[("flow.dc.cc", cc), ("flow.dc.multipath.scheduler", "minrtt")]));
        let (tquic, flow) = goodput(FIDELITY_TWO_PATHS, &quic_with(&[("flow.dc.cc", cc), ("flow.dc.multipath.scheduler", "tquic_minrtt")]));
        eprintln!("{cc}: minrtt {minrtt:.2}, tquic_minrtt {tquic:.2} Mbit/s");
        assert!(minrtt < 20.0, "{cc} minrtt {minrtt}");
        assert!(tquic > 25.0 && tquic > minrtt * 1.3, "{cc} tquic_minrtt {tquic} vs minrtt {minrtt}");
        let done = flow["completion_s"].as_f64().unwrap();
        let slow_sent = flow["paths"][1]["server"]["bytes_sent"].as_u64().unwrap() as f64;
        assert!(slow_sent * 8.0 / done / 1e6 > 7.0, "{cc}: slow path sent {slow_sent} B in {done} s");
    }
    let (minrtt, _) = goodput(FIDELITY_TWO_PATHS, &quic_with(&[("flow.dc.cc", "cubic"), ("flow.dc.multipath.scheduler", "minrtt")]));
    let (tquic, _) = goodput(FIDELITY_TWO_PATHS, &quic_with(&[("flow.dc.cc", "cubic"), ("flow.dc.multipath.scheduler", "tquic_minrtt")]));
    assert!((tquic / minrtt - 1.0).abs() < 0.02, "cubic: tquic_minrtt {tquic} vs minrtt {minrtt}");
}
