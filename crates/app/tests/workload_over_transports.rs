//! A workload from outside the built-in set, defined here, runs unchanged over TCP and over
//! QUIC: both transports take it through `ConnectionParams::external_workload` and the
//! decisions (which request goes when, completions, who finishes) are the shared
//! `Application`'s, so both ends see the same events over either transport.

use std::sync::Arc;

use multiconn_app::workload::{AppEvent, Exchanges, Response};
use multiconn_cc::CcKind;
use multiconn_core::units::QueueLimit;
use multiconn_core::{Dur, FlowId, Rate, Time};
use multiconn_quic::QuicFactory;
use multiconn_tcp::TcpFactory;
use multiconn_testkit::{delivered_bytes, link, Pair, PathConfig};
use multiconn_transport::profile::TransportKind;
use multiconn_transport::{ConnectionParams, Profile, TransportFactory, Workload};

/// Ping-pong: the client sends one ping, waits for its pong, then sends the next.
#[derive(Debug)]
struct PingPong {
    ping: u64,
    pongs: Vec<u64>,
}

impl Exchanges for PingPong {
    fn count(&self) -> u32 {
        self.pongs.len() as u32
    }
    fn parallel(&self) -> u32 {
        1
    }
    fn request_size(&self, _index: u32) -> Option<u64> {
        Some(self.ping)
    }
    fn response(&self, index: u32) -> Response {
        Response::Bytes(Some(self.pongs[index as usize]))
    }
}

fn params(kind: TransportKind, workload: Arc<dyn Exchanges>) -> ConnectionParams {
    ConnectionParams {
        flow: FlowId(0),
        start: Time::ZERO,
        // Not what runs: external_workload replaces it.
        workload: Workload::Download { size: Some(1), request_size: 1 },
        profile: Profile::default_for(kind),
        cc: CcKind::NewReno,
        max_packet_size: 1500,
        resume: false,
        address_token: false,
        qlog: false,
        multipath: None,
        external_cc: None,
        external_workload: Some(workload),
        datagrams: None,
    }
}

/// Runs pings of 1000 B answered by `pongs` over `factory`'s transport on a 10 Mbit/s path
/// of 20 ms each way, checks what both applications saw and returns when each pong completed.
fn ping_pong(factory: &dyn TransportFactory, kind: TransportKind, pongs: &[u64]) -> Vec<Time> {
    let workload = Arc::new(PingPong { ping: 1000, pongs: pongs.to_vec() });
    let path = PathConfig::symmetric(link(Rate::from_mbps(10.0), Dur::from_millis(20), QueueLimit::Packets(1000)));
    let mut h = Pair::connect(factory, &params(kind, workload), 1, &[path]).expect("the default profile offers newreno");
    assert!(h.drive_until_by(Time::ZERO + Dur::from_secs(10), |h| h.client_finished()), "{kind:?}: the client did not finish");
    let settle = h.now + Dur::from_millis(200);
    h.drive_to(settle);

    // The client: allowed to send, then each pong whole, in turn, then finished.
    let client: Vec<AppEvent> = h.client_events.iter().map(|(_, e)| *e).filter(|e| !matches!(e, AppEvent::Delivered { .. })).collect();
    let mut expected = vec![AppEvent::CanSend];
    expected.extend(pongs.iter().enumerate().map(|(i, &bytes)| AppEvent::ResponseComplete { index: i as u32, bytes }));
    expected.push(AppEvent::Finished);
    assert_eq!(client, expected, "{kind:?}");
    assert_eq!(delivered_bytes(&h.client_events), pongs.iter().sum::<u64>(), "{kind:?}");

    // The server: allowed to send, got every ping and, as it answers them, never finishes.
    let server: Vec<AppEvent> = h.server_events.iter().map(|(_, e)| *e).filter(|e| !matches!(e, AppEvent::Delivered { .. })).collect();
    assert_eq!(server, vec![AppEvent::CanSend], "{kind:?}");
    assert_eq!(delivered_bytes(&h.server_events), 1000 * pongs.len() as u64, "{kind:?}");

    // One after another: when pong k completed, the server had seen exactly k + 1 pings ...
    let done: Vec<Time> = h.client_events.iter().filter(|(_, e)| matches!(e, AppEvent::ResponseComplete { .. })).map(|(t, _)| *t).collect();
    for (k, &t) in done.iter().enumerate() {
        let seen: Vec<(Time, AppEvent)> = h.server_events.iter().filter(|(at, _)| *at <= t).copied().collect();
        assert_eq!(delivered_bytes(&seen), 1000 * (k as u64 + 1), "{kind:?}: pings seen by pong {k}");
    }
    // ... and each exchange takes at least the path's round trip of 40 ms.
    for w in done.windows(2) {
        assert!(w[1] - w[0] >= Dur::from_millis(40), "{kind:?}: {done:?}");
    }
    done
}

#[test]
fn a_ping_pong_defined_in_a_test_runs_unchanged_over_tcp_and_quic() {
    let pongs = [5000, 5000, 5000];
    let tcp = ping_pong(&TcpFactory, TransportKind::Tcp, &pongs);
    let quic = ping_pong(&QuicFactory::default(), TransportKind::Quic, &pongs);
    // TCP + TLS 1.3 takes one round trip more than QUIC before the first ping goes.
    assert!(tcp[0] > quic[0], "tcp {tcp:?}, quic {quic:?}");
}

#[test]
fn pongs_of_different_sizes_end_where_each_one_does_over_tcp_and_quic() {
    // On TCP's one byte stream the client finds where each pong ends by its size alone.
    let pongs = [5000, 20_000, 1];
    ping_pong(&TcpFactory, TransportKind::Tcp, &pongs);
    ping_pong(&QuicFactory::default(), TransportKind::Quic, &pongs);
}
