//! Test harness: a client and a server joined by two one-way pipes with a fixed delay, an
//! optional serialization rate and scripted drops. Every datagram put on a pipe is logged.

use std::collections::VecDeque;

use multiconn_cc::CcKind;
use multiconn_core::{Dur, FlowId, Packet, Rate, Time};
use multiconn_quic::frame::Frame;
use multiconn_quic::packet::{Datagram, PacketType};
use multiconn_quic::{Connection, QuicFactory};
use multiconn_transport::profile::TransportKind;
use multiconn_transport::{AppEvent, ConnectionParams, Endpoint, Profile, Role, Workload};

pub fn ms(v: u64) -> Dur {
    Dur::from_millis(v)
}

pub fn rfc9002() -> Profile {
    Profile::default_for(TransportKind::Quic)
}

pub fn params(workload: Workload, start: Time) -> ConnectionParams {
    ConnectionParams { flow: FlowId(0), start, workload, profile: rfc9002(), cc: CcKind::NewReno, max_packet_size: 1500, resume: false, address_token: false, qlog: false, multipath: None, external_cc: None }
}

pub fn download(size: u64) -> Workload {
    Workload::Download { size: Some(size), request_size: 100 }
}

/// Decides whether the `index`-th datagram put on a pipe is dropped.
pub type DropFn = Box<dyn FnMut(u64, &Packet) -> bool>;

pub struct Pipe {
    pub delay: Dur,
    pub rate: Option<Rate>,
    busy_until: Time,
    queue: VecDeque<(Time, Packet)>,
    pub count: u64,
    pub drop: DropFn,
    /// Drop-tail: a datagram is dropped when the backlog waiting for serialization exceeds this.
    pub max_backlog: Option<Dur>,
    pub tail_drops: u64,
}

impl Pipe {
    pub fn new(delay: Dur, rate: Option<Rate>) -> Pipe {
        Pipe { delay, rate, busy_until: Time::ZERO, queue: VecDeque::new(), count: 0, drop: Box::new(|_, _| false), max_backlog: None, tail_drops: 0 }
    }

    /// Returns (arrival time, dropped).
    fn send(&mut self, now: Time, pkt: Packet) -> (Time, bool) {
        let index = self.count;
        self.count += 1;
        if self.max_backlog.is_some_and(|b| self.busy_until.since(now) > b) {
            self.tail_drops += 1;
            return (self.busy_until + self.delay, true);
        }
        let begin = now.max(self.busy_until);
        let done = begin + self.rate.map_or(Dur::ZERO, |r| r.tx_time(pkt.size as u64));
        self.busy_until = done;
        let arrival = done + self.delay;
        if (self.drop)(index, &pkt) {
            return (arrival, true);
        }
        self.queue.push_back((arrival, pkt));
        (arrival, false)
    }
}

/// One datagram put on a pipe.
#[derive(Clone, Debug)]
pub struct Wire {
    pub sent: Time,
    pub arrival: Time,
    pub from: Role,
    pub dropped: bool,
    pub pkt: Packet,
}

impl Wire {
    pub fn datagram(&self) -> &Datagram {
        datagram(&self.pkt)
    }
    pub fn udp_size(&self) -> u64 {
        (self.pkt.size - multiconn_core::IP_UDP_OVERHEAD) as u64
    }
}

pub fn datagram(p: &Packet) -> &Datagram {
    p.payload.as_ref().and_then(|p| p.get::<Datagram>()).expect("a QUIC datagram")
}

/// (stream id, offset, len, fin) of every STREAM frame in a datagram.
pub fn stream_frames(p: &Packet) -> Vec<(u64, u64, u64, bool)> {
    datagram(p)
        .packets()
        .flat_map(|q| q.frames.iter())
        .filter_map(|f| match f {
            Frame::Stream { id, offset, len, fin } => Some((*id, *offset, *len as u64, *fin)),
            _ => None,
        })
        .collect()
}

pub fn has_packet_type(p: &Packet, t: PacketType) -> bool {
    datagram(p).packets().any(|q| q.ptype == t)
}

pub struct Harness {
    pub now: Time,
    pub client: Connection,
    pub server: Connection,
    pub c2s: Pipe,
    pub s2c: Pipe,
    /// Pipes of paths 1, 2, ... (client to server, server to client).
    pub paths: Vec<(Pipe, Pipe)>,
    pub next_id: u64,
    pub client_events: Vec<(Time, AppEvent)>,
    pub server_events: Vec<(Time, AppEvent)>,
    pub log: Vec<Wire>,
    /// Keep `log` (off for long runs).
    pub record: bool,
    pub datagrams: u64,
    pub steps: u64,
}

impl Harness {
    pub fn new(params: &ConnectionParams, delay: Dur, rate: Option<Rate>) -> Harness {
        Harness::with_factory(&QuicFactory::default(), params, delay, rate)
    }

