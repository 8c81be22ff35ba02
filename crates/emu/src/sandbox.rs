//! The emulated hosts: one network, PID and mount namespace per scenario node, held by a
//! process that dies with the emulator, and the programs started inside it.
//!
//! A host's holder is util-linux `unshare --net --pid --mount --fork --mount-proc
//! --kill-child=SIGKILL sleep infinity`, started with `PR_SET_PDEATHSIG = SIGKILL` from the
//! emulator's main thread: if the emulator exits or is killed (even with `kill -9`), the kernel
//! kills `unshare`, whose `--kill-child` kills the namespace's PID 1, and the death of a PID
//! namespace's init kills every process in it. The network namespace then loses its last
//! reference (the TUN descriptors close with the emulator) and the kernel deletes it with its
//! devices, addresses, routes and per-namespace sysctls (such as `net.ipv4.tcp_ecn` for a flow
//! with ECN). Nothing is created in the host's namespaces: no device, no route, no sysctl, no
//! firewall rule, no mount (`unshare --mount` makes the new mount tree
//! private before `/proc` is remounted inside).
//!
//! Programs run through `nsenter` into the holder's network, PID and mount namespaces, so even
//! daemons that fork away cannot outlive the run.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::sys;

/// Sets `PR_SET_PDEATHSIG = SIGKILL` in a child before it runs its program, and puts it in
/// its own process group (a Ctrl-C at the terminal reaches the emulator, which then stops the
/// programs in order, rather than every process at once).
fn die_with_parent(cmd: &mut Command) {
    // SAFETY: only async-signal-safe calls (prctl, setpgid) between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
            libc::setpgid(0, 0);
            Ok(())
        });
    }
}

/// One emulated host: its namespaces and the process holding them.
pub struct Host {
    /// The scenario node it stands for.
    pub node: String,
    holder: Child,
    /// PID (in the emulator's PID namespace) of the namespace's PID 1.
    init: i32,
    /// An open descriptor of its network namespace (keeps it alive while the emulator runs).
    netns: File,
}

