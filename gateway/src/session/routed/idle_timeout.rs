//! The client session's `wait_timeout`, enforced on the client leg: a routed session idle longer
//! than it is closed, as a server closes a session it waited on that long (MariaDB closes the
//! socket without a word; the client's next statement gets 2006 / 2013). Pooled server
//! connections closed by their servers are replaced quietly; only the client's own session times
//! out, after the value it set (`SET wait_timeout = n`), else the server's default: its global
//! `wait_timeout`, or `interactive_timeout` for a client that logged in with
//! `CLIENT_INTERACTIVE` (the server copies that one into the session at login).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::time::Sleep;

use crate::protocol::buf::Reader;
use crate::protocol::message::{is_terminator, ERR};
use crate::protocol::{caps, command};
use crate::session::backend::Backend;
use crate::session::state::ClientState;

/// The largest `wait_timeout` MariaDB and MySQL accept (one year, in seconds).
const MAX_SECS: u64 = 31_536_000;

/// Longer than any limit: a timer set to it is moved to the first real deadline.
const NEVER: Duration = Duration::from_secs(MAX_SECS + 1);

/// Servers' defaults are read again after this.
const REFRESH: Duration = Duration::from_secs(60);

/// What a server said its defaults are, by address.
static DEFAULTS: Mutex<Option<HashMap<SocketAddr, (Instant, Defaults)>>> = Mutex::new(None);

/// A server's global `wait_timeout` and `interactive_timeout`, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Defaults {
    wait: u64,
    interactive: u64,
}

impl Default for Defaults {
    /// The servers' own defaults (eight hours), until a server said otherwise.
    fn default() -> Self {
        Defaults { wait: 28_800, interactive: 28_800 }
    }
}

impl Defaults {
    /// The default of a client with capabilities `client_caps`.
    pub(super) fn for_client(self, client_caps: u32) -> u64 {
        if client_caps & caps::INTERACTIVE != 0 {
            self.interactive
        } else {
            self.wait
        }
    }
}

/// A session's idle limit: the servers' defaults, and one timer for the session, moved only when
/// it would fire late (a shorter limit) or fired early (activity since it was set): not a timer
/// per command.
pub(super) struct Idle {
    /// The servers' idle limits for this client, unless it sets `wait_timeout`.
    pub defaults: Defaults,
    timer: Pin<Box<Sleep>>,
}

impl Default for Idle {
    fn default() -> Self {
        Idle { defaults: Defaults::default(), timer: Box::pin(tokio::time::sleep(NEVER)) }
    }
}

impl Idle {
    /// Resolves at `deadline`, the end of the client's idle limit (the timer may have been set
    /// further out by an earlier, longer limit: then it is moved in and waited on again).
    pub async fn expired(&mut self, deadline: tokio::time::Instant) {
        if self.timer.deadline() > deadline {
            self.timer.as_mut().reset(deadline);
        }
        loop {
            self.timer.as_mut().await;
            if tokio::time::Instant::now() >= deadline {
                break;
            }
            self.timer.as_mut().reset(deadline);
        }
    }
}

/// The idle limit of a session: the `wait_timeout` the client set, else `default_secs`.
pub(super) fn limit(state: &ClientState, default_secs: u64) -> Duration {
    let set = state.system("wait_timeout").and_then(|v| v.text()).and_then(|t| t.trim().parse::<u64>().ok());
    Duration::from_secs(set.unwrap_or(default_secs).clamp(1, MAX_SECS))
}

/// The defaults of the server behind `backend` (a logged-in, idle connection): remembered, or
/// read now (`SELECT @@global.wait_timeout, @@global.interactive_timeout`). `None` when the
/// connection failed meanwhile (it is then to be dropped as broken).
pub(super) async fn server_defaults(backend: &mut Backend, server: SocketAddr, timeout: Duration) -> Option<Defaults> {
    let known = DEFAULTS.lock().ok().and_then(|m| m.as_ref()?.get(&server).copied());
    if let Some((at, d)) = known {
        if at.elapsed() < REFRESH {
            return Some(d);
        }
    }
    let values = tokio::time::timeout(
        timeout,
        select_numbers(backend, b"SELECT @@global.wait_timeout, @@global.interactive_timeout"),
    )
    .await
    .ok()??;
    let d = match values.as_slice() {
        [Some(wait), Some(interactive)] => Defaults { wait: *wait, interactive: *interactive },
        // A server that knows neither (refused, NULL): the usual eight hours.
        _ => Defaults::default(),
    };
    if let Ok(mut m) = DEFAULTS.lock() {
        m.get_or_insert_with(HashMap::new).insert(server, (Instant::now(), d));
    }
    Some(d)
}

/// Runs a one-row `SELECT` and reads its values as numbers (`None` for NULL or text); an ERR
/// answer gives no values. `None`: the connection broke or answered something else.
async fn select_numbers(backend: &mut Backend, sql: &[u8]) -> Option<Vec<Option<u64>>> {
    const MAX: usize = 1 << 16;
    let deprecate_eof = backend.capabilities & caps::DEPRECATE_EOF != 0;
    backend.wire.write_packet(0, &[&[command::QUERY], sql].concat()).await.ok()?;
    let first = backend.wire.read_packet(MAX).await.ok()?;
    if first.payload.first() == Some(&ERR) {
        return Some(Vec::new());
    }
    let columns = Reader::new(&first.payload).lenenc().ok()?;
    for _ in 0..columns + u64::from(!deprecate_eof) {
        backend.wire.read_packet(MAX).await.ok()?;
    }
    let mut values = Vec::new();
    loop {
        let p = backend.wire.read_packet(MAX).await.ok()?;
        let head = *p.payload.first()?;
        if head == ERR || is_terminator(head, p.payload.len(), deprecate_eof) {
            return Some(values);
        }
        if values.is_empty() {
            let mut r = Reader::new(&p.payload);
            for _ in 0..columns {
                let v = if r.remaining() > 0 && p.payload[p.payload.len() - r.remaining()] == 0xfb {
                    r.u8().ok()?;
                    None
                } else {
                    std::str::from_utf8(r.lenenc_bytes().ok()?).ok().and_then(|s| s.parse().ok())
                };
                values.push(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clients_value_wins_over_the_default() {
        let mut s = ClientState::new(None, 45);
        assert_eq!(limit(&s, 600), Duration::from_secs(600));
        assert!(s.observe_statement(b"SET wait_timeout=1", None));
        assert_eq!(limit(&s, 600), Duration::from_secs(1));
        assert!(s.observe_statement(b"SET SESSION wait_timeout = DEFAULT", None));
        assert_eq!(limit(&s, 600), Duration::from_secs(600), "DEFAULT: the server's default again");
        assert!(s.observe_statement(b"SET @@wait_timeout = 99999999999", None));
        assert_eq!(limit(&s, 600), Duration::from_secs(MAX_SECS));
        let d = Defaults { wait: 10, interactive: 20 };
        assert_eq!((d.for_client(0), d.for_client(caps::INTERACTIVE)), (10, 20));
    }
}
