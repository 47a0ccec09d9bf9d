//! The sys-tenant connection of one cluster: tries the rslist servers, then every server the cluster model lists, until one answers.
//!
//! The sys tenant has a unit on every server (docs/routing.md §12), so any server of
//! `DBA_OB_SERVERS` can answer the metadata queries. The server that answered last is asked
//! first next time; a server that cannot be reached (connect error, lost connection, connect
//! timeout) is skipped for that query, while an SQL error from a server that answered is the
//! query's answer (another server would say the same). The connections use the cluster's
//! server-leg TLS ([`ssl_opts`]).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use mysql_async::prelude::Queryable;
use mysql_async::{OptsBuilder, Pool, PoolConstraints, PoolOpts, SslOpts};

use crate::metadata::information_schema::client::text;
use crate::metadata::information_schema::{SqlClient, TextRow};
use crate::metadata::{MetaFuture, MetadataError};
use crate::tls::{BackendTls, ServerTlsMode};

/// Most pooled metadata connections per server.
const MAX_CONNS_PER_SERVER: usize = 2;

/// The sys-tenant client of one cluster (cheap to clone; clones share servers and pools).
#[derive(Clone)]
pub struct SysClient {
    inner: Arc<Inner>,
}

/// How the sys-tenant connections log in.
#[derive(Clone)]
pub struct Login {
    /// The sys user, sent verbatim (`proxyro@sys`).
    pub user: String,
    /// Its password.
    pub password: String,
    /// TLS of the connections ([`ssl_opts`]); `None`: plain TCP.
    pub ssl: Option<SslOpts>,
}

/// The sys-tenant TLS of a cluster's server-leg mode: `required` encrypts without checking the
/// certificate, `verify_ca` checks the chain against `ca`, `verify_identity` also the name
/// (`server_name`, else the server's address). `off` and `preferred` stay plain (mysql_async
/// cannot fall back to plain TCP when a server offers no TLS).
pub fn ssl_opts(tls: &BackendTls) -> Option<SslOpts> {
    let verify = |ca: &Option<std::path::PathBuf>| {
        let roots = ca.iter().map(|p| p.clone().into()).collect();
        SslOpts::default().with_root_certs(roots).with_disable_built_in_roots(true)
    };
    match tls.mode {
        ServerTlsMode::Off | ServerTlsMode::Preferred => None,
        ServerTlsMode::Required => {
            Some(SslOpts::default().with_danger_accept_invalid_certs(true).with_danger_skip_domain_validation(true))
        }
        ServerTlsMode::VerifyCa => Some(verify(&tls.ca).with_danger_skip_domain_validation(true)),
        ServerTlsMode::VerifyIdentity => {
            let opts = verify(&tls.ca);
            Some(match &tls.server_name {
                Some(name) => opts.with_danger_tls_hostname_override(Some(name.clone())),
                None => opts,
            })
        }
    }
}

impl std::fmt::Debug for Login {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Login").field("user", &self.user).field("tls", &self.ssl.is_some()).finish_non_exhaustive()
    }
}

struct Inner {
    cluster: String,
    login: Login,
    connect_timeout: Duration,
    /// The rslist (configured, or the config server's latest answer).
    rslist: RwLock<Vec<SocketAddr>>,
    /// The servers of the last cluster model read.
    learnt: RwLock<Vec<SocketAddr>>,
    /// The server that answered last.
    preferred: Mutex<Option<SocketAddr>>,
    pools: Mutex<HashMap<SocketAddr, Pool>>,
}

impl std::fmt::Debug for SysClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SysClient").field("cluster", &self.inner.cluster).field("servers", &self.servers()).finish()
    }
}

impl SysClient {
    /// A client for `cluster` logging in as `user` to the servers of `rslist` first; a connect
    /// attempt taking longer than `connect_timeout` moves on to the next server.
    pub fn new(cluster: &str, rslist: Vec<SocketAddr>, login: Login, connect_timeout: Duration) -> SysClient {
        let inner = Inner {
            cluster: cluster.to_string(),
            login,
            connect_timeout,
            rslist: RwLock::new(rslist),
            learnt: RwLock::new(Vec::new()),
            preferred: Mutex::new(None),
            pools: Mutex::new(HashMap::new()),
        };
        SysClient { inner: Arc::new(inner) }
    }

    /// Replaces the rslist (a config server's new answer).
    pub fn set_rslist(&self, rslist: Vec<SocketAddr>) {
        *self.inner.rslist.write().unwrap_or_else(|p| p.into_inner()) = rslist;
    }

