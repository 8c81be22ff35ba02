use crate::support;

use multiconn_core::{Dur, Rate, Time};
use multiconn_quic::packet::PacketType;
use multiconn_quic::{HandshakeSizes, QuicFactory};
use multiconn_transport::{AppEvent, Role};
use support::*;

fn can_send(events: &[(Time, AppEvent)]) -> Option<Time> {
    first(events, |e| *e == AppEvent::CanSend)
}

fn first_delivery(events: &[(Time, AppEvent)]) -> Option<Time> {
    first(events, |e| matches!(e, AppEvent::Delivered { .. }))
}

#[test]
fn client_can_send_exactly_one_rtt_after_start() {
    let start = Time::from_secs_f64(1.5);
    let p = params(download(50_000), start);
    let mut h = single_path(&p, ms(10), None);
    h.run_until_finished(Time::from_secs_f64(5.0)).expect("finished");
    let log = h.log();
    // The client's first datagram is a lone Initial padded to 1200 bytes of UDP payload.
    let first = &log[0];
    assert_eq!((first.from, first.sent, first.udp_size()), (Role::Client, start, 1200));
    assert!(has_packet_type(&first.pkt, PacketType::Initial));
    // One way is 10 ms plus the serialization at 1 ns per byte of what crosses the link.
    let server_at = start + ms(10) + FAST.tx_time(first.pkt.size as u64);
    assert_eq!(can_send(&h.server_events), Some(server_at), "0.5-RTT data allowed at the server");
    // The server's flight leaves back to back; the client can send when its last datagram is in.
    let flight: u64 = log.iter().filter(|w| w.from == Role::Server && w.sent == server_at).map(|w| w.pkt.size as u64).sum();
    assert_eq!(can_send(&h.client_events), Some(server_at + FAST.tx_time(flight) + ms(10)));
    // The first response byte arrives 2 RTT after start: the request leaves when the client
    // can send, the response when the request is in, each one way after it left.
    let request = log.iter().find(|w| w.from == Role::Client && !stream_frames(&w.pkt).is_empty()).unwrap();
    assert_eq!(Some(request.sent), can_send(&h.client_events));
    assert_eq!(request.arrival, request.sent + FAST.tx_time(request.pkt.size as u64) + ms(10));
    let response = log.iter().find(|w| w.from == Role::Server && !stream_frames(&w.pkt).is_empty()).unwrap();
    assert_eq!(response.sent, request.arrival);
    assert_eq!(first_delivery(&h.client_events), Some(response.arrival));
    // 40 ms plus the few kilobytes crossed on the way (under 10 µs at 1 ns per byte).
    assert!(response.arrival.since(start + ms(40)) < Dur::from_micros(10), "{}", response.arrival);
    // HANDSHAKE_DONE confirms the client's handshake; both discard Initial and Handshake keys.
    assert!(h.client.handshake().is_confirmed() && h.server.handshake().is_confirmed());
}

#[test]
fn can_send_time_includes_serialization_of_both_flights() {
    let rate = Rate::from_mbps(10.0);
    let p = params(download(50_000), Time::ZERO);
    let mut h = single_path(&p, ms(10), Some(rate));
    h.run_until_finished(Time::from_secs_f64(5.0)).expect("finished");
    let log = h.log();
    let client_initial = log[0].pkt.size as u64;
    assert_eq!(client_initial, 1228);
    let server_at = Time::ZERO + rate.tx_time(client_initial) + ms(10);
    let flight: Vec<_> = log.iter().filter(|w| w.from == Role::Server && w.sent == server_at).collect();
    assert_eq!(flight.len(), 3, "ServerHello + EE/Certificate/CertificateVerify/Finished in three datagrams");
    assert!(flight.iter().all(|w| has_packet_type(&w.pkt, PacketType::Handshake)));
    let ser: u64 = flight.iter().map(|w| rate.tx_time(w.pkt.size as u64).0).sum();
    let expected = server_at + multiconn_core::Dur(ser) + ms(10);
    assert_eq!(can_send(&h.client_events), Some(expected));
}

