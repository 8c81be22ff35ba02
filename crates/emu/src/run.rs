//! One emulated run: hosts and TUNs from the scenario, the real stacks started in them, the
//! network driven on the wall clock until every client exits (or the run's time is up), then
//! everything stopped and removed, and the results handed to [`crate::report`].
//!
//! Addresses come from 198.18.0.0/15 (RFC 2544's benchmarking range) and exist only inside the
//! hosts: flow `f`'s path `p` is the point-to-point pair `198.18.0.0 + 4·(8f + p)` + 2 on the
//! `from` node and + 1 on the `to` node. There is no default route, so nothing inside can
//! reach anything but its peers.

use std::collections::BTreeMap;
use std::fs::File;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use multiconn_core::units::QueueLimit;
use multiconn_core::{Dur, Time};
use multiconn_net::Network;
use multiconn_scenario::resolve::Resolved;
use multiconn_scenario::schema::Transport;
use multiconn_scenario::Scenario;

use crate::fabric::{End, Fabric, Port};
use crate::report::{self, FlowOutcome, RunFacts};
use crate::sandbox::{self, Host};
use crate::stacks::{self, Context, FlowAddresses, Launch};
use crate::sys::{self, Epoll, TimerFd};
use crate::tun::{Tun, TunSpec};

/// How a run is done.
#[derive(Debug, Clone)]
pub struct Options {
    /// The results folder.
    pub out: PathBuf,
    /// The seed of the models' random streams (default: the scenario's, else 1).
    pub seed: Option<u64>,
    /// The Python interpreter with aioquic and multiconn (the aioquic stack).
    pub python: String,
    /// The longest a run may take when the scenario sets no `run.duration`.
    pub time_limit: Duration,
    /// Lateness budget: a run whose p99 exceeds it is flagged.
    pub budget: Dur,
    /// Links faster than this are refused (the emulator could not keep up).
    pub max_rate_bps: f64,
    /// The most the models may hold (queues, and packets in flight on delay lines), bytes.
    pub max_held_bytes: u64,
    /// Print progress lines.
    pub progress: bool,
    /// Run the emulator's loop under `SCHED_FIFO` (priority 50), so that busy programs on
    /// the same cores delay its wake-ups less.
    pub realtime: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            out: PathBuf::from("out/emulate"),
            seed: None,
            python: "python3".into(),
            time_limit: Duration::from_secs(600),
            budget: Dur::from_millis(1),
            max_rate_bps: 1e9,
            max_held_bytes: 256 << 20,
            progress: false,
            realtime: false,
        }
    }
}

/// Flows per scenario the address plan has room for.
const MAX_FLOWS: usize = 4096;
/// Paths per flow the address plan has room for.
const ADDR_PATHS: usize = 8;
/// How long a server may take to listen.
const SERVER_READY: Duration = Duration::from_secs(10);
/// Packets read from one TUN before looking at the timers again.
const READ_BUDGET: usize = 64;

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Ctrl-C and SIGTERM end the run early, in order (programs stopped, results written).
fn catch_stop_signals() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}

/// The addresses of flow `f`'s path `p`: (`from` node, `to` node).
pub fn addresses(f: usize, p: usize) -> (Ipv4Addr, Ipv4Addr) {
    let base = u32::from(Ipv4Addr::new(198, 18, 0, 0)) + 4 * (ADDR_PATHS * f + p) as u32;
    (Ipv4Addr::from(base + 2), Ipv4Addr::from(base + 1))
}

