//! The receiving host's UDP socket: a receive buffer charged per datagram by its kernel memory
//! (skb truesize), as Linux charges `sk_rmem_alloc` against `sk_rcvbuf`, drained by the
//! application at a configurable pace.
//!
//! * Capacity: `net.core.rmem_default` (212992 on 64-bit kernels) unless the application asks
//!   for SO_RCVBUF = r, in which case the kernel grants min(2·r, 2·rmem_max) (socket(7)).
//! * Charge per datagram: `truesize(len)` = the kmalloc size class of
//!   SKB_DATA_ALIGN(NET_SKB_PAD + len) + SKB_DATA_ALIGN(sizeof(skb_shared_info)), plus
//!   SKB_DATA_ALIGN(sizeof(sk_buff)); 2304 bytes for a 1500-byte packet, so the default buffer
//!   holds 92 of them. A fixed per-datagram charge can replace the model.
//! * Admission (`__udp_enqueue_schedule_skb`): a datagram is dropped when the memory already
//!   charged exceeds the capacity, so the buffer may overshoot by one datagram. Drops are
//!   the `Udp: RcvbufErrors` counter.
//! * Draining: as fast as datagrams arrive (default), or at `read_rate` bytes of IP packet per
//!   second and/or `read_cost` per datagram (an application bound by its per-packet CPU cost,
//!   like aioquic).

use multiconn_core::{Dur, Packet, Rate, Time};
use std::collections::VecDeque;

/// `net.core.rmem_default` and `rmem_max` on typical 64-bit kernels: 256 × SKB_TRUESIZE(256).
pub const RMEM_DEFAULT: u64 = 212_992;

const NET_SKB_PAD: u64 = 64;
const SKB_SHARED_INFO: u64 = 320;
const SK_BUFF: u64 = 256;

fn align64(x: u64) -> u64 {
    x.div_ceil(64) * 64
}

/// Kernel memory charged for a received packet of `len` bytes (IP packet).
pub fn truesize(len: u32) -> u64 {
    let data = align64(NET_SKB_PAD + len as u64) + SKB_SHARED_INFO;
    let slab = if data <= 8192 { data.next_power_of_two().max(32) } else { data.div_ceil(4096) * 4096 };
    slab + SK_BUFF
}

/// How the receiving host's UDP socket is sized, charged and drained.
#[derive(Clone, Debug, PartialEq)]
pub struct UdpSocketConfig {
    /// SO_RCVBUF requested by the application; `None` keeps `rmem_default`.
    pub requested: Option<u64>,
    /// `net.core.rmem_default`: the capacity without SO_RCVBUF, bytes of truesize.
    pub rmem_default: u64,
    /// `net.core.rmem_max`: caps a requested SO_RCVBUF (the kernel grants at most twice it),
    /// bytes.
    pub rmem_max: u64,
    /// Fixed charge per datagram instead of the truesize model.
    pub charge_per_datagram: Option<u64>,
    /// Application read rate (IP bytes per second); `None` = unlimited.
    pub read_rate: Option<Rate>,
    /// Application time per datagram read; zero = none.
    pub read_cost: Dur,
}

impl Default for UdpSocketConfig {
    fn default() -> Self {
        UdpSocketConfig { requested: None, rmem_default: RMEM_DEFAULT, rmem_max: RMEM_DEFAULT, charge_per_datagram: None, read_rate: None, read_cost: Dur::ZERO }
    }
}

impl UdpSocketConfig {
    /// The buffer the kernel actually grants, bytes of truesize.
    pub fn capacity(&self) -> u64 {
        match self.requested {
            Some(r) => (2 * r).min(2 * self.rmem_max),
            None => self.rmem_default,
        }
    }

    fn charge(&self, len: u32) -> u64 {
        self.charge_per_datagram.unwrap_or_else(|| truesize(len))
    }

    /// Nothing limits the reader: datagrams pass straight through.
    pub fn is_instant(&self) -> bool {
        self.read_rate.is_none() && self.read_cost == Dur::ZERO
    }
}

/// A UDP socket's receive buffer: admits datagrams while the memory charged is within its
/// capacity and hands them to the application at the application's pace.
#[derive(Debug)]
pub struct UdpSocket {
    cfg: UdpSocketConfig,
    capacity: u64,
    charged: u64,
    queue: VecDeque<(Packet, u64)>,
    /// The application is busy with the previous datagram until then.
    reader_free_at: Time,
    drops: u64,
    peak_charged: u64,
}

