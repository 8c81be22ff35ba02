//! Tunnels (app = "tunnel"): flows whose packets ride another QUIC connection's DATAGRAM
//! frames, as MASQUE's CONNECT-UDP and CONNECT-IP carry them and 3GPP ATSSS's MPQUIC
//! steering functionality uses them. Counted from what the flows and the links saw: the
//! datagrams' sizes follow RFC 9297/9298/9484 exactly, the tunnel never repairs a loss (the
//! flow inside does), a redundant scheduler's copies are delivered once, the flow inside sees
//! the multipath reordering, and what cannot be tunnelled is refused at the field.

use crate::common;
use common::*;
use serde_json::Value;

/// A 20 Mbit/s access and a 10 Mbit/s one between a UPF and a UE; a QUIC tunnel from the UPF
/// over the first (`paths` turns it into multipath QUIC); a 4 MB QUIC download inside it.
const ACCESSES: &str = r#"
[run]
duration = "20 s"
seed = 3

[[link]]
name = "a3gpp"
between = ["upf", "ue"]
rate = "20 Mbit/s"
delay = "25 ms"
queue = "100 packets"

[[link]]
name = "wlan"
between = ["upf", "ue"]
rate = "10 Mbit/s"
delay = "10 ms"
queue = "100 packets"

[[flow]]
name = "proxy"
from = "upf"
to = "ue"
transport = "quic"
app = "tunnel"
route = ["a3gpp"]

[[flow]]
name = "inner"
from = "upf"
to = "ue"
transport = "quic"
app = "bulk"
size = "4 MB"
packet_size = "1400 B"
tunnel = "proxy"
"#;

fn flow<'a>(summary: &'a Value, name: &str) -> &'a Value {
    summary["flows"].as_array().expect("flows").iter().find(|f| f["name"] == name).unwrap_or_else(|| panic!("no flow {name}"))
}

fn link<'a>(summary: &'a Value, name: &str, direction: &str) -> &'a Value {
    summary["links"].as_array().expect("links").iter().find(|l| l["name"] == name && l["direction"] == direction).unwrap_or_else(|| panic!("no link {name}"))
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Every packet that entered the tunnel is delivered, lost or dropped, once; the flow inside
/// finishes its transfer whole; the links carry the tunnel's packets only.
#[test]
fn a_download_in_a_tunnel_arrives_whole_and_the_links_carry_only_the_tunnel() {
    let (summary, _) = run(ACCESSES, None);
    let (proxy, inner) = (flow(&summary, "proxy"), flow(&summary, "inner"));
    assert_eq!(n(&inner["bytes_delivered"]), 4_000_000, "{inner}");
    assert!(inner["completion_s"].as_f64().is_some(), "{inner}");
    assert_eq!(proxy["tunnel"]["flows"], serde_json::json!(["inner"]));
    assert_eq!(inner["tunnel"]["mode"], "connect-udp");
    for dir in ["forward", "reverse"] {
        let c = &proxy["tunnel"][dir];
        assert!(n(&c["packets"]) > 0, "{c}");
        assert_eq!(n(&c["delivered"]) + n(&c["lost"]) + n(&c["dropped_send_buffer"]) + n(&c["in_tunnel_at_end"]), n(&c["packets"]), "{dir}: {c}");
        assert_eq!(n(&c["refused"]), 0);
    }
    // The download's packets crossed no link themselves: every byte on a3gpp is the tunnel's.
    let down = link(&summary, "a3gpp", "forward");
    assert!(n(&down["bytes_delivered"]) <= n(&proxy["bytes_sent"]), "{down} {proxy}");
    assert_eq!(n(&inner["drops"]["queue"]), 0);
    // Datagrams carry no retransmission: the tunnel's connection repeats nothing.
    assert_eq!(n(&proxy["retransmissions"]), 0, "{proxy}");
}