/// Everything that can be checked before any namespace exists.
fn check(resolved: &Resolved, opts: &Options) -> Result<(), String> {
    if resolved.flows.is_empty() {
        return Err("the scenario has no flow to emulate".into());
    }
    if resolved.flows.len() > MAX_FLOWS {
        return Err(format!("the emulator runs at most {MAX_FLOWS} flows; the scenario has {}", resolved.flows.len()));
    }
    if resolved.duration.is_none() && resolved.flows.iter().any(|f| f.size.is_none()) {
        return Err("a flow without a size needs run.duration: the emulator runs in real time".into());
    }
    // A tunnel's datagrams carry the packets of the flows in it as the simulator's objects.
    if let Some(f) = resolved.flows.iter().find(|f| f.tunnel.is_some() || f.app == multiconn_scenario::schema::AppKind::Tunnel) {
        return Err(format!("flow \"{}\": the emulator does not run tunnels (app = \"tunnel\" and the flows in one run in the simulator only)", f.name));
    }
    // Memory: what each link direction may hold, its queue full and its delay line at rate.
    let largest_packet = resolved.flows.iter().map(|f| u64::from(f.packet_size)).max().unwrap_or(1500);
    let held: Vec<(String, u64)> = resolved
        .links
        .iter()
        .map(|l| {
            let queue = match l.model.queue_limit() {
                Some(QueueLimit::Bytes(b)) => b,
                Some(QueueLimit::Packets(n)) => n.saturating_mul(largest_packet),
                None => 0,
            };
            let in_flight = (l.model.mean_bps() / 8.0 * l.model.delay_at(Time::ZERO).as_secs_f64()) as u64;
            (format!("link \"{}\" ({})", l.name, l.direction.name()), queue.saturating_add(in_flight))
        })
        .collect();
    let total: u64 = held.iter().map(|(_, b)| *b).fold(0, u64::saturating_add);
    if total > opts.max_held_bytes {
        let most = held.iter().map(|(_, b)| *b).max().unwrap_or(0);
        let (worst, bytes) = held.iter().find(|(_, b)| *b == most).expect("links exist when memory is held");
        return Err(format!(
            "the links may hold {} MiB (queues full, delay lines at rate; the most: {worst}, {} MiB), above the emulator's {} MiB: shrink the queues",
            total >> 20,
            bytes >> 20,
            opts.max_held_bytes >> 20
        ));
    }
    for l in &resolved.links {
        let bps = l.model.mean_bps();
        if bps > opts.max_rate_bps {
            return Err(format!(
                "link \"{}\" ({}) runs at {:.0} Mbit/s, above what this emulator keeps up with ({:.0} Mbit/s, --max-rate); a run would be silently wrong",
                l.name,
                l.direction.name(),
                bps / 1e6,
                opts.max_rate_bps / 1e6
            ));
        }
    }
    Ok(())
}

/// Why a run did not happen or did not finish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmuError {
    /// The scenario or this machine cannot be emulated (bad input: not root, no TUN, a tool
    /// missing, a link too fast, a flow no stack fits).
    Refused(String),
    /// The run failed on the way (a server that never listened, a device not made).
    Failed(String),
}

impl std::fmt::Display for EmuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmuError::Refused(m) | EmuError::Failed(m) => f.write_str(m),
        }
    }
}

impl From<String> for EmuError {
    fn from(m: String) -> EmuError {
        EmuError::Failed(m)
    }
}

impl EmuError {
    /// Whether `self`'s message contains `needle` (for tests).
    pub fn contains(&self, needle: &str) -> bool {
        self.to_string().contains(needle)
    }
}

/// A started client.
struct Client {
    child: Child,
    started: Time,
    exited: Option<(Time, ExitStatus)>,
}

