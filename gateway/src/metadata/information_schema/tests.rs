//! Rebuilding partition definitions from canned `information_schema` rows (MariaDB and OceanBase
//! shapes, docs/routing.md §12).

use crate::metadata::information_schema::ddl::{default_partitions, quote};
use crate::metadata::information_schema::{InformationSchemaSource, SqlClient, TextRow};
use crate::metadata::{MetaFuture, MetadataError, MetadataSource};
use crate::partition::{locate, CastContext, KeyValue, PartExpr, PartFunc};
use crate::topology::TableKey;

/// Answers by the view a statement reads.
#[derive(Default)]
struct Canned {
    partitions: Vec<TextRow>,
    columns: Vec<TextRow>,
    pk: Vec<TextRow>,
    show_create: Option<String>,
}

impl SqlClient for Canned {
    fn query<'a>(&'a self, sql: &'a str) -> MetaFuture<'a, Vec<TextRow>> {
        let rows = if sql.contains("information_schema.PARTITIONS") {
            self.partitions.clone()
        } else if sql.contains("information_schema.COLUMNS") {
            self.columns.clone()
        } else if sql.contains("information_schema.STATISTICS") {
            self.pk.clone()
        } else if sql.starts_with("SHOW CREATE TABLE") {
            self.show_create.iter().map(|s| vec![Some("t".into()), Some(s.clone())]).collect()
        } else {
            return Box::pin(
                async move { Err(MetadataError::Query { sql: sql.into(), message: "unexpected".into() }) },
            );
        };
        Box::pin(async move { Ok(rows) })
    }
}

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

/// A PARTITIONS row: name, sub name, method, sub method, expr, sub expr, description, pos, sub pos.
fn prow(name: &str, method: &str, expr: &str, desc: Option<&str>, pos: u32) -> TextRow {
    vec![s(name), None, s(method), None, s(expr), None, desc.map(str::to_string), s(&pos.to_string()), None]
}

fn col(name: &str, ty: &str, coll: Option<&str>) -> TextRow {
    vec![s(name), s(ty), coll.map(str::to_string), s("")]
}

async fn scheme(c: Canned) -> crate::partition::TableScheme {
    let src = InformationSchemaSource::new(c);
    src.discover("test", "t").await.unwrap().scheme.unwrap().unwrap()
}

fn at(scheme: &crate::partition::TableScheme, vals: &[KeyValue]) -> String {
    locate(scheme, vals, &CastContext::default()).unwrap().name().to_string()
}

#[tokio::test]
async fn mariadb_hash_with_backquotes() {
    let parts = (0..8).map(|i| prow(&format!("p{i}"), "HASH", "`c1`", None, i + 1)).rev().collect();
    let c = Canned { partitions: parts, columns: vec![col("c1", "int(11)", None)], ..Default::default() };
    let sc = scheme(c).await;
    assert_eq!(sc.level1.func, PartFunc::Hash);
    assert_eq!(sc.partitions.len(), 8);
    assert_eq!(at(&sc, &[KeyValue::Int(123)]), "p3", "rows are put in position order");
}

#[tokio::test]
async fn oceanbase_range_columns() {
    let parts = vec![
        prow("p0", "RANGE COLUMNS", "c1, c2", Some("'m',5"), 1),
        prow("p1", "RANGE COLUMNS", "c1, c2", Some("MAXVALUE,MAXVALUE"), 2),
    ];
    let cols = vec![col("c1", "varchar(10)", Some("utf8mb4_bin")), col("c2", "int(11)", None)];
    let sc = scheme(Canned { partitions: parts, columns: cols, ..Default::default() }).await;
    assert_eq!(sc.level1.func, PartFunc::RangeColumns);
    assert_eq!(at(&sc, &[KeyValue::str("a"), KeyValue::Int(9)]), "p0");
    assert_eq!(at(&sc, &[KeyValue::str("m"), KeyValue::Int(5)]), "p1");
}

#[tokio::test]
async fn mariadb_list_default_shows_as_zero() {
    let parts = vec![
        prow("p0", "LIST", "`c1`", Some("1,2,3"), 1),
        prow("p1", "LIST", "`c1`", Some("NULL,4"), 2),
        prow("pd", "LIST", "`c1`", Some("0"), 3),
    ];
    let show = "CREATE TABLE `t` (\n  `c1` int(11) DEFAULT NULL\n) ENGINE=InnoDB\n PARTITION BY LIST (`c1`)\n(PARTITION `p0` VALUES IN (1,2,3) ENGINE = InnoDB,\n PARTITION `p1` VALUES IN (NULL,4) ENGINE = InnoDB,\n PARTITION `pd` DEFAULT ENGINE = InnoDB)";
    let c = Canned {
        partitions: parts,
        columns: vec![col("c1", "int(11)", None)],
        show_create: Some(show.into()),
        ..Default::default()
    };
    let sc = scheme(c).await;
    assert_eq!(at(&sc, &[KeyValue::Int(4)]), "p1");
    assert_eq!(at(&sc, &[KeyValue::Int(0)]), "pd");
    assert_eq!(at(&sc, &[KeyValue::Int(99)]), "pd");
}

