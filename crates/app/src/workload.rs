//! The applications at the two ends of a connection (TCP, MPTCP, QUIC): the client sends
//! requests, the server answers them. Written once here; each transport maps it onto its
//! streams.
//!
//! * [`Exchanges`]: what both ends know of a workload, request by request: how many, how
//!   many outstanding at once, the size of each request and of its [`Response`]. [`Uniform`]
//!   is every built-in workload (a download, an upload, N requests of one size); a test or a
//!   caller may bring its own through `ConnectionParams::external_workload`.
//! * [`Application`]: the state machine of one end: which requests the client sends when,
//!   when a response completes, when each end is finished, and the [`AppEvent`]s that says.
//! * [`Streams`]: what the application asks of the transport under it. QUIC gives request
//!   `k` its own bidirectional stream (id `4k`), whose FIN ends it; a byte stream (TCP)
//!   carries the requests one after the other and the responses in request order, and
//!   delimits them by their sizes, which both ends know (HTTP/1.1-style pipelining).
//!
//! The transport calls [`Application::on_can_send`] when its handshake lets the application
//! send, [`Application::on_request`] at the server when a request arrived whole and
//! [`Application::on_response`] at the client when a response did. It reports
//! [`AppEvent::Delivered`] itself, as bytes are handed over.

use std::fmt::Debug;
use std::sync::Arc;

/// What the applications observe, polled from the endpoint where it happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppEvent {
    /// The handshake let this endpoint's application send data (client: 1 RTT for QUIC, at
    /// once with 0-RTT, 2 RTT for TCP + TLS 1.3).
    CanSend,
    /// `bytes` of application data were delivered in order to this endpoint's application
    /// (goodput; requests at the server, responses at the client).
    Delivered {
        /// Application bytes delivered.
        bytes: u64,
    },
    /// One response (or the download) was completely received by the client.
    ResponseComplete {
        /// The request it answers, counted from 0 in the order the requests were sent.
        index: u32,
        /// Its size in bytes.
        bytes: u64,
    },
    /// Everything the workload asked for has been received: by the client, or, for an
    /// upload, by the server (and then the client, when the server answers).
    Finished,
}

/// How the server answers a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Response {
    /// With this many bytes; `None`: it never stops.
    Bytes(Option<u64>),
    /// Not at all (an upload, as an HTTP PUT with no body): the server's application only
    /// takes the request in. QUIC still ends the request's stream, with an empty FIN, which
    /// the client sees as an empty response; on a byte stream nothing marks it, and the
    /// client never sees one.
    Nothing,
}

/// What both ends know of a workload: its requests and their responses.
pub trait Exchanges: Debug + Send + Sync {
    /// How many requests the client sends.
    fn count(&self) -> u32;
    /// Most requests outstanding (sent and not yet answered) at once; at least 1.
    fn parallel(&self) -> u32;
    /// Bytes of request `index`; `None`: it never ends (an endless upload).
    fn request_size(&self, index: u32) -> Option<u64>;
    /// How request `index` is answered.
    fn response(&self, index: u32) -> Response;
}

/// `count` requests of one size, answered alike: every built-in workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Uniform {
    /// Number of requests.
    pub count: u32,
    /// Most requests outstanding at once (0 counts as 1).
    pub parallel: u32,
    /// Bytes per request; `None`: endless.
    pub request_size: Option<u64>,
    /// How each is answered.
    pub response: Response,
}

impl Exchanges for Uniform {
    fn count(&self) -> u32 {
        self.count
    }
    fn parallel(&self) -> u32 {
        self.parallel.max(1)
    }
    fn request_size(&self, _index: u32) -> Option<u64> {
        self.request_size
    }
    fn response(&self, _index: u32) -> Response {
        self.response
    }
}

/// What the application asks of the transport under it.
pub trait Streams {
    /// Client: send request `index` (`bytes`, `None`: without end) and end it. Requests are
    /// sent in index order.
    fn send_request(&mut self, index: u32, bytes: Option<u64>);
    /// Server: answer request `index` as `response` says, and end the answer.
    fn send_response(&mut self, index: u32, response: Response);
    /// The application observed `event`.
    fn emit(&mut self, event: AppEvent);
}

/// The application at one end of a connection.
#[derive(Clone, Debug)]
pub struct Application {
    exchanges: Arc<dyn Exchanges>,
    client: bool,
    /// The handshake let it send.
    started: bool,
    /// Client: requests sent; server: requests arrived.
    requests: u32,
    /// Client: responses complete.
    responses: u32,
    /// Server: requests answered (with a [`Response::Bytes`]).
    answered: u32,
    finished: bool,
}

impl Application {
    /// The client's application (it sends the requests).
    pub fn client(exchanges: Arc<dyn Exchanges>) -> Application {
        Application::new(exchanges, true)
    }
    /// The server's application (it answers).
    pub fn server(exchanges: Arc<dyn Exchanges>) -> Application {
        Application::new(exchanges, false)
    }
    fn new(exchanges: Arc<dyn Exchanges>, client: bool) -> Application {
        Application { exchanges, client, started: false, requests: 0, responses: 0, answered: 0, finished: false }
    }