/// Runs `scenario` in real time and writes its results to `opts.out`; returns the summary.
pub fn emulate(scenario: &Scenario, opts: &Options) -> Result<serde_json::Value, EmuError> {
    let resolved = scenario.resolved();
    check(resolved, opts).map_err(EmuError::Refused)?;
    if let Some(why) = sandbox::unavailable() {
        return Err(EmuError::Refused(why));
    }
    let seed = opts.seed.or(resolved.seed).unwrap_or(1);
    let flows = &resolved.flows;
    std::fs::create_dir_all(&opts.out).map_err(|e| format!("{}: {e}", opts.out.display()))?;
    // The stacks run inside the hosts' namespaces, whose working directory is not ours: every
    // path handed to them (keys, reports, qlogs) must be absolute.
    let out = std::path::absolute(&opts.out).map_err(|e| format!("{}: {e}", opts.out.display()))?;
    let opts = &Options { out, ..opts.clone() };
    let say = |m: &str| {
        if opts.progress {
            eprintln!("emulate: {m}");
        }
    };

    // Hosts: one per node a flow starts or ends at.
    let mut hosts: BTreeMap<String, Host> = BTreeMap::new();
    for f in flows {
        for node in [&f.from, &f.to] {
            if !hosts.contains_key(node) {
                let host = Host::create(node).map_err(|e| e.to_string())?;
                host.ip_batch(&["link set dev lo up".into()]).map_err(|e| e.to_string())?;
                hosts.insert(node.clone(), host);
            }
        }
    }
    for (node, host) in &hosts {
        say(&format!("host {node}: {} (PID 1 of its namespace: {})", host.netns_id(), host.init_pid()));
    }
    let host_list: Vec<(String, String)> = hosts.iter().map(|(n, h)| (n.clone(), h.netns_id())).collect();

    // TUNs: one per flow, path and end.
    let mut tuns: Vec<Tun> = Vec::new();
    let mut ports: Vec<Port> = Vec::new();
    let mut flow_addrs = Vec::new();
    for (i, f) in flows.iter().enumerate() {
        let mut addrs = FlowAddresses { paths: Vec::new(), tuns: Vec::new() };
        for p in 0..f.path_count() {
            let (server, client) = addresses(i, p);
            let name = format!("mc{i}p{p}");
            // The server's address is at the server's node: `from` for a download, `to` for an
            // upload (direction = "up").
            let (at_from, at_to) = if f.server_node() == f.from { (server, client) } else { (client, server) };
            for (end, node, local, peer) in [(End::From, &f.from, at_from, at_to), (End::To, &f.to, at_to, at_from)] {
                let tun = Tun::create(&hosts[node], &TunSpec { name: name.clone(), local, peer, mtu: f.packet_size }).map_err(|e| format!("flow \"{}\": {e}", f.name))?;
                ports.push(Port { flow: i, path: p as u8, end, fd: tun.raw() });
                tuns.push(tun);
            }
            addrs.paths.push((server, client));
            addrs.tuns.push(name);
        }
        flow_addrs.push(addrs);
    }

    // Stacks: recipes, per-host set-up, keys, servers.
    let end_limit = resolved.duration.map(|d| Time(d.0)).unwrap_or(Time(opts.time_limit.as_nanos() as u64));
    let mut launches: Vec<Launch> = Vec::new();
    let mut dirs: Vec<PathBuf> = Vec::new();
    for (i, f) in flows.iter().enumerate() {
        let dir = opts.out.join("flows").join(&f.name);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        // An unsized flow's client stops a second before the run does, so that it still
        // writes its own report.
        let ctx = Context { dir: &dir, python: &opts.python, duration_s: end_limit.since(f.start).as_secs_f64() - 1.0 };
        let launch = stacks::launch(f, &flow_addrs[i], &ctx).map_err(EmuError::Refused)?;
        if matches!(launch.listen, Some((Transport::Quic, _))) {
            make_certificate(&dir, flow_addrs[i].paths[0].0)?;
        }
        for (lines, node) in launch.setup.iter().zip([f.server_node(), f.client_node()]) {
            if !lines.is_empty() {
                hosts[node].ip_batch(lines).map_err(|e| format!("flow \"{}\": {e}", f.name))?;
            }
        }
        for (settings, node) in launch.sysctls.iter().zip([f.server_node(), f.client_node()]) {
            for (key, value) in settings {
                hosts[node].set_net_sysctl(key, value).map_err(|e| format!("flow \"{}\": {e}", f.name))?;
            }
        }
        launches.push(launch);
        dirs.push(dir);
    }
    let mut servers: Vec<Option<Child>> = Vec::new();
    for (i, f) in flows.iter().enumerate() {
        let Some(argv) = &launches[i].server else {
            servers.push(None);
            continue;
        };
        let child = spawn(&hosts[f.server_node()], argv, &dirs[i].join("server.log"))?;
        servers.push(Some(child));
    }
    for (i, f) in flows.iter().enumerate() {
        if let (Some((transport, port)), Some(server)) = (launches[i].listen, servers[i].as_mut()) {
            wait_listening(&hosts[f.server_node()], transport, port, server).map_err(|m| format!("flow \"{}\": the {} server {m} (see {})", f.name, launches[i].stack.name(), dirs[i].join("server.log").display()))?;
        }
    }
    say("servers ready");

    // The network, on the wall clock.
    sys::tight_timer_slack();
    if opts.realtime {
        sys::realtime(50).map_err(|e| EmuError::Failed(format!("--realtime: {e}")))?;
    }
    catch_stop_signals();
    let mut net = Network::new(&resolved.network_spec(), seed);
    net.record_queues(resolved.bin);
    let paths: Vec<usize> = flows.iter().map(|f| f.path_count()).collect();
    let wall_start = Instant::now();
    let mut fabric = Fabric::new(ports, &paths, resolved.links.len(), net.bearer_count(), resolved.bin, sys::monotonic_ns());
    net.start(&mut fabric);
    let timer = TimerFd::new().map_err(|e| e.to_string())?;
    let mut epoll = Epoll::new(64).map_err(|e| e.to_string())?;
    let timer_token = fabric.ports().len() as u64;
    for (i, p) in fabric.ports().iter().enumerate() {
        epoll.add(p.fd, i as u64).map_err(|e| e.to_string())?;
    }
    epoll.add(timer.raw(), timer_token).map_err(|e| e.to_string())?;

    let mut clients: Vec<Option<Client>> = (0..flows.len()).map(|_| None).collect();
    let mut ready = Vec::new();
    let mut buf = vec![0u8; 65_536];
    let mut last_check = Time::ZERO;
    let mut stopped_by = "all clients exited";
    let end = loop {
        let now = fabric.now();
        fabric.run_due(&mut net, now);
        if now.0 >= last_check.0 + 5_000_000 || last_check == Time::ZERO {
            last_check = now;
            for (i, f) in flows.iter().enumerate() {
                match &mut clients[i] {
                    None if now >= f.start => {
                        let child = spawn(&hosts[f.client_node()], &launches[i].client, &dirs[i].join("client.log"))?;
                        clients[i] = Some(Client { child, started: now, exited: None });
                    }
                    Some(c) if c.exited.is_none() => {
                        if let Ok(Some(status)) = c.child.try_wait() {
                            c.exited = Some((now, status));
                            say(&format!("flow \"{}\" ended at {:.3} s ({status})", f.name, now.as_secs_f64()));
                        }
                    }
                    _ => {}
                }
            }
            if clients.iter().all(|c| c.as_ref().is_some_and(|c| c.exited.is_some())) {
                break now;
            }
        }
        if now >= end_limit {
            stopped_by = if resolved.duration.is_some() { "run.duration reached" } else { "time limit reached" };
            break now;
        }
        if STOP.load(Ordering::SeqCst) {
            stopped_by = "interrupted";
            break now;
        }
        let next = fabric.next_wake().map_or(end_limit, |t| t.min(end_limit));
        timer.arm_at(Some(fabric.t0_ns() + next.0)).map_err(|e| e.to_string())?;
        epoll.wait(5, &mut ready).map_err(|e| e.to_string())?;
        for &token in &ready {
            if token == timer_token {
                timer.clear();
                continue;
            }
            let fd = fabric.ports()[token as usize].fd;
            for _ in 0..READ_BUDGET {
                match sys::read_packet(fd, &mut buf) {
                    Ok(Some(n)) => {
                        let at = fabric.now();
                        fabric.inject(&mut net, token as usize, &buf[..n], at);
                    }
                    Ok(None) => break,
                    Err(e) => return Err(EmuError::Failed(e.to_string())),
                }
            }
        }
    };
    let wall = wall_start.elapsed();
    say(&format!("stopping ({stopped_by}) after {:.2} s", wall.as_secs_f64()));

    // The kernels' own counters, then stop everything and read what the programs left.
    let counters: Vec<(String, sandbox::KernelCounters)> = hosts.iter().map(|(n, h)| (n.clone(), h.kernel_counters())).collect();
    for host in hosts.values_mut() {
        host.shut_down(Duration::from_secs(2));
    }
    let mut outcomes = Vec::new();
    for (i, f) in flows.iter().enumerate() {
        let client = clients[i].take();
        let (started, exited) = match &client {
            Some(c) => (Some(c.started), c.exited),
            None => (None, None),
        };
        let app = match (&launches[i].report, exited) {
            (Some(path), Some(_)) => stacks::read_app_result(launches[i].report_kind, path),
            _ => Ok(None),
        };
        outcomes.push(FlowOutcome {
            stack: launches[i].stack.name().to_string(),
            started,
            exited: exited.map(|(t, _)| t),
            exit_code: exited.map(|(_, s)| s.code().unwrap_or(-1)),
            app,
            dir: dirs[i].clone(),
            addresses: flow_addrs[i].paths.clone(),
        });
        let _ = f;
    }
    drop(tuns);
    // The queues' integrals run to the end and are all handed to the recorder.
    net.settle(end, &mut fabric);
    let facts = RunFacts { scenario: scenario.name().to_string(), seed, end, wall, stopped_by: stopped_by.to_string(), budget: opts.budget, hosts: host_list, counters };
    let summary = report::write(&opts.out, scenario, &net, &mut fabric, &outcomes, &facts)?;
    Ok(summary)
}

