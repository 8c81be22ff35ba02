//! The scenario's network driven by the wall clock: the emulator's [`Driver`] of
//! [`multiconn_net::Network`], the very object the simulator drives.
//!
//! Packets read from a TUN enter the network at the time they were read (nanoseconds of
//! `CLOCK_MONOTONIC` since the run began); the wake-ups the network asks for sit in a heap
//! and are handled at their due time — the model sees the due time even when the process
//! woke late, so its decisions (which packet is lost, when the next one leaves) are the
//! simulator's — and a packet that reaches the end of its route is written at once into the
//! TUN of the host it is for. How late that write was, against the time the model released
//! the packet, is measured for every packet: the run's timing report.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::os::fd::RawFd;


use multiconn_core::{Dur, Ecn, FlowId, Packet, Payload, Recorder, Time};
use multiconn_metrics::BinnedRecorder;
use multiconn_net::{Driver, ElementId, Loss, Network};

use crate::sys;
use crate::transfer::{ConnKey, FlowConnections};

/// Which end of a flow a TUN belongs to: the flow's `from` node (the data's sender) or its
/// `to` node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The `from` node: what it sends takes route 0.
    From,
    /// The `to` node: what it sends takes route 1.
    To,
}

impl End {
    /// The route a packet sent from this end takes.
    pub fn route(self) -> u16 {
        match self {
            End::From => 0,
            End::To => 1,
        }
    }
}

/// A TUN as the fabric sees it: whose packets it carries.
#[derive(Debug, Clone, Copy)]
pub struct Port {
    /// The flow's index.
    pub flow: usize,
    /// The path's index.
    pub path: u8,
    /// The end it sits at.
    pub end: End,
    /// Its descriptor.
    pub fd: RawFd,
}

/// The real bytes of a packet, carried through the models as its payload.
struct Bytes(Vec<u8>);

/// Per flow: what reached its `to` end (route 0) and when.
#[derive(Debug, Clone, Copy, Default)]
pub struct FlowArrivals {
    /// IP bytes that entered the network at the `from` end.
    pub ip_bytes_sent: u64,
    /// IP bytes written to the `to` end.
    pub ip_bytes_arrived: u64,
    /// The first and last such write.
    pub first: Option<Time>,
    /// See `first`.
    pub last: Option<Time>,
}

/// The network's driver on the wall clock.
pub struct Fabric {
    t0_ns: u64,
    timers: BinaryHeap<Reverse<(Time, u64, ElementId)>>,
    timer_seq: u64,
    ports: Vec<Port>,
    /// Per flow, per path: the ports of its two ends (`From`, `To`).
    port_of: Vec<Vec<[usize; 2]>>,
    /// Links, flows, split bearers: the simulator's recorder, fed the same callbacks.
    pub recorder: BinnedRecorder,
    /// Per flow: IP bytes in and out.
    pub arrivals: Vec<FlowArrivals>,
    /// Per flow: its transport connections' first packets and deliveries (its transfer time).
    pub connections: Vec<FlowConnections>,
    /// Per packet written: how late the write was after its model release time, ns.
    pub lateness_ns: Vec<u64>,
    /// Packets a TUN refused to take.
    pub write_failures: u64,
    /// Packets read that were not IPv4 (dropped before the models).
    pub unclassified: u64,
    next_id: u64,
}

impl Fabric {
    /// A fabric over `ports`, for `flows` flows of `paths[f]` paths, binning its series by
    /// `bin`; `t0_ns` is the run's start on `CLOCK_MONOTONIC`.
    pub fn new(ports: Vec<Port>, paths: &[usize], links: usize, bearers: usize, bin: Dur, t0_ns: u64) -> Fabric {
        let mut port_of: Vec<Vec<[usize; 2]>> = paths.iter().map(|&n| vec![[usize::MAX; 2]; n]).collect();
        for (i, p) in ports.iter().enumerate() {
            port_of[p.flow][p.path as usize][usize::from(p.end == End::To)] = i;
        }
        // Path series for the flows with more than one path, as the simulator keeps them.
        let path_series: Vec<usize> = paths.iter().map(|&n| if n > 1 { n } else { 0 }).collect();
        let recorder = BinnedRecorder::new(bin, paths.len(), links).with_paths(&path_series).with_bearers(bearers);
        Fabric {
            t0_ns,
            timers: BinaryHeap::new(),
            timer_seq: 0,
            ports,
            port_of,
            recorder,
            arrivals: vec![FlowArrivals::default(); paths.len()],
            connections: vec![FlowConnections::default(); paths.len()],
            lateness_ns: Vec::new(),
            write_failures: 0,
            unclassified: 0,
            next_id: 0,
        }
    }

