//! ECN (RFC 9000 §13.4, RFC 9002 §7.1): a connection with ECN on over a path that marks or
//! bleaches the ECN field: a script on the link toward the client rewrites a datagram's ECN
//! field on the way ([`Verdict::SetEcn`]), as a marking queue or a bleaching middlebox would.

use multiconn_core::{Ecn, Packet, Time};
use multiconn_link::scripted::Verdict;
use multiconn_quic::frame::Frame;
use multiconn_quic::packet::PacketType;
use multiconn_quic::recovery::EcnValidation;
use multiconn_quic::Connection;
use multiconn_testkit::{Route, WireEvent};
use multiconn_transport::{ConnectionParams, Endpoint};

use crate::support::{datagram, download, ms, params, single_path, Runs};

/// What arrived at the client: datagrams and the ECN field they arrived with.
struct Run {
    client: Connection,
    server: Connection,
    /// ECN field of every server datagram as sent (ECT(0) or ECT(1)) and as delivered.
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

/// Runs the connection for `limit` over 20 ms one-way links; `network` decides for each
/// server datagram (the `i`-th one on the link toward the client) what happens to its ECN
/// field.
fn run(p: &ConnectionParams, limit: Time, network: impl FnMut(u64, &Packet) -> Verdict + Send + 'static) -> Run {
    let mut h = single_path(p, ms(20), None);
    h.script(0, Route::ToClient, network);
    h.run_until(limit);
    let on = |route: Route, event: WireEvent| h.wire.iter().filter(move |w| w.route == route && w.event == event).map(|w| &w.pkt);
    let sent_ect = on(Route::ToClient, WireEvent::Sent).filter(|p| matches!(p.ecn, Ecn::Ect0 | Ecn::Ect1)).count() as u64;
    let delivered = on(Route::ToClient, WireEvent::Delivered).map(|p| p.ecn).collect();
    let mut last_client_counts = None;
    for pkt in on(Route::ToServer, WireEvent::Sent) {
        for q in datagram(pkt).packets().filter(|q| q.ptype == PacketType::OneRtt) {
            for f in &q.frames {
                if let Frame::Ack(a) = f {
                    last_client_counts = a.ecn;
                }
            }
        }
    }
    Run { client: *h.client, server: *h.server, sent_ect, delivered, last_client_counts }
}

/// RFC 9000 §13.4.1: the receiver's ACK frames count every CE-marked packet, and the sender
/// reads the same count; §13.4.2: the counts validate the path.
#[test]
fn ack_frames_count_the_marks_the_network_made() {
    let p = ecn_params(2_000_000);
    // Every 25th datagram to the client is marked CE.
    let r = run(&p, Time::ZERO + ms(3000), |i, pkt| if i % 25 == 24 && pkt.ecn.is_capable() { Verdict::SetEcn(Ecn::Ce) } else { Verdict::Pass });
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
    let r = run(&p, Time::ZERO + ms(3000), |_, _| Verdict::SetEcn(Ecn::NotEct));
    let server = r.server.path_recovery(0).ecn_stats().unwrap();
    assert_eq!(server.state, EcnValidation::Failed);
    assert!(r.client.stats().delivered >= 1_000_000, "the download completes without ECN");
    assert!(r.sent_ect <= multiconn_quic::recovery::ECN_TESTING_PACKETS, "ECT datagrams {}", r.sent_ect);
    assert!(r.server.stats().datagrams_sent > 100);
    assert_eq!(r.last_client_counts, None, "nothing arrived marked: no counts to report");
    assert_eq!(server.responses, 0);
}

fn prague_params(size: u64) -> ConnectionParams {
    // ECN left off in the profile: Prague turns it on.
    ConnectionParams { cc: multiconn_cc::CcKind::Prague, ..params(download(size), Time::ZERO) }
}

/// RFC 9331 §4: a Prague sender's datagrams go ECT(1), the receiver's counts report ECT(1)
/// and CE, never ECT(0), and the marks cut the window without a retransmission.
#[test]
fn prague_sends_ect1_and_hears_the_ce_counts() {
    let p = prague_params(1_000_000);
    assert!(!p.profile.ecn);
    let mut sent_ect0 = 0;
    let r = run(&p, Time::ZERO + ms(3000), move |i, pkt| {
        sent_ect0 += u64::from(pkt.ecn == Ecn::Ect0);
        assert_eq!(sent_ect0, 0, "a Prague sender never sends ECT(0)");
        if i % 25 == 24 && pkt.ecn == Ecn::Ect1 { Verdict::SetEcn(Ecn::Ce) } else { Verdict::Pass }
    });
    let server = r.server.path_recovery(0).ecn_stats().unwrap();
    assert_eq!(server.state, EcnValidation::Capable);
    assert!(r.sent_ect > 100);
    let counts = r.last_client_counts.expect("the client's ACK frames carry ECN counts");
    assert!(counts.ect1 > 0 && counts.ce > 0 && counts.ect0 == 0, "{counts:?}");
    let marks = r.delivered.iter().filter(|e| **e == Ecn::Ce).count() as u64;
    assert_eq!(r.client.stats().ce_datagrams_received, marks);
    assert_eq!(r.server.stats().retransmissions, 0, "a mark is not a loss");
    assert!(r.client.stats().delivered >= 1_000_000, "delivered {}", r.client.stats().delivered);
}

/// RFC 9331 §5 / RFC 9000 §13.4.2.1: a path that re-marks ECT(1) as ECT(0) fails a Prague
/// sender's validation: the counts report a codepoint it never sent.
#[test]
fn a_path_turning_ect1_into_ect0_fails_prague_validation() {
    let p = prague_params(1_000_000);
    let r = run(&p, Time::ZERO + ms(3000), |_, pkt| if pkt.ecn == Ecn::Ect1 { Verdict::SetEcn(Ecn::Ect0) } else { Verdict::Pass });
    let server = r.server.path_recovery(0).ecn_stats().unwrap();
    assert_eq!(server.state, EcnValidation::Failed);
    assert!(r.sent_ect <= multiconn_quic::recovery::ECN_TESTING_PACKETS, "ECT datagrams {}", r.sent_ect);
    assert!(r.client.stats().delivered >= 1_000_000, "the download completes without ECN");
}

/// ECN off (the default): nothing is marked, the ACK frames are of type 0x02.
#[test]
fn without_ecn_nothing_is_marked() {
    let p = params(download(300_000), Time::ZERO);
    let r = run(&p, Time::ZERO + ms(2000), |_, _| Verdict::Pass);
    assert_eq!(r.sent_ect, 0);
    assert_eq!(r.last_client_counts, None);
    assert!(r.server.path_recovery(0).ecn_stats().is_none());
    assert!(r.server.ecn_stats().is_none());
}
