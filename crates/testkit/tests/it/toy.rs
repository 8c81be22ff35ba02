//! Toy endpoints for the pair's own tests: a client that sends packets of given sizes on given
//! paths at given times, a server that answers each with a small echo on the same path, and
//! two misbehaving endpoints (one always due, one never idle).

use std::collections::VecDeque;

use multiconn_core::{Dur, FlowId, Packet, Payload, Time, TransportSample};
use multiconn_transport::{AppEvent, Endpoint};

/// Size of the server's echo.
pub const ECHO_SIZE: u32 = 100;

/// Sends what it is told, when it is told; echoes what it receives if `echo` is set. Each
/// packet received is an `AppEvent::Delivered` of its size.
pub struct Toy {
    sends: VecDeque<(Time, u8, u32)>,
    echo: bool,
    outbox: VecDeque<(u8, u32)>,
    events: VecDeque<AppEvent>,
    pub received: Vec<(Time, u8, u64)>,
    /// Interface events told to it: (time, path, up).
    pub status: Vec<(Time, u8, bool)>,
}

impl Toy {
    /// A client sending `(time, path, size)` in that order (times non-decreasing).
    pub fn client(sends: Vec<(Time, u8, u32)>) -> Toy {
        Toy { sends: sends.into(), echo: false, outbox: VecDeque::new(), events: VecDeque::new(), received: Vec::new(), status: Vec::new() }
    }

    /// A server echoing every packet with [`ECHO_SIZE`] bytes on its path.
    pub fn echo_server() -> Toy {
        Toy { echo: true, ..Toy::client(Vec::new()) }
    }
}

impl Endpoint for Toy {
    fn handle_packet(&mut self, now: Time, pkt: Packet) {
        self.received.push((now, pkt.path, pkt.id));
        self.events.push_back(AppEvent::Delivered { bytes: u64::from(pkt.size) });
        if self.echo {
            self.outbox.push_back((pkt.path, ECHO_SIZE));
        }
    }
    fn poll_transmit(&mut self, now: Time, next_id: &mut u64) -> Option<Packet> {
        let (path, size) = self.outbox.pop_front()?;
        let id = *next_id;
        *next_id += 1;
        let mut pkt = Packet::new(id, FlowId(0), size, id, now).with_payload(Payload::new(id));
        pkt.path = path;
        Some(pkt)
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.sends.front().map(|s| s.0)
    }
    fn handle_timeout(&mut self, now: Time) {
        while self.sends.front().is_some_and(|s| s.0 <= now) {
            let (_, path, size) = self.sends.pop_front().unwrap();
            self.outbox.push_back((path, size));
        }
    }
    fn poll_event(&mut self) -> Option<AppEvent> {
        self.events.pop_front()
    }
    fn sample(&self) -> TransportSample {
        TransportSample::default()
    }
    fn cc_state(&self) -> &'static str {
        "none"
    }
    fn on_path_status(&mut self, now: Time, path: u8, up: bool) {
        self.status.push((now, path, up));
    }
}

/// Asks to be woken at time zero forever, whatever it is told.
pub struct AlwaysDue;

impl Endpoint for AlwaysDue {
    fn handle_packet(&mut self, _now: Time, _pkt: Packet) {}
    fn poll_transmit(&mut self, _now: Time, _next_id: &mut u64) -> Option<Packet> {
        None
    }
    fn poll_timeout(&self) -> Option<Time> {
        Some(Time::ZERO)
    }
    fn handle_timeout(&mut self, _now: Time) {}
    fn poll_event(&mut self) -> Option<AppEvent> {
        None
    }
    fn sample(&self) -> TransportSample {
        TransportSample::default()
    }
    fn cc_state(&self) -> &'static str {
        "stuck"
    }
}

/// A timer every millisecond, forever.
pub struct Ticker {
    pub next: Time,
}

impl Endpoint for Ticker {
    fn handle_packet(&mut self, _now: Time, _pkt: Packet) {}
    fn poll_transmit(&mut self, _now: Time, _next_id: &mut u64) -> Option<Packet> {
        None
    }
    fn poll_timeout(&self) -> Option<Time> {
        Some(self.next)
    }
    fn handle_timeout(&mut self, now: Time) {
        self.next = now + Dur::from_millis(1);
    }
    fn poll_event(&mut self) -> Option<AppEvent> {
        None
    }
    fn sample(&self) -> TransportSample {
        TransportSample::default()
    }
    fn cc_state(&self) -> &'static str {
        "ticking"
    }
}
