//! Receive-window autotuning on a high-BDP path, and a fixed small buffer bounding
//! throughput to window / RTT.
use crate::support;

use multiconn_core::{Rate, Time};
use multiconn_testkit::Route;
use multiconn_transport::Workload;
use support::*;

fn endless() -> Workload {
    Workload::Download { size: None, request_size: 200 }
}

/// 100 Mbit/s toward the client with a queue that never fills, 50 ms each way.
fn high_bdp(p: &multiconn_transport::ConnectionParams) -> TcpPair {
    tcp_pair(p, path(deep(Rate(100_000_000), ms(50)), fast(ms(50))))
}

#[test]
fn window_grows_past_64k_and_stays_under_the_max() {
    let p = params(endless());
    let knobs = p.profile.tcp.clone().unwrap();
    let mut h = high_bdp(&p);
    h.drive_to(Time(6_000_000_000));
    let acks = sent(&h, Route::ToServer);
    let windows: Vec<u64> = acks.iter().filter(|(_, s)| !s.flags.syn).map(|(_, s)| (s.window as u64) << 7).collect();
    let max = *windows.iter().max().unwrap();
    let cap = (knobs.rmem[2] as f64 * knobs.adv_win_fraction) as u64;
    assert!(max > 4 * 65535, "window only reached {max}");
    assert!(windows.iter().all(|&w| w <= cap), "window above {cap}");
    assert!(h.client.receiver().buffer().rcvbuf() <= knobs.rmem[2]);
    // The right edge only moves forward.
    let edges: Vec<u64> = acks.iter().filter(|(_, s)| !s.flags.syn).map(|(_, s)| s.ack + ((s.window as u64) << 7)).collect();
    assert!(edges.windows(2).all(|w| w[1] >= w[0]));
    // 100 Mbit/s for most of 6 s: far more than a 64 KB window allows (64 KB / 100 ms = 5 Mbit/s).
    let delivered = delivered_bytes(&h.client_events);
    assert!(delivered > 40_000_000, "{delivered}");
    // The receive window, not a queue drop, held the sender back.
    assert_eq!(h.counters(0, Route::ToClient).lost(), 0);
}

#[test]
fn fixed_small_buffer_bounds_throughput_by_window_over_rtt() {
    let mut p = params(endless());
    {
        let k = p.profile.tcp.as_mut().unwrap();
        k.autotune = false;
        k.rmem = [4096, 32768, 32768];
    }
    let mut h = high_bdp(&p);
    h.record_wire = false;
    h.drive_to(Time(1_000_000_000));
    let before = delivered_bytes(&h.client_events);
    h.drive_to(Time(6_000_000_000));
    let got = delivered_bytes(&h.client_events) - before;
    // 16 KB advertised (half the 32 KB buffer) per 100 ms round trip; serialization adds
    // 16 KB / 100 Mbit/s = 1.3 ms per round, so the bound with the bare RTT is an upper one.
    let window = 16384u64;
    let bound = window * 50; // 5 s at one window per 100 ms RTT
    assert!(got <= bound, "{got} > {bound}");
    assert!(got * 10 >= bound * 8, "{got} well below {bound}");
    assert_eq!(h.client.receiver().buffer().rcvbuf(), 32768);
}
