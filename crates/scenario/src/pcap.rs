//! Packet captures of a run (`run.pcap`; docs/pcap.md): one pcapng file per flow end, as
//! tcpdump on that host would have written it, with real IPv4, TCP and UDP headers built
//! from what the simulated packets carry, so that Wireshark's TCP analysis, stream graphs
//! and I/O graphs work on them.
//!
//! * Where: a host's capture holds the packets its end of one flow sends (at the instant it
//!   hands them to the network, those the network then loses included) and the packets that
//!   reach it (at the instant they arrive, before a QUIC client's socket buffer). Both
//!   directions of the conversation are seen from one place, so Wireshark's RTT, window and
//!   tcptrace graphs are those of that host.
//! * Headers: IPv4 (RFC 791: version 4, IHL 5, DSCP 0, the ECN field as the packet carries it at that end (RFC 3168 §5: a CE mark shows
//!   at the receiver only), DF set, TTL 64 at
//!   the sender less one per hop at the receiver, identification = the packet's run-unique id
//!   modulo 2^16, so both ends' captures of one packet match), TCP (RFC 9293 §3.1: sequence
//!   and acknowledgment numbers modulo 2^32 with the model's initial sequence number 0, SYN
//!   and ACK flags, the window field as sent; options: MSS, SACK-permitted, window scale in
//!   SYNs, timestamps (RFC 7323 §3, TSval in milliseconds of simulated time plus one, as
//!   Linux's 1 kHz clock), SACK blocks (RFC 2018 §3, RFC 2883 D-SACK as the model put them),
//!   MPTCP MP_CAPABLE, MP_JOIN and DSS (RFC 8684 §3.1–3.3; keys, tokens and HMACs are zero)
//!   and NOP padding to the option space the model counted), UDP (RFC 768). Checksums are
//!   those of the whole packet with a zero-filled payload (RFC 1071).
//! * Bytes: only the headers are captured; the payload is cut as a snap length would cut it.
//!   The original length of each packet is its simulated size, so rates are the real ones.
//! * QUIC datagrams are UDP; the QUIC packets in each (type and packet number, per RFC 9000
//!   §17 numbering) are in the packet's pcapng comment: `quic 1RTT pn=42` (coalesced packets
//!   separated by `; `), and `path_id=N` for multipath QUIC.
//! * File format: pcapng (draft-ietf-opsawg-pcapng): a section header, one interface
//!   (LINKTYPE_IPV4, if_tsresol = 9: nanoseconds), enhanced packet blocks stamped with the
//!   simulated instant (0 = the start of the run), and at the end an interface statistics
//!   block: packets seen (isb_ifrecv), packets left out at the size limit (isb_ifdrop) and a
//!   comment saying why. Written with the `pcap-file` crate, little-endian, so the same run
//!   gives the same bytes on every machine.
//! * Addresses: node `i` of the scenario's nodes sorted by name has 198.18.0.0 + 256·i + 1 +
//!   p on path `p` (RFC 2544's benchmarking block 198.18.0.0/15); flow `k` (file order
//!   among the flows that run) has port 38000 + k mod 3000 at its `from` end and
//!   50000 + k mod 3000 at its `to` end.
//!
//! Capturing only observes: nothing a model sees depends on it.

use std::borrow::Cow;
use std::time::Duration;

use multiconn_core::{Packet, Time};
use multiconn_quic::packet::Datagram;
use multiconn_tcp::mptcp::option::{HandshakeOption, MptcpSegment};
use multiconn_tcp::Segment;
use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};
use pcap_file::pcapng::blocks::interface_statistics::{InterfaceStatisticsBlock, InterfaceStatisticsOption};
use pcap_file::pcapng::blocks::section_header::{SectionHeaderBlock, SectionHeaderOption};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::{DataLink, Endianness};

use crate::resolve::{Flow, PcapSpec};

/// 198.18.0.0, the start of the address plan's block.
pub const ADDRESS_BASE: u32 = 0xC612_0000;
/// The port of flow 0's `from` end.
pub const FROM_PORT_BASE: u16 = 38000;
/// The port of flow 0's `to` end.
pub const TO_PORT_BASE: u16 = 50000;
/// Ports repeat after this many flows.
pub const PORT_SPAN: u16 = 3000;
/// The interface's snap length: every captured packet is its headers, at most 20 + 60 bytes.
pub const SNAPLEN: u32 = 128;
/// Room kept under a file's size limit for its closing statistics block.
const CLOSING_ROOM: u64 = 256;
/// TTL of a packet leaving its host.
const TTL: u8 = 64;

