//! The same inputs give the same run, record for record, even over links with random delay,
//! reordering, random loss and a small queue; another seed gives another run.

use crate::toy::Toy;

use multiconn_core::units::QueueLimit;
use multiconn_core::{Dur, Packet, Rate, Time};
use multiconn_link::loss::LossModel;
use multiconn_link::delay::DelayModel;
use multiconn_link::scripted::Verdict;
use multiconn_testkit::{link, Pair, PathConfig, Route};
use multiconn_transport::AppEvent;

fn noisy(rate: u64, delay_ms: u64) -> PathConfig {
    let mut l = link(Rate(rate), Dur::from_millis(delay_ms), QueueLimit::Packets(4));
    l.delay = DelayModel::Normal { mean: Dur::from_millis(delay_ms), cv: 0.4 };
    l.reorder = true;
    l.loss = Some(LossModel::Bernoulli { p: 0.05 });
    PathConfig::symmetric(l)
}

type Run = (Vec<(Time, u8, Route, String, u64, u32)>, Vec<(Time, AppEvent)>, Vec<(Time, AppEvent)>, u64);

fn run(seed: u64) -> Run {
    // 300 packets over two paths in bursts of three every 0.7 ms.
    let sends = (0..300u64).map(|i| (Time(i / 3 * 700_000), (i % 2) as u8, 600 + (i % 5) as u32 * 200)).collect();
    let mut p = Pair::from_configs(Box::new(Toy::client(sends)), Box::new(Toy::echo_server()), seed, &[noisy(20_000_000, 8), noisy(5_000_000, 3)]);
    p.script(1, Route::ToServer, |n, _: &Packet| if n % 17 == 4 { Verdict::Delay(Dur::from_millis(2)) } else { Verdict::Pass });
    p.drive_bounded(100_000);
    let wire = p.wire.iter().map(|w| (w.at, w.path, w.route, format!("{:?}", w.event), w.pkt.id, w.pkt.size)).collect();
    (wire, p.client_events.clone(), p.server_events.clone(), p.steps)
}

#[test]
fn same_seed_same_run() {
    let a = run(11);
    let b = run(11);
    assert_eq!(a, b);
    // The run exercised what could make it diverge: losses, queue drops and reordering.
    let events: Vec<&str> = a.0.iter().map(|r| r.3.as_str()).collect();
    assert!(events.contains(&"Refused(RandomLoss)") && events.contains(&"Refused(Queue)"), "{events:?}");
    let arrivals: Vec<u64> = a.0.iter().filter(|r| r.2 == Route::ToServer && r.3 == "Delivered").map(|r| r.4).collect();
    assert!(arrivals.windows(2).any(|w| w[0] > w[1]), "no reordering");
}

#[test]
fn another_seed_another_run() {
    assert_ne!(run(11).0, run(12).0);
}
