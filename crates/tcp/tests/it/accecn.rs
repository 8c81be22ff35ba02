//! Accurate ECN (RFC 9768) between two `linux-tcp` endpoints: the handshake's flags for each
//! IP ECN codepoint of the SYN and SYN-ACK, the fallbacks to RFC 3168 and to no ECN (where
//! Prague gives way to NewReno, as Linux's "prague-reno"), the codepoint of the data, and the
//! sender's count of CE packets against the marks a link made, with and without lost ACKs.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::support;

use multiconn_cc::CcKind;
use multiconn_core::{Ecn, Time};
use multiconn_link::scripted::Verdict;
use multiconn_tcp::handshake::accecn_reflect;
use multiconn_tcp::TcpEndpoint;
use multiconn_testkit::Route;
use multiconn_transport::profile::TcpEcn;
use multiconn_transport::{ConnectionParams, Endpoint, Role, Workload};
use support::*;

fn prague(workload: Workload, receiver_ecn: Option<TcpEcn>) -> ConnectionParams {
    let mut p = params(workload);
    p.cc = CcKind::Prague;
    p.profile.receiver_ecn = receiver_ecn;
    p
}

fn upload() -> Workload {
    Workload::Upload { size: Some(1_000_000) }
}

fn ends(p: &ConnectionParams) -> (TcpEndpoint, TcpEndpoint) {
    (TcpEndpoint::new(Role::Client, p).unwrap(), TcpEndpoint::new(Role::Server, p).unwrap())
}

/// (AE, CWR, ECE) as a number, AE first.
fn ace(pkt: &multiconn_core::Packet) -> u8 {
    segment(pkt).flags.ace()
}

/// The handshake at time 0 with the SYN arriving `syn_ecn` and the SYN-ACK `syn_ack_ecn`:
/// (SYN flags, SYN-ACK flags, the client's first segment after it) and the two ends.
fn handshake(p: &ConnectionParams, syn_ecn: Ecn, syn_ack_ecn: Ecn) -> ([u8; 3], TcpEndpoint, TcpEndpoint, multiconn_core::Packet) {
    let (mut client, mut server) = ends(p);
    let (mut ids, now) = (0, Time::ZERO);
    let syn = client.poll_transmit(now, &mut ids).expect("the SYN");
    assert!(segment(&syn).flags.syn && syn.ecn == Ecn::NotEct, "SYNs go not-ECT");
    let syn_flags = ace(&syn);
    server.handle_packet(now, syn.with_ecn(syn_ecn));
    let syn_ack = server.poll_transmit(now, &mut ids).expect("the SYN-ACK");
    assert!(segment(&syn_ack).flags.syn && segment(&syn_ack).flags.ack);
    let syn_ack_flags = ace(&syn_ack);
    client.handle_packet(now, syn_ack.with_ecn(syn_ack_ecn));
    let first = client.poll_transmit(now, &mut ids).expect("the third ACK");
    let first_flags = ace(&first);
    server.handle_packet(now, first.clone());
    ([syn_flags, syn_ack_flags, first_flags], client, server, first)
}

fn state(e: &TcpEndpoint) -> String {
    e.ecn_stats().map_or("-".into(), |s| s.state)
}

/// RFC 9768 §3.1.1 Table 2 and §3.2.2.1: an AccECN SYN sets AE, CWR and ECE; the SYN-ACK
/// reflects the SYN's codepoint (not-ECT 0,1,0; ECT(1) 0,1,1; ECT(0) 1,0,0; CE 1,1,0); the
/// client's first ACK reflects the SYN-ACK's the same way in its ACE field; both ends agree.
#[test]
fn the_syn_ack_and_the_first_ack_reflect_the_codepoints() {
    let table = [(Ecn::NotEct, 0b010), (Ecn::Ect1, 0b011), (Ecn::Ect0, 0b100), (Ecn::Ce, 0b110)];
    for (cp, want) in table {
        assert_eq!(accecn_reflect(cp), want);
        for (cp2, want2) in table {
            let (flags, client, server, _) = handshake(&prague(download(100_000), None), cp, cp2);
            assert_eq!(flags, [0b111, want, want2], "SYN {cp:?}, SYN-ACK {cp2:?}");
            assert_eq!((state(&client), state(&server)), ("accecn".to_string(), "accecn".to_string()));
        }
    }
    // A classic controller asks for AccECN when the profile says so.
    let mut p = params(download(100_000));
    p.profile.accecn = true;
    let (flags, client, _, _) = handshake(&p, Ecn::NotEct, Ecn::NotEct);
    assert_eq!(flags, [0b111, 0b010, 0b010]);
    assert!(client.sender().accecn() && !client.sender().scalable());
}

