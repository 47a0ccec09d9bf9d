//! Accounts from the servers (`[auth] accounts = "servers"`): the accounts table read through a
//! metadata account, cached, re-read on a timer, after a failed password check and (bounded by a
//! negative cache) for user names it does not hold.
//!
//! A login naming no `[[users]]` entry is checked against the server account whose host pattern
//! matches the client's real address ([`host`]); its stored `mysql_native_password` hash lets
//! the gateway check the client's scramble and then log in to every server with SHA1(password),
//! as for a `password_hash` user. Plugins that need the clear password are refused
//! ([`Proof::Unsupported`]).

pub mod config;
mod entry;
pub mod host;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use mysql_async::OptsBuilder;

pub use config::{AccountSource, AuthConfig};
pub use entry::{Flavour, Proof, ServerAccount};

use crate::metadata::information_schema::{MysqlClient, SqlClient, TextRow};

/// Most accounts kept from one read (more rows are ignored, with a warning).
const MAX_ACCOUNTS: usize = 100_000;
/// A failed password check re-reads the accounts only if they are at least this old, so that a
/// client guessing passwords costs the metadata server at most one query a second.
const MIN_REREAD: Duration = Duration::from_secs(1);

/// Errors of reading the servers' accounts.
#[derive(Debug, thiserror::Error)]
pub enum AccountsError {
    /// The metadata account could not read the accounts table (and none was read before).
    #[error("cannot read the accounts of server {server}: {reason}")]
    Read {
        /// The server asked.
        server: SocketAddr,
        /// What went wrong (connect, login, query).
        reason: String,
    },
}

/// The accounts as read at one moment, each user's entries most specific host first.
struct Snapshot {
    by_user: HashMap<String, Vec<ServerAccount>>,
    read_at: Instant,
}

impl Snapshot {
    fn find(&self, user: &str, client: IpAddr) -> Option<ServerAccount> {
        self.by_user.get(user)?.iter().find(|a| host::matches(&a.host, client)).cloned()
    }
}

/// The servers' accounts, shared by all sessions.
pub struct ServerAccounts {
    server: SocketAddr,
    client: MysqlClient,
    refresh: Duration,
    negative: Duration,
    timeout: Duration,
    current: RwLock<Option<Arc<Snapshot>>>,
    /// One read at a time; logins waiting for it use its result.
    reading: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for ServerAccounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerAccounts").field("server", &self.server).field("refresh", &self.refresh).finish()
    }
}

impl ServerAccounts {
    /// Accounts read from `server` (`[auth] server`, else `backend`) per `auth`; `None` unless
    /// `accounts = "servers"`. No connection is made before the first login needs one.
    pub fn from_config(auth: &AuthConfig, backend: SocketAddr, timeout: Duration) -> Option<ServerAccounts> {
        if !auth.from_servers() {
            return None;
        }
        let server = auth.server.unwrap_or(backend);
        let constraints = mysql_async::PoolConstraints::new(0, 1).unwrap_or_default();
        let opts = OptsBuilder::default()
            .ip_or_hostname(server.ip().to_string())
            .tcp_port(server.port())
            .user(Some(auth.user.clone()))
            .pass(Some(auth.password.clone()))
            .prefer_socket(false)
            .pool_opts(mysql_async::PoolOpts::default().with_constraints(constraints));
        Some(ServerAccounts {
            server,
            client: MysqlClient::new(opts.into()),
            refresh: Duration::from_secs(auth.refresh_secs),
            negative: Duration::from_secs(auth.negative_cache_secs),
            timeout,
            current: RwLock::new(None),
            reading: tokio::sync::Mutex::new(()),
        })
    }

    /// The account `user` logs in as from `client`: read again when the cache is older than
    /// `refresh_secs`, or older than `negative_cache_secs` when it does not know the user.
    pub async fn find(&self, user: &str, client: IpAddr) -> Result<Option<ServerAccount>, AccountsError> {
        if let Some(found) = self.snapshot(self.refresh).await?.find(user, client) {
            return Ok(Some(found));
        }
        Ok(self.snapshot(self.negative).await?.find(user, client))
    }

