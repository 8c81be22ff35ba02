//! aioquic through `multiconn.emu_aioquic` (its API with its defaults kept, the `aioquic-1.7`
//! profile's model): the server sends the client's requested size, or receives it with
//! `--upload`; the client's JSON report gives the bytes, seconds and handshake time.

use multiconn_scenario::resolve::Flow;
use multiconn_scenario::schema::Transport;

use super::{argv, Settings, FlowAddresses, Launch, ReportKind, UNLIMITED_BYTES};

/// `python -m multiconn.emu_aioquic server|client`.
pub(super) fn launch(flow: &Flow, addrs: &FlowAddresses, ctx: &Settings) -> Result<Launch, String> {
    let server = addrs.paths[0].0;
    let dir = ctx.dir.display().to_string();
    let bytes = flow.size.unwrap_or(UNLIMITED_BYTES).to_string();
    let report = ctx.dir.join("client.json");
    let run = |role: &str| argv(&[ctx.python, "-m", "multiconn.emu_aioquic", role, "--host", &server.to_string(), "--port", "4433", "--cc", ctx.cc_reno]);
    let mut server_argv = run("server");
    server_argv.extend(argv(&["--cert", &format!("{dir}/cert.pem"), "--key", &format!("{dir}/key.pem"), "--qlog-dir", &format!("{dir}/qlog-server")]));
    let mut client_argv = run("client");
    client_argv.extend(argv(&["--size", &bytes, "--report", &report.display().to_string()]));
    if ctx.upload {
        client_argv.push("--upload".to_string());
    }
    Ok(Launch { stack: ctx.stack, server: Some(server_argv), listen: Some((Transport::Quic, 4433)), client: client_argv, setup: Default::default(), sysctls: Default::default(), report: Some(report), report_kind: ReportKind::Json })
}
