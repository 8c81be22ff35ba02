//! ngtcp2 0.12.1 as Debian ships it: the example server and client linked with GnuTLS
//! (`gtlsserver`, `gtlsclient --help`). The server serves a generated body of the flow's size
//! (`--max-dyn-length`); the client fetches `https://<server>:4433/<size>` and exits when the
//! stream closes; both write qlogs into the flow's folder.

use multiconn_scenario::resolve::Flow;
use multiconn_scenario::schema::Transport;

use super::{argv, need, Settings, FlowAddresses, Launch, ReportKind, UNLIMITED_BYTES};

/// `gtlsserver` and `gtlsclient`.
pub(super) fn launch(flow: &Flow, addrs: &FlowAddresses, ctx: &Settings) -> Result<Launch, String> {
    need(flow, "gtlsserver", "Debian: apt-get install ngtcp2-server")?;
    need(flow, "gtlsclient", "Debian: apt-get install ngtcp2-client")?;
    let server = addrs.paths[0].0;
    let dir = ctx.dir.display().to_string();
    let bytes = flow.size.unwrap_or(UNLIMITED_BYTES);
    let server_argv = argv(&[
        "gtlsserver", &server.to_string(), "4433", &format!("{dir}/key.pem"), &format!("{dir}/cert.pem"), "-q", "--cc", ctx.cc_reno,
        &format!("--max-dyn-length={bytes}"), "--qlog-dir", &format!("{dir}/qlog-server"),
    ]);
    let client_argv = argv(&[
        "gtlsclient", &server.to_string(), "4433", &format!("https://{server}:4433/{bytes}"), "-q", "--exit-on-all-streams-close",
        "--cc", ctx.cc_reno, "--qlog-file", &format!("{dir}/client.qlog"),
    ]);
    Ok(Launch { stack: ctx.stack, server: Some(server_argv), listen: Some((Transport::Quic, 4433)), client: client_argv, setup: Default::default(), sysctls: Default::default(), report: None, report_kind: ReportKind::None })
}
