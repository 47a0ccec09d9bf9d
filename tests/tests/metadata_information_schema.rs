//! `information_schema` discovery against real servers, with the server as the oracle: create
//! HASH / KEY / RANGE / RANGE COLUMNS / LIST / LIST COLUMNS / two-level tables, discover their
//! `TableScheme` with `gateway::metadata::InformationSchemaSource` over `mysql_async`, insert rows,
//! read each `PARTITION (name)` back and require that `partition::locate` puts every row where the
//! server did (docs/routing.md §12).
//!
//! * MariaDB (always): HASH, RANGE, LIST and two-level placement; KEY only structurally (MariaDB's
//!   KEY hash is not OceanBase's, docs/partition.md §10).
//! * The OceanBase kernel (seekdb, root + binary needed, else `SKIP:`): everything including KEY.
//!   The kernel runs in a network namespace; discovery runs on a thread that entered it.
//!
//! Run: `cargo test -p gateway-tests --test metadata_information_schema -- --nocapture`.

use std::collections::HashMap;
use std::path::PathBuf;

use gateway::metadata::information_schema::{Discovered, InformationSchemaSource, MysqlClient};
use gateway::partition::{locate, CastContext, KeyValue, PartFunc, TableScheme};
use gateway_tests::seekdb::{Seekdb, SQL_PORT};
use gateway_tests::MariaDb;

/// Which server a table is created on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Server {
    MariaDb,
    OceanBase,
}

/// One table: DDL, inserted key columns and their SQL literals per row.
struct Spec {
    name: &'static str,
    ddl: String,
    cols: &'static [&'static str],
    rows: Vec<String>,
    /// Compare placement (false: structure only).
    placement: bool,
}

const UTF8: &str = "DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci";

fn ints(range: impl Iterator<Item = i64>) -> Vec<String> {
    range.map(|v| v.to_string()).collect()
}

fn specs(server: Server) -> Vec<Spec> {
    let ob = server == Server::OceanBase;
    let list_default = if ob { "PARTITION pd VALUES IN (DEFAULT)" } else { "PARTITION pd DEFAULT" };
    let mut strs = Vec::new();
    for s in ["a", "l", "m", "M", "n", "zz", "b", "mm"] {
        for n in [0, 5, 9] {
            strs.push(format!("'{s}', {n}"));
        }
    }
    let mut two = Vec::new();
    for a in [5, 150, -3, 99, 100] {
        for b in 0..7 {
            two.push(format!("{a}, {b}"));
        }
    }
    let mut list_rows = ints(0..11);
    list_rows.extend(["NULL".to_string(), "50".to_string()]);
    let mut pk_rows = Vec::new();
    for a in 0..20 {
        pk_rows.push(format!("{a}, 'k{}'", a % 3));
    }
    vec![
        Spec {
            name: "m_hash",
            ddl: "CREATE TABLE m_hash (id INT, c1 INT) PARTITION BY HASH(c1) PARTITIONS 8".into(),
            cols: &["c1"],
            rows: ints((-300..300).step_by(7).chain([123, 0])),
            placement: true,
        },
        Spec {
            name: "m_range",
            ddl: "CREATE TABLE m_range (id INT, c1 INT) PARTITION BY RANGE(c1) (PARTITION p0 VALUES LESS THAN (10), \
                  PARTITION p1 VALUES LESS THAN (100), PARTITION p2 VALUES LESS THAN MAXVALUE)"
                .into(),
            cols: &["c1"],
            rows: ints((-50..200).step_by(3)),
            placement: true,
        },
        Spec {
            name: "m_range_columns",
            ddl: format!(
                "CREATE TABLE m_range_columns (id INT, c1 VARCHAR(10), c2 INT) {UTF8} PARTITION BY RANGE COLUMNS(c1, c2) \
                 (PARTITION p0 VALUES LESS THAN ('m', 5), PARTITION p1 VALUES LESS THAN (MAXVALUE, MAXVALUE))"
            ),
            cols: &["c1", "c2"],
            rows: strs,
            placement: true,
        },
        Spec {
            name: "m_list",
            ddl: format!(
                "CREATE TABLE m_list (id INT, c1 INT) PARTITION BY LIST(c1) (PARTITION p0 VALUES IN (1,2,3), \
                 PARTITION p1 VALUES IN (4,NULL), {list_default})"
            ),
            cols: &["c1"],
            rows: list_rows,
            placement: true,
        },
        Spec {
            name: "m_list_columns",
            ddl: format!(
                "CREATE TABLE m_list_columns (id INT, c1 VARCHAR(8)) {UTF8} PARTITION BY LIST COLUMNS(c1) \
                 (PARTITION p0 VALUES IN ('a','b'), PARTITION p1 VALUES IN ('c'))"
            ),
            cols: &["c1"],
            rows: ["'a'", "'b'", "'c'", "'A'", "'C'"].map(String::from).to_vec(),
            placement: true,
        },
        Spec {
            name: "m_sub",
            ddl: "CREATE TABLE m_sub (id INT, c1 INT, c2 INT) PARTITION BY RANGE(c1) SUBPARTITION BY HASH(c2) \
                  SUBPARTITIONS 2 (PARTITION p0 VALUES LESS THAN (100), PARTITION p1 VALUES LESS THAN MAXVALUE)"
                .into(),
            cols: &["c1", "c2"],
            rows: two,
            placement: true,
        },
        Spec {
            name: "m_key_int",
            ddl: "CREATE TABLE m_key_int (id INT, c1 INT) PARTITION BY KEY(c1) PARTITIONS 4".into(),
            cols: &["c1"],
            rows: ints(-20..40),
            placement: ob,
        },
        Spec {
            name: "m_key_str",
            ddl: format!("CREATE TABLE m_key_str (id INT, c1 VARCHAR(16)) {UTF8} PARTITION BY KEY(c1) PARTITIONS 5"),
            cols: &["c1"],
            rows: (0..40).map(|i| format!("'v{i}'")).chain(["'part'".to_string(), "''".to_string()]).collect(),
            placement: ob,
        },
        Spec {
            name: "m_key_pk",
            ddl: format!(
                "CREATE TABLE m_key_pk (id INT, a INT NOT NULL, b VARCHAR(8) NOT NULL, PRIMARY KEY (b, a)) {UTF8} \
                 PARTITION BY KEY() PARTITIONS 3"
            ),
            cols: &["a", "b"],
            rows: pk_rows,
            placement: ob,
        },
    ]
}

