use crate::support;

use multiconn_core::{Dur, Rate, Time};
use multiconn_quic::ack_ranges::{AckFrame, ACK_DELAY_EXPONENT};
use multiconn_quic::frame::Frame;
use multiconn_quic::packet::PacketType;
use multiconn_quic::range_set::RangeSet;
use multiconn_quic::ack_state::{AckPolicy, AckState};
use multiconn_transport::profile::TransportKind;
use multiconn_transport::{Profile, Role};
use proptest::prelude::*;
use support::*;

fn ranges_strategy() -> impl Strategy<Value = Vec<(u64, u64)>> {
    // (gap before, length) pairs from a random start, up to 2^62 − 1.
    (0u64..(1 << 61), proptest::collection::vec((1u64..100_000, 1u64..5_000), 1..40)).prop_map(|(start, parts)| {
        let mut out = Vec::new();
        let mut at = start;
        for (gap, len) in parts {
            at += gap;
            out.push((at, at + len));
            at += len;
        }
        out
    })
}

proptest! {
    #[test]
    fn ack_frame_encode_decode_round_trips(ranges in ranges_strategy(), delay_us in 0u64..10_000_000) {
        let mut set = RangeSet::new();
        for (s, e) in &ranges {
            set.insert(*s, *e);
        }
        let frame = AckFrame::from_ranges(&set, Dur::from_micros(delay_us), usize::MAX).unwrap();
        let mut bytes = Vec::new();
        frame.encode(&mut bytes);
        prop_assert_eq!(bytes.len(), frame.wire_size());
        prop_assert_eq!(Frame::Ack(frame.clone()).wire_size(), bytes.len());
        let mut pos = 0;
        let decoded = AckFrame::decode(&bytes, &mut pos).unwrap();
        prop_assert_eq!(pos, bytes.len());
        prop_assert_eq!(&decoded, &frame);
        let got: Vec<(u64, u64)> = decoded.ranges().map(|r| r.unwrap()).map(|(lo, hi)| (lo, hi + 1)).collect();
        let want: Vec<(u64, u64)> = set.iter().rev().collect();
        prop_assert_eq!(got, want);
        // The delay survives at the exponent's resolution.
        let unit = 1u64 << ACK_DELAY_EXPONENT;
        prop_assert_eq!(decoded.delay(), Dur::from_micros(delay_us / unit * unit));
    }

    #[test]
    fn truncated_or_corrupted_frames_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let mut pos = 0;
        let mut b = vec![0x02];
        b.extend(bytes);
        if let Ok(f) = AckFrame::decode(&b, &mut pos) {
            for r in f.ranges() {
                prop_assert!(r.is_ok());
            }
        }
    }
}

fn policy(reorder: bool) -> AckPolicy {
    AckPolicy { delay_acks: true, threshold: 2, max_ack_delay: ms(25), immediate_on_reorder: reorder, ecn: false }
}

#[test]
fn every_second_ack_eliciting_packet_is_acknowledged_at_once() {
    let mut a = AckState::new(policy(true));
    let t0 = Time::from_secs_f64(1.0);
    assert!(a.on_packet(t0, 0, true));
    assert!(!a.ack_due(t0));
    assert_eq!(a.deadline(), Some(t0 + ms(25)));
    assert!(a.on_packet(t0 + ms(1), 1, true));
    assert!(a.ack_due(t0 + ms(1)));
    let f = a.build(t0 + ms(3)).unwrap();
    assert_eq!((f.largest, f.first_range), (1, 1));
    assert_eq!(f.delay(), ms(2), "delay since the largest arrived");
    a.on_ack_sent();
    assert!(!a.ack_due(t0 + ms(3)));
    // Non-ack-eliciting packets never trigger an ACK on their own.
    assert!(a.on_packet(t0 + ms(4), 2, false));
    assert!(a.on_packet(t0 + ms(5), 3, false));
    assert!(!a.ack_due(t0 + ms(100)) && a.deadline().is_none());
    // Duplicates are refused.
    assert!(!a.on_packet(t0 + ms(6), 1, true));
}