    /// The current rslist.
    pub fn rslist(&self) -> Vec<SocketAddr> {
        self.inner.rslist.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Remembers the servers of a freshly read cluster model as further sys-tenant servers.
    pub fn learn_servers(&self, servers: Vec<SocketAddr>) {
        *self.inner.learnt.write().unwrap_or_else(|p| p.into_inner()) = servers;
    }

    /// The servers in the order a query tries them: the last one that answered, the rslist,
    /// then the learnt servers, without duplicates.
    pub fn servers(&self) -> Vec<SocketAddr> {
        let preferred = *self.inner.preferred.lock().unwrap_or_else(|p| p.into_inner());
        let rslist = self.rslist();
        let learnt = self.inner.learnt.read().unwrap_or_else(|p| p.into_inner()).clone();
        let mut out: Vec<SocketAddr> = Vec::with_capacity(rslist.len() + learnt.len() + 1);
        for a in preferred.into_iter().chain(rslist).chain(learnt) {
            if !out.contains(&a) {
                out.push(a);
            }
        }
        out
    }

    fn pool(&self, server: SocketAddr) -> Pool {
        let mut pools = self.inner.pools.lock().unwrap_or_else(|p| p.into_inner());
        pools
            .entry(server)
            .or_insert_with(|| {
                let constraints = PoolConstraints::new(0, MAX_CONNS_PER_SERVER).unwrap_or_default();
                let opts = OptsBuilder::default()
                    .ip_or_hostname(server.ip().to_string())
                    .tcp_port(server.port())
                    .user(Some(self.inner.login.user.clone()))
                    .pass(Some(self.inner.login.password.clone()))
                    .ssl_opts(self.inner.login.ssl.clone())
                    .prefer_socket(false)
                    .pool_opts(PoolOpts::default().with_constraints(constraints));
                Pool::new(opts)
            })
            .clone()
    }

    async fn run(&self, sql: &str) -> Result<Vec<TextRow>, MetadataError> {
        let servers = self.servers();
        let mut failures = Vec::new();
        for server in servers {
            match self.run_on(server, sql).await {
                Ok(rows) => {
                    *self.inner.preferred.lock().unwrap_or_else(|p| p.into_inner()) = Some(server);
                    return Ok(rows);
                }
                Err(Attempt::Answered(e)) => return Err(e),
                Err(Attempt::Unreachable(why)) => {
                    tracing::warn!(cluster = %self.inner.cluster, %server, error = %why, "sys tenant server unreachable; trying the next");
                    self.inner.pools.lock().unwrap_or_else(|p| p.into_inner()).remove(&server);
                    failures.push(format!("{server}: {why}"));
                }
            }
        }
        if failures.is_empty() {
            failures.push("no server known".into());
        }
        Err(MetadataError::Connect(format!(
            "cluster {}: no sys tenant server answered ({})",
            self.inner.cluster,
            failures.join("; ")
        )))
    }

    async fn run_on(&self, server: SocketAddr, sql: &str) -> Result<Vec<TextRow>, Attempt> {
        let pool = self.pool(server);
        let mut conn = match tokio::time::timeout(self.inner.connect_timeout, pool.get_conn()).await {
            Err(_) => {
                return Err(Attempt::Unreachable(format!("connect timed out after {:?}", self.inner.connect_timeout)))
            }
            Ok(Err(mysql_async::Error::Server(e))) => {
                // A refused login is the cluster's answer (wrong sys user or password).
                return Err(Attempt::Answered(MetadataError::Connect(format!(
                    "{server} refused the sys tenant login: {e}"
                ))));
            }
            Ok(Err(e)) => return Err(Attempt::Unreachable(e.to_string())),
            Ok(Ok(c)) => c,
        };
        match conn.query::<mysql_async::Row, _>(sql).await {
            Ok(rows) => Ok(rows.into_iter().map(|r| r.unwrap().into_iter().map(text).collect()).collect()),
            Err(mysql_async::Error::Server(e)) => {
                Err(Attempt::Answered(MetadataError::Query { sql: sql.to_string(), message: e.to_string() }))
            }
            Err(e) => Err(Attempt::Unreachable(e.to_string())),
        }
    }
}

/// Why a query on one server did not give rows.
enum Attempt {
    /// The server answered with an error: the query's result.
    Answered(MetadataError),
    /// The server could not be used: try the next.
    Unreachable(String),
}

impl SqlClient for SysClient {
    fn query<'a>(&'a self, sql: &'a str) -> MetaFuture<'a, Vec<TextRow>> {
        Box::pin(self.run(sql))
    }
}
