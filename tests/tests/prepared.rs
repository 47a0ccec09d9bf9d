//! Prepared statements through the gateway (binary protocol).
//!
//! * mysql_async: a row of every column type written with typed parameters through the gateway and
//!   directly (twin tables compared on the server), read back with the binary protocol and compared.
//! * the raw client (src/raw.rs): every parameter *wire* type (TINY/SHORT/LONG/LONGLONG signed and
//!   unsigned, FLOAT, DOUBLE, NEWDECIMAL, VAR_STRING, STRING, BLOB, DATE, DATETIME, TIME, NULL) —
//!   real drivers send only LONGLONG for integers; read-only cursors with COM_STMT_FETCH and
//!   COM_STMT_SEND_LONG_DATA, which neither mysql_async nor PyMySQL send. Responses are compared
//!   packet for packet with the same commands sent directly (statement ids masked).

use std::net::SocketAddr;
use std::sync::OnceLock;

use gateway_tests::mysql::{connect, err_code};
use gateway_tests::raw::{self, Param, RawConn};
use gateway_tests::stack::{shared, Stack};
use gateway_tests::{Gateway, GatewayConfig};
use mysql_async::prelude::*;
use mysql_async::{Conn, Row, Value};

static STACK: OnceLock<Result<Stack, String>> = OnceLock::new();

const TYPES_DDL: &str = "(id INT PRIMARY KEY, ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED, \
     mi MEDIUMINT, miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED, \
     f FLOAT, d DOUBLE, de DECIMAL(30,10), vc VARCHAR(100), ch CHAR(5), tx TEXT, bl BLOB, \
     dt DATE, dtm DATETIME(6), tm TIME(6), yr YEAR, n INT NULL) DEFAULT CHARSET=utf8mb4";

fn stack() -> &'static Stack {
    shared(&STACK, || {
        Stack::start(
            "prepared",
            |db| {
                db.sql(&format!(
                    "CREATE TABLE types_gw {TYPES_DDL}; CREATE TABLE types_direct {TYPES_DDL};
                     CREATE TABLE raw_gw {TYPES_DDL}; CREATE TABLE raw_direct {TYPES_DDL};
                     CREATE TABLE cur (id INT PRIMARY KEY, payload VARCHAR(200));
                     INSERT INTO cur SELECT seq, REPEAT(CHAR(65 + seq % 26), seq % 200) FROM seq_1_to_1000;
                     CREATE TABLE ld (id INT PRIMARY KEY, b LONGBLOB)"
                ))?;
                Ok(())
            },
            |c| c,
        )
    })
}

static ROUTED: OnceLock<Result<Gateway, String>> = OnceLock::new();

/// A second gateway in front of the same server in routed mode (per-statement routing, pooled
/// server connections, gateway statement ids), with a one-server topology.
fn routed(s: &Stack) -> SocketAddr {
    let gw = ROUTED.get_or_init(|| {
        let start = || -> anyhow::Result<Gateway> {
            let dir = gateway_tests::scratch_dir("prepared-routed")?;
            let topology = dir.join("topology.toml");
            std::fs::write(
                &topology,
                format!(
                    "cluster = \"one\"\n[[zones]]\nname = \"z1\"\nregion = \"r\"\nidc = \"idc1\"\ntype = \"ReadWrite\"\n\
                     [[servers]]\nname = \"s1\"\naddr = \"{}\"\nzone = \"z1\"\n\
                     [[tenants]]\nname = \"sys\"\nid = 1\nprimary_zone = \"z1\"\n",
                    s.db.addr()
                ),
            )?;
            let mut toml = GatewayConfig::new(s.db.addr())?.to_toml();
            toml.push_str(&format!("\n[routing]\ntopology = \"{}\"\nidc = \"idc1\"\nseed = 3\n", topology.display()));
            Gateway::start(&toml)
        };
        start().map_err(|e| format!("{e:#}"))
    });
    match gw {
        Ok(g) => g.addr(),
        Err(e) => panic!("routed gateway did not start: {e}"),
    }
}