#[tokio::test]
async fn list_zero_that_is_a_real_value() {
    let parts = vec![prow("p0", "LIST", "c1", Some("0"), 1), prow("p1", "LIST", "c1", Some("1"), 2)];
    let show =
        "CREATE TABLE `t` (`c1` int) PARTITION BY LIST (c1) (PARTITION p0 VALUES IN (0), PARTITION p1 VALUES IN (1))";
    let c = Canned {
        partitions: parts,
        columns: vec![col("c1", "int(11)", None)],
        show_create: Some(show.into()),
        ..Default::default()
    };
    let sc = scheme(c).await;
    assert!(locate(&sc, &[KeyValue::Int(5)], &CastContext::default()).is_err(), "no DEFAULT partition");
    assert_eq!(at(&sc, &[KeyValue::Int(0)]), "p0");
}

#[tokio::test]
async fn key_on_the_primary_key() {
    let parts = (0..4).map(|i| prow(&format!("p{i}"), "KEY", "", None, i + 1)).collect();
    let cols = vec![col("a", "bigint(20)", None), col("b", "varchar(8)", Some("utf8mb4_general_ci"))];
    let c = Canned { partitions: parts, columns: cols, pk: vec![vec![s("b")], vec![s("a")]], ..Default::default() };
    let sc = scheme(c).await;
    assert_eq!(sc.level1.func, PartFunc::KeyImplicit);
    assert_eq!(sc.primary_key, ["b", "a"]);
}

#[tokio::test]
async fn expression_is_kept_and_calculated() {
    let parts = (0..2).map(|i| prow(&format!("p{i}"), "HASH", "`c1` + 1", None, i + 1)).collect();
    let c = Canned { partitions: parts, columns: vec![col("c1", "int(11)", None)], ..Default::default() };
    let sc = scheme(c).await;
    assert!(matches!(sc.level1.expr, PartExpr::Expression(_)));
    assert_eq!(locate(&sc, &[KeyValue::Int(1)], &CastContext::default()).map(|l| l.part_idx), Ok(0), "(1 + 1) % 2");
    assert_eq!(locate(&sc, &[KeyValue::Int(2)], &CastContext::default()).map(|l| l.part_idx), Ok(1), "(2 + 1) % 2");
}

#[tokio::test]
async fn two_levels_hash_subpartitions_from_the_view() {
    let mut parts = Vec::new();
    for (p, desc) in [(0u32, "10"), (1, "MAXVALUE")] {
        for sp in 0..2u32 {
            parts.push(vec![
                s(&format!("p{p}")),
                s(&format!("p{p}sp{sp}")),
                s("RANGE"),
                s("HASH"),
                s("c1"),
                s("c2"),
                s(desc),
                s(&(p + 1).to_string()),
                s(&(sp + 1).to_string()),
            ]);
        }
    }
    let cols = vec![col("c1", "int(11)", None), col("c2", "int(11)", None)];
    let sc = scheme(Canned { partitions: parts, columns: cols, ..Default::default() }).await;
    assert_eq!(sc.partitions[1].subs.len(), 2);
    assert_eq!(at(&sc, &[KeyValue::Int(50), KeyValue::Int(3)]), "p1sp1");
}

#[tokio::test]
async fn range_subpartitions_come_from_show_create() {
    let row =
        |sub: &str, pos: &str| vec![s("p0"), s(sub), s("HASH"), s("RANGE"), s("c1"), s("c2"), None, s("1"), s(pos)];
    let show = "CREATE TABLE `t` (`c1` int(11), `c2` int(11)) PARTITION BY HASH(c1) SUBPARTITION BY RANGE(c2) \
                SUBPARTITION TEMPLATE (SUBPARTITION lo VALUES LESS THAN (5), SUBPARTITION hi VALUES LESS THAN (MAXVALUE)) PARTITIONS 1";
    let c = Canned {
        partitions: vec![row("p0slo", "1"), row("p0shi", "2")],
        show_create: Some(show.into()),
        ..Default::default()
    };
    let sc = scheme(c).await;
    assert_eq!(at(&sc, &[KeyValue::Int(1), KeyValue::Int(7)]), "p0shi");
}

#[tokio::test]
async fn unpartitioned_missing_and_unsupported() {
    let one = vec![vec![None, None, None, None, None, None, None, None, None]];
    let src = InformationSchemaSource::new(Canned { partitions: one, ..Default::default() });
    let meta = src.fetch_table(&TableKey::new("sys", "test", "t")).await.unwrap();
    assert!(!meta.entry.is_partitioned());
    let none = InformationSchemaSource::new(Canned::default());
    assert!(matches!(none.fetch_table(&TableKey::new("sys", "test", "t")).await, Err(MetadataError::NotFound(_))));
    assert!(matches!(none.fetch_cluster().await, Err(MetadataError::Unsupported { .. })));
    let linear = vec![prow("p0", "LINEAR HASH", "c1", None, 1), prow("p1", "LINEAR HASH", "c1", None, 2)];
    let src = InformationSchemaSource::new(Canned {
        partitions: linear,
        columns: vec![col("c1", "int", None)],
        ..Default::default()
    });
    let meta = src.fetch_table(&TableKey::new("sys", "test", "t")).await.unwrap();
    assert!(meta.entry.is_partitioned() && meta.entry.scheme.is_none(), "partitioned, not calculable");
}

#[test]
fn helpers() {
    assert_eq!(quote("a'b\\c"), "'a''b\\\\c'");
    assert_eq!(default_partitions("PARTITION `pd` DEFAULT ENGINE = InnoDB, PARTITION p2 VALUES IN (2)"), ["pd"]);
}
