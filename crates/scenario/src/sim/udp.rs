//! UDP flows: a saturating (bulk) or constant-bit-rate source at `from`, a sink at `to`.
//!
//! A bulk source is refilled whenever its first link has room: at its start, and after each
//! service of that link, in round-robin order among the flows sharing it (the back-pressure
//! of ADR 0001 #2). A CBR source sends on its own timer. A flow is done when its source has
//! finished and nothing of it is left in the network.
//!
//! A first link that loses what it is offered at its door never fills, so back-pressure
//! alone would have a bulk source offer packets without end at one instant. Such a source is
//! *paced* instead, as a real sender (iperf3 -u at an unlimited rate) into netem `loss 100%`
//! sends as fast as its interface lets it: one packet per serialization time of the first
//! link at its mean rate ([`UdpFlow::pace`]), each offered to the link, which loses it. It
//! starts pacing when a refill at one instant
//!
//! * finds a link that certainly loses every packet ([`multiconn_link::Link::loses_everything`]:
//!   a loss of 1, a Gilbert–Elliott chain losing all in both states, a loss trace of all `1`)
//!   while the source has at least `MAX_BULK_BURST` (2 000 000) packets left to send, or
//! * has sent `MAX_BULK_BURST` (2 000 000) packets without filling it (a loss just below 1);
//!
//! and goes back to plain refilling as soon as a paced packet is queued (a loss below 1 let
//! it through) or the link has no room (full, or down: its return wakes the source as usual).
//! Either way a refill at one instant without pacing would have reached `MAX_BULK_BURST`,
//! where a run used to end as stalled, so every run that completed before pacing gives the
//! same results with it. Pacing keeps virtual time moving (at least 1 ns per packet), so a
//! bulk source never stalls a run; the watchdog (`--stall-limit`) guards the rest.

use crate::resolve::Flow;
use crate::schema::AppKind;
use multiconn_app::{SourceConfig, Traffic, UdpSink, UdpSource};
use multiconn_core::{Dur, FlowId, Time};
use multiconn_engine::TimerId;

/// The most packets a bulk udp source sends at one instant: twice the largest queue it may
/// fill ([`crate::resolve::MAX_BULK_QUEUE_PACKETS`]); more means that its first link loses
/// what it is offered (a loss of 1, or just below) and would never fill: the source is then
/// paced (see the module's header).
pub(super) const MAX_BULK_BURST: u64 = 2 * crate::resolve::MAX_BULK_QUEUE_PACKETS;

/// The two ends of a UDP flow.
pub struct UdpFlow {
    /// The source at `from`: bulk or CBR.
    pub source: UdpSource,
    /// The sink at `to`, counting what arrives.
    pub sink: UdpSink,
    /// The source's pending wake-up (cancelled when it changes).
    pub(super) timer: Option<(Time, TimerId)>,
    /// A bulk source's pace while its first link loses everything: the time its first link
    /// takes to serialize one of its packets at the link's mean rate, rounded up to whole
    /// nanoseconds (at least 1 ns); `None` for a CBR source or a link that never carries
    /// anything (a paced source then falls silent).
    pub pace: Option<Dur>,
    /// While a bulk source is paced: when it sends its next packet.
    pub(super) paced_next: Option<Time>,
}

impl UdpFlow {
    /// The ends of UDP flow `f`, whose id is `flow`: a bulk source (a CBR one for app = "cbr")
    /// and a sink.
    ///
    /// `line_bps` is the mean rate of the flow's first link in bit/s (0 when it has none),
    /// which sets a bulk source's [`UdpFlow::pace`].
    pub fn new(flow: FlowId, f: &Flow, line_bps: f64) -> UdpFlow {
        let traffic = match f.app {
            AppKind::Bulk | AppKind::Requests | AppKind::Messages | AppKind::Datagrams | AppKind::Tunnel => Traffic::Bulk,
            AppKind::Cbr => Traffic::Cbr(f.cbr_rate.expect("validated: cbr flows have a rate")),
        };
        let source = UdpSource::new(SourceConfig { flow, traffic, packet_size: f.packet_size, start: f.start, stop: f.stop, size: f.size }).with_ecn(f.ecn);
        let pace = match traffic {
            Traffic::Bulk => line_time(line_bps, f.packet_size),
            Traffic::Cbr(_) => None,
        };
        UdpFlow { source, sink: UdpSink::default(), timer: None, pace, paced_next: None }
    }
}


/// The time a packet of `size` bytes takes on a line of `bps` bit/s, rounded up to whole
/// nanoseconds and at least 1 ns; `None` for a line that never carries anything.
fn line_time(bps: f64, size: u32) -> Option<Dur> {
    if bps.is_nan() || bps <= 0.0 {
        return None;
    }
    let ns = (f64::from(size) * 8e9 / bps).ceil();
    Some(Dur(if ns >= u64::MAX as f64 { u64::MAX } else { (ns as u64).max(1) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pace_is_one_serialization_time_rounded_up() {
        assert_eq!(line_time(10e9, 1500), Some(Dur(1200)));
        assert_eq!(line_time(40e6, 1500), Some(Dur(300_000)));
        assert_eq!(line_time(3e9, 1000), Some(Dur(2667)));
        assert_eq!(line_time(1e15, 40), Some(Dur(1)));
        assert_eq!(line_time(0.0, 1500), None);
    }
}
