//! Launch recipes of the real stacks: what runs on a flow's `from` node (the server, which
//! sends the data) and on its `to` node (the client, which downloads it), with which
//! arguments, how readiness is seen and how the result is read back.
//!
//! The recipes follow each tool's documented options (iperf3(1), mptcpize(8),
//! ngtcp2's `gtlsserver`/`gtlsclient --help`, aioquic's API through `multiconn.emu_aioquic`)
//! and encode each stack's binding rule: an MPTCP listener binds the wildcard address (a
//! subflow arrives on another address), every other server binds its flow's address.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use multiconn_scenario::resolve::{EmulateSpec, Flow};
use multiconn_scenario::schema::Transport;

use crate::sandbox::{find_tool, on_path};

/// How a flow's stack is started.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The stack's name.
    pub stack: String,
    /// The program on the `from` node, started before the run (none: the client needs no
    /// server of ours).
    pub server: Option<Vec<String>>,
    /// The transport and port the server listens on, to wait for.
    pub listen: Option<(Transport, u16)>,
    /// The program on the `to` node, started at the flow's start; the flow ends when it exits.
    pub client: Vec<String>,
    /// `ip -batch` lines for the `from` node and the `to` node before anything starts.
    pub setup: [Vec<String>; 2],
    /// Per-namespace network sysctls to set on the (`from`, `to`) hosts before the programs
    /// start, as (`net/...` key, value).
    pub sysctls: [Vec<(String, String)>; 2],
    /// Where the client writes its report (read back by [`read_app_result`]).
    pub report: Option<PathBuf>,
    /// How to read the report.
    pub report_kind: ReportKind,
}

/// The format of a client's report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportKind {
    /// iperf3 `-J`: `end.sum_received`.
    Iperf3,
    /// `multiconn.emu_aioquic`: `{"bytes", "seconds"}`.
    Json,
    /// None: the emulator's own counters and the client's run time.
    None,
}

/// A flow's addresses, per path: the `from` node's (server) and the `to` node's (client).
#[derive(Debug, Clone)]
pub struct FlowAddresses {
    /// Per path: (server, client).
    pub paths: Vec<(Ipv4Addr, Ipv4Addr)>,
    /// Per path: the TUN's name (the same inside both hosts).
    pub tuns: Vec<String>,
}

/// What a recipe is built from beside the flow.
pub struct Context<'a> {
    /// The flow's own output folder (reports, logs, keys).
    pub dir: &'a Path,
    /// The Python interpreter that has aioquic and multiconn.
    pub python: &'a str,
    /// The run's wall-clock length when the flow has no size, seconds.
    pub duration_s: f64,
}

/// The payload of a flow without a size: more than any emulated run can move.
const UNLIMITED_BYTES: u64 = 1 << 40;

/// The namespace settings of the kernel stacks' hosts.
///
/// * `net.ipv4.tcp_congestion_control = reno`: a new namespace takes the machine's default
///   controller, and a socket set up by BBR (a common default) keeps the kernel's internal
///   pacing when iperf3 then switches it to the flow's controller (`-C`), so CUBIC would run
///   paced, unlike Linux's CUBIC elsewhere and the `linux-tcp` profile. Reno, always allowed,
///   sets up the sockets without pacing, and `-C` then gives them the flow's controller.
/// * `net.ipv4.tcp_ecn = 1` with `ecn`: RFC 3168 ECN requested and accepted by both ends
///   (Linux's default, 2, only accepts).
fn kernel_tcp_sysctls(ecn: bool) -> Vec<(String, String)> {
    let mut out = vec![("net/ipv4/tcp_congestion_control".to_string(), "reno".to_string())];
    if ecn {
        out.push(("net/ipv4/tcp_ecn".to_string(), "1".to_string()));
    }
    out
}

