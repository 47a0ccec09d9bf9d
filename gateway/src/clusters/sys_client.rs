//! The sys-tenant connection of one cluster: tries the rslist servers, then every server the cluster model lists, until one answers.
//!
//! The sys tenant has a unit on every server (metadata.md §3.1), so any server of
//! `DBA_OB_SERVERS` can answer the metadata queries. The server that answered last is asked
//! first next time; a server that cannot be reached (connect error, lost connection, connect
//! timeout) is skipped for that query, while an SQL error from a server that answered is the
//! query's answer (another server would say the same).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use mysql_async::prelude::Queryable;
use mysql_async::{OptsBuilder, Pool, PoolConstraints, PoolOpts};

use crate::metadata::information_schema::client::text;
use crate::metadata::information_schema::{SqlClient, TextRow};
use crate::metadata::{MetaFuture, MetadataError};

/// Most pooled metadata connections per server.
const MAX_CONNS_PER_SERVER: usize = 2;

/// The sys-tenant client of one cluster (cheap to clone; clones share servers and pools).
#[derive(Clone)]
pub struct SysClient {
    inner: Arc<Inner>,
}

struct Inner {
    cluster: String,
    user: String,
    password: String,
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
    pub fn new(cluster: &str, rslist: Vec<SocketAddr>, user: &str, password: &str, connect_timeout: Duration) -> SysClient {
        let inner = Inner {
            cluster: cluster.to_string(),
            user: user.to_string(),
            password: password.to_string(),
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
                    .user(Some(self.inner.user.clone()))
                    .pass(Some(self.inner.password.clone()))
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
        Err(MetadataError::Connect(format!("cluster {}: no sys tenant server answered ({})", self.inner.cluster, failures.join("; "))))
    }

    async fn run_on(&self, server: SocketAddr, sql: &str) -> Result<Vec<TextRow>, Attempt> {
        let pool = self.pool(server);
        let mut conn = match tokio::time::timeout(self.inner.connect_timeout, pool.get_conn()).await {
            Err(_) => return Err(Attempt::Unreachable(format!("connect timed out after {:?}", self.inner.connect_timeout))),
            Ok(Err(mysql_async::Error::Server(e))) => {
                // A refused login is the cluster's answer (wrong sys user or password).
                return Err(Attempt::Answered(MetadataError::Connect(format!("{server} refused the sys tenant login: {e}"))));
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
