//! The hosts' side of UDP flows (state: [`crate::sim::udp`]): a CBR source sends on its own
//! timer, a bulk source keeps its first link supplied while it has room (round-robin among the
//! flows sharing it, the back-pressure of ADR 0001 #2) or, while that link loses everything,
//! sends on its own timer at the link's line rate (the pacing of [`crate::sim::udp`]), the
//! sink counts what arrives, and a flow is done when its source has finished and nothing of it
//! is left in the network.

use multiconn_app::Traffic;
use multiconn_core::{FlowId, Packet, Recorder, Time};
use multiconn_net::{Hop, Network};

use super::{FlowDriver, Hosts};
use crate::sim::udp::{UdpFlow, MAX_BULK_BURST};
use crate::sim::Event;

impl Hosts {
    fn udp_mut(&mut self, f: usize) -> &mut UdpFlow {
        match &mut self.flows[f].driver {
            FlowDriver::Udp(udp) => udp,
            FlowDriver::Transport(_) => unreachable!("source events only concern udp flows"),
        }
    }

    pub(in crate::sim) fn on_source_wake(&mut self, net: &mut Network, f: usize, now: Time) {
        self.udp_mut(f).timer = None;
        self.service_source(net, f, now);
    }

    pub(in crate::sim) fn arm_source(&mut self, f: usize) {
        let now = self.queue.now();
        let flow = &self.flows[f];
        let FlowDriver::Udp(udp) = &flow.driver else { return };
        // A stopping flow also wakes at its stop time, to notice that it is done.
        let stop_check = flow.spec.stop.filter(|&s| s > now && flow.done_at.is_none());
        // A paced bulk source wakes to send its next packet (`Time::MAX`: never).
        let paced = udp.paced_next.filter(|&t| t < Time::MAX);
        let want = udp.source.poll_timeout(now).or(match (paced, stop_check) {
            (Some(p), Some(s)) => Some(p.min(s)),
            (p, s) => p.or(s),
        });
        if udp.timer.map(|(t, _)| Some(t)) == Some(want) {
            return;
        }
        if let Some((_, id)) = self.udp_mut(f).timer.take() {
            self.queue.cancel(id);
        }
        if let Some(t) = want {
            let id = self.queue.schedule(t, Event::SourceWake(f));
            self.udp_mut(f).timer = Some((t, id));
        }
    }

    fn service_source(&mut self, net: &mut Network, f: usize, now: Time) {
        let traffic = self.udp_mut(f).source.config().traffic;
        match traffic {
            Traffic::Cbr(_) => loop {
                let mut ids = self.next_packet_id;
                let Some(pkt) = self.udp_mut(f).source.poll_transmit(now, &mut ids) else { break };
                self.next_packet_id = ids;
                self.send_datagram(net, f, pkt, now);
            },
            Traffic::Bulk if self.udp_mut(f).paced_next.is_some_and(|t| t <= now) => {
                self.send_paced(net, f, now);
            }
            Traffic::Bulk => {
                self.fill_bulk(net, f, now);
            }
        }
        self.arm_source(f);
        self.check_done(net, f, now);
    }

    /// Keeps the first link of a saturating flow supplied while it has room; returns how many
    /// packets it sent. A link that loses every packet at its door never fills: the source is
    /// paced instead ([`Hosts::send_paced`]) once it is certain that a refill at this instant
    /// would reach [`MAX_BULK_BURST`] packets (the link loses everything and the source has
    /// that many left), or once it has. A paced source is left to its timer.
    fn fill_bulk(&mut self, net: &mut Network, f: usize, now: Time) -> u64 {
        if self.udp_mut(f).paced_next.is_some() {
            return 0;
        }
        let Hop::Link(first) = self.flows[f].spec.route[0] else { unreachable!("validated: a bulk udp route starts with a link") };
        let size = self.flows[f].spec.packet_size;
        let mut sent = 0;
        while self.udp_mut(f).source.wants_to_send(now) && net.link(first).has_room(size) {
            if sent == 0 && net.link(first).loses_everything() && self.has_a_burst_left(f) {
                return self.send_paced(net, f, now);
            }
            if sent == MAX_BULK_BURST {
                let udp = self.udp_mut(f);
                udp.paced_next = Some(udp.pace.map_or(Time::MAX, |pace| now + pace));
                self.arm_source(f);
                break;
            }
            let mut ids = self.next_packet_id;
            let Some(pkt) = self.udp_mut(f).source.poll_transmit(now, &mut ids) else { break };
            self.next_packet_id = ids;
            self.send_datagram(net, f, pkt, now);
            sent += 1;
        }
        sent
    }

