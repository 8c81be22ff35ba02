//! Prague over TCP with Accurate ECN (RFC 9768) through a DualPI2 bottleneck: its ECT(1)
//! packets go to the L queue and its queue stays near the 1 ms step with the link nearly full,
//! where CUBIC with RFC 3168 ECN through the same queue sits at the Classic target (15 ms);
//! the summary and the capture show the AccECN handshake and the AE flag; runs repeat from
//! the seed; the settings `ecn = "accecn"` and `receiver.ecn`, their refusals, and the warning
//! for a Prague flow whose path marks nothing.

use crate::common::{load_str, load_with, run};
use etherparse::{Ipv4HeaderSlice, TcpHeaderSlice};
use multiconn_scenario::{Column, RunOutput};
use pcap_file::pcapng::{Block, PcapNgReader};
use serde_json::Value;

const ONE: &str = r#"
[run]
duration = "20 s"

[[link]]
name = "bottleneck"
between = ["server", "client"]
rate = "100 Mbit/s"
delay = "10 ms"
queue = "10000 packets"
aqm = "dualpi2"

[[flow]]
name = "bulk"
from = "server"
to = "client"
transport = "tcp"
app = "bulk"
cc = "prague"
"#;

fn strs<'a>(out: &'a RunOutput, name: &str) -> &'a [String] {
    match &out.columns.iter().find(|(n, _)| n == name).unwrap().1 {
        Column::Str(v) => v,
        _ => panic!("{name} is not text"),
    }
}

fn f64s<'a>(out: &'a RunOutput, name: &str) -> &'a [f64] {
    match &out.columns.iter().find(|(n, _)| n == name).unwrap().1 {
        Column::F64(v) => v,
        _ => panic!("{name} is not float"),
    }
}

/// The forward bottleneck's mean queueing delay in seconds (the time-weighted mean queue in
/// bytes at 100 Mbit/s) and its mean utilisation over the bins from `from_s` on.
fn queue_after(out: &RunOutput, from_s: f64) -> (f64, f64) {
    let (kind, name, dir) = (strs(out, "kind"), strs(out, "name"), strs(out, "direction"));
    let (time, bytes, mbps) = (f64s(out, "time_s"), f64s(out, "queue_bytes"), f64s(out, "throughput_mbps"));
    let rows: Vec<usize> = (0..kind.len()).filter(|&i| kind[i] == "link" && name[i] == "bottleneck" && dir[i] == "forward" && time[i] >= from_s).collect();
    assert!(rows.len() > 10, "{} bins", rows.len());
    let n = rows.len() as f64;
    (rows.iter().map(|&i| bytes[i] * 8.0 / 100e6).sum::<f64>() / n, rows.iter().map(|&i| mbps[i] / 100.0).sum::<f64>() / n)
}

/// (queue delay in s and utilisation after 5 s, summary) of `ONE` with its `cc` line replaced
/// by `cc`.
fn measure(cc: &str) -> (f64, f64, Value) {
    let (s, out) = run(&ONE.replace("cc = \"prague\"", cc), Some(1));
    let (delay, util) = queue_after(&out, 5.0);
    (delay, util, s)
}

#[test]
fn prague_keeps_the_l_queue_near_the_step_where_cubic_keeps_the_classic_target() {
    let (delay, util, s) = measure("cc = \"prague\"");
    let block = &s["links"][0]["aqm"];
    let flow = &s["flows"][0];
    eprintln!("Prague/TCP over DualPI2, 100 Mbit/s, 20 ms RTT, after 5 s: queue delay {:.3} ms, utilisation {util:.3} (run {}), {block}, ecn {}", delay * 1e3, s["links"][0]["utilization"], flow["ecn"]);
    let (cdelay, cutil, cs) = measure("cc = \"cubic\"\necn = true");
    eprintln!("CUBIC+ECN/TCP over DualPI2, after 5 s: queue delay {:.3} ms, utilisation {cutil:.3} (run {}), {}", cdelay * 1e3, cs["links"][0]["utilization"], cs["links"][0]["aqm"]);
    // Prague: the L queue, marked at the 1 ms step; the sawtooth keeps the mean below it.
    assert!(delay < 0.002, "Prague's mean queueing delay {delay} s");
    assert!(util > 0.95, "Prague's utilisation {util}");
    let by = &block["dualpi2"];
    assert!(by["native_marks"].as_u64().unwrap() > 100, "{by}");
    assert_eq!((by["classic_marks"].as_u64(), by["classic_drops"].as_u64()), (Some(0), Some(0)), "nothing in the C queue: {by}");
    assert_eq!(flow["retransmissions"], 0, "marks, no drops");
    let e = &flow["ecn"];
    assert_eq!((e["server"]["handshake"].as_str(), e["client"]["handshake"].as_str()), (Some("accecn"), Some("accecn")));
    assert_eq!(e["client"]["ce_packets_received"].as_u64(), block["ecn_marks"].as_u64(), "every mark arrived");
    assert!(e["server"]["ecn_congestion_responses"].as_u64().unwrap() > 100, "{e}");
    // CUBIC with RFC 3168 ECN: ECT(0), the C queue around the PI2 target.
    assert!((0.010..0.020).contains(&cdelay), "CUBIC's mean queueing delay {cdelay} s");
    assert!(cutil > 0.95, "CUBIC's utilisation {cutil}");
    assert_eq!(cs["flows"][0]["ecn"]["server"]["handshake"], "negotiated");
    assert!(delay * 5.0 < cdelay);
}

