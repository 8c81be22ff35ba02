//! Any `Link` is a hop element: the test-only fixed-delay wire crosses the network beside
//! real links, and routes move packets hop by hop.

use multiconn_core::units::QueueLimit;
use multiconn_core::{DropCause, Dur, FlowId, Rate, Time};
use multiconn_link::availability::Schedule;
use multiconn_link::builder::LinkConfig;
use multiconn_link::delay::DelayModel;
use multiconn_link::loss::LossModel;
use multiconn_link::rate::RateModel;
use multiconn_link::Link;
use multiconn_net::wire::Wire;
use multiconn_net::{FlowRoutes, Hop, Network};

use crate::driver::{packet, Clock};

/// A link direction at `mbps` with `delay_ms` of delay, a 1000-packet queue and Bernoulli
/// `loss` (other tests' links too).
pub(crate) fn link(mbps: f64, delay_ms: u64, loss: Option<f64>) -> LinkConfig {
    LinkConfig {
        aqm: None,
        rate: RateModel::Fixed(Rate::from_mbps(mbps)),
        delay: DelayModel::Constant(Dur::from_millis(delay_ms)),
        reorder: false,
        queue: QueueLimit::Packets(1000),
        loss: loss.map(|p| LossModel::Bernoulli { p }),
        down: Schedule::new(Vec::new()).unwrap(),
        replaced: Vec::new(),
    }
}

#[test]
fn a_test_only_wire_is_a_hop_like_any_link() {
    // Route: a 12 Mbit/s link with 5 ms delay, then the wire (7 ms).
    let wire = Wire::new(Dur::from_millis(7));
    let links: Vec<Box<dyn Link + Send>> = vec![link(12.0, 5, None).build(1, "link/a/forward"), Box::new(wire), link(12.0, 5, None).build(1, "link/a/reverse")];
    let routes = FlowRoutes::single("f", vec![Hop::Link(0), Hop::Link(1)], vec![Hop::Link(2)]);
    let mut net = Network::with_links(links, Vec::new(), vec![routes]);
    let mut clock = Clock::default();
    for i in 0..3 {
        net.send(Time::ZERO, packet(i, 1500), &mut clock);
    }
    assert_eq!(net.in_flight(FlowId(0)), 3);
    clock.run(&mut net);
    // 1500 B at 12 Mbit/s = 1 ms each, back to back; then 5 ms + 7 ms.
    let times: Vec<u64> = clock.arrived.iter().map(|(t, _)| t.as_nanos() / 1_000_000).collect();
    assert_eq!(times, vec![13, 14, 15]);
    assert!(clock.arrived.iter().all(|(_, p)| p.hop == 2), "each packet crossed both hops");
    assert_eq!(net.in_flight(FlowId(0)), 0);
}

#[test]
fn an_answer_from_a_host_enters_the_network_at_the_instant_of_arrival() {
    let links = vec![link(12.0, 5, None).build(1, "f"), link(12.0, 5, None).build(1, "r")];
    let routes = FlowRoutes::single("f", vec![Hop::Link(0)], vec![Hop::Link(1)]);
    let mut net = Network::with_links(links, Vec::new(), vec![routes]);
    let mut clock = Clock::default();
    clock.answer = true;
    net.send(Time::ZERO, packet(0, 1500), &mut clock);
    clock.run(&mut net);
    let arrivals: Vec<(u16, u64)> = clock.arrived.iter().map(|(t, p)| (p.route, t.as_nanos() / 1000)).collect();
    // Data: 1 ms + 5 ms. The 40 B answer: 26.667 us + 5 ms after that.
    assert_eq!(arrivals, vec![(0, 6000), (1, 11026)]);
}

#[test]
fn every_packet_sent_is_either_delivered_or_lost_exactly_once() {
    let links = vec![link(50.0, 10, Some(0.2)).build(7, "lossy"), link(50.0, 10, None).build(7, "back")];
    let routes = FlowRoutes::single("f", vec![Hop::Link(0)], vec![Hop::Link(1)]);
    let mut net = Network::with_links(links, Vec::new(), vec![routes]);
    let mut clock = Clock::default();
    for i in 0..2000 {
        clock.run_until(&mut net, Time(i * 300_000));
        net.send(Time(i * 300_000), packet(i, 1200), &mut clock);
    }
    clock.run(&mut net);
    let lost = clock.lost.len();
    assert!((300..500).contains(&lost), "{lost} of 2000 lost at 20 %");
    assert!(clock.lost.iter().all(|(_, l)| l.cause == DropCause::RandomLoss && l.size == 1200));
    assert_eq!(clock.arrived.len() + lost, 2000);
    assert_eq!(net.in_flight(FlowId(0)), 0);
}

#[test]
fn the_same_seed_draws_the_same_losses_and_another_seed_others() {
    let lost_ids = |seed: u64| {
        let links = vec![link(50.0, 10, Some(0.1)).build(seed, "lossy"), link(50.0, 10, None).build(seed, "back")];
        let mut net = Network::with_links(links, Vec::new(), vec![FlowRoutes::single("f", vec![Hop::Link(0)], vec![Hop::Link(1)])]);
        let mut clock = Clock::default();
        for i in 0..500 {
            clock.run_until(&mut net, Time(i * 300_000));
        net.send(Time(i * 300_000), packet(i, 1200), &mut clock);
        }
        clock.run(&mut net);
        clock.arrived.iter().map(|(_, p)| p.id).collect::<Vec<_>>()
    };
    assert_eq!(lost_ids(3), lost_ids(3));
    assert_ne!(lost_ids(3), lost_ids(4));
}
