//! Packet captures (`run.pcap`, docs/pcap.md): the files read back with pcap-file's reader and
//! their headers parsed with etherparse match the run's counters; the filter and the size
//! limit; determinism; capturing never changes the results; and, where `tshark` is installed,
//! Wireshark reads the files without errors and recognises SACK and timestamps; a payload
//! type the capture does not know is captured with the header it writes itself.

use crate::common::{load_str, load_with, run_checked};
use etherparse::{IpNumber, Ipv4HeaderSlice, TcpHeaderSlice, TcpOptionElement, UdpHeaderSlice};
use multiconn_core::wire::{Ends, WireHeader};
use multiconn_core::{FlowId, Packet, Payload, Time};
use multiconn_scenario::pcap::{headers, PcapFile};
use multiconn_scenario::RunOutput;
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketOption;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::pcapng::blocks::interface_statistics::InterfaceStatisticsOption;
use pcap_file::pcapng::{Block, PcapNgReader};
use pcap_file::DataLink;
use serde_json::Value;
use std::collections::HashSet;

/// A 2 MB TCP download over a lossy 20 Mbit/s, 40 ms RTT path, plus a CBR UDP flow.
fn scenario(pcap: &str) -> String {
    format!(
        r#"
[run]
duration = "10 s"
{pcap}

[[link]]
name = "bottleneck"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = "20 ms"
queue = "60 packets"
[link.forward]
loss = "1 %"

[[flow]]
name = "bulk"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
size = "2 MB"

[[flow]]
name = "voice"
from = "server"
to = "client"
transport = "udp"
app = "cbr"
rate = "200 kbit/s"
packet_size = "200 B"
stop = "2 s"
"#
    )
}

fn run(text: &str) -> (Value, RunOutput) {
    let scenario = load_str(text).unwrap_or_else(|e| panic!("scenario should load: {e}"));
    let out = run_checked(&scenario, Some(3));
    (serde_json::from_str(&out.summary_json).unwrap(), out)
}

fn flow<'a>(summary: &'a Value, name: &str) -> &'a Value {
    summary["flows"].as_array().unwrap().iter().find(|f| f["name"] == name).unwrap()
}

fn file<'a>(out: &'a RunOutput, name: &str) -> &'a PcapFile {
    out.pcap.iter().find(|f| f.file_name == name).unwrap_or_else(|| panic!("no {name} among {:?}", names(out)))
}

fn names(out: &RunOutput) -> Vec<&str> {
    out.pcap.iter().map(|f| f.file_name.as_str()).collect()
}

/// One captured packet as the reader gives it.
#[derive(Debug)]
struct Captured {
    ns: u64,
    data: Vec<u8>,
    original_len: u32,
    comment: Option<String>,
}

/// What a file holds: its interface's link type and time resolution, its packets, and the
/// closing statistics (packets received, dropped, comment).
struct Read {
    linktype: DataLink,
    tsresol: Option<u8>,
    packets: Vec<Captured>,
    stats: Option<(u64, u64, Option<String>)>,
}

fn read(bytes: &[u8]) -> Read {
    let mut reader = PcapNgReader::new(bytes).expect("a pcapng section header");
    let mut r = Read { linktype: DataLink::ETHERNET, tsresol: None, packets: Vec::new(), stats: None };
    while let Some(block) = reader.next_block() {
        match block.expect("every block parses") {
            Block::InterfaceDescription(idb) => {
                r.linktype = idb.linktype;
                r.tsresol = idb.options.iter().find_map(|o| match o {
                    InterfaceDescriptionOption::IfTsResol(v) => Some(*v),
                    _ => None,
                });
            }
            Block::EnhancedPacket(epb) => r.packets.push(Captured {
                ns: epb.timestamp.as_nanos() as u64,
                data: epb.data.to_vec(),
                original_len: epb.original_len,
                comment: epb.options.iter().find_map(|o| match o {
                    EnhancedPacketOption::Comment(c) => Some(c.to_string()),
                    _ => None,
                }),
            }),
            Block::InterfaceStatistics(isb) => {
                let (mut recv, mut drop, mut comment) = (0, 0, None);
                for o in &isb.options {
                    match o {
                        InterfaceStatisticsOption::IsbIfRecv(v) => recv = *v,
                        InterfaceStatisticsOption::IsbIfDrop(v) => drop = *v,
                        InterfaceStatisticsOption::Comment(c) => comment = Some(c.to_string()),
                        _ => {}
                    }
                }
                r.stats = Some((recv, drop, comment));
            }
            _ => {}
        }
    }
    r
}

