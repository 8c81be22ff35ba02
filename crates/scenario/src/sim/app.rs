//! Message flows (app = "messages"): the sending application (at `from`: the connection's
//! server, or its client with `direction = "up"`) writes messages on streams it opens, on its
//! sources' periods or when the user's code writes them ([`crate::Simulation::write`]); the
//! receiving application reads them as the other end delivers them.

use crate::messages::MessageKind;
use multiconn_core::{Dur, Time};
use multiconn_net::Network;
use multiconn_transport::{AppError, StreamOptions};

use super::hosts::{FlowDriver, Hosts};
use super::{Event, World};

impl Hosts {
    /// The sending application can send: its sources begin.
    pub(super) fn begin_messages(&mut self, net: &mut Network, f: usize, now: Time) {
        let flow = &mut self.flows[f];
        let sender = flow.spec.sender_role();
        let (Some(log), FlowDriver::Transport(conn)) = (flow.messages.as_mut(), &mut flow.driver) else { return };
        log.begin(now, conn.endpoint_mut(sender)).expect("validated: message flows are quic, whose ends open streams");
        self.write_messages(net, f, now);
    }

    pub(super) fn on_message_wake(&mut self, net: &mut Network, f: usize, now: Time) {
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

    /// The receiving application reads what arrived of the messages; the flow is done once
    /// every source stopped and all their messages arrived.
    pub(super) fn read_messages(&mut self, f: usize, now: Time) {
        let mut progress = std::mem::take(&mut self.progress);
        let flow = &mut self.flows[f];
        let receiver = super::transport::other(flow.spec.sender_role());
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

/// The application API of message flows (`multiconn.Session`).
impl World {
    /// The sending application of message flow `f` opens a stream of its own.
    pub fn app_open_stream(&mut self, f: usize, name: &str, kind: MessageKind, options: StreamOptions, deadline: Option<Dur>) -> Result<u64, AppError> {
        let flow = &mut self.hosts.flows[f];
        let sender = flow.spec.sender_role();
        let (Some(log), FlowDriver::Transport(conn)) = (flow.messages.as_mut(), &mut flow.driver) else { return Err(AppError::Unsupported) };
        log.open_app_stream(conn.endpoint_mut(sender), name, kind, options, deadline)
    }

    /// The sending application of message flow `f` writes a message of `size` bytes on its
    /// stream `stream` now; the connection sends what it can at once.
    pub fn app_write(&mut self, f: usize, stream: u64, size: u64) -> Result<u64, AppError> {
        let now = self.now();
        let flow = &mut self.hosts.flows[f];
        let sender = flow.spec.sender_role();
        let (Some(log), FlowDriver::Transport(conn)) = (flow.messages.as_mut(), &mut flow.driver) else { return Err(AppError::Unsupported) };
        let id = log.app_write(now, conn.endpoint_mut(sender), stream, size)?;
        self.hosts.pump(&mut self.net, f, sender, now);
        Ok(id)
    }

    /// The sending application of message flow `f` ends its stream `stream`.
    pub fn app_finish(&mut self, f: usize, stream: u64) -> Result<(), AppError> {
        let now = self.now();
        let flow = &mut self.hosts.flows[f];
        let sender = flow.spec.sender_role();
        let (Some(log), FlowDriver::Transport(conn)) = (flow.messages.as_mut(), &mut flow.driver) else { return Err(AppError::Unsupported) };
        log.app_finish(conn.endpoint_mut(sender), stream)?;
        self.hosts.pump(&mut self.net, f, sender, now);
        Ok(())
    }
}
