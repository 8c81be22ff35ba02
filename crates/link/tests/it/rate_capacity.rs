//! Capacity: a saturated drop-tail link delivers what its trace says it can carry, on the
//! synthetic traces in `tests/data` and, when present, on real Mahimahi and UCC G-NetTrack
//! traces in the shared data folder; and no window ever sees more than its capacity plus
//! one packet.

use multiconn_core::units::QueueLimit;
use multiconn_core::{Dur, FlowId, Packet, Rate, Time};
use multiconn_link::queue::DropTailLink;
use multiconn_link::rate::{OpportunityTrace, RateModel, StepTrace};
use multiconn_link::trace::{parse_bitrate_csv, parse_mahimahi, BitrateCsvFormat};
use multiconn_link::{Link, LinkOutput};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const PACKET_BYTES: u32 = 1500;

fn packet(id: u64, size: u32) -> Packet {
    Packet { id, flow: FlowId(0), size, seq: id, created: Time::ZERO, hop: 0, route: 0, lower_sn: 0, path: 0, ecn: multiconn_core::Ecn::NotEct, payload: None }
}

struct Saturation {
    delivered_bits: f64,
    /// Capacity of [0, end] (deliveries exactly at `end` count).
    capacity_bits: f64,
}

impl Saturation {
    fn ratio(&self) -> f64 {
        self.delivered_bits / self.capacity_bits
    }
}

/// Keeps the queue topped up with 1500-byte packets for `duration`: enqueue while there is
/// room, advance to the next due time, collect what is delivered.
fn saturate(model: RateModel, duration: Dur) -> Saturation {
    let mut link = DropTailLink::new(model, QueueLimit::Packets(100));
    let end = Time::ZERO + duration;
    let mut now = Time::ZERO;
    let mut next_id = 0;
    let mut delivered_bits = 0.0;
    loop {
        while link.has_room(PACKET_BYTES) {
            link.enqueue(now, packet(next_id, PACKET_BYTES)).expect("has_room said yes");
            next_id += 1;
        }
        match link.poll_timeout() {
            Some(due) if due <= end => now = due,
            _ => break,
        }
        while let Some(output) = link.poll(now) {
            match output {
                LinkOutput::Delivered { pkt, .. } => delivered_bits += pkt.size as f64 * 8.0,
                LinkOutput::Dropped { .. } => panic!("a drop-tail link drops only at the door"),
            }
        }
    }
    let capacity_bits = link.server().capacity_bits(Time::ZERO, end + Dur(1));
    Saturation { delivered_bits, capacity_bits }
}

fn data_file(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The shared real-trace folder, or `None` (with a note) when this checkout does not have it.
fn shared_trace(relative: &str) -> Option<(PathBuf, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/traces").join(relative);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some((path, text)),
        Err(e) => {
            println!("skipped: real trace {} not available ({e})", path.display());
            None
        }
    }
}

#[test]
fn saturated_synthetic_mahimahi_link_uses_every_opportunity() {
    let trace = parse_mahimahi(&data_file("mahimahi-synthetic.down"), "synthetic").unwrap();
    // Five loops of 2 s, ending mid-loop.
    let run = saturate(RateModel::Opportunities(trace), Dur::from_millis(9_250));
    assert_eq!(run.delivered_bits, run.capacity_bits);
    assert_eq!(run.capacity_bits, (4.0 * 1375.0 + 499.0 + 375.0) * 12_000.0, "4 loops, then 1..=999 ms of the fifth");
}

#[test]
fn saturated_synthetic_gnettrack_link_delivers_its_capacity() {
    let text = data_file("gnettrack-synthetic.csv");
    let trace = parse_bitrate_csv(&text, "synthetic", &BitrateCsvFormat::ucc("DL_bitrate")).unwrap();
    let run = saturate(RateModel::Steps(trace), Dur::from_secs(17 * 3 + 5));
    assert!((run.ratio() - 1.0).abs() < 0.01, "delivered {} of {} bits", run.delivered_bits, run.capacity_bits);
}

