//! The scenario's paths as noq's path IDs (draft-ietf-quic-multipath-21 §3): scenario path
//! `p` is the client's address 198.18.`p`.1 (port 40000) towards the server's one address, so
//! a datagram's path is its source address at the client and its destination at the server,
//! and a path ID's scenario path is its 4-tuple's client address
//! (`Connection::network_path`).
//!
//! * **Opening.** The client's path manager asks for a path ([`Paths::want`]); the client opens
//!   it with `Connection::open_path` as soon as noq can (multipath negotiated, a connection ID
//!   of the peer's for the new path ID, a path ID below the peer's MAX_PATH_ID), retrying after
//!   every input until then. Path IDs are noq's own (the next unused one), never reused.
//! * **Abandoning.** `Connection::close_path` (PATH_ABANDON); noq refuses to abandon the last
//!   open path, which then stays open. A path noq abandons itself (the peer's PATH_ABANDON, a
//!   failed validation) stays closed until the path manager opens it again.
//! * **Status.** `Connection::set_path_status`: noq's scheduler sends data on a backup path
//!   only while no available path is validated. noq schedules by the sending end's own status
//!   and only reports the peer's (`PathEvent::RemoteStatus`), so the server's application
//!   follows the client's announcements: it sets its own status to the one the client
//!   announced (draft-ietf-quic-multipath-21 §3.3: a peer should not send on a path the other
//!   end marked backup while an available one works).
//! * **Counters.** Per scenario path, over every path ID opened on it: noq's `PathStats` of the
//!   live IDs (read after every input: `Connection::path_stats` takes `&mut self`) plus those
//!   of the IDs noq has discarded (`PathEvent::Discarded`).

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::Instant;

use multiconn_core::{Dur, TransportSample};
use multiconn_transport::{Observation, Observations, PathStats, Role};
use noq_proto::{Connection, FourTuple, PathEvent, PathId, PathStatus, VarInt};

use crate::common::{client_address, SERVER};

/// The scenario path of a client address ([`client_address`]), if it is one.
pub(super) fn client_path(ip: IpAddr) -> Option<u8> {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, path, d] = v4.octets();
            ((a, b, d) == (198, 18, 1)).then_some(path)
        }
        IpAddr::V6(_) => None,
    }
}

/// A path ID's number (noq shows it only through `Display`).
fn number(id: PathId) -> u32 {
    id.to_string().parse().expect("a path ID displays as its number")
}

/// What noq counts of one path ID.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Counters {
    packets_sent: u64,
    bytes_sent: u64,
    packets_received: u64,
    bytes_received: u64,
    lost: u64,
}

impl Counters {
    fn of(s: &noq_proto::PathStats) -> Counters {
        Counters {
            packets_sent: s.udp_tx.datagrams,
            bytes_sent: s.udp_tx.bytes,
            packets_received: s.udp_rx.datagrams,
            bytes_received: s.udp_rx.bytes,
            lost: s.lost_packets,
        }
    }

    fn add(&mut self, o: Counters) {
        self.packets_sent += o.packets_sent;
        self.bytes_sent += o.bytes_sent;
        self.packets_received += o.packets_received;
        self.bytes_received += o.bytes_received;
        self.lost += o.lost;
    }
}

/// A live path ID as last read.
#[derive(Clone, Copy, Debug)]
struct Live {
    path: u8,
    counters: Counters,
    srtt: Dur,
    cwnd: u64,
    backup: bool,
    abandoned: bool,
}

/// One scenario path.
#[derive(Clone, Debug, Default)]
struct Slot {
    /// Client: what the path manager asks, open (with this status) or closed.
    wanted: Option<PathStatus>,
    /// The path ID open on it, if any.
    open: Option<PathId>,
    /// Path IDs opened on it so far.
    opened: u32,
    /// The counters of the path IDs noq has discarded.
    retired: Counters,
}

/// The paths of one end of a connection.
#[derive(Debug)]
pub(super) struct Paths {
    role: Role,
    /// A multipath flow (else one path, and no per-path reports).
    multipath: bool,
    slots: Vec<Slot>,
    /// Every live path ID (not yet discarded), in ID order.
    live: BTreeMap<PathId, Live>,
}

