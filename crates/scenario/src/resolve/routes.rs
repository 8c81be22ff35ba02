//! Routes: the hops of a flow's `route` (or, when it has none, the one link joining its
//! ends) or of each of its `paths`, walked from `from` to `to`, and the reverse routes (the
//! same links the other way, a split's uplink leg where a route crosses a split).

use multiconn_core::Dur;
use multiconn_net::Leg;
use super::errors::{err, FieldError};
use super::links::LinkDirection;
use super::splits::SplitIndex;
use crate::schema::{FlowSection, ScenarioFile, Transport};
use multiconn_net::port::cell::cell_port;
use multiconn_net::Hop;
use std::collections::HashMap;

/// The fewest paths of a multipath flow.
pub const MIN_PATHS: usize = 2;
/// The most paths of a multipath flow.
pub const MAX_PATHS: usize = 8;

/// The two routes of one path of a multipath flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRoutes {
    /// From `from` to `to`.
    pub route: Vec<Hop>,
    /// From `to` back to `from`.
    pub reverse_route: Vec<Hop>,
}


/// The network's elements as routes name them.
pub(super) struct Network<'a> {
    pub links: &'a [LinkDirection],
    pub link_index: &'a HashMap<&'a str, usize>,
    pub split_index: &'a HashMap<&'a str, SplitIndex>,
    pub cells: &'a [super::cells::Cell],
    pub cell_index: &'a HashMap<&'a str, usize>,
}

/// A flow's forward and reverse routes (path 0's for a multipath flow) and its other paths'.
type FlowHops = (Vec<Hop>, Vec<Hop>, Vec<PathRoutes>);

/// The forward and reverse routes of flow `f` (path 0 for a multipath flow) and, for a
/// multipath flow, those of its other paths. A route names the two-way hops of `links`
/// (hop `i` is directions `2 * i` and `2 * i + 1`) by `link_index`, and splits.
pub(super) fn resolve_routes(f: &FlowSection, file: &ScenarioFile, net: &Network) -> Result<FlowHops, FieldError> {
    let (links, link_index, split_index) = (net.links, net.link_index, net.split_index);
    let path = |field: &'static str| vec!["flow", f.name.as_str(), field];
    if let Some(paths) = &f.paths {
        if f.route.is_some() {
            return Err(err(&path("paths"), "give either route (one path) or paths (several), not both"));
        }
        match f.transport {
            Transport::Udp => return Err(err(&path("paths"), "only tcp (MPTCP) and quic (Multipath QUIC) flows take several paths; a udp flow has one route")),
            Transport::Tcp | Transport::Quic => {}
        }
        if !(MIN_PATHS..=MAX_PATHS).contains(&paths.len()) {
            return Err(err(&path("paths"), format!("a multipath flow needs {MIN_PATHS} to {MAX_PATHS} paths, got {}", paths.len())));
        }
    } else if f.multipath.is_some() {
        return Err(err(&path("multipath"), "the multipath table needs paths = [[...], [...]]: 2 to 8 routes from `from` to `to`, instead of route"));
    }
    let route_names: Vec<String> = match (&f.route, &f.paths) {
        (Some(r), _) if r.is_empty() => return Err(err(&path("route"), "a route needs at least one link")),
        (Some(r), _) => r.clone(),
        (None, Some(paths)) => paths[0].clone(),
        (None, None) => {
            let direct: Vec<&LinkDirection> = links
                .iter()
                .step_by(2)
                .filter(|l| (l.from == f.from && l.to == f.to) || (l.to == f.from && l.from == f.to))
                .collect();
            match direct.as_slice() {
                [one] => vec![one.name.clone()],
                [] => return Err(err(&path("route"), format!("no link joins \"{}\" and \"{}\" directly; give the route as a list of link names", f.from, f.to))),
                _ => return Err(err(&path("route"), format!("several links join \"{}\" and \"{}\"; say which with route = [...]", f.from, f.to))),
            }
        }
    };
    let routes = Routes { flow: f, file, links, link_index, split_index, cells: net.cells, cell_index: net.cell_index };
    Ok(match &f.paths {
        None => {
            let (route, reverse_route) = routes.resolve(&route_names, None)?;
            (route, reverse_route, Vec::new())
        }
        Some(paths) => {
            for (i, p) in paths.iter().enumerate() {
                if p.is_empty() {
                    return Err(err(&path("paths"), format!("paths[{i}] is empty: each path needs at least one link")));
                }
                if let Some(j) = paths[..i].iter().position(|q| q == p) {
                    return Err(err(&path("paths"), format!("paths[{j}] and paths[{i}] are the same route; give each path its own")));
                }
            }
            let (route, reverse_route) = routes.resolve(&route_names, Some(0))?;
            let mut extra = Vec::new();
            for (i, p) in paths.iter().enumerate().skip(1) {
                let (route, reverse_route) = routes.resolve(p, Some(i))?;
                extra.push(PathRoutes { route, reverse_route });
            }
            (route, reverse_route, extra)
        }
    })
}

