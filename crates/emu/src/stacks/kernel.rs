//! The kernel's TCP and MPTCP, driven by iperf3 (iperf3(1), mptcpize(8)).
//!
//! The server (`iperf3 -s -1`) sends the data of a download (`-R` at the client); an upload is
//! iperf3's default direction. An MPTCP listener binds the wildcard address (a subflow arrives
//! on another address) and announces the server's other paths (`ip mptcp endpoint … signal`);
//! both ends allow 8 subflows. The client's JSON report (`-J`) gives the bytes and seconds.

use multiconn_scenario::resolve::Flow;
use multiconn_scenario::schema::Transport;

use super::{argv, need, Settings, FlowAddresses, Launch, ReportKind};

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

/// iperf3 over the kernel's TCP (`mptcp = false`) or MPTCP.
pub(super) fn launch(flow: &Flow, addrs: &FlowAddresses, ctx: &Settings, mptcp: bool) -> Result<Launch, String> {
    need(flow, "iperf3", "Debian: apt-get install iperf3")?;
    if mptcp {
        need(flow, "mptcpize", "Debian: apt-get install mptcpize")?;
    }
    let server = addrs.paths[0].0;
    let report = ctx.dir.join("iperf3.json");
    let mut server_argv = argv(&["iperf3", "-s", "-p", "5201", "-1"]);
    if !mptcp {
        server_argv.extend(argv(&["-B", &server.to_string()]));
    }
    // -R: the server sends (a download); an upload is iperf3's default direction.
    let mut client_argv = argv(&["iperf3", "-c", &server.to_string(), "-p", "5201", "-C", ctx.cc_reno, "-J", "--logfile", &report.display().to_string()]);
    if !ctx.upload {
        client_argv.insert(5, "-R".to_string());
    }
    match flow.size {
        Some(n) => client_argv.extend(argv(&["-n", &n.to_string()])),
        None => client_argv.extend(argv(&["-t", ctx.secs()])),
    }
    let mut setup: [Vec<String>; 2] = Default::default();
    if mptcp {
        let limits = "mptcp limits set subflow 8 add_addr_accepted 8".to_string();
        setup = [vec![limits.clone()], vec![limits]];
        for (p, (srv, _)) in addrs.paths.iter().enumerate().skip(1) {
            setup[0].push(format!("mptcp endpoint add {srv} dev {} signal", addrs.tuns[p]));
        }
        server_argv.splice(0..0, argv(&["mptcpize", "run"]));
        client_argv.splice(0..0, argv(&["mptcpize", "run"]));
    }
    let sysctl = kernel_tcp_sysctls(ctx.ecn);
    Ok(Launch { stack: ctx.stack, server: Some(server_argv), listen: Some((Transport::Tcp, 5201)), client: client_argv, setup, sysctls: [sysctl.clone(), sysctl], report: Some(report), report_kind: ReportKind::Iperf3 })
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
}
