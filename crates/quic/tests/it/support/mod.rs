//! QUIC helpers for the integration tests, which run a client and a server over
//! multiconn-testkit's [`Pair`] and the simulator's own link models (as TCP's tests do):
//! connection parameters and workloads, the paths the tests use, reading the [`Datagram`] in
//! a packet, the datagrams each end sent with what became of them ([`Sent`]), and drop rules
//! over datagrams expressed as [`Scripted`](multiconn_link::scripted::Scripted) scripts.
//!
//! The links are exact: a datagram of `B` bytes (IP and UDP headers included) takes its
//! serialization time at the link's rate, then the one-way delay. Where a test wants no
//! bottleneck it uses [`fast`], 8 Gbit/s, where serialization takes exactly one nanosecond per
//! byte, so exact times are the delays plus a few nanoseconds per byte crossed. A datagram a
//! test drops is lost after it crossed the link ([`Verdict::Lose`]): it used its serialization
//! time, as a datagram lost further down the path would.

use std::collections::HashMap;

use multiconn_cc::CcKind;
use multiconn_core::units::QueueLimit;
use multiconn_core::{Dur, FlowId, Packet, Rate, Time};
use multiconn_link::builder::LinkConfig;
use multiconn_link::scripted::Verdict;
use multiconn_quic::frame::Frame;
use multiconn_quic::packet::{Datagram, PacketType};
use multiconn_quic::{Connection, QuicFactory};
use multiconn_testkit::{link, Pair, PathConfig, WireEvent};
pub use multiconn_testkit::Route;
use multiconn_transport::profile::TransportKind;
use multiconn_transport::{AppEvent, ConnectionParams, Profile, Role, Workload};

pub use multiconn_testkit::delivered_bytes;

/// A QUIC connection over real links, its ends as concrete types.
pub type QuicPair = Pair<Connection, Connection>;

pub fn ms(v: u64) -> Dur {
    Dur::from_millis(v)
}

pub fn rfc9002() -> Profile {
    Profile::default_for(TransportKind::Quic)
}

pub fn params(workload: Workload, start: Time) -> ConnectionParams {
    ConnectionParams { flow: FlowId(0), start, workload, profile: rfc9002(), cc: CcKind::NewReno, max_packet_size: 1500, resume: false, address_token: false, qlog: false, multipath: None, external_cc: None, external_workload: None, datagrams: None }
}

pub fn download(size: u64) -> Workload {
    Workload::Download { size: Some(size), request_size: 100 }
}

/// The rate of a direction that is never the bottleneck: 8 Gbit/s, one nanosecond per byte.
pub const FAST: Rate = Rate(8_000_000_000);

/// A queue no test fills (the endless downloads' windows are bounded by flow control, 16 MB
/// by default, under 12,000 datagrams).
pub const DEEP: QueueLimit = QueueLimit::Packets(1_000_000);

/// A direction that is not a bottleneck: [`FAST`], a [`DEEP`] queue, `one_way` of delay.
pub fn fast(one_way: Dur) -> LinkConfig {
    link(FAST, one_way, DEEP)
}

/// The nearest a link gets to no serialization at all: the largest rate, where every datagram
/// takes one nanosecond (serialization times round up), whatever its size.
pub const IDEAL: Rate = Rate(u64::MAX);

/// A direction with [`IDEAL`] serialization, a [`DEEP`] queue and `one_way` of delay.
pub fn ideal(one_way: Dur) -> LinkConfig {
    link(IDEAL, one_way, DEEP)
}

/// A bottleneck at `rate` whose queue never fills ([`DEEP`]).
pub fn deep(rate: Rate, one_way: Dur) -> LinkConfig {
    link(rate, one_way, DEEP)
}

/// A bottleneck at `rate` with a drop-tail queue of `backlog` worth of bytes at that rate.
pub fn bounded(rate: Rate, one_way: Dur, backlog: Dur) -> LinkConfig {
    let bytes = (rate.bps() as u128 * backlog.0 as u128 / 8 / 1_000_000_000) as u64;
    link(rate, one_way, QueueLimit::Bytes(bytes))
}

/// The client and server of `p` over `paths` (path 0 first).
pub fn quic_pair(p: &ConnectionParams, paths: &[PathConfig]) -> QuicPair {
    quic_pair_with(&QuicFactory::default(), p, paths)
}

/// Like [`quic_pair`], with the factory's handshake message sizes.
pub fn quic_pair_with(f: &QuicFactory, p: &ConnectionParams, paths: &[PathConfig]) -> QuicPair {
    let (client, server) = f.connect_pair(p).expect("the profile offers the controller");
    Pair::from_configs(Box::new(client), Box::new(server), 1, paths)
}

