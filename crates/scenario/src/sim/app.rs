//! The application API of message flows (app = "messages"): the user's own code opens streams
//! at the sending application (at `from`: the connection's server, or its client with
//! `direction = "up"`) and writes messages on them ([`crate::Simulation::write`]). The
//! sources' own messages and the receiving application are the hosts' (`hosts/app.rs`).

use crate::messages::MessageKind;
use multiconn_core::Dur;
use multiconn_transport::{AppError, StreamOptions};

use super::{FlowDriver, World};

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