#[test]
fn att_lte_mahimahi_trace_mean_and_saturated_capacity() {
    let Some((path, text)) = shared_trace("mahimahi/ATT-LTE-driving-2016.down") else { return };
    let trace = parse_mahimahi(&text, &path.display().to_string()).unwrap();
    assert_eq!(trace.times_ms.len(), 45_604);
    let model = RateModel::Opportunities(trace);
    let mean = model.mean_bps();
    assert!((mean / 4.56e6 - 1.0).abs() < 0.005, "mean {mean} bit/s");
    let run = saturate(model, Dur::from_secs(300));
    println!(
        "ATT-LTE-driving-2016.down: mean {:.4} Mbit/s; 300 s saturated: delivered {:.0} bits, capacity {:.0} bits, ratio {:.6}",
        mean / 1e6,
        run.delivered_bits,
        run.capacity_bits,
        run.ratio()
    );
    assert!((run.ratio() - 1.0).abs() < 0.01);
    assert!((run.capacity_bits / (mean * 300.0) - 1.0).abs() < 0.01, "2.5 loops carry 300 s at the mean rate");
}

const UCC_DOWNLOAD: &str = "ucc-5g/5G-production-dataset/Download";

#[test]
fn ucc_static_download_matches_an_independent_per_second_computation() {
    let Some((path, text)) = shared_trace(&format!("{UCC_DOWNLOAD}/Static/B_2020.02.14_13.21.26.csv")) else { return };
    check_ucc_download(&path, &text, Irregularities { duplicates: 74, gaps_of_2: 146, gaps_of_3: 9 });
}

#[test]
fn ucc_driving_download_matches_an_independent_per_second_computation() {
    let Some((path, text)) = shared_trace(&format!("{UCC_DOWNLOAD}/Driving/B_2020.01.16_09.56.56.csv")) else { return };
    check_ucc_download(&path, &text, Irregularities { duplicates: 205, gaps_of_2: 251, gaps_of_3: 19 });
}

#[derive(Debug, PartialEq)]
struct Irregularities {
    /// Rows repeating the previous row's second.
    duplicates: usize,
    /// Consecutive rows 2 s apart (one missing second).
    gaps_of_2: usize,
    gaps_of_3: usize,
}

/// The UCC log reduced the simple way: seconds of the day (every row is on the same date),
/// values averaged per second in a map, missing seconds filled with the previous value.
struct IndependentReading {
    kbps_per_second: Vec<f64>,
    irregularities: Irregularities,
}

fn read_ucc_independently(text: &str) -> IndependentReading {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let time_col = header.iter().position(|&h| h == "Timestamp").unwrap();
    let rate_col = header.iter().position(|&h| h == "DL_bitrate").unwrap();
    let mut samples: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    let mut date = None;
    let mut seconds_in_order = Vec::new();
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split(',').collect();
        let (day, clock) = fields[time_col].split_once('_').unwrap();
        assert_eq!(*date.get_or_insert(day.to_string()), day, "the test assumes a single date");
        let hms: Vec<u32> = clock.split('.').map(|p| p.parse().unwrap()).collect();
        let second = hms[0] * 3600 + hms[1] * 60 + hms[2];
        samples.entry(second).or_default().push(fields[rate_col].parse().unwrap());
        seconds_in_order.push(second);
    }
    let steps: Vec<u32> = seconds_in_order.windows(2).map(|w| w[1] - w[0]).collect();
    let irregularities = Irregularities {
        duplicates: steps.iter().filter(|&&d| d == 0).count(),
        gaps_of_2: steps.iter().filter(|&&d| d == 2).count(),
        gaps_of_3: steps.iter().filter(|&&d| d == 3).count(),
    };
    let (&first, &last) = (samples.keys().next().unwrap(), samples.keys().next_back().unwrap());
    let mut current = 0.0;
    let kbps_per_second = (first..=last)
        .map(|s| {
            if let Some(values) = samples.get(&s) {
                current = values.iter().sum::<f64>() / values.len() as f64;
            }
            current
        })
        .collect();
    IndependentReading { kbps_per_second, irregularities }
}

