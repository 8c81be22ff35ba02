//! Test harness: a client and a server joined by two one-way pipes with a fixed delay, an
//! optional rate (FIFO serialization), an optional queue limit and scripted drops.

use std::collections::{HashMap, VecDeque};

use multiconn_cc::CcKind;
use multiconn_core::{Dur, FlowId, Packet, Rate, Time};
use multiconn_tcp::{Segment, TcpEndpoint};
use multiconn_transport::profile::TransportKind;
use multiconn_transport::{AppEvent, ConnectionParams, Endpoint, Profile, Role, Workload};

pub fn ms(v: u64) -> Dur {
    Dur::from_millis(v)
}

pub fn params(workload: Workload) -> ConnectionParams {
    ConnectionParams {
        flow: FlowId(0),
        start: Time::ZERO,
        workload,
        profile: Profile::default_for(TransportKind::Tcp),
        cc: CcKind::NewReno,
        max_packet_size: 1500,
        resume: false, address_token: false,
        qlog: false,
        multipath: None,
    }
}

pub fn download(size: u64) -> Workload {
    Workload::Download {
        size: Some(size),
        request_size: 200,
    }
}

/// Decides whether a packet is dropped: (segment, how many times this sequence number was
/// sent with data before, including this one).
pub type DropRule = Box<dyn FnMut(&Segment, u32) -> bool>;

/// Extra delay for a packet (reordering), same arguments as [`DropRule`].
pub type DelayRule = Box<dyn FnMut(&Segment, u32) -> Option<Dur>>;

pub struct Pipe {
    pub delay: Dur,
    pub rate: Option<Rate>,
    pub queue_limit: Option<usize>,
    busy_until: Time,
    queue: VecDeque<(Time, Packet)>,
    tx_count: HashMap<u64, u32>,
    pub drop: Option<DropRule>,
    /// Extra delay for some packets (reordering): (segment, transmission count).
    pub extra_delay: Option<DelayRule>,
    /// (send time, segment) of everything offered to the pipe, dropped or not.
    pub log: Vec<(Time, Segment, bool)>,
    pub keep_log: bool,
    pub dropped: u64,
}

impl Pipe {
    pub fn new(delay: Dur) -> Pipe {
        Pipe {
            delay,
            rate: None,
            queue_limit: None,
            busy_until: Time::ZERO,
            queue: VecDeque::new(),
            tx_count: HashMap::new(),
            drop: None,
            extra_delay: None,
            log: Vec::new(),
            keep_log: true,
            dropped: 0,
        }
    }

    fn push(&mut self, now: Time, p: Packet) {
        let seg = p
            .payload
            .as_ref()
            .and_then(|x| x.get::<Segment>())
            .cloned()
            .expect("segment payload");
        let n = if seg.len > 0 {
            let c = self.tx_count.entry(seg.seq).or_insert(0);
            *c += 1;
            *c
        } else {
            0
        };
        let mut dropped = self.drop.as_mut().is_some_and(|d| d(&seg, n));
        if let Some(limit) = self.queue_limit {
            let waiting = self
                .queue
                .iter()
                .filter(|(t, _)| *t > now + self.delay)
                .count();
            if waiting >= limit {
                dropped = true;
            }
        }
        let extra = self
            .extra_delay
            .as_mut()
            .and_then(|f| f(&seg, n))
            .unwrap_or(Dur::ZERO);
        if self.keep_log {
            self.log.push((now, seg, dropped));
        }
        if dropped {
            self.dropped += 1;
            return;
        }
        let tx = self.rate.map_or(Dur::ZERO, |r| r.tx_time(p.size as u64));
        let start = if self.busy_until > now {
            self.busy_until
        } else {
            now
        };
        self.busy_until = start + tx;
        let arrival = self.busy_until + self.delay + extra;
        let at = self.queue.partition_point(|(t, _)| *t <= arrival);
        self.queue.insert(at, (arrival, p));
    }

    fn next_arrival(&self) -> Option<Time> {
        self.queue.front().map(|(t, _)| *t)
    }
}