/// A server that does RFC 3168 only answers an AccECN SYN with ECE alone: both ends use
/// RFC 3168, and the Prague client gives way to NewReno sending ECT(0). A server without ECN
/// answers none of the flags: no ECN, NewReno, not-ECT. A client that does RFC 3168 only
/// (a download's receiver) sends ECE and CWR without AE; the Prague server answers ECE.
#[test]
fn rfc3168_and_non_ecn_peers_fall_back_and_prague_becomes_reno() {
    let (flags, client, server, data) = handshake(&prague(upload(), Some(TcpEcn::Rfc3168)), Ecn::NotEct, Ecn::NotEct);
    assert_eq!(flags[..2], [0b111, 0b001]);
    assert_eq!((state(&client), state(&server)), ("negotiated".to_string(), "negotiated".to_string()));
    assert_eq!(client.sender().controller().kind(), CcKind::NewReno);
    assert!(segment(&data).len > 0 && data.ecn == Ecn::Ect0, "the upload's first segment: {:?}", data.ecn);

    let (flags, client, server, data) = handshake(&prague(upload(), Some(TcpEcn::None)), Ecn::NotEct, Ecn::NotEct);
    assert_eq!(flags[..2], [0b111, 0b000]);
    assert_eq!((state(&client), state(&server)), ("not_negotiated".to_string(), "not_negotiated".to_string()));
    assert_eq!(client.sender().controller().kind(), CcKind::NewReno);
    assert!(segment(&data).len > 0 && data.ecn == Ecn::NotEct);

    let (flags, client, mut server, _) = handshake(&prague(download(100_000), Some(TcpEcn::Rfc3168)), Ecn::NotEct, Ecn::NotEct);
    assert_eq!(flags[..2], [0b011, 0b001]);
    assert_eq!((state(&client), state(&server)), ("negotiated".to_string(), "negotiated".to_string()));
    assert_eq!(server.sender().controller().kind(), CcKind::NewReno);
    let mut ids = 100;
    let first = std::iter::from_fn(|| server.poll_transmit(Time::ZERO, &mut ids)).find(|p| segment(p).len > 0).expect("response data");
    assert_eq!(first.ecn, Ecn::Ect0);

    // Both AccECN: the Prague sender's data goes ECT(1).
    let (_, _, mut server, _) = handshake(&prague(download(100_000), None), Ecn::NotEct, Ecn::NotEct);
    assert_eq!(server.sender().controller().kind(), CcKind::Prague);
    let first = std::iter::from_fn(|| server.poll_transmit(Time::ZERO, &mut ids)).find(|p| segment(p).len > 0).expect("response data");
    assert_eq!(first.ecn, Ecn::Ect1);
}

/// A Prague download over 10 ms each way, a link marking CE on every third data segment from
/// the 200th on (slow start has opened the window by then). Returns (marks, CE packets the
/// client counted, CE packets the server inferred); with `ack_loss`, the link back drops every
/// ACK of segments 200 to 260, so that the next ACK that arrives covers some 60 segments and
/// 20 marks.
fn marked_download(ack_loss: bool) -> (u64, u64, u64) {
    let p = prague(download(3_000_000), None);
    let mut h = fast_pair(&p, ms(10));
    let marks = Arc::new(AtomicU64::new(0));
    let counted = marks.clone();
    h.script(0, Route::ToClient, move |_, pkt| {
        let seg = segment(pkt);
        let i = seg.seq / 1448;
        if seg.len > 0 && i >= 200 && i % 3 == 0 {
            counted.fetch_add(1, Ordering::Relaxed);
            Verdict::SetEcn(Ecn::Ce)
        } else {
            Verdict::Pass
        }
    });
    if ack_loss {
        h.script(0, Route::ToServer, drop_when(|s, _| s.len == 0 && (201..261).contains(&(s.ack / 1448))));
    }
    let done = run_to_finish(&mut h, Time::ZERO + ms(60_000));
    // The last ACKs still have to reach the server.
    h.drive_until_by(done + ms(100), |_| false);
    let client_ce = h.client.receiver().r_cep() - multiconn_tcp::receiver::ACCECN_CEP_INIT;
    (marks.load(Ordering::Relaxed), client_ce, h.server.sender().delivered_ce())
}

/// Without lost ACKs the sender's count is the receiver's, which is the link's; with a run of
/// ACKs lost (20 CE pass between two that arrive, past two wraps of the field) it is never
/// less.
#[test]
fn the_sender_counts_every_ce_mark_and_never_fewer_when_acks_are_lost() {
    let (marks, client, server) = marked_download(false);
    assert!(marks > 100, "{marks}");
    assert_eq!((client, server), (marks, marks));
    let (marks, client, server) = marked_download(true);
    assert_eq!(client, marks);
    assert!(server >= marks, "inferred {server} < {marks} marked");
    // The ACK after the gap covered some 60 segments: the sender took the largest count up to
    // that with the field's remainder, whole wraps more than the truth (665 for 625 here).
    assert!(server > marks && (server - marks) % 8 == 0, "inferred {server}, {marks} marked");
}
