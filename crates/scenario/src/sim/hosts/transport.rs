//! The hosts' side of TCP and QUIC flows (state: [`crate::sim::transport`]): after every input an
//! endpoint is drained of packets (sent on its routes) and application events, its state is
//! recorded and its timer re-armed; datagrams reaching a QUIC receiver pass its host's UDP
//! socket buffer first. With the flow's host model on, what an endpoint sends and what it is
//! handed pass its process first, one packet at a time (`on_host_work`), and its timers fire
//! late.

use multiconn_core::{DropCause, FlowId, Packet, Recorder, Time};
use multiconn_net::Network;
use multiconn_transport::{AppEvent, Role};

use super::{FlowDriver, Hosts};
use crate::sim::transport::{other, ConnState, HostWork};
use crate::sim::Event;

impl Hosts {
    pub(in crate::sim) fn conn_mut(&mut self, f: usize) -> &mut ConnState {
        match &mut self.flows[f].driver {
            FlowDriver::Transport(conn) => conn,
            FlowDriver::Udp(_) => unreachable!("transport events only concern transport flows"),
        }
    }

    pub(in crate::sim) fn arm_endpoint(&mut self, f: usize, role: Role) {
        let conn = self.conn_mut(f);
        let mut want = conn.endpoint_mut(role).poll_timeout();
        if let (Some(t), Some(host)) = (want, conn.host_mut(role)) {
            want = Some(host.late(t));
        }
        if let Some(t) = conn.timer_mut(role).arm(want) {
            self.queue.schedule(t, Event::EndpointWake(f, role));
        }
    }

    pub(in crate::sim) fn on_endpoint_wake(&mut self, net: &mut Network, f: usize, role: Role, now: Time) {
        let conn = self.conn_mut(f);
        conn.timer_mut(role).fired(now);
        let ep = conn.endpoint_mut(role);
        // A wake-up armed for an earlier deadline may find nothing due any more.
        if ep.poll_timeout().is_some_and(|t| t <= now) {
            ep.handle_timeout(now);
            self.pump(net, f, role, now);
        } else {
            self.arm_endpoint(f, role);
        }
    }

    pub(in crate::sim) fn on_socket_wake(&mut self, net: &mut Network, f: usize, now: Time) {
        self.conn_mut(f).socket_timer.fired(now);
        self.read_socket(net, f, now);
    }

    /// After any input to an endpoint: sends what it wants to send, handles its application
    /// events, records its state and re-arms its timer.
    pub(in crate::sim) fn pump(&mut self, net: &mut Network, f: usize, role: Role, now: Time) {
        let mut outbox = std::mem::take(&mut self.outbox);
        let flow = FlowId(f as u32);
        {
            let mut ids = self.next_packet_id;
            let ep = self.conn_mut(f).endpoint_mut(role);
            while let Some(pkt) = ep.poll_transmit(now, &mut ids) {
                outbox.push(pkt);
            }
            self.next_packet_id = ids;
        }
        let sender = self.flows[f].spec.sender_role();
        if self.conn_mut(f).host_mut(role).is_some() {
            for pkt in outbox.drain(..) {
                self.give_process(f, role, HostWork::Send(pkt), now);
            }
        } else {
            for pkt in outbox.drain(..) {
                self.put_on_wire(net, f, role, pkt, now);
            }
        }
        self.outbox = outbox;
        let mut sender_ready = false;
        while let Some(event) = self.conn_mut(f).endpoint_mut(role).poll_event() {
            self.app_event(f, role, event, now);
            sender_ready |= role == sender && event == AppEvent::CanSend;
        }
        if self.flows[f].messages.as_ref().is_some_and(|log| log.has_datagrams()) {
            self.read_datagrams(f, role, now);
        }
        if self.flows[f].tunnel.is_some() {
            self.read_tunnel(net, f, role, now);
        }
        if role != sender && self.flows[f].messages.is_some() {
            self.read_messages(f, now);
        }
        if self.checks.is_some() {
            self.check_endpoint(f, role, now);
        }
        let FlowDriver::Transport(conn) = &mut self.flows[f].driver else { unreachable!("transport flow") };
        if role == sender {
            let ep = match role {
                Role::Client => conn.client.as_ref(),
                Role::Server => conn.server.as_ref(),
            };
            let sample = ep.sample();
            if sample != conn.last_sample {
                conn.last_sample = sample;
                self.recorder.flow_transport(now, flow, &sample);
            }
            if !conn.last_path_samples.is_empty() {
                ep.path_samples(&mut self.path_samples);
                for (path, sample) in self.path_samples.drain(..) {
                    let Some(last) = conn.last_path_samples.get_mut(path as usize) else { continue };
                    if *last != Some(sample) {
                        *last = Some(sample);
                        self.recorder.path_transport(now, flow, path, &sample);
                    }
                }
            }
        }
        match role {
            Role::Server => {
                let q = &mut conn.qlog_server;
                conn.server.drain_qlog(q);
            }
            Role::Client => {
                let q = &mut conn.qlog_client;
                conn.client.drain_qlog(q);
            }
        }
        self.arm_endpoint(f, role);
        if sender_ready && self.flows[f].messages.is_some() {
            self.begin_messages(net, f, now);
        }
    }

