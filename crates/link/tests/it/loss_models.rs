//! Loss models through the `Lossy` decorator: long-run statistics (seeded, hence
//! deterministic), Gilbert–Elliott burst structure, trace replay, pass-through, parsing.

use multiconn_core::{DropCause, Dur, FlowId, Packet, RngStream, Time};
use multiconn_link::loss::{parse_loss_trace, LossModel, LossTrace, Lossy};
use multiconn_link::{Link, LinkOutput, QueueState, TraceError};
use proptest::prelude::*;
use std::path::Path;

fn packet(id: u64) -> Packet {
    Packet {
        id,
        flow: FlowId(0),
        size: 1200,
        seq: id,
        created: Time::ZERO,
        hop: 0,
        route: 0,
        lower_sn: 0,
        path: 0,
        ecn: multiconn_core::Ecn::NotEct,
        payload: None,
    }
}

/// Accepts everything and forgets it, so millions of packets cost nothing.
struct Sink {
    accepted: u64,
}

impl Link for Sink {
    fn enqueue(&mut self, _now: Time, _pkt: Packet) -> Result<(), (Packet, DropCause)> {
        self.accepted += 1;
        Ok(())
    }
    fn poll(&mut self, _now: Time) -> Option<LinkOutput> {
        None
    }
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn queue(&self) -> QueueState {
        QueueState::default()
    }
    fn has_room(&self, _size: u32) -> bool {
        true
    }
    fn flush(&mut self, _now: Time, _out: &mut Vec<Packet>) {}
    fn discard_waiting(&mut self, _discard: &mut dyn FnMut(&Packet) -> bool, _out: &mut Vec<Packet>) {}
}

/// Holds at most one packet and refuses the rest as a full queue; delivers 1 ms later.
struct OneSlot {
    held: Option<(Time, Packet)>,
}

