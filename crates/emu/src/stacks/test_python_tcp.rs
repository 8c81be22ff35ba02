//! Tests only (feature `test-stack`): a download over the kernel's TCP by two programs of
//! Python's standard library, the smallest real stack there is. The server listens on its
//! flow's address, port 5400, with the flow's controller on its socket (`TCP_CONGESTION`,
//! inherited by the connection it accepts), and sends the flow's size to the one client it
//! accepts; the client reads to the end and reports `{"bytes", "seconds"}`. It exists to show that a real stack is one row in the
//! stacks' table and one launcher file.

use multiconn_scenario::resolve::Flow;
use multiconn_scenario::schema::Transport;

use super::{argv, Settings, FlowAddresses, Launch, ReportKind};

const SERVER: &str = "import socket,sys
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1); s.setsockopt(socket.IPPROTO_TCP,socket.TCP_CONGESTION,sys.argv[3].encode())
s.bind((sys.argv[1],5400)); s.listen(1)
c,_=s.accept(); n=int(sys.argv[2]); b=bytes(65536)
while n>0:
    k=c.send(b[:min(n,len(b))]); n-=k
c.close()";

const CLIENT: &str = "import json,socket,sys,time
s=socket.socket(); s.setsockopt(socket.IPPROTO_TCP,socket.TCP_CONGESTION,sys.argv[2].encode())
t=time.monotonic(); s.connect((sys.argv[1],5400)); n=0
while True:
    d=s.recv(65536)
    if not d: break
    n+=len(d)
json.dump({'bytes':n,'seconds':time.monotonic()-t},open(sys.argv[3],'w'))";

/// The two programs.
pub(super) fn launch(flow: &Flow, addrs: &FlowAddresses, ctx: &Settings) -> Result<Launch, String> {
    let server = addrs.paths[0].0.to_string();
    let size = flow.size.ok_or_else(|| format!("flow \"{}\": stack test-python-tcp needs a size", flow.name))?.to_string();
    let report = ctx.dir.join("client.json");
    let server_argv = argv(&[ctx.python, "-c", SERVER, &server, &size, ctx.cc_reno]);
    let client_argv = argv(&[ctx.python, "-c", CLIENT, &server, ctx.cc_reno, &report.display().to_string()]);
    Ok(Launch { stack: ctx.stack, server: Some(server_argv), listen: Some((Transport::Tcp, 5400)), client: client_argv, setup: Default::default(), sysctls: Default::default(), report: Some(report), report_kind: ReportKind::Json })
}
