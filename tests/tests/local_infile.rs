//! LOAD DATA LOCAL INFILE through the gateway with three clients (mariadb CLI `--local-infile=1`,
//! PyMySQL `local_infile=True`, mysql_async with a white-list handler); the loaded tables are
//! compared with the same file loaded directly (CHECKSUM TABLE, counts). Also: a missing file and a
//! client that did not enable LOCAL INFILE behave as they do direct.

use std::path::PathBuf;
use std::sync::OnceLock;

use gateway_tests::clients::{parse_kv, python};
use gateway_tests::mysql::{connect_with, query_one};
use gateway_tests::stack::{shared, Stack};
use mysql_async::prelude::*;

const ROWS: u64 = 200_000;

static STACK: OnceLock<Result<Stack, String>> = OnceLock::new();
static DATA: OnceLock<PathBuf> = OnceLock::new();

fn stack() -> &'static Stack {
    shared(&STACK, || {
        Stack::start(
            "infile",
            |db| {
                let mut ddl = String::new();
                for t in ["li_direct", "li_cli", "li_py", "li_async", "li_missing", "li_off"] {
                    ddl.push_str(&format!(
                        "CREATE TABLE {t} (id INT PRIMARY KEY, name VARCHAR(50), v DOUBLE) DEFAULT CHARSET=utf8mb4;"
                    ));
                }
                db.sql(&ddl)?;
                Ok(())
            },
            |c| c,
        )
    })
}

/// A CSV file of `ROWS` rows (about 5 MB), written once under the servers directory.
fn data_file() -> &'static PathBuf {
    DATA.get_or_init(|| {
        let path = gateway_tests::scratch_dir("infile").unwrap().join("data.csv");
        let mut s = String::with_capacity(6_000_000);
        for i in 1..=ROWS {
            s.push_str(&format!("{i},nämé-{i},{}\n", i as f64 * 1.5));
        }
        std::fs::write(&path, s).unwrap();
        path
    })
}

fn load_sql(table: &str) -> String {
    format!(
        "LOAD DATA LOCAL INFILE '{}' INTO TABLE {table} CHARACTER SET utf8mb4 FIELDS TERMINATED BY ','",
        data_file().display()
    )
}

/// Loads the file directly (once) and returns the reference checksum.
fn reference(s: &Stack) -> String {
    static REF: OnceLock<String> = OnceLock::new();
    REF.get_or_init(|| {
        s.db.cli().database("test").arg("--local-infile=1").sql(&load_sql("li_direct")).unwrap();
        checksum(s, "li_direct")
    })
    .clone()
}

fn checksum(s: &Stack, table: &str) -> String {
    let out = s.db.sql(&format!("CHECKSUM TABLE {table}; SELECT COUNT(*) FROM {table}")).unwrap();
    // "test.<table>\t<sum>\n<count>\n" -> "<sum> <count>"
    let mut lines = out.lines();
    let sum = lines.next().and_then(|l| l.split('\t').nth(1)).unwrap_or("").to_string();
    let count = lines.next().unwrap_or("").to_string();
    format!("{sum} {count}")
}

#[test]
fn cli_local_infile_matches_direct() {
    let s = stack();
    let want = reference(s);
    assert!(want.ends_with(&format!(" {ROWS}")), "reference load: {want}");
    let out =
        s.gw.cli().database("test").arg("--local-infile=1").sql(&format!("{}; SELECT 'after'", load_sql("li_cli")));
    let out = out.unwrap_or_else(|e| panic!("{e:#}\n{}", s.gw_log()));
    assert_eq!(out.trim(), "after");
    assert_eq!(checksum(s, "li_cli"), want);
}

#[test]
fn pymysql_local_infile_matches_direct() {
    let s = stack();
    let want = reference(s);
    let path = data_file().display().to_string();
    let out =
        python("load_local.py", &["127.0.0.1", &s.gw.port().to_string(), "root", "", "test", "li_py", &path]).unwrap();
    let out = out.ok().unwrap_or_else(|e| panic!("{e:#}\n{}", s.gw_log()));
    let kv = parse_kv(&out);
    assert_eq!(kv.get("affected").map(String::as_str), Some(ROWS.to_string().as_str()), "{out}");
    assert_eq!(kv.get("count").map(String::as_str), Some(ROWS.to_string().as_str()), "{out}");
    assert_eq!(checksum(s, "li_py"), want);
}

#[tokio::test]
async fn mysql_async_local_infile_matches_direct() {
    let s = stack();
    let want = reference(s);
    let handler = mysql_async::WhiteListFsHandler::new([data_file().clone()]);
    let mut c = connect_with(&s.gw_url("root", "", Some("test")), |b| b.local_infile_handler(Some(handler)))
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", s.gw_log()));
    c.query_drop(load_sql("li_async"))
        .await
        .unwrap_or_else(|e| panic!("LOAD DATA through the gateway: {e:?}\n{}", s.gw_log()));
    assert_eq!(c.affected_rows(), ROWS);
    assert_eq!(query_one(&mut c, "SELECT COUNT(*) FROM li_async").await.unwrap(), Some(ROWS.to_string()));
    c.disconnect().await.unwrap();
    assert_eq!(checksum(s, "li_async"), want);
}

#[test]
fn missing_file_and_disabled_local_infile_match_direct() {
    let s = stack();
    let missing = "LOAD DATA LOCAL INFILE '/nonexistent/file.csv' INTO TABLE li_missing; SELECT 'after', COUNT(*) FROM li_missing";
    let off = format!("{}; SELECT 'after', COUNT(*) FROM li_off", load_sql("li_off"));
    for (sql, flag) in [(missing, "--local-infile=1"), (off.as_str(), "--local-infile=0")] {
        let a = s.gw.cli().database("test").arg(flag).arg("--force").run(sql).unwrap();
        let b = s.db.cli().database("test").arg(flag).arg("--force").run(sql).unwrap();
        assert_eq!(
            (a.code, &a.stdout),
            (b.code, &b.stdout),
            "{flag}: gateway stderr {:?}, direct stderr {:?}\n{}",
            a.stderr,
            b.stderr,
            s.gw_log()
        );
        let code = |e: &str| e.split_whitespace().nth(1).map(str::to_string);
        assert_eq!(code(&a.stderr), code(&b.stderr), "error code: gateway {:?} vs direct {:?}", a.stderr, b.stderr);
        assert!(!a.success() && a.stderr.contains("ERROR"), "{flag} must fail: {a:?}");
    }
}