impl UdpSocket {
    /// An empty socket with the capacity `cfg` grants.
    pub fn new(cfg: UdpSocketConfig) -> UdpSocket {
        UdpSocket { capacity: cfg.capacity(), cfg, charged: 0, queue: VecDeque::new(), reader_free_at: Time::ZERO, drops: 0, peak_charged: 0 }
    }

    /// The buffer the kernel granted, bytes of truesize.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    /// Memory charged now, bytes of truesize.
    pub fn charged(&self) -> u64 {
        self.charged
    }
    /// Most memory charged at once so far, bytes of truesize.
    pub fn peak_charged(&self) -> u64 {
        self.peak_charged
    }
    /// Datagrams waiting for the application.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }
    /// Datagrams refused because the buffer was full (`RcvbufErrors`).
    pub fn drops(&self) -> u64 {
        self.drops
    }

    /// A datagram arrives from the network. `Err` returns it when the buffer is full.
    pub fn offer(&mut self, _now: Time, pkt: Packet) -> Result<(), Packet> {
        if self.charged > self.capacity {
            self.drops += 1;
            return Err(pkt);
        }
        let c = self.cfg.charge(pkt.size);
        self.charged += c;
        self.peak_charged = self.peak_charged.max(self.charged);
        self.queue.push_back((pkt, c));
        Ok(())
    }

    /// The next datagram the application reads at `now`, if it is free to read one.
    pub fn poll_read(&mut self, now: Time) -> Option<Packet> {
        if now < self.reader_free_at {
            return None;
        }
        let (pkt, c) = self.queue.pop_front()?;
        self.charged -= c;
        let mut busy = self.cfg.read_cost;
        if let Some(rate) = self.cfg.read_rate {
            busy = busy + rate.tx_time(pkt.size as u64);
        }
        self.reader_free_at = now + busy;
        Some(pkt)
    }

    /// When the application can read the next queued datagram.
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.queue.is_empty() {
            None
        } else {
            Some(self.reader_free_at)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use multiconn_core::FlowId;

    fn pkt(id: u64, size: u32) -> Packet {
        Packet { id, flow: FlowId(0), size, seq: id, created: Time::ZERO, hop: 0, route: 0, lower_sn: 0, path: 0, ecn: multiconn_core::Ecn::NotEct, payload: None }
    }

    #[test]
    fn default_buffer_is_256_small_truesizes_and_holds_92_full_packets() {
        assert_eq!(RMEM_DEFAULT, 256 * 832);
        assert_eq!(truesize(1500), 2304);
        let mut s = UdpSocket::new(UdpSocketConfig::default());
        let mut accepted = 0;
        for i in 0..200 {
            if s.offer(Time::ZERO, pkt(i, 1500)).is_ok() {
                accepted += 1;
            }
        }
        // Admission checks the charge before adding, so one datagram overshoots: ⌊212992/2304⌋ + 1.
        assert_eq!(accepted, 212_992 / 2304 + 1);
        assert_eq!(s.drops(), 200 - accepted);
    }

    #[test]
    fn so_rcvbuf_is_doubled_and_capped_at_twice_rmem_max() {
        let c = UdpSocketConfig { requested: Some(100_000), ..Default::default() };
        assert_eq!(c.capacity(), 200_000);
        let c = UdpSocketConfig { requested: Some(25_000_000), ..Default::default() };
        assert_eq!(c.capacity(), 2 * RMEM_DEFAULT);
        let c = UdpSocketConfig { requested: Some(25_000_000), rmem_max: 26_214_400, ..Default::default() };
        assert_eq!(c.capacity(), 50_000_000);
    }

    #[test]
    fn a_rate_limited_reader_spaces_reads_by_the_packet_time() {
        let cfg = UdpSocketConfig { read_rate: Some(Rate(12_000_000)), ..Default::default() };
        let mut s = UdpSocket::new(cfg);
        for i in 0..3 {
            s.offer(Time::ZERO, pkt(i, 1500)).unwrap();
        }
        assert!(s.poll_read(Time::ZERO).is_some());
        // 1500 B at 12 Mbit/s = 1 ms.
        assert_eq!(s.poll_timeout(), Some(Time(1_000_000)));
        assert!(s.poll_read(Time(999_999)).is_none());
        assert_eq!(s.poll_read(Time(1_000_000)).unwrap().id, 1);
        assert_eq!(s.charged(), 2304);
    }
}