impl Link for OneSlot {
    fn enqueue(&mut self, now: Time, pkt: Packet) -> Result<(), (Packet, DropCause)> {
        if self.held.is_some() {
            return Err((pkt, DropCause::Queue));
        }
        self.held = Some((now + Dur::from_millis(1), pkt));
        Ok(())
    }
    fn poll(&mut self, now: Time) -> Option<LinkOutput> {
        match self.held.take() {
            Some((at, pkt)) if at <= now => Some(LinkOutput::Delivered { at, pkt }),
            other => {
                self.held = other;
                None
            }
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.held.as_ref().map(|(at, _)| *at)
    }
    fn queue(&self) -> QueueState {
        QueueState::default()
    }
    fn has_room(&self, _size: u32) -> bool {
        self.held.is_none()
    }
    fn flush(&mut self, _now: Time, out: &mut Vec<Packet>) {
        out.extend(self.held.take().map(|(_, p)| p));
    }
    fn discard_waiting(&mut self, _discard: &mut dyn FnMut(&Packet) -> bool, _out: &mut Vec<Packet>) {}
}

/// The fate (`true` = lost) of `n` packets offered through a `Lossy` over a sink.
fn loss_pattern(model: LossModel, seed: u64, n: usize) -> Vec<bool> {
    let mut link = Lossy::new(
        Sink { accepted: 0 },
        model,
        RngStream::derive(seed, "link/test/loss"),
    );
    let pattern: Vec<bool> = (0..n as u64)
        .map(|i| match link.enqueue(Time(i), packet(i)) {
            Ok(()) => false,
            Err((pkt, cause)) => {
                assert_eq!((pkt.id, cause), (i, DropCause::RandomLoss));
                true
            }
        })
        .collect();
    assert_eq!(
        link.inner.accepted as usize,
        pattern.iter().filter(|&&l| !l).count()
    );
    pattern
}

fn loss_rate(pattern: &[bool]) -> f64 {
    pattern.iter().filter(|&&l| l).count() as f64 / pattern.len() as f64
}

/// Mean length of the maximal runs of `value`.
fn mean_run_length(pattern: &[bool], value: bool) -> f64 {
    let runs = pattern
        .chunk_by(|a, b| a == b)
        .filter(|run| run[0] == value);
    let (count, total) = runs.fold((0usize, 0usize), |(c, t), run| (c + 1, t + run.len()));
    total as f64 / count as f64
}

fn assert_relative(what: &str, measured: f64, expected: f64, tolerance: f64) {
    let error = (measured - expected).abs() / expected;
    println!("{what}: measured {measured:.6}, expected {expected:.6}, relative error {error:.5}");
    assert!(
        error <= tolerance,
        "{what}: measured {measured}, expected {expected}"
    );
}

#[test]
fn bernoulli_loss_rate_is_within_three_standard_errors() {
    let n = 1_000_000;
    for (seed, p) in [(1, 0.01), (2, 0.3)] {
        let rate = loss_rate(&loss_pattern(LossModel::Bernoulli { p }, seed, n));
        let se = (p * (1.0 - p) / n as f64).sqrt();
        println!(
            "bernoulli p={p}: measured {rate:.6}, {:.2} standard errors off",
            (rate - p) / se
        );
        assert!((rate - p).abs() < 3.0 * se, "p={p}: measured {rate}");
    }
}

#[test]
fn bernoulli_extremes_are_exact() {
    assert!(loss_pattern(LossModel::Bernoulli { p: 0.0 }, 3, 10_000)
        .iter()
        .all(|&l| !l));
    assert!(loss_pattern(LossModel::Bernoulli { p: 1.0 }, 3, 10_000)
        .iter()
        .all(|&l| l));
}

#[test]
fn gilbert_elliott_long_run_loss_rate_matches_the_stationary_mix() {
    let (p, r, loss_good, loss_bad) = (0.05, 0.25, 0.01, 0.6);
    let model = LossModel::GilbertElliott {
        p,
        r,
        loss_good,
        loss_bad,
    };
    let expected = loss_bad * p / (p + r) + loss_good * r / (p + r);
    assert!((model.mean_loss_rate() - expected).abs() < 1e-15);
    let rate = loss_rate(&loss_pattern(model, 4, 2_000_000));
    assert_relative("gilbert-elliott loss rate", rate, expected, 0.02);
}

#[test]
fn gilbert_elliott_bursts_last_one_over_r() {
    let (p, r) = (0.05, 0.25);
    let model = LossModel::GilbertElliott {
        p,
        r,
        loss_good: 0.0,
        loss_bad: 1.0,
    };
    let pattern = loss_pattern(model, 5, 2_000_000);
    assert_relative(
        "gilbert-elliott loss rate (pure bursts)",
        loss_rate(&pattern),
        p / (p + r),
        0.02,
    );
    assert_relative(
        "gilbert-elliott mean burst length",
        mean_run_length(&pattern, true),
        1.0 / r,
        0.02,
    );
    assert_relative(
        "gilbert-elliott mean gap length",
        mean_run_length(&pattern, false),
        1.0 / p,
        0.02,
    );
}

#[test]
fn gilbert_elliott_starts_good_and_moves_before_drawing() {
    // Never leaving the good state: nothing is lost even though the bad state loses everything.
    let stay_good = LossModel::GilbertElliott {
        p: 0.0,
        r: 0.0,
        loss_good: 0.0,
        loss_bad: 1.0,
    };
    assert!(loss_pattern(stay_good, 6, 1000).iter().all(|&l| !l));
    // Certain to switch: the very first packet already sees the bad state, then it alternates.
    let flip = LossModel::GilbertElliott {
        p: 1.0,
        r: 1.0,
        loss_good: 0.0,
        loss_bad: 1.0,
    };
    let pattern = loss_pattern(flip, 6, 6);
    assert_eq!(pattern, [true, false, true, false, true, false]);
}

#[test]
fn same_seed_same_losses_other_seed_other_losses() {
    let model = LossModel::GilbertElliott {
        p: 0.02,
        r: 0.3,
        loss_good: 0.001,
        loss_bad: 0.5,
    };
    assert_eq!(
        loss_pattern(model.clone(), 7, 50_000),
        loss_pattern(model.clone(), 7, 50_000)
    );
    assert_ne!(
        loss_pattern(model.clone(), 7, 50_000),
        loss_pattern(model, 8, 50_000)
    );
}

#[test]
fn loss_trace_replays_its_pattern_exactly_and_loops() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/loss_trace_pattern.txt");
    let trace = parse_loss_trace(&std::fs::read_to_string(path).unwrap(), "pattern").unwrap();
    let expected_once = [false, true, true, false, false, false, true, false];
    assert_eq!(trace.lost, expected_once);
    let model = LossModel::Trace(trace);
    assert!((model.mean_loss_rate() - 3.0 / 8.0).abs() < 1e-15);
    let replay = loss_pattern(model, 9, 8 * 3 + 2);
    let expected: Vec<bool> = expected_once
        .iter()
        .copied()
        .cycle()
        .take(8 * 3 + 2)
        .collect();
    assert_eq!(replay, expected);
}

