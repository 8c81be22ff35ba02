//! Application-opened streams (the messages workload): either end opens unidirectional
//! streams (the server's ids 3, 7, ..., the client's 2, 6, ... per RFC 9000 §2.1), writes on
//! them and finishes them; the peer reports in-order progress per stream, and no end accepts
//! writes on streams it did not open.

use crate::support;

use multiconn_core::{Rate, Time};
use multiconn_transport::{AppError, Endpoint, StreamOptions, StreamProgress, Workload};
use support::*;

fn harness() -> Harness {
    let mut h = Harness::new(&params(Workload::Messages, Time::ZERO), ms(20), Some(Rate::from_mbps(10.0)));
    // Let the handshake finish.
    h.run_until(Time(ms(200).0));
    h
}

#[test]
fn server_streams_are_unidirectional_with_ids_3_7_and_progress_reaches_the_client() {
    let mut h = harness();
    let urgent = StreamOptions { priority: 0, urgent: true, redundant: true };
    let a = h.server.open_stream(urgent).unwrap();
    let b = h.server.open_stream(StreamOptions { priority: 1, ..StreamOptions::default() }).unwrap();
    assert_eq!((a, b), (3, 7));
    h.server.write(a, 1200).unwrap();
    h.server.write(b, 30_000).unwrap();
    h.server.write(a, 1200).unwrap();
    h.server.finish(a).unwrap();
    let sent_at = h.now;
    h.run_until(Time(ms(600).0));
    let mut progress: Vec<StreamProgress> = Vec::new();
    h.client.drain_progress(&mut progress);
    let last = |id: u64| progress.iter().filter(|p| p.stream == id).map(|p| p.delivered).max();
    assert_eq!(last(3), Some(2400));
    assert_eq!(last(7), Some(30_000));
    // Progress is in order per stream and each record is later than the write plus the path.
    for id in [3, 7] {
        let mine: Vec<&StreamProgress> = progress.iter().filter(|p| p.stream == id).collect();
        assert!(mine.windows(2).all(|w| w[0].delivered < w[1].delivered && w[0].at <= w[1].at));
        assert!(mine[0].at >= sent_at + ms(20));
    }
    // The priority stream is packed first: its data is complete before the background's.
    let done = |id: u64, n: u64| progress.iter().find(|p| p.stream == id && p.delivered >= n).unwrap().at;
    assert!(done(3, 2400) < done(7, 30_000));
    // Drained: nothing more until more arrives.
    let mut again = Vec::new();
    h.client.drain_progress(&mut again);
    assert!(again.is_empty());
}

#[test]
fn application_calls_are_refused_where_they_do_not_apply() {
    let mut h = harness();
    assert_eq!(h.client.write(3, 10), Err(AppError::UnknownStream(3)), "the server's stream");
    assert_eq!(h.client.write(2, 10), Err(AppError::UnknownStream(2)), "not opened yet");
    assert_eq!(h.server.write(3, 10), Err(AppError::UnknownStream(3)), "not opened yet");
    let id = h.server.open_stream(StreamOptions::default()).unwrap();
    assert_eq!(h.server.write(0, 10), Err(AppError::UnknownStream(0)), "a client-initiated stream");
    assert_eq!(h.server.write(1, 10), Err(AppError::UnknownStream(1)), "bidirectional: not the messages'");
    h.server.write(id, 10).unwrap();
    h.server.finish(id).unwrap();
    assert_eq!(h.server.write(id, 10), Err(AppError::Finished(id)));
    h.run_until(Time(ms(600).0));
    // Acknowledged and closed: still finished, not unknown.
    assert_eq!(h.server.write(id, 10), Err(AppError::Finished(id)));
}

#[test]
fn a_stream_opened_and_written_before_the_handshake_waits_for_the_keys() {
    let mut h = Harness::new(&params(Workload::Messages, Time::ZERO), ms(20), Some(Rate::from_mbps(10.0)));
    let id = h.server.open_stream(StreamOptions::default()).unwrap();
    h.run_until(Time(ms(10).0));
    h.server.write(id, 5000).unwrap();
    h.run_until(Time(ms(500).0));
    let mut progress = Vec::new();
    h.client.drain_progress(&mut progress);
    assert_eq!(progress.last().map(|p| p.delivered), Some(5000));
}

#[test]
fn client_streams_are_unidirectional_with_ids_2_6_and_progress_reaches_the_server() {
    let mut h = harness();
    let a = h.client.open_stream(StreamOptions::default()).unwrap();
    let b = h.client.open_stream(StreamOptions { priority: 1, ..StreamOptions::default() }).unwrap();
    assert_eq!((a, b), (2, 6));
    // The server's own streams are numbered apart from the client's.
    assert_eq!(h.server.open_stream(StreamOptions::default()).unwrap(), 3);
    assert_eq!(h.server.write(2, 10), Err(AppError::UnknownStream(2)), "the client's stream");
    h.client.write(a, 1200).unwrap();
    h.client.write(b, 20_000).unwrap();
    h.client.finish(a).unwrap();
    let sent_at = h.now;
    h.run_until(Time(ms(600).0));
    let mut progress: Vec<StreamProgress> = Vec::new();
    h.server.drain_progress(&mut progress);
    let last = |id: u64| progress.iter().filter(|p| p.stream == id).map(|p| p.delivered).max();
    assert_eq!(last(2), Some(1200));
    assert_eq!(last(6), Some(20_000));
    assert!(progress.iter().all(|p| p.at >= sent_at + ms(20)), "one path delay at least");
    // Nothing of it reaches the client's own progress.
    let mut client_side = Vec::new();
    h.client.drain_progress(&mut client_side);
    assert!(client_side.is_empty());
    assert_eq!(h.client.write(a, 10), Err(AppError::Finished(a)));
}
