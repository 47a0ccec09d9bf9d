//! Accounts from the servers (`[auth] accounts = "servers"`): the accounts table read through a
//! metadata account, cached, re-read after `refresh_secs`, after a failed password check (at most
//! once a second per user) and for a user name it does not hold (an account just created; a name
//! a fresh read did not know stays unknown for `negative_cache_secs`).
//!
//! A login naming no `[[users]]` entry is checked against the server account whose host pattern
//! matches the client's real address ([`host`]); its stored `mysql_native_password` hash lets
//! the gateway check the client's scramble and then log in to every server with SHA1(password),
//! as for a `password_hash` user. Plugins that need the clear password are refused
//! ([`Proof::Unsupported`]).

pub(crate) mod config;
pub mod entry;
pub mod host;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use mysql_async::OptsBuilder;

pub use config::{AccountSource, AuthConfig};
pub use entry::{Flavour, Proof, ServerAccount};

use crate::metadata::information_schema::{MysqlClient, SqlClient, TextRow};

/// Most accounts kept from one read (more rows are ignored, with a warning).
const MAX_ACCOUNTS: usize = 100_000;
/// A failed password check of one user re-reads the accounts at most this often, so that a
/// client guessing a password costs the metadata server at most one query a second.
const MIN_REREAD: Duration = Duration::from_secs(1);
/// Most user names remembered as unknown or as recently failed (the maps are cleared when full).
const MAX_REMEMBERED: usize = 10_000;

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
    /// When the query was sent: the snapshot holds every change made before.
    asked_at: Instant,
}

impl Snapshot {
    fn find(&self, user: &str, client: IpAddr) -> Option<ServerAccount> {
        self.by_user.get(user)?.iter().find(|a| host::matches(&a.host, client)).cloned()
    }
}

/// User names with the time something was learnt about them (bounded).
#[derive(Default)]
struct Remembered(Mutex<HashMap<String, Instant>>);

impl Remembered {
    /// Whether `user` was remembered less than `within` ago.
    fn recent(&self, user: &str, within: Duration) -> bool {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.get(user).is_some_and(|t| t.elapsed() < within)
    }

    fn remember(&self, user: &str) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= MAX_REMEMBERED {
            map.clear();
        }
        map.insert(user.to_string(), Instant::now());
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
    /// Names a fresh read did not know (the negative cache).
    unknown: Remembered,
    /// Names whose password check failed and made a read.
    failed: Remembered,
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
            unknown: Remembered::default(),
            failed: Remembered::default(),
        })
    }

    /// The account `user` logs in as from `client`, from accounts read within `refresh_secs`.
    /// A user they do not hold is looked up in a fresh read (an account just created), unless a
    /// fresh read did not know the name within `negative_cache_secs`.
    pub async fn find(&self, user: &str, client: IpAddr) -> Result<Option<ServerAccount>, AccountsError> {
        let asked_at = Instant::now();
        let since = asked_at.checked_sub(self.refresh).unwrap_or(asked_at);
        let snapshot = self.snapshot(since).await?;
        if let Some(found) = snapshot.find(user, client) {
            return Ok(Some(found));
        }
        if snapshot.by_user.contains_key(user) || self.unknown.recent(user, self.negative) {
            return Ok(None);
        }
        let found = self.snapshot(asked_at).await?.find(user, client);
        if found.is_none() {
            self.unknown.remember(user);
        }
        Ok(found)
    }

    /// After a failed password check: the account from a fresh read (its password may just
    /// have changed), at most once a second per user; else from the cached accounts. `None`:
    /// it is no longer there.
    pub async fn find_again(&self, user: &str, client: IpAddr) -> Result<Option<ServerAccount>, AccountsError> {
        let asked_at = Instant::now();
        if self.failed.recent(user, MIN_REREAD) {
            let since = asked_at.checked_sub(self.refresh).unwrap_or(asked_at);
            return Ok(self.snapshot(since).await?.find(user, client));
        }
        self.failed.remember(user);
        Ok(self.snapshot(asked_at).await?.find(user, client))
    }

    fn cached(&self, since: Instant) -> Option<Arc<Snapshot>> {
        let current = self.current.read().unwrap_or_else(|p| p.into_inner());
        current.as_ref().filter(|s| s.asked_at >= since).cloned()
    }

    /// Accounts read by a query sent at or after `since`: the cached ones, or a fresh read (one
    /// at a time: a login that waited for another's read uses it when it is recent enough).
    /// When a read fails, the last accounts read stay in use (with a warning).
    async fn snapshot(&self, since: Instant) -> Result<Arc<Snapshot>, AccountsError> {
        if let Some(s) = self.cached(since) {
            return Ok(s);
        }
        let _reading = self.reading.lock().await;
        if let Some(s) = self.cached(since) {
            return Ok(s);
        }
        let asked_at = Instant::now();
        let read = match tokio::time::timeout(self.timeout, self.read()).await {
            Ok(r) => r,
            Err(_) => Err(format!("no answer within {:?}", self.timeout)),
        };
        let mut current = self.current.write().unwrap_or_else(|p| p.into_inner());
        match (read, current.as_ref()) {
            (Ok(by_user), _) => {
                tracing::debug!(server = %self.server, users = by_user.len(), "read the servers' accounts");
                let s = Arc::new(Snapshot { by_user, asked_at });
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