#[test]
fn resumption_sends_the_request_as_0rtt_and_saves_one_rtt() {
    let start = Time::from_secs_f64(0.25);
    let mut p = params(download(50_000), start);
    let mut full = single_path(&p, ms(10), None);
    full.run_until_finished(Time::from_secs_f64(5.0)).expect("finished");
    p.resume = true;
    let mut resumed = single_path(&p, ms(10), None);
    resumed.run_until_finished(Time::from_secs_f64(5.0)).expect("finished");
    assert_eq!(can_send(&resumed.client_events), Some(start));
    // The request travels in a 0-RTT packet coalesced with the Initial.
    let log = resumed.log();
    let first = &log[0];
    assert!(has_packet_type(&first.pkt, PacketType::ZeroRtt) && has_packet_type(&first.pkt, PacketType::Initial));
    assert_eq!(first.udp_size(), 1200);
    let a = first_delivery(&full.client_events).unwrap();
    let b = first_delivery(&resumed.client_events).unwrap();
    // One RTT: the server's first flight answers the 0-RTT request at once, its response data
    // behind its handshake datagrams, all back to back; the response arrives one way later,
    // plus the serialization of what crossed (1 ns per byte).
    let server_at = start + ms(10) + FAST.tx_time(first.pkt.size as u64);
    let ahead: u64 = log.iter().filter(|w| w.from == Role::Server && w.sent == server_at).take_while(|w| stream_frames(&w.pkt).is_empty()).map(|w| w.pkt.size as u64).sum();
    let response = log.iter().find(|w| w.from == Role::Server && !stream_frames(&w.pkt).is_empty()).unwrap();
    assert_eq!(response.sent, server_at);
    assert_eq!(b, server_at + FAST.tx_time(ahead + response.pkt.size as u64) + ms(10));
    // One RTT earlier than the full handshake, give or take the serialization of the few
    // kilobytes that differ on the two paths (under 10 µs at 1 ns per byte).
    let saved = a.since(b);
    assert!(saved > ms(20) - Dur::from_micros(10) && saved < ms(20) + Dur::from_micros(10), "{saved}");
    assert_eq!(delivered_bytes(&resumed.client_events), 50_000);
}

#[test]
fn server_respects_the_anti_amplification_limit() {
    let f = QuicFactory { handshake: HandshakeSizes { certificate: 9000, ..HandshakeSizes::default() } };
    let p = params(download(20_000), Time::ZERO);
    let mut h = quic_pair_with(&f, &p, &[symmetric(ms(10), Some(Rate::from_mbps(100.0)))]);
    h.run_until_finished(Time::from_secs_f64(5.0)).expect("finished");
    let log = h.log();
    // Until a client Handshake packet reaches the server, the server sends at most 3× what
    // it received.
    let validated_at = log
        .iter()
        .filter(|w| w.from == Role::Client && !w.dropped && has_packet_type(&w.pkt, PacketType::Handshake))
        .map(|w| w.arrival)
        .min()
        .expect("client handshake packet");
    let mut blocked = false;
    for w in log.iter().filter(|w| w.from == Role::Server && w.sent < validated_at) {
        let sent: u64 = log.iter().filter(|x| x.from == Role::Server && x.sent <= w.sent).map(|x| x.udp_size()).sum();
        let recv: u64 = log.iter().filter(|x| x.from == Role::Client && x.arrival <= w.sent).map(|x| x.udp_size()).sum();
        assert!(sent <= 3 * recv, "sent {sent} received {recv}");
        blocked |= sent + 1472 > 3 * recv;
    }
    assert!(blocked, "the 9 kB certificate does not fit in the first flight");
    // The handshake needs more than one round trip.
    let cs = can_send(&h.client_events).unwrap();
    assert!(cs > Time::ZERO + ms(30), "{cs}");
}
