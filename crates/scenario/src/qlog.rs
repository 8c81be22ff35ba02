//! qlog files for QUIC connections: JSON-SEQ (RFC 7464) records as qvis reads them, per
//! draft-ietf-quic-qlog-main-schema (qlog_version 0.3): one header record naming the trace and
//! its vantage point, then one record per event as the endpoint emitted it.

use serde_json::json;

/// One endpoint's qlog: a file name (without folder) and its complete text.
#[derive(Debug, Clone, PartialEq)]
pub struct QlogFile {
    /// The file's name, `<flow>_<role>.sqlog` (role `client` or `server`).
    pub file_name: String,
    /// The file's text: JSON-SEQ records (RFC 7464), the header, then one per event.
    pub text: String,
}

const RECORD_SEPARATOR: char = '\u{1e}';

/// The file for the `role` ("client" or "server") endpoint of flow `flow`.
pub fn qlog_file(scenario: &str, flow: &str, role: &str, events: &[String]) -> QlogFile {
    let header = json!({
        "qlog_version": "0.3",
        "qlog_format": "JSON-SEQ",
        "title": format!("multiconn {scenario}"),
        "trace": {
            "title": format!("flow {flow}, {role}"),
            "vantage_point": {"name": format!("{flow}-{role}"), "type": role},
            "common_fields": {"time_format": "relative", "reference_time": 0.0, "protocol_type": ["QUIC"]},
        },
    });
    let mut text = String::with_capacity(events.iter().map(|e| e.len() + 2).sum::<usize>() + 256);
    for record in std::iter::once(&header.to_string()).chain(events) {
        text.push(RECORD_SEPARATOR);
        text.push_str(record);
        text.push('\n');
    }
    QlogFile { file_name: format!("{flow}_{role}.sqlog"), text }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_record_is_separated_and_parses() {
        let f = qlog_file("s", "bulk", "client", &[r#"{"time":1.5,"name":"transport:packet_sent","data":{}}"#.to_string()]);
        assert_eq!(f.file_name, "bulk_client.sqlog");
        let records: Vec<&str> = f.text.split(RECORD_SEPARATOR).filter(|r| !r.is_empty()).collect();
        assert_eq!(records.len(), 2);
        let header: serde_json::Value = serde_json::from_str(records[0].trim_end()).unwrap();
        assert_eq!(header["qlog_format"], "JSON-SEQ");
        assert_eq!(header["trace"]["vantage_point"]["type"], "client");
        let event: serde_json::Value = serde_json::from_str(records[1].trim_end()).unwrap();
        assert_eq!(event["name"], "transport:packet_sent");
    }
}
