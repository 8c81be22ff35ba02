//! [`Pair`]: a client and a server joined by paths of real link models, and the loop that
//! drives them.
//!
//! One [`Pair::step`] does, at the earliest wake-up `t` of anything in the pair:
//!
//! 1. the interface events scheduled for `t` or earlier ([`Pair::path_status_at`]), each told
//!    to the client and then the server;
//! 2. every link output due by `t`, link by link in path order and, on each path, the link
//!    toward the server before the one toward the client; a delivered packet goes to its
//!    endpoint's `handle_packet` at `t`;
//! 3. the client's timer, then the server's, if due by `t`.
//!
//! After every input the endpoints are polled, client first: the packets they send enter
//! the link of the path they name ([`multiconn_core::Packet::path`]) at once, so an
//! acknowledgement sent in answer to a delivery is queued before the next output is handled,
//! and their application events are logged with the time. The order is fixed, so the same
//! inputs give the same run.
//!
//! A step that does not advance time is legitimate (an endpoint may ask to be woken at the
//! instant it is already at), but a long run of them is a livelock: the pair fails with the
//! list of what keeps asking, instead of spinning.
//!
//! Neighbours: the endpoints through [`Endpoint`], the links through [`Link`] (wrapped in
//! [`Scripted`]); records go to [`crate::wire`].

use multiconn_core::{Packet, Time};
use multiconn_link::builder::LinkConfig;
use multiconn_link::scripted::{Scripted, Verdict};
use multiconn_link::{Link, LinkOutput};
use multiconn_transport::{AppEvent, ConnectionParams, Endpoint, TransportError, TransportFactory};

use crate::paths::PathConfig;
use crate::wire::{LinkCounters, Route, Wire, WireEvent};

/// A link direction as the pair holds it.
pub type BoxLink = Box<dyn Link + Send>;

/// Consecutive steps at one instant after which [`Pair::step`] declares a livelock.
pub const SAME_TIME_STEP_LIMIT: u64 = 10_000;

/// One path: its two link directions and their counters.
pub struct Path {
    /// Server to client (route 0).
    pub to_client: Scripted<BoxLink>,
    /// Client to server (route 1).
    pub to_server: Scripted<BoxLink>,
    counters: [LinkCounters; 2],
}

impl Path {
    /// Builds both directions from plain links, each wrapped in a script that passes
    /// everything.
    pub fn new(to_client: BoxLink, to_server: BoxLink) -> Path {
        Path {
            to_client: Scripted::passthrough(to_client),
            to_server: Scripted::passthrough(to_server),
            counters: [LinkCounters::default(); 2],
        }
    }

    /// The direction toward `route`'s end.
    pub fn link(&self, route: Route) -> &Scripted<BoxLink> {
        match route {
            Route::ToClient => &self.to_client,
            Route::ToServer => &self.to_server,
        }
    }

    /// The direction toward `route`'s end, to change its script.
    pub fn link_mut(&mut self, route: Route) -> &mut Scripted<BoxLink> {
        match route {
            Route::ToClient => &mut self.to_client,
            Route::ToServer => &mut self.to_server,
        }
    }

    /// The packet counts of the direction toward `route`'s end.
    pub fn counters(&self, route: Route) -> LinkCounters {
        self.counters[route.index() as usize]
    }
}

/// A client and a server joined by paths. `C` and `S` are the endpoint types: `dyn Endpoint`
/// (the default) for any transport behind the trait, or a concrete type when a test inspects
/// the endpoint's internals.
pub struct Pair<C: Endpoint + ?Sized = dyn Endpoint, S: Endpoint + ?Sized = dyn Endpoint> {
    /// The pair's clock: the time of the last step.
    pub now: Time,
    /// The client endpoint (it downloads: data flows toward it on route 0).
    pub client: Box<C>,
    /// The server endpoint.
    pub server: Box<S>,
    /// The paths, numbered as the endpoints' packets name them.
    pub paths: Vec<Path>,
    /// The run-wide packet id counter handed to the endpoints.
    pub next_id: u64,
    /// The wire log, oldest first; kept while [`record_wire`](Self::record_wire) is set.
    pub wire: Vec<Wire>,
    /// Whether to keep the wire log (the counters are kept regardless). On by default; long
    /// bulk runs may switch it off.
    pub record_wire: bool,
    /// The client's application events, with their times.
    pub client_events: Vec<(Time, AppEvent)>,
    /// The server's application events, with their times.
    pub server_events: Vec<(Time, AppEvent)>,
    /// Steps taken so far.
    pub steps: u64,
    /// Interface events still to come: (time, path, up), in the order scheduled.
    status: Vec<(Time, u8, bool)>,
    /// Consecutive steps that did not advance the clock.
    same_time_steps: u64,
}