    pub fn with_factory(f: &QuicFactory, params: &ConnectionParams, delay: Dur, rate: Option<Rate>) -> Harness {
        let (client, server) = f.connect_pair(params).expect("the profile offers the controller");
        Harness {
            now: Time::ZERO,
            client,
            server,
            c2s: Pipe::new(delay, rate),
            s2c: Pipe::new(delay, rate),
            paths: Vec::new(),
            next_id: 0,
            client_events: Vec::new(),
            server_events: Vec::new(),
            log: Vec::new(),
            record: true,
            datagrams: 0,
            steps: 0,
        }
    }

    /// Adds the pipes of the next path (1, 2, ...).
    pub fn add_path(&mut self, delay: Dur, rate: Option<Rate>) {
        self.paths.push((Pipe::new(delay, rate), Pipe::new(delay, rate)));
    }

    fn flush(&mut self) {
        let now = self.now;
        for role in [Role::Client, Role::Server] {
            loop {
                let ep = match role {
                    Role::Client => &mut self.client,
                    Role::Server => &mut self.server,
                };
                let Some(pkt) = ep.poll_transmit(now, &mut self.next_id) else { break };
                let path = pkt.path as usize;
                let pipe = match (role, path) {
                    (Role::Client, 0) => &mut self.c2s,
                    (Role::Server, 0) => &mut self.s2c,
                    (Role::Client, p) => &mut self.paths[p - 1].0,
                    (Role::Server, p) => &mut self.paths[p - 1].1,
                };
                self.datagrams += 1;
                if self.record {
                    let (arrival, dropped) = pipe.send(now, pkt.clone());
                    self.log.push(Wire { sent: now, arrival, from: role, dropped, pkt });
                } else {
                    pipe.send(now, pkt);
                }
            }
        }
        while let Some(e) = self.client.poll_event() {
            if self.record || !matches!(e, AppEvent::Delivered { .. }) {
                self.client_events.push((now, e));
            }
        }
        while let Some(e) = self.server.poll_event() {
            self.server_events.push((now, e));
        }
    }

    /// Runs until nothing is left to do or `limit`.
    pub fn run_until(&mut self, limit: Time) {
        self.run_while(limit, |_| true);
    }

    /// Runs until the client reports Finished (returns its time) or `limit`.
    pub fn run_until_finished(&mut self, limit: Time) -> Option<Time> {
        self.run_while(limit, |h| !h.client_events.iter().any(|(_, e)| *e == AppEvent::Finished));
        self.client_events.iter().find(|(_, e)| *e == AppEvent::Finished).map(|(t, _)| *t)
    }

    pub fn run_while(&mut self, limit: Time, mut go_on: impl FnMut(&Harness) -> bool) {
        let mut same_time = 0u64;
        loop {
            self.flush();
            if !go_on(self) {
                return;
            }
            let candidates = [
                self.c2s.queue.front().map(|(t, _)| *t),
                self.s2c.queue.front().map(|(t, _)| *t),
                self.client.poll_timeout(),
                self.server.poll_timeout(),
            ];
            let on_paths = self.paths.iter().flat_map(|(a, b)| [a.queue.front().map(|(t, _)| *t), b.queue.front().map(|(t, _)| *t)]);
            let Some(next) = candidates.into_iter().chain(on_paths).flatten().min() else { return };
            if next > limit {
                return;
            }
            let next = next.max(self.now);
            if next == self.now {
                same_time += 1;
                assert!(same_time < 100_000, "no progress at {:?}", self.now);
            } else {
                same_time = 0;
            }
            self.now = next;
            self.steps += 1;
            while self.c2s.queue.front().is_some_and(|(t, _)| *t <= self.now) {
                let (_, p) = self.c2s.queue.pop_front().expect("front");
                self.server.handle_packet(self.now, p);
                self.flush();
            }
            while self.s2c.queue.front().is_some_and(|(t, _)| *t <= self.now) {
                let (_, p) = self.s2c.queue.pop_front().expect("front");
                self.client.handle_packet(self.now, p);
                self.flush();
            }
            for i in 0..self.paths.len() {
                while self.paths[i].0.queue.front().is_some_and(|(t, _)| *t <= self.now) {
                    let (_, p) = self.paths[i].0.queue.pop_front().expect("front");
                    self.server.handle_packet(self.now, p);
                    self.flush();
                }
                while self.paths[i].1.queue.front().is_some_and(|(t, _)| *t <= self.now) {
                    let (_, p) = self.paths[i].1.queue.pop_front().expect("front");
                    self.client.handle_packet(self.now, p);
                    self.flush();
                }
            }
            if self.client.poll_timeout().is_some_and(|t| t <= self.now) {
                self.client.handle_timeout(self.now);
            }
            if self.server.poll_timeout().is_some_and(|t| t <= self.now) {
                self.server.handle_timeout(self.now);
            }
        }
    }

    pub fn delivered(events: &[(Time, AppEvent)]) -> u64 {
        events.iter().map(|(_, e)| if let AppEvent::Delivered { bytes } = e { *bytes } else { 0 }).sum()
    }

    pub fn first(events: &[(Time, AppEvent)], pred: impl Fn(&AppEvent) -> bool) -> Option<Time> {
        events.iter().find(|(_, e)| pred(e)).map(|(t, _)| *t)
    }
}
