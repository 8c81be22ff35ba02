//! The hosts' side of message flows: the sending application writes its sources' messages
//! when they are due, the receiving one reads what arrives; with datagram sources, each end's
//! transport tells the applications what became of every datagram.

use multiconn_core::Time;
use multiconn_net::Network;

use super::{FlowDriver, Hosts};
use crate::sim::Event;

impl Hosts {
    /// The sending application can send: its sources begin.
    pub(in crate::sim) fn begin_messages(&mut self, net: &mut Network, f: usize, now: Time) {
        let flow = &mut self.flows[f];
        let sender = flow.spec.sender_role();
        let (Some(log), FlowDriver::Transport(conn)) = (flow.messages.as_mut(), &mut flow.driver) else { return };
        log.begin(now, conn.endpoint_mut(sender)).expect("validated: message flows are quic, whose ends open streams");
        self.write_messages(net, f, now);
    }

    pub(in crate::sim) fn on_message_wake(&mut self, net: &mut Network, f: usize, now: Time) {
        self.flows[f].message_timer.fired(now);
        self.write_messages(net, f, now);
    }

    /// Writes the messages due now at the sending application, sends them and waits for the
    /// next.
    fn write_messages(&mut self, net: &mut Network, f: usize, now: Time) {
        let flow = &mut self.flows[f];
        let sender = flow.spec.sender_role();
        let (Some(log), FlowDriver::Transport(conn)) = (flow.messages.as_mut(), &mut flow.driver) else {
            unreachable!("message events concern message flows")
        };
        let wrote = log.write_due(now, conn.endpoint_mut(sender)).expect("validated: message flows are quic, whose ends take writes on the streams they opened");
        let want = log.next_due();
        if let Some(t) = flow.message_timer.arm(want) {
            self.queue.schedule(t, Event::MessageWake(f));
        }
        if wrote {
            self.pump(net, f, sender, now);
        }
    }

    /// What `role`'s transport told of the flow's datagrams (arrivals at the receiver,
    /// acknowledgements and losses at the sender); the flow is done once every message arrived
    /// or is known never to.
    pub(in crate::sim) fn read_datagrams(&mut self, f: usize, role: multiconn_transport::Role, now: Time) {
        let mut events = std::mem::take(&mut self.datagram_events);
        let flow = &mut self.flows[f];
        let (Some(log), FlowDriver::Transport(conn)) = (flow.messages.as_mut(), &mut flow.driver) else { return };
        conn.endpoint_mut(role).drain_datagram_events(&mut events);
        for e in events.drain(..) {
            log.on_datagram_event(&e);
        }
        self.datagram_events = events;
        if log.is_complete() {
            self.mark_done(f, now);
        }
    }

    /// The receiving application reads what arrived of the messages; the flow is done once
    /// every source stopped and all their messages arrived.
    pub(in crate::sim) fn read_messages(&mut self, f: usize, now: Time) {
        let mut progress = std::mem::take(&mut self.progress);
        let flow = &mut self.flows[f];
        let receiver = crate::sim::transport::other(flow.spec.sender_role());
        let (Some(log), FlowDriver::Transport(conn)) = (flow.messages.as_mut(), &mut flow.driver) else { return };
        conn.endpoint_mut(receiver).drain_progress(&mut progress);
        for p in progress.drain(..) {
            log.on_progress(&p);
        }
        self.progress = progress;
        if log.is_complete() {
            self.mark_done(f, now);
        }
    }
}
