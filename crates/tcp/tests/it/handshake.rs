//! Handshake and TLS 1.3 timing, and a clean download.
use crate::support;

use multiconn_core::Time;
use multiconn_transport::AppEvent;
use support::*;

#[test]
fn client_can_send_two_rtts_after_start() {
    let mut p = params(download(100_000));
    p.start = Time(5_000_000);
    let mut h = Harness::new(&p, ms(10));
    h.run_to_finish(Time(2_000_000_000));
    let can_send = Harness::event_time(&h.client_events, AppEvent::CanSend).unwrap();
    assert_eq!(can_send, p.start + ms(40));
    // SYN 60 B, SYN-ACK 60 B, then ClientHello rides on the handshake ACK.
    assert_eq!(h.c2s.log[0].0, p.start);
    assert_eq!(h.c2s.log[0].1.wire_size(), 60);
    assert_eq!(h.s2c.log[0].1.wire_size(), 60);
    assert_eq!(h.c2s.log[1].1.len as u64, multiconn_tcp::app::CLIENT_HELLO);
    assert_eq!(h.c2s.log[1].0, p.start + ms(20));
    // The server learns the request at 2.5 RTT and the first response byte arrives at 3 RTT.
    let server_can = Harness::event_time(&h.server_events, AppEvent::CanSend).unwrap();
    assert_eq!(server_can, p.start + ms(50));
    let first = h
        .client_events
        .iter()
        .find(|(_, e)| matches!(e, AppEvent::Delivered { .. }))
        .unwrap()
        .0;
    assert_eq!(first, p.start + ms(60));
}

#[test]
fn clean_download_delivers_every_byte_once_in_order() {
    let size = 1_000_000;
    let mut h = Harness::new(&params(download(size)), ms(10));
    let end = h.run_to_finish(Time(10_000_000_000));
    assert_eq!(Harness::delivered(&h.client_events), size);
    assert_eq!(Harness::delivered(&h.server_events), 200);
    let complete: Vec<_> = h
        .client_events
        .iter()
        .filter(|(_, e)| matches!(e, AppEvent::ResponseComplete { .. }))
        .collect();
    assert_eq!(complete.len(), 1);
    assert_eq!(
        complete[0].1,
        AppEvent::ResponseComplete {
            index: 0,
            bytes: size
        }
    );
    assert_eq!(h.client_events.last().unwrap().1, AppEvent::Finished);
    let s = multiconn_transport::Endpoint::sample(&h.server);
    assert_eq!(
        (s.retransmissions, s.lost, s.spurious_retransmissions),
        (0, 0, 0)
    );
    // Slow start from IW10 over a 20 ms RTT with no bottleneck: ~7 rounds after the 3 RTT setup.
    assert!(end < Time(ms(60 + 20 * 8).0), "{end}");
    // Full-sized data segments are 1500 B on the wire.
    let full = h.s2c.log.iter().filter(|(_, s, _)| s.len == 1448).count();
    assert!(full >= 690, "{full}");
    assert!(h.s2c.log.iter().all(|(_, s, _)| s.wire_size() <= 1500));
}
