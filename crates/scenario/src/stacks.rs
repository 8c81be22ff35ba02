//! The real stacks the emulator (`crates/emu`) can run a flow with, one row of capabilities
//! each: what transport it carries, over how many paths, whether it uploads, whether ECN can
//! be switched on, which controllers it takes from the flow's `cc`, which applications it runs
//! and which flows it is the default for.
//!
//! This table is the one place these facts live: `[flow.emulate]` is checked against it when
//! a scenario is resolved (so `multiconn validate` catches a stack that cannot carry a flow
//! before anyone needs root), and the emulator asks it before starting a stack. How each
//! stack is started is the emulator's (one launcher file per stack, `crates/emu/src/stacks/`).
//!
//! The placeholders of `stack = "command"` (`{server_addr}`, `{port}`, ...) live here too
//! ([`placeholder_names`], [`fill_placeholders`]): resolving checks the commands with them and
//! the emulator fills them in, so both refuse an unknown one in the same words.

use crate::schema::Transport;
use std::collections::BTreeMap;

/// The placeholders a `stack = "command"` flow of `paths` paths may use in its commands:
/// `{server_addr}` and `{client_addr}` (its first path's), `{server_addrN}` and
/// `{client_addrN}` for each path N from 0, `{port}`, `{size}` (bytes), `{duration}`
/// (seconds), `{cc}` and `{out}` (the flow's folder). The emulator gives each a value.
pub fn placeholder_names(paths: usize) -> Vec<String> {
    let mut names = vec!["server_addr".to_string(), "client_addr".to_string()];
    for p in 0..paths {
        names.push(format!("server_addr{p}"));
        names.push(format!("client_addr{p}"));
    }
    names.extend(["port", "size", "duration", "cc", "out"].map(String::from));
    names
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

/// Checks a command of a flow of `paths` paths as [`fill_placeholders`] would fill it.
pub fn check_placeholders(text: &str, paths: usize) -> Result<(), String> {
    let vars = placeholder_names(paths).into_iter().map(|n| (n, String::new())).collect();
    fill_placeholders(text, &vars).map(|_| ())
}

/// A real stack of the emulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RealStack {
    /// The kernel's TCP driven by iperf3.
    KernelTcp,
    /// The kernel's MPTCP: iperf3 under `mptcpize run`.
    KernelMptcp,
    /// Debian's ngtcp2 example server and client (`gtlsserver`, `gtlsclient`).
    Ngtcp2,
    /// aioquic through `multiconn.emu_aioquic`.
    Aioquic,
    /// tquic's own tools (draft-05 multipath QUIC).
    Tquic,
    /// The user's own programs.
    Command,
    /// Tests only: a download over the kernel's TCP by two Python programs of the standard
    /// library (feature `test-stack`).
    #[cfg(feature = "test-stack")]
    TestPythonTcp,
}

/// Which flows a stack is the default for, when the flow names none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DefaultFor {
    /// The flow's transport.
    pub transport: Transport,
    /// One path (`false`) or several (`true`).
    pub multipath: bool,
    /// Only flows whose profile is one of these or a version of one (`aioquic` covers
    /// `aioquic-1.7`); empty: any profile. A row naming profiles wins over one that does not.
    pub profiles: &'static [&'static str],
}

/// What one stack can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackRow {
    /// The stack.
    pub stack: RealStack,
    /// Its name in `[flow.emulate] stack`.
    pub name: &'static str,
    /// The transport it carries; `None`: any.
    pub transport: Option<Transport>,
    /// The most paths a flow may have; `None`: as many as a multipath flow may have.
    pub max_paths: Option<usize>,
    /// It can carry `direction = "up"`.
    pub upload: bool,
    /// ECN (`ecn = true` in the flow's profile) can be switched on for it.
    pub ecn: bool,
    /// The flow's `cc` values it runs (the multiconn names); empty: any, passed to the user's
    /// programs as `{cc}`.
    pub controllers: &'static [&'static str],
    /// It runs any application; `false`: bulk downloads (and uploads) only.
    pub any_app: bool,
    /// The flows it runs when they name no stack.
    pub default_for: &'static [DefaultFor],
}

const ONE_PATH: Option<usize> = Some(1);
/// MPTCP, tquic and the user's programs: as many paths as a multipath flow may have.
const ALL_PATHS: Option<usize> = None;

/// Every real stack, in the order messages list them.
pub const STACKS: &[StackRow] = &[
    StackRow {
        stack: RealStack::KernelTcp,
        name: "kernel-tcp",
        transport: Some(Transport::Tcp),
        max_paths: ONE_PATH,
        upload: true,
        ecn: true,
        controllers: &["newreno", "cubic", "bbr"],
        any_app: false,
        default_for: &[DefaultFor { transport: Transport::Tcp, multipath: false, profiles: &[] }],
    },
    StackRow {
        stack: RealStack::KernelMptcp,
        name: "kernel-mptcp",
        transport: Some(Transport::Tcp),
        max_paths: ALL_PATHS,
        upload: true,
        ecn: true,
        controllers: &["newreno", "cubic", "bbr"],
        any_app: false,
        default_for: &[DefaultFor { transport: Transport::Tcp, multipath: true, profiles: &[] }],
    },
    StackRow {
        stack: RealStack::Ngtcp2,
        name: "ngtcp2",
        transport: Some(Transport::Quic),
        max_paths: ONE_PATH,
        upload: false,
        ecn: false,
        controllers: &["newreno", "cubic", "bbr"],
        any_app: false,
        default_for: &[DefaultFor { transport: Transport::Quic, multipath: false, profiles: &[] }],
    },
    StackRow {
        stack: RealStack::Aioquic,
        name: "aioquic",
        transport: Some(Transport::Quic),
        max_paths: ONE_PATH,
        upload: true,
        ecn: false,
        controllers: &["newreno", "cubic"],
        any_app: false,
        default_for: &[DefaultFor { transport: Transport::Quic, multipath: false, profiles: &["aioquic"] }],
    },
    StackRow {
        stack: RealStack::Tquic,
        name: "tquic",
        transport: Some(Transport::Quic),
        max_paths: ALL_PATHS,
        upload: false,
        ecn: false,
        controllers: &["cubic", "bbr", "bbr3"],
        any_app: false,
        default_for: &[DefaultFor { transport: Transport::Quic, multipath: true, profiles: &[] }],
    },
    StackRow {
        stack: RealStack::Command,
        name: "command",
        transport: None,
        max_paths: ALL_PATHS,
        upload: true,
        ecn: false,
        controllers: &[],
        any_app: true,
        default_for: &[],
    },
    #[cfg(feature = "test-stack")]
    StackRow {
        stack: RealStack::TestPythonTcp,
        name: "test-python-tcp",
        transport: Some(Transport::Tcp),
        max_paths: ONE_PATH,
        upload: false,
        ecn: false,
        controllers: &["newreno", "cubic"],
        any_app: false,
        default_for: &[],
    },
];