impl Paths {
    /// `count` scenario paths (1 for a single-path flow); the client wants those open from the
    /// start that the path manager does not open later.
    pub(super) fn new(role: Role, count: u8, multipath: bool, opened_later: &[u8]) -> Paths {
        let mut slots = vec![Slot::default(); usize::from(count)];
        if role == Role::Client {
            for (p, slot) in slots.iter_mut().enumerate() {
                if !opened_later.contains(&(p as u8)) {
                    slot.wanted = Some(PathStatus::Available);
                }
            }
        }
        Paths { role, multipath, slots, live: BTreeMap::new() }
    }

    /// The 4-tuple of scenario path `path` as this end sees it.
    pub(super) fn network_path(&self, path: u8) -> FourTuple {
        match self.role {
            Role::Client => FourTuple::new(SERVER, Some(client_address(path).ip())),
            Role::Server => FourTuple::new(client_address(path), Some(SERVER.ip())),
        }
    }

    /// The scenario path a datagram to `destination` from `source` takes.
    pub(super) fn of_datagram(&self, destination: IpAddr, source: Option<IpAddr>) -> u8 {
        let ip = match self.role {
            Role::Client => source,
            Role::Server => Some(destination),
        };
        // The client's first path has no source address until noq learns it from a reply.
        ip.and_then(client_path).filter(|&p| usize::from(p) < self.slots.len()).unwrap_or(0)
    }

    /// The path manager asks for `path` open with `status` (`None`: abandoned).
    pub(super) fn want(&mut self, conn: &mut Connection, now: Instant, path: u8, status: Option<PathStatus>, seen: &mut Observations) {
        let Some(slot) = self.slots.get_mut(usize::from(path)) else { return };
        slot.wanted = status;
        match (status, slot.open) {
            (None, Some(id)) => {
                if conn.close_path(now, id, VarInt::from_u32(0)).is_ok() {
                    slot.open = None;
                }
            }
            (Some(status), Some(id)) => {
                let _ = conn.set_path_status(id, status);
            }
            (Some(_), None) => self.reconcile(conn, now, seen),
            (None, None) => {}
        }
    }

    /// Client: opens the paths the path manager wants open that have no path ID, as far as
    /// noq can now.
    pub(super) fn reconcile(&mut self, conn: &mut Connection, now: Instant, seen: &mut Observations) {
        if self.role != Role::Client || !self.multipath || !conn.is_multipath_negotiated() {
            return;
        }
        for p in 0..self.slots.len() {
            let Some(status) = self.slots[p].wanted else { continue };
            if self.slots[p].open.is_some() {
                continue;
            }
            // Not yet possible (no connection ID of the peer's for the next path ID, the
            // peer's MAX_PATH_ID): again after the next input.
            if let Ok(id) = conn.open_path(self.network_path(p as u8), status, now) {
                self.track(id, p as u8, seen);
            }
        }
    }

    /// A path ID first seen on scenario path `path`.
    fn track(&mut self, id: PathId, path: u8, seen: &mut Observations) {
        let slot = &mut self.slots[usize::from(path)];
        slot.open = Some(id);
        slot.opened += 1;
        self.live.insert(id, Live { path, counters: Counters::default(), srtt: Dur::ZERO, cwnd: 0, backup: false, abandoned: false });
        if self.multipath {
            seen.note(Observation::PathIdOpened { path, path_id: number(id) });
        }
    }

    /// The connection exists (the client connected or the server accepted): path ID 0 is the
    /// handshake's, on scenario path 0.
    pub(super) fn connected(&mut self, seen: &mut Observations) {
        self.track(PathId::ZERO, 0, seen);
    }

    /// A path event of noq's.
    pub(super) fn on_event(&mut self, conn: &mut Connection, event: PathEvent) {
        match event {
            PathEvent::Abandoned { id, .. } => {
                if let Some(live) = self.live.get_mut(&id) {
                    live.abandoned = true;
                    let slot = &mut self.slots[usize::from(live.path)];
                    if slot.open == Some(id) {
                        slot.open = None;
                        slot.wanted = None;
                    }
                }
            }
            PathEvent::Discarded { id, path_stats, .. } => {
                if let Some(live) = self.live.remove(&id) {
                    let slot = &mut self.slots[usize::from(live.path)];
                    slot.retired.add(Counters::of(&path_stats));
                    if slot.open == Some(id) {
                        slot.open = None;
                    }
                }
            }
            PathEvent::RemoteStatus { id, status, .. } if self.role == Role::Server => {
                let _ = conn.set_path_status(id, status);
            }
            _ => {}
        }
    }

