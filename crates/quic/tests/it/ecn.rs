//! ECN (RFC 9000 §13.4, RFC 9002 §7.1): a connection with ECN on over a path that marks or
//! bleaches the ECN field. A small loop joins the two ends by fixed-delay pipes whose
//! `network` function may rewrite a datagram's ECN field on the way to the client, as a
//! marking queue or a bleaching middlebox would.

use std::collections::BTreeMap;

use multiconn_core::{Ecn, Packet, Time};
use multiconn_quic::frame::Frame;
use multiconn_quic::packet::Datagram;
use multiconn_quic::recovery::EcnValidation;
use multiconn_quic::Connection;
use multiconn_transport::{ConnectionParams, Endpoint, Role};

use crate::support::{download, ms, params};

/// What arrived at the client: datagrams and the ECN field they arrived with.
struct Run {
    client: Connection,
    server: Connection,
    /// ECN field of every server datagram as sent and as delivered.
    sent_ect: u64,
    delivered: Vec<Ecn>,
    /// ECN counts in the last ACK frame of the application space the client sent.
    last_client_counts: Option<multiconn_quic::ack_ranges::EcnCounts>,
}

fn ecn_params(size: u64) -> ConnectionParams {
    let mut p = params(download(size), Time::ZERO);
    p.profile.ecn = true;
    p
}

/// Runs the connection for `limit` over 20 ms one-way pipes; `network` rewrites the ECN field
/// of server datagrams (the `i`-th one it sees).
fn run(p: &ConnectionParams, limit: Time, mut network: impl FnMut(u64, &mut Packet)) -> Run {
    let mut client = Connection::new(p, Role::Client).unwrap();
    let mut server = Connection::new(p, Role::Server).unwrap();
    let delay = ms(20);
    // (arrival, order) → (to the client, packet)
    let mut flight: BTreeMap<(Time, u64), (bool, Packet)> = BTreeMap::new();
    let (mut now, mut ids, mut order, mut n) = (Time::ZERO, 0u64, 0u64, 0u64);
    let mut sent_ect = 0;
    let mut delivered = Vec::new();
    let mut last_client_counts = None;
    loop {
        while let Some(mut pkt) = server.poll_transmit(now, &mut ids) {
            sent_ect += u64::from(pkt.ecn == Ecn::Ect0);
            network(n, &mut pkt);
            n += 1;
            flight.insert((now + delay, order), (true, pkt));
            order += 1;
        }
        while let Some(pkt) = client.poll_transmit(now, &mut ids) {
            let dg = pkt.payload.as_ref().and_then(|p| p.get::<Datagram>()).unwrap();
            for q in dg.packets() {
                for f in &q.frames {
                    if let Frame::Ack(a) = f {
                        if q.ptype == multiconn_quic::packet::PacketType::OneRtt {
                            last_client_counts = a.ecn;
                        }
                    }
                }
            }
            flight.insert((now + delay, order), (false, pkt));
            order += 1;
        }
        let next = [flight.keys().next().map(|k| k.0), client.poll_timeout(), server.poll_timeout()].into_iter().flatten().min();
        let Some(t) = next.filter(|t| *t <= limit) else { break };
        now = t;
        if let Some(entry) = flight.first_entry().filter(|e| e.key().0 <= now) {
            let (to_client, pkt) = entry.remove();
            if to_client {
                delivered.push(pkt.ecn);
                client.handle_packet(now, pkt);
            } else {
                server.handle_packet(now, pkt);
            }
            continue;
        }
        if client.poll_timeout().is_some_and(|d| d <= now) {
            client.handle_timeout(now);
        }
        if server.poll_timeout().is_some_and(|d| d <= now) {
            server.handle_timeout(now);
        }
    }
    Run { client, server, sent_ect, delivered, last_client_counts }
}

/// RFC 9000 §13.4.1: the receiver's ACK frames count every CE-marked packet, and the sender
/// reads the same count; §13.4.2: the counts validate the path.
#[test]
fn ack_frames_count_the_marks_the_network_made() {
    let p = ecn_params(2_000_000);
    // Every 25th datagram to the client is marked CE.
    let r = run(&p, Time::ZERO + ms(3000), |i, pkt| {
        if i % 25 == 24 && pkt.ecn.is_capable() {
            pkt.ecn = Ecn::Ce;
        }
    });
    let marks = r.delivered.iter().filter(|e| **e == Ecn::Ce).count() as u64;
    assert!(marks > 10, "marks {marks}");
    let server = r.server.path_recovery(0).ecn_stats().unwrap();
    assert_eq!(server.state, EcnValidation::Capable);
    // Handshake datagrams may coalesce packets of several spaces; the 1-RTT count sees the
    // marks on 1-RTT datagrams, the sum over spaces all of them (one per packet).
    assert_eq!(r.client.stats().ce_datagrams_received, marks);
    assert!(server.ce_reported >= marks, "reported {} marks {marks}", server.ce_reported);
    let counts = r.last_client_counts.expect("the client's ACK frames carry ECN counts");
    assert!(counts.ce > 0 && counts.ect0 > 0 && counts.ect1 == 0);
    assert!(server.responses > 0, "CE increases reduce the window");
    assert_eq!(r.server.stats().retransmissions, 0, "a mark is not a loss");
    assert!(r.server.stats().ect_datagrams_sent == r.sent_ect && r.sent_ect > 0);
}

/// RFC 9000 §13.4.2.1: a path that clears the ECN field makes validation fail, and the sender
/// stops marking (appendix A.4: after the ten testing packets nothing more is ECT).
#[test]
fn a_bleaching_path_fails_validation_and_marking_stops() {
    let p = ecn_params(1_000_000);
    let r = run(&p, Time::ZERO + ms(3000), |_, pkt| pkt.ecn = Ecn::NotEct);
    let server = r.server.path_recovery(0).ecn_stats().unwrap();
    assert_eq!(server.state, EcnValidation::Failed);
    assert!(r.client.stats().delivered >= 1_000_000, "the download completes without ECN");
    assert!(r.sent_ect <= multiconn_quic::recovery::ECN_TESTING_PACKETS, "ECT datagrams {}", r.sent_ect);
    assert!(r.server.stats().datagrams_sent > 100);
    assert_eq!(r.last_client_counts, None, "nothing arrived marked: no counts to report");
    assert_eq!(server.responses, 0);
}

/// ECN off (the default): nothing is marked, the ACK frames are of type 0x02.
#[test]
fn without_ecn_nothing_is_marked() {
    let p = params(download(300_000), Time::ZERO);
    let r = run(&p, Time::ZERO + ms(2000), |_, _| {});
    assert_eq!(r.sent_ect, 0);
    assert_eq!(r.last_client_counts, None);
    assert!(r.server.path_recovery(0).ecn_stats().is_none());
    assert!(r.server.ecn_stats().is_none());
}
