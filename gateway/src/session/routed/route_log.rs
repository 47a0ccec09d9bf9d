//! The route log (`[routing] route_log`): one JSON line per routed request, written by a
//! background thread so that a session never waits for the disk.
//!
//! Fields: `conn` (gateway connection id), `seq` (request number within the connection, from 1),
//! `cmd` (`query`, `init_db`, `execute`, …), `sql` (first 200 bytes), `consistency`
//! (`strong`/`weak`), `target` (the server actually used, after retries), `server_name`,
//! `role` (`leader`, `follower`, `readonly`, `tenant`), `partition` (name, when computed),
//! `sticky` (`trans`, `pin`, `dependent` or `none`: why the target was not chosen by the route
//! decision; `role` is then `sticky`), `attempts` (connections tried).
//!
//! Requests the gateway answers itself (deferred `BEGIN`, `COMMIT` of a deferred `BEGIN`, route
//! variables, `SET TRANSACTION`, SHOW PROCESSLIST, KILL, EXPLAIN ROUTE, COM_PING) have no line. A
//! server's general log also shows what the gateway sends on its own before a request, on the
//! same connection: the session-state sync (`COM_INIT_DB`, `SET …`) and the replayed `BEGIN`.

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};

/// Lines waiting for the writer; beyond that, lines are dropped and counted.
const QUEUE: usize = 65_536;

/// Most SQL bytes logged per request.
const SQL_BYTES: usize = 200;

/// One routed request.
#[derive(Debug, Clone, Default)]
pub struct RouteRecord<'a> {
    /// Gateway connection id.
    pub conn: u32,
    /// Request number within the connection.
    pub seq: u64,
    /// Command name.
    pub cmd: &'a str,
    /// Statement text (cut at 200 bytes).
    pub sql: &'a [u8],
    /// `strong` / `weak`.
    pub consistency: &'a str,
    /// The server used.
    pub target: Option<SocketAddr>,
    /// Its name in the topology.
    pub server_name: Option<String>,
    /// Its role for the request.
    pub role: &'a str,
    /// The partition, when computed.
    pub partition: Option<String>,
    /// Why the session was sticky (`none` when the route decision chose).
    pub sticky: &'a str,
    /// Connections tried.
    pub attempts: usize,
}

/// The first 200 bytes of a statement, as text (the logs' `sql`).
pub fn sql_head(sql: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(&sql[..sql.len().min(SQL_BYTES)])
}

impl RouteRecord<'_> {
    /// The record as one INFO line at target `gateway::route` (`[log] route_diagnosis`).
    pub fn trace(&self) {
        tracing::info!(
            target: "gateway::route",
            conn = self.conn,
            seq = self.seq,
            cmd = self.cmd,
            sql = %sql_head(self.sql),
            consistency = self.consistency,
            server = ?self.target,
            server_name = ?self.server_name,
            role = self.role,
            partition = ?self.partition,
            sticky = self.sticky,
            attempts = self.attempts,
            "route"
        );
    }
}

/// The writer's queue.
#[derive(Debug)]
pub struct RouteLog {
    tx: SyncSender<String>,
    dropped: AtomicU64,
}

impl RouteLog {
    /// Opens (appends to) `path` and starts the writer thread.
    pub fn open(path: &Path) -> std::io::Result<RouteLog> {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        let (tx, rx) = sync_channel(QUEUE);
        std::thread::Builder::new().name("route-log".into()).spawn(move || writer(file, rx))?;
        Ok(RouteLog { tx, dropped: AtomicU64::new(0) })
    }

    /// Queues one record; never blocks.
    pub fn write(&self, r: &RouteRecord<'_>) {
        match self.tx.try_send(render(r)) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                if n.is_power_of_two() {
                    tracing::warn!(dropped = n, "route log cannot keep up: lines dropped");
                }
            }
            Err(TrySendError::Disconnected(_)) => {}
        }
    }
}

/// Writes queued lines, flushing whenever the queue is empty.
fn writer(file: std::fs::File, rx: Receiver<String>) {
    let mut out = std::io::BufWriter::new(file);
    while let Ok(line) = rx.recv() {
        let mut ok = out.write_all(line.as_bytes()).is_ok();
        while let Ok(more) = rx.try_recv() {
            ok &= out.write_all(more.as_bytes()).is_ok();
        }
        if !ok || out.flush().is_err() {
            tracing::warn!("route log write failed");
        }
    }
}

/// The JSON line of a record.
pub fn render(r: &RouteRecord<'_>) -> String {
    let sql = &r.sql[..r.sql.len().min(SQL_BYTES)];
    let mut s = String::with_capacity(160 + sql.len());
    s.push_str(&format!("{{\"conn\":{},\"seq\":{},\"cmd\":", r.conn, r.seq));
    json_str(&mut s, r.cmd);
    s.push_str(",\"sql\":");
    json_str(&mut s, &String::from_utf8_lossy(sql));
    s.push_str(",\"consistency\":");
    json_str(&mut s, r.consistency);
    s.push_str(",\"target\":");
    opt(&mut s, r.target.map(|t| t.to_string()).as_deref());
    s.push_str(",\"server_name\":");
    opt(&mut s, r.server_name.as_deref());
    s.push_str(",\"role\":");
    json_str(&mut s, r.role);
    s.push_str(",\"partition\":");
    opt(&mut s, r.partition.as_deref());
    s.push_str(",\"sticky\":");
    json_str(&mut s, r.sticky);
    s.push_str(&format!(",\"attempts\":{}}}\n", r.attempts));
    s
}

fn opt(out: &mut String, v: Option<&str>) {
    match v {
        Some(v) => json_str(out, v),
        None => out.push_str("null"),
    }
}

/// Appends `v` as a JSON string.
fn json_str(out: &mut String, v: &str) {
    out.push('"');
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_one_json_line() {
        let r = RouteRecord {
            conn: 7,
            seq: 2,
            cmd: "query",
            sql: b"SELECT \"a\"\n",
            consistency: "strong",
            target: Some("127.0.0.1:3307".parse().unwrap()),
            server_name: Some("s1".into()),
            role: "leader",
            partition: None,
            sticky: "none",
            attempts: 1,
        };
        assert_eq!(
            render(&r),
            "{\"conn\":7,\"seq\":2,\"cmd\":\"query\",\"sql\":\"SELECT \\\"a\\\"\\n\",\"consistency\":\"strong\",\
             \"target\":\"127.0.0.1:3307\",\"server_name\":\"s1\",\"role\":\"leader\",\"partition\":null,\
             \"sticky\":\"none\",\"attempts\":1}\n"
        );
    }

    #[test]
    fn cuts_sql_at_200_bytes() {
        let long = vec![b'x'; 500];
        let line = render(&RouteRecord { sql: &long, ..RouteRecord::default() });
        assert!(line.contains(&format!("\"sql\":\"{}\"", "x".repeat(200))), "{line}");
    }
}