/// The HTTP Datagram of each packet: a 1-byte Quarter Stream ID, a 1-byte Context ID, then the
/// UDP payload (CONNECT-UDP, a udp or quic flow: the packet less 28 B of IPv4 and UDP
/// headers) or the whole IP packet (CONNECT-IP, a tcp flow).
#[test]
fn datagram_sizes_follow_connect_udp_and_connect_ip() {
    let cbr = ACCESSES.replace("transport = \"quic\"\napp = \"bulk\"\nsize = \"4 MB\"", "transport = \"udp\"\napp = \"cbr\"\nrate = \"2 Mbit/s\"\nstop = \"10 s\"");
    let (summary, _) = run(&cbr, None);
    let (proxy, inner) = (flow(&summary, "proxy"), flow(&summary, "inner"));
    let c = &proxy["tunnel"]["forward"];
    let packets = n(&c["packets"]);
    // 2 Mbit/s of 1400-byte packets for 10 s.
    assert!((1780..=1790).contains(&packets), "{c}");
    assert_eq!(n(&c["datagram_bytes"]), packets * (1400 - 28 + 2), "{c}");
    assert_eq!(n(&proxy["tunnel"]["reverse"]["packets"]), 0, "a udp flow sends one way");
    assert_eq!(n(&inner["bytes_delivered"]), n(&c["delivered"]) * (1400 - 28), "{inner}");

    let tcp = ACCESSES.replace("transport = \"quic\"\napp = \"bulk\"\nsize = \"4 MB\"", "transport = \"tcp\"\napp = \"bulk\"\nsize = \"4 MB\"");
    let (summary, _) = run(&tcp, None);
    let (proxy, inner) = (flow(&summary, "proxy"), flow(&summary, "inner"));
    assert_eq!(inner["tunnel"]["mode"], "connect-ip");
    let c = &proxy["tunnel"]["forward"];
    // bytes_sent counts the sender's IP packets, headers included.
    assert_eq!(n(&c["datagram_bytes"]), n(&inner["bytes_sent"]) + 2 * n(&c["packets"]), "{c} {inner}");
    assert_eq!(n(&inner["bytes_delivered"]), 4_000_000);
}

/// Loss on the access: the tunnel declares datagrams lost and never sends them again; the
/// QUIC flow inside repairs them itself and still delivers every byte.
#[test]
fn the_tunnel_never_repairs_a_loss_the_flow_inside_does() {
    let lossy = ACCESSES.replace("queue = \"100 packets\"\n\n[[link]]\nname = \"wlan\"", "queue = \"100 packets\"\nloss = \"1 %\"\n\n[[link]]\nname = \"wlan\"");
    let (summary, _) = run(&lossy.replace("duration = \"20 s\"", "duration = \"60 s\""), None);
    let (proxy, inner) = (flow(&summary, "proxy"), flow(&summary, "inner"));
    let lost = n(&proxy["tunnel"]["forward"]["lost"]) + n(&proxy["tunnel"]["reverse"]["lost"]);
    assert!(lost > 20, "1 % of some 4500 packets: {}", proxy["tunnel"]);
    assert_eq!(n(&proxy["retransmissions"]), 0, "{proxy}");
    assert!(n(&inner["retransmissions"]) >= n(&proxy["tunnel"]["forward"]["lost"]), "the flow inside resends what the tunnel lost: {inner}");
    assert_eq!(n(&inner["bytes_delivered"]), 4_000_000);
}

/// Over both accesses: the redundant scheduler copies every datagram onto both paths and the
/// far end hands each over once; min-RTT spreads them, and the QUIC flow inside sees the
/// reordering between the paths as losses that turn out spurious, which a single path never
/// shows it.
#[test]
fn multipath_tunnels_copy_once_delivered_and_reorder_the_flow_inside() {
    let mp = |scheduler: &str| {
        let text = ACCESSES.replace("route = [\"a3gpp\"]", &format!("paths = [[\"a3gpp\"], [\"wlan\"]]\nmultipath = {{ scheduler = \"{scheduler}\" }}"));
        run(&text, None).0
    };
    let redundant = mp("redundant");
    let (proxy, inner) = (flow(&redundant, "proxy"), flow(&redundant, "inner"));
    let c = &proxy["tunnel"]["forward"];
    let sent: u64 = proxy["paths"].as_array().unwrap().iter().map(|p| n(&p["server"]["packets_sent"])).sum();
    // The 10 Mbit/s access takes a copy whenever its window has room: most of them.
    assert!(sent as f64 > 1.5 * n(&c["packets"]) as f64, "copies on both paths: {sent} packets for {c}");
    assert_eq!(n(&c["delivered"]) + n(&c["lost"]) + n(&c["in_tunnel_at_end"]), n(&c["packets"]), "each delivered once: {c}");
    assert_eq!(n(&inner["bytes_delivered"]), 4_000_000);

    let minrtt = mp("minrtt");
    let inner_mp = flow(&minrtt, "inner");
    for dir in ["forward", "reverse"] {
        let c = &flow(&minrtt, "proxy")["tunnel"][dir];
        assert_eq!(n(&c["delivered"]) + n(&c["lost"]) + n(&c["dropped_send_buffer"]) + n(&c["in_tunnel_at_end"]), n(&c["packets"]), "{dir}: {c}");
    }
    assert_eq!(n(&inner_mp["bytes_delivered"]), 4_000_000);
    let single = run(ACCESSES, None).0;
    let inner_sp = flow(&single, "inner");
    assert_eq!(n(&inner_sp["spurious_retransmissions"]), 0, "{inner_sp}");
    assert!(n(&inner_mp["spurious_retransmissions"]) > 10, "reordering between a 25 ms and a 10 ms access: {inner_mp}");
}