/// A TCP segment as parsed back: who sent it, its numbers, flags, options and payload length.
#[derive(Debug, Clone)]
struct Tcp {
    src: [u8; 4],
    seq: u32,
    ack: u32,
    syn: bool,
    payload: u32,
    sack_blocks: usize,
    ts: Option<(u32, u32)>,
}

/// Checks the IPv4 header (and its checksum) and parses the TCP header after it.
fn tcp(p: &Captured) -> Tcp {
    let ip = Ipv4HeaderSlice::from_slice(&p.data).expect("an IPv4 header");
    assert_eq!(ip.total_len() as u32, p.original_len, "the IP total length is the simulated size");
    assert_eq!(ip.protocol(), IpNumber::TCP);
    assert_eq!(ip.to_header().calc_header_checksum(), ip.header_checksum());
    assert_eq!(ip.ecn().value(), 0, "not-ECT");
    let t = TcpHeaderSlice::from_slice(&p.data[20..]).expect("a TCP header");
    assert_eq!(p.data.len(), 20 + t.slice().len(), "only the headers are captured");
    // The checksum covers the zero-filled payload the capture leaves out.
    let payload = p.original_len - 20 - t.slice().len() as u32;
    let mut segment = t.slice().to_vec();
    segment.resize(segment.len() + payload as usize, 0);
    let parsed = TcpHeaderSlice::from_slice(&segment).unwrap().to_header();
    assert_eq!(parsed.calc_checksum_ipv4_raw(ip.source(), ip.destination(), &segment[t.slice().len()..]).unwrap(), t.checksum());
    let (mut sack_blocks, mut ts) = (0, None);
    for o in t.options_iterator() {
        match o.expect("every TCP option parses") {
            TcpOptionElement::SelectiveAcknowledgement(_, rest) => sack_blocks = 1 + rest.iter().flatten().count(),
            TcpOptionElement::Timestamp(v, e) => ts = Some((v, e)),
            _ => {}
        }
    }
    Tcp { src: ip.source(), seq: t.sequence_number(), ack: t.acknowledgment_number(), syn: t.syn(), payload, sack_blocks, ts }
}

