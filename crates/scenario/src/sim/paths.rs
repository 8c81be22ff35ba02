//! Multipath flows: what each path carried, and the path events of both ends.
//!
//! Every packet follows the route of the path its sending endpoint named (`Packet::path`;
//! the forward or reverse route of that path by `Packet::route`). Each end watches its own
//! interface on each path — the first link direction it sends on: the forward route's for the
//! data sender, the reverse route's for the receiver — as the network reports it: the element tells
//! when it next goes down or comes back ([`Network::next_link_change`]) and whether it is up
//! then ([`Network::link_up`]), and the end is told at that instant
//! (`Endpoint::on_path_status`). The client's path manager (if the flow has one) runs its
//! schedule and reacts to those interface events as they come; it is woken only for the
//! actions it will take (`PathManager::next_action`), asked again after each interface
//! event (`Endpoint::on_path_action`).
//!
//! Path events are ranked ([`multiconn_engine::EventQueue::schedule_ranked`]) so that at any
//! instant they fire before everything but the network's first wake-ups, flow by flow, each
//! flow's interface events (by path, server first) before its manager's action: the order
//! they would have if all were planned when the world is built, whenever each is scheduled.

use multiconn_core::{FlowId, Packet, Recorder, Time};
use multiconn_engine::TimerId;
use multiconn_multipath::{Action, PathManager};
use multiconn_net::{Hop, Loss, Network};
use multiconn_transport::{PathAction, Role};

use super::hosts::{FlowDriver, Hosts};
use super::Event;

/// Packets of one direction of one path of a multipath flow, on the wire (headers included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PathTraffic {
    /// Reached the end of the route (the receiving host, before its socket buffer).
    pub packets_arrived: u64,
    pub bytes_arrived: u64,
    /// Dropped on the route's links or split bearers.
    pub packets_dropped: u64,
    pub bytes_dropped: u64,
}

impl Hosts {
    /// Counts a packet of a multipath flow that reached its host; the data direction's go
    /// into the path's time series.
    pub(super) fn path_arrived(&mut self, f: usize, pkt: &Packet, now: Time) {
        if let Some(t) = self.flows[f].path_traffic.get_mut(pkt.path as usize) {
            let t = &mut t[usize::from(pkt.route != 0)];
            t.packets_arrived += 1;
            t.bytes_arrived += u64::from(pkt.size);
            if pkt.route == 0 {
                self.recorder.path_delivered(now, pkt.flow, pkt.path, pkt.size);
            }
        }
    }

    /// Counts a packet of a multipath flow lost on its path; the data direction's go into the
    /// path's time series.
    pub(super) fn path_dropped(&mut self, f: usize, loss: &Loss, now: Time) {
        if let Some(t) = self.flows[f].path_traffic.get_mut(loss.path as usize) {
            let t = &mut t[usize::from(loss.route != 0)];
            t.packets_dropped += 1;
            t.bytes_dropped += u64::from(loss.size);
            if loss.route == 0 {
                self.recorder.path_dropped(now, FlowId(f as u32), loss.path, loss.cause, loss.size);
            }
        }
    }

    /// The link direction `role`'s end of flow `f` watches on path `path`: the first hop it
    /// sends on, if that is a link.
    fn interface(&self, f: usize, path: u8, role: Role) -> Option<usize> {
        let spec = &self.flows[f].spec;
        match spec.hops(path, spec.route_of(role)).first() {
            Some(&Hop::Link(l)) => Some(l),
            _ => None,
        }
    }

    /// Schedules the interface event of `role`'s end of flow `f` on path `path` at the next
    /// change at or after `from` of the link it watches, if one is known.
    fn watch_interface(&mut self, net: &Network, f: usize, path: u8, role: Role, from: Time) {
        let Some(l) = self.interface(f, path, role) else { return };
        if let Some(at) = net.next_link_change(l, from) {
            let rank = flow_rank(f) | u64::from(path) << 1 | u64::from(role == Role::Client);
            self.queue.schedule_ranked(at, rank, Event::PathStatus { flow: f, role, path });
        }
    }

