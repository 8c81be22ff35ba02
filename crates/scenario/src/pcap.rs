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
//! * IPv4 header (RFC 791), written here: version 4, IHL 5, DSCP 0, the ECN field as the
//!   packet carries it at that end (RFC 3168 §5: a CE mark shows at the receiver only), DF
//!   set, TTL 64 at the sender less one per hop at the receiver, identification = the
//!   packet's run-unique id modulo 2^16, so both ends' captures of one packet match; its
//!   checksum per RFC 1071.
//! * Transport header: the transports write their own. A packet whose payload answers
//!   `multiconn_core::wire::WireHeader` (`Payload::with_header`) gets the header and comment
//!   it writes: TCP with its options and MPTCP's (`multiconn_tcp::wire`), UDP with the QUIC
//!   packets' types and numbers in the packet's pcapng comment (`multiconn_quic::wire`:
//!   `quic 1RTT pn=42`, coalesced packets separated by `; `, `path_id=N` for multipath
//!   QUIC). Any other packet gets a plain UDP header (RFC 768). Checksums are those of the
//!   whole packet with a zero-filled payload (RFC 1071).
//! * Bytes: only the headers are captured; the payload is cut as a snap length would cut it.
//!   The original length of each packet is its simulated size, so rates are the real ones.
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

use multiconn_core::wire::{checksum, sum_words, write_udp, Ends, PROTO_UDP};
use multiconn_core::{Packet, Payload, Time};
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

/// Writes `pkt`'s IPv4 header and its transport header into `buf` (cleared first): the one
/// its payload writes ([`Payload::wire_header`]), else a plain UDP header. Returns the
/// packet's comment, if its payload gives one.
pub fn headers(buf: &mut Vec<u8>, pkt: &Packet, ends: &Ends) -> Option<String> {
    buf.clear();
    match pkt.payload.as_ref().and_then(Payload::wire_header) {
        Some(header) => {
            ipv4(buf, pkt.size, header.protocol(), ends);
            header.write_header(buf, pkt.size, ends)
        }
        None => {
            ipv4(buf, pkt.size, PROTO_UDP, ends);
            write_udp(buf, pkt.size, ends);
            None
        }
    }
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
        ipv4(&mut buf, 1500, multiconn_core::wire::PROTO_TCP, &ends);
        assert_eq!(checksum(sum_words(0, &buf)), 0);
    }
}
