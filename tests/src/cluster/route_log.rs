//! The gateway's route log (`[routing] route_log`, one JSON object per routed request: conn, seq,
//! cmd, sql (first 200 bytes), consistency, target, server_name, role, partition, sticky,
//! attempts), read back tolerantly: a field the gateway does not write is `None`.

use std::net::SocketAddr;
use std::path::Path;

use serde_json::Value;

/// One routed request.
#[derive(Debug, Clone)]
pub struct RouteRecord {
    /// The gateway's client connection id.
    pub conn: Option<u64>,
    /// Request number within the connection.
    pub seq: Option<u64>,
    /// `COM_QUERY`, `COM_STMT_EXECUTE`, …
    pub cmd: String,
    /// Start of the statement text.
    pub sql: String,
    /// `STRONG` / `WEAK`.
    pub consistency: Option<String>,
    /// The server the request was sent to.
    pub target: Option<SocketAddr>,
    /// Topology name of the target.
    pub server_name: Option<String>,
    /// Sent on the transaction's (or pinned session's) connection.
    pub sticky: Option<bool>,
    /// Servers tried.
    pub attempts: Option<u64>,
    /// The whole line.
    pub raw: Value,
}

impl RouteRecord {
    /// Parses one line; `None` for a blank or non-JSON line.
    pub fn parse(line: &str) -> Option<RouteRecord> {
        let raw: Value = serde_json::from_str(line.trim()).ok()?;
        let s = |k: &str| raw.get(k).and_then(Value::as_str).map(str::to_string);
        let n = |k: &str| raw.get(k).and_then(Value::as_u64);
        Some(RouteRecord {
            conn: n("conn"),
            seq: n("seq"),
            cmd: s("cmd").unwrap_or_default(),
            sql: s("sql").unwrap_or_default(),
            consistency: s("consistency"),
            target: s("target").and_then(|t| t.parse().ok()),
            server_name: s("server_name"),
            sticky: raw.get("sticky").and_then(Value::as_bool),
            attempts: n("attempts"),
            raw,
        })
    }

    /// A statement execution (not a prepare, close or reset of a prepared statement).
    pub fn is_execution(&self) -> bool {
        let c = self.cmd.to_ascii_uppercase();
        !(c.contains("PREPARE") || c.contains("CLOSE") || c.contains("RESET") || c.contains("LONG_DATA"))
    }
}

/// Every record of the log file (an absent file reads as empty).
pub fn read(path: &Path) -> Vec<RouteRecord> {
    std::fs::read_to_string(path).unwrap_or_default().lines().filter_map(RouteRecord::parse).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_record_and_tolerates_missing_fields() {
        let r = RouteRecord::parse(
            r#"{"conn":3,"seq":7,"cmd":"COM_QUERY","sql":"/* q:1 */ SELECT 1","consistency":"STRONG","target":"127.0.0.1:3307","server_name":"s1","role":"LEADER","partition":null,"sticky":false,"attempts":1}"#,
        )
        .unwrap();
        assert_eq!((r.conn, r.seq, r.target), (Some(3), Some(7), Some("127.0.0.1:3307".parse().unwrap())));
        assert!(r.is_execution());
        let r = RouteRecord::parse(r#"{"cmd":"COM_STMT_PREPARE","target":null}"#).unwrap();
        assert_eq!((r.target, r.is_execution()), (None, false));
        assert!(RouteRecord::parse("not json").is_none());
    }
}