/// CUBIC over AccECN (`ecn = "accecn"`): ECT(0), so DualPI2's C queue; the ACE field carries
/// every mark and CUBIC answers as with RFC 3168. Prague towards a receiver that does only
/// RFC 3168 falls back to Reno with ECT(0) (Linux's prague-reno): the C queue too.
#[test]
fn classic_controllers_over_accecn_and_prague_towards_an_rfc3168_receiver_use_the_c_queue() {
    let (delay, _, s) = measure("cc = \"cubic\"\necn = \"accecn\"");
    let (block, e) = (&s["links"][0]["aqm"], &s["flows"][0]["ecn"]);
    eprintln!("CUBIC over AccECN through DualPI2: queue delay {:.3} ms, {block}, {e}", delay * 1e3);
    assert_eq!(e["server"]["handshake"], "accecn");
    assert!((0.010..0.020).contains(&delay), "{delay}");
    assert!(block["dualpi2"]["classic_marks"].as_u64().unwrap() > 0, "{block}");
    assert_eq!(e["client"]["ce_packets_received"], block["ecn_marks"]);
    assert!(e["server"]["ecn_congestion_responses"].as_u64().unwrap() > 0, "{e}");
    let (delay, _, s) = measure("cc = \"prague\"\nreceiver = { ecn = \"rfc3168\" }");
    let (block, e) = (&s["links"][0]["aqm"], &s["flows"][0]["ecn"]);
    eprintln!("Prague towards an RFC 3168 receiver through DualPI2: queue delay {:.3} ms, {block}, {e}", delay * 1e3);
    assert_eq!((e["server"]["handshake"].as_str(), e["client"]["handshake"].as_str()), (Some("negotiated"), Some("negotiated")));
    assert!((0.008..0.020).contains(&delay), "{delay}");
    assert_eq!(block["dualpi2"]["native_marks"], 0, "{block}");
}

/// Prague and CUBIC (with ECN) sharing the DualPI2 bottleneck: each in its own queue, the
/// coupling keeping both going (RFC 9332's rough window fairness, not equality).
#[test]
fn prague_and_cubic_share_dualpi2() {
    let text = format!("{ONE}\n[[flow]]\nname = \"classic\"\nfrom = \"server\"\nto = \"client\"\ntransport = \"tcp\"\napp = \"bulk\"\ncc = \"cubic\"\necn = true\n");
    let (s, out) = run(&text, Some(1));
    let (delay, util) = queue_after(&out, 5.0);
    let goodput = |name: &str| s["flows"].as_array().unwrap().iter().find(|f| f["name"] == name).unwrap()["goodput_mbps"].as_f64().unwrap();
    let (l4s, classic) = (goodput("bulk"), goodput("classic"));
    let by = &s["links"][0]["aqm"]["dualpi2"];
    eprintln!("Prague + CUBIC over DualPI2: Prague {l4s:.1} Mbit/s, CUBIC {classic:.1} Mbit/s, queue delay {:.2} ms, utilisation {util:.3}, {by}", delay * 1e3);
    assert!(util > 0.95, "{util}");
    assert!(l4s > 20.0 && classic > 20.0, "Prague {l4s}, CUBIC {classic}");
    assert!(by["coupled_marks"].as_u64().unwrap() > 0 && by["classic_marks"].as_u64().unwrap() > 0, "{by}");
}

#[test]
fn prague_runs_repeat_from_the_seed() {
    let short = ONE.replace("\"20 s\"", "\"4 s\"");
    let (a, _) = run(&short, Some(7));
    let (b, _) = run(&short, Some(7));
    assert_eq!(a, b);
}

