//! A tunnel's state (app = "tunnel", [`crate::resolve::Tunnelled`]): the packets it carries
//! for the flows in it, each in one QUIC DATAGRAM frame whose content is the packet itself,
//! and what became of them.
//!
//! A packet that enters is queued as a datagram at the tunnel's end on its side (a tag from
//! one counter for both directions, so tags name packets across the tunnel); it is *open*
//! until the other end hands it over, or the sending end reports it lost (every copy declared
//! lost, RFC 9221 §5: never sent again) or dropped from its send buffer. A packet declared
//! lost that arrives after all (the loss was spurious) is still handed over. A flow in a
//! tunnel has no packet in the network of its own: its packets in the tunnel are counted here,
//! so a udp flow is done only once none is open.

use std::collections::BTreeMap;

/// What a tunnel did with the packets it was given, by the direction of its connection's data
/// (`[0]`: from the tunnel's `from` node, `[1]`: towards it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TunnelCounts {
    /// Packets queued as datagrams.
    pub entered: u64,
    /// Bytes of those datagrams (the HTTP Datagram header and what it carries).
    pub datagram_bytes: u64,
    /// Packets handed over at the other end.
    pub delivered: u64,
    /// Packets whose datagram the sending end declared lost and that never arrived (one
    /// declared lost that arrives later is delivered, no longer lost).
    pub lost: u64,
    /// Packets pushed out of the sending end's datagram buffer before they were sent.
    pub dropped_send_buffer: u64,
    /// Packets the sending end refused (the connection did not take datagrams).
    pub refused: u64,
}

/// One tunnel: its flows and its open packets.
#[derive(Debug, Default)]
pub struct TunnelState {
    /// The flows in it (indices among the flows that run), in the order they were named.
    pub flows: Vec<usize>,
    /// Per flow of `flows`: its packets open in the tunnel.
    open_per_flow: Vec<u64>,
    /// Open packets by tag: the flow's position in `flows`, and the direction.
    open: BTreeMap<u64, (usize, usize)>,
    next_tag: u64,
    /// By direction.
    pub counts: [TunnelCounts; 2],
}

impl TunnelState {
    /// A tunnel carrying `flows`.
    pub fn new(flows: Vec<usize>) -> TunnelState {
        let open_per_flow = vec![0; flows.len()];
        TunnelState { flows, open_per_flow, ..TunnelState::default() }
    }

    /// The tag the next packet's datagram takes.
    pub fn next_tag(&mut self) -> u64 {
        let tag = self.next_tag;
        self.next_tag += 1;
        tag
    }

    /// Flow `flow`'s packet went into datagram `tag` of `bytes` in direction `dir`.
    pub fn entered(&mut self, tag: u64, flow: usize, dir: usize, bytes: u64) {
        let i = self.position(flow);
        self.open.insert(tag, (i, dir));
        self.open_per_flow[i] += 1;
        self.counts[dir].entered += 1;
        self.counts[dir].datagram_bytes += bytes;
    }

    /// Flow `flow`'s packet could not go in (`dir`: its direction).
    pub fn refused(&mut self, dir: usize) {
        self.counts[dir].refused += 1;
    }

    /// Datagram `tag` was handed over at the other end: if the sender had given it up, it
    /// declared it lost (a dropped one never left), and the loss was spurious.
    pub fn delivered(&mut self, tag: u64, dir: usize) {
        self.counts[dir].delivered += 1;
        if self.close(tag).is_none() {
            self.counts[dir].lost -= 1;
        }
    }

    /// The sending end gave datagram `tag` up: declared lost (`lost`) or dropped from its
    /// buffer. Returns the flow whose packet it was, if it was still open.
    pub fn given_up(&mut self, tag: u64, lost: bool) -> Option<usize> {
        let (i, dir) = self.close(tag)?;
        let c = &mut self.counts[dir];
        if lost {
            c.lost += 1;
        } else {
            c.dropped_send_buffer += 1;
        }
        Some(self.flows[i])
    }

    /// Packets still open, by direction (at the end of a run: those in the tunnel when it
    /// ended).
    pub fn open_by_direction(&self) -> [u64; 2] {
        let mut open = [0; 2];
        for &(_, dir) in self.open.values() {
            open[dir] += 1;
        }
        open
    }

    /// Packets of `flow` open in the tunnel.
    pub fn open_of(&self, flow: usize) -> u64 {
        self.open_per_flow[self.position(flow)]
    }

    fn close(&mut self, tag: u64) -> Option<(usize, usize)> {
        let (i, dir) = self.open.remove(&tag)?;
        self.open_per_flow[i] -= 1;
        Some((i, dir))
    }

    fn position(&self, flow: usize) -> usize {
        self.flows.iter().position(|&f| f == flow).expect("a flow of this tunnel")
    }
}