#[test]
fn a_tcp_capture_matches_the_run_counters() {
    // The voice flow runs on after the bulk flow's last byte (about 3 s), so that the run does
    // not end at that byte's arrival, before the client's delayed ACK of it goes out.
    let (summary, out) = run(&scenario("pcap = true").replace("stop = \"2 s\"", "stop = \"5 s\""));
    assert_eq!(names(&out), ["bulk_server.pcapng", "bulk_client.pcapng", "voice_server.pcapng", "voice_client.pcapng"]);
    assert!(out.pcap_warnings.is_empty(), "{:?}", out.pcap_warnings);
    let bulk = flow(&summary, "bulk");
    let server = read(&file(&out, "bulk_server.pcapng").bytes);
    assert_eq!(server.linktype, DataLink::IPV4);
    assert_eq!(server.tsresol, Some(9), "nanosecond timestamps");
    let segments: Vec<(u64, u32, Tcp)> = server.packets.iter().map(|p| (p.ns, p.original_len, tcp(p))).collect();
    let server_ip = [198, 18, 1, 1]; // nodes sorted: client (0), server (1)
    let (sent, received): (Vec<_>, Vec<_>) = segments.iter().partition(|(_, _, t)| t.src == server_ip);
    // What the server put on the wire, byte for byte as the summary counts it.
    let bytes: u64 = sent.iter().map(|(_, len, _)| *len as u64).sum();
    assert_eq!(bytes, bulk["bytes_sent"].as_u64().unwrap());
    // Retransmissions are data segments below the highest sequence number sent so far.
    let mut next = 0u32;
    let mut retransmitted = 0;
    for (_, _, t) in &sent {
        if t.payload > 0 {
            if t.seq < next {
                retransmitted += 1;
            }
            next = next.max(t.seq + t.payload);
        }
    }
    let retransmissions = bulk["retransmissions"].as_u64().unwrap();
    assert!(retransmissions > 0, "1 % loss makes retransmissions");
    assert_eq!(retransmitted, retransmissions);
    assert!(sent[0].2.syn && received[0].2.syn, "the handshake is captured");
    // Loss makes the client send SACK blocks; every segment has timestamps.
    assert!(received.iter().any(|(_, _, t)| t.sack_blocks > 0));
    assert!(segments.iter().all(|(_, _, t)| t.ts.is_some()));
    // Capture times run forward.
    assert!(segments.windows(2).all(|w| w[0].0 <= w[1].0));
    let stats = server.stats.expect("a closing statistics block");
    assert_eq!((stats.0, stats.1), (server.packets.len() as u64, 0));

    // The client saw every data segment the network did not lose.
    let client = read(&file(&out, "bulk_client.pcapng").bytes);
    let client_segments: Vec<Tcp> = client.packets.iter().map(tcp).collect();
    let arrived = client_segments.iter().filter(|t| t.src == server_ip).count() as u64;
    // Its highest cumulative ACK is the ISN (0) + the SYN + every byte of the stream: the
    // application's bytes and TLS's.
    let highest_ack = client_segments.iter().filter(|t| t.src != server_ip).map(|t| t.ack).max().unwrap();
    assert_eq!(highest_ack, next, "every byte sent was acknowledged");
    let delivered = bulk["bytes_delivered"].as_u64().unwrap();
    assert_eq!(delivered, 2_000_000);
    assert!((1 + delivered..1 + delivered + 10_000).contains(&(highest_ack as u64)), "{highest_ack}");
    let lost: u64 = bulk["drops_data"].as_object().unwrap().values().filter_map(Value::as_u64).sum();
    assert_eq!(arrived + lost, sent.len() as u64);

    // What reached the client of either flow is what the bottleneck's forward direction
    // delivered, packet for packet and byte for byte.
    let forward = summary["links"].as_array().unwrap().iter().find(|l| l["direction"] == "forward").unwrap();
    let voice_client = read(&file(&out, "voice_client.pcapng").bytes);
    let from_server = |p: &&Captured| Ipv4HeaderSlice::from_slice(&p.data).unwrap().source() == server_ip;
    let delivered: Vec<&Captured> = client.packets.iter().chain(&voice_client.packets).filter(from_server).collect();
    assert_eq!(delivered.len() as u64, forward["packets_delivered"].as_u64().unwrap());
    assert_eq!(delivered.iter().map(|p| p.original_len as u64).sum::<u64>(), forward["bytes_delivered"].as_u64().unwrap());

    // The UDP flow: plain UDP headers, one per packet sent.
    let voice = read(&file(&out, "voice_server.pcapng").bytes);
    assert!(!voice.packets.is_empty());
    for p in &voice.packets {
        let ip = Ipv4HeaderSlice::from_slice(&p.data).unwrap();
        assert_eq!(ip.protocol(), IpNumber::UDP);
        let udp = UdpHeaderSlice::from_slice(&p.data[20..]).unwrap();
        assert_eq!((udp.source_port(), udp.destination_port()), (38001, 50001));
        assert_eq!(udp.length() as u32 + 20, p.original_len);
        assert_eq!(p.original_len, 200);
        assert!(p.comment.is_none());
    }
}

#[test]
fn captures_change_no_result_and_repeat_byte_for_byte() {
    let (_, without) = run(&scenario(""));
    let (_, with) = run(&scenario("pcap = true"));
    let (_, again) = run(&scenario("pcap = true"));
    assert!(without.pcap.is_empty());
    assert_eq!(without.summary_json, with.summary_json);
    assert_eq!(with.pcap, again.pcap);
}

#[test]
fn quic_packet_numbers_are_in_the_comments() {
    let text = scenario("pcap = [\"flow:bulk\"]").replace("transport = \"tcp\"", "transport = \"quic\"");
    let (_, out) = run(&text);
    assert_eq!(names(&out), ["bulk_server.pcapng", "bulk_client.pcapng"]);
    let server = read(&file(&out, "bulk_server.pcapng").bytes);
    let comments: Vec<&str> = server.packets.iter().map(|p| p.comment.as_deref().expect("every QUIC datagram has its comment")).collect();
    assert!(comments[0].starts_with("quic initial pn=0"), "{}", comments[0]);
    assert!(comments.iter().any(|c| c.contains("quic 1RTT pn=")));
    for p in &server.packets {
        let ip = Ipv4HeaderSlice::from_slice(&p.data).unwrap();
        assert_eq!(ip.protocol(), IpNumber::UDP);
        assert_eq!(p.data.len(), 28);
    }
}