impl RealStack {
    /// Its row of capabilities.
    pub fn row(self) -> &'static StackRow {
        STACKS.iter().find(|r| r.stack == self).expect("every stack has a row")
    }

    /// Its name in `[flow.emulate] stack`.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// The stack named `name`, if there is one.
    pub fn from_name(name: &str) -> Option<RealStack> {
        STACKS.iter().find(|r| r.name == name).map(|r| r.stack)
    }

    /// The stack a flow runs with when it names none: the row whose default matches the
    /// transport, the paths and the profile, a row naming the profile first.
    pub fn default_for(transport: Transport, paths: usize, profile: Option<&str>) -> Option<RealStack> {
        let profile_matches = |names: &[&str]| profile.is_some_and(|p| names.iter().any(|n| p == *n || p.strip_prefix(n).is_some_and(|rest| rest.starts_with('-'))));
        let rows = || STACKS.iter().flat_map(|r| r.default_for.iter().map(move |d| (r.stack, d))).filter(|(_, d)| d.transport == transport && d.multipath == (paths > 1));
        rows().find(|(_, d)| !d.profiles.is_empty() && profile_matches(d.profiles)).or_else(|| rows().find(|(_, d)| d.profiles.is_empty())).map(|(s, _)| s)
    }

    /// Whether it can carry a flow of `transport` over `paths` paths.
    pub fn carries(self, transport: Transport, paths: usize) -> bool {
        let row = self.row();
        row.transport.map_or(true, |t| t == transport) && row.max_paths.map_or(true, |m| paths <= m)
    }

    /// What it carries, for messages: "one-path tcp", "tcp", "quic", "anything".
    pub fn carries_text(self) -> String {
        let row = self.row();
        match row.transport {
            None => "anything".into(),
            Some(t) if row.max_paths == ONE_PATH => format!("one-path {}", t.name()),
            Some(t) => t.name().into(),
        }
    }
}

/// Every stack's name, comma-separated, for messages.
pub fn names() -> String {
    STACKS.iter().map(|r| r.name).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quic_flows_run_aioquic_under_either_aioquic_profile_and_ngtcp2_otherwise() {
        for profile in ["aioquic", "aioquic-1.7"] {
            assert_eq!(RealStack::default_for(Transport::Quic, 1, Some(profile)), Some(RealStack::Aioquic), "{profile}");
        }
        for profile in [None, Some("rfc9002"), Some("ngtcp2-0.12"), Some("aioquicx")] {
            assert_eq!(RealStack::default_for(Transport::Quic, 1, profile), Some(RealStack::Ngtcp2), "{profile:?}");
        }
        assert_eq!(RealStack::default_for(Transport::Quic, 2, Some("aioquic-1.7")), Some(RealStack::Tquic));
        assert_eq!(RealStack::default_for(Transport::Tcp, 1, None), Some(RealStack::KernelTcp));
        assert_eq!(RealStack::default_for(Transport::Tcp, 3, None), Some(RealStack::KernelMptcp));
        assert_eq!(RealStack::default_for(Transport::Udp, 1, None), None);
    }

    #[test]
    fn every_stack_has_one_row_and_a_name_that_finds_it() {
        for row in STACKS {
            assert_eq!(RealStack::from_name(row.name), Some(row.stack));
            assert_eq!(row.stack.row(), row);
            assert_eq!(STACKS.iter().filter(|r| r.stack == row.stack).count(), 1);
            // A stack is only the default for flows it can carry.
            for d in row.default_for {
                assert!(row.stack.carries(d.transport, if d.multipath { 2 } else { 1 }), "{}", row.name);
            }
        }
        assert_eq!(RealStack::from_name("quiche"), None);
    }

    #[test]
    fn what_a_stack_carries_follows_its_row() {
        assert!(RealStack::KernelTcp.carries(Transport::Tcp, 1) && !RealStack::KernelTcp.carries(Transport::Tcp, 2));
        assert!(RealStack::KernelMptcp.carries(Transport::Tcp, 4) && !RealStack::KernelMptcp.carries(Transport::Quic, 1));
        assert!(RealStack::Command.carries(Transport::Udp, 3));
        assert_eq!(RealStack::Ngtcp2.carries_text(), "one-path quic");
        assert_eq!(RealStack::Tquic.carries_text(), "quic");
        assert_eq!(RealStack::Command.carries_text(), "anything");
    }
}
