//! Tunnels: flows whose packets ride the QUIC DATAGRAM frames (RFC 9221) of an app = "tunnel"
//! flow instead of a route, as a MASQUE proxy carries them (the 3GPP ATSSS MPQUIC
//! steering functionality: the UE and the UPF tunnel an MA PDU session's traffic over
//! multipath QUIC in datagram mode).
//!
//! The payload of each datagram is an HTTP Datagram (RFC 9297 §2.1): the Quarter Stream ID of
//! the flow's request stream (the i-th flow in the tunnel is the i-th client-initiated
//! bidirectional stream, ID 4·i, so its Quarter Stream ID is i), a Context ID of 0, then
//! - for a udp or quic flow, CONNECT-UDP (RFC 9298 §5): the UDP payload alone (the packet less
//!   its IPv4 and UDP headers; the proxy rebuilds them);
//! - for a tcp flow, CONNECT-IP (RFC 9484 §6): the whole IP packet.
//!
//! The tunnel and the flows in it join the same two nodes (either way round); every packet of
//! the flow, at its largest (`packet_size`), must fit in one DATAGRAM frame of the tunnel in
//! both directions, since a datagram is never split (RFC 9221 §5) — the one-line error gives
//! the largest packet_size that fits.

use super::errors::{err, FieldError};
use super::flows::Flow;
use crate::schema::{AppKind, ScenarioFile, Transport};
use multiconn_core::{FlowId, IP_UDP_OVERHEAD};
use multiconn_transport::Role;

/// How a tunnel carries a flow's packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TunnelMode {
    /// CONNECT-UDP (RFC 9298): the UDP payload.
    ConnectUdp,
    /// CONNECT-IP (RFC 9484): the IP packet.
    ConnectIp,
}

/// A flow's place in its tunnel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tunnelled {
    /// The tunnel's index among the flows that run.
    pub flow: usize,
    /// The tunnel's name.
    pub name: String,
    /// What of each packet the datagram carries.
    pub mode: TunnelMode,
    /// The Quarter Stream ID that opens each of its datagrams (its request stream ID ÷ 4).
    pub quarter_stream_id: u64,
}

impl Tunnelled {
    /// The bytes of the datagram that carries a packet of `size` bytes: the HTTP Datagram's
    /// Quarter Stream ID and Context ID (0, one byte), then the UDP payload or the IP packet.
    pub fn datagram_bytes(&self, size: u32) -> u64 {
        let header = (multiconn_quic::varint::len(self.quarter_stream_id) + 1) as u64;
        let carried = match self.mode {
            TunnelMode::ConnectUdp => u64::from(size.saturating_sub(IP_UDP_OVERHEAD)),
            TunnelMode::ConnectIp => u64::from(size),
        };
        header + carried
    }

    /// The tunnel's end at `node`: the end of the tunnel's connection that runs there.
    pub fn end_at(tunnel: &Flow, node: &str) -> Role {
        if node == tunnel.from {
            tunnel.sender_role()
        } else {
            other(tunnel.sender_role())
        }
    }
}

fn other(role: Role) -> Role {
    match role {
        Role::Client => Role::Server,
        Role::Server => Role::Client,
    }
}

/// Links each running flow with a `tunnel` to its tunnel, checking the pair; every tunnel must
/// carry at least one flow.
pub(super) fn resolve_tunnels(file: &ScenarioFile, flows: &mut [Flow], disabled: &[String]) -> Result<(), FieldError> {
    let mut carried = vec![0u64; flows.len()];
    for i in 0..flows.len() {
        let Some(section) = file.flow.iter().find(|s| s.name == flows[i].name) else { continue };
        let Some(name) = &section.tunnel else { continue };
        let at = ["flow", flows[i].name.as_str(), "tunnel"];
        let Some(t) = flows.iter().position(|f| &f.name == name) else {
            let why = if disabled.contains(name) { format!("flow \"{name}\" has enabled = false, so it does not run") } else { format!("there is no flow named \"{name}\"") };
            return Err(err(&at, why));
        };
        let (inner, tunnel) = (&flows[i], &flows[t]);
        if tunnel.app != AppKind::Tunnel {
            return Err(err(&at, format!("flow \"{name}\" is app = \"{}\"; a tunnel is a quic flow with app = \"tunnel\"", tunnel.app.name())));
        }
        let same = (inner.from == tunnel.from && inner.to == tunnel.to) || (inner.from == tunnel.to && inner.to == tunnel.from);
        if !same {
            return Err(err(&at, format!("the tunnel \"{name}\" joins {} and {}; this flow goes from {} to {}: a tunnel carries flows between its own two nodes", tunnel.from, tunnel.to, inner.from, inner.to)));
        }
        let mode = if inner.transport == Transport::Tcp { TunnelMode::ConnectIp } else { TunnelMode::ConnectUdp };
        let place = Tunnelled { flow: t, name: name.clone(), mode, quarter_stream_id: carried[t] };
        check_fits(inner, tunnel, &place)?;
        carried[t] += 1;
        flows[i].tunnel = Some(place);
    }
    if let Some(t) = (0..flows.len()).find(|&t| flows[t].app == AppKind::Tunnel && carried[t] == 0) {
        return Err(err(&["flow", flows[t].name.as_str(), "app"], "no running flow names this tunnel: give a flow tunnel = \"<this flow's name>\""));
    }
    Ok(())
}

/// The flow's largest packet fits in one of the tunnel's DATAGRAM frames, both ways.
fn check_fits(inner: &Flow, tunnel: &Flow, place: &Tunnelled) -> Result<(), FieldError> {
    let params = tunnel.connection_params(FlowId(0)).expect("a tunnel is a quic flow");
    let max = [Role::Client, Role::Server].iter().filter_map(|&r| multiconn_quic::max_datagram_payload_for(&params, r)).min().unwrap_or(0);
    let need = place.datagram_bytes(inner.packet_size);
    if need <= max {
        return Ok(());
    }
    let (what, header) = match place.mode {
        TunnelMode::ConnectUdp => ("CONNECT-UDP: its UDP payload", need - u64::from(inner.packet_size - IP_UDP_OVERHEAD)),
        TunnelMode::ConnectIp => ("CONNECT-IP: the IP packet", need - u64::from(inner.packet_size)),
    };
    let largest = inner.packet_size as u64 - (need - max);
    Err(err(
        &["flow", inner.name.as_str(), "packet_size"],
        format!(
            "its packets of up to {} B go in datagrams of {need} B ({what} after {header} B of Quarter Stream ID and Context ID), and the tunnel \"{}\" carries at most {max} B in one DATAGRAM frame (its packet_size {} B); a datagram is never split (RFC 9221 §5): set packet_size to at most {largest} B",
            inner.packet_size, place.name, tunnel.packet_size
        ),
    ))
}
