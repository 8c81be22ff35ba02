//! QUIC datagrams (RFC 9221) of a flow: which flows may send them (the QUIC model only: a
//! TCP or UDP flow, or a real library's `stack`, is refused at the field that asks for them),
//! the transport parameter max_datagram_frame_size both ends advertise (the flow's, else the
//! profile's, else 65535 B when the flow sends datagrams), the packing order with stream data
//! (`datagram_priority`) and the sender's buffer, and whether each datagram source's messages
//! fit in one packet (RFC 9221 §5: a datagram is never split).

use super::connection::ConnectionSpec;
use super::errors::{err, FieldError};
use crate::messages::MessageSource;
use crate::schema::{AppKind, FlowSection, Transport};
use multiconn_core::FlowId;
use multiconn_transport::{ConnectionParams, DatagramParams, Role};

/// The value a flow that sends datagrams advertises when neither it nor its profile gives one:
/// the conventional "no limit" (RFC 9221 §3).
pub const DEFAULT_MAX_DATAGRAM_FRAME_SIZE: u64 = 65_535;

/// The largest value of a transport parameter's varint (RFC 9000 §16).
const MAX_VARINT: u64 = (1 << 62) - 1;

/// Whether the flow asks for datagrams at all, and the first field that does.
fn datagram_field(f: &FlowSection) -> Option<String> {
    if matches!(f.app, AppKind::Datagrams | AppKind::Tunnel) {
        return Some("app".to_string());
    }
    if let Some(i) = f.messages.iter().flatten().position(|m| m.datagram == Some(true)) {
        return Some(format!("messages[{i}].datagram"));
    }
    [("max_datagram_frame_size", f.max_datagram_frame_size.is_some()), ("datagram_priority", f.datagram_priority.is_some()), ("datagram_send_buffer", f.datagram_send_buffer.is_some())]
        .iter()
        .find(|(_, set)| *set)
        .map(|(field, _)| field.to_string())
}

/// Refuses datagram settings on a flow whose transport is not QUIC; run before the other
/// checks of the flow's application.
pub(super) fn check_datagram_transport(f: &FlowSection) -> Result<(), FieldError> {
    if f.transport == Transport::Quic {
        return Ok(());
    }
    let Some(field) = datagram_field(f) else { return Ok(()) };
    let what = if field == "app" { format!("app \"{}\" sends QUIC DATAGRAM frames (RFC 9221)", f.app.name()) } else { "QUIC DATAGRAM frames (RFC 9221) are a quic setting".to_string() };
    Err(err(&["flow", f.name.as_str(), field.as_str()], format!("{what}: it needs transport = \"quic\"; this flow is {}", f.transport.name())))
}

/// The flow's datagram settings for its connection; `None` when it neither sends datagrams
/// nor advertises the transport parameter.
pub(super) fn resolve_datagrams(f: &FlowSection, conn: &ConnectionSpec, sources: &[MessageSource], packet_size: u32, sender: Role) -> Result<Option<DatagramParams>, FieldError> {
    let name = f.name.as_str();
    let path = |field: &'static str| vec!["flow", name, field];
    let Some(field) = datagram_field(f) else { return Ok(None) };
    if let Some(library) = conn.stack {
        return Err(err(&["flow", name, field.as_str()], format!("stack {} does not carry the model's QUIC datagrams: run this flow with the QUIC model (leave stack out)", library.name())));
    }
    let sends = f.app == AppKind::Tunnel || sources.iter().any(|s| s.datagram);
    if !sends {
        for (field, set) in [("datagram_priority", f.datagram_priority.is_some()), ("datagram_send_buffer", f.datagram_send_buffer.is_some())] {
            if set {
                return Err(err(&path(field), "only a flow that sends datagrams takes this setting: app = \"datagrams\", or a [[flow.messages]] source with datagram = true"));
            }
        }
    }
    let knobs = conn.profile.quic.as_ref();
    let frame_size = match f.max_datagram_frame_size {
        Some(b) if b.0 == 0 => {
            return Err(err(&path("max_datagram_frame_size"), "0 is the parameter's absence (RFC 9221 §3: no DATAGRAM frames taken); give the largest frame the ends take, e.g. \"65535 B\", or leave it out"))
        }
        Some(b) if b.0 > MAX_VARINT => return Err(err(&path("max_datagram_frame_size"), format!("a transport parameter is a varint: at most {MAX_VARINT} B"))),
        Some(b) => Some(b.0),
        None => knobs.and_then(|q| q.max_datagram_frame_size).or(sends.then_some(DEFAULT_MAX_DATAGRAM_FRAME_SIZE)),
    };
    let send_buffer = match f.datagram_send_buffer {
        Some(b) if b.0 == 0 => return Err(err(&path("datagram_send_buffer"), "must be at least 1 B (the datagrams waiting for the window)")),
        Some(b) => b.0,
        None => DatagramParams::DEFAULT_SEND_BUFFER,
    };
    let priority = f.datagram_priority.or_else(|| knobs.and_then(|q| q.datagram_priority)).unwrap_or_default();
    let params = DatagramParams { client_max_frame_size: frame_size, server_max_frame_size: frame_size, priority, send_buffer };
    // Each source's messages must fit in one packet, within the receiver's limit.
    let probe = ConnectionParams {
        flow: FlowId(0),
        start: multiconn_core::Time::ZERO,
        workload: conn.workload,
        profile: conn.profile.clone(),
        cc: conn.cc,
        max_packet_size: packet_size,
        resume: conn.resume,
        address_token: conn.address_token,
        qlog: false,
        multipath: None,
        external_cc: None,
        external_workload: None,
        datagrams: Some(params),
    };
    let max = multiconn_quic::max_datagram_payload_for(&probe, sender).unwrap_or(0);
    for (i, s) in sources.iter().enumerate().filter(|(_, s)| s.datagram) {
        if s.size <= max {
            continue;
        }
        let index = if f.app == AppKind::Datagrams { "datagrams".to_string() } else { format!("messages[{i}]") };
        let limit = match f.max_datagram_frame_size {
            Some(b) if max_from_frame_size(b.0) <= max => format!("the max_datagram_frame_size of {} B", b.0),
            _ => format!("a packet of packet_size {packet_size} B (less IP and UDP headers, a 1-RTT header with a 4-byte packet number, the AEAD tag and the frame type)"),
        };
        return Err(err(&["flow", name, index.as_str(), "size"], format!("a datagram of {} B does not fit in one DATAGRAM frame: at most {max} B fit in {limit}; a datagram is never split (RFC 9221 §5)", s.size)));
    }
    Ok(Some(params))
}

/// The largest datagram a frame of `frame_size` bytes carries with its Length field.
fn max_from_frame_size(frame_size: u64) -> u64 {
    multiconn_quic::frame::max_datagram_data(frame_size.min(usize::MAX as u64) as usize, false).unwrap_or(0)
}