    /// After a failed password check: the account read again (unless read within the last
    /// second), in case its password just changed. `None`: it is no longer there.
    pub async fn find_again(&self, user: &str, client: IpAddr) -> Result<Option<ServerAccount>, AccountsError> {
        Ok(self.snapshot(MIN_REREAD).await?.find(user, client))
    }

    fn cached(&self, max_age: Duration) -> Option<Arc<Snapshot>> {
        let current = self.current.read().unwrap_or_else(|p| p.into_inner());
        current.as_ref().filter(|s| s.read_at.elapsed() < max_age).cloned()
    }

    /// A snapshot at most `max_age` old: the cached one, or a fresh read. When a read fails, the
    /// last snapshot stays in use (with a warning) until a read succeeds.
    async fn snapshot(&self, max_age: Duration) -> Result<Arc<Snapshot>, AccountsError> {
        if let Some(s) = self.cached(max_age) {
            return Ok(s);
        }
        let _reading = self.reading.lock().await;
        if let Some(s) = self.cached(max_age) {
            return Ok(s);
        }
        let read = match tokio::time::timeout(self.timeout, self.read()).await {
            Ok(r) => r,
            Err(_) => Err(format!("no answer within {:?}", self.timeout)),
        };
        let mut current = self.current.write().unwrap_or_else(|p| p.into_inner());
        match (read, current.as_ref()) {
            (Ok(by_user), _) => {
                tracing::debug!(server = %self.server, users = by_user.len(), "read the servers' accounts");
                let s = Arc::new(Snapshot { by_user, read_at: Instant::now() });
                *current = Some(s.clone());
                Ok(s)
            }
            (Err(reason), Some(old)) => {
                tracing::warn!(server = %self.server, %reason, "cannot read the servers' accounts; using the last ones read");
                Ok(old.clone())
            }
            (Err(reason), None) => Err(AccountsError::Read { server: self.server, reason }),
        }
    }

    /// Reads every account: `mysql.global_priv` (MariaDB), else `mysql.user` in OceanBase's
    /// shape, else in MySQL's (the first query that the server answers).
    async fn read(&self) -> Result<HashMap<String, Vec<ServerAccount>>, String> {
        type Parse = fn(&[Option<String>], Flavour) -> Option<ServerAccount>;
        let queries: [(&str, Parse, Flavour); 3] = [
            (entry::GLOBAL_PRIV_QUERY, entry::from_global_priv, Flavour::MariaDb),
            (entry::OCEANBASE_USER_QUERY, entry::from_user_table, Flavour::OceanBase),
            (entry::USER_TABLE_QUERY, entry::from_user_table, Flavour::Mysql),
        ];
        let mut failures = Vec::new();
        let mut answer: Option<(Vec<TextRow>, Parse, Flavour)> = None;
        for (sql, parse, flavour) in queries {
            match self.client.query(sql).await {
                Ok(rows) => {
                    answer = Some((rows, parse, flavour));
                    break;
                }
                Err(e) => failures.push(e.to_string()),
            }
        }
        let Some((rows, parse, flavour)) = answer else { return Err(failures.join("; ")) };
        if rows.len() > MAX_ACCOUNTS {
            tracing::warn!(server = %self.server, rows = rows.len(), "more accounts than the gateway keeps ({MAX_ACCOUNTS}); the rest are ignored");
        }
        let mut by_user: HashMap<String, Vec<ServerAccount>> = HashMap::new();
        for account in rows.iter().take(MAX_ACCOUNTS).filter_map(|r| parse(r, flavour)) {
            by_user.entry(account.user.clone()).or_default().push(account);
        }
        for entries in by_user.values_mut() {
            entries.sort_by_key(|a| std::cmp::Reverse(host::specificity(&a.host)));
        }
        Ok(by_user)
    }
}