#[test]
fn the_filter_chooses_flows_and_paths() {
    let (_, out) = run(&scenario("pcap = [\"voice\"]"));
    assert_eq!(names(&out), ["voice_server.pcapng", "voice_client.pcapng"]);
    // A link filter keeps the paths over that link: here the flows' only path.
    let (_, out) = run(&scenario("pcap = [\"link:bottleneck\", \"flow:bulk\"]"));
    assert_eq!(names(&out), ["bulk_server.pcapng", "bulk_client.pcapng"]);
    // Mistakes are named.
    for (filter, says) in [
        ("pcap = [\"nope\"]", "\"nope\" is neither a flow nor a link (flows: bulk, voice; links: bottleneck)"),
        ("pcap = [\"link:bulk\"]", "there is no link named \"bulk\""),
        ("pcap = [\"path:x\"]", "\"path:\" is not a filter kind"),
        ("pcap = []", "an empty filter captures nothing"),
        ("pcap = 3", "true, false, or a list of names"),
        ("pcap_max_mb = 1", "run.pcap is not set"),
        ("pcap = true\npcap_max_mb = 0", "is not a size limit"),
    ] {
        let e = load_str(&scenario(filter)).err().unwrap_or_else(|| panic!("{filter} should be refused")).to_string();
        assert!(e.contains(says), "{filter}: {e}");
    }
}

/// A multipath TCP download over two links, the second lossy.
const MULTIPATH: &str = r#"
[run]
duration = "3 s"

[[link]]
name = "wifi"
between = ["server", "phone"]
rate = "20 Mbit/s"
delay = "10 ms"
queue = "100 packets"

[[link]]
name = "lte"
between = ["server", "phone"]
rate = "10 Mbit/s"
delay = "30 ms"
queue = "100 packets"
loss = "0.5 %"

[[flow]]
name = "mp"
from = "server"
to = "phone"
transport = "tcp"
app = "bulk"
size = "1 MB"
paths = [["wifi"], ["lte"]]
"#;

#[test]
fn a_multipath_flow_keeps_only_the_paths_over_the_filtered_link() {
    let all = run_checked(&load_with(MULTIPATH, &[("run.pcap", "true")]).unwrap(), Some(1));
    let lte = run_checked(&load_with(MULTIPATH, &[("run.pcap", "[\"link:lte\"]")]).unwrap(), Some(1));
    let addresses = |out: &RunOutput| -> HashSet<[u8; 4]> {
        read(&file(out, "mp_server.pcapng").bytes).packets.iter().map(|p| Ipv4HeaderSlice::from_slice(&p.data).unwrap().source()).collect()
    };
    // Nodes sorted: phone (0), server (1); path p is .1 + p.
    assert_eq!(addresses(&all), HashSet::from([[198, 18, 0, 1], [198, 18, 0, 2], [198, 18, 1, 1], [198, 18, 1, 2]]));
    assert_eq!(addresses(&lte), HashSet::from([[198, 18, 0, 2], [198, 18, 1, 2]]));
    assert_eq!(all.summary_json, lte.summary_json);
}

#[test]
fn a_file_stops_at_its_size_limit_and_says_so() {
    let (_, out) = run(&scenario("pcap = [\"bulk\"]\npcap_max_mb = 0.02"));
    let f = file(&out, "bulk_server.pcapng");
    assert!(f.bytes.len() as u64 <= 20_000, "{} bytes", f.bytes.len());
    assert!(f.omitted > 0);
    let r = read(&f.bytes);
    assert_eq!(r.packets.len() as u64, f.packets);
    let (recv, drop, comment) = r.stats.unwrap();
    assert_eq!((recv, drop), (f.packets + f.omitted, f.omitted));
    assert!(comment.unwrap().contains("size limit run.pcap_max_mb = 0.02 reached"));
    let warning = out.pcap_warnings.iter().find(|w| w.starts_with("pcap/bulk_server.pcapng")).expect("a warning");
    assert!(warning.contains(&format!("{} later packets are not in the file", f.omitted)), "{warning}");
}

