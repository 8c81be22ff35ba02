//! A multi-port element from outside the crates that make hops: a test-only hub, built from
//! its own [`PortModel`] and plugged into a network through [`NetworkSpec::ports`] and
//! [`Hop::Port`] with no edit in the network or in anything that reads routes.

use std::any::Any;
use std::collections::VecDeque;
use std::sync::Arc;

use multiconn_core::{DropCause, Dur, FlowId, Time};
use multiconn_link::LinkOutput;
use multiconn_net::{FlowRoutes, Hop, Leg, Network, NetworkSpec, PortElement, PortModel};

use crate::driver::{packet, Clock};
use crate::elements::link;

/// A hub with `ports` ports: a packet entering at port `p` leaves `p + 1` milliseconds later;
/// a port it does not have refuses the packet.
#[derive(Debug)]
struct HubModel {
    ports: u32,
}

struct Hub {
    ports: u32,
    /// (leaves at, packet), in the order they leave.
    inside: VecDeque<(Time, multiconn_core::Packet)>,
    /// The label it was built with.
    label: String,
}

impl PortModel for HubModel {
    fn build(&self, _seed: u64, label: &str) -> Box<dyn PortElement> {
        Box::new(Hub { ports: self.ports, inside: VecDeque::new(), label: label.to_string() })
    }
}

impl PortElement for Hub {
    fn enqueue(&mut self, now: Time, port: u32, pkt: multiconn_core::Packet) -> Result<(), (multiconn_core::Packet, DropCause)> {
        if port >= self.ports {
            return Err((pkt, DropCause::LinkDown));
        }
        let at = now + Dur::from_millis(u64::from(port) + 1);
        let i = self.inside.partition_point(|(t, _)| *t <= at);
        self.inside.insert(i, (at, pkt));
        Ok(())
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.inside.front().map(|(t, _)| *t)
    }

    fn poll(&mut self, now: Time) -> Option<LinkOutput> {
        if self.inside.front().is_some_and(|(t, _)| *t <= now) {
            let (at, pkt) = self.inside.pop_front().expect("checked");
            return Some(LinkOutput::Delivered { at, pkt });
        }
        None
    }

