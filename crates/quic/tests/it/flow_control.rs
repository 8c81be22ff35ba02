use crate::support;

use multiconn_core::Time;
use multiconn_quic::frame::Frame;
use multiconn_transport::Role;
use support::*;

/// (arrival at the server, stream maximum) of every MAX_STREAM_DATA the client sent.
fn stream_limits(h: &QuicPair) -> Vec<(Time, u64)> {
    h.log()
        .iter()
        .filter(|w| w.from == Role::Client && !w.dropped)
        .flat_map(|w| {
            w.datagram().packets().flat_map(|q| q.frames.iter()).filter_map(move |f| match f {
                Frame::MaxStreamData { max, .. } => Some((w.arrival, *max)),
                _ => None,
            })
        })
        .collect()
}

fn max_data(h: &QuicPair) -> Vec<(Time, u64)> {
    h.log()
        .iter()
        .filter(|w| w.from == Role::Client && !w.dropped)
        .flat_map(|w| {
            w.datagram().packets().flat_map(|q| q.frames.iter()).filter_map(move |f| match f {
                Frame::MaxData(max) => Some((w.arrival, *max)),
                _ => None,
            })
        })
        .collect()
}

/// Every STREAM frame the server sent ends within the limit it knew at the time.
fn check_limit(h: &QuicPair, initial: u64, limits: &[(Time, u64)]) -> u64 {
    let mut before_first_update = 0;
    for w in h.log().iter().filter(|w| w.from == Role::Server) {
        let limit = limits.iter().filter(|(t, _)| *t <= w.sent).map(|(_, m)| *m).max().unwrap_or(initial).max(initial);
        for (_, off, len, _) in stream_frames(&w.pkt) {
            assert!(off + len <= limit, "stream data up to {} sent at {:?} with limit {limit}", off + len, w.sent);
            if limits.first().map_or(true, |(t, _)| w.sent < *t) {
                before_first_update = before_first_update.max(off + len);
            }
        }
    }
    before_first_update
}

#[test]
fn small_stream_window_limits_data_until_max_stream_data_arrives() {
    let mut p = params(download(300_000), Time::ZERO);
    let window = 8_000; // below the initial congestion window (14720 B)
    p.profile.quic.as_mut().unwrap().initial_max_stream_data = window;
    let mut h = single_path(&p, ms(50), None);
    let done = h.run_until_finished(Time::from_secs_f64(10.0)).expect("finished");
    assert_eq!(delivered_bytes(&h.client_events), 300_000);
    let limits = stream_limits(&h);
    assert!(!limits.is_empty());
    assert_eq!(check_limit(&h, window, &limits), window, "the whole window is used, not more");
    // Updates are sent once half the window is consumed, to consumed + window.
    for (_, m) in &limits {
        assert!(*m >= window + window / 2, "{m}");
    }
    // Window-limited: about window per RTT (100 ms) instead of slow start.
    let mut q = params(download(300_000), Time::ZERO);
    q.profile.quic.as_mut().unwrap().initial_max_stream_data = 16 << 20;
    let mut free = single_path(&q, ms(50), None);
    let free_done = free.run_until_finished(Time::from_secs_f64(10.0)).expect("finished");
    assert!(done.as_secs_f64() > free_done.as_secs_f64() + 0.3, "{done} vs {free_done}");
}

#[test]
fn small_connection_window_limits_data_until_max_data_arrives() {
    let mut p = params(download(200_000), Time::ZERO);
    let window = 10_000;
    p.profile.quic.as_mut().unwrap().initial_max_data = window;
    let mut h = single_path(&p, ms(20), None);
    h.run_until_finished(Time::from_secs_f64(10.0)).expect("finished");
    assert_eq!(delivered_bytes(&h.client_events), 200_000);
    let limits = max_data(&h);
    assert!(!limits.is_empty());
    // One stream: its offsets are the connection's bytes.
    assert_eq!(check_limit(&h, window, &limits), window);
}
