//! The applications at the two ends over TCP: TLS 1.3 (RFC 8446 §2 full handshake), then the
//! workload of `multiconn_app::workload` on the one byte stream (HTTP/1.1-style pipelining:
//! responses come back in request order, so a slow one blocks the rest). What the workload
//! decides (which requests go when, when each end is finished, its events) is the shared
//! [`Application`]'s; this module lays it out on the two byte streams.
//!
//! Both ends know the layout of both byte streams, so only counts travel:
//! * client → server: ClientHello, then (after the server's flight) Finished, then the
//!   requests one after the other;
//! * server → client: ServerHello … Finished (certificate chain included), then the responses
//!   in request order.
//!
//! A request ends where its size says; a response too. An unanswered request
//! ([`Response::Nothing`], an upload) adds nothing to the server's stream, so the client never
//! sees a response to it and never finishes.
//!
//! TLS record framing of application data (5 + 16 + 1 bytes per record) is not modelled.

use std::collections::VecDeque;
use std::sync::Arc;

use multiconn_app::workload::{Application, Exchanges, Response, Streams};
use multiconn_transport::{AppEvent, Role};

/// ClientHello with the usual extensions and one key share.
pub const CLIENT_HELLO: u64 = 300;
/// ServerHello, EncryptedExtensions, Certificate (a two-certificate chain), CertificateVerify
/// and Finished.
pub const SERVER_FLIGHT: u64 = 4000;
/// Client Finished (and ChangeCipherSpec for middlebox compatibility).
pub const CLIENT_FINISHED: u64 = 80;

/// One end's application over the byte streams: TLS 1.3, then the workload's requests and
/// responses, laid out as the module header describes.
#[derive(Clone, Debug)]
pub struct App {
    role: Role,
    app: Application,
    /// Bytes of the peer's stream received in order.
    received: u64,
    /// Handshake done at this end (client: server flight in; server: client Finished in).
    handshake_done: bool,
    flight_written: bool,
    /// Application bytes of the peer's stream where the next request (server) or response
    /// (client) starts.
    next_start: u64,
    events: VecDeque<AppEvent>,
}

/// Bytes the application wants to add to its stream; saturates for endless responses.
pub type Write = u64;

/// The application's view of the byte stream while one call runs: what it writes adds up,
/// in order; what it observes is queued.
struct ByteStream<'a> {
    write: Write,
    events: &'a mut VecDeque<AppEvent>,
}

impl Streams for ByteStream<'_> {
    fn send_request(&mut self, _index: u32, bytes: Option<u64>) {
        self.write = self.write.saturating_add(bytes.unwrap_or(u64::MAX));
    }
    fn send_response(&mut self, _index: u32, response: Response) {
        if let Response::Bytes(bytes) = response {
            self.write = self.write.saturating_add(bytes.unwrap_or(u64::MAX));
        }
    }
    fn emit(&mut self, event: AppEvent) {
        self.events.push_back(event);
    }
}

impl App {
    /// The application at the `role` end running `exchanges`, before the handshake.
    pub fn new(role: Role, exchanges: Arc<dyn Exchanges>) -> App {
        let app = match role {
            Role::Client => Application::client(exchanges),
            Role::Server => Application::server(exchanges),
        };
        App { role, app, received: 0, handshake_done: false, flight_written: false, next_start: 0, events: VecDeque::new() }
    }

    /// Next event the workload emitted, oldest first.
    pub fn poll_event(&mut self) -> Option<AppEvent> {
        self.events.pop_front()
    }
    /// This end's workload is finished.
    pub fn finished(&self) -> bool {
        self.app.finished()
    }

    /// The connection is established: what the client writes first (its ClientHello).
    pub fn on_established(&mut self) -> Write {
        match self.role {
            Role::Client => CLIENT_HELLO,
            Role::Server => 0,
        }
    }

    /// `total` bytes of the peer's stream are now in order; returns what to write.
    pub fn on_received(&mut self, total: u64) -> Write {
        if total <= self.received {
            return 0;
        }
        let before = self.received;
        self.received = total;
        match self.role {
            Role::Client => self.client(before),
            Role::Server => self.server(before),
        }
    }

    fn client(&mut self, before: u64) -> Write {
        let mut out = ByteStream { write: 0, events: &mut self.events };
        if !self.handshake_done && self.received >= SERVER_FLIGHT {
            self.handshake_done = true;
            out.write = CLIENT_FINISHED;
            self.app.on_can_send(&mut out);
        }
        let app_now = self.received.saturating_sub(SERVER_FLIGHT);
        let app_before = before.saturating_sub(SERVER_FLIGHT);
        if app_now > app_before {
            out.emit(AppEvent::Delivered { bytes: app_now - app_before });
        }
        // The responses, in request order, each as long as the workload says.
        while self.handshake_done && self.app.responses() < self.app.requests() {
            let index = self.app.responses();
            let Response::Bytes(Some(size)) = self.app.exchanges().response(index) else { break };
            let end = self.next_start.saturating_add(size);
            if app_now < end {
                break;
            }
            self.next_start = end;
            self.app.on_response(index, size, &mut out);
        }
        out.write
    }