    /// The hub has one queue for all its ports: what it holds.
    fn queued_bytes(&self, _port: u32) -> u64 {
        self.inside.iter().map(|(_, p)| u64::from(p.size)).sum()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

#[test]
fn a_test_only_multi_port_element_carries_packets_between_links_at_its_ports() {
    // Flow 0 crosses the hub at port 2 (3 ms), then a 12 Mbit/s, 5 ms link; flow 1 enters
    // the hub at a port it does not have.
    let spec = NetworkSpec {
        links: vec![("link/a/forward".into(), Arc::new(link(12.0, 5, None))), ("link/a/reverse".into(), Arc::new(link(12.0, 5, None)))],
        splits: Vec::new(),
        flows: vec![
            FlowRoutes::single("f", vec![Hop::Port { element: 0, port: 2 }, Hop::Link(0)], vec![Hop::Link(1), Hop::Port { element: 0, port: 0 }]),
            FlowRoutes::single("g", vec![Hop::Port { element: 0, port: 9 }], vec![Hop::Link(1)]),
        ],
        ports: vec![("hub/h".into(), Arc::new(HubModel { ports: 4 }) as Arc<dyn PortModel>)],
    };
    let mut net = Network::new(&spec, 1);
    assert_eq!(net.port_count(), 1);
    assert_eq!(net.port_element::<Hub>(0).map(|h| h.label.as_str()), Some("hub/h"), "read back as its own type");
    let mut clock = Clock::default();
    clock.answer = true;
    for i in 0..2 {
        net.send(Time::ZERO, packet(i, 1500), &mut clock);
    }
    let mut stray = packet(7, 100);
    stray.flow = FlowId(1);
    net.send(Time::ZERO, stray, &mut clock);
    clock.run(&mut net);
    // Data: 3 ms in the hub, then 1 ms of serialization each, back to back, and 5 ms.
    let data: Vec<u64> = clock.arrived.iter().filter(|(_, p)| p.route == 0).map(|(t, _)| t.as_nanos() / 1000).collect();
    assert_eq!(data, vec![9_000, 10_000]);
    // The answers (40 B): 26.667 us and 5 ms on the reverse link, then 1 ms at port 0.
    let answers: Vec<u64> = clock.arrived.iter().filter(|(_, p)| p.route == 1).map(|(t, _)| t.as_nanos() / 1000).collect();
    assert_eq!(answers, vec![15_026, 16_026]);
    // The packet at a port the hub lacks is its flow's loss, with the hub's cause.
    assert_eq!(clock.lost.len(), 1);
    assert_eq!((clock.lost[0].1.flow, clock.lost[0].1.cause), (FlowId(1), DropCause::LinkDown));
    assert_eq!(net.in_flight(FlowId(0)) + net.in_flight(FlowId(1)), 0);
}

#[test]
fn a_split_whose_leg_is_a_port_carries_pdus_over_it_and_restores_their_order() {
    use multiconn_pdcp::{Rat, ReceiverConfig, SnLength, SplitBearerConfig, SplitPolicy, TransmitterConfig};
    // Leg 0: a 12 Mbit/s, 5 ms link; leg 1: the hub's port 3 (4 ms). Alternating PDUs: the
    // receiving entity gets them out of order over the two legs and releases them in order.
    let sn = SnLength::new(12).unwrap();
    let split = SplitBearerConfig {
        name: "dc".into(),
        tx: TransmitterConfig { rat: Rat::Nr, sn, policy: SplitPolicy::Alternate },
        rx: ReceiverConfig { sn, t_reordering: Some(Dur::from_millis(200)), reordering: true },
        processing_delay: Dur::ZERO,
        packet_time: Dur::ZERO,
        feedback: None,
        retransmit_lost: false,
        duplication_switches: Vec::new(),
        tx_leg_delay: [Dur::ZERO; 2],
        rx_leg_delay: [Dur::ZERO; 2],
        l4s_reorder_threshold: None,
    };
    let spec = NetworkSpec {
        links: vec![("link/a/forward".into(), Arc::new(link(12.0, 5, None))), ("link/a/reverse".into(), Arc::new(link(12.0, 5, None)))],
        splits: vec![split],
        flows: vec![FlowRoutes::single("f", vec![Hop::Split { split: 0, legs: [Leg::Link(0), Leg::Port { element: 0, port: 3 }] }], vec![Hop::Port { element: 0, port: 1 }])],
        ports: vec![("hub/h".into(), Arc::new(HubModel { ports: 4 }) as Arc<dyn PortModel>)],
    };
    let mut net = Network::new(&spec, 1);
    assert_eq!(net.bearer_info(0).legs, [Leg::Link(0), Leg::Port { element: 0, port: 3 }]);
    let mut clock = Clock::default();
    net.start(&mut clock);
    for i in 0..6 {
        net.send(Time::ZERO, packet(i, 1500), &mut clock);
    }
    clock.run(&mut net);
    // Over the hub (4 ms) PDUs 1, 3, 5 come before the link's 0, 2, 4 (1 ms each + 5 ms), yet
    // the entity releases 0..6 in order, each as soon as the one before it is there.
    let ids: Vec<u64> = clock.arrived.iter().map(|(_, p)| p.id).collect();
    assert_eq!(ids, vec![0, 1, 2, 3, 4, 5]);
    // The link's PDUs carry the 2-byte NR PDCP header (12-bit SN): 1502 B at 12 Mbit/s each,
    // then 5 ms; each odd PDU waits at the entity for the even one before it.
    let times: Vec<u64> = clock.arrived.iter().map(|(t, _)| t.as_nanos() / 1000).collect();
    let over_link = |k: u64| (5_000_000 + (k + 1) * 1502 * 8 * 1_000_000_000 / 12_000_000) / 1000;
    assert_eq!(times, vec![over_link(0), over_link(0), over_link(1), over_link(1), over_link(2), over_link(2)]);
    // Both legs' arrivals reached the receiving entity (none released past its gap early).
    assert_eq!(net.bearer(0).rx.stats().delivered, 6);
    assert_eq!(net.in_flight(FlowId(0)), 0);
    // A port that refuses a PDU is a loss on that leg (port 9 does not exist on a 4-port hub).
    let mut spec = spec;
    spec.flows[0].paths[0][0] = vec![Hop::Split { split: 0, legs: [Leg::Link(0), Leg::Port { element: 0, port: 9 }] }];
    let mut net = Network::new(&spec, 1);
    let mut clock = Clock::default();
    net.start(&mut clock);
    for i in 0..2 {
        net.send(Time::ZERO, packet(i, 1500), &mut clock);
    }
    clock.run(&mut net);
    assert_eq!(clock.lost.iter().map(|(_, l)| l.cause).collect::<Vec<_>>(), vec![DropCause::LinkDown]);
}