#[test]
fn a_single_packet_is_acknowledged_after_max_ack_delay() {
    let mut a = AckState::new(policy(true));
    let t0 = Time::from_secs_f64(2.0);
    a.on_packet(t0, 0, true);
    assert!(!a.ack_due(Time((t0 + ms(25)).0 - 1)));
    assert!(a.ack_due(t0 + ms(25)));
    a.on_timeout(t0 + ms(25));
    assert!(a.ack_due(t0 + ms(25)) && a.deadline().is_none());
}

#[test]
fn a_gap_or_reordering_is_acknowledged_at_once_when_enabled() {
    for reorder in [true, false] {
        let mut a = AckState::new(policy(reorder));
        let t0 = Time::ZERO;
        a.on_packet(t0, 0, true);
        a.on_packet(t0, 1, true);
        a.on_ack_sent();
        a.on_packet(t0, 3, true); // packet 2 missing
        assert_eq!(a.ack_due(t0), reorder, "gap, reorder={reorder}");
        a.on_ack_sent();
        a.on_packet(t0, 2, true); // fills the gap late
        assert_eq!(a.ack_due(t0), reorder, "out of order, reorder={reorder}");
        let f = a.build(t0).unwrap();
        assert_eq!((f.largest, f.first_range, f.ranges.len()), (3, 3, 0));
    }
}

#[test]
fn acknowledged_ack_ranges_are_no_longer_reported() {
    let mut a = AckState::new(policy(true));
    for pn in [0, 1, 2, 5, 6] {
        a.on_packet(Time::ZERO, pn, true);
    }
    assert_eq!(a.build(Time::ZERO).unwrap().ranges.len(), 1);
    a.on_ack_acked(2);
    let f = a.build(Time::ZERO).unwrap();
    assert_eq!((f.largest, f.first_range, f.ranges.len()), (6, 1, 0));
}

/// The client's datagrams carrying an ACK frame (when each left, and whether it holds a 1-RTT
/// packet) and the server's data datagrams, of a 500 kB download at `mbps` with `profile`.
fn client_acks(profile: Profile, mbps: f64) -> (Vec<(Time, bool)>, usize) {
    let mut p = params(download(500_000), Time::ZERO);
    p.profile = profile;
    let mut h = single_path(&p, ms(10), Some(Rate::from_mbps(mbps)));
    h.run_until_finished(Time::from_secs_f64(5.0)).expect("finished");
    h.run_until(Time::from_secs_f64(6.0));
    let data = h.log().iter().filter(|w| w.from == Role::Server && !stream_frames(&w.pkt).is_empty()).count();
    let acks = h
        .log()
        .iter()
        .filter(|w| w.from == Role::Client)
        .filter(|w| w.datagram().packets().any(|q| q.frames.iter().any(|f| matches!(f, Frame::Ack(_)))))
        .map(|w| (w.sent, has_packet_type(&w.pkt, PacketType::OneRtt)))
        .collect();
    (acks, data)
}

fn builtin(name: &str) -> Profile {
    Profile::builtin(name, TransportKind::Quic).unwrap()
}

#[test]
fn the_client_acknowledges_about_every_second_data_packet() {
    let (acks, data) = client_acks(rfc9002(), 20.0);
    let acks = acks.len();
    assert!(acks >= data / 2 && acks <= data / 2 + 10, "acks {acks} for {data} data packets");
}

#[test]
fn an_aioquic_1_7_client_acknowledges_by_its_1_ms_timer_alone() {
    let (acks, data) = client_acks(builtin("aioquic-1.7"), 40.0);
    let acks: Vec<Time> = acks.into_iter().filter(|a| a.1).map(|a| a.0).collect();
    // About four data packets arrive per millisecond at the full rate.
    assert!(acks.len() < data / 3, "acks {} for {data} data packets", acks.len());
    let closest = acks.windows(2).map(|w| w[1].since(w[0])).min().unwrap();
    assert!(closest >= ms(1), "two ACKs {closest} apart");
    // The aioquic (1.0-1.3) profile approximates the timer with one ACK per packet.
    let (acks, data) = client_acks(builtin("aioquic"), 40.0);
    assert!(acks.len() + 10 >= data, "acks {} for {data} data packets", acks.len());
}