async fn gw(s: &Stack) -> Conn {
    connect(&s.gw_url("root", "", Some("test")))
        .await
        .unwrap_or_else(|e| panic!("connect through the gateway: {e:?}\n{}", s.gw_log()))
}

async fn direct(s: &Stack) -> Conn {
    connect(&s.direct_url("root", "", Some("test"))).await.unwrap()
}

fn dt(y: u16, mo: u8, d: u8, h: u8, mi: u8, s: u8, us: u32) -> Value {
    Value::Date(y, mo, d, h, mi, s, us)
}

/// Rows of typed values: extremes, ordinary values, and all NULL.
fn typed_rows() -> Vec<Vec<Value>> {
    use Value::*;
    let b = |s: &str| Bytes(s.as_bytes().to_vec());
    vec![
        vec![
            Int(1),
            Int(-128),
            UInt(255),
            Int(-32768),
            UInt(65535),
            Int(-8388608),
            UInt(16777215),
            Int(i32::MIN as i64),
            UInt(u32::MAX as u64),
            Int(i64::MIN),
            UInt(u64::MAX),
            Float(-3.4e38),
            Double(-1.7976931348623157e308),
            b("-99999999999999999999.9999999999"),
            b("héllo wörld ✓"),
            b("abc"),
            b(&"long text ".repeat(500)),
            Bytes((0..=255u8).collect()),
            dt(1000, 1, 1, 0, 0, 0, 0),
            dt(1000, 1, 1, 0, 0, 0, 0),
            Time(true, 34, 22, 59, 59, 0),
            Int(1901),
            NULL,
        ],
        vec![
            Int(2),
            Int(127),
            UInt(0),
            Int(32767),
            UInt(0),
            Int(8388607),
            UInt(0),
            Int(i32::MAX as i64),
            UInt(0),
            Int(i64::MAX),
            UInt(0),
            Float(1.25),
            Double(std::f64::consts::PI),
            b("12345.6789000001"),
            b(""),
            b("x"),
            b("t"),
            Bytes(vec![0, 0, 0xff]),
            dt(9999, 12, 31, 0, 0, 0, 0),
            dt(2024, 2, 29, 23, 59, 58, 999_999),
            Time(false, 0, 12, 34, 56, 789_012),
            Int(2155),
            Int(7),
        ],
        {
            let mut r = vec![Int(3)];
            r.extend(std::iter::repeat_n(NULL, 22));
            r
        },
    ]
}

const INSERT: &str = "INSERT INTO {t} VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

#[tokio::test]
async fn every_column_type_mysql_async_matches_direct() {
    let s = stack();
    let mut g = gw(s).await;
    let mut d = direct(s).await;
    for row in typed_rows() {
        g.exec_drop(INSERT.replace("{t}", "types_gw"), row.clone())
            .await
            .unwrap_or_else(|e| panic!("execute through the gateway: {e:?}\n{}", s.gw_log()));
        d.exec_drop(INSERT.replace("{t}", "types_direct"), row).await.unwrap();
    }
    // What the server stored is the same either way (checked on the server, text protocol).
    let a = s.db.sql("SELECT * FROM types_gw ORDER BY id").unwrap();
    let b = s.db.sql("SELECT * FROM types_direct ORDER BY id").unwrap();
    assert_eq!(a.lines().count(), 3);
    assert_eq!(a, b, "rows written with typed parameters through the gateway vs direct");
    // Read back with the binary protocol, with parameters in the WHERE clause.
    let q = "SELECT * FROM types_direct WHERE id >= ? AND (ti = ? OR ti IS NULL OR ti > ?) ORDER BY id";
    let params = (Value::Int(1), Value::Int(-128), Value::Int(0));
    let ra: Vec<Row> = g.exec(q, params.clone()).await.unwrap();
    let rb: Vec<Row> = d.exec(q, params).await.unwrap();
    let ra: Vec<Vec<Value>> = ra.into_iter().map(Row::unwrap).collect();
    let rb: Vec<Vec<Value>> = rb.into_iter().map(Row::unwrap).collect();
    assert_eq!(ra.len(), 3);
    assert_eq!(ra, rb, "binary result rows through the gateway vs direct");
    // Many statements on one connection, executed interleaved (statement ids must not mix up).
    let s1 = g.prep("SELECT ? + 1").await.unwrap();
    let s2 = g.prep("SELECT CONCAT(?, '!')").await.unwrap();
    for k in 0..20i64 {
        let x: Option<i64> = g.exec_first(&s1, (k,)).await.unwrap();
        let y: Option<String> = g.exec_first(&s2, (format!("v{k}"),)).await.unwrap();
        assert_eq!((x, y), (Some(k + 1), Some(format!("v{k}!"))));
    }
    g.close(s1).await.unwrap();
    g.close(s2).await.unwrap();
    g.disconnect().await.unwrap();
    d.disconnect().await.unwrap();
}

