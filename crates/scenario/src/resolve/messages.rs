//! Message sources: the `[[flow.messages]]` of an app = "messages" flow, each with its kind's
//! defaults filled in (size, interval or rate, stream options, deadline, expiry), and the one
//! source of an app = "datagrams" flow (`[flow.datagrams]`), resolved as a background source
//! named "datagrams" whose messages go as QUIC DATAGRAM frames.

use super::errors::{err, valid_name, FieldError};
use crate::messages::{Expiry, MessageKind, MessageSource, StreamChoices};
use crate::schema::{AppKind, DatagramSourceSection, FlowSection, MessageSourceSection};
use multiconn_core::{Bytes, Dur};

/// The default size of an app = "datagrams" flow's datagrams (seed 004's V2X message).
pub const DEFAULT_DATAGRAM_SIZE: u64 = 1200;

/// The message sources of an app = "messages" flow (empty for other apps).
pub(super) fn resolve_messages(f: &FlowSection, run_duration: Option<Dur>) -> Result<Vec<MessageSource>, FieldError> {
    let name = f.name.as_str();
    let sections = match (f.app, &f.messages) {
        // An empty list: the application opens its streams and writes itself (Python API).
        (AppKind::Messages, Some(m)) if m.is_empty() && run_duration.is_none() => {
            return Err(err(&["flow", name, "messages"], "a flow whose application writes its own messages (messages = []) needs run.duration: the run cannot tell when it is over"))
        }
        (AppKind::Messages, Some(m)) => m,
        (AppKind::Messages, None) => {
            return Err(err(&["flow", name, "messages"], "app = \"messages\" needs its sources: [[flow.messages]] with kind = \"priority\" or \"background\", or messages = [] when the application writes them itself"))
        }
        (_, Some(_)) => return Err(err(&["flow", name, "messages"], "only app = \"messages\" takes message sources (app = \"datagrams\" takes [flow.datagrams])")),
        (AppKind::Datagrams, None) => return resolve_datagram_source(f, run_duration),
        (_, None) => {
            if f.datagrams.is_some() {
                return Err(err(&["flow", name, "datagrams"], "only app = \"datagrams\" takes [flow.datagrams]; an app = \"messages\" source sends datagrams with datagram = true"));
            }
            return Ok(Vec::new());
        }
    };
    if f.datagrams.is_some() {
        return Err(err(&["flow", name, "datagrams"], "only app = \"datagrams\" takes [flow.datagrams]; an app = \"messages\" source sends datagrams with datagram = true"));
    }
    let mut out: Vec<MessageSource> = Vec::new();
    for (i, m) in sections.iter().enumerate() {
        let index = format!("messages[{i}]");
        out.push(resolve_source(name, &index, m, run_duration, &out)?);
    }
    Ok(out)
}

/// The one source of an app = "datagrams" flow.
fn resolve_datagram_source(f: &FlowSection, run_duration: Option<Dur>) -> Result<Vec<MessageSource>, FieldError> {
    let name = f.name.as_str();
    let Some(d) = &f.datagrams else {
        return Err(err(&["flow", name, "datagrams"], "app = \"datagrams\" needs its source: [flow.datagrams] with a size (default 1200 B) and an interval or a rate, e.g. datagrams = { interval = \"100 ms\" }"));
    };
    let DatagramSourceSection { size, interval, rate, start, count, duration, deadline, redundant } = d.clone();
    if interval.is_none() && rate.is_none() {
        return Err(err(&["flow", name, "datagrams", "rate"], "a datagram source needs a rate (e.g. rate = \"2 Mbit/s\") or an interval (e.g. interval = \"100 ms\")"));
    }
    let section = MessageSourceSection {
        kind: MessageKind::Background,
        name: Some("datagrams".to_string()),
        size: Some(size.unwrap_or(Bytes(DEFAULT_DATAGRAM_SIZE))),
        interval,
        rate,
        start,
        count,
        duration,
        priority: None,
        urgent: None,
        redundant,
        deadline,
        lifetime: None,
        superseded: None,
        stream_per_message: None,
        datagram: Some(true),
    };
    Ok(vec![resolve_source(name, "datagrams", &section, run_duration, &[])?])
}