    /// The run's time now.
    pub fn now(&self) -> Time {
        Time(sys::monotonic_ns().saturating_sub(self.t0_ns))
    }

    /// The run's start on `CLOCK_MONOTONIC`.
    pub fn t0_ns(&self) -> u64 {
        self.t0_ns
    }

    /// The ports, in the order their tokens were given.
    pub fn ports(&self) -> &[Port] {
        &self.ports
    }

    /// The earliest pending wake-up.
    pub fn next_wake(&self) -> Option<Time> {
        self.timers.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Handles, in time order, every wake-up due at or before `now`.
    pub fn run_due(&mut self, net: &mut Network, now: Time) {
        while let Some(&Reverse((at, _, element))) = self.timers.peek() {
            if at > now {
                break;
            }
            self.timers.pop();
            net.handle_wake(at, element, self);
        }
    }

    /// A packet of `bytes` read at `at` from port `port` enters the network (after every
    /// wake-up due before it).
    pub fn inject(&mut self, net: &mut Network, port: usize, bytes: &[u8], at: Time) {
        self.run_due(net, at);
        if bytes.first().map(|b| b >> 4) != Some(4) {
            self.unclassified += 1;
            return;
        }
        let p = self.ports[port];
        let id = self.next_id;
        self.next_id += 1;
        let mut pkt = Packet::new(id, FlowId(p.flow as u32), bytes.len() as u32, id, at)
            .with_ecn(crate::ecn::ecn_of(bytes))
            .with_payload(Payload::new(Bytes(bytes.to_vec())));
        pkt.path = p.path;
        pkt.route = p.end.route();
        if let Some(key) = ConnKey::of(bytes, p.end == End::From) {
            self.connections[p.flow].sent(key, at);
        }
        if p.end == End::From {
            self.recorder.flow_sent(at, pkt.flow, pkt.size);
            self.arrivals[p.flow].ip_bytes_sent += u64::from(pkt.size);
        }
        net.send(at, pkt, self);
    }
}

impl Driver for Fabric {
    fn recorder(&mut self) -> Option<&mut dyn Recorder> {
        Some(&mut self.recorder)
    }

    fn wake_at(&mut self, at: Time, element: ElementId) {
        self.timer_seq += 1;
        self.timers.push(Reverse((at, self.timer_seq, element)));
    }

    fn arrived(&mut self, _net: &mut Network, now: Time, pkt: Packet) {
        let to = usize::from(pkt.route == 0);
        let port = self.port_of[pkt.flow.0 as usize][pkt.path as usize][to];
        let Some(bytes) = pkt.payload.as_ref().and_then(|p| p.get::<Bytes>()) else { return };
        // A queue discipline marked it: the real header says so too.
        let marked = (pkt.ecn == Ecn::Ce && crate::ecn::ecn_of(&bytes.0) != Ecn::Ce).then(|| {
            let mut copy = bytes.0.clone();
            crate::ecn::mark_ce(&mut copy);
            copy
        });
        if sys::write_packet(self.ports[port].fd, marked.as_deref().unwrap_or(&bytes.0)) {
            let late = self.now().0.saturating_sub(now.0);
            self.lateness_ns.push(late);
            if pkt.route == 0 {
                let a = &mut self.arrivals[pkt.flow.0 as usize];
                a.ip_bytes_arrived += u64::from(pkt.size);
                a.first.get_or_insert(now);
                a.last = Some(now);
                if let Some(key) = ConnKey::of(&bytes.0, true) {
                    self.connections[pkt.flow.0 as usize].delivered(key, now, pkt.size);
                }
                self.recorder.flow_delivered(now, pkt.flow, u64::from(pkt.size));
                self.recorder.path_delivered(now, pkt.flow, pkt.path, pkt.size);
            }
        } else {
            self.write_failures += 1;
        }
    }

    fn lost(&mut self, _net: &Network, now: Time, loss: Loss) {
        self.recorder.flow_dropped(now, loss.flow, loss.cause, loss.size, loss.route != 0);
        if loss.route == 0 {
            self.recorder.path_dropped(now, loss.flow, loss.path, loss.cause, loss.size);
        }
    }
}