impl Pair {
    /// Builds the connection with `factory` and joins its ends by paths built from
    /// `paths` (see [`Pair::from_configs`]).
    pub fn connect(
        factory: &dyn TransportFactory,
        params: &ConnectionParams,
        seed: u64,
        paths: &[PathConfig],
    ) -> Result<Pair, TransportError> {
        let (client, server) = factory.connect(params)?;
        Ok(Pair::from_configs(client, server, seed, paths))
    }
}

impl<C: Endpoint + ?Sized, S: Endpoint + ?Sized> Pair<C, S> {
    /// Joins `client` and `server` by the given paths; the pair's clock starts at zero.
    pub fn new(client: Box<C>, server: Box<S>, paths: Vec<Path>) -> Pair<C, S> {
        assert!(!paths.is_empty(), "a pair needs at least one path");
        assert!(paths.len() <= usize::from(u8::MAX) + 1, "paths are numbered by a u8");
        Pair {
            now: Time::ZERO,
            client,
            server,
            paths,
            next_id: 0,
            wire: Vec::new(),
            record_wire: true,
            client_events: Vec::new(),
            server_events: Vec::new(),
            steps: 0,
            status: Vec::new(),
            same_time_steps: 0,
        }
    }

    /// Joins `client` and `server` by links built with [`LinkConfig::build`]; the random
    /// streams of path `i` are labelled `pair/path{i}/to_client` and `pair/path{i}/to_server`.
    pub fn from_configs(client: Box<C>, server: Box<S>, seed: u64, paths: &[PathConfig]) -> Pair<C, S> {
        let built = paths
            .iter()
            .enumerate()
            .map(|(i, p)| Path::new(build(&p.to_client, seed, i, "to_client"), build(&p.to_server, seed, i, "to_server")))
            .collect();
        Pair::new(client, server, built)
    }

    /// The link of `path` toward `route`'s end.
    pub fn link(&self, path: u8, route: Route) -> &Scripted<BoxLink> {
        self.paths[usize::from(path)].link(route)
    }

    /// The link of `path` toward `route`'s end, to change its script.
    pub fn link_mut(&mut self, path: u8, route: Route) -> &mut Scripted<BoxLink> {
        self.paths[usize::from(path)].link_mut(route)
    }

    /// Sets the script of one link direction (see [`Scripted`]).
    pub fn script(&mut self, path: u8, route: Route, script: impl FnMut(u64, &Packet) -> Verdict + Send + 'static) {
        self.link_mut(path, route).set_script(script);
    }

    /// The packet counts of `path`'s link toward `route`'s end.
    pub fn counters(&self, path: u8, route: Route) -> LinkCounters {
        self.paths[usize::from(path)].counters(route)
    }

    /// Tells both ends at `at` that their interface for `path` went down or came back
    /// ([`Endpoint::on_path_status`]). What the links do meanwhile is their own schedule's
    /// business ([`LinkConfig::down`]).
    pub fn path_status_at(&mut self, at: Time, path: u8, up: bool) {
        let i = self.status.partition_point(|s| s.0 <= at);
        self.status.insert(i, (at, path, up));
    }

    /// The earliest time anything in the pair wants to act, if anything does.
    pub fn next_wakeup(&self) -> Option<Time> {
        let links = self.paths.iter().flat_map(|p| [p.to_server.poll_timeout(), p.to_client.poll_timeout()]);
        [self.client.poll_timeout(), self.server.poll_timeout(), self.status.first().map(|s| s.0)]
            .into_iter()
            .chain(links)
            .flatten()
            .min()
    }