/// IP protocol numbers.
const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;

/// The address of node `node` (its index in the plan) on path `path`.
pub fn address(node: usize, path: u8) -> [u8; 4] {
    (ADDRESS_BASE + 256 * node as u32 + 1 + path as u32).to_be_bytes()
}

/// The ports of flow `flow`'s `from` and `to` ends.
pub fn ports(flow: usize) -> (u16, u16) {
    let k = (flow % PORT_SPAN as usize) as u16;
    (FROM_PORT_BASE + k, TO_PORT_BASE + k)
}

/// One finished capture file.
#[derive(Debug, Clone, PartialEq)]
pub struct PcapFile {
    /// `<flow>_<node>.pcapng`.
    pub file_name: String,
    /// The whole file.
    pub bytes: Vec<u8>,
    /// Packets written.
    pub packets: u64,
    /// Packets left out because the file reached its size limit.
    pub omitted: u64,
}

/// One file being written.
struct FileWriter {
    name: String,
    writer: PcapNgWriter<Vec<u8>>,
    packets: u64,
    omitted: u64,
    first_omitted: Option<Time>,
    last: Time,
}

impl FileWriter {
    fn new(name: String, interface: String, description: String) -> FileWriter {
        let section = SectionHeaderBlock {
            endianness: Endianness::Little,
            options: vec![SectionHeaderOption::UserApplication(Cow::Borrowed("multiconn"))],
            ..Default::default()
        };
        let mut writer = PcapNgWriter::with_section_header(Vec::new(), section).expect("writing to memory cannot fail");
        let idb = InterfaceDescriptionBlock {
            linktype: DataLink::IPV4,
            snaplen: SNAPLEN,
            options: vec![
                InterfaceDescriptionOption::IfName(Cow::Owned(interface)),
                InterfaceDescriptionOption::IfDescription(Cow::Owned(description)),
                InterfaceDescriptionOption::IfTsResol(9),
            ],
        };
        writer.write_pcapng_block(idb).expect("writing to memory cannot fail");
        FileWriter { name, writer, packets: 0, omitted: 0, first_omitted: None, last: Time::ZERO }
    }

    fn len(&self) -> u64 {
        self.writer.get_ref().len() as u64
    }

    /// Writes one packet unless the file would pass `max` bytes.
    fn write(&mut self, at: Time, data: &[u8], original_len: u32, comment: Option<String>, max: u64) {
        self.last = at;
        let block = 32 + data.len().next_multiple_of(4) as u64 + comment.as_ref().map_or(0, |c| 4 + c.len().next_multiple_of(4) as u64 + 4);
        if self.omitted > 0 || self.len() + block + CLOSING_ROOM > max {
            self.omitted += 1;
            self.first_omitted.get_or_insert(at);
            return;
        }
        let epb = EnhancedPacketBlock {
            interface_id: 0,
            timestamp: Duration::from_nanos(at.0),
            original_len,
            data: Cow::Borrowed(data),
            options: comment.map(|c| vec![EnhancedPacketOption::Comment(Cow::Owned(c))]).unwrap_or_default(),
        };
        self.writer.write_pcapng_block(epb).expect("writing to memory cannot fail");
        self.packets += 1;
    }

    fn finish(mut self, max_mb: f64) -> PcapFile {
        let mut options = vec![
            InterfaceStatisticsOption::IsbIfRecv(self.packets + self.omitted),
            InterfaceStatisticsOption::IsbIfDrop(self.omitted),
        ];
        if let Some(t) = self.first_omitted {
            options.insert(
                0,
                InterfaceStatisticsOption::Comment(Cow::Owned(format!(
                    "size limit run.pcap_max_mb = {max_mb} reached at {:.9} s: the last {} packets are not in this file",
                    t.as_secs_f64(),
                    self.omitted
                ))),
            );
        }
        let isb = InterfaceStatisticsBlock { interface_id: 0, timestamp: self.last.0, options };
        self.writer.write_pcapng_block(isb).expect("writing to memory cannot fail");
        PcapFile { file_name: self.name, bytes: self.writer.into_inner(), packets: self.packets, omitted: self.omitted }
    }
}

