//! `[flow.emulate]`: which real stack the emulator (`crates/emu`) runs a flow with, checked
//! against the stacks' table ([`crate::stacks`]).
//!
//! The simulator ignores the section; resolving it here means `multiconn validate` catches a
//! stack that cannot carry the flow before anyone needs root. The default follows the flow's
//! own settings as the table's `default_for` rows say: TCP is the kernel's (MPTCP when it has
//! several paths), QUIC is ngtcp2 unless the profile is one of aioquic's (`aioquic`,
//! `aioquic-1.7`), and a multipath QUIC flow is tquic.

use super::errors::{choose, err, FieldError};
use crate::schema::{AppKind, FlowSection};
use crate::stacks::{self, RealStack, STACKS};

/// A flow's real stack, as the emulator starts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmulateSpec {
    /// One of the built-in stacks (any but [`RealStack::Command`]).
    Stack(RealStack),
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
    /// The stack.
    pub fn stack(&self) -> RealStack {
        match self {
            EmulateSpec::Stack(s) => *s,
            EmulateSpec::Command { .. } => RealStack::Command,
        }
    }

    /// The stack's name.
    pub fn name(&self) -> &'static str {
        self.stack().name()
    }
}

/// The emulate section of flow `f` with `paths` paths and stack profile `profile`: `None` when
/// the flow names no stack and none fits by default (a UDP flow, an application other than a
/// bulk download, a flow that runs a real library in the simulator), which only `multiconn
/// emulate` refuses.
pub(super) fn resolve_emulate(f: &FlowSection, paths: usize, profile: Option<&str>) -> Result<Option<EmulateSpec>, FieldError> {
    if f.tunnel.is_some() || f.app == AppKind::Tunnel {
        // Tunnels are the simulator's: no real stack carries its QUIC datagrams' contents.
        if f.emulate.is_some() {
            return Err(err(&["flow", f.name.as_str(), "emulate"], "the emulator does not run tunnels: a flow in a tunnel, or app = \"tunnel\", runs in the simulator only"));
        }
        return Ok(None);
    }
    let Some(section) = f.emulate.clone() else {
        if f.stack.is_some() {
            // A library the simulator runs (`stack = "quinn"`) is no stack of the emulator's:
            // none is chosen for it, so `multiconn emulate` asks for one by name.
            return Ok(None);
        }
        return Ok(RealStack::default_for(f.transport, paths, profile).filter(|s| s.row().any_app || f.app == AppKind::Bulk).map(EmulateSpec::Stack));
    };
    let name = f.name.as_str();
    let path = |key: &'static str| ["flow", name, "emulate", key];
    let stack = match &section.stack {
        Some(s) => choose(&path("stack"), "stack", s, &STACKS.iter().map(|r| (r.name, r.stack)).collect::<Vec<_>>())?,
        None if section.client.is_some() || section.server.is_some() => RealStack::Command,
        None => match RealStack::default_for(f.transport, paths, profile) {
            Some(s) => s,
            None => return Err(err(&path("stack"), format!("a {} flow has no default stack: name one ({})", f.transport.name(), stacks::names()))),
        },
    };
    if stack != RealStack::Command {
        for (key, given) in [("server", &section.server), ("client", &section.client)] {
            if given.is_some() {
                return Err(err(&path(key), format!("a {key} command needs stack = \"command\" (this flow's stack is {})", stack.name())));
            }
        }
    }
    if !stack.carries(f.transport, paths) {
        let what = if paths > 1 { format!("a {}-path {} flow", paths, f.transport.name()) } else { format!("a {} flow", f.transport.name()) };
        let all = STACKS.iter().map(|r| format!("{}: {}", r.name, r.stack.carries_text())).collect::<Vec<_>>().join("; ");
        return Err(err(&path("stack"), format!("stack \"{}\" cannot carry {what} ({all})", stack.name())));
    }
    if !stack.row().any_app && f.app != AppKind::Bulk {
        return Err(err(&path("stack"), format!("the emulator's built-in stacks run bulk downloads; app = \"{}\" needs stack = \"command\" with your own programs", f.app.name())));
    }
    if stack == RealStack::Command {
        let Some(client) = section.client.clone() else {
            return Err(err(&path("client"), "stack = \"command\" needs a client command, e.g. client = \"iperf3 -c {server_addr} -p {port} -R -t 10\""));
        };
        for (key, given) in [("server", &section.server), ("client", &section.client)] {
            if let Some(command) = given {
                stacks::check_placeholders(command, paths).map_err(|m| err(&path(key), m))?;
            }
        }
        return Ok(Some(EmulateSpec::Command { server: section.server.clone(), client }));
    }
    Ok(Some(EmulateSpec::Stack(stack)))
}
