//! L4S marking on the RLC buffer (`l4s`), counted on the packets that leave the cell: the
//! sojourn step marks ECT(1) packets that waited longer than the threshold and no others,
//! ECT(0) and Not-ECT packets are never marked and cross the cell exactly as without marking,
//! the predicted rule's floor bounds its marks through an outage, and the same seed gives the
//! same marks; and, the bearer being one FIFO, the marked packets wait as long as the classic
//! ones beside them.

use crate::hop::{quiet, MS};
use multiconn_cell::{CellConfig, CellDirection, CellHop, CellOutput, L4sMarking};
use multiconn_core::{Ecn, FlowId, Packet, Time};

/// One packet that left the cell: its id, the codepoint it was sent with and left with, and
/// how long it took (ns).
#[derive(Clone, Debug, PartialEq)]
struct Out {
    id: u64,
    sent: Ecn,
    ecn: Ecn,
    delay_ns: u64,
}

/// The codepoints of a test source, in turn.
const MIX: [Ecn; 3] = [Ecn::Ect1, Ecn::Ect0, Ecn::NotEct];

/// Sends UE 0 a 1500 B packet every `gap_ns` from `offset_ns` until `until_ns` (downlink), the
/// codepoints of `codepoints` in turn; calls `at(now_ms, cell)` at each whole millisecond;
/// then drains the cell. Every packet that left, in order, and the drops.
fn run(cell: &mut CellHop, gap_ns: u64, offset_ns: u64, until_ns: u64, codepoints: &[Ecn], mut at: impl FnMut(u64, &mut CellHop)) -> (Vec<Out>, usize) {
    let mut sent = std::collections::HashMap::new();
    let (mut out, mut drops) = (Vec::new(), 0);
    let mut next_send = offset_ns;
    let mut next_ms = 0;
    let mut id = 0u64;
    let mut now = 0;
    loop {
        while next_ms * MS <= now {
            at(next_ms, cell);
            next_ms += 1;
        }
        while next_send <= now && next_send < until_ns {
            let ecn = codepoints[id as usize % codepoints.len()];
            let pkt = Packet::new(id, FlowId(0), 1500, id, Time(next_send)).with_ecn(ecn);
            sent.insert(id, (next_send, ecn));
            if cell.enqueue(Time(next_send), 0, CellDirection::Down, pkt).is_err() {
                drops += 1;
            }
            id += 1;
            next_send += gap_ns;
        }
        while let Some(o) = cell.poll(Time(now)).expect("a valid cell") {
            match o {
                CellOutput::Delivered { at, pkt, .. } => {
                    let (t, ecn) = sent[&pkt.id];
                    out.push(Out { id: pkt.id, sent: ecn, ecn: pkt.ecn, delay_ns: at.0 - t });
                }
                CellOutput::Dropped { .. } => drops += 1,
            }
        }
        let mut next = (next_ms * MS).max(now + 1);
        if next_send < until_ns {
            next = next.min(next_send);
        }
        match cell.poll_timeout() {
            Some(t) => next = next.min(t.0.max(now)),
            None if next_send >= until_ns => break,
            None => {}
        }
        now = next.max(now);
        if now > until_ns + 5_000 * MS {
            break;
        }
    }
    (out, drops)
}

fn marking(rule: L4sMarking) -> CellConfig {
    CellConfig { l4s_marking: Some(rule), ..quiet(vec![50.0]) }
}

