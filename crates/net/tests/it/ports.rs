//! A multi-port element from outside the crates that make hops: a test-only hub, built from
//! its own [`PortModel`] and plugged into a network through [`NetworkSpec::ports`] and
//! [`Hop::Port`] with no edit in the network or in anything that reads routes.

use std::any::Any;
use std::collections::VecDeque;
use std::sync::Arc;

use multiconn_core::{DropCause, Dur, FlowId, Time};
use multiconn_link::LinkOutput;
use multiconn_net::{FlowRoutes, Hop, Network, NetworkSpec, PortElement, PortModel};

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