#[tokio::test]
async fn prepare_errors_match_direct() {
    let s = stack();
    let mut g = gw(s).await;
    let mut d = direct(s).await;
    for sql in ["SELECT * FROM no_such_table WHERE id = ?", "SELEC ?", "SELECT ? FROM cur WHERE"] {
        let a = g.prep(sql).await.err().map(|e| err_code(&e));
        let b = d.prep(sql).await.err().map(|e| err_code(&e));
        assert_eq!(a, b, "{sql}");
        assert!(a.is_some(), "{sql} must fail");
    }
    let n: Option<i64> = g.exec_first("SELECT COUNT(*) FROM cur WHERE id <= ?", (10,)).await.unwrap();
    assert_eq!(n, Some(10));
    g.disconnect().await.unwrap();
    d.disconnect().await.unwrap();
}

/// Masks the statement id in a COM_STMT_PREPARE OK packet.
fn mask_stmt_id(mut packets: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    if let Some(p) = packets.first_mut() {
        if p.len() >= 5 && p[0] == 0 {
            p[1..5].fill(0);
        }
    }
    packets
}

fn raw_login(addr: SocketAddr) -> RawConn {
    RawConn::login(addr, "root", "", Some("test")).unwrap_or_else(|e| panic!("raw login to {addr}: {e:#}"))
}

fn wire_params(id: i32) -> Vec<Param> {
    vec![
        Param::long(id),
        Param::tiny(-128),
        Param::utiny(255),
        Param::short(-32768),
        Param::ushort(65535),
        Param::long(-8_388_608),
        Param::ulong(16_777_215),
        Param::long(i32::MIN),
        Param::ulong(u32::MAX),
        Param::longlong(i64::MIN),
        Param::ulonglong(u64::MAX),
        Param::float(-1.5),
        Param::double(2.5e-300),
        Param::decimal("-12345678901234567890.0123456789"),
        Param::string("vär"),
        Param::fixed_string("fix"),
        Param::blob(b"text as blob"),
        Param::blob(&[0, 1, 2, 0xfe, 0xff]),
        Param::date(2024, 2, 29),
        Param::datetime(2001, 2, 3, 4, 5, 6, 7),
        Param::time(true, 1, 2, 3, 4, 5),
        Param::short(2000),
        Param::null(),
    ]
}