#[test]
fn the_step_marks_by_the_wait_at_dequeue_and_only_ect1() {
    // A light load arriving 0.7 ms before each TTI: every SDU waits exactly 0.7 ms.
    let light = |step_us| {
        let mut cell = CellHop::new(marking(L4sMarking::Sojourn { step_us }), 1, "cell").unwrap();
        let (out, drops) = run(&mut cell, 2 * MS, 300_000, 400 * MS, &MIX, |_, _| {});
        assert_eq!((out.len(), drops), (200, 0));
        (out, cell.l4s_counts(0, CellDirection::Down).unwrap())
    };
    let (out, counts) = light(1000);
    assert!(out.iter().all(|o| o.ecn == o.sent), "0.7 ms is below a 1 ms step: nothing marked");
    assert_eq!((counts.l4s_packets, counts.marks), (67, 0));
    let (out, counts) = light(699);
    for o in &out {
        let want = if o.sent == Ecn::Ect1 { Ecn::Ce } else { o.sent };
        assert_eq!(o.ecn, want, "{o:?}: 0.7 ms is above a 0.699 ms step");
    }
    assert_eq!((counts.l4s_packets, counts.marks), (67, 67));
    assert_eq!(light(700).1.marks, 0, "strictly above the step");
}

#[test]
fn a_queue_that_builds_marks_every_ect1_packet_once_its_wait_passes_the_step() {
    // 1500 B every 100 µs (120 Mbit/s) to a UE that takes about 75 Mbit/s: the queue grows.
    let mut cell = CellHop::new(marking(L4sMarking::SOJOURN_DEFAULT), 1, "cell").unwrap();
    let (out, drops) = run(&mut cell, 100_000, 50_000, 60 * MS, &MIX, |_, _| {});
    assert_eq!(drops, 0, "60 ms fill less than the 512 kB buffer");
    let ect1: Vec<&Out> = out.iter().filter(|o| o.sent == Ecn::Ect1).collect();
    let marked = ect1.iter().filter(|o| o.ecn == Ecn::Ce).count();
    // A packet leaves at least one TTI after its first byte is sent: a marked one waited more
    // than the step before that.
    assert!(ect1.iter().filter(|o| o.ecn == Ecn::Ce).all(|o| o.delay_ns > 2 * MS));
    // The first packets found the queue empty; after the first 20 ms the wait is far above
    // the step and every ECT(1) packet is marked.
    assert!(ect1.iter().take(3).all(|o| o.ecn == Ecn::Ect1));
    assert!(ect1.iter().filter(|o| o.id >= 200).all(|o| o.ecn == Ecn::Ce));
    assert!(out.iter().filter(|o| o.sent != Ecn::Ect1).all(|o| o.ecn == o.sent), "classic packets are never marked");
    let counts = cell.l4s_counts(0, CellDirection::Down).unwrap();
    assert_eq!(counts.marks as usize, marked, "the counter agrees with the wire");
    assert!(marked > 180, "{marked} of {}", ect1.len());
    assert_eq!(cell.l4s_counts(0, CellDirection::Up).unwrap().l4s_packets, 0);
    // One FIFO per bearer: the marks do not shorten the L4S packets' wait. Each packet waits
    // as long as its neighbours of the other codepoints (the queue grows by 0.04 ms a packet).
    let mean = |ecn: Ecn| {
        let d: Vec<f64> = out.iter().filter(|o| o.sent == ecn).map(|o| o.delay_ns as f64 / 1e6).collect();
        d.iter().sum::<f64>() / d.len() as f64
    };
    let (l4s, classic) = (mean(Ecn::Ect1), mean(Ecn::Ect0));
    assert!((l4s - classic).abs() < 0.1 && l4s > 5.0, "L4S {l4s} ms, classic {classic} ms");
}

#[test]
fn classic_traffic_crosses_a_marking_cell_exactly_as_an_unmarking_one() {
    let fading = multiconn_cell::FadingConfig::Rayleigh { doppler_hz: 50.0, spread: multiconn_cell::FadingSpread::Flat };
    let base = CellConfig { fading, ..CellConfig::study(vec![400.0]) };
    let classic = [Ecn::Ect0, Ecn::NotEct];
    let mut plain = CellHop::new(base.clone(), 5, "cell").unwrap();
    let want = run(&mut plain, 150_000, 10_000, 200 * MS, &classic, |_, _| {});
    for rule in [L4sMarking::SOJOURN_DEFAULT, L4sMarking::PREDICTED_DEFAULT] {
        let mut cell = CellHop::new(CellConfig { l4s_marking: Some(rule), ..base.clone() }, 5, "cell").unwrap();
        assert_eq!(run(&mut cell, 150_000, 10_000, 200 * MS, &classic, |_, _| {}), want);
        assert_eq!(cell.l4s_counts(0, CellDirection::Down).unwrap().marks, 0);
    }
    assert!(plain.l4s_counts(0, CellDirection::Down).is_none());
}