/// The recipe of `flow`, or why it cannot run here (a tool not installed, no stack fits).
pub fn launch(flow: &Flow, addrs: &FlowAddresses, ctx: &Context) -> Result<Launch, String> {
    let spec = flow.emulate.as_ref().ok_or_else(|| {
        format!("flow \"{}\": no real stack fits a {} {} flow; give it [flow.emulate] client = \"...\" (and server) with your own programs", flow.name, flow.transport.name(), flow.app.name())
    })?;
    let (server, client) = (addrs.paths[0].0, addrs.paths[0].1);
    let cc = flow.connection.as_ref().map(|c| c.cc.name()).unwrap_or("cubic");
    let ecn = flow.connection.as_ref().is_some_and(|c| c.profile.ecn);
    if ecn && !matches!(spec, EmulateSpec::Stack(s) if s == "kernel-tcp" || s == "kernel-mptcp") {
        return Err(format!(
            "flow \"{}\": ecn = true can be switched on only for the kernel stacks (kernel-tcp, kernel-mptcp: net.ipv4.tcp_ecn = 1 in their namespaces), not for {}; leave ecn out to run it",
            flow.name,
            spec.name()
        ));
    }
    let upload = flow.direction == multiconn_scenario::schema::FlowDirection::Up;
    if upload && !matches!(spec, EmulateSpec::Command { .. }) && !matches!(spec, EmulateSpec::Stack(s) if s == "kernel-tcp" || s == "kernel-mptcp" || s == "aioquic") {
        return Err(format!(
            "flow \"{}\": direction = \"up\" runs with kernel-tcp, kernel-mptcp (iperf3 sending from its client), aioquic (its client sending) or your own commands, not with {}; the simulator runs it",
            flow.name,
            spec.name()
        ));
    }
    let size = flow.size;
    let dir = ctx.dir.display().to_string();
    let secs = format!("{:.3}", ctx.duration_s.max(1.0));
    let need = |tool: &str, package: &str| if on_path(tool) { Ok(()) } else { Err(format!("flow \"{}\": stack {} needs `{tool}` ({package})", flow.name, spec.name())) };
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let none: [Vec<String>; 2] = [Vec::new(), Vec::new()];
    if matches!(spec, EmulateSpec::Stack(s) if s == "ngtcp2" || s == "aioquic" || s == "tquic") {
        std::fs::create_dir_all(ctx.dir.join("qlog-server")).map_err(|e| format!("{}: {e}", ctx.dir.join("qlog-server").display()))?;
    }
    match spec {
        EmulateSpec::Stack(stack) if stack == "kernel-tcp" || stack == "kernel-mptcp" => {
            need("iperf3", "Debian: apt-get install iperf3")?;
            let mptcp = stack == "kernel-mptcp";
            if mptcp {
                need("mptcpize", "Debian: apt-get install mptcpize")?;
            }
            let kernel_cc = if cc == "newreno" { "reno" } else { cc };
            let report = ctx.dir.join("iperf3.json");
            let mut server_argv = s(&["iperf3", "-s", "-p", "5201", "-1"]);
            if !mptcp {
                server_argv.extend(s(&["-B", &server.to_string()]));
            }
            // -R: the server sends (a download); an upload is iperf3's default direction.
            let mut client_argv = s(&["iperf3", "-c", &server.to_string(), "-p", "5201", "-C", kernel_cc, "-J", "--logfile", &report.display().to_string()]);
            if !upload {
                client_argv.insert(5, "-R".to_string());
            }
            match size {
                Some(n) => client_argv.extend(s(&["-n", &n.to_string()])),
                None => client_argv.extend(s(&["-t", &secs])),
            }
            let mut setup = none;
            if mptcp {
                let limits = "mptcp limits set subflow 8 add_addr_accepted 8".to_string();
                setup = [vec![limits.clone()], vec![limits]];
                for (p, (srv, _)) in addrs.paths.iter().enumerate().skip(1) {
                    setup[0].push(format!("mptcp endpoint add {srv} dev {} signal", addrs.tuns[p]));
                }
                server_argv.splice(0..0, s(&["mptcpize", "run"]));
                client_argv.splice(0..0, s(&["mptcpize", "run"]));
            }
            let sysctl = kernel_tcp_sysctls(ecn);
            let sysctls = [sysctl.clone(), sysctl];
            Ok(Launch { stack: stack.clone(), server: Some(server_argv), listen: Some((Transport::Tcp, 5201)), client: client_argv, setup, sysctls, report: Some(report), report_kind: ReportKind::Iperf3 })
        }
        EmulateSpec::Stack(stack) if stack == "ngtcp2" => {
            need("gtlsserver", "Debian: apt-get install ngtcp2-server")?;
            need("gtlsclient", "Debian: apt-get install ngtcp2-client")?;
            let bytes = size.unwrap_or(UNLIMITED_BYTES);
            let ngtcp2_cc = if cc == "newreno" { "reno" } else { cc };
            let server_argv = s(&[
                "gtlsserver", &server.to_string(), "4433", &format!("{dir}/key.pem"), &format!("{dir}/cert.pem"), "-q", "--cc", ngtcp2_cc,
                &format!("--max-dyn-length={bytes}"), "--qlog-dir", &format!("{dir}/qlog-server"),
            ]);
            let client_argv = s(&[
                "gtlsclient", &server.to_string(), "4433", &format!("https://{server}:4433/{bytes}"), "-q", "--exit-on-all-streams-close",
                "--cc", ngtcp2_cc, "--qlog-file", &format!("{dir}/client.qlog"),
            ]);
            Ok(Launch { stack: stack.clone(), server: Some(server_argv), listen: Some((Transport::Quic, 4433)), client: client_argv, setup: none.clone(), sysctls: Default::default(), report: None, report_kind: ReportKind::None })
        }
        EmulateSpec::Stack(stack) if stack == "aioquic" => {
            let bytes = size.unwrap_or(UNLIMITED_BYTES).to_string();
            let aioquic_cc = if cc == "newreno" { "reno" } else { cc };
            let report = ctx.dir.join("client.json");
            let run = |role: &str| s(&[ctx.python, "-m", "multiconn.emu_aioquic", role, "--host", &server.to_string(), "--port", "4433", "--cc", aioquic_cc]);
            let mut server_argv = run("server");
            server_argv.extend(s(&["--cert", &format!("{dir}/cert.pem"), "--key", &format!("{dir}/key.pem"), "--qlog-dir", &format!("{dir}/qlog-server")]));
            let mut client_argv = run("client");
            client_argv.extend(s(&["--size", &bytes, "--report", &report.display().to_string()]));
            if upload {
                client_argv.push("--upload".to_string());
            }
            Ok(Launch { stack: stack.clone(), server: Some(server_argv), listen: Some((Transport::Quic, 4433)), client: client_argv, setup: none.clone(), sysctls: Default::default(), report: Some(report), report_kind: ReportKind::Json })
        }
        EmulateSpec::Stack(stack) if stack == "tquic" => tquic(flow, addrs, ctx, size, cc),
        EmulateSpec::Stack(stack) => Err(format!("flow \"{}\": stack {stack} is not known to this emulator", flow.name)),
        EmulateSpec::Command { server: srv, client: cli } => {
            let mut vars = BTreeMap::new();
            vars.insert("server_addr".to_string(), server.to_string());
            vars.insert("client_addr".to_string(), client.to_string());
            for (p, (a, b)) in addrs.paths.iter().enumerate() {
                vars.insert(format!("server_addr{p}"), a.to_string());
                vars.insert(format!("client_addr{p}"), b.to_string());
            }
            vars.insert("port".into(), "5201".into());
            vars.insert("size".into(), size.unwrap_or(UNLIMITED_BYTES).to_string());
            vars.insert("duration".into(), secs.clone());
            vars.insert("cc".into(), cc.into());
            vars.insert("out".into(), dir.clone());
            let fill = |text: &str, key: &str| fill_placeholders(text, &vars).map_err(|m| format!("flow \"{}\": emulate.{key}: {m}", flow.name));
            let server_argv = srv.as_deref().map(|t| fill(t, "server")).transpose()?.map(|c| s(&["sh", "-c", &c]));
            let client_argv = s(&["sh", "-c", &fill(cli, "client")?]);
            Ok(Launch { stack: "command".into(), server: server_argv, listen: None, client: client_argv, setup: none.clone(), sysctls: Default::default(), report: None, report_kind: ReportKind::None })
        }
    }
}