    /// Advances to the next wake-up and handles everything due then; `false` when nothing
    /// in the pair will ever act again (the pair is idle).
    pub fn step(&mut self) -> bool {
        self.step_by(Time::MAX)
    }

    /// Steps until the pair is idle. Use [`drive_bounded`](Self::drive_bounded) or
    /// [`drive_until_by`](Self::drive_until_by) for runs that might never end.
    pub fn drive(&mut self) {
        while self.step() {}
    }

    /// Steps until the pair is idle; fails if that takes more than `max_steps` steps.
    pub fn drive_bounded(&mut self, max_steps: u64) {
        for _ in 0..max_steps {
            if !self.step() {
                return;
            }
        }
        panic!(
            "the pair is not idle after {max_steps} steps (now {}); still to come: {}",
            self.now,
            self.pending_wakeups()
        );
    }

    /// Steps until `pred` holds (checked before the first step and after every step) or the
    /// pair is idle; returns whether `pred` held.
    pub fn drive_until(&mut self, pred: impl FnMut(&Self) -> bool) -> bool {
        self.drive_until_by(Time::MAX, pred)
    }

    /// Like [`drive_until`](Self::drive_until), handling no wake-up later than `deadline`;
    /// if `pred` has not held by then the clock is set to `deadline` and the result is false.
    pub fn drive_until_by(&mut self, deadline: Time, mut pred: impl FnMut(&Self) -> bool) -> bool {
        loop {
            self.poll_endpoints();
            if pred(self) {
                return true;
            }
            if !self.step_by(deadline) {
                if self.next_wakeup().is_some() {
                    self.now = self.now.max(deadline);
                }
                return false;
            }
        }
    }

    /// Handles every wake-up up to `deadline`, then sets the clock to `deadline`.
    pub fn drive_to(&mut self, deadline: Time) {
        self.drive_until_by(deadline, |_| false);
        self.now = self.now.max(deadline);
    }

    /// Whether the client's application saw [`AppEvent::Finished`].
    pub fn client_finished(&self) -> bool {
        self.client_events.iter().any(|(_, e)| *e == AppEvent::Finished)
    }

    /// When the client's application first saw `event`.
    pub fn client_event_time(&self, event: AppEvent) -> Option<Time> {
        event_time(&self.client_events, event)
    }

    /// When the server's application first saw `event`.
    pub fn server_event_time(&self, event: AppEvent) -> Option<Time> {
        event_time(&self.server_events, event)
    }

