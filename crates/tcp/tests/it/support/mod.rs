//! TCP helpers for the integration tests, which run a client and a server over
//! multiconn-testkit's [`Pair`] and the simulator's own link models: connection parameters and
//! workloads, the paths the tests use, reading the [`Segment`] inside a packet, and drop and
//! delay rules over segments expressed as [`Scripted`](multiconn_link::scripted::Scripted)
//! scripts.
//!
//! The links are exact: a packet of `B` bytes takes its serialization time at the link's rate,
//! then the one-way delay. Where a test wants a direction that is not a bottleneck it uses
//! [`fast`], 8 Gbit/s, where serialization takes exactly one nanosecond per byte, so the
//! tests' exact times are the round-trip delays plus a few nanoseconds per byte crossed.

use std::collections::HashMap;

use multiconn_cc::CcKind;
use multiconn_core::units::QueueLimit;
use multiconn_core::{Dur, FlowId, Packet, Rate, Time};
use multiconn_link::builder::LinkConfig;
use multiconn_link::scripted::Verdict;
use multiconn_tcp::{Segment, TcpEndpoint};
use multiconn_testkit::{link, Pair, PathConfig, Route};
use multiconn_transport::profile::TransportKind;
use multiconn_transport::{ConnectionParams, Profile, Role, Workload};

pub use multiconn_testkit::delivered_bytes;

/// A single-path TCP connection over real links.
pub type TcpPair = Pair<TcpEndpoint, TcpEndpoint>;

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
        resume: false,
        address_token: false,
        qlog: false,
        multipath: None,
        external_cc: None,
        external_workload: None,
        datagrams: None,
    }
}

pub fn download(size: u64) -> Workload {
    Workload::Download { size: Some(size), request_size: 200 }
}

/// The rate of a direction that is never the bottleneck: 8 Gbit/s, one nanosecond per byte.
pub const FAST: Rate = Rate(8_000_000_000);

/// Serialization time of `bytes` on a [`fast`] link.
pub fn fast_tx(bytes: u64) -> Dur {
    FAST.tx_time(bytes)
}

/// A queue no test fills: a 1 MB download is under 700 segments, and the windows of the
/// endless downloads are bounded by the receive buffer (a few MB, under 5000 segments).
pub const DEEP: QueueLimit = QueueLimit::Packets(10_000);

/// A direction that is not a bottleneck: [`FAST`], a [`DEEP`] queue, `one_way` of delay.
pub fn fast(one_way: Dur) -> LinkConfig {
    link(FAST, one_way, DEEP)
}

/// A bottleneck at `rate` whose queue never fills ([`DEEP`]): what limits the sender is its
/// window, never a queue drop.
pub fn deep(rate: Rate, one_way: Dur) -> LinkConfig {
    link(rate, one_way, DEEP)
}

/// The data direction (server to client) and the return direction of a path.
pub fn path(to_client: LinkConfig, to_server: LinkConfig) -> PathConfig {
    PathConfig { to_client, to_server }
}

/// Client and server of `p` over one path.
pub fn tcp_pair(p: &ConnectionParams, path: PathConfig) -> TcpPair {
    let client = TcpEndpoint::new(Role::Client, p).expect("the linux-tcp profile offers the controller");
    let server = TcpEndpoint::new(Role::Server, p).expect("the linux-tcp profile offers the controller");
    Pair::from_configs(Box::new(client), Box::new(server), 1, &[path])
}

/// Client and server of `p` over a path that is [`fast`] both ways with `one_way` delay.
pub fn fast_pair(p: &ConnectionParams, one_way: Dur) -> TcpPair {
    tcp_pair(p, PathConfig::symmetric(fast(one_way)))
}

/// Drives `h` until the client's application has everything; fails if that is not by `limit`.
pub fn run_to_finish(h: &mut TcpPair, limit: Time) -> Time {
    assert!(h.drive_until_by(limit, |h| h.client_finished()), "not finished by {limit}; server {:?}", h.server);
    h.now
}

/// The segment a TCP packet carries.
pub fn segment(pkt: &Packet) -> &Segment {
    pkt.payload
        .as_ref()
        .and_then(|p| p.get::<Segment>())
        .unwrap_or_else(|| panic!("packet {} carries no TCP segment", pkt.id))
}

/// (time, segment) of every segment offered to the link toward `route`'s end, dropped or
/// not, in order.
pub fn sent(p: &TcpPair, route: Route) -> Vec<(Time, Segment)> {
    p.wire.iter().filter(|w| w.route == route && w.is_sent()).map(|w| (w.at, segment(&w.pkt).clone())).collect()
}

/// (time, segment) of every segment delivered toward `route`'s end, in order.
pub fn delivered(p: &TcpPair, route: Route) -> Vec<(Time, Segment)> {
    p.wire.iter().filter(|w| w.route == route && w.is_delivered()).map(|w| (w.at, segment(&w.pkt).clone())).collect()
}

/// A script over segments: `rule` gets the segment and, for segments with data, how many
/// times its sequence number has been offered to this link, this time included (0 for
/// segments without data).
pub fn on_segments(
    mut rule: impl FnMut(&Segment, u32) -> Verdict + Send + 'static,
) -> impl FnMut(u64, &Packet) -> Verdict + Send + 'static {
    let mut offered: HashMap<u64, u32> = HashMap::new();
    move |_, pkt| {
        let seg = segment(pkt);
        let n = if seg.len > 0 {
            let count = offered.entry(seg.seq).or_insert(0);
            *count += 1;
            *count
        } else {
            0
        };
        rule(seg, n)
    }
}

/// Drops the segments for which `drop` holds (same arguments as [`on_segments`]).
pub fn drop_when(mut drop: impl FnMut(&Segment, u32) -> bool + Send + 'static) -> impl FnMut(u64, &Packet) -> Verdict + Send + 'static {
    on_segments(move |s, n| if drop(s, n) { Verdict::Drop } else { Verdict::Pass })
}

/// Drops the first transmission of data segments whose sequence number is in `seqs`.
pub fn drop_first(seqs: Vec<u64>) -> impl FnMut(u64, &Packet) -> Verdict + Send + 'static {
    drop_when(move |s, n| n == 1 && seqs.contains(&s.seq))
}

/// Drops the first `times` transmissions of the data segment at `seq`.
pub fn drop_times(seq: u64, times: u32) -> impl FnMut(u64, &Packet) -> Verdict + Send + 'static {
    drop_when(move |s, n| s.seq == seq && n >= 1 && n <= times)
}

/// Sequence number of the k-th full data segment of the server's response (k from 0).
pub fn response_seq(mss: u64, k: u64) -> u64 {
    1 + multiconn_tcp::app::SERVER_FLIGHT + k * mss
}
