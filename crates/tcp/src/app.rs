//! The applications at the two ends: TLS 1.3 over TCP (RFC 8446 §2 full handshake) and the
//! workload's requests and responses on the one byte stream (HTTP/1.1-style pipelining:
//! responses come back in request order, so a slow one blocks the rest).
//!
//! Both ends know the layout of both byte streams, so only counts travel:
//! * client → server: ClientHello, then (after the server's flight) Finished, then requests
//!   of `request_size` bytes, up to `parallel` outstanding;
//! * server → client: ServerHello … Finished (certificate chain included), then responses.
//!
//! An upload ([`Workload::Upload`]) is one request of the upload's size with no response: the
//! server's application finishes when all of it arrived, and the client's never does.
//!
//! TLS record framing of application data (5 + 16 + 1 bytes per record) is not modelled.

use std::collections::VecDeque;

use multiconn_transport::{AppEvent, Role, Workload};

/// ClientHello with the usual extensions and one key share.
pub const CLIENT_HELLO: u64 = 300;
/// ServerHello, EncryptedExtensions, Certificate (a two-certificate chain), CertificateVerify
/// and Finished.
pub const SERVER_FLIGHT: u64 = 4000;
/// Client Finished (and ChangeCipherSpec for middlebox compatibility).
pub const CLIENT_FINISHED: u64 = 80;

/// Workload as requests: `count` requests, `parallel` outstanding, sizes; `None` = endless.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Plan {
    count: u32,
    parallel: u32,
    request_size: u64,
    response_size: Option<u64>,
    /// An upload: nothing answers the request, and the server finishes once it arrived.
    upload: bool,
}

impl Plan {
    fn from(w: Workload) -> Plan {
        match w {
            Workload::Download { size, request_size } => Plan {
                count: 1,
                parallel: 1,
                request_size,
                response_size: size,
                upload: false,
            },
            Workload::Upload { size } => Plan {
                count: 1,
                parallel: 1,
                request_size: size.unwrap_or(u64::MAX),
                response_size: None,
                upload: true,
            },
            Workload::Requests {
                count,
                parallel,
                request_size,
                response_size,
            } => Plan {
                count,
                parallel: parallel.max(1),
                request_size,
                response_size: Some(response_size),
                upload: false,
            },
            // The application writes itself (Endpoint::write), which TCP endpoints refuse:
            // nothing is requested.
            Workload::Messages => Plan { count: 0, parallel: 1, request_size: 0, response_size: Some(0), upload: false },
        }
    }
}

#[derive(Clone, Debug)]
pub struct App {
    role: Role,
    plan: Plan,
    /// Bytes of the peer's stream received in order.
    received: u64,
    /// Handshake done at this end (client: server flight in; server: client Finished in).
    handshake_done: bool,
    flight_written: bool,
    requests_sent: u32,
    requests_seen: u32,
    responses_done: u32,
    finished: bool,
    events: VecDeque<AppEvent>,
}

/// Bytes the application wants to add to its stream; saturates for endless responses.
pub type Write = u64;

impl App {
    pub fn new(role: Role, workload: Workload) -> App {
        App {
            role,
            plan: Plan::from(workload),
            received: 0,
            handshake_done: false,
            flight_written: false,
            requests_sent: 0,
            requests_seen: 0,
            responses_done: 0,
            finished: false,
            events: VecDeque::new(),
        }
    }

    pub fn poll_event(&mut self) -> Option<AppEvent> {
        self.events.pop_front()
    }
    pub fn finished(&self) -> bool {
        self.finished
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
        let mut write: Write = 0;
        if !self.handshake_done && self.received >= SERVER_FLIGHT {
            self.handshake_done = true;
            self.events.push_back(AppEvent::CanSend);
            write = CLIENT_FINISHED;
            write = write.saturating_add(self.send_requests());
        }
        let app_now = self.received.saturating_sub(SERVER_FLIGHT);
        let app_before = before.saturating_sub(SERVER_FLIGHT);
        if app_now > app_before {
            self.events.push_back(AppEvent::Delivered {
                bytes: app_now - app_before,
            });
        }
        write.saturating_add(self.complete_responses(app_now))
    }

    fn send_requests(&mut self) -> Write {
        let mut w: Write = 0;
        while self.requests_sent < self.plan.count
            && self.requests_sent - self.responses_done < self.plan.parallel
        {
            self.requests_sent += 1;
            w = w.saturating_add(self.plan.request_size);
        }
        w
    }

    fn complete_responses(&mut self, app_bytes: u64) -> Write {
        let Some(size) = self.plan.response_size.filter(|_| !self.plan.upload) else {
            return 0;
        };
        let mut w: Write = 0;
        while self.handshake_done && self.responses_done < self.requests_sent {
            let end = (self.responses_done as u64 + 1).saturating_mul(size);
            if app_bytes < end {
                break;
            }
            self.events.push_back(AppEvent::ResponseComplete {
                index: self.responses_done,
                bytes: size,
            });
            self.responses_done += 1;
            w = w.saturating_add(self.send_requests());
        }
        if !self.finished && self.handshake_done && self.responses_done == self.plan.count {
            self.finished = true;
            self.events.push_back(AppEvent::Finished);
        }
        w
    }

    fn server(&mut self, before: u64) -> Write {
        let mut write: Write = 0;
        if !self.flight_written && self.received >= CLIENT_HELLO {
            self.flight_written = true;
            write = SERVER_FLIGHT;
        }
        let hs = CLIENT_HELLO + CLIENT_FINISHED;
        if !self.handshake_done && self.received >= hs {
            self.handshake_done = true;
            self.events.push_back(AppEvent::CanSend);
        }
        let app_now = self.received.saturating_sub(hs);
        let app_before = before.saturating_sub(hs);
        if app_now > app_before {
            self.events.push_back(AppEvent::Delivered {
                bytes: app_now - app_before,
            });
        }
        while self.handshake_done && self.requests_seen < self.plan.count {
            let end = (self.requests_seen as u64 + 1).saturating_mul(self.plan.request_size);
            if app_now < end {
                break;
            }
            self.requests_seen += 1;
            if self.plan.upload {
                self.finished = true;
                self.events.push_back(AppEvent::Finished);
                continue;
            }
            write = write.saturating_add(self.plan.response_size.unwrap_or(u64::MAX));
        }
        write
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_and_server_walk_through_pipelined_requests() {
        let w = Workload::Requests {
            count: 3,
            parallel: 2,
            request_size: 100,
            response_size: 1000,
        };
        let mut c = App::new(Role::Client, w);
        let mut s = App::new(Role::Server, w);
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
        let mut c = App::new(Role::Client, w);
        let mut s = App::new(Role::Server, w);
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
        let mut c = App::new(Role::Client, w);
        let mut s = App::new(Role::Server, w);
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
        let mut s = App::new(Role::Server, w);
        s.on_received(CLIENT_HELLO);
        assert_eq!(s.on_received(CLIENT_HELLO + CLIENT_FINISHED + 50), u64::MAX);
    }
}
