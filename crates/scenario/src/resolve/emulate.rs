//! `[flow.emulate]`: which real stack the emulator (`crates/emu`) runs a flow with.
//!
//! The simulator ignores the section; resolving it here means `multiconn validate` catches a
//! stack that cannot carry the flow before anyone needs root. The default follows the flow's
//! own settings: TCP is the kernel's (MPTCP when it has several paths), QUIC is ngtcp2 unless
//! the profile is one of aioquic's (`aioquic`, `aioquic-1.7`), and a multipath QUIC flow is tquic.

use super::errors::{err, FieldError};
use crate::schema::{AppKind, FlowSection, Transport};

/// The real stacks the emulator can start.
pub const STACKS: [&str; 6] = ["kernel-tcp", "kernel-mptcp", "ngtcp2", "aioquic", "tquic", "command"];

/// A flow's real stack, as the emulator starts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmulateSpec {
    /// One of the built-in stacks ([`STACKS`] but "command").
    Stack(String),
    /// The user's own programs: `server` runs on the `from` node (if given), `client` on the
    /// `to` node; placeholders in braces are filled in by the emulator.
    Command {
        /// Run on the `from` node before the flow starts.
        server: Option<String>,
        /// Run on the `to` node at the flow's start; the flow ends when it exits.
        client: String,
    },
}

impl EmulateSpec {
    /// The stack's name.
    pub fn name(&self) -> &str {
        match self {
            EmulateSpec::Stack(s) => s,
            EmulateSpec::Command { .. } => "command",
        }
    }
}

/// The emulate section of flow `f` with `paths` paths and stack profile `profile`: `None` when
/// the flow names no stack and none fits by default (a UDP flow, an application other than a
/// bulk download), which only `multiconn emulate` refuses.
pub(super) fn resolve_emulate(f: &FlowSection, paths: usize, profile: Option<&str>) -> Result<Option<EmulateSpec>, FieldError> {
    let Some(section) = f.emulate.clone() else {
        return Ok(default_stack(f.transport, paths, profile).filter(|_| f.app == AppKind::Bulk).map(|s| EmulateSpec::Stack(s.into())));
    };
    let name = f.name.as_str();
    let path = |key: &'static str| ["flow", name, "emulate", key];
    let stack = match &section.stack {
        Some(s) if !STACKS.contains(&s.as_str()) => {
            return Err(err(&path("stack"), format!("unknown stack \"{s}\"; the emulator runs {}", STACKS.join(", "))));
        }
        Some(s) => s.clone(),
        None if section.client.is_some() || section.server.is_some() => "command".to_string(),
        None => match default_stack(f.transport, paths, profile) {
            Some(s) => s.to_string(),
            None => return Err(err(&path("stack"), format!("a {} flow has no default stack: name one ({})", f.transport.name(), STACKS.join(", ")))),
        },
    };
    if stack != "command" {
        for (key, given) in [("server", &section.server), ("client", &section.client)] {
            if given.is_some() {
                return Err(err(&path(key), format!("a {key} command needs stack = \"command\" (this flow's stack is {stack})")));
            }
        }
    }
    let fits = match stack.as_str() {
        "kernel-tcp" => f.transport == Transport::Tcp && paths == 1,
        "kernel-mptcp" => f.transport == Transport::Tcp,
        "ngtcp2" | "aioquic" => f.transport == Transport::Quic && paths == 1,
        "tquic" => f.transport == Transport::Quic,
        _ => true,
    };
    if !fits {
        let what = if paths > 1 { format!("a {}-path {} flow", paths, f.transport.name()) } else { format!("a {} flow", f.transport.name()) };
        return Err(err(&path("stack"), format!("stack \"{stack}\" cannot carry {what} (kernel-tcp: one-path tcp; kernel-mptcp: tcp; ngtcp2, aioquic: one-path quic; tquic: quic; command: anything)")));
    }
    if stack != "command" && f.app != AppKind::Bulk {
        return Err(err(&path("stack"), format!("the emulator's built-in stacks run bulk downloads; app = \"{}\" needs stack = \"command\" with your own programs", f.app.name())));
    }
    if stack == "command" {
        let Some(client) = section.client.clone() else {
            return Err(err(&path("client"), "stack = \"command\" needs a client command, e.g. client = \"iperf3 -c {server_addr} -p {port} -R -t 10\""));
        };
        return Ok(Some(EmulateSpec::Command { server: section.server.clone(), client }));
    }
    Ok(Some(EmulateSpec::Stack(stack)))
}

/// Whether a profile name is one of aioquic's (`aioquic`, `aioquic-1.7`, ...).
fn is_aioquic_profile(profile: &str) -> bool {
    profile == "aioquic" || profile.starts_with("aioquic-")
}

/// The stack a flow runs with when it does not name one.
fn default_stack(transport: Transport, paths: usize, profile: Option<&str>) -> Option<&'static str> {
    match (transport, paths > 1, profile) {
        (Transport::Tcp, false, _) => Some("kernel-tcp"),
        (Transport::Tcp, true, _) => Some("kernel-mptcp"),
        (Transport::Quic, true, _) => Some("tquic"),
        (Transport::Quic, false, Some(p)) if is_aioquic_profile(p) => Some("aioquic"),
        (Transport::Quic, false, _) => Some("ngtcp2"),
        (Transport::Udp, _, _) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quic_flows_run_aioquic_under_either_aioquic_profile_and_ngtcp2_otherwise() {
        for profile in ["aioquic", "aioquic-1.7"] {
            assert_eq!(default_stack(Transport::Quic, 1, Some(profile)), Some("aioquic"), "{profile}");
        }
        for profile in [None, Some("rfc9002"), Some("ngtcp2-0.12"), Some("aioquicx")] {
            assert_eq!(default_stack(Transport::Quic, 1, profile), Some("ngtcp2"), "{profile:?}");
        }
        assert_eq!(default_stack(Transport::Quic, 2, Some("aioquic-1.7")), Some("tquic"));
    }
}