    /// Whether bulk flow `f` has at least [`MAX_BULK_BURST`] packets left to send.
    fn has_a_burst_left(&mut self, f: usize) -> bool {
        let source = &self.udp_mut(f).source;
        let payload = u64::from(source.config().packet_size - multiconn_core::IP_UDP_OVERHEAD);
        source.config().size.map_or(true, |size| size.saturating_sub(source.payload_sent()) >= MAX_BULK_BURST * payload)
    }

    /// A paced bulk source's turn at `now`: it offers one packet to its first link and waits
    /// one serialization time ([`crate::sim::udp::UdpFlow::pace`]) for the next, as long as
    /// the link loses what it is offered. A packet the link queued, a link without room (full
    /// or down) or a source that has finished end the pacing: back-pressure drives the
    /// source again (at once, when the packet was queued). Returns how many packets it sent.
    fn send_paced(&mut self, net: &mut Network, f: usize, now: Time) -> u64 {
        self.udp_mut(f).paced_next = None;
        let Hop::Link(first) = self.flows[f].spec.route[0] else { unreachable!("validated: a bulk udp route starts with a link") };
        let size = self.flows[f].spec.packet_size;
        if !(self.udp_mut(f).source.wants_to_send(now) && net.link(first).has_room(size)) {
            return 0;
        }
        let mut ids = self.next_packet_id;
        let Some(pkt) = self.udp_mut(f).source.poll_transmit(now, &mut ids) else { return 0 };
        self.next_packet_id = ids;
        let flow = FlowId(f as u32);
        let before = net.in_flight(flow);
        self.send_datagram(net, f, pkt, now);
        if net.in_flight(flow) > before {
            return 1 + self.fill_bulk(net, f, now);
        }
        let udp = self.udp_mut(f);
        udp.paced_next = Some(udp.pace.map_or(Time::MAX, |pace| now + pace));
        self.arm_source(f);
        1
    }

    fn send_datagram(&mut self, net: &mut Network, f: usize, pkt: Packet, now: Time) {
        self.recorder.flow_sent(now, FlowId(f as u32), multiconn_app::payload_of(&pkt) as u32);
        if self.flows[f].spec.tunnel.is_some() {
            return self.enter_tunnel(net, f, pkt, now);
        }
        if let Some(pcap) = &mut self.pcap {
            pcap.sent(now, &pkt);
        }
        net.send(now, pkt, self);
    }

    /// Offers the freed room of link `l` to the bulk flows that feed it, round-robin: the
    /// flow after the last one that sent goes first.
    pub(in crate::sim) fn refill_feeders(&mut self, net: &mut Network, l: usize, now: Time) {
        let n = self.feeders[l].flows.len();
        let start = self.feeders[l].next;
        for k in 0..n {
            let i = (start + k) % n;
            let f = self.feeders[l].flows[i];
            if self.fill_bulk(net, f, now) > 0 {
                self.feeders[l].next = (i + 1) % n;
            }
            self.check_done(net, f, now);
        }
    }

    /// A datagram reached the sink.
    pub(in crate::sim) fn arrive_at_sink(&mut self, net: &Network, f: usize, pkt: Packet, now: Time) {
        let payload = self.udp_mut(f).sink.receive(now, &pkt);
        self.recorder.flow_delivered(now, pkt.flow, payload);
        self.check_done(net, f, now);
    }

    /// A UDP flow is done when its source has finished and nothing of it is left in the
    /// network; transport flows finish through their applications.
    pub(in crate::sim) fn check_done(&mut self, net: &Network, f: usize, now: Time) {
        let FlowDriver::Udp(udp) = &self.flows[f].driver else { return };
        if self.flows[f].done_at.is_none() && net.in_flight(FlowId(f as u32)) == 0 && udp.source.is_finished(now) && !self.open_in_tunnel(f) {
            self.mark_done(f, now);
        }
    }
}