/// What the capture knows of one captured flow.
struct FlowPlan {
    /// Files of the `from` and `to` ends.
    files: [usize; 2],
    /// Node indices of the `from` and `to` ends.
    nodes: [usize; 2],
    /// Ports of the `from` and `to` ends.
    ports: [u16; 2],
    /// Which paths are captured (bit `p`).
    paths: u64,
}

/// The captures of one run.
pub struct Capture {
    files: Vec<FileWriter>,
    flows: Vec<Option<FlowPlan>>,
    max_bytes: u64,
    /// Scratch space for one packet's headers.
    buf: Vec<u8>,
}

impl Capture {
    /// The captures `spec` asks for, of `flows` (the run's flows, in order).
    pub fn new(spec: &PcapSpec, flows: &[Flow]) -> Capture {
        let mut files = Vec::new();
        let plans = flows
            .iter()
            .zip(&spec.paths)
            .enumerate()
            .map(|(k, (f, paths))| {
                if paths.is_empty() {
                    return None;
                }
                let nodes = [spec.node_index(&f.from), spec.node_index(&f.to)];
                let (from_port, to_port) = ports(k);
                let mut ends = [0; 2];
                for (end, (node, peer)) in [(&f.from, &f.to), (&f.to, &f.from)].into_iter().enumerate() {
                    ends[end] = files.len();
                    let ip = address(nodes[end], 0);
                    let description = format!("flow {} at {node} ({}.{}.{}.{}), with {peer}", f.name, ip[0], ip[1], ip[2], ip[3]);
                    files.push(FileWriter::new(format!("{}_{node}.pcapng", f.name), format!("{}-{node}", f.name), description));
                }
                Some(FlowPlan { files: ends, nodes, ports: [from_port, to_port], paths: paths.iter().fold(0, |m, &p| m | 1 << p) })
            })
            .collect();
        Capture { files, flows: plans, max_bytes: spec.max_bytes, buf: Vec::with_capacity(128) }
    }

    /// Flow end of `pkt`'s sender handed it to the network at `now`.
    pub fn sent(&mut self, now: Time, pkt: &Packet) {
        self.record(now, pkt, false);
    }

    /// `pkt` reached the end of its route at `now`.
    pub fn arrived(&mut self, now: Time, pkt: &Packet) {
        self.record(now, pkt, true);
    }

    fn record(&mut self, now: Time, pkt: &Packet, arrived: bool) {
        let Some(Some(plan)) = self.flows.get(pkt.flow.0 as usize) else { return };
        if pkt.path >= 64 || plan.paths & (1 << pkt.path) == 0 {
            return;
        }
        // Route 0 goes from `from` to `to`; any other back.
        let (src, dst) = if pkt.route == 0 { (0, 1) } else { (1, 0) };
        let file = plan.files[if arrived { dst } else { src }];
        let ends = Ends {
            src: address(plan.nodes[src], pkt.path),
            dst: address(plan.nodes[dst], pkt.path),
            sport: plan.ports[src],
            dport: plan.ports[dst],
            ttl: if arrived { TTL.saturating_sub(pkt.hop.min(63) as u8) } else { TTL },
            id: pkt.id as u16,
            ecn: pkt.ecn.bits(),
        };
        let comment = headers(&mut self.buf, pkt, &ends);
        let max = self.max_bytes;
        self.files[file].write(now, &self.buf, pkt.size, comment, max);
    }

    /// The files, in order of the flows, `from` end first; `max_mb` names the limit in their
    /// closing comments.
    pub fn finish(self, max_mb: f64) -> Vec<PcapFile> {
        self.files.into_iter().map(|f| f.finish(max_mb)).collect()
    }
}

/// The IP and port numbers of one packet.
pub struct Ends {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub sport: u16,
    pub dport: u16,
    pub ttl: u8,
    pub id: u16,
    /// The ECN field's two bits (RFC 3168 §5), as the packet carried them at this end.
    pub ecn: u8,
}