#[test]
fn every_wire_parameter_type_raw_matches_direct() {
    let s = stack();
    let run = |addr: SocketAddr, table: &str, id: i32| {
        let mut c = raw_login(addr);
        let p = c.prepare(&INSERT.replace("{t}", table)).unwrap();
        assert_eq!(p.params, 23);
        let ins = c.execute(p.id, 0, &wire_params(id)).unwrap();
        // Echo every parameter back in a binary result row.
        let e = c.prepare(&format!("SELECT {}", vec!["?"; 23].join(", "))).unwrap();
        let echo = c.execute(e.id, 0, &wire_params(id)).unwrap();
        c.close_stmt(p.id).unwrap();
        c.close_stmt(e.id).unwrap();
        // A closed statement is gone: 1243.
        let gone = c.execute(p.id, 0, &wire_params(id)).unwrap();
        (mask_stmt_id(p.packets), ins, mask_stmt_id(e.packets), echo, gone)
    };
    let a = run(s.gw.addr(), "raw_gw", 1);
    let b = run(s.db.addr(), "raw_direct", 1);
    assert_eq!(a.0, b.0, "COM_STMT_PREPARE response (INSERT)");
    assert_eq!(a.1, b.1, "COM_STMT_EXECUTE response (INSERT)");
    assert_eq!(a.2, b.2, "COM_STMT_PREPARE response (SELECT ?...)");
    assert_eq!(a.3, b.3, "COM_STMT_EXECUTE response (echoed parameters)");
    assert_eq!(
        raw::parse_err(&a.4[0]).map(|e| e.code),
        Some(1243),
        "execute after close: {:?}",
        raw::parse_err(&a.4[0])
    );
    let x = s.db.sql("SELECT * FROM raw_gw").unwrap();
    let y = s.db.sql("SELECT * FROM raw_direct").unwrap();
    assert!(!x.is_empty());
    assert_eq!(x, y, "rows stored from raw typed parameters: gateway vs direct");
}

#[test]
fn cursor_fetch_matches_direct() {
    let s = stack();
    let run = |addr: SocketAddr| {
        let mut c = raw_login(addr);
        let p = c.prepare("SELECT id, payload FROM cur WHERE id > ? ORDER BY id").unwrap();
        let head = c.execute(p.id, 1, &[Param::long(10)]).unwrap();
        let last = head.last().cloned().unwrap_or_default();
        assert!(
            raw::eof_status(&last) & raw::status::CURSOR_EXISTS != 0,
            "execute with a read-only cursor must open a cursor on {addr}"
        );
        let mut fetched = Vec::new();
        let mut rows = 0;
        for _ in 0..100 {
            let batch = c.fetch(p.id, 97).unwrap();
            let end = batch.last().cloned().unwrap_or_default();
            assert!(raw::parse_err(&end).is_none(), "fetch error {:?}", raw::parse_err(&end));
            rows += batch.len() - 1;
            fetched.extend(batch);
            if raw::eof_status(&end) & raw::status::LAST_ROW_SENT != 0 {
                break;
            }
        }
        // The connection is usable after the cursor is exhausted.
        let after = c.query("SELECT 'after cursor'").unwrap();
        c.close_stmt(p.id).unwrap();
        (mask_stmt_id(p.packets), head, fetched, rows, after)
    };
    let a = run(s.gw.addr());
    let b = run(s.db.addr());
    let c = run(routed(s));
    assert_eq!(a.3, 990, "rows fetched through the gateway");
    assert_eq!(a, b, "cursor responses through the gateway vs direct");
    assert_eq!(c, b, "cursor responses through the routed gateway vs direct");
}

#[test]
fn send_long_data_matches_direct() {
    let s = stack();
    let chunk: Vec<u8> = (0..1_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let run = |addr: SocketAddr, id: i32| {
        let mut c = raw_login(addr);
        let p = c.prepare("INSERT INTO ld VALUES (?, ?)").unwrap();
        for _ in 0..3 {
            c.send_long_data(p.id, 1, &chunk).unwrap();
        }
        let r = c.execute(p.id, 0, &[Param::long(id), Param::long_data(raw::ty::BLOB)]).unwrap();
        c.close_stmt(p.id).unwrap();
        r
    };
    let a = run(s.gw.addr(), 1);
    let b = run(s.db.addr(), 2);
    let c = run(routed(s), 3);
    assert_eq!(a, b, "execute response after long data");
    assert_eq!(c, b, "execute response after long data, routed gateway");
    let mut whole = chunk.clone();
    whole.extend_from_slice(&chunk);
    whole.extend_from_slice(&chunk);
    let sha = gateway_tests::sha1_hex(&whole);
    let stored = s.db.sql("SELECT id, LENGTH(b), SHA1(b) FROM ld ORDER BY id").unwrap();
    let n = whole.len();
    assert_eq!(stored, format!("1\t{n}\t{sha}\n2\t{n}\t{sha}\n3\t{n}\t{sha}\n"));
}