    fn server(&mut self, before: u64) -> Write {
        let mut out = ByteStream { write: 0, events: &mut self.events };
        if !self.flight_written && self.received >= CLIENT_HELLO {
            self.flight_written = true;
            out.write = SERVER_FLIGHT;
        }
        let hs = CLIENT_HELLO + CLIENT_FINISHED;
        if !self.handshake_done && self.received >= hs {
            self.handshake_done = true;
            self.app.on_can_send(&mut out);
        }
        let app_now = self.received.saturating_sub(hs);
        let app_before = before.saturating_sub(hs);
        if app_now > app_before {
            out.emit(AppEvent::Delivered { bytes: app_now - app_before });
        }
        // The requests, one after the other, each as long as the workload says.
        while self.handshake_done && self.app.requests() < self.app.exchanges().count() {
            let index = self.app.requests();
            let end = self.next_start.saturating_add(self.app.exchanges().request_size(index).unwrap_or(u64::MAX));
            if app_now < end {
                break;
            }
            self.next_start = end;
            self.app.on_request(index, &mut out);
        }
        out.write
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use multiconn_transport::Workload;

    fn app(role: Role, w: Workload) -> App {
        App::new(role, Arc::new(w.exchanges()))
    }

    #[test]
    fn client_and_server_walk_through_pipelined_requests() {
        let w = Workload::Requests {
            count: 3,
            parallel: 2,
            request_size: 100,
            response_size: 1000,
        };
        let mut c = app(Role::Client, w);
        let mut s = app(Role::Server, w);
        assert_eq!(c.on_established(), CLIENT_HELLO);
        assert_eq!(s.on_received(CLIENT_HELLO), SERVER_FLIGHT);
        assert_eq!(c.on_received(SERVER_FLIGHT), CLIENT_FINISHED + 200);
        assert_eq!(c.poll_event(), Some(AppEvent::CanSend));
        assert_eq!(s.on_received(CLIENT_HELLO + CLIENT_FINISHED + 150), 1000);
        assert_eq!(s.on_received(CLIENT_HELLO + CLIENT_FINISHED + 200), 1000);
        assert_eq!(c.on_received(SERVER_FLIGHT + 1500), 100);
        assert_eq!(c.poll_event(), Some(AppEvent::Delivered { bytes: 1500 }));
        assert_eq!(
            c.poll_event(),
            Some(AppEvent::ResponseComplete {
                index: 0,
                bytes: 1000
            })
        );
        assert_eq!(c.on_received(SERVER_FLIGHT + 3000), 0);
        assert!(c.finished());
    }

    #[test]
    fn an_upload_finishes_at_the_server_once_all_of_it_arrived() {
        let w = Workload::Upload { size: Some(10_000) };
        let mut c = app(Role::Client, w);
        let mut s = app(Role::Server, w);
        assert_eq!(c.on_established(), CLIENT_HELLO);
        assert_eq!(s.on_received(CLIENT_HELLO), SERVER_FLIGHT);
        // The client writes its Finished and the whole upload at once.
        assert_eq!(c.on_received(SERVER_FLIGHT), CLIENT_FINISHED + 10_000);
        assert_eq!(c.poll_event(), Some(AppEvent::CanSend));
        let hs = CLIENT_HELLO + CLIENT_FINISHED;
        assert_eq!(s.on_received(hs + 9_999), 0);
        assert_eq!(s.poll_event(), Some(AppEvent::CanSend));
        assert_eq!(s.poll_event(), Some(AppEvent::Delivered { bytes: 9_999 }));
        assert!(!s.finished());
        // The last byte: the server finishes and answers nothing.
        assert_eq!(s.on_received(hs + 10_000), 0);
        assert_eq!(s.poll_event(), Some(AppEvent::Delivered { bytes: 1 }));
        assert_eq!(s.poll_event(), Some(AppEvent::Finished));
        assert!(s.finished());
        // The client never finishes on its own: no response comes.
        assert!(!c.finished());
        assert_eq!(c.poll_event(), None);
    }

    #[test]
    fn an_endless_upload_is_written_without_end_and_never_finishes() {
        let w = Workload::Upload { size: None };
        let mut c = app(Role::Client, w);
        let mut s = app(Role::Server, w);
        c.on_established();
        s.on_received(CLIENT_HELLO);
        assert_eq!(c.on_received(SERVER_FLIGHT), u64::MAX);
        assert_eq!(s.on_received(CLIENT_HELLO + CLIENT_FINISHED + 1_000_000_000), 0);
        assert!(!s.finished());
    }

    #[test]
    fn endless_download_never_finishes() {
        let w = Workload::Download {
            size: None,
            request_size: 50,
        };
        let mut s = app(Role::Server, w);
        s.on_received(CLIENT_HELLO);
        assert_eq!(s.on_received(CLIENT_HELLO + CLIENT_FINISHED + 50), u64::MAX);
    }
}