/// One path of `one_way` delay both ways, at `rate` ([`deep`]) or, for `None`, [`fast`].
pub fn symmetric(one_way: Dur, rate: Option<Rate>) -> PathConfig {
    PathConfig::symmetric(rate.map_or_else(|| fast(one_way), |r| deep(r, one_way)))
}

/// The client and server of `p` over one [`symmetric`] path.
pub fn single_path(p: &ConnectionParams, one_way: Dur, rate: Option<Rate>) -> QuicPair {
    quic_pair(p, &[symmetric(one_way, rate)])
}

/// A script that loses the datagrams for which `lose` holds (given the index of the datagram
/// on the link and the datagram) after they crossed the link.
pub fn lose_when(mut lose: impl FnMut(u64, &Packet) -> bool + Send + 'static) -> impl FnMut(u64, &Packet) -> Verdict + Send + 'static {
    move |i, pkt| if lose(i, pkt) { Verdict::Lose } else { Verdict::Pass }
}

/// One datagram an end put on a link, and what became of it.
#[derive(Clone, Debug)]
pub struct Sent {
    pub sent: Time,
    /// When it reached the far end, or would have, for a datagram lost on the link; when it was
    /// sent, for one the link refused (a full queue).
    pub arrival: Time,
    pub from: Role,
    pub dropped: bool,
    pub pkt: Packet,
}

impl Sent {
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

/// When the first event of a log that `pred` accepts happened.
pub fn first(events: &[(Time, AppEvent)], pred: impl Fn(&AppEvent) -> bool) -> Option<Time> {
    events.iter().find(|(_, e)| pred(e)).map(|(t, _)| *t)
}

/// Runs of a [`QuicPair`] as the tests phrase them, and its wire log read as datagrams.
pub trait Runs {
    /// Handles every wake-up up to `limit` (the clock stays at the last one when the pair
    /// falls idle before).
    fn run_until(&mut self, limit: Time);
    /// Runs until the client reports Finished (returns its time) or `limit`.
    fn run_until_finished(&mut self, limit: Time) -> Option<Time>;
    /// Runs while `go_on` holds (checked after every step), up to `limit`.
    fn run_while(&mut self, limit: Time, go_on: impl FnMut(&Self) -> bool);
    /// Every datagram sent so far, in the order sent, with its fate.
    fn log(&self) -> Vec<Sent>;
    /// Datagrams offered to the links, both ends and every path.
    fn datagrams(&self) -> u64;
}

impl Runs for QuicPair {
    fn run_until(&mut self, limit: Time) {
        self.drive_until_by(limit, |_| false);
    }

    fn run_until_finished(&mut self, limit: Time) -> Option<Time> {
        self.drive_until_by(limit, |h| h.client_finished());
        self.client_event_time(AppEvent::Finished)
    }

    fn run_while(&mut self, limit: Time, mut go_on: impl FnMut(&Self) -> bool) {
        self.drive_until_by(limit, |h| !go_on(h));
    }

    fn log(&self) -> Vec<Sent> {
        let mut out: Vec<Sent> = Vec::new();
        let mut index: HashMap<u64, usize> = HashMap::new();
        for w in &self.wire {
            match w.event {
                WireEvent::Sent => {
                    let from = match w.route {
                        Route::ToServer => Role::Client,
                        Route::ToClient => Role::Server,
                    };
                    index.insert(w.pkt.id, out.len());
                    out.push(Sent { sent: w.at, arrival: w.at, from, dropped: false, pkt: w.pkt.clone() });
                }
                WireEvent::Delivered | WireEvent::Refused(_) | WireEvent::Dropped(_) => {
                    if let Some(&i) = index.get(&w.pkt.id) {
                        out[i].arrival = w.at;
                        out[i].dropped = !w.is_delivered();
                    }
                }
            }
        }
        out
    }

    fn datagrams(&self) -> u64 {
        (0..self.paths.len() as u8).flat_map(|p| [Route::ToClient, Route::ToServer].map(|r| self.counters(p, r).sent)).sum()
    }
}

/// A path of 10 Mbit/s both ways, `one_way` of delay and a drop-tail queue of about 100 ms of
/// backlog (125 kB), like a modest router's.
pub fn router_path(one_way: Dur) -> PathConfig {
    PathConfig::symmetric(bounded(Rate::from_mbps(10.0), one_way, ms(100)))
}