fn check_ucc_download(path: &Path, text: &str, expected: Irregularities) {
    let name = path.file_name().unwrap().to_string_lossy();
    let trace = parse_bitrate_csv(text, &name, &BitrateCsvFormat::ucc("DL_bitrate")).unwrap();
    let reference = read_ucc_independently(text);
    assert_eq!(reference.irregularities, expected);
    let span_plus_one = reference.kbps_per_second.len() as u64;
    assert_eq!(trace.period, Dur::from_secs(span_plus_one), "period = last − first + 1 s");

    let model = RateModel::Steps(trace);
    let link = DropTailLink::new(model.clone(), QueueLimit::Packets(1));
    for (second, kbps) in reference.kbps_per_second.iter().enumerate() {
        let from = Time(second as u64 * 1_000_000_000);
        let bits = link.server().capacity_bits(from, from + Dur::from_secs(1));
        assert!((bits - kbps * 1000.0).abs() <= 0.5, "{name} second {second}: {bits} bits, expected {kbps} kbit");
    }
    let expected_mean = reference.kbps_per_second.iter().sum::<f64>() * 1000.0 / span_plus_one as f64;
    assert!((model.mean_bps() / expected_mean - 1.0).abs() < 1e-9);

    // Saturate for a period and a fifth, so the loop is exercised.
    let run = saturate(model.clone(), Dur::from_secs(span_plus_one * 6 / 5));
    println!(
        "{name}: period {span_plus_one} s, mean {:.3} Mbit/s; saturated {} s: delivered {:.0} bits, capacity {:.0} bits, ratio {:.6}",
        model.mean_bps() / 1e6,
        span_plus_one * 6 / 5,
        run.delivered_bits,
        run.capacity_bits,
        run.ratio()
    );
    assert!((run.ratio() - 1.0).abs() < 0.01);
}

/// Any of the three model kinds, small enough to loop often in a short test.
fn small_model() -> impl Strategy<Value = RateModel> {
    let fixed = (50_000u64..500_000_000).prop_map(|bps| RateModel::Fixed(Rate(bps)));
    let steps = prop::collection::vec((1u64..5_000, prop_oneof![Just(0u64), 50_000u64..100_000_000]), 1..6).prop_map(|steps| {
        let mut offset = 0;
        let mut list = Vec::new();
        for (length_us, bps) in steps {
            list.push((Dur::from_micros(offset), Rate(bps)));
            offset += length_us;
        }
        list[0].1 = Rate(list[0].1.bps().max(1_000_000));
        RateModel::Steps(StepTrace { steps: list, period: Dur::from_micros(offset) })
    });
    let opportunities = prop::collection::vec(0u64..4, 1..12).prop_filter_map("zero period", |deltas| {
        let times_ms: Vec<u64> = deltas.iter().scan(0, |t, d| { *t += d; Some(*t) }).collect();
        let period_ms = *times_ms.last().unwrap();
        (period_ms > 0).then_some(RateModel::Opportunities(OpportunityTrace { times_ms, period_ms }))
    });
    prop_oneof![fixed, steps, opportunities]
}

proptest! {
    /// Whatever the arrivals and however late the polling, the bits delivered in any window
    /// [t_i, t_j] between two deliveries never exceed the window's capacity plus one packet
    /// (the first one may have been partly sent before the window).
    #[test]
    fn delivered_bits_never_exceed_window_capacity_plus_one_packet(
        model in small_model(),
        arrivals in prop::collection::vec((0u64..3_000, 1u32..4_000, 0u64..5_000), 1..80),
    ) {
        let mut link = DropTailLink::new(model, QueueLimit::Packets(1000));
        let mut deliveries: Vec<(Time, u32)> = Vec::new();
        let mut collect = |link: &mut DropTailLink, now: Time| {
            while let Some(LinkOutput::Delivered { at, pkt }) = link.poll(now) {
                deliveries.push((at, pkt.size));
            }
        };
        let mut now = Time::ZERO;
        for (id, (gap_us, size, poll_delay_us)) in arrivals.into_iter().enumerate() {
            now += Dur::from_micros(gap_us);
            collect(&mut link, now);
            link.enqueue(now, packet(id as u64, size)).unwrap();
            collect(&mut link, now + Dur::from_micros(poll_delay_us));
        }
        collect(&mut link, Time(u64::MAX - 1));
        prop_assert_eq!(link.poll_timeout(), None);

        let largest_bits = 4_000.0 * 8.0;
        for i in 0..deliveries.len() {
            let mut bits = 0.0;
            for j in i..deliveries.len() {
                bits += deliveries[j].1 as f64 * 8.0;
                let capacity = link.server().capacity_bits(deliveries[i].0, deliveries[j].0 + Dur(1));
                prop_assert!(bits <= capacity + largest_bits + 1e-6,
                    "deliveries {i}..={j}: {bits} bits in a window of capacity {capacity}");
            }
        }
    }
}