/// Wireshark's reading of a file: `tshark -z expert` lists no warning or error, and the
/// dissector recognises SACK blocks and timestamps. Skipped where tshark is not installed.
#[test]
fn wireshark_reads_the_captures_without_complaint() {
    if std::process::Command::new("tshark").arg("--version").output().is_err() {
        eprintln!("skipped: tshark is not installed (Debian package tshark)");
        return;
    }
    let (_, out) = run(&scenario("pcap = true"));
    let quic = run(&scenario("pcap = true").replace("transport = \"tcp\"", "transport = \"quic\"")).1;
    let dir = std::env::temp_dir().join(format!("multiconn-pcap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tshark = |args: &[&str]| -> String {
        let o = std::process::Command::new("tshark").args(args).env("HOME", &dir).output().unwrap();
        assert!(o.status.success(), "tshark {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let mptcp = run_checked(&load_with(MULTIPATH, &[("run.pcap", "true")]).unwrap(), Some(1));
    let files = out.pcap.iter().map(|f| ("tcp", f)).chain(quic.pcap.iter().map(|f| ("quic", f))).chain(mptcp.pcap.iter().map(|f| ("mptcp", f)));
    for (tag, f) in files {
        let path = dir.join(format!("{tag}_{}", f.file_name));
        std::fs::write(&path, &f.bytes).unwrap();
        let p = path.to_str().unwrap();
        let expert = tshark(&["-o", "ip.check_checksum:TRUE", "-r", p, "-q", "-z", "expert,warn"]);
        assert!(!expert.contains("Malformed") && !expert.contains("Errors ("), "{p}:\n{expert}");
        // Warnings only of TCP's sequence analysis: what loss does (a segment out of order,
        // one the receiver never saw).
        let mut section = "";
        for line in expert.lines() {
            if !line.starts_with(' ') && line.ends_with(')') {
                section = line.split(" (").next().unwrap_or("");
                continue;
            }
            let row: Vec<&str> = line.split_whitespace().collect();
            if section == "Warns" && row.len() > 3 && row[0].parse::<u64>().is_ok() {
                assert_eq!((row[1], row[2]), ("Sequence", "TCP"), "{p}: {line}");
            }
        }
        let frames = tshark(&["-r", p, "-T", "fields", "-e", "frame.number"]).lines().count();
        assert_eq!(frames as u64, f.packets, "{p}");
    }
    let server = dir.join("tcp_bulk_server.pcapng");
    let server = server.to_str().unwrap();
    let count = |filter: &str| tshark(&["-r", server, "-Y", filter, "-T", "fields", "-e", "frame.number"]).lines().count();
    assert!(count("tcp.options.sack_le") > 0, "SACK blocks recognised");
    assert!(count("tcp.options.timestamp.tsval") > 0, "timestamps recognised");
    assert!(count("tcp.analysis.retransmission || tcp.analysis.fast_retransmission") > 0, "retransmissions recognised");
    let mp = dir.join("mptcp_mp_server.pcapng");
    let mp = mp.to_str().unwrap();
    let mp_count = |filter: &str| tshark(&["-r", mp, "-Y", filter, "-T", "fields", "-e", "frame.number"]).lines().count();
    assert!(mp_count("tcp.options.mptcp.rawdataseqno") > 0 && mp_count("tcp.options.mptcp.rawdataack") > 0, "MPTCP mappings and DATA_ACKs recognised");
    assert_eq!(tshark(&["-r", mp, "-q", "-z", "conv,tcp"]).lines().filter(|l| l.starts_with("198.18.")).count(), 2, "one conversation per subflow");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A transport the capture has never heard of: its header is four bytes of its own protocol
/// number (253, RFC 3692's experimental number) and its comment says so.
struct Experimental {
    tag: u8,
}

impl WireHeader for Experimental {
    fn protocol(&self) -> u8 {
        253
    }
    fn write_header(&self, buf: &mut Vec<u8>, size: u32, ends: &Ends) -> Option<String> {
        buf.extend_from_slice(&[self.tag, ends.ttl]);
        buf.extend_from_slice(&(size as u16).to_be_bytes());
        Some(format!("experimental {}", self.tag))
    }
}

#[test]
fn a_payload_that_writes_its_header_is_captured_with_it() {
    let ends = Ends { src: [198, 18, 0, 1], dst: [198, 18, 1, 1], sport: 38000, dport: 50000, ttl: 61, id: 9, ecn: 0b10 };
    let pkt = Packet::new(9, FlowId(0), 300, 0, Time::ZERO).with_payload(Payload::with_header(Experimental { tag: 0x5a }));
    let mut buf = Vec::new();
    let comment = headers(&mut buf, &pkt, &ends);
    assert_eq!(comment.as_deref(), Some("experimental 90"));
    let ip = Ipv4HeaderSlice::from_slice(&buf).unwrap();
    assert_eq!((ip.protocol(), ip.total_len(), ip.ttl(), ip.ecn().value()), (IpNumber(253), 300, 61, 0b10));
    assert_eq!(ip.header_checksum(), ip.to_header().calc_header_checksum());
    assert_eq!(buf[20..], [0x5a, 61, 0x01, 0x2c], "the bytes after the IPv4 header are the payload's own");

    // The same value wrapped without its header is captured as plain UDP, without a comment.
    let plain = Packet::new(9, FlowId(0), 300, 0, Time::ZERO).with_payload(Payload::new(Experimental { tag: 0x5a }));
    assert_eq!(headers(&mut buf, &plain, &ends), None);
    assert_eq!(Ipv4HeaderSlice::from_slice(&buf).unwrap().protocol(), IpNumber::UDP);
    let udp = UdpHeaderSlice::from_slice(&buf[20..]).unwrap();
    assert_eq!((udp.source_port(), udp.destination_port(), udp.length()), (38000, 50000, 280));
}
