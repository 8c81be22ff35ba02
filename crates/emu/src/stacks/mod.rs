//! Launch recipes of the real stacks: what runs on a flow's `from` node (the server, which
//! sends the data) and on its `to` node (the client, which downloads it), with which
//! arguments, how readiness is seen and how the result is read back.
//!
//! What each stack can do is its row in the stacks' table
//! ([`multiconn_scenario::stacks`]); [`launch`] checks the flow against it once for every
//! stack, then hands it to the stack's own launcher, one file each, which follows the tool's
//! documented options and its binding rule (an MPTCP listener binds the wildcard address, as a
//! subflow arrives on another address; every other server binds its flow's address):
//!
//! * [`kernel`]: iperf3 over the kernel's TCP and MPTCP (iperf3(1), mptcpize(8));
//! * [`ngtcp2`]: Debian's `gtlsserver`/`gtlsclient`;
//! * [`aioquic`]: aioquic's API through `multiconn.emu_aioquic`;
//! * [`tquic`]: tquic's own `tquic_server`/`tquic_client`;
//! * [`command`]: the user's programs, with placeholders.
//!
//! A new real stack is one row in the table, one launcher file here and its arm in [`launch`]
//! (the test-only `test_python_tcp` shows it, behind the feature `test-stack`).

mod aioquic;
mod command;
mod kernel;
mod ngtcp2;
#[cfg(feature = "test-stack")]
mod test_python_tcp;
mod tquic;

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use multiconn_scenario::resolve::{EmulateSpec, Flow};
use multiconn_scenario::schema::{FlowDirection, Transport};
use multiconn_scenario::stacks::{RealStack, STACKS};

use crate::sandbox::on_path;

pub use command::fill_placeholders;

/// How a flow's stack is started.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The stack.
    pub stack: RealStack,
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

/// What a launcher needs to know beside the flow and its addresses.
struct Settings<'a> {
    stack: RealStack,
    /// The flow's own output folder.
    dir: &'a Path,
    /// The Python interpreter that has aioquic and multiconn.
    python: &'a str,
    /// The run's wall-clock length in seconds (at least 1), for a flow without a size.
    secs: String,
    /// The flow's controller (`cubic` for a flow without a connection), and the same with
    /// `newreno` named `reno` as the kernel, ngtcp2 and aioquic name it.
    cc: &'static str,
    cc_reno: &'static str,
    /// ECN asked for by the flow's profile.
    ecn: bool,
    /// An upload (`direction = "up"`).
    upload: bool,
}

/// The recipe of `flow`, or why it cannot run here (a tool not installed, something the
/// stack's row in the table says it cannot do).
pub fn launch(flow: &Flow, addrs: &FlowAddresses, ctx: &Context) -> Result<Launch, String> {
    let spec = flow.emulate.as_ref().ok_or_else(|| match flow.connection.as_ref().and_then(|c| c.stack) {
        Some(library) => format!(
            "flow \"{}\": stack {} runs inside the simulator and is none of the emulator's; name one in [flow.emulate] stack = \"...\" ({})",
            flow.name,
            library.name(),
            multiconn_scenario::stacks::names()
        ),
        None => format!("flow \"{}\": no real stack fits a {} {} flow; give it [flow.emulate] client = \"...\" (and server) with your own programs", flow.name, flow.transport.name(), flow.app.name()),
    })?;
    let stack = spec.stack();
    let row = stack.row();
    let cc = flow.connection.as_ref().map(|c| c.cc.name()).unwrap_or("cubic");
    let ctx = Settings {
        stack,
        dir: ctx.dir,
        python: ctx.python,
        secs: format!("{:.3}", ctx.duration_s.max(1.0)),
        cc,
        cc_reno: if cc == "newreno" { "reno" } else { cc },
        ecn: flow.connection.as_ref().is_some_and(|c| c.profile.ecn),
        upload: flow.direction == FlowDirection::Up,
    };
    let ctx = &ctx;
    if ctx.ecn && !row.ecn {
        let ecn_stacks = STACKS.iter().filter(|r| r.ecn).map(|r| r.name).collect::<Vec<_>>().join(", ");
        return Err(format!(
            "flow \"{}\": ecn = true can be switched on only for the kernel stacks ({ecn_stacks}: net.ipv4.tcp_ecn = 1 in their namespaces), not for {}; leave ecn out to run it",
            flow.name,
            stack.name()
        ));
    }
    if ctx.upload && !row.upload {
        let up = STACKS.iter().filter(|r| r.upload).map(|r| r.name).collect::<Vec<_>>().join(", ");
        return Err(format!("flow \"{}\": direction = \"up\" runs with {up}, not with {}; the simulator runs it", flow.name, stack.name()));
    }
    if !row.controllers.is_empty() && !row.controllers.contains(&ctx.cc) {
        return Err(format!("flow \"{}\": {} offers {}, not cc = \"{}\"", flow.name, stack.name(), row.controllers.join(", "), ctx.cc));
    }
    if row.transport == Some(Transport::Quic) {
        std::fs::create_dir_all(ctx.dir.join("qlog-server")).map_err(|e| format!("{}: {e}", ctx.dir.join("qlog-server").display()))?;
    }
    let launch = match spec {
        EmulateSpec::Stack(RealStack::KernelTcp) => kernel::launch(flow, addrs, ctx, false),
        EmulateSpec::Stack(RealStack::KernelMptcp) => kernel::launch(flow, addrs, ctx, true),
        EmulateSpec::Stack(RealStack::Ngtcp2) => ngtcp2::launch(flow, addrs, ctx),
        EmulateSpec::Stack(RealStack::Aioquic) => aioquic::launch(flow, addrs, ctx),
        EmulateSpec::Stack(RealStack::Tquic) => tquic::launch(flow, addrs, ctx),
        #[cfg(feature = "test-stack")]
        EmulateSpec::Stack(RealStack::TestPythonTcp) => test_python_tcp::launch(flow, addrs, ctx),
        EmulateSpec::Stack(RealStack::Command) => unreachable!("resolve gives the user's commands as EmulateSpec::Command"),
        EmulateSpec::Command { server, client } => command::launch(flow, addrs, ctx, server.as_deref(), client),
    }?;
    Ok(launch)
}

impl Settings<'_> {
    /// `secs`, for the launchers that format it.
    fn secs(&self) -> &str {
        &self.secs
    }
}

/// `tool` is on the PATH, or the error naming the package that has it.
fn need(flow: &Flow, tool: &str, package: &str) -> Result<(), String> {
    let stack = flow.emulate.as_ref().map_or("", |s| s.name());
    if on_path(tool) { Ok(()) } else { Err(format!("flow \"{}\": stack {stack} needs `{tool}` ({package})", flow.name)) }
}

/// An argument vector.
fn argv(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
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