/// The captures: the SYN sets AE (the old NS bit, bit 8), CWR and ECE; the SYN-ACK answers
/// the not-ECT SYN with CWR alone (0,1,0); data goes ECT(1); at the client every ACK's ACE
/// field is 5 plus the CE-marked data packets captured before it, modulo 8.
#[test]
fn the_capture_shows_the_accecn_flags() {
    let text = ONE.replace("\"20 s\"", "\"5 s\"").replace("[run]\n", "[run]\npcap = true\n");
    let (_, out) = run(&text, Some(1));
    let read = |name: &str| {
        let file = out.pcap.iter().find(|f| f.file_name == name).expect("the capture");
        let mut reader = PcapNgReader::new(&file.bytes[..]).unwrap();
        let mut segs = Vec::new();
        while let Some(block) = reader.next_block() {
            if let Block::EnhancedPacket(p) = block.unwrap() {
                let ip = Ipv4HeaderSlice::from_slice(&p.data).unwrap();
                let t = TcpHeaderSlice::from_slice(&p.data[ip.slice().len()..]).unwrap();
                let ace = u8::from(t.ns()) << 2 | u8::from(t.cwr()) << 1 | u8::from(t.ece());
                let payload = ip.total_len() as usize - ip.slice().len() - t.slice().len();
                segs.push((ip.source(), t.syn(), t.ack(), ace, ip.ecn().value(), payload));
            }
        }
        segs
    };
    let server_ip = [198, 18, 1, 1];
    let segs = read("bulk_server.pcapng");
    let syn = segs.iter().find(|s| s.1 && !s.2).unwrap();
    let syn_ack = segs.iter().find(|s| s.1 && s.2).unwrap();
    assert_eq!((syn.3, syn_ack.3), (0b111, 0b010));
    let data: Vec<_> = segs.iter().filter(|s| s.0 == server_ip && s.5 > 0).collect();
    assert!(data.len() > 100 && data.iter().all(|s| s.4 == 0b01), "ECT(1) on the server's data");
    // At the client: each ACK's ACE is 5 plus the CE-marked data packets that arrived before
    // it, modulo 8 (its first ACK reflects the not-ECT SYN-ACK: 0,1,0).
    let (mut ce, mut acks) = (0u64, Vec::new());
    for s in read("bulk_client.pcapng").iter().filter(|s| !s.1) {
        if s.0 == server_ip {
            ce += u64::from(s.4 == 0b11);
        } else {
            acks.push((s.3, ((5 + ce) % 8) as u8));
        }
    }
    assert_eq!(acks[0].0, 0b010, "the first ACK reflects the SYN-ACK");
    assert!(ce > 10, "{ce} marks");
    let wrong: Vec<_> = acks[1..].iter().filter(|(got, want)| got != want).collect();
    assert!(wrong.is_empty(), "{} of {} ACKs: {:?}", wrong.len(), acks.len(), &wrong[..wrong.len().min(5)]);
}

#[test]
fn accecn_settings_load_and_are_refused_where_they_do_not_apply() {
    // A classic controller over AccECN, and a receiver that does only RFC 3168.
    load_with(ONE, &[("flow.bulk.cc", "\"cubic\""), ("flow.bulk.ecn", "\"accecn\"")]).unwrap();
    load_with(ONE, &[("flow.bulk.receiver", "{ ecn = \"rfc3168\" }")]).unwrap();
    for (sets, expected) in [
        (vec![("flow.bulk.ecn", "false")], "flow.bulk.ecn: cc = \"prague\" asks for Accurate ECN (RFC 9768) itself"),
        (vec![("flow.bulk.ecn", "\"yes\"")], "ecn"),
        (vec![("flow.bulk.transport", "\"quic\""), ("flow.bulk.cc", "\"cubic\""), ("flow.bulk.ecn", "\"accecn\"")], "flow.bulk.ecn: \"accecn\" is TCP's ECN feedback"),
        (vec![("flow.bulk.transport", "\"quic\""), ("flow.bulk.cc", "\"cubic\""), ("flow.bulk.receiver", "{ ecn = \"accecn\" }")], "flow.bulk.receiver.ecn: a TCP setting"),
        (vec![("flow.bulk.receiver", "{ ecn = \"nonce\" }")], "nonce"),
        (vec![("flow.bulk.profile", "\"linux-mptcp-5.15\"")], "prague"),
    ] {
        let e = load_with(ONE, &sets).unwrap_err().to_string();
        assert!(e.contains(expected), "{sets:?}: {e}");
    }
}

#[test]
fn a_prague_flow_whose_path_marks_nothing_is_warned_about() {
    let s = load_str(ONE).unwrap();
    assert!(s.warnings().is_empty(), "{:?}", s.warnings());
    let s = load_str(&ONE.replace("aqm = \"dualpi2\"\n", "")).unwrap();
    assert_eq!(s.warnings().len(), 1, "{:?}", s.warnings());
    let w = &s.warnings()[0];
    assert!(w.starts_with("flow.bulk.cc = \"prague\", but no queue on its path marks ECN (link.bottleneck forward: aqm = none)"), "{w}");
    assert!(w.contains("it will only see losses") && w.contains("aqm = \"dualpi2\""), "{w}");
    let s = load_str(&ONE.replace("aqm = \"dualpi2\"", "aqm = \"fq_codel\"")).unwrap();
    assert!(s.warnings().is_empty(), "FQ-CoDel marks: {:?}", s.warnings());
    let example = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/scenarios/l4s_tcp.toml")).unwrap();
    assert!(load_str(&example).unwrap().warnings().is_empty());
    let drop_tail = load_with(&example, &[("link.bottleneck.aqm", "\"none\"")]).unwrap();
    assert_eq!(drop_tail.warnings().len(), 1, "{:?}", drop_tail.warnings());
}
