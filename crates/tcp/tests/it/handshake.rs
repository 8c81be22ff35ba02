//! Handshake and TLS 1.3 timing, and a clean download.
use crate::support;

use multiconn_core::{Dur, Time};
use multiconn_tcp::app::{CLIENT_FINISHED, CLIENT_HELLO, SERVER_FLIGHT};
use multiconn_tcp::segment::{IP_HEADER, TCP_HEADER, TIMESTAMPS_OPTION};
use multiconn_testkit::Route;
use multiconn_transport::{AppEvent, Endpoint};
use support::*;

/// Bytes on the wire of a data segment carrying `payload` bytes (headers and timestamps).
fn data_wire(payload: u64) -> u64 {
    payload + u64::from(IP_HEADER + TCP_HEADER + TIMESTAMPS_OPTION)
}

#[test]
fn client_can_send_two_rtts_after_start() {
    let mut p = params(download(100_000));
    p.start = Time(5_000_000);
    let mut h = fast_pair(&p, ms(10));
    run_to_finish(&mut h, Time(2_000_000_000));
    let to_server = sent(&h, Route::ToServer);
    let to_client = sent(&h, Route::ToClient);
    // SYN 60 B, SYN-ACK 60 B, then ClientHello rides on the handshake ACK.
    assert_eq!(to_server[0].0, p.start);
    assert_eq!(to_server[0].1.wire_size(), 60);
    assert_eq!(to_client[0].1.wire_size(), 60);
    assert_eq!(to_server[1].1.len as u64, CLIENT_HELLO);
    // One RTT (20 ms) after the start, plus the serialization of SYN and SYN-ACK at one
    // nanosecond per byte.
    assert_eq!(to_server[1].0, p.start + ms(20) + fast_tx(60 + 60));
    // The client can send once the whole server flight is in: two RTTs plus the serialization
    // of everything that crossed before it. The flight is 4000 B in three segments
    // (1448 + 1448 + 1104) sent back to back when the ClientHello arrives.
    let hello = data_wire(CLIENT_HELLO);
    let mss = h.server.mss();
    let flight: u64 = [mss, mss, SERVER_FLIGHT - 2 * mss].into_iter().map(data_wire).sum();
    assert_eq!(flight, 1500 + 1500 + 1156);
    let can_send = h.client_event_time(AppEvent::CanSend).unwrap();
    assert_eq!(can_send, p.start + ms(40) + fast_tx(60 + 60 + hello + flight));
    // The server learns the request at 2.5 RTT (Finished and the request in one segment) and
    // the first response byte arrives at 3 RTT (one full segment), each plus serialization.
    let request = data_wire(CLIENT_FINISHED + 200);
    let server_can = h.server_event_time(AppEvent::CanSend).unwrap();
    assert_eq!(server_can, can_send + ms(10) + fast_tx(request));
    let first = h.client_events.iter().find(|(_, e)| matches!(e, AppEvent::Delivered { .. })).unwrap().0;
    assert_eq!(first, server_can + ms(10) + fast_tx(data_wire(mss)));
    // Without serialization these would be 40, 50 and 60 ms after the start.
    assert!(first - (p.start + ms(60)) < Dur::from_micros(10));
}

#[test]
fn clean_download_delivers_every_byte_once_in_order() {
    let size = 1_000_000;
    let mut h = fast_pair(&params(download(size)), ms(10));
    let end = run_to_finish(&mut h, Time(10_000_000_000));
    assert_eq!(delivered_bytes(&h.client_events), size);
    assert_eq!(delivered_bytes(&h.server_events), 200);
    let complete: Vec<_> = h.client_events.iter().filter(|(_, e)| matches!(e, AppEvent::ResponseComplete { .. })).collect();
    assert_eq!(complete.len(), 1);
    assert_eq!(complete[0].1, AppEvent::ResponseComplete { index: 0, bytes: size });
    assert_eq!(h.client_events.last().unwrap().1, AppEvent::Finished);
    let s = h.server.sample();
    assert_eq!((s.retransmissions, s.lost, s.spurious_retransmissions), (0, 0, 0));
    // Slow start from IW10 over a 20 ms RTT with no bottleneck (8 Gbit/s serializes the
    // whole megabyte in about 1 ms): ~7 rounds after the 3 RTT setup.
    assert!(end < Time(ms(60 + 20 * 8).0), "{end}");
    // Full-sized data segments are 1500 B on the wire.
    let data = sent(&h, Route::ToClient);
    let full = data.iter().filter(|(_, s)| s.len == 1448).count();
    assert!(full >= 690, "{full}");
    assert!(data.iter().all(|(_, s)| s.wire_size() <= 1500));
}