impl Host {
    /// Creates the namespaces of node `node` and waits until they are ready.
    pub fn create(node: &str) -> io::Result<Host> {
        let mut cmd = Command::new("unshare");
        cmd.args(["--net", "--pid", "--mount", "--fork", "--mount-proc", "--kill-child=SIGKILL", "--", "sleep", "infinity"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        die_with_parent(&mut cmd);
        let mut holder = cmd.spawn().map_err(|e| io::Error::new(e.kind(), format!("cannot start `unshare` (util-linux) for host {node}: {e}")))?;
        let pid = holder.id() as i32;
        let deadline = Instant::now() + Duration::from_secs(5);
        // Ready once `unshare` has forked the namespace's PID 1 and that one runs `sleep`.
        let init = loop {
            if let Some(status) = holder.try_wait()? {
                let mut err = String::new();
                if let Some(mut e) = holder.stderr.take() {
                    let _ = io::Read::read_to_string(&mut e, &mut err);
                }
                return Err(io::Error::other(format!("cannot create the namespaces of host {node}: unshare exited ({status}): {}", err.trim())));
            }
            let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
            if let Some(child) = children.split_whitespace().next().and_then(|c| c.parse::<i32>().ok()) {
                let comm = std::fs::read_to_string(format!("/proc/{child}/comm")).unwrap_or_default();
                if comm.trim() == "sleep" {
                    break child;
                }
            }
            if Instant::now() > deadline {
                let _ = holder.kill();
                return Err(io::Error::other(format!("the namespaces of host {node} were not ready within 5 s")));
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        let netns = File::open(format!("/proc/{init}/ns/net"))?;
        Ok(Host { node: node.to_string(), holder, init, netns })
    }

    /// Runs `f` with this thread inside the host's network namespace, then comes back.
    pub fn inside<T>(&self, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
        let home = File::open("/proc/thread-self/ns/net")?;
        sys::enter_netns(self.netns.as_raw_fd())?;
        let out = f();
        sys::enter_netns(home.as_raw_fd()).expect("returning to the emulator's own network namespace cannot fail");
        out
    }

    /// Sets a network sysctl of this host's own namespace (e.g. `net/ipv4/tcp_ecn`): a file of
    /// `/proc/sys/net`, which shows the namespace of the thread that opens it. The host
    /// machine's own settings are not touched.
    pub fn set_net_sysctl(&self, key: &str, value: &str) -> io::Result<()> {
        if !key.starts_with("net/") || key.contains("..") {
            return Err(io::Error::other(format!("host {}: only per-namespace net/ sysctls may be set, not {key}", self.node)));
        }
        let path = format!("/proc/sys/{key}");
        self.inside(|| std::fs::write(&path, value))
            .map_err(|e| io::Error::new(e.kind(), format!("host {}: setting {path} to {value}: {e}", self.node)))
    }

    /// A command that runs `program` inside the host (network, PID and mount namespaces).
    pub fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new("nsenter");
        cmd.arg(format!("--target={}", self.init)).args(["--net", "--pid", "--mount", "--"]).arg(program);
        die_with_parent(&mut cmd);
        cmd
    }

    /// Runs `ip -batch -` inside the host's network namespace with `lines` as its input.
    pub fn ip_batch(&self, lines: &[String]) -> io::Result<()> {
        let mut cmd = Command::new("nsenter");
        cmd.arg(format!("--target={}", self.init)).args(["--net", "--", "ip", "-batch", "-"]);
        cmd.stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped());
        die_with_parent(&mut cmd);
        let mut child = cmd.spawn().map_err(|e| io::Error::new(e.kind(), format!("cannot run `ip` (iproute2) in host {}: {e}", self.node)))?;
        child.stdin.take().expect("piped").write_all(lines.join("\n").as_bytes())?;
        let out = child.wait_with_output()?;
        if !out.status.success() {
            return Err(io::Error::other(format!("configuring host {}: ip: {}", self.node, String::from_utf8_lossy(&out.stderr).trim())));
        }
        Ok(())
    }

    /// The PID of the namespace's PID 1, as the emulator sees it.
    pub fn init_pid(&self) -> i32 {
        self.init
    }

    /// The identity of its network namespace (`net:[inode]`), for checks that it is gone.
    pub fn netns_id(&self) -> String {
        std::fs::read_link(format!("/proc/{}/ns/net", self.init)).map(|p| p.display().to_string()).unwrap_or_default()
    }

    /// The kernel's own counters in the host's network namespace (`/proc/PID/net/snmp`, which
    /// shows the namespace of PID): what happened outside the models, such as UDP datagrams
    /// dropped for a full receive buffer or TCP segments retransmitted.
    pub fn kernel_counters(&self) -> KernelCounters {
        let text = std::fs::read_to_string(format!("/proc/{}/net/snmp", self.init)).unwrap_or_default();
        let field = |proto: &str, name: &str| -> u64 {
            let mut lines = text.lines().filter(|l| l.starts_with(&format!("{proto}:")));
            let (Some(header), Some(values)) = (lines.next(), lines.next()) else { return 0 };
            header.split_whitespace().zip(values.split_whitespace()).find(|(h, _)| *h == name).and_then(|(_, v)| v.parse().ok()).unwrap_or(0)
        };
        KernelCounters {
            udp_rcvbuf_errors: field("Udp", "RcvbufErrors"),
            udp_in_errors: field("Udp", "InErrors"),
            udp_in_datagrams: field("Udp", "InDatagrams"),
            tcp_retrans_segs: field("Tcp", "RetransSegs"),
        }
    }

    /// The PIDs of every process inside the host (its PID 1 included).
    pub fn processes(&self) -> Vec<i32> {
        processes_in(&std::fs::read_link(format!("/proc/{}/ns/pid", self.init)).unwrap_or_default())
    }

    /// Stops every program inside: SIGTERM, up to `grace` to exit, then SIGKILL of the whole
    /// PID namespace (its init's death kills the rest), and waits for the holder.
    pub fn shut_down(&mut self, grace: Duration) {
        for pid in self.processes() {
            if pid != self.init {
                sys::kill(pid, libc::SIGTERM);
            }
        }
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline && self.processes().len() > 1 {
            std::thread::sleep(Duration::from_millis(10));
        }
        sys::kill(self.init, libc::SIGKILL);
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        sys::kill(self.init, libc::SIGKILL);
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}

/// A host's kernel counters at the end of a run (see [`Host::kernel_counters`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelCounters {
    /// UDP datagrams dropped because the socket's receive buffer was full.
    pub udp_rcvbuf_errors: u64,
    /// UDP datagrams dropped for any reason (receive-buffer drops included).
    pub udp_in_errors: u64,
    /// UDP datagrams delivered to sockets.
    pub udp_in_datagrams: u64,
    /// TCP segments retransmitted.
    pub tcp_retrans_segs: u64,
}

/// The PIDs of every process whose PID namespace is `ns` (a `/proc/PID/ns/pid` link target).
pub fn processes_in(ns: &Path) -> Vec<i32> {
    if ns.as_os_str().is_empty() {
        return Vec::new();
    }
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/ns/pid")).is_ok_and(|l| l == ns))
        .collect()
}

/// The PIDs of every process whose network namespace is `id` (`net:[inode]`).
pub fn processes_in_netns(id: &str) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/ns/net")).is_ok_and(|l| l.display().to_string() == id))
        .collect()
}

/// Why this machine cannot emulate, if it cannot: not root, or no TUN, or a tool missing.
pub fn unavailable() -> Option<String> {
    if !sys::is_root() {
        return Some("the emulator needs root (network namespaces and TUN devices): run it with sudo".into());
    }
    if !Path::new("/dev/net/tun").exists() {
        return Some("this machine has no /dev/net/tun (the kernel lacks CONFIG_TUN)".into());
    }
    for tool in ["unshare", "nsenter", "ip"] {
        if !on_path(tool) {
            return Some(format!("`{tool}` is not installed (Debian: util-linux for unshare and nsenter, iproute2 for ip)"));
        }
    }
    None
}

/// Whether `program` is found on `PATH` or beside the emulator's own executable.
pub fn on_path(program: &str) -> bool {
    find_tool(program).is_some()
}

/// Where `program` is: on `PATH`, else beside the emulator's own executable (where `make
/// setup` installs the tools it builds, in the virtualenv's `bin`, which need not be on
/// `PATH` when the emulator is run by its full path).
pub fn find_tool(program: &str) -> Option<std::path::PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|p| std::env::split_paths(&p).map(|d| d.join(program)).find(|f| f.is_file()));
    on_path.or_else(|| std::env::current_exe().ok()?.parent().map(|d| d.join(program)).filter(|f| f.is_file()))
}
