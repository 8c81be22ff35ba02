//! Tunnels: flows whose packets ride the QUIC DATAGRAM frames (RFC 9221) of an app = "tunnel"
//! flow instead of a route, as a MASQUE proxy carries them (the 3GPP ATSSS MPQUIC
//! steering functionality: the UE and the UPF tunnel an MA PDU session's traffic over
//! multipath QUIC in datagram mode). This pass links each such flow to its tunnel once every
//! flow is resolved ([`super::tunnel_place`] says how its packets are carried): the i-th flow
//! naming a tunnel is its i-th request stream (ID 4·i, Quarter Stream ID i).
//!
//! The tunnel and the flows in it join the same two nodes (either way round); every packet of
//! the flow, at its largest (`packet_size`), must fit in one DATAGRAM frame of the tunnel in
//! both directions, since a datagram is never split (RFC 9221 §5) — the one-line error gives
//! the largest packet_size that fits.

use super::errors::{err, FieldError};
use super::flows::Flow;
use super::tunnel_place::{TunnelMode, Tunnelled};
use crate::schema::{AppKind, ScenarioFile, Transport};
use multiconn_core::{FlowId, IP_UDP_OVERHEAD};
use multiconn_transport::Role;

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
        let end_at_from = if inner.from == tunnel.from { tunnel.sender_role() } else { tunnel.sender_role().peer() };
        let place = Tunnelled { flow: t, name: name.clone(), mode, quarter_stream_id: carried[t], end_at_from };
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
