//! Helpers around the `mysql_async` driver: connecting by URL, reading rows as comparable values,
//! extracting server error codes.

use mysql_async::prelude::*;
use mysql_async::{Conn, Error, Opts, OptsBuilder, Row, Value};

/// Connects to `url` (`mysql://user:pw@127.0.0.1:port/db`).
///
/// `prefer_socket` is turned off: by default mysql_async asks a loopback server for `@@socket` and
/// silently reconnects over that Unix socket, which would go around the gateway to the backend.
pub async fn connect(url: &str) -> Result<Conn, Error> {
    connect_with(url, |b| b).await
}

/// Connects with options built from `url` and adjusted by `f` (e.g. a LOCAL INFILE handler).
pub async fn connect_with(url: &str, f: impl FnOnce(OptsBuilder) -> OptsBuilder) -> Result<Conn, Error> {
    let b = OptsBuilder::from_opts(Opts::from_url(url)?).prefer_socket(false);
    Conn::new(f(b)).await
}

/// The server error code of `e`, if it is a server error.
pub fn err_code(e: &Error) -> Option<u16> {
    match e {
        Error::Server(s) => Some(s.code),
        _ => None,
    }
}

/// The server error message of `e`, or its display form.
pub fn err_message(e: &Error) -> String {
    match e {
        Error::Server(s) => s.message.clone(),
        other => other.to_string(),
    }
}

/// All rows of `sql` (text protocol) as vectors of raw values.
pub async fn query_values(conn: &mut Conn, sql: &str) -> Result<Vec<Vec<Value>>, Error> {
    let rows: Vec<Row> = conn.query(sql).await?;
    Ok(rows.into_iter().map(Row::unwrap).collect())
}

/// The first column of the first row of `sql`, as a string (`None` for NULL or no row).
pub async fn query_one(conn: &mut Conn, sql: &str) -> Result<Option<String>, Error> {
    let rows = query_values(conn, sql).await?;
    Ok(rows.into_iter().next().and_then(|r| r.into_iter().next()).and_then(value_string))
}

/// A value as text (`None` for NULL); bytes are taken as UTF-8 (lossy).
pub fn value_string(v: Value) -> Option<String> {
    match v {
        Value::NULL => None,
        Value::Bytes(b) => Some(String::from_utf8_lossy(&b).into_owned()),
        other => Some(other.as_sql(true)),
    }
}
