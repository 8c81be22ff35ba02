use crate::support;

use std::collections::HashMap;

use multiconn_core::{Rate, Time};
use multiconn_transport::{AppEvent, Endpoint, Workload};
use support::*;

const SIZE: u64 = 1_000_000;

fn check_complete(h: &QuicPair, size: u64) {
    assert_eq!(delivered_bytes(&h.client_events), size, "bytes delivered exactly once");
    let completes: Vec<_> = h.client_events.iter().filter(|(_, e)| matches!(e, AppEvent::ResponseComplete { .. })).collect();
    assert_eq!(completes.len(), 1);
    assert_eq!(completes[0].1, AppEvent::ResponseComplete { index: 0, bytes: size });
    assert_eq!(h.client_events.iter().filter(|(_, e)| *e == AppEvent::Finished).count(), 1);
    assert_eq!(delivered_bytes(&h.server_events), 100, "the request reached the server");
}

#[test]
fn lossless_download_completes_and_drains() {
    let p = params(download(SIZE), Time::ZERO);
    let mut h = single_path(&p, ms(10), Some(Rate::from_mbps(40.0)));
    let done = h.run_until_finished(Time::from_secs_f64(10.0)).expect("finished");
    h.run_until(Time::from_secs_f64(12.0));
    check_complete(&h, SIZE);
    let s = h.server.sample();
    assert_eq!(s.bytes_in_flight, 0);
    assert_eq!((s.lost, s.retransmissions, s.spurious_retransmissions), (0, 0, 0));
    // 1 MB at 40 Mbit/s is 0.2 s of serialization; slow start adds a few RTTs.
    assert!(done.as_secs_f64() > 0.2 && done.as_secs_f64() < 0.5, "{done}");
    // Every data datagram is a full one except the last few.
    let full = h.log().iter().filter(|w| w.from == multiconn_transport::Role::Server && w.pkt.size == 1500).count();
    assert!(full as u64 >= SIZE / 1500, "{full}");
    assert_eq!(h.server.poll_timeout(), None, "idle after everything was acknowledged");
}

#[test]
fn download_survives_scripted_losses_including_lost_retransmissions_and_tail() {
    let p = params(download(SIZE), Time::ZERO);
    let mut h = single_path(&p, ms(20), Some(Rate::from_mbps(20.0)));
    // Losses on the server→client link:
    // * single datagrams 40, 41 and 200;
    // * every transmission of offset 400_000 twice (the original and its first retransmission);
    // * the first transmission of the last ~4 KB (the tail, FIN included): only a PTO finds it.
    let mut times_seen: HashMap<u64, u32> = HashMap::new();
    h.script(0, Route::ToClient, lose_when(move |i, pkt| {
        if i == 40 || i == 41 || i == 200 {
            return true;
        }
        for (_, off, len, _) in stream_frames(pkt) {
            if off <= 400_000 && 400_000 < off + len {
                let n = times_seen.entry(400_000).or_default();
                *n += 1;
                return *n <= 2;
            }
            if off + len > SIZE - 4_000 {
                let n = times_seen.entry(off).or_default();
                *n += 1;
                return *n == 1;
            }
        }
        false
    }));
    h.run_until_finished(Time::from_secs_f64(20.0)).expect("finished");
    h.run_until(Time::from_secs_f64(25.0));
    check_complete(&h, SIZE);
    let s = h.server.sample();
    assert_eq!(s.bytes_in_flight, 0);
    assert!(s.lost >= 4, "{s:?}");
    assert!(s.retransmissions >= 4, "{s:?}");
    let st = h.server.stats();
    assert!(st.probes_sent >= 1, "the lost tail needs a PTO probe: {st:?}");
    assert!(h.server.recovery().stats().pto_expirations >= 1);
    // Offset 400_000 went out at least three times.
    let sends = h.log().iter().filter(|w| stream_frames(&w.pkt).iter().any(|(_, off, len, _)| *off <= 400_000 && 400_000 < off + len)).count();
    assert!(sends >= 3, "{sends}");
}

#[test]
fn requests_complete_on_parallel_streams() {
    let w = Workload::Requests { count: 10, parallel: 3, request_size: 300, response_size: 40_000 };
    let p = params(w, Time::ZERO);
    let mut h = single_path(&p, ms(15), Some(Rate::from_mbps(50.0)));
    let mut max_open = 0;
    h.run_while(Time::from_secs_f64(10.0), |h| {
        max_open = max_open.max(h.client.streams().live());
        !h.client_events.iter().any(|(_, e)| *e == AppEvent::Finished)
    });
    let mut idx: Vec<u32> = h
        .client_events
        .iter()
        .filter_map(|(_, e)| match e {
            AppEvent::ResponseComplete { index, bytes } => {
                assert_eq!(*bytes, 40_000);
                Some(*index)
            }
            _ => None,
        })
        .collect();
    idx.sort();
    assert_eq!(idx, (0..10).collect::<Vec<_>>());
    assert_eq!(delivered_bytes(&h.client_events), 400_000);
    assert_eq!(delivered_bytes(&h.server_events), 3_000);
    assert!((2..=3).contains(&max_open), "{max_open}");
    // Requests went out on streams 0, 4, ..., 36.
    let mut ids: Vec<u64> =
        h.log().iter().filter(|w| w.from == multiconn_transport::Role::Client).flat_map(|w| stream_frames(&w.pkt)).map(|f| f.0).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids, (0..10).map(|i| 4 * i).collect::<Vec<u64>>());
}