    /// Multipath flows: watches the interfaces of both ends on every path (a route that
    /// starts with a split has no single interface and is not watched), and starts the
    /// client's path manager.
    pub(super) fn watch_paths(&mut self, net: &Network, f: usize) {
        let spec = &self.flows[f].spec;
        if !spec.is_multipath() || !matches!(self.flows[f].driver, FlowDriver::Transport(_)) {
            return;
        }
        let pm = spec.connection.as_ref().and_then(|c| c.path_manager.clone());
        for path in 0..spec.path_count() as u8 {
            for role in [Role::Server, Role::Client] {
                self.watch_interface(net, f, path, role, Time::ZERO);
            }
        }
        if let Some(pm) = pm {
            let mut manager = PathManager::new(pm.config, &pm.schedule).expect("the schedule was checked when the scenario was resolved");
            // The first openings are the connection's own (the paths open from the start).
            for _ in 0..pm.opened_with_connection {
                let opening = manager.poll_action(Time::ZERO);
                debug_assert!(matches!(opening.map(|p| p.action), Some(Action::Open { .. })), "{opening:?}");
            }
            self.flows[f].path_manager = Some(ClientPathManager { manager, wake: None });
            self.arm_path_manager(f);
        }
    }

    /// Schedules the client's path manager of flow `f` for its next action, in place of the
    /// one pending.
    fn arm_path_manager(&mut self, f: usize) {
        let Hosts { flows, queue, .. } = self;
        let Some(pm) = flows[f].path_manager.as_mut() else { return };
        if let Some(id) = pm.wake.take() {
            queue.cancel(id);
        }
        if let Some(next) = pm.manager.next_action() {
            pm.wake = Some(queue.schedule_ranked(next.at, flow_rank(f) | ACTION_RANK, Event::PathManager(f)));
        }
    }

    pub(super) fn on_path_status(&mut self, net: &mut Network, f: usize, role: Role, path: u8, now: Time) {
        let l = self.interface(f, path, role).expect("only watched interfaces have events");
        let up = net.link_up(l, now);
        self.conn_mut(f).endpoint_mut(role).on_path_status(now, path, up);
        self.watch_interface(net, f, path, role, Time(now.0 + 1));
        if role == Role::Client {
            if let Some(pm) = self.flows[f].path_manager.as_mut() {
                // Items due before now that cause no action are done with first.
                if pm.manager.poll_timeout().is_some_and(|t| t < now) {
                    let missed = pm.manager.poll_action(Time(now.0 - 1));
                    assert!(missed.is_none(), "the path manager's action {missed:?} was due before {now:?}");
                }
                if up {
                    pm.manager.on_link_up(now, usize::from(path));
                } else {
                    pm.manager.on_link_down(now, usize::from(path));
                }
                self.arm_path_manager(f);
            }
        }
        self.pump(net, f, role, now);
    }

    /// The client's path manager of flow `f` takes the action it said was due now.
    pub(super) fn on_path_manager(&mut self, net: &mut Network, f: usize, now: Time) {
        let pm = self.flows[f].path_manager.as_mut().expect("only a flow with a path manager has its events");
        pm.wake = None;
        let p = pm.manager.poll_action(now).expect("the path manager's next action is due");
        let path = p.path as u8;
        let action = match p.action {
            Action::Open { path_id, backup } => PathAction::Open { path, path_id: path_id as u32, backup },
            Action::Abandon { .. } => PathAction::Abandon { path },
            Action::SetStatus { backup, .. } => PathAction::SetStatus { path, backup },
        };
        self.on_path_action(net, f, action, now);
        self.arm_path_manager(f);
    }

    fn on_path_action(&mut self, net: &mut Network, f: usize, action: PathAction, now: Time) {
        self.flows[f].path_actions.push((now, action));
        self.conn_mut(f).endpoint_mut(Role::Client).on_path_action(now, action);
        self.pump(net, f, Role::Client, now);
    }
}

/// The client's path manager of a multipath flow, and its pending wake-up.
pub struct ClientPathManager {
    manager: PathManager,
    wake: Option<TimerId>,
}

/// Path events at an instant: after the network's first wake-ups (rank
/// [`super::START_RANK`]), flow by flow (the flow index in the high bits), each flow's
/// interface events (path, then role) before its manager's action.
fn flow_rank(f: usize) -> u64 {
    (f as u64 + 1) << 32
}

/// Above any interface event's rank within a flow.
const ACTION_RANK: u64 = 1 << 31;