/// 100 ms of a 12 Mbit/s ECT(1) stream, then a 100 ms outage (the UE out of range) with the
/// stream still arriving, then the link back; the codepoints of the packets sent during the
/// outage that left the cell (the TB on the air when the link went may be lost), by a cell
/// whose predicted rule's floor is `floor_bytes_per_s`, and the rate estimate in the middle
/// of the outage.
fn outage_marks(floor_bytes_per_s: f64, seed: u64) -> (Vec<Ecn>, f64) {
    let rule = L4sMarking::Predicted { min_th_us: 1000, range_us: 4000, window_us: 8000, floor_bytes_per_s };
    let mut cell = CellHop::new(marking(rule), seed, "cell").unwrap();
    let loss = cell.loss_db(0);
    let mut during = 0.0;
    let (out, _) = run(&mut cell, MS, 500_000, 300 * MS, &[Ecn::Ect1], |ms, c| match ms {
        100 => c.set_link(0, 250.0, 0.0).unwrap(),
        150 => during = c.l4s_rate_estimate(0, CellDirection::Down).unwrap(),
        200 => c.set_link(0, loss, 0.0).unwrap(),
        _ => {}
    });
    assert!(out.len() >= 298, "{} of 300 left the cell", out.len());
    let marks: Vec<Ecn> = out.iter().filter(|o| (101..200).contains(&o.id)).map(|o| o.ecn).collect();
    assert!(marks.len() >= 98);
    assert!(out.iter().filter(|o| o.id < 100).all(|o| o.ecn == Ecn::Ect1), "12 Mbit/s through a 75 Mbit/s UE: no queue, no marks");
    (marks, during)
}

#[test]
fn through_an_outage_the_floor_keeps_the_predicted_rule_from_marking_everything() {
    // With a negligible floor the estimate collapses and every packet that finds another
    // ahead of it is marked.
    let (marks, rate) = outage_marks(1.0, 1);
    assert!(rate < 1.0e4, "{rate} B/s: an eighth forgotten each TTI for 50 TTIs");
    let n = marks.iter().filter(|&&e| e == Ecn::Ce).count();
    assert!(n + 3 >= marks.len(), "{n} of {} marked", marks.len());
    // A 12 Mbit/s floor (1.5 MB/s): 1 ms of it is one packet ahead, 5 ms five. Packets are
    // only marked as the queue passes those, and with certainty beyond.
    let (marks, rate) = outage_marks(1.5e6, 1);
    assert_eq!(rate, 1.5e6);
    let first_marked = marks.iter().position(|&e| e == Ecn::Ce).unwrap();
    assert!((1..=6).contains(&first_marked), "{first_marked}: {marks:?}");
    assert!(marks[8..].iter().all(|&e| e == Ecn::Ce), "{marks:?}");
    // The ramp draws from the cell's seeded stream: the same seed, the same marks.
    assert_eq!(outage_marks(1.5e6, 1), outage_marks(1.5e6, 1));
}

#[test]
fn a_bad_marking_parameter_is_refused_with_its_field() {
    let cfg = marking(L4sMarking::Predicted { min_th_us: 1000, range_us: 0, window_us: 0, floor_bytes_per_s: 1.0 });
    let e = CellHop::new(cfg, 1, "cell").err().unwrap().to_string();
    assert!(e.starts_with("cell.l4s_marking.rate_window"), "{e}");
}