/// Runs SQL in database `test` on either server through its CLI.
trait Sql {
    fn run(&self, sql: &str) -> anyhow::Result<String>;
}

impl Sql for MariaDb {
    fn run(&self, sql: &str) -> anyhow::Result<String> {
        self.sql(sql)
    }
}

impl Sql for Seekdb {
    fn run(&self, sql: &str) -> anyhow::Result<String> {
        self.sql(sql)
    }
}

/// Discovers `tables` in database `test` at `url`, inside network namespace `ns` if given.
fn discover(url: String, ns: Option<String>, tables: Vec<&'static str>) -> HashMap<&'static str, Discovered> {
    let work = move || {
        if let Some(ns) = &ns {
            gateway::dataplane::netns::enter_thread(&PathBuf::from("/run/netns").join(ns)).expect("entering the netns");
        }
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(async move {
            let src = InformationSchemaSource::new(MysqlClient::from_url(&url).expect("url"));
            let mut out = HashMap::new();
            for t in tables {
                let found = src.discover("test", t).await.unwrap_or_else(|e| panic!("discovering {t}: {e}"));
                out.insert(t, found);
            }
            let client = src.client().clone();
            drop(src);
            client.disconnect().await.expect("disconnect");
            out
        })
    };
    std::thread::spawn(work).join().expect("discovery thread")
}

/// Leaf partition names in order.
fn leaves(s: &TableScheme) -> Vec<String> {
    s.partitions
        .iter()
        .flat_map(|p| {
            if p.subs.is_empty() {
                vec![p.name.to_string()]
            } else {
                p.subs.iter().map(|x| x.name.to_string()).collect()
            }
        })
        .collect()
}

/// Creates and fills the tables.
fn load(db: &dyn Sql, specs: &[Spec]) {
    for s in specs {
        db.run(&format!("DROP TABLE IF EXISTS {0}; {1}", s.name, s.ddl))
            .unwrap_or_else(|e| panic!("{}: {e:#}", s.name));
        let values: Vec<String> = s.rows.iter().enumerate().map(|(i, r)| format!("({i}, {r})")).collect();
        let sql = format!("INSERT INTO {} (id, {}) VALUES {}", s.name, s.cols.join(", "), values.join(", "));
        db.run(&sql).unwrap_or_else(|e| panic!("{}: {e:#}", s.name));
    }
}

/// The server's partition of every row id.
fn server_placement(db: &dyn Sql, table: &str, names: &[String]) -> HashMap<usize, String> {
    let mut out = HashMap::new();
    for n in names {
        let text =
            db.run(&format!("SELECT id FROM {table} PARTITION ({n})")).unwrap_or_else(|e| panic!("{table} {n}: {e:#}"));
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            out.insert(line.trim().parse::<usize>().expect("id"), n.clone());
        }
    }
    out
}