#[test]
fn lost_packets_never_reach_the_inner_link_and_inner_drops_pass_through() {
    let trace = LossModel::Trace(LossTrace {
        lost: vec![false, true, false, false],
    });
    let mut link = Lossy::new(
        OneSlot { held: None },
        trace,
        RngStream::derive(10, "one-slot"),
    );
    assert_eq!(link.enqueue(Time::ZERO, packet(0)), Ok(()));
    // Lost at the door while the inner slot is full: the cause is the random loss.
    assert_eq!(
        link.enqueue(Time::ZERO, packet(1)),
        Err((packet(1), DropCause::RandomLoss))
    );
    // Not lost, but the inner link refuses it: its own cause comes back unchanged.
    assert_eq!(
        link.enqueue(Time::ZERO, packet(2)),
        Err((packet(2), DropCause::Queue))
    );
    assert!(!link.has_room(1200));
    assert_eq!(link.poll_timeout(), Some(Time(1_000_000)));
    assert_eq!(link.poll(Time(999_999)), None);
    assert_eq!(
        link.poll(Time(1_000_000)),
        Some(LinkOutput::Delivered {
            at: Time(1_000_000),
            pkt: packet(0)
        })
    );
    assert_eq!(link.enqueue(Time(1_000_000), packet(3)), Ok(()));
    let mut flushed = Vec::new();
    link.flush(Time(1_000_000), &mut flushed);
    assert_eq!(flushed, vec![packet(3)]);
    assert_eq!(link.queue(), QueueState::default());
}

fn trace_error(text: &str) -> TraceError {
    let error = parse_loss_trace(text, "loss.txt").expect_err("should be rejected");
    assert_eq!(error.origin, "loss.txt");
    error
}

#[test]
fn loss_trace_parser_accepts_whitespace_and_trailing_blank_lines() {
    assert_eq!(
        parse_loss_trace(" 1 \r\n0\r\n\r\n\n", "t").unwrap().lost,
        vec![true, false]
    );
    assert_eq!(parse_loss_trace("0", "t").unwrap().lost, vec![false]);
}

#[test]
fn loss_trace_parser_rejects_bad_input_with_its_line() {
    let cases: [(&str, Option<usize>, &str); 7] = [
        ("", None, "empty loss trace"),
        ("\n\n", None, "empty loss trace"),
        (
            "0\n2\n",
            Some(2),
            "invalid entry \"2\": expected `0` (delivered) or `1` (lost)",
        ),
        ("0\n1\nyes\n", Some(3), "invalid entry \"yes\""),
        ("0 1\n", Some(1), "invalid entry \"0 1\""),
        ("0\n\n1\n", Some(2), "blank line inside the trace"),
        ("1\n0.5\n", Some(2), "invalid entry"),
    ];
    for (text, line, needle) in cases {
        let error = trace_error(text);
        assert_eq!(error.line, line, "input {text:?}: {error}");
        assert!(
            error.message.contains(needle),
            "input {text:?}: \"{}\" lacks \"{needle}\"",
            error.message
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn loss_trace_parser_never_panics(text in "\\PC{0,200}") {
        let _ = parse_loss_trace(&text, "fuzz");
    }

    #[test]
    fn loss_trace_parser_reads_back_any_pattern(lost in prop::collection::vec(any::<bool>(), 1..200), blanks in 0usize..3) {
        let mut text: String = lost.iter().map(|&l| if l { "1\n" } else { "0\n" }).collect();
        text.push_str(&"\n".repeat(blanks));
        prop_assert_eq!(parse_loss_trace(&text, "rt").unwrap().lost, lost);
    }
}

#[test]
fn only_a_model_that_loses_every_packet_says_so() {
    let ge = |loss_good, loss_bad| LossModel::GilbertElliott { p: 0.1, r: 0.5, loss_good, loss_bad };
    let trace = |lost: &[bool]| LossModel::Trace(LossTrace { lost: lost.to_vec() });
    assert!(LossModel::Bernoulli { p: 1.0 }.loses_every_packet());
    assert!(!LossModel::Bernoulli { p: 0.999_999_999 }.loses_every_packet());
    assert!(ge(1.0, 1.0).loses_every_packet());
    assert!(!ge(0.0, 1.0).loses_every_packet());
    assert!(trace(&[true, true]).loses_every_packet());
    assert!(!trace(&[true, false]).loses_every_packet());
    assert!(!trace(&[]).loses_every_packet());
}