/// Writes `pkt`'s IPv4 and TCP or UDP headers into `buf` (cleared first); returns the
/// packet's comment (QUIC packet numbers), if any.
pub fn headers(buf: &mut Vec<u8>, pkt: &Packet, ends: &Ends) -> Option<String> {
    buf.clear();
    let payload = pkt.payload.as_ref();
    if let Some(seg) = payload.and_then(|p| p.get::<Segment>()) {
        tcp(buf, pkt.size, seg, None, ends);
        return None;
    }
    if let Some(seg) = payload.and_then(|p| p.get::<MptcpSegment>()) {
        tcp(buf, pkt.size, &seg.tcp, Some(seg), ends);
        return None;
    }
    udp(buf, pkt.size, ends);
    payload.and_then(|p| p.get::<Datagram>()).map(quic_comment)
}

fn quic_comment(dg: &Datagram) -> String {
    let mut s = String::with_capacity(24);
    for (i, p) in dg.packets().enumerate() {
        if i > 0 {
            s.push_str("; ");
        }
        s.push_str("quic ");
        s.push_str(p.ptype.qlog_name());
        s.push_str(" pn=");
        s.push_str(&p.pn.to_string());
    }
    if dg.path_id != 0 {
        s.push_str("; path_id=");
        s.push_str(&dg.path_id.to_string());
    }
    s
}

/// The IPv4 header of a packet of `total` bytes.
fn ipv4(buf: &mut Vec<u8>, total: u32, proto: u8, ends: &Ends) {
    let total = total.min(u16::MAX as u32) as u16;
    let start = buf.len();
    buf.extend_from_slice(&[0x45, ends.ecn & 0b11]);
    buf.extend_from_slice(&total.to_be_bytes());
    buf.extend_from_slice(&ends.id.to_be_bytes());
    buf.extend_from_slice(&[0x40, 0x00, ends.ttl, proto, 0, 0]);
    buf.extend_from_slice(&ends.src);
    buf.extend_from_slice(&ends.dst);
    let sum = checksum(sum_words(0, &buf[start..start + 20]));
    buf[start + 10..start + 12].copy_from_slice(&sum.to_be_bytes());
}

/// The pseudo-header's share of a TCP or UDP checksum (RFC 9293 §3.1, RFC 768).
fn pseudo_header(ends: &Ends, proto: u8, len: u32) -> u32 {
    let mut sum = sum_words(0, &ends.src);
    sum = sum_words(sum, &ends.dst);
    sum + proto as u32 + (len >> 16) + (len & 0xffff)
}

fn udp(buf: &mut Vec<u8>, size: u32, ends: &Ends) {
    ipv4(buf, size, PROTO_UDP, ends);
    let len = size.saturating_sub(20).max(8);
    let start = buf.len();
    buf.extend_from_slice(&ends.sport.to_be_bytes());
    buf.extend_from_slice(&ends.dport.to_be_bytes());
    buf.extend_from_slice(&(len.min(u16::MAX as u32) as u16).to_be_bytes());
    buf.extend_from_slice(&[0, 0]);
    // The payload is zeros: only the header and the pseudo-header add to the sum.
    let mut sum = checksum(sum_words(pseudo_header(ends, PROTO_UDP, len), &buf[start..start + 8]));
    if sum == 0 {
        sum = 0xffff;
    }
    buf[start + 6..start + 8].copy_from_slice(&sum.to_be_bytes());
}

/// TCP option kinds (IANA).
const OPT_NOP: u8 = 1;
const OPT_MSS: u8 = 2;
const OPT_WSCALE: u8 = 3;
const OPT_SACK_PERMITTED: u8 = 4;
const OPT_SACK: u8 = 5;
const OPT_TIMESTAMPS: u8 = 8;
const OPT_MPTCP: u8 = 30;
/// TCP option space.
const MAX_OPTIONS: usize = 40;

/// A 64-bit model timestamp (virtual nanoseconds plus one; 0: nothing) as a 32-bit TSval
/// of a 1 kHz clock.
fn ts32(v: u64) -> u32 {
    if v == 0 {
        0
    } else {
        ((v - 1) / 1_000_000 + 1) as u32
    }
}