/// For each key column of the scheme (in `locate` order), its position in the spec's row.
fn key_order(scheme: &TableScheme, spec: &Spec) -> Vec<usize> {
    let keys = scheme.key_columns().unwrap_or_else(|e| panic!("{}: {e}", spec.name));
    keys.iter()
        .map(|&k| {
            let name = &scheme.columns[k].name;
            spec.cols
                .iter()
                .position(|c| c.eq_ignore_ascii_case(name))
                .unwrap_or_else(|| panic!("{}: key {name}", spec.name))
        })
        .collect()
}

/// Checks one discovered table against the server; returns the number of rows compared.
fn check(db: &dyn Sql, spec: &Spec, found: &Discovered) -> usize {
    let scheme = match &found.scheme {
        Ok(Some(s)) => s,
        other => panic!("{}: no scheme: {other:?} (DDL {:?})", spec.name, found.ddl),
    };
    let names = leaves(scheme);
    assert_eq!(found.part_num, names.len(), "{}: partition count", spec.name);
    if spec.name == "m_key_pk" {
        assert_eq!(scheme.primary_key, ["b", "a"], "primary key in index order");
    }
    if !spec.placement {
        assert!(matches!(scheme.level1.func, PartFunc::Key | PartFunc::KeyImplicit), "{}", spec.name);
        eprintln!("{}: structure only ({} partitions; MariaDB's KEY hash is not OceanBase's)", spec.name, names.len());
        return 0;
    }
    let placed = server_placement(db, spec.name, &names);
    assert_eq!(placed.len(), spec.rows.len(), "{}: every row read back", spec.name);
    let ctx = CastContext::default();
    let order = key_order(scheme, spec);
    for (id, row) in spec.rows.iter().enumerate() {
        let given = KeyValue::parse_row(row).expect("literal row");
        let values: Vec<KeyValue> = order.iter().map(|&i| given[i].clone()).collect();
        let loc = locate(scheme, &values, &ctx).unwrap_or_else(|e| panic!("{} ({row}): {e}", spec.name));
        assert_eq!(Some(&loc.name().to_string()), placed.get(&id), "{}: row ({row})", spec.name);
    }
    spec.rows.len()
}

fn run(db: &dyn Sql, server: Server, url: String, ns: Option<String>) {
    let specs = specs(server);
    load(db, &specs);
    db.run("DROP TABLE IF EXISTS m_plain; CREATE TABLE m_plain (id INT)").expect("plain table");
    let mut names: Vec<&'static str> = specs.iter().map(|s| s.name).collect();
    names.push("m_plain");
    let found = discover(url, ns, names);
    let plain = &found["m_plain"];
    assert!(plain.part_num == 1 && matches!(plain.scheme, Ok(None)), "m_plain is not partitioned");
    let mut compared = 0;
    for s in &specs {
        compared += check(db, s, &found[s.name]);
    }
    eprintln!("{} rows in {} tables placed as the server placed them", compared, specs.len());
}

#[test]
fn mariadb_partition_definitions() {
    let db = MariaDb::start("metadata-is").expect("mariadb");
    run(&db, Server::MariaDb, db.url("root", "", Some("test")), None);
}

#[test]
fn oceanbase_kernel_partition_definitions() {
    if let Some(reason) = Seekdb::skip_reason() {
        gateway_tests::skip::skip("metadata_information_schema/oceanbase", &reason);
        return;
    }
    let db = Seekdb::start("metadata-is").expect("seekdb");
    let url = format!("mysql://root@127.0.0.1:{SQL_PORT}/test");
    run(&db, Server::OceanBase, url, Some(db.netns().to_string()));
}