/// tquic 1.6 (draft-05 multipath QUIC) with its own `tquic_server` and `tquic_client`: the
/// client opens a path from each of its addresses to the server's first address (a
/// source-based route per extra path sends it out of that path's TUN), the server's
/// scheduler (the sender's) is the flow's `multipath.scheduler`. The tools' timeouts are set
/// explicitly: their help says microseconds but the library takes milliseconds.
fn tquic(flow: &Flow, addrs: &FlowAddresses, ctx: &Context, size: Option<u64>, cc: &str) -> Result<Launch, String> {
    let tool = |name: &str| {
        find_tool(name).map(|p| p.display().to_string()).ok_or_else(|| {
            format!("flow \"{}\": stack tquic needs `{name}` (cargo install tquic_tools --version 1.6.0; `make setup` does it when cmake and a C++ compiler are there)", flow.name)
        })
    };
    let (server_bin, client_bin) = (tool("tquic_server")?, tool("tquic_client")?);
    let algor = match flow.connection.as_ref().and_then(|c| c.multipath.as_ref()).map(|m| format!("{:?}", m.scheduler)) {
        None => "MINRTT".to_string(),
        Some(k) if k == "MinRtt" => "MINRTT".into(),
        Some(k) if k == "RoundRobin" => "ROUNDROBIN".into(),
        // The simulator's model of tquic's own rule and the RE it is compared with both name
        // tquic's REDUNDANT.
        Some(k) if k == "Redundant" || k == "TquicRedundant" => "REDUNDANT".into(),
        Some(k) => return Err(format!("flow \"{}\": tquic schedules with minrtt, roundrobin, redundant or tquic_redundant, not {k}", flow.name)),
    };
    let cc = match cc {
        "cubic" => "CUBIC",
        "bbr" => "BBR",
        other => return Err(format!("flow \"{}\": tquic offers cubic and bbr, not {other}", flow.name)),
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
    Ok(Launch { stack: "tquic".into(), server: Some(server_argv), listen: Some((Transport::Quic, 4433)), client: client_argv, setup: [Vec::new(), client_setup], sysctls: Default::default(), report: None, report_kind: ReportKind::None })
}

/// Replaces every `{name}` in `text` with its value; an unknown name is an error that lists
/// the known ones.
pub fn fill_placeholders(text: &str, vars: &BTreeMap<String, String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            return Err(format!("an unclosed '{{' in \"{text}\""));
        };
        let name = &rest[open + 1..open + close];
        match vars.get(name) {
            Some(v) => out.push_str(v),
            None => return Err(format!("unknown placeholder {{{name}}}; known: {}", vars.keys().map(|k| format!("{{{k}}}")).collect::<Vec<_>>().join(", "))),
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// What the application itself reported: payload bytes received and the seconds it took.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AppResult {
    /// Payload bytes the client received.
    pub bytes: u64,
    /// Over how many seconds.
    pub seconds: f64,
}

/// Reads a client's report, if its stack writes one.
pub fn read_app_result(kind: ReportKind, path: &Path) -> Result<Option<AppResult>, String> {
    if kind == ReportKind::None {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    let (bytes, seconds) = match kind {
        ReportKind::Iperf3 => {
            if let Some(e) = v.get("error").and_then(|e| e.as_str()) {
                return Err(format!("{}: iperf3 reported: {e}", path.display()));
            }
            let r = &v["end"]["sum_received"];
            (r["bytes"].as_u64(), r["seconds"].as_f64())
        }
        _ => (v["bytes"].as_u64(), v["seconds"].as_f64()),
    };
    match (bytes, seconds) {
        (Some(bytes), Some(seconds)) => Ok(Some(AppResult { bytes, seconds })),
        _ => Err(format!("{}: no byte count and duration in the report", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_stacks_start_their_sockets_with_reno_and_ecn_only_when_asked() {
        let plain = kernel_tcp_sysctls(false);
        assert_eq!(plain, vec![("net/ipv4/tcp_congestion_control".to_string(), "reno".to_string())]);
        let with_ecn = kernel_tcp_sysctls(true);
        assert!(with_ecn.contains(&("net/ipv4/tcp_ecn".to_string(), "1".to_string())) && with_ecn.len() == 2, "{with_ecn:?}");
        // Every key is a per-namespace one the sandbox accepts.
        assert!(with_ecn.iter().all(|(k, _)| k.starts_with("net/") && !k.contains("..")));
    }

    #[test]
    fn placeholders_fill_and_unknown_ones_are_named() {
        let mut vars = BTreeMap::new();
        vars.insert("server_addr".to_string(), "198.18.0.2".to_string());
        vars.insert("port".to_string(), "5201".to_string());
        assert_eq!(fill_placeholders("iperf3 -c {server_addr} -p {port} -R", &vars).unwrap(), "iperf3 -c 198.18.0.2 -p 5201 -R");
        let e = fill_placeholders("x {nope}", &vars).unwrap_err();
        assert!(e.contains("{nope}") && e.contains("{server_addr}"), "{e}");
        assert!(fill_placeholders("x {port", &vars).unwrap_err().contains("unclosed"));
    }

    #[test]
    fn iperf3_reports_are_read_and_errors_named() {
        let dir = std::env::temp_dir().join(format!("mc-emu-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ok = dir.join("ok.json");
        std::fs::write(&ok, r#"{"end":{"sum_received":{"bytes":1000,"seconds":2.5}}}"#).unwrap();
        assert_eq!(read_app_result(ReportKind::Iperf3, &ok).unwrap(), Some(AppResult { bytes: 1000, seconds: 2.5 }));
        let bad = dir.join("bad.json");
        std::fs::write(&bad, r#"{"error":"unable to connect to server"}"#).unwrap();
        assert!(read_app_result(ReportKind::Iperf3, &bad).unwrap_err().contains("unable to connect"));
        assert_eq!(read_app_result(ReportKind::None, &bad).unwrap(), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
