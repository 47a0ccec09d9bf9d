//! Runs the per-client lists against one endpoint, clients concurrently, each on its own
//! connection, and records every outcome (all result sets, or the error).

use mysql_async::prelude::*;
use mysql_async::{Conn, Params, QueryResult, Row, Value};

use super::{Item, Stmt};
use crate::mysql::{connect, value_string};

/// One result set: its rows as text (`None` = NULL), or the affected-row count of an OK.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultSet {
    pub rows: Vec<Vec<Option<String>>>,
    pub affected: u64,
}

/// What a request returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every result set, in order.
    Ok(Vec<ResultSet>),
    /// Server error code (0 for a client-side / I/O error) and message.
    Err(u16, String),
}

impl Outcome {
    /// Whether the request failed.
    pub fn is_err(&self) -> bool {
        matches!(self, Outcome::Err(..))
    }
}

async fn collect_sets<P: mysql_async::prelude::Protocol>(
    mut r: QueryResult<'_, 'static, P>,
) -> Result<Vec<ResultSet>, mysql_async::Error> {
    let mut sets = Vec::new();
    loop {
        let has_columns = !r.columns_ref().is_empty();
        let affected = if has_columns { 0 } else { r.affected_rows() };
        let rows: Vec<Row> = r.collect().await?;
        let rows = rows.into_iter().map(|row| row.unwrap().into_iter().map(value_string).collect()).collect();
        sets.push(ResultSet { rows, affected });
        if r.is_empty() {
            break;
        }
    }
    Ok(sets)
}

/// Sends one request and records its outcome.
pub async fn run_item(conn: &mut Conn, item: &Item) -> Outcome {
    let res = match &item.stmt {
        Stmt::Text(sql) => match conn.query_iter(sql.as_str()).await {
            Ok(r) => collect_sets(r).await,
            Err(e) => Err(e),
        },
        Stmt::Prepared { sql, params } => {
            let params = Params::Positional(params.iter().map(|v| Value::Int(*v)).collect());
            match conn.exec_iter(sql.as_str(), params).await {
                Ok(r) => collect_sets(r).await,
                Err(e) => Err(e),
            }
        }
    };
    match res {
        Ok(sets) => Outcome::Ok(sets),
        Err(e) => Outcome::Err(crate::mysql::err_code(&e).unwrap_or(0), crate::mysql::err_message(&e)),
    }
}

/// Runs one client's list on a new connection to `url`; stops at a connection-level error
/// (client-side error code 0), recording it for the rest.
pub async fn run_client(url: String, items: Vec<Item>) -> anyhow::Result<Vec<Outcome>> {
    let mut conn = connect(&url).await?;
    let mut out = Vec::with_capacity(items.len());
    for item in &items {
        let o = run_item(&mut conn, item).await;
        let broken = matches!(&o, Outcome::Err(0, _));
        out.push(o);
        if broken {
            break;
        }
    }
    conn.disconnect().await.ok();
    Ok(out)
}

/// Runs every client's list concurrently against `url`; outcomes per client, in list order.
pub async fn run_clients(url: &str, lists: &[Vec<Item>]) -> anyhow::Result<Vec<Vec<Outcome>>> {
    let tasks: Vec<_> = lists.iter().map(|items| tokio::spawn(run_client(url.to_string(), items.clone()))).collect();
    let mut out = Vec::with_capacity(tasks.len());
    for t in tasks {
        out.push(t.await??);
    }
    Ok(out)
}
