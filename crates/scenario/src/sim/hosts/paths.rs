//! The hosts' side of multipath flows (state: [`crate::sim::paths`]): what each path carried, each
//! end's interface events, and the client's path manager.

use multiconn_core::{FlowId, Packet, Recorder, Time};
use multiconn_multipath::{Action, PathManager};
use multiconn_net::{Hop, Loss, Network};
use multiconn_transport::{PathAction, Role};

use super::{FlowDriver, Hosts};
use crate::sim::paths::{flow_rank, ClientPathManager, ACTION_RANK};
use crate::sim::Event;

impl Hosts {
    /// Counts a packet of a multipath flow that reached its host; the data direction's go
    /// into the path's time series.
    pub(in crate::sim) fn path_arrived(&mut self, f: usize, pkt: &Packet, now: Time) {
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
    pub(in crate::sim) fn path_dropped(&mut self, f: usize, loss: &Loss, now: Time) {
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
    pub(in crate::sim) fn watch_paths(&mut self, net: &Network, f: usize) {
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

    pub(in crate::sim) fn on_path_status(&mut self, net: &mut Network, f: usize, role: Role, path: u8, now: Time) {
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
    pub(in crate::sim) fn on_path_manager(&mut self, net: &mut Network, f: usize, now: Time) {
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
