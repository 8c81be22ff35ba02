//! multiconn-app: the applications at the ends of the flows, sans-IO.
//!
//! * [`workload`]: the requests and responses of the applications over a connection (TCP,
//!   MPTCP, QUIC), written once over a small stream interface the transports implement.
//! * [`messages`]: periodic message sources (seed 004's V2X and background traffic) and the
//!   one-way delay of every message, over the streams an application opens itself
//!   ([`streams`]: QUIC's unidirectional streams) or as datagrams ([`datagrams`]: QUIC's
//!   DATAGRAM frames, RFC 9221).
//! * [`UdpSource`]: a constant-bit-rate source (`Cbr`) or a saturating source (`Bulk`) that
//!   sends whenever the caller offers it a send opportunity (back-pressure from the first link,
//!   as a blocking UDP socket on a directly attached bottleneck would see).
//! * [`UdpSink`]: counts what arrives and when the last byte of a sized transfer arrived.
//!
//! UDP sizes: `packet_size` is the size on the wire; the payload is that minus the IPv4 (20 bytes,
//! RFC 791) and UDP (8 bytes, RFC 768) headers. Goodput counts payload only.

pub mod datagrams;
pub mod messages;
pub mod streams;
pub mod workload;

use multiconn_core::{Dur, FlowId, Packet, Rate, Time, IP_UDP_OVERHEAD};

/// How a source sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Traffic {
    /// Send as fast as the network accepts.
    Bulk,
    /// Send one packet every `packet_size / rate`.
    Cbr(Rate),
}

/// What a UDP source sends, and when.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceConfig {
    /// The flow its packets belong to.
    pub flow: FlowId,
    /// Bulk or constant bit rate.
    pub traffic: Traffic,
    /// Size on the wire, headers included.
    pub packet_size: u32,
    /// When it sends its first packet.
    pub start: Time,
    /// When it stops, if before its size is sent.
    pub stop: Option<Time>,
    /// Payload bytes to send in total; `None` = unlimited.
    pub size: Option<u64>,
}

/// A UDP source: numbered datagrams of the configured size, as fast as the network accepts
/// them (bulk) or at a constant rate.
#[derive(Debug, Clone)]
pub struct UdpSource {
    cfg: SourceConfig,
    seq: u64,
    payload_sent: u64,
    /// For CBR: when the next packet is due.
    next_due: Time,
    /// The ECN field of its packets.
    ecn: multiconn_core::Ecn,
}

impl UdpSource {
    /// A source for `cfg`; its packets must be larger than the UDP/IPv4 headers.
    pub fn new(cfg: SourceConfig) -> UdpSource {
        assert!(cfg.packet_size > IP_UDP_OVERHEAD, "packet size must exceed the UDP/IPv4 headers");
        UdpSource { next_due: cfg.start, cfg, seq: 0, payload_sent: 0, ecn: multiconn_core::Ecn::NotEct }
    }

    /// The same source sending every packet with the ECN field `ecn` (Not-ECT unless set).
    pub fn with_ecn(mut self, ecn: multiconn_core::Ecn) -> UdpSource {
        self.ecn = ecn;
        self
    }

    /// The ECN field of its packets.
    pub fn ecn(&self) -> multiconn_core::Ecn {
        self.ecn
    }

    /// Its configuration.
    pub fn config(&self) -> &SourceConfig {
        &self.cfg
    }

    /// Payload bytes sent so far.
    pub fn payload_sent(&self) -> u64 {
        self.payload_sent
    }

    /// True once the source will never send again at or after `now`.
    pub fn is_finished(&self, now: Time) -> bool {
        self.cfg.size.is_some_and(|s| self.payload_sent >= s) || self.cfg.stop.is_some_and(|stop| now >= stop)
    }

    /// When the source next wants to be asked: for CBR the next packet's due time; for bulk
    /// its start (after that, bulk sending is driven by the first link's back-pressure).
    pub fn poll_timeout(&self, now: Time) -> Option<Time> {
        let due = match self.cfg.traffic {
            Traffic::Bulk if now < self.cfg.start => self.cfg.start,
            Traffic::Bulk => return None,
            Traffic::Cbr(_) => self.next_due,
        };
        if self.is_finished(due) {
            None
        } else {
            Some(due)
        }
    }

    /// Is a packet ready to go at `now`? (For bulk: whenever it is active and has data.)
    pub fn wants_to_send(&self, now: Time) -> bool {
        now >= self.cfg.start && !self.is_finished(now) && now >= self.next_due
    }

