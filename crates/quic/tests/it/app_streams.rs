//! Application-opened streams (the messages workload): either end opens unidirectional
//! streams (the server's ids 3, 7, ..., the client's 2, 6, ... per RFC 9000 §2.1), writes on
//! them and finishes or resets them (RESET_STREAM, RFC 9000 §3.1, §19.4); the peer reports
//! in-order progress per stream, and no end accepts writes on streams it did not open.

use crate::support;

use multiconn_core::{Rate, Time};
use multiconn_transport::{AppError, Endpoint, StreamOptions, StreamProgress, Workload};
use support::*;

fn harness() -> QuicPair {
    let mut h = single_path(&params(Workload::Messages, Time::ZERO), ms(20), Some(Rate::from_mbps(10.0)));
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
    let mut h = single_path(&params(Workload::Messages, Time::ZERO), ms(20), Some(Rate::from_mbps(10.0)));
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

/// RESET_STREAM frames (stream id, final size) in a datagram.
fn resets(p: &multiconn_core::Packet) -> Vec<(u64, u64)> {
    datagram(p)
        .packets()
        .flat_map(|q| q.frames.iter())
        .filter_map(|f| match f {
            multiconn_quic::frame::Frame::ResetStream { id, final_size } => Some((*id, *final_size)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_reset_stream_is_never_sent_again_and_the_receiver_discards_it() {
    let mut h = harness();
    h.record_wire = true;
    let a = h.server.open_stream(StreamOptions::default()).unwrap();
    let b = h.server.open_stream(StreamOptions::default()).unwrap();
    // Every datagram carrying stream a's data is lost; stream b's get through.
    h.script(0, Route::ToClient, lose_when(move |_, p| stream_frames(p).iter().any(|f| f.0 == a)));
    h.server.write(a, 3000).unwrap();
    h.server.finish(a).unwrap();
    h.run_until(h.now + ms(30));
    // Its first transmission is on the wire; give up on it before the loss is detected.
    assert_eq!(h.server.reset_stream(a), Ok(true));
    assert_eq!(h.server.reset_stream(a), Ok(false), "reset twice");
    let reset_at = h.log().len();
    h.server.write(b, 1200).unwrap();
    h.server.finish(b).unwrap();
    h.run_until(h.now + ms(1000));

    let sent_a = |after: usize| h.log()[after..].iter().filter(|w| stream_frames(&w.pkt).iter().any(|f| f.0 == a)).count();
    assert!(sent_a(0) >= 1, "stream a was sent once");
    assert_eq!(sent_a(reset_at), 0, "nothing of stream a after its reset, though its packets were lost");
    let rs: Vec<(u64, u64)> = h.log().iter().filter(|w| !w.dropped).flat_map(|w| resets(&w.pkt)).collect();
    let sent_bytes = h.log().iter().flat_map(|w| stream_frames(&w.pkt)).filter(|f| f.0 == a).map(|f| f.1 + f.2).max().unwrap();
    assert_eq!(rs, vec![(a, sent_bytes)], "one RESET_STREAM with the bytes sent as final size");
    let mut progress = Vec::new();
    h.client.drain_progress(&mut progress);
    assert!(progress.contains(&StreamProgress { stream: a, delivered: 0, at: progress.iter().find(|p| p.stream == a).unwrap().at, reset: true }));
    assert_eq!(progress.iter().filter(|p| p.stream == b).map(|p| p.delivered).max(), Some(1200), "the next stream is not held up");
    assert_eq!((h.server.stats().streams_reset, h.client.stats().resets_received), (1, 1));
    // Both ends forgot the stream: the server once the reset was acknowledged.
    assert!(h.server.streams().is_closed(a) && h.client.streams().is_closed(a));
    assert_eq!(h.server.write(a, 10), Err(AppError::Finished(a)));
    assert_eq!(h.client.stats().invalid_frames, 0);
}

#[test]
fn a_lost_reset_stream_is_sent_again_and_a_delivered_stream_is_not_reset() {
    let mut h = harness();
    h.record_wire = true;
    let a = h.server.open_stream(StreamOptions::default()).unwrap();
    // The first two datagrams with a RESET_STREAM are lost.
    let mut lost = 0;
    h.script(0, Route::ToClient, lose_when(move |_, p| {
        let hit = !resets(p).is_empty() && lost < 2;
        lost += u32::from(hit);
        hit
    }));
    h.server.write(a, 100).unwrap();
    assert_eq!(h.server.reset_stream(a), Ok(true), "reset before anything was sent: final size 0");
    h.run_until(h.now + ms(3000));
    let rs: Vec<(bool, (u64, u64))> = h.log().iter().flat_map(|w| resets(&w.pkt).into_iter().map(move |r| (w.dropped, r))).collect();
    assert_eq!(rs, vec![(true, (a, 0)), (true, (a, 0)), (false, (a, 0))]);
    assert!(stream_frames_of(&h, a).is_empty(), "no data of a stream reset before it was sent");
    assert!(h.server.streams().is_closed(a) && h.client.streams().is_closed(a));

    // A stream whose data and FIN were all acknowledged has nothing left to abandon.
    let b = h.server.open_stream(StreamOptions::default()).unwrap();
    h.server.write(b, 500).unwrap();
    h.server.finish(b).unwrap();
    h.run_until(h.now + ms(500));
    assert_eq!(h.server.reset_stream(b), Ok(false));
    assert_eq!(h.client.reset_stream(b), Err(AppError::UnknownStream(b)), "only the opener resets");
}

fn stream_frames_of(h: &QuicPair, id: u64) -> Vec<(u64, u64, u64, bool)> {
    h.log().iter().flat_map(|w| stream_frames(&w.pkt)).filter(|f| f.0 == id).collect()
}