    /// The wire records of one route with one event, oldest first.
    pub fn wire_on(&self, route: Route, event: WireEvent) -> impl Iterator<Item = &Wire> + '_ {
        self.wire.iter().filter(move |w| w.route == route && w.event == event)
    }

    /// A description of every wake-up still to come, earliest first.
    pub fn pending_wakeups(&self) -> String {
        let mut all: Vec<(Time, String)> = Vec::new();
        all.extend(self.client.poll_timeout().map(|t| (t, "client timer".to_string())));
        all.extend(self.server.poll_timeout().map(|t| (t, "server timer".to_string())));
        all.extend(self.status.iter().map(|&(t, path, up)| (t, format!("interface of path {path} {}", if up { "up" } else { "down" }))));
        for (i, p) in self.paths.iter().enumerate() {
            for route in [Route::ToServer, Route::ToClient] {
                all.extend(p.link(route).poll_timeout().map(|t| (t, format!("link path {i} {route:?}"))));
            }
        }
        all.sort_by_key(|a| a.0);
        if all.is_empty() {
            return "nothing".to_string();
        }
        all.iter().map(|(t, what)| format!("{what} at {t}")).collect::<Vec<_>>().join(", ")
    }

    fn step_by(&mut self, deadline: Time) -> bool {
        self.poll_endpoints();
        let Some(next) = self.next_wakeup() else {
            return false;
        };
        if next > deadline {
            return false;
        }
        if next <= self.now {
            self.same_time_steps += 1;
            if self.same_time_steps > SAME_TIME_STEP_LIMIT {
                panic!(
                    "livelock: {} steps at {} without the clock advancing; due now or earlier: {}",
                    self.same_time_steps,
                    self.now,
                    self.pending_wakeups()
                );
            }
        } else {
            self.same_time_steps = 0;
            self.now = next;
        }
        self.steps += 1;
        let now = self.now;

        while self.status.first().is_some_and(|s| s.0 <= now) {
            let (_, path, up) = self.status.remove(0);
            self.client.on_path_status(now, path, up);
            self.poll_endpoints();
            self.server.on_path_status(now, path, up);
            self.poll_endpoints();
        }
        for i in 0..self.paths.len() {
            for route in [Route::ToServer, Route::ToClient] {
                while let Some(output) = self.paths[i].link_mut(route).poll(now) {
                    self.take_output(i as u8, route, output);
                }
            }
        }
        if self.client.poll_timeout().is_some_and(|t| t <= now) {
            self.client.handle_timeout(now);
            self.poll_endpoints();
        }
        if self.server.poll_timeout().is_some_and(|t| t <= now) {
            self.server.handle_timeout(now);
            self.poll_endpoints();
        }
        true
    }

    /// A link output: a delivery goes to its endpoint, a drop is only recorded.
    fn take_output(&mut self, path: u8, route: Route, output: LinkOutput) {
        let counters = &mut self.paths[usize::from(path)].counters[route.index() as usize];
        match output {
            LinkOutput::Delivered { at, pkt } => {
                counters.delivered += 1;
                if self.record_wire {
                    self.wire.push(Wire { at, path, route, event: WireEvent::Delivered, pkt: pkt.clone() });
                }
                match route {
                    Route::ToClient => self.client.handle_packet(self.now, pkt),
                    Route::ToServer => self.server.handle_packet(self.now, pkt),
                }
                self.poll_endpoints();
            }
            LinkOutput::Dropped { at, pkt, cause } => {
                counters.dropped += 1;
                if self.record_wire {
                    self.wire.push(Wire { at, path, route, event: WireEvent::Dropped(cause), pkt });
                }
            }
        }
    }

    /// Everything the endpoints want to send or tell their applications now.
    fn poll_endpoints(&mut self) {
        let now = self.now;
        while let Some(pkt) = self.client.poll_transmit(now, &mut self.next_id) {
            self.offer(Route::ToServer, pkt);
        }
        while let Some(pkt) = self.server.poll_transmit(now, &mut self.next_id) {
            self.offer(Route::ToClient, pkt);
        }
        while let Some(e) = self.client.poll_event() {
            self.client_events.push((now, e));
        }
        while let Some(e) = self.server.poll_event() {
            self.server_events.push((now, e));
        }
    }

    fn offer(&mut self, route: Route, mut pkt: Packet) {
        let path = pkt.path;
        let paths = self.paths.len();
        let from = match route {
            Route::ToServer => "client",
            Route::ToClient => "server",
        };
        assert!(usize::from(path) < paths, "the {from} sent packet {} on path {path}, but the pair has {paths} path(s)", pkt.id);
        pkt.route = route.index();
        let now = self.now;
        if self.record_wire {
            self.wire.push(Wire { at: now, path, route, event: WireEvent::Sent, pkt: pkt.clone() });
        }
        let p = &mut self.paths[usize::from(path)];
        p.counters[route.index() as usize].sent += 1;
        if let Err((pkt, cause)) = p.link_mut(route).enqueue(now, pkt) {
            p.counters[route.index() as usize].refused += 1;
            if self.record_wire {
                self.wire.push(Wire { at: now, path, route, event: WireEvent::Refused(cause), pkt });
            }
        }
    }
}

fn build(config: &LinkConfig, seed: u64, path: usize, direction: &str) -> BoxLink {
    config.build(seed, &format!("pair/path{path}/{direction}"))
}

/// When `event` first appears in an event log.
pub fn event_time(events: &[(Time, AppEvent)], event: AppEvent) -> Option<Time> {
    events.iter().find(|(_, e)| *e == event).map(|(t, _)| *t)
}

/// Application bytes delivered in an event log ([`AppEvent::Delivered`]).
pub fn delivered_bytes(events: &[(Time, AppEvent)]) -> u64 {
    events
        .iter()
        .map(|(_, e)| match e {
            AppEvent::Delivered { bytes } => *bytes,
            _ => 0,
        })
        .sum()
}
