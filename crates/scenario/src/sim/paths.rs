//! Multipath flows: what each path carried, and the path events of both ends.
//!
//! Every packet follows the route of the path its sending endpoint named (`Packet::path`;
//! the forward or reverse route of that path by `Packet::route`). Each end watches its own
//! interface on each path — the first link direction it sends on: the forward route's for the
//! server, the reverse route's for the client — and is told (`Endpoint::on_path_status`) at
//! the exact instants that link's `down` windows start and end. These events are scheduled
//! when the world is built, so at any instant they fire before whatever else happens then.
//! The client's path manager (if the flow has one) turns its schedule and its interface
//! events into path actions (`Endpoint::on_path_action`).

use crate::resolve::LinkDirection;
use multiconn_core::{Packet, Time};
use multiconn_multipath::{Action, LinkChange};
use multiconn_net::{Hop, Network};
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
    /// Counts a packet of a multipath flow that reached its host.
    pub(super) fn path_arrived(&mut self, f: usize, pkt: &Packet) {
        if let Some(t) = self.flows[f].path_traffic.get_mut(pkt.path as usize) {
            let t = &mut t[usize::from(pkt.route != 0)];
            t.packets_arrived += 1;
            t.bytes_arrived += u64::from(pkt.size);
        }
    }

    /// Counts a packet of a multipath flow lost on its path.
    pub(super) fn path_dropped(&mut self, f: usize, path: u8, route: u16, size: u32) {
        if let Some(t) = self.flows[f].path_traffic.get_mut(path as usize) {
            let t = &mut t[usize::from(route != 0)];
            t.packets_dropped += 1;
            t.bytes_dropped += u64::from(size);
        }
    }

    pub(super) fn on_path_status(&mut self, net: &mut Network, f: usize, role: Role, path: u8, up: bool, now: Time) {
        self.conn_mut(f).endpoint_mut(role).on_path_status(now, path, up);
        self.pump(net, f, role, now);
    }

    pub(super) fn on_path_action(&mut self, net: &mut Network, f: usize, action: PathAction, now: Time) {
        self.flows[f].path_actions.push((now, action));
        self.conn_mut(f).endpoint_mut(Role::Client).on_path_action(now, action);
        self.pump(net, f, Role::Client, now);
    }

    /// Multipath flows: schedules the interface events of both ends on every path. A host's
    /// interface on a path is the first link direction it sends on (the server's forward route,
    /// the client's reverse route); a route that starts with a split has no single interface
    /// and is not watched. Back-to-back down windows are one outage.
    pub(super) fn schedule_path_status(&mut self, f: usize, links: &[LinkDirection]) {
        let spec = &self.flows[f].spec;
        if !spec.is_multipath() || !matches!(self.flows[f].driver, FlowDriver::Transport(_)) {
            return;
        }
        let mut events = Vec::new();
        let mut client_links = Vec::new();
        for path in 0..spec.path_count() as u8 {
            for (role, route) in [(Role::Server, 0), (Role::Client, 1)] {
                let Some(&Hop::Link(l)) = spec.hops(path, route).first() else { continue };
                let mut changes: Vec<(Time, bool)> = Vec::new();
                for &(from, until) in links[l].model.down_windows() {
                    if changes.last() == Some(&(from, true)) {
                        changes.pop();
                    } else {
                        changes.push((from, false));
                    }
                    changes.push((until, true));
                }
                if role == Role::Client {
                    client_links.extend(changes.iter().map(|&(at, up)| LinkChange { at, path: usize::from(path), up }));
                }
                events.extend(changes.into_iter().map(|(t, up)| (t, Event::PathStatus { flow: f, role, path, up })));
            }
        }
        if let Some(pm) = spec.connection.as_ref().and_then(|c| c.path_manager.as_ref()) {
            let planned = multiconn_multipath::plan(pm.config, &pm.schedule, &client_links).expect("the schedule was checked when the scenario was resolved");
            // The first openings are the connection's own (the paths open from the start).
            for p in planned.into_iter().skip(pm.opened_with_connection) {
                let path = p.path as u8;
                let action = match p.action {
                    Action::Open { path_id, backup } => PathAction::Open { path, path_id: path_id as u32, backup },
                    Action::Abandon { .. } => PathAction::Abandon { path },
                    Action::SetStatus { backup, .. } => PathAction::SetStatus { path, backup },
                };
                events.push((p.at, Event::PathAction { flow: f, action }));
            }
        }
        for (t, event) in events {
            self.queue.schedule(t, event);
        }
    }
}
