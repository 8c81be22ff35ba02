//! Receive-side coalescing (GRO) of the `linux-tcp` profile seen from the receiving endpoint:
//! a burst of in-order segments arriving at one instant is acknowledged once per coalesced
//! packet, a gap flushes what is held and is acknowledged at once, and without GRO the same
//! burst gets one ACK per two segments.
use crate::support;

use multiconn_core::{FlowId, Packet, Payload, Time};
use multiconn_tcp::segment::{Flags, SackBlocks, Timestamps};
use multiconn_tcp::{Segment, TcpEndpoint};
use multiconn_transport::{Endpoint, Role};
use support::*;

/// Client (the receiver) and server after the handshake, at `t0`; the server's packets
/// are not pumped further, the test writes the data segments itself.
fn established(gro: bool) -> (TcpEndpoint, Time) {
    let mut p = params(download(100_000_000));
    if let Some(tcp) = p.profile.tcp.as_mut() {
        tcp.gro = gro;
    }
    let mut client = TcpEndpoint::new(Role::Client, &p).expect("linux-tcp offers newreno");
    let mut server = TcpEndpoint::new(Role::Server, &p).expect("linux-tcp offers newreno");
    let mut ids = 0;
    let mut now = Time::ZERO;
    for _ in 0..4 {
        while let Some(pkt) = client.poll_transmit(now, &mut ids) {
            server.handle_packet(now, pkt);
        }
        while let Some(pkt) = server.poll_transmit(now, &mut ids) {
            if segment(&pkt).len == 0 {
                client.handle_packet(now, pkt);
            }
        }
        now += ms(1);
    }
    assert!(client.state() == multiconn_tcp::handshake::State::Established);
    (client, now)
}

/// A full-sized data segment `i` (sequence 1 + i·MSS) sent in millisecond `sent_ms`.
fn data(mss: u64, i: u64, sent_ms: u64) -> Packet {
    let seg = Segment {
        seq: 1 + i * mss,
        ack: 1,
        flags: Flags { syn: false, ack: true, ..Flags::default() },
        window: 1000,
        wscale: None,
        sack_permitted: false,
        mss: None,
        ts: Some(Timestamps { tsval: sent_ms * 1_000_000 + 1, tsecr: 1 }),
        sack: SackBlocks::new(),
        len: mss as u32,
        ip_ecn: multiconn_core::Ecn::NotEct,
        packets: 1,
    };
    Packet::new(1000 + i, FlowId(0), seg.wire_size(), i, Time::ZERO).with_payload(Payload::new(seg))
}

/// Delivers `pkts` to the client at `now` as the simulator does (the endpoint drained after
/// each, then woken at the same instant while it asks to be) and returns the ACKs it sent.
fn arrive(client: &mut TcpEndpoint, now: Time, pkts: Vec<Packet>) -> Vec<Segment> {
    let mut ids = 10_000;
    let mut acks = Vec::new();
    for pkt in pkts {
        client.handle_packet(now, pkt);
        while let Some(p) = client.poll_transmit(now, &mut ids) {
            acks.push(segment(&p).clone());
        }
    }
    while client.poll_timeout().is_some_and(|t| t <= now) {
        client.handle_timeout(now);
        while let Some(p) = client.poll_transmit(now, &mut ids) {
            acks.push(segment(&p).clone());
        }
    }
    acks.retain(|s| s.len == 0);
    acks
}

#[test]
fn a_burst_sent_in_one_millisecond_gets_one_ack_per_64_kib() {
    let (mut client, now) = established(true);
    let mss = client.mss();
    assert_eq!(mss, 1448);
    // 393 segments from one millisecond of the sender (one TSO burst's timestamps): GRO
    // holds 45 of them per packet (52 header bytes + 45 × 1448 = 65212 < 65536, a 46th
    // reaches 66660), so 393 = 8 × 45 + 33 make 9 packets. Each carries more than one
    // full-sized segment, which tcp_input.c __tcp_ack_snd_check acknowledges at once:
    // 9 ACKs, each for everything up to its packet's end.
    let acks = arrive(&mut client, now, (0..393).map(|i| data(mss, i, 3)).collect());
    let ends: Vec<u64> = acks.iter().map(|s| s.ack).collect();
    let want: Vec<u64> = (1..=9).map(|k| 1 + (45 * k).min(393) * mss).collect();
    assert_eq!(ends, want);
    assert_eq!(client.gro().counts(), (393, 9));
    assert_eq!(client.receiver().delack_deadline(), None, "nothing left unacknowledged");
}

#[test]
fn without_gro_the_same_burst_gets_an_ack_per_two_segments() {
    let (mut client, now) = established(false);
    let mss = client.mss();
    let acks = arrive(&mut client, now, (0..393).map(|i| data(mss, i, 3)).collect());
    // Every second full-sized segment (RFC 5681 §4.2); the 393rd waits for the timer.
    assert_eq!(acks.len(), 196);
    assert!(client.receiver().delack_deadline().is_some());
}

#[test]
fn segments_from_different_milliseconds_coalesce_only_within_each() {
    let (mut client, now) = established(true);
    let mss = client.mss();
    // A release of segments the sender sent three per millisecond: their timestamps differ
    // from one millisecond to the next, which tcp_gro_receive refuses to merge (the
    // options must be identical), so each packet holds 3 segments: 393 / 3 = 131 ACKs.
    let acks = arrive(&mut client, now, (0..393).map(|i| data(mss, i, 3 + i / 3)).collect());
    assert_eq!(acks.len(), 131);
    assert_eq!(acks.last().map(|s| s.ack), Some(1 + 393 * mss));
}

#[test]
fn a_gap_flushes_and_out_of_order_data_is_acked_at_once() {
    let (mut client, now) = established(true);
    let mss = client.mss();
    // Segments 0-9, then 11-19: segment 10 is missing.
    let pkts = (0..20).filter(|&i| i != 10).map(|i| data(mss, i, 3)).collect();
    let acks = arrive(&mut client, now, pkts);
    assert_eq!(acks.len(), 2, "{acks:?}");
    // The in-order packet: acknowledged at once (more than one full-sized segment).
    assert_eq!(acks[0].ack, 1 + 10 * mss);
    assert!(acks[0].sack.is_empty());
    // The packet after the gap: out of order, acknowledged at once with its SACK block.
    assert_eq!(acks[1].ack, 1 + 10 * mss);
    assert_eq!(acks[1].sack.as_slice(), &[(1 + 11 * mss, 1 + 20 * mss)]);
    // The missing segment alone, later: it fills the hole and is acknowledged at once.
    let acks = arrive(&mut client, now + ms(5), vec![data(mss, 10, 4)]);
    assert_eq!(acks.iter().map(|s| s.ack).collect::<Vec<_>>(), vec![1 + 20 * mss]);
}
