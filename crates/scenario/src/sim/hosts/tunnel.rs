//! The hosts' side of tunnels (state: [`crate::sim::tunnel`]): a packet a flow in a tunnel
//! sends goes, instead of onto its route, into a QUIC DATAGRAM frame of the tunnel's end on
//! the same node (carried as the datagram's content, sized as its HTTP Datagram,
//! [`crate::resolve::Tunnelled::datagram_bytes`]); the tunnel's other end hands it to the
//! flow's receiving end when the datagram arrives. Every tunnel datagram asks to be copied by a
//! redundant multipath scheduler (the other schedulers send it once).

use multiconn_core::{Packet, Payload, Time};
use multiconn_net::Network;
use multiconn_transport::{DatagramEvent, DatagramOptions, Role};

use super::{FlowDriver, Hosts};

impl Hosts {
    /// Flow `f`'s packet, `pkt.route` set, enters its tunnel at the tunnel's end on the node
    /// it leaves from.
    pub(in crate::sim) fn enter_tunnel(&mut self, net: &mut Network, f: usize, pkt: Packet, now: Time) {
        let place = self.flows[f].spec.tunnel.as_ref().expect("a flow in a tunnel");
        let t = place.flow;
        let bytes = place.datagram_bytes(pkt.size);
        // The tunnel's end on the node the packet leaves.
        let end = if pkt.route == 0 { place.end_at_from } else { place.end_at_from.peer() };
        let dir = usize::from(end != self.flows[t].spec.sender_role());
        let state = self.flows[t].tunnel.as_mut().expect("the tunnel's state");
        let tag = state.next_tag();
        let FlowDriver::Transport(conn) = &mut self.flows[t].driver else { unreachable!("a tunnel is a quic flow") };
        let options = DatagramOptions { redundant: true, urgent: false };
        let accepted = conn.endpoint_mut(end).send_datagram_content(tag, bytes, options, Payload::new(pkt)).is_ok();
        let state = self.flows[t].tunnel.as_mut().expect("the tunnel's state");
        if accepted {
            state.entered(tag, f, dir, bytes);
        } else {
            state.refused(dir);
        }
        self.pump(net, t, end, now);
    }

    /// What tunnel `t`'s end `role` told of its datagrams: packets that arrived go to their
    /// flows' receiving ends, packets given up are closed.
    pub(in crate::sim) fn read_tunnel(&mut self, net: &mut Network, t: usize, role: Role, now: Time) {
        let mut events = std::mem::take(&mut self.datagram_events);
        let FlowDriver::Transport(conn) = &mut self.flows[t].driver else { unreachable!("a tunnel is a quic flow") };
        conn.endpoint_mut(role).drain_datagram_events(&mut events);
        // The arrivals' direction: towards this end.
        let dir = usize::from(role == self.flows[t].spec.sender_role());
        for e in events.drain(..) {
            let state = self.flows[t].tunnel.as_mut().expect("the tunnel's state");
            match e {
                DatagramEvent::Received { tag, content, .. } => {
                    state.delivered(tag, dir);
                    let pkt = content.as_ref().and_then(|c| c.get::<Packet>()).expect("a tunnel's datagrams carry packets").clone();
                    let f = pkt.flow.0 as usize;
                    match self.flows[f].driver {
                        FlowDriver::Transport(_) => self.arrive_at_endpoint(net, f, pkt, now),
                        FlowDriver::Udp(_) => self.arrive_at_sink(net, f, pkt, now),
                    }
                }
                DatagramEvent::Lost { tag } | DatagramEvent::Dropped { tag } => {
                    if let Some(f) = state.given_up(tag, matches!(e, DatagramEvent::Lost { .. })) {
                        self.check_done(net, f, now);
                    }
                }
                DatagramEvent::Acked { .. } => {}
            }
        }
        self.datagram_events = events;
    }

    /// Whether flow `f` has packets open in its tunnel.
    pub(in crate::sim) fn open_in_tunnel(&self, f: usize) -> bool {
        self.flows[f].spec.tunnel.as_ref().is_some_and(|place| self.flows[place.flow].tunnel.as_ref().is_some_and(|s| s.open_of(f) > 0))
    }

    /// Flow `f` is done: so is its tunnel once every flow in it is.
    pub(in crate::sim) fn tunnelled_done(&mut self, f: usize, now: Time) {
        let Some(t) = self.flows[f].spec.tunnel.as_ref().map(|place| place.flow) else { return };
        let state = self.flows[t].tunnel.as_ref().expect("the tunnel's state");
        if state.flows.iter().all(|&g| self.flows[g].done_at.is_some()) {
            self.mark_done(t, now);
        }
    }
}
