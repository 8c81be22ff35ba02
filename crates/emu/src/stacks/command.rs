//! The user's own programs (`stack = "command"`): `server` on the flow's `from` node, `client`
//! on its `to` node, each run by `sh -c` with placeholders in braces filled in (the names and
//! the filling are the scenario crate's, `multiconn_scenario::stacks`, which `validate` checks
//! the commands with).

use std::collections::BTreeMap;

use multiconn_scenario::resolve::Flow;
pub use multiconn_scenario::stacks::fill_placeholders;

use super::{argv, Settings, FlowAddresses, Launch, ReportKind, UNLIMITED_BYTES};

/// The user's `server` (if any) and `client` commands.
pub(super) fn launch(flow: &Flow, addrs: &FlowAddresses, ctx: &Settings, srv: Option<&str>, cli: &str) -> Result<Launch, String> {
    let (server, client) = (addrs.paths[0].0, addrs.paths[0].1);
    let dir = ctx.dir.display().to_string();
    let mut vars = BTreeMap::new();
    vars.insert("server_addr".to_string(), server.to_string());
    vars.insert("client_addr".to_string(), client.to_string());
    for (p, (a, b)) in addrs.paths.iter().enumerate() {
        vars.insert(format!("server_addr{p}"), a.to_string());
        vars.insert(format!("client_addr{p}"), b.to_string());
    }
    vars.insert("port".into(), "5201".into());
    vars.insert("size".into(), flow.size.unwrap_or(UNLIMITED_BYTES).to_string());
    vars.insert("duration".into(), ctx.secs().to_string());
    vars.insert("cc".into(), ctx.cc.into());
    vars.insert("out".into(), dir);
    let fill = |text: &str, key: &str| fill_placeholders(text, &vars).map_err(|m| format!("flow \"{}\": emulate.{key}: {m}", flow.name));
    let server_argv = srv.map(|t| fill(t, "server")).transpose()?.map(|c| argv(&["sh", "-c", &c]));
    let client_argv = argv(&["sh", "-c", &fill(cli, "client")?]);
    Ok(Launch { stack: ctx.stack, server: server_argv, listen: None, client: client_argv, setup: Default::default(), sysctls: Default::default(), report: None, report_kind: ReportKind::None })
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