fn tcp(buf: &mut Vec<u8>, size: u32, seg: &Segment, mptcp: Option<&MptcpSegment>, ends: &Ends) {
    ipv4(buf, size, PROTO_TCP, ends);
    let start = buf.len();
    buf.extend_from_slice(&ends.sport.to_be_bytes());
    buf.extend_from_slice(&ends.dport.to_be_bytes());
    buf.extend_from_slice(&(seg.seq as u32).to_be_bytes());
    let ack = if seg.flags.ack { seg.ack as u32 } else { 0 };
    buf.extend_from_slice(&ack.to_be_bytes());
    buf.extend_from_slice(&[0, u8::from(seg.flags.syn) << 1 | u8::from(seg.flags.ack) << 4]);
    buf.extend_from_slice(&seg.window.to_be_bytes());
    buf.extend_from_slice(&[0, 0, 0, 0]);
    // Options.
    if seg.flags.syn {
        if let Some(mss) = seg.mss {
            buf.extend_from_slice(&[OPT_MSS, 4]);
            buf.extend_from_slice(&(mss.min(u16::MAX as u32) as u16).to_be_bytes());
        }
        if seg.sack_permitted {
            buf.extend_from_slice(&[OPT_SACK_PERMITTED, 2]);
        }
        if let Some(ts) = seg.ts {
            timestamps(buf, ts.tsval, ts.tsecr, false);
        }
        if let Some(shift) = seg.wscale {
            buf.extend_from_slice(&[OPT_NOP, OPT_WSCALE, 3, shift]);
        }
    } else {
        if let Some(ts) = seg.ts {
            timestamps(buf, ts.tsval, ts.tsecr, true);
        }
        if !seg.sack.is_empty() {
            buf.extend_from_slice(&[OPT_NOP, OPT_NOP, OPT_SACK, 2 + 8 * seg.sack.len() as u8]);
            for &(l, r) in seg.sack.as_slice() {
                buf.extend_from_slice(&(l as u32).to_be_bytes());
                buf.extend_from_slice(&(r as u32).to_be_bytes());
            }
        }
    }
    if let Some(m) = mptcp {
        mptcp_options(buf, m);
    }
    // Pad to the option space the model counted (its wire size), within TCP's 40 bytes.
    let counted = size.saturating_sub(40 + seg.len) as usize;
    let target = counted.min(MAX_OPTIONS).max((buf.len() - start - 20).next_multiple_of(4)).min(MAX_OPTIONS);
    buf.truncate(start + 20 + target);
    while buf.len() < start + 20 + target {
        buf.push(OPT_NOP);
    }
    let header = buf.len() - start;
    buf[start + 12] = ((header / 4) as u8) << 4;
    let len = size.saturating_sub(20);
    let sum = checksum(sum_words(pseudo_header(ends, PROTO_TCP, len), &buf[start..]));
    buf[start + 16..start + 18].copy_from_slice(&sum.to_be_bytes());
}

fn timestamps(buf: &mut Vec<u8>, tsval: u64, tsecr: u64, nops: bool) {
    if nops {
        buf.extend_from_slice(&[OPT_NOP, OPT_NOP]);
    }
    buf.extend_from_slice(&[OPT_TIMESTAMPS, 10]);
    buf.extend_from_slice(&ts32(tsval).to_be_bytes());
    buf.extend_from_slice(&ts32(tsecr).to_be_bytes());
}