/// Resolves the routes of one flow: its `route`, or each of its `paths`.
struct Routes<'a> {
    flow: &'a FlowSection,
    file: &'a ScenarioFile,
    links: &'a [LinkDirection],
    link_index: &'a HashMap<&'a str, usize>,
    split_index: &'a HashMap<&'a str, SplitIndex>,
    cells: &'a [super::cells::Cell],
    cell_index: &'a HashMap<&'a str, usize>,
}

impl Routes<'_> {
    /// The UE of `ues` a route going down through hop `h` of `names` goes on from: the flow's
    /// end after the last hop, or the end of the next link that is one of them.
    fn next_ue(&self, names: &[String], h: usize, ues: &[String]) -> Option<String> {
        match names.get(h + 1) {
            None => Some(self.flow.to.clone()),
            Some(n) => self.link_index.get(n.as_str()).and_then(|&li| {
                let l = &self.links[2 * li];
                ues.iter().find(|u| **u == l.from || **u == l.to).cloned()
            }),
        }
    }

    /// The hops of `names` (links and splits) from the flow's `from` to its `to`, and the
    /// reverse route: the same links in the opposite direction, a split's uplink leg where the
    /// route crosses a split. `path` is the index in `paths` (errors name `paths`), or `None`
    /// for `route`.
    fn resolve(&self, names: &[String], path: Option<usize>) -> Result<(Vec<Hop>, Vec<Hop>), FieldError> {
        let f = self.flow;
        let links = self.links;
        let field: Vec<&str> = vec!["flow", f.name.as_str(), if path.is_some() { "paths" } else { "route" }];
        // "the route" or "paths[1]" in messages.
        let what = path.map_or_else(|| "the route".to_string(), |i| format!("paths[{i}]"));
        let prefix = path.map_or_else(String::new, |i| format!("paths[{i}]: "));
        // The direction index of link `li` leaving node `at`, and the node it reaches.
        let step = |li: usize, at: &str, hop: &str| -> Result<(usize, String), FieldError> {
            let forward = &links[2 * li];
            if forward.from == at {
                Ok((2 * li, forward.to.clone()))
            } else if forward.to == at {
                Ok((2 * li + 1, forward.from.clone()))
            } else {
                Err(err(&field, format!("\"{hop}\" joins \"{}\" and \"{}\", but {what} is at \"{at}\" there", forward.from, forward.to)))
            }
        };
        let mut at = f.from.clone();
        let mut route = Vec::new();
        let mut reverse_route = Vec::new();
        for (h, hop) in names.iter().enumerate() {
            if let Some(&ci) = self.cell_index.get(hop.as_str()) {
                let cell = &self.cells[ci];
                let (ue, up, next) = if at == cell.enb {
                    match self.next_ue(names, h, &cell.ues).and_then(|t| cell.ues.iter().position(|u| *u == t)) {
                        Some(k) => (k, false, cell.ues[k].clone()),
                        None => {
                            return Err(err(&field, format!("{prefix}from \"{}\" the route crosses cell \"{hop}\" to one of its UEs ({}): end the route there or continue with a link from that UE", cell.enb, cell.ues.join(", "))));
                        }
                    }
                } else if let Some(k) = cell.ues.iter().position(|u| *u == at) {
                    (k, true, cell.enb.clone())
                } else {
                    return Err(err(&field, format!("cell \"{hop}\" joins its eNB \"{}\" and its UEs ({}), but {what} is at \"{at}\" there", cell.enb, cell.ues.join(", "))));
                };
                // The scenario's cells are the network's multi-port elements, in file order.
                route.push(Hop::Port { element: ci, port: cell_port(ue as u16, up) });
                reverse_route.push(Hop::Port { element: ci, port: cell_port(ue as u16, !up) });
                at = next;
                continue;
            }
            if let Some(&SplitIndex { forward: si, reverse }) = self.split_index.get(hop.as_str()) {
                let sp = &self.file.split[si];
                // Where the split leads from `at`: a link leg's other end, or, over cells only,
                // the UE the route goes on from (or the eNB, coming up from a UE).
                let link_end = sp.legs.iter().find_map(|l| self.link_index.get(l.as_str())).map(|&li| step(li, &at, hop)).transpose()?.map(|(_, n)| n);
                let next = match link_end {
                    Some(n) => n,
                    None => {
                        let cells: Vec<&super::cells::Cell> = sp.legs.iter().map(|l| &self.cells[self.cell_index[l.as_str()]]).collect();
                        if at == cells[0].enb {
                            match self.next_ue(names, h, &cells[0].ues).filter(|t| cells.iter().all(|c| c.ues.contains(t))) {
                                Some(t) => t,
                                None => return Err(err(&field, format!("{prefix}from \"{at}\" split \"{hop}\" leads to a UE of both its cells ({}): end the route there or continue with a link from that UE", cells[0].ues.iter().filter(|u| cells[1].ues.contains(u)).cloned().collect::<Vec<_>>().join(", ")))),
                            }
                        } else {
                            cells[0].enb.clone()
                        }
                    }
                };
                // Each leg from `at` to `next`, and back.
                let leg = |name: &str| -> Result<(Leg, Leg), FieldError> {
                    if let Some(&li) = self.link_index.get(name) {
                        let (d, _) = step(li, &at, hop)?;
                        return Ok((Leg::Link(d), Leg::Link(d ^ 1)));
                    }
                    let ci = self.cell_index[name];
                    let cell = &self.cells[ci];
                    let (ue, up) = if at == cell.enb { (&next, false) } else { (&at, true) };
                    let Some(k) = cell.ues.iter().position(|u| u == ue) else {
                        return Err(err(&field, format!("{prefix}split \"{hop}\": cell \"{name}\" joins its eNB \"{}\" and its UEs ({}), but {what} crosses it between \"{at}\" and \"{next}\"", cell.enb, cell.ues.join(", "))));
                    };
                    if at != cell.enb && next != cell.enb {
                        return Err(err(&field, format!("{prefix}split \"{hop}\": cell \"{name}\" joins its eNB \"{}\" and its UEs, but {what} crosses it between \"{at}\" and \"{next}\"", cell.enb)));
                    }
                    Ok((Leg::Port { element: ci, port: cell_port(k as u16, up) }, Leg::Port { element: ci, port: cell_port(k as u16, !up) }))
                };
                let (a, a_back) = leg(&sp.legs[0])?;
                let (b, b_back) = leg(&sp.legs[1])?;
                // The X2-U delay sits between the master node and the secondary cell: it is
                // modelled on the downlink entity and a reverse split's uplink one.
                if sp.x2u_delay.is_some_and(|d| d > Dur::ZERO) {
                    // (The resolved split's second leg is a cell when it has an x2u_delay.)
                    if self.cell_index.get(sp.legs[1].as_str()).is_some_and(|&ci| self.cells[ci].enb != at) {
                        return Err(err(&field, format!("{prefix}split \"{hop}\" has an x2u_delay, which models the master–secondary transport of a downlink split: cross it from the eNB side (from \"{next}\" to \"{at}\" is the uplink)")));
                    }
                    if reverse.is_none() && sp.uplink.as_deref() == Some(sp.legs[1].as_str()) {
                        return Err(err(&field, format!("{prefix}split \"{hop}\" has an x2u_delay and its uplink on the secondary leg \"{}\" as a plain hop, which would skip the X2-U: give it a reverse_policy, or its uplink on \"{}\"", sp.legs[1], sp.legs[0])));
                    }
                }
                let up_back = match sp.uplink.as_deref() {
                    Some(u) if u == sp.legs[1] => b_back,
                    _ => a_back,
                };
                route.push(Hop::Split { split: si, legs: [a, b] });
                reverse_route.push(match reverse {
                    // The opposite direction through PDCP entities of its own.
                    Some(ri) => Hop::Split { split: ri, legs: [a_back, b_back] },
                    None => match up_back {
                        Leg::Link(d) => Hop::Link(d),
                        Leg::Port { element, port } => Hop::Port { element, port },
                    },
                });
                at = next;
                continue;
            }
            let &li = self.link_index.get(hop.as_str()).ok_or_else(|| {
                let mut known: Vec<&str> = links.iter().step_by(2).map(|l| l.name.as_str()).collect();
                known.extend(self.file.split.iter().map(|s| s.name.as_str()));
                known.extend(self.cells.iter().map(|c| c.name.as_str()));
                err(&field, format!("{prefix}there is no link, split or cell named \"{hop}\" (known: {})", known.join(", ")))
            })?;
            let (d, next) = step(li, &at, hop)?;
            route.push(Hop::Link(d));
            reverse_route.push(Hop::Link(d ^ 1));
            at = next;
        }
        if at != f.to {
            let rule = if path.is_some() { ": each path must go from `from` to `to`" } else { "" };
            return Err(err(&field, format!("{what} ends at \"{at}\", not at \"{}\"{rule}", f.to)));
        }
        reverse_route.reverse();
        Ok((route, reverse_route))
    }
}
