//! What the cell study's competing-flows set-up (the catalogue's `lte-cell-competing`) gives in
//! this model, pinned: QUIC and TCP (NewReno both, RFC-following stacks) get the same share,
//! whether the 0.5 % loss on the server links caps every flow below what the cell could carry,
//! or, without it, the cell is the bottleneck and the PF scheduler shares it. The study's
//! "QUIC takes about twice TCP's share" does not come out of either, but does with the study's
//! own stacks (the `ns3-quic-2019` and `ns3-tcp-3.29` profiles), through ns-3.29's 536-byte
//! TCP segments (docs/lte-cell.md, docs/profiles.md).

use crate::common::run_with;
use serde_json::Value;

const COMPETING: &str = include_str!("../../../../python/multiconn/catalog/scenarios/lte_cell_competing.toml");

/// 2 QUIC + 2 TCP at 250 m for 20 s, goodput from 5 s; `loss` on both server links.
fn two_and_two(loss: &str) -> Value {
    run_with(
        COMPETING,
        &[
            ("flow.t3.enabled", "false"),
            ("flow.t4.enabled", "false"),
            ("flow.t5.enabled", "false"),
            ("run.duration", "20 s"),
            ("link.server_quic.loss", loss),
            ("link.server_tcp.loss", loss),
        ],
        1,
    )
}

fn steady(summary: &Value, prefix: &str) -> Vec<f64> {
    summary["flows"].as_array().unwrap().iter().filter(|f| f["name"].as_str().unwrap().starts_with(prefix)).map(|f| f["steady_goodput_mbps"].as_f64().unwrap()).collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn rlc_drops(summary: &Value) -> u64 {
    summary["cells"][0]["ues"].as_array().unwrap().iter().map(|u| u["drops"]["rlc_buffer_full"].as_u64().unwrap()).sum()
}

#[test]
fn with_the_studys_loss_every_flow_is_loss_limited_and_quic_gets_what_tcp_gets() {
    let lossy = two_and_two("0.5 %");
    let lossless = two_and_two("0 %");
    let (q, t) = (steady(&lossy, "q"), steady(&lossy, "t"));
    assert_eq!((q.len(), t.len()), (2, 2));
    let ratio = mean(&q) / mean(&t);
    assert!((0.8..1.25).contains(&ratio), "QUIC {q:?} vs TCP {t:?}");
    // The cell is not what limits them: no RLC buffer overflows, and without the loss the
    // same four flows carry far more.
    assert_eq!(rlc_drops(&lossy), 0);
    let total = |s: &Value| steady(s, "").iter().sum::<f64>();
    assert!(total(&lossy) < 0.7 * total(&lossless), "{} vs {}", total(&lossy), total(&lossless));
}

#[test]
fn without_loss_the_pf_scheduler_shares_the_cell_equally_between_quic_and_tcp() {
    let lossless = two_and_two("0 %");
    let (q, t) = (steady(&lossless, "q"), steady(&lossless, "t"));
    let ratio = mean(&q) / mean(&t);
    assert!((0.9..1.1).contains(&ratio), "QUIC {q:?} vs TCP {t:?}");
    assert!(lossless["jain_fairness"].as_f64().unwrap() > 0.99);
    // The windows outgrow the cell: the RLC buffers overflow.
    assert!(rlc_drops(&lossless) > 0);
}

/// 2 QUIC + 2 TCP at 250 m for 20 s with the study's 0.5 % loss, with `sets` on top.
fn two_and_two_with(sets: &[(&str, &str)]) -> Value {
    let mut all = vec![("flow.t3.enabled", "false"), ("flow.t4.enabled", "false"), ("flow.t5.enabled", "false"), ("run.duration", "20 s")];
    all.extend_from_slice(sets);
    run_with(COMPETING, &all, 1)
}

fn quic_over_tcp(summary: &Value) -> f64 {
    mean(&steady(summary, "q")) / mean(&steady(summary, "t"))
}

#[test]
fn the_studys_ns3_stacks_give_quic_over_twice_tcps_share_through_tcps_536_byte_segments() {
    let ns3 = two_and_two_with(&[
        ("flow.q1.profile", "ns3-quic-2019"),
        ("flow.q2.profile", "ns3-quic-2019"),
        ("flow.t1.profile", "ns3-tcp-3.29"),
        ("flow.t2.profile", "ns3-tcp-3.29"),
    ]);
    // Loss-limited windows carry about MSS / (RTT·√p): 1460 against 536 bytes.
    let ratio = quic_over_tcp(&ns3);
    assert!(ratio > 2.0, "QUIC {:?} vs TCP {:?}", steady(&ns3, "q"), steady(&ns3, "t"));
    // The segment size alone does it: Linux TCP with 536-byte segments against RFC 9002 QUIC...
    let small = two_and_two_with(&[("flow.t1.packet_size", "576 B"), ("flow.t2.packet_size", "576 B")]);
    assert!(quic_over_tcp(&small) > 2.0, "{:?} vs {:?}", steady(&small, "q"), steady(&small, "t"));
    // ...while the ns-3 QUIC module against full-size Linux TCP takes no more than its share.
    let module = two_and_two_with(&[("flow.q1.profile", "ns3-quic-2019"), ("flow.q2.profile", "ns3-quic-2019")]);
    assert!((0.8..1.25).contains(&quic_over_tcp(&module)), "{:?} vs {:?}", steady(&module, "q"), steady(&module, "t"));
}