/// The same seed, the same summary.
#[test]
fn a_tunnel_run_is_deterministic() {
    let text = ACCESSES.replace("route = [\"a3gpp\"]", "paths = [[\"a3gpp\"], [\"wlan\"]]\nmultipath = { scheduler = \"atsss_load_balancing\" }");
    let a = run(&text, Some(11)).1.summary_json;
    let b = run(&text, Some(11)).1.summary_json;
    assert_eq!(a, b);
}

/// What cannot be tunnelled is refused at the field, in one line.
#[test]
fn what_cannot_be_tunnelled_is_refused_at_the_field() {
    let too_big = refusal(&ACCESSES.replace("packet_size = \"1400 B\"", "packet_size = \"1500 B\""));
    assert!(too_big.contains("flow.inner.packet_size") && too_big.contains("set packet_size to at most"), "{too_big}");
    assert!(!too_big.contains('\n'), "{too_big}");
    let largest: u64 = too_big.rsplit("at most ").next().unwrap().trim_end_matches(" B").parse().unwrap();
    // The largest size it names fits, one more byte does not.
    let fits = ACCESSES.replace("packet_size = \"1400 B\"", &format!("packet_size = \"{largest} B\""));
    assert!(load_str(&fits).is_ok());
    let over = ACCESSES.replace("packet_size = \"1400 B\"", &format!("packet_size = \"{} B\"", largest + 1));
    assert!(refusal(&over).contains("flow.inner.packet_size"));

    let not_a_tunnel = refusal(&ACCESSES.replace("app = \"tunnel\"", "app = \"bulk\""));
    assert!(not_a_tunnel.contains("flow.inner.tunnel") && not_a_tunnel.contains("app = \"tunnel\""), "{not_a_tunnel}");
    let nobody = refusal(&ACCESSES.replace("tunnel = \"proxy\"", "route = [\"wlan\"]"));
    assert!(nobody.contains("flow.proxy.app") && nobody.contains("no running flow names this tunnel"), "{nobody}");
    let unknown = refusal(&ACCESSES.replace("tunnel = \"proxy\"", "tunnel = \"vpn\""));
    assert!(unknown.contains("flow.inner.tunnel") && unknown.contains("no flow named \"vpn\""), "{unknown}");
    let own_route = refusal(&ACCESSES.replace("tunnel = \"proxy\"", "tunnel = \"proxy\"\nroute = [\"wlan\"]"));
    assert!(own_route.contains("flow.inner.route"), "{own_route}");
    let over_tcp = refusal(&ACCESSES.replace("transport = \"quic\"\napp = \"tunnel\"", "transport = \"tcp\"\napp = \"tunnel\""));
    assert!(over_tcp.contains("flow.proxy.app") && over_tcp.contains("quic"), "{over_tcp}");
    let elsewhere = ACCESSES.replace("from = \"upf\"\nto = \"ue\"\ntransport = \"quic\"\napp = \"bulk\"", "from = \"upf\"\nto = \"dn\"\ntransport = \"quic\"\napp = \"bulk\"");
    let elsewhere = refusal(&elsewhere);
    assert!(elsewhere.contains("flow.inner.tunnel") && elsewhere.contains("between its own two nodes"), "{elsewhere}");
    let emulated = refusal(&ACCESSES.replace("tunnel = \"proxy\"", "tunnel = \"proxy\"\nemulate = { stack = \"ngtcp2\" }"));
    assert!(emulated.contains("flow.inner.emulate") && emulated.contains("does not run tunnels"), "{emulated}");
    let bulk_udp = refusal(&ACCESSES.replace("transport = \"quic\"\napp = \"bulk\"\nsize = \"4 MB\"", "transport = \"udp\"\napp = \"bulk\""));
    assert!(bulk_udp.contains("flow.inner.app") && bulk_udp.contains("cbr"), "{bulk_udp}");
}