    /// The workload.
    pub fn exchanges(&self) -> &dyn Exchanges {
        &*self.exchanges
    }
    /// Client: requests sent so far. Server: requests arrived so far.
    pub fn requests(&self) -> u32 {
        self.requests
    }
    /// Client: responses complete so far.
    pub fn responses(&self) -> u32 {
        self.responses
    }
    /// This end's application has everything it waits for ([`AppEvent::Finished`] was emitted).
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// The handshake lets the application send: [`AppEvent::CanSend`] and, at the client, the
    /// first requests. Later calls do nothing.
    pub fn on_can_send(&mut self, s: &mut impl Streams) {
        if self.started {
            return;
        }
        self.started = true;
        s.emit(AppEvent::CanSend);
        if self.client {
            self.send_requests(s);
        }
    }

    /// Server: request `index` arrived whole; it is answered, and once every request arrived
    /// and none was answered (an upload), the server's application is finished.
    pub fn on_request(&mut self, index: u32, s: &mut impl Streams) {
        self.requests += 1;
        let response = self.exchanges.response(index);
        if matches!(response, Response::Bytes(_)) {
            self.answered += 1;
        }
        if !self.finished && self.answered == 0 && self.requests >= self.exchanges.count() {
            self.finished = true;
            s.emit(AppEvent::Finished);
        }
        s.send_response(index, response);
    }

    /// Client: the response to request `index` arrived whole, `bytes` long; once all arrived,
    /// the client's application is finished, else the next requests go.
    pub fn on_response(&mut self, index: u32, bytes: u64, s: &mut impl Streams) {
        s.emit(AppEvent::ResponseComplete { index, bytes });
        self.responses += 1;
        if !self.finished && self.responses >= self.exchanges.count() {
            self.finished = true;
            s.emit(AppEvent::Finished);
        }
        self.send_requests(s);
    }

    fn send_requests(&mut self, s: &mut impl Streams) {
        let (count, parallel) = (self.exchanges.count(), self.exchanges.parallel());
        while self.requests < count && self.requests.saturating_sub(self.responses) < parallel {
            let index = self.requests;
            self.requests += 1;
            s.send_request(index, self.exchanges.request_size(index));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A transport that notes what the application asked of it.
    #[derive(Default)]
    struct Log {
        requests: Vec<(u32, Option<u64>)>,
        responses: Vec<(u32, Response)>,
        events: Vec<AppEvent>,
    }

    impl Streams for Log {
        fn send_request(&mut self, index: u32, bytes: Option<u64>) {
            self.requests.push((index, bytes));
        }
        fn send_response(&mut self, index: u32, response: Response) {
            self.responses.push((index, response));
        }
        fn emit(&mut self, event: AppEvent) {
            self.events.push(event);
        }
    }

    fn requests(count: u32, parallel: u32) -> Arc<dyn Exchanges> {
        Arc::new(Uniform { count, parallel, request_size: Some(100), response: Response::Bytes(Some(1000)) })
    }

    #[test]
    fn the_client_keeps_parallel_requests_outstanding_and_finishes_with_the_last_response() {
        let mut c = Application::client(requests(3, 2));
        let mut log = Log::default();
        c.on_can_send(&mut log);
        c.on_can_send(&mut log);
        assert_eq!(log.requests, vec![(0, Some(100)), (1, Some(100))]);
        assert_eq!(log.events, vec![AppEvent::CanSend]);
        c.on_response(0, 1000, &mut log);
        assert_eq!(log.requests.len(), 3);
        c.on_response(1, 1000, &mut log);
        assert!(!c.finished());
        c.on_response(2, 1000, &mut log);
        assert!(c.finished());
        assert_eq!(log.requests.len(), 3);
        assert_eq!(&log.events[1..], &[AppEvent::ResponseComplete { index: 0, bytes: 1000 }, AppEvent::ResponseComplete { index: 1, bytes: 1000 }, AppEvent::ResponseComplete { index: 2, bytes: 1000 }, AppEvent::Finished]);
    }

    #[test]
    fn the_server_answers_each_request_and_finishes_only_an_upload() {
        let mut s = Application::server(requests(2, 1));
        let mut log = Log::default();
        s.on_can_send(&mut log);
        s.on_request(0, &mut log);
        s.on_request(1, &mut log);
        assert_eq!(log.responses, vec![(0, Response::Bytes(Some(1000))), (1, Response::Bytes(Some(1000)))]);
        assert!(!s.finished());
        assert_eq!(log.events, vec![AppEvent::CanSend]);

        let upload = Arc::new(Uniform { count: 1, parallel: 1, request_size: Some(10_000), response: Response::Nothing });
        let mut s = Application::server(upload);
        let mut log = Log::default();
        s.on_request(0, &mut log);
        assert!(s.finished());
        assert_eq!(log.events, vec![AppEvent::Finished]);
        assert_eq!(log.responses, vec![(0, Response::Nothing)]);
    }
}
