//! tquic 1.6's own tools, `tquic_server` and `tquic_client` (draft-05 multipath QUIC; they
//! talk only to each other).

use multiconn_scenario::resolve::Flow;
use multiconn_scenario::schema::Transport;

use super::{Settings, FlowAddresses, Launch, ReportKind, UNLIMITED_BYTES};
use crate::sandbox::find_tool;

/// tquic 1.6 (draft-05 multipath QUIC) with its own `tquic_server` and `tquic_client`: the
/// client opens a path from each of its addresses to the server's first address (a
/// source-based route per extra path sends it out of that path's TUN), the server's
/// scheduler (the sender's) is the flow's `multipath.scheduler`. The tools' timeouts are set
/// explicitly: their help says microseconds but the library takes milliseconds.
pub(super) fn launch(flow: &Flow, addrs: &FlowAddresses, ctx: &Settings) -> Result<Launch, String> {
    let size = flow.size;
    let tool = |name: &str| {
        find_tool(name).map(|p| p.display().to_string()).ok_or_else(|| {
            format!("flow \"{}\": stack tquic needs `{name}` (cargo install tquic_tools --version 1.6.0; `make setup` does it when cmake and a C++ compiler are there)", flow.name)
        })
    };
    let (server_bin, client_bin) = (tool("tquic_server")?, tool("tquic_client")?);
    let algor = match flow.connection.as_ref().and_then(|c| c.multipath.as_ref()).map(|m| format!("{:?}", m.scheduler)) {
        None => "MINRTT".to_string(),
        // The simulator's model of tquic's own min-RTT (it passes over paths their pacers
        // hold) and the generic min-RTT both name tquic's MINRTT.
        Some(k) if k == "MinRtt" || k == "TquicMinRtt" => "MINRTT".into(),
        Some(k) if k == "RoundRobin" => "ROUNDROBIN".into(),
        // The simulator's model of tquic's own rule and the RE it is compared with both name
        // tquic's REDUNDANT.
        Some(k) if k == "Redundant" || k == "TquicRedundant" => "REDUNDANT".into(),
        Some(k) => return Err(format!("flow \"{}\": tquic schedules with minrtt, tquic_minrtt, roundrobin, redundant or tquic_redundant, not {k}", flow.name)),
    };
    // The stacks' table offers only these three (tquic 1.6 `CongestionControlAlgorithm`
    // from_str: cubic, bbr, bbr3, copa, dummy).
    let cc = match ctx.cc {
        "bbr" => "BBR",
        "bbr3" => "BBR3",
        _ => "CUBIC",
    };
    let www = ctx.dir.join("www");
    std::fs::create_dir_all(&www).map_err(|e| format!("{}: {e}", www.display()))?;
    // A sparse file of the download's size.
    std::fs::File::create(www.join("f"))
        .and_then(|f| f.set_len(size.unwrap_or(UNLIMITED_BYTES)))
        .map_err(|e| format!("{}: {e}", www.join("f").display()))?;
    let dir = ctx.dir.display().to_string();
    let server = addrs.paths[0].0;
    let locals: Vec<String> = addrs.paths.iter().map(|(_, c)| c.to_string()).collect();
    let multipath = addrs.paths.len() > 1;
    let common = |v: &mut Vec<String>| {
        v.extend(["--congestion-control-algor", cc, "--idle-timeout", "30000", "--handshake-timeout", "10000", "--max-pto", "10000", "--log-level", "WARN"].map(String::from));
        if multipath {
            v.extend(["--enable-multipath".to_string(), "--multipath-algor".to_string(), algor.clone()]);
        }
    };
    let mut server_argv: Vec<String> = vec![server_bin, "-l".into(), format!("{server}:4433"), "-c".into(), format!("{dir}/cert.pem"), "-k".into(), format!("{dir}/key.pem"), "-r".into(), www.display().to_string(), "--qlog-dir".into(), format!("{dir}/qlog-server")];
    common(&mut server_argv);
    let mut client_argv: Vec<String> = vec![client_bin, format!("https://{server}:4433/f"), "-c".into(), format!("{server}:4433"), "--local-addresses".into(), locals.join(","), "--qlog-dir".into(), format!("{dir}/qlog-client")];
    common(&mut client_argv);
    let mut client_setup = Vec::new();
    for (p, (_, local)) in addrs.paths.iter().enumerate().skip(1) {
        client_setup.push(format!("rule add from {local} table {} pref {}", 100 + p, 100 + p));
        client_setup.push(format!("route add {server} dev {} src {local} table {}", addrs.tuns[p], 100 + p));
    }
    Ok(Launch { stack: ctx.stack, server: Some(server_argv), listen: Some((Transport::Quic, 4433)), client: client_argv, setup: [Vec::new(), client_setup], sysctls: Default::default(), report: None, report_kind: ReportKind::None })
}