/// One source; `index` names it in errors (`messages[i]`, or `datagrams`), `before` are the
/// flow's sources resolved so far.
fn resolve_source(name: &str, index: &str, m: &MessageSourceSection, run_duration: Option<Dur>, before: &[MessageSource]) -> Result<MessageSource, FieldError> {
    let path = |field: &'static str| vec!["flow", name, index, field];
    let defaults = m.kind.defaults();
    let source_name = m.name.clone().unwrap_or_else(|| m.kind.name().to_string());
    if !valid_name(&source_name) {
        return Err(err(&path("name"), format!("\"{source_name}\" is not a valid name: use letters, digits, '_' and '-'")));
    }
    if before.iter().any(|o| o.name == source_name) {
        return Err(err(&path("name"), format!("two sources are named \"{source_name}\"; give each its own name")));
    }
    let size = m.size.map_or(defaults.size, |b| b.0);
    if size == 0 {
        return Err(err(&path("size"), "a message needs at least 1 B"));
    }
    let interval = match (m.interval, m.rate) {
        (Some(_), Some(_)) => return Err(err(&path("rate"), "give either interval or rate, not both")),
        (Some(i), None) if i == Dur::ZERO => return Err(err(&path("interval"), "the interval must be positive, e.g. \"100 ms\"")),
        (Some(i), None) => i,
        (None, Some(r)) if r.bps() == 0 => return Err(err(&path("rate"), "the rate must be positive, e.g. \"2 Mbit/s\"")),
        (None, Some(r)) => r.tx_time(size),
        (None, None) => match defaults.interval {
            Some(i) => i,
            None => return Err(err(&path("rate"), format!("a {} source needs a rate (e.g. rate = \"2 Mbit/s\") or an interval", m.kind.name()))),
        },
    };
    if m.count == Some(0) {
        return Err(err(&path("count"), "at least one message (leave count out to write until the run ends)"));
    }
    if m.duration == Some(Dur::ZERO) {
        return Err(err(&path("duration"), "the duration must be positive"));
    }
    if m.count.is_none() && m.duration.is_none() && run_duration.is_none() {
        return Err(err(&path("count"), "this source would never stop: give count or duration, or run.duration"));
    }
    if m.deadline == Some(Dur::ZERO) {
        return Err(err(&path("deadline"), "the deadline must be positive, e.g. \"100 ms\""));
    }
    if m.lifetime == Some(Dur::ZERO) {
        return Err(err(&path("lifetime"), "the lifetime must be positive, e.g. \"100 ms\" (leave it out to keep every message until it is delivered)"));
    }
    let expiry = Expiry { lifetime: m.lifetime, superseded: m.superseded.unwrap_or(false) };
    if expiry.is_set() && m.stream_per_message == Some(false) {
        let field = if m.lifetime.is_some() { "lifetime" } else { "superseded" };
        return Err(err(&path("stream_per_message"), format!("{field} abandons a message by resetting its stream, so each message needs a stream of its own: leave stream_per_message out or set it to true")));
    }
    let datagram = m.datagram.unwrap_or(false);
    if datagram {
        let refused = [("lifetime", m.lifetime.is_some()), ("superseded", m.superseded.is_some()), ("stream_per_message", m.stream_per_message.is_some())];
        if let Some((field, _)) = refused.iter().find(|(_, set)| *set) {
            return Err(err(&path(field), format!("{field} concerns messages on streams; a datagram is never retransmitted, so it never needs abandoning: leave {field} out or set datagram = false")));
        }
    }
    let (options, deadline) = StreamChoices { priority: m.priority, urgent: m.urgent, redundant: m.redundant, deadline: m.deadline }.resolve(m.kind);
    Ok(MessageSource {
        name: source_name,
        kind: m.kind,
        size,
        interval,
        start: m.start.unwrap_or(Dur::ZERO),
        count: m.count,
        duration: m.duration,
        options,
        deadline,
        expiry,
        per_message_streams: expiry.is_set() || m.stream_per_message.unwrap_or(false),
        datagram,
    })
}