    /// A packet `role`'s end of flow `f` sent leaves its host.
    fn put_on_wire(&mut self, net: &mut Network, f: usize, role: Role, mut pkt: Packet, now: Time) {
        pkt.route = self.flows[f].spec.route_of(role);
        if role == self.flows[f].spec.sender_role() {
            self.recorder.flow_sent(now, FlowId(f as u32), pkt.size);
        }
        if self.flows[f].spec.tunnel.is_some() {
            return self.enter_tunnel(net, f, pkt, now);
        }
        if let Some(pcap) = &mut self.pcap {
            pcap.sent(now, &pkt);
        }
        net.send(now, pkt, self);
    }

    /// A packet is handed to `role`'s end of flow `f`: at once, or through its process.
    fn hand_to_endpoint(&mut self, net: &mut Network, f: usize, role: Role, pkt: Packet, now: Time) {
        if self.conn_mut(f).host_mut(role).is_some() {
            self.give_process(f, role, HostWork::Receive(pkt), now);
            return;
        }
        self.conn_mut(f).endpoint_mut(role).handle_packet(now, pkt);
        self.pump(net, f, role, now);
    }

    /// Queues work at `role`'s process, which takes it after what is already there.
    fn give_process(&mut self, f: usize, role: Role, work: HostWork, now: Time) {
        let conn = self.conn_mut(f);
        let host = conn.host_mut(role).expect("a process models this endpoint's host");
        let done = host.cpu.process(now);
        host.work.push_back((done, work));
        self.arm_process(f, role);
    }

    fn arm_process(&mut self, f: usize, role: Role) {
        let host = self.conn_mut(f).host_mut(role).expect("a process models this endpoint's host");
        let want = host.work.front().map(|(t, _)| *t);
        if let Some(t) = host.timer.arm(want) {
            self.queue.schedule(t, Event::HostWork(f, role));
        }
    }

    /// `role`'s process of flow `f` is done with what was due by `now`: sent packets leave,
    /// received ones reach the endpoint.
    pub(in crate::sim) fn on_host_work(&mut self, net: &mut Network, f: usize, role: Role, now: Time) {
        self.conn_mut(f).host_mut(role).expect("a process models this endpoint's host").timer.fired(now);
        loop {
            let host = self.conn_mut(f).host_mut(role).expect("a process models this endpoint's host");
            if !host.work.front().is_some_and(|(t, _)| *t <= now) {
                break;
            }
            let (_, work) = host.work.pop_front().expect("checked");
            match work {
                HostWork::Send(pkt) => self.put_on_wire(net, f, role, pkt, now),
                HostWork::Receive(pkt) => {
                    self.conn_mut(f).endpoint_mut(role).handle_packet(now, pkt);
                    self.pump(net, f, role, now);
                }
            }
        }
        self.arm_process(f, role);
    }

    /// The invariant checks: what `role`'s end of flow `f` noted since its last input.
    fn check_endpoint(&mut self, f: usize, role: Role, now: Time) {
        let Some(mut checks) = self.checks.take() else { return };
        self.conn_mut(f).endpoint_mut(role).drain_observations(&mut checks.scratch);
        checks.observed(f, role, now);
        self.checks = Some(checks);
    }

    /// What `role`'s application saw: the client's handshake and responses, the receiver's
    /// data, and the end of the workload at whichever end finishes it.
    fn app_event(&mut self, f: usize, role: Role, event: AppEvent, now: Time) {
        let receiver = role != self.flows[f].spec.sender_role();
        let conn = self.conn_mut(f);
        match event {
            AppEvent::CanSend => {
                if role == Role::Client {
                    conn.can_send_at.get_or_insert(now);
                }
            }
            AppEvent::Delivered { bytes } => {
                if receiver {
                    conn.first_byte_at.get_or_insert(now);
                    self.recorder.flow_delivered(now, FlowId(f as u32), bytes);
                }
            }
            AppEvent::ResponseComplete { index, .. } => {
                if receiver {
                    conn.responses.push((index, now));
                }
            }
            // A download finishes at the client, an upload at the server.
            AppEvent::Finished => {
                if receiver {
                    self.mark_done(f, now);
                }
            }
        }
    }

    /// A packet reached the end of its route: the receiver (through its UDP socket, for QUIC)
    /// or the sender.
    pub(in crate::sim) fn arrive_at_endpoint(&mut self, net: &mut Network, f: usize, pkt: Packet, now: Time) {
        let sender = self.flows[f].spec.sender_role();
        if pkt.route != 0 {
            self.hand_to_endpoint(net, f, sender, pkt, now);
            return;
        }
        let receiver = other(sender);
        let conn = self.conn_mut(f);
        match conn.socket.as_mut() {
            None => self.hand_to_endpoint(net, f, receiver, pkt, now),
            Some(socket) => {
                if let Err(pkt) = socket.offer(now, pkt) {
                    self.recorder.flow_dropped(now, pkt.flow, DropCause::UdpBuffer, pkt.size, false);
                }
                self.read_socket(net, f, now);
            }
        }
    }

    /// The receiving application reads what its socket lets it read now.
    fn read_socket(&mut self, net: &mut Network, f: usize, now: Time) {
        let receiver = other(self.flows[f].spec.sender_role());
        // The endpoint is drained after every datagram, so ACKs are not bunched.
        loop {
            let conn = self.conn_mut(f);
            let Some(pkt) = conn.socket.as_mut().and_then(|s| s.poll_read(now)) else { break };
            self.hand_to_endpoint(net, f, receiver, pkt, now);
        }
        let conn = self.conn_mut(f);
        let want = conn.socket.as_ref().and_then(|s| s.poll_timeout());
        if let Some(t) = conn.socket_timer.arm(want) {
            self.queue.schedule(t, Event::SocketWake(f));
        }
    }
}
