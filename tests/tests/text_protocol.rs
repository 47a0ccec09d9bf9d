//! Text protocol through the gateway: a large result set (> 50 MB, row count and checksum compared
//! with the same query run directly), packets larger than 16 MiB in both directions,
//! multi-statements and multiple result sets (CLIENT_MULTI_STATEMENTS, a procedure returning two
//! result sets via CALL), compared with direct results.
//!
//! One MariaDB (max_allowed_packet 256M) + one gateway (default max_packet_size, 64 MiB).

use std::net::SocketAddr;
use std::sync::OnceLock;

use gateway_tests::mysql::{connect, err_code, query_one};
use gateway_tests::raw::RawConn;
use gateway_tests::stack::{shared, Stack};
use mysql_async::prelude::*;
use mysql_async::{Conn, Row, Value};
use sha1::{Digest, Sha1};

const BIG_ROWS: u64 = 60_000;
const BIG_ROW_BYTES: u64 = 1024;
const BLOB_BYTES: usize = 20 * 1024 * 1024 + 123;

static STACK: OnceLock<Result<Stack, String>> = OnceLock::new();

fn stack() -> &'static Stack {
    shared(&STACK, || {
        Stack::start(
            "text",
            |db| {
                db.sql(&format!(
                    "CREATE TABLE big (id INT PRIMARY KEY, payload VARCHAR(1100) NOT NULL);
                     INSERT INTO big SELECT seq, REPEAT(MD5(seq), {}) FROM seq_1_to_{BIG_ROWS};
                     CREATE TABLE blobs (id INT PRIMARY KEY, b LONGBLOB);
                     CREATE TABLE ms (id INT PRIMARY KEY, v VARCHAR(10));",
                    BIG_ROW_BYTES / 32
                ))?;
                db.sql(
                    "DELIMITER //
                     CREATE PROCEDURE two_sets() BEGIN
                       SELECT 1 AS one, 'first' AS label;
                       SELECT id, v FROM ms ORDER BY id;
                     END //",
                )?;
                Ok(())
            },
            |c| c,
        )
    })
}

async fn gw(s: &Stack) -> Conn {
    connect(&s.gw_url("root", "", Some("test")))
        .await
        .unwrap_or_else(|e| panic!("connect through the gateway: {e:?}\n{}", s.gw_log()))
}

async fn direct(s: &Stack) -> Conn {
    connect(&s.direct_url("root", "", Some("test"))).await.unwrap()
}

/// Streams `sql` and returns (rows, payload bytes, SHA-1 over every value with separators).
async fn stream_digest(conn: &mut Conn, sql: &str) -> (u64, u64, String) {
    let mut result = conn.query_iter(sql).await.unwrap();
    let mut h = Sha1::new();
    let (mut rows, mut bytes) = (0u64, 0u64);
    result
        .for_each(|row: Row| {
            rows += 1;
            for v in row.unwrap() {
                match v {
                    Value::Bytes(b) => {
                        bytes += b.len() as u64;
                        h.update(&b);
                    }
                    Value::NULL => h.update(b"\\N"),
                    other => h.update(other.as_sql(true).as_bytes()),
                }
                h.update([0x1f]);
            }
            h.update([0x1e]);
        })
        .await
        .unwrap();
    (rows, bytes, gateway_tests::hex(&h.finalize()))
}

#[tokio::test]
async fn large_result_set_matches_direct() {
    let s = stack();
    let sql = "SELECT id, payload FROM big ORDER BY id";
    let mut g = gw(s).await;
    let mut d = direct(s).await;
    let through = stream_digest(&mut g, sql).await;
    let straight = stream_digest(&mut d, sql).await;
    assert_eq!(through.0, BIG_ROWS, "row count through the gateway");
    assert!(through.1 >= 50 * 1000 * 1000, "result set too small for the test: {} bytes", through.1);
    assert_eq!(through, straight, "gateway vs direct (rows, bytes, sha1)");
    // The connection is still in sync afterwards.
    assert_eq!(query_one(&mut g, "SELECT 'after-big'").await.unwrap().as_deref(), Some("after-big"));
    g.disconnect().await.unwrap();
    d.disconnect().await.unwrap();
}

#[test]
fn large_result_set_cli_matches_direct() {
    let s = stack();
    let sql = "SELECT id, payload FROM big ORDER BY id";
    let a = s.gw.cli().database("test").sql(sql).unwrap_or_else(|e| panic!("{e:#}\n{}", s.gw_log()));
    let b = s.db.cli().database("test").sql(sql).unwrap();
    assert_eq!(a.lines().count() as u64, BIG_ROWS);
    assert_eq!(gateway_tests::sha1_hex(a.as_bytes()), gateway_tests::sha1_hex(b.as_bytes()));
}

fn blob(seed: u32) -> Vec<u8> {
    let mut x = seed;
    (0..BLOB_BYTES)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (x >> 16) as u8
        })
        .collect()
}