    /// Produces the next packet if one is due at `now`; `next_id` is the run-wide packet
    /// counter.
    pub fn poll_transmit(&mut self, now: Time, next_id: &mut u64) -> Option<Packet> {
        if !self.wants_to_send(now) {
            return None;
        }
        let max_payload = (self.cfg.packet_size - IP_UDP_OVERHEAD) as u64;
        let payload = match self.cfg.size {
            Some(total) => max_payload.min(total - self.payload_sent),
            None => max_payload,
        };
        let pkt = Packet {
            id: *next_id,
            flow: self.cfg.flow,
            size: payload as u32 + IP_UDP_OVERHEAD,
            seq: self.seq,
            created: now,
            hop: 0,
            route: 0,
            lower_sn: 0,
            path: 0,
            ecn: self.ecn,
            payload: None,
        };
        *next_id += 1;
        self.seq += 1;
        self.payload_sent += payload;
        if let Traffic::Cbr(rate) = self.cfg.traffic {
            // Due times are computed from the start, not accumulated, so they never drift.
            self.next_due = self.cfg.start + cbr_offset(rate, self.cfg.packet_size, self.seq);
        }
        Some(pkt)
    }
}

/// Offset from the start of the CBR packet number `n` (0-based).
fn cbr_offset(rate: Rate, packet_size: u32, n: u64) -> Dur {
    if rate.bps() == 0 {
        return Dur::MAX;
    }
    let ns = (n as u128 * packet_size as u128 * 8 * 1_000_000_000) / rate.bps() as u128;
    Dur(ns.min(u64::MAX as u128) as u64)
}

/// Payload carried by a packet of this flow.
pub fn payload_of(pkt: &Packet) -> u64 {
    pkt.size.saturating_sub(IP_UDP_OVERHEAD) as u64
}

/// Receives a flow's packets.
#[derive(Debug, Clone, Default)]
pub struct UdpSink {
    /// Packets received.
    pub packets: u64,
    /// Payload bytes received.
    pub payload: u64,
    /// When the last packet arrived.
    pub last_arrival: Option<Time>,
    /// Packets that arrived with a lower sequence number than one already seen.
    pub reordered: u64,
    /// Packets that arrived with the ECN field CE.
    pub ce: u64,
    highest_seq: Option<u64>,
}

impl UdpSink {
    /// Counts `pkt`, arrived at `now`; returns its payload bytes.
    pub fn receive(&mut self, now: Time, pkt: &Packet) -> u64 {
        let payload = payload_of(pkt);
        self.packets += 1;
        self.payload += payload;
        self.last_arrival = Some(now);
        self.ce += u64::from(pkt.ecn == multiconn_core::Ecn::Ce);
        match self.highest_seq {
            Some(h) if pkt.seq < h => self.reordered += 1,
            _ => self.highest_seq = Some(pkt.seq),
        }
        payload
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(traffic: Traffic, size: Option<u64>) -> SourceConfig {
        SourceConfig { flow: FlowId(0), traffic, packet_size: 1500, start: Time::ZERO, stop: None, size }
    }

    #[test]
    fn cbr_spacing_is_exact_and_does_not_drift() {
        // 1500 B at 12 Mbit/s = one packet per millisecond.
        let mut s = UdpSource::new(cfg(Traffic::Cbr(Rate(12_000_000)), None));
        let mut id = 0;
        let mut times = Vec::new();
        while times.len() < 1000 {
            let t = s.poll_timeout(Time::ZERO).unwrap();
            s.poll_transmit(t, &mut id).unwrap();
            assert!(s.poll_transmit(t, &mut id).is_none(), "only one packet per due time");
            times.push(t);
        }
        assert_eq!(times[999], Time(999_000_000));
        // 1 Mbit/s with 1000-byte packets: 8 ms apart, 1e6-th packet exactly at 8000 s.
        assert_eq!(cbr_offset(Rate(1_000_000), 1000, 1_000_000), Dur::from_secs(8000));
    }

    #[test]
    fn sized_bulk_sends_exactly_the_size() {
        let mut s = UdpSource::new(cfg(Traffic::Bulk, Some(10_000)));
        let mut id = 0;
        let mut payload = 0;
        while let Some(p) = s.poll_transmit(Time::ZERO, &mut id) {
            payload += payload_of(&p);
        }
        assert_eq!(payload, 10_000);
        assert_eq!(id, 7); // 6 full packets of 1472 bytes and one of 1168
        assert!(s.is_finished(Time::ZERO));
        assert_eq!(s.poll_timeout(Time::ZERO), None);
    }

    #[test]
    fn nothing_before_start_or_after_stop() {
        let mut c = cfg(Traffic::Bulk, None);
        c.start = Time(100);
        c.stop = Some(Time(200));
        let mut s = UdpSource::new(c);
        let mut id = 0;
        assert!(s.poll_transmit(Time(99), &mut id).is_none());
        assert!(s.poll_transmit(Time(100), &mut id).is_some());
        assert!(s.poll_transmit(Time(200), &mut id).is_none());
    }

    #[test]
    fn sink_counts_reordering() {
        let mut sink = UdpSink::default();
        let mk = |seq| Packet { id: seq, flow: FlowId(0), size: 1500, seq, created: Time::ZERO, hop: 0, route: 0, lower_sn: 0, path: 0, ecn: multiconn_core::Ecn::NotEct, payload: None };
        for seq in [0, 2, 1, 3] {
            sink.receive(Time(seq), &mk(seq));
        }
        assert_eq!(sink.reordered, 1);
        assert_eq!(sink.payload, 4 * 1472);
    }
}
