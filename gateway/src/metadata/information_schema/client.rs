//! The SQL connection a metadata query runs on: a small trait, and its `mysql_async` pool.

use mysql_async::prelude::Queryable;
use mysql_async::{Opts, Pool, Value};

use crate::metadata::{MetaFuture, MetadataError};

/// A result row: each column as text (`None` = SQL NULL).
pub type TextRow = Vec<Option<String>>;

/// Runs text-protocol queries and returns rows as text.
pub trait SqlClient: Send + Sync + 'static {
    /// Runs one statement and returns all rows.
    fn query<'a>(&'a self, sql: &'a str) -> MetaFuture<'a, Vec<TextRow>>;
}

/// A `mysql_async` connection pool to one metadata server.
#[derive(Debug, Clone)]
pub struct MysqlClient {
    pool: Pool,
}

impl MysqlClient {
    /// A pool for `mysql://user:password@host:port/` (connections are opened on first use).
    pub fn from_url(url: &str) -> Result<MysqlClient, MetadataError> {
        let opts = Opts::from_url(url).map_err(|e| MetadataError::Connect(format!("bad URL: {e}")))?;
        Ok(MysqlClient { pool: Pool::new(opts) })
    }

    /// A pool for the given options.
    pub fn new(opts: Opts) -> MysqlClient {
        MysqlClient { pool: Pool::new(opts) }
    }

    /// Closes the pool's connections.
    pub async fn disconnect(self) -> Result<(), MetadataError> {
        self.pool.disconnect().await.map_err(|e| MetadataError::Connect(e.to_string()))
    }

    async fn run(&self, sql: &str) -> Result<Vec<TextRow>, MetadataError> {
        let mut conn = self.pool.get_conn().await.map_err(|e| MetadataError::Connect(e.to_string()))?;
        let rows: Vec<mysql_async::Row> =
            conn.query(sql).await.map_err(|e| MetadataError::Query { sql: sql.to_string(), message: e.to_string() })?;
        Ok(rows.into_iter().map(|r| r.unwrap().into_iter().map(text).collect()).collect())
    }
}

/// A column value as text (the text protocol sends everything but NULL as bytes).
pub(crate) fn text(v: Value) -> Option<String> {
    match v {
        Value::NULL => None,
        Value::Bytes(b) => Some(String::from_utf8_lossy(&b).into_owned()),
        other => Some(other.as_sql(true)),
    }
}

impl SqlClient for MysqlClient {
    fn query<'a>(&'a self, sql: &'a str) -> MetaFuture<'a, Vec<TextRow>> {
        Box::pin(self.run(sql))
    }
}
