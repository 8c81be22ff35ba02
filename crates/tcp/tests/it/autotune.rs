//! Receive-window autotuning on a high-BDP path, and a fixed small buffer bounding
//! throughput to window / RTT.
use crate::support;

use multiconn_core::{Rate, Time};
use multiconn_transport::Workload;
use support::*;

fn endless() -> Workload {
    Workload::Download {
        size: None,
        request_size: 200,
    }
}

#[test]
fn window_grows_past_64k_and_stays_under_the_max() {
    let p = params(endless());
    let knobs = p.profile.tcp.clone().unwrap();
    let mut h = Harness::new(&p, ms(50));
    h.s2c.rate = Some(Rate(100_000_000));
    h.s2c.keep_log = false;
    h.run_until(Time(6_000_000_000), |_| false);
    let windows: Vec<u64> = h
        .c2s
        .log
        .iter()
        .filter(|(_, s, _)| !s.flags.syn)
        .map(|(_, s, _)| (s.window as u64) << 7)
        .collect();
    let max = *windows.iter().max().unwrap();
    let cap = (knobs.rmem[2] as f64 * knobs.adv_win_fraction) as u64;
    assert!(max > 4 * 65535, "window only reached {max}");
    assert!(windows.iter().all(|&w| w <= cap), "window above {cap}");
    assert!(h.client.receiver().buffer().rcvbuf() <= knobs.rmem[2]);
    // The right edge only moves forward.
    let edges: Vec<u64> = h
        .c2s
        .log
        .iter()
        .filter(|(_, s, _)| !s.flags.syn)
        .map(|(_, s, _)| s.ack + ((s.window as u64) << 7))
        .collect();
    assert!(edges.windows(2).all(|w| w[1] >= w[0]));
    // 100 Mbit/s for most of 6 s: far more than a 64 KB window allows (64 KB / 100 ms = 5 Mbit/s).
    let delivered = Harness::delivered(&h.client_events);
    assert!(delivered > 40_000_000, "{delivered}");
}

#[test]
fn fixed_small_buffer_bounds_throughput_by_window_over_rtt() {
    let mut p = params(endless());
    {
        let k = p.profile.tcp.as_mut().unwrap();
        k.autotune = false;
        k.rmem = [4096, 32768, 32768];
    }
    let mut h = Harness::new(&p, ms(50));
    h.s2c.rate = Some(Rate(100_000_000));
    h.s2c.keep_log = false;
    let start = Time(1_000_000_000);
    h.run_until(start, |_| false);
    let before = Harness::delivered(&h.client_events);
    h.run_until(Time(6_000_000_000), |_| false);
    let got = Harness::delivered(&h.client_events) - before;
    let window = 16384u64;
    let bound = window * 50; // 5 s at one window per 100 ms RTT
    assert!(got <= bound, "{got} > {bound}");
    assert!(got * 10 >= bound * 8, "{got} well below {bound}");
    assert_eq!(h.client.receiver().buffer().rcvbuf(), 32768);
}