#[tokio::test]
async fn packets_over_16mib_both_ways() {
    let s = stack();
    let mut g = gw(s).await;
    // Client -> server, text protocol: a 40 MiB COM_QUERY (hex literal), three 16 MiB frames.
    let a = blob(1);
    let sql = format!("INSERT INTO blobs VALUES (1, X'{}')", gateway_tests::hex(&a));
    assert!(sql.len() > 32 * 1024 * 1024);
    g.query_drop(&sql).await.unwrap_or_else(|e| panic!("40 MiB INSERT: {e:?}\n{}", s.gw_log()));
    // Client -> server, binary protocol: a 20 MiB COM_STMT_EXECUTE.
    let b = blob(2);
    g.exec_drop("INSERT INTO blobs VALUES (?, ?)", (2, b.clone()))
        .await
        .unwrap_or_else(|e| panic!("20 MiB execute: {e:?}\n{}", s.gw_log()));
    // What the server stored is exactly what was sent.
    let stored = s.db.sql("SELECT id, LENGTH(b), SHA1(b) FROM blobs ORDER BY id").unwrap();
    let expect =
        format!("1\t{}\t{}\n2\t{}\t{}\n", a.len(), gateway_tests::sha1_hex(&a), b.len(), gateway_tests::sha1_hex(&b));
    assert_eq!(stored, expect);
    // Server -> client: 20 MiB rows (two frames each), text and binary protocol.
    let back: Option<Vec<u8>> = g.query_first("SELECT b FROM blobs WHERE id = 1").await.unwrap();
    assert!(back.as_deref() == Some(&a[..]), "text SELECT of blob 1 differs");
    let back: Option<Vec<u8>> = g.exec_first("SELECT b FROM blobs WHERE id = ?", (2,)).await.unwrap();
    assert!(back.as_deref() == Some(&b[..]), "binary SELECT of blob 2 differs");
    // Both rows in one result set (> 40 MiB), then the connection is still in sync.
    let rows: Vec<(i32, Vec<u8>)> = g.query("SELECT id, b FROM blobs ORDER BY id").await.unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows[0].1 == a && rows[1].1 == b);
    assert_eq!(query_one(&mut g, "SELECT 7").await.unwrap().as_deref(), Some("7"));
    g.query_drop("DELETE FROM blobs").await.unwrap();
    g.disconnect().await.unwrap();
}

/// Every result set of `sql`: (column names, rows) or the error code that ended the sequence.
async fn result_sets(conn: &mut Conn, sql: &str) -> Vec<Result<(Vec<String>, Vec<Vec<Value>>, u64), u16>> {
    let mut out = Vec::new();
    let mut r = match conn.query_iter(sql).await {
        Ok(r) => r,
        Err(e) => return vec![Err(err_code(&e).unwrap_or(0))],
    };
    while !r.is_empty() {
        let cols: Vec<String> =
            r.columns().map(|c| c.iter().map(|c| c.name_str().into_owned()).collect()).unwrap_or_default();
        match r.collect::<Row>().await {
            Ok(rows) => out.push(Ok((cols, rows.into_iter().map(Row::unwrap).collect(), r.affected_rows()))),
            Err(e) => {
                out.push(Err(err_code(&e).unwrap_or(0)));
                break;
            }
        }
    }
    out
}

#[tokio::test]
async fn multi_statements_and_procedure_results_match_direct() {
    let s = stack();
    let mut g = gw(s).await;
    let mut d = direct(s).await;
    g.query_drop("DELETE FROM ms; INSERT INTO ms VALUES (1, 'a'), (2, 'b')").await.unwrap();
    for sql in [
        "SELECT 1 AS a; SELECT 2 AS b, 'x' AS c; UPDATE ms SET v = v WHERE id = 1; SELECT id, v FROM ms ORDER BY id",
        "CALL two_sets()",
        "SELECT 'before'; CALL two_sets(); SELECT 'after'",
        "SELECT 1; SELECT * FROM no_such_table; SELECT 3",
    ] {
        let a = result_sets(&mut g, sql).await;
        let b = result_sets(&mut d, sql).await;
        assert_eq!(a, b, "result sets of {sql:?}: gateway vs direct");
        // The connection is in sync after each batch. (After an error inside a batch mysql_async may
        // report it once more on the next query; whatever it does, it must do the same direct.)
        let a = query_one(&mut g, "SELECT 'sync'").await.map_err(|e| err_code(&e));
        let b = query_one(&mut d, "SELECT 'sync'").await.map_err(|e| err_code(&e));
        assert_eq!(a, b, "first query after {sql:?}");
        assert_eq!(query_one(&mut g, "SELECT 'sync2'").await.unwrap().as_deref(), Some("sync2"), "after {sql:?}");
    }
    let two = result_sets(&mut g, "CALL two_sets()").await;
    assert_eq!(
        two.iter().filter(|r| matches!(r, Ok((c, _, _)) if !c.is_empty())).count(),
        2,
        "CALL must return two result sets: {two:?}"
    );
    g.disconnect().await.unwrap();
    d.disconnect().await.unwrap();
}

#[test]
fn multi_statements_cli_matches_direct() {
    let s = stack();
    let sql = "SELECT 1; SELECT 'two', 2; CALL two_sets(); SELECT @@max_allowed_packet";
    let a = s.gw.cli().database("test").sql(sql).unwrap_or_else(|e| panic!("{e:#}\n{}", s.gw_log()));
    let b = s.db.cli().database("test").sql(sql).unwrap();
    assert_eq!(a, b);
}

/// The raw packets of a multi-result response are identical through the gateway and direct.
#[test]
fn multi_result_packets_identical_to_direct() {
    let s = stack();
    let packets = |addr: SocketAddr| {
        let mut c =
            RawConn::login(addr, "root", "", Some("test")).unwrap_or_else(|e| panic!("raw login to {addr}: {e:#}"));
        c.query("SELECT 1 AS one; CALL two_sets(); SELECT NULL, 'x', 3.5").unwrap()
    };
    let a = packets(s.gw.addr());
    let b = packets(s.db.addr());
    assert_eq!(a, b);
}