pub struct Harness {
    pub now: Time,
    pub client: TcpEndpoint,
    pub server: TcpEndpoint,
    pub c2s: Pipe,
    pub s2c: Pipe,
    pub next_id: u64,
    pub client_events: Vec<(Time, AppEvent)>,
    pub server_events: Vec<(Time, AppEvent)>,
    pub steps: u64,
}

impl Harness {
    pub fn new(p: &ConnectionParams, one_way: Dur) -> Harness {
        Harness {
            now: p.start,
            client: TcpEndpoint::new(Role::Client, p).unwrap(),
            server: TcpEndpoint::new(Role::Server, p).unwrap(),
            c2s: Pipe::new(one_way),
            s2c: Pipe::new(one_way),
            next_id: 0,
            client_events: Vec::new(),
            server_events: Vec::new(),
            steps: 0,
        }
    }

    fn transmit(&mut self) {
        while let Some(p) = self.client.poll_transmit(self.now, &mut self.next_id) {
            self.c2s.push(self.now, p);
        }
        while let Some(p) = self.server.poll_transmit(self.now, &mut self.next_id) {
            self.s2c.push(self.now, p);
        }
        while let Some(e) = self.client.poll_event() {
            self.client_events.push((self.now, e));
        }
        while let Some(e) = self.server.poll_event() {
            self.server_events.push((self.now, e));
        }
    }

    /// Runs until `stop` holds (checked after every step) or `limit`; returns whether `stop` held.
    pub fn run_until(&mut self, limit: Time, mut stop: impl FnMut(&Harness) -> bool) -> bool {
        loop {
            self.transmit();
            if stop(self) {
                return true;
            }
            let next = [
                self.c2s.next_arrival(),
                self.s2c.next_arrival(),
                self.client.poll_timeout(),
                self.server.poll_timeout(),
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(next) = next else { return false };
            if next > limit {
                self.now = limit;
                return false;
            }
            self.now = self.now.max(next);
            self.steps += 1;
            while self.c2s.next_arrival().is_some_and(|t| t <= self.now) {
                let (_, p) = self.c2s.queue.pop_front().unwrap();
                self.server.handle_packet(self.now, p);
                self.transmit();
            }
            while self.s2c.next_arrival().is_some_and(|t| t <= self.now) {
                let (_, p) = self.s2c.queue.pop_front().unwrap();
                self.client.handle_packet(self.now, p);
                self.transmit();
            }
            if self.client.poll_timeout().is_some_and(|t| t <= self.now) {
                self.client.handle_timeout(self.now);
            }
            if self.server.poll_timeout().is_some_and(|t| t <= self.now) {
                self.server.handle_timeout(self.now);
            }
        }
    }

    pub fn client_finished(&self) -> bool {
        self.client_events
            .iter()
            .any(|(_, e)| *e == AppEvent::Finished)
    }

    pub fn run_to_finish(&mut self, limit: Time) -> Time {
        assert!(
            self.run_until(limit, |h| h.client_finished()),
            "not finished by {limit}; server {:?}",
            self.server
        );
        self.now
    }

    pub fn delivered(events: &[(Time, AppEvent)]) -> u64 {
        events
            .iter()
            .map(|(_, e)| {
                if let AppEvent::Delivered { bytes } = e {
                    *bytes
                } else {
                    0
                }
            })
            .sum()
    }

    pub fn event_time(events: &[(Time, AppEvent)], want: AppEvent) -> Option<Time> {
        events.iter().find(|(_, e)| *e == want).map(|(t, _)| *t)
    }
}

/// Drops the first transmission of data segments whose sequence number is in `seqs`.
pub fn drop_first(seqs: Vec<u64>) -> DropRule {
    Box::new(move |s: &Segment, n: u32| n == 1 && seqs.contains(&s.seq))
}

/// Drops the first `times` transmissions of the data segment at `seq`.
pub fn drop_times(seq: u64, times: u32) -> DropRule {
    Box::new(move |s: &Segment, n: u32| s.seq == seq && n >= 1 && n <= times)
}

/// Sequence number of the k-th full data segment of the server's response (k from 0).
pub fn response_seq(mss: u64, k: u64) -> u64 {
    1 + multiconn_tcp::app::SERVER_FLIGHT + k * mss
}