/// MPTCP options (RFC 8684 §3): the handshake option, then a DSS option with the DATA_ACK
/// and the mapping, 64-bit as Linux sends them, without checksum. Keys, tokens, nonces and
/// HMACs are zeros (the model has none).
fn mptcp_options(buf: &mut Vec<u8>, m: &MptcpSegment) {
    const CAPABLE: u8 = 0x00;
    const JOIN: u8 = 0x10;
    const DSS: u8 = 0x20;
    // MP_CAPABLE version 1, flag H (HMAC-SHA256).
    let capable = |buf: &mut Vec<u8>, len: u8| {
        buf.extend_from_slice(&[OPT_MPTCP, len, CAPABLE | 1, 0x01]);
        buf.resize(buf.len() + len as usize - 4, 0);
    };
    let data = m.tcp.len > 0;
    match m.handshake {
        Some(HandshakeOption::CapableSyn) => capable(buf, 4),
        Some(HandshakeOption::CapableSynAck) => capable(buf, 12),
        Some(HandshakeOption::CapableAck) => {
            if data {
                capable(buf, 22);
                let n = buf.len();
                buf[n - 2..].copy_from_slice(&(m.tcp.len.min(u16::MAX as u32) as u16).to_be_bytes());
            } else {
                capable(buf, 20);
            }
            // The mapping is implied by MP_CAPABLE with data; a DATA_ACK still needs a DSS.
            if let Some(da) = m.data_ack {
                dss(buf, DSS, Some(da.ack), None);
            }
            return;
        }
        Some(HandshakeOption::JoinSyn) => {
            buf.extend_from_slice(&[OPT_MPTCP, 12, JOIN, 0]);
            buf.resize(buf.len() + 8, 0);
        }
        Some(HandshakeOption::JoinSynAck) => {
            buf.extend_from_slice(&[OPT_MPTCP, 16, JOIN, 0]);
            buf.resize(buf.len() + 12, 0);
        }
        Some(HandshakeOption::JoinAck) => {
            buf.extend_from_slice(&[OPT_MPTCP, 24, JOIN, 0]);
            buf.resize(buf.len() + 20, 0);
        }
        None => {}
    }
    let mapping = m.mapping.filter(|_| data);
    if m.data_ack.is_some() || mapping.is_some() {
        dss(buf, DSS, m.data_ack.map(|d| d.ack), mapping.map(|mp| (mp.dsn, mp.ssn, mp.len)));
    }
}

/// A DSS option: flags A and a (64-bit DATA_ACK), M and m (64-bit DSN).
fn dss(buf: &mut Vec<u8>, subtype: u8, data_ack: Option<u64>, mapping: Option<(u64, u64, u32)>) {
    let len = 4 + if data_ack.is_some() { 8 } else { 0 } + if mapping.is_some() { 14 } else { 0 };
    let flags = if data_ack.is_some() { 0x03 } else { 0 } | if mapping.is_some() { 0x0c } else { 0 };
    buf.extend_from_slice(&[OPT_MPTCP, len, subtype, flags]);
    if let Some(a) = data_ack {
        buf.extend_from_slice(&a.to_be_bytes());
    }
    if let Some((dsn, ssn, l)) = mapping {
        buf.extend_from_slice(&dsn.to_be_bytes());
        buf.extend_from_slice(&(ssn as u32).to_be_bytes());
        buf.extend_from_slice(&(l.min(u16::MAX as u32) as u16).to_be_bytes());
    }
}

/// Adds `bytes` as big-endian 16-bit words to `sum`.
fn sum_words(mut sum: u32, bytes: &[u8]) -> u32 {
    let mut chunks = bytes.chunks_exact(2);
    for w in &mut chunks {
        sum += u16::from_be_bytes([w[0], w[1]]) as u32;
    }
    if let [last] = chunks.remainder() {
        sum += (*last as u32) << 8;
    }
    sum
}

/// The one's complement of the one's complement sum (RFC 1071).
fn checksum(mut sum: u32) -> u16 {
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_follow_the_plan() {
        assert_eq!(address(0, 0), [198, 18, 0, 1]);
        assert_eq!(address(2, 1), [198, 18, 2, 2]);
        assert_eq!(address(300, 0), [198, 19, 44, 1]);
        assert_eq!(ports(0), (38000, 50000));
        assert_eq!(ports(3001), (38001, 50001));
    }

    #[test]
    fn a_header_with_its_checksum_sums_to_zero() {
        let ends = Ends { src: [198, 18, 0, 1], dst: [198, 18, 1, 1], sport: 38000, dport: 50000, ttl: 64, id: 7, ecn: 0 };
        let mut buf = Vec::new();
        ipv4(&mut buf, 1500, PROTO_TCP, &ends);
        assert_eq!(checksum(sum_words(0, &buf)), 0);
    }

    #[test]
    fn timestamps_tick_in_milliseconds() {
        assert_eq!(ts32(0), 0);
        assert_eq!(ts32(1), 1);
        assert_eq!(ts32(1_000_001), 2);
    }
}