/// Starts `argv` inside `host`, its output to `log`.
fn spawn(host: &Host, argv: &[String], log: &Path) -> Result<Child, String> {
    let out = File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    host.command(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot start {} in host {}: {e}", argv[0], host.node))
}

/// Waits until `port` listens (TCP) or is bound (UDP) inside `host`, or the server exits.
fn wait_listening(host: &Host, transport: Transport, port: u16, server: &mut Child) -> Result<(), String> {
    let deadline = Instant::now() + SERVER_READY;
    let (tables, listen_state) = match transport {
        Transport::Tcp => (["tcp", "tcp6"], Some("0A")),
        _ => (["udp", "udp6"], None),
    };
    loop {
        for table in tables {
            // /proc/PID/net/* shows the network namespace of PID.
            let text = std::fs::read_to_string(format!("/proc/{}/net/{table}", host.init_pid())).unwrap_or_default();
            for line in text.lines().skip(1) {
                let cols: Vec<&str> = line.split_whitespace().collect();
                let local_port = cols.get(1).and_then(|a| a.rsplit(':').next()).and_then(|p| u16::from_str_radix(p, 16).ok());
                if local_port == Some(port) && listen_state.map_or(true, |s| cols.get(3) == Some(&s)) {
                    return Ok(());
                }
            }
        }
        if let Ok(Some(status)) = server.try_wait() {
            return Err(format!("exited before listening on port {port} ({status})"));
        }
        if Instant::now() > deadline {
            return Err(format!("did not listen on port {port} within {} s", SERVER_READY.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A self-signed P-256 certificate for `addr` in `dir` (`key.pem`, `cert.pem`), for the QUIC
/// servers.
fn make_certificate(dir: &Path, addr: Ipv4Addr) -> Result<(), String> {
    let out = std::process::Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "30"])
        .arg("-keyout")
        .arg(dir.join("key.pem"))
        .arg("-out")
        .arg(dir.join("cert.pem"))
        .args(["-subj", "/CN=server.test", "-addext", &format!("subjectAltName=DNS:server.test,IP:{addr}")])
        .output()
        .map_err(|e| format!("cannot run openssl to make the QUIC server's certificate: {e}"))?;
    if !out.status.success() {
        return Err(format!("openssl: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_stay_in_the_benchmarking_range_and_never_collide() {
        let net = u32::from(Ipv4Addr::new(198, 18, 0, 0));
        let mut seen = std::collections::HashSet::new();
        for f in [0, 1, 7, MAX_FLOWS - 1] {
            for p in 0..ADDR_PATHS {
                let (a, b) = addresses(f, p);
                for x in [a, b] {
                    assert_eq!(u32::from(x) >> 17, net >> 17, "{x} outside 198.18.0.0/15");
                    assert!(seen.insert(x), "{x} used twice");
                }
            }
        }
        assert_eq!(addresses(0, 0), (Ipv4Addr::new(198, 18, 0, 2), Ipv4Addr::new(198, 18, 0, 1)));
    }
}