    /// Reads noq's counters of every live path ID, and takes in the path IDs the peer opened
    /// (server).
    pub(super) fn refresh(&mut self, conn: &mut Connection, seen: &mut Observations) {
        for id in conn.paths() {
            if !self.live.contains_key(&id) {
                let Ok(tuple) = conn.network_path(id) else { continue };
                let ip = match self.role {
                    Role::Client => tuple.local_ip().unwrap_or(client_address(0).ip()),
                    Role::Server => tuple.remote().ip(),
                };
                let Some(path) = client_path(ip).filter(|&p| usize::from(p) < self.slots.len()) else { continue };
                if let Some(old) = self.slots[usize::from(path)].open {
                    // A new path ID on a path whose old one noq has not reported abandoned.
                    if let Some(l) = self.live.get_mut(&old) {
                        l.abandoned = true;
                    }
                }
                self.track(id, path, seen);
            }
            let Some(stats) = conn.path_stats(id) else { continue };
            let backup = conn.path_status(id).is_ok_and(|s| s == PathStatus::Backup);
            let live = self.live.get_mut(&id).expect("tracked above");
            live.counters = Counters::of(&stats);
            live.srtt = Dur(stats.rtt.as_nanos() as u64);
            live.cwnd = stats.cwnd;
            live.backup = backup;
        }
    }

    /// The connection's sending state: every open path's window, the first open path's RTT,
    /// the losses on every path ID so far.
    pub(super) fn sample(&self) -> TransportSample {
        let mut s = TransportSample::default();
        let mut srtt = None;
        for l in self.live.values().filter(|l| !l.abandoned) {
            s.cwnd += l.cwnd;
            srtt.get_or_insert(l.srtt);
        }
        let lost: u64 = self.slots.iter().map(|slot| slot.retired.lost).sum::<u64>() + self.live.values().map(|l| l.counters.lost).sum::<u64>();
        s.srtt = srtt.unwrap_or(Dur::ZERO);
        s.lost = lost;
        s.retransmissions = lost;
        s
    }

    /// Scenario path `p`'s counters over every path ID opened on it, and the open one's state.
    fn report(&self, p: usize) -> (Counters, Option<&Live>) {
        let slot = &self.slots[p];
        let mut c = slot.retired;
        for l in self.live.values().filter(|l| usize::from(l.path) == p) {
            c.add(l.counters);
        }
        (c, slot.open.and_then(|id| self.live.get(&id)))
    }

    /// Multipath: each path a path ID was opened on, as (path, sample).
    pub(super) fn samples(&self, out: &mut Vec<(u8, TransportSample)>) {
        if !self.multipath {
            return;
        }
        for p in (0..self.slots.len()).filter(|&p| self.slots[p].opened > 0) {
            let (c, open) = self.report(p);
            out.push((p as u8, TransportSample {
                cwnd: open.map_or(0, |l| l.cwnd),
                bytes_in_flight: 0,
                srtt: open.map_or(Dur::ZERO, |l| l.srtt),
                retransmissions: c.lost,
                spurious_retransmissions: 0,
                lost: c.lost,
            }));
        }
    }

    /// Multipath: one entry per scenario path.
    pub(super) fn stats(&self, out: &mut Vec<PathStats>) {
        if !self.multipath {
            return;
        }
        for p in 0..self.slots.len() {
            let (c, open) = self.report(p);
            let draining = self.live.values().any(|l| usize::from(l.path) == p && l.abandoned);
            out.push(PathStats {
                path: p as u8,
                path_id: self.slots[p].open.map(number),
                path_ids_opened: self.slots[p].opened,
                packets_sent: c.packets_sent,
                bytes_sent: c.bytes_sent,
                packets_received: c.packets_received,
                bytes_received: c.bytes_received,
                lost: c.lost,
                srtt: open.map_or(Dur::ZERO, |l| l.srtt),
                cwnd: open.map_or(0, |l| l.cwnd),
                status: match open {
                    Some(l) if l.backup => "backup",
                    Some(_) => "active",
                    None if draining => "abandoned",
                    None => "closed",
                },
            });
        }
    }

    /// The path IDs open now, for an invariant checker that starts watching.
    pub(super) fn note_open(&self, seen: &mut Observations) {
        if !self.multipath {
            return;
        }
        for (id, l) in self.live.iter().filter(|(_, l)| !l.abandoned) {
            seen.note(Observation::PathIdOpened { path: l.path, path_id: number(*id) });
        }
    }
}
