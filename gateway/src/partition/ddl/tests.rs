//! The DDL reader on real `SHOW CREATE TABLE` output of OceanBase 4.3.5 (seekdb) and MariaDB 10.11.

use crate::partition::{locate, parse_create_table, BoundSpec, CastContext, ColumnType, KeyValue, PartFunc};

fn names(ddl: &str) -> Vec<String> {
    let t = parse_create_table(ddl).unwrap();
    t.partitions
        .iter()
        .flat_map(|p| {
            if p.subs.is_empty() {
                vec![p.name.to_string()]
            } else {
                p.subs.iter().map(|s| s.name.to_string()).collect()
            }
        })
        .collect()
}

fn at(ddl: &str, row: &str) -> String {
    let t = parse_create_table(ddl).unwrap();
    locate(&t, &KeyValue::parse_row(row).unwrap(), &CastContext::default())
        .map_or_else(|e| format!("unknown: {e}"), |l| l.to_string())
}

const OB_OPTS: &str = ") ORGANIZATION INDEX DEFAULT CHARSET = utf8mb4 ROW_FORMAT = DYNAMIC COMPRESSION = 'zstd_1.3.8' BLOCK_SIZE = 16384 TABLET_SIZE = 134217728 PCTFREE = 0\n";

#[test]
fn oceanbase_hash_key_and_implicit_key() {
    let h1 = format!("CREATE TABLE `h1` (\n  `c1` int(11) DEFAULT NULL,\n  `c2` varchar(20) DEFAULT NULL\n{OB_OPTS} partition by hash(c1)\n(partition `p0`,\npartition `p1`,\npartition `p2`,\npartition `p3`,\npartition `p4`,\npartition `p5`,\npartition `p6`,\npartition `p7`)");
    assert_eq!(names(&h1).len(), 8);
    assert_eq!(at(&h1, "123"), "p3 3");
    let k2 = format!("CREATE TABLE `k2` (\n  `id` bigint(20) NOT NULL,\n  `c2` varchar(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL,\n  PRIMARY KEY (`id`)\n{OB_OPTS} partition by key()\n(partition `p0`,\npartition `p1`,\npartition `p2`,\npartition `p3`)");
    let t = parse_create_table(&k2).unwrap();
    assert_eq!(t.level1.func, PartFunc::KeyImplicit);
    assert_eq!(t.primary_key, vec!["id".to_string()]);
    assert_eq!(t.columns[1].collation, "utf8mb4_bin");
    assert_eq!(t.columns[0].collation, "utf8mb4_general_ci");
    assert_eq!(at(&k2, "0"), "p1 1");
}

#[test]
fn oceanbase_range_list_columns() {
    let r1 = format!("CREATE TABLE `r1` (\n  `c1` int(11) DEFAULT NULL,\n  `c2` date DEFAULT NULL\n{OB_OPTS} partition by range(c1)\n(partition `p0` values less than (10),\npartition `p1` values less than (100),\npartition `pm` values less than (MAXVALUE))");
    assert_eq!(at(&r1, "1000"), "pm 2");
    let rc = format!("CREATE TABLE `rc` (\n  `c1` varchar(10) DEFAULT NULL,\n  `c2` int(11) DEFAULT NULL\n{OB_OPTS} partition by range columns(c1, c2)\n(partition `a` values less than ('m',5),\npartition `b` values less than (MAXVALUE,MAXVALUE))");
    assert_eq!(at(&rc, "'M', 4"), "a 0");
    let l1 = format!("CREATE TABLE `l1` (\n  `c1` int(11) DEFAULT NULL\n{OB_OPTS} partition by list(c1)\n(partition `p0` values in (NULL,1,2),\npartition `p1` values in (3),\npartition `pd` values in (DEFAULT))");
    assert_eq!(parse_create_table(&l1).unwrap().partitions[2].bound, BoundSpec::Default);
    assert_eq!(at(&l1, "NULL"), "p0 0");
    assert_eq!(at(&l1, "9"), "pd 2");
    let lc = format!("CREATE TABLE `lc` (\n  `c1` varchar(10) DEFAULT NULL,\n  `c2` int(11) DEFAULT NULL\n{OB_OPTS} partition by list columns(c1, c2)\n(partition `p0` values in (('a',1),('b',2)),\npartition `p1` values in (('c',3)))");
    assert_eq!(at(&lc, "'C', 3"), "p1 1");
    assert_eq!(at(&lc, "'c', 4"), "unknown: no partition for value");
}

#[test]
fn oceanbase_two_levels() {
    let rs = format!("CREATE TABLE `rs` (\n  `c1` int(11) DEFAULT NULL,\n  `c2` int(11) DEFAULT NULL\n{OB_OPTS} partition by range(c1) subpartition by hash(c2) subpartition template (\nsubpartition `p0`,\nsubpartition `p1`)\n(partition `p0` values less than (10),\npartition `p1` values less than (20))");
    assert_eq!(names(&rs), ["p0sp0", "p0sp1", "p1sp0", "p1sp1"]);
    let rst = format!("CREATE TABLE `rst` (\n  `c1` int(11) DEFAULT NULL,\n  `c2` varchar(8) DEFAULT NULL\n{OB_OPTS} partition by range(c1) subpartition by key(c2) subpartition template (\nsubpartition `sa`,\nsubpartition `sb`)\n(partition `p0` values less than (10),\npartition `p1` values less than (MAXVALUE))");
    assert_eq!(names(&rst), ["p0ssa", "p0ssb", "p1ssa", "p1ssb"]);
    let hl = format!("CREATE TABLE `hl` (\n  `c1` int(11) DEFAULT NULL,\n  `c2` int(11) DEFAULT NULL\n{OB_OPTS} partition by hash(c1) subpartition by list(c2) subpartition template (\nsubpartition `s0` values in (1,2),\nsubpartition `s1` values in (DEFAULT))\n(partition `p0`,\npartition `p1`)");
    assert_eq!(names(&hl), ["p0ss0", "p0ss1", "p1ss0", "p1ss1"]);
    let rnt = format!("CREATE TABLE `rnt` (\n  `c1` int(11) DEFAULT NULL,\n  `c2` int(11) DEFAULT NULL\n{OB_OPTS} partition by range(c1) subpartition by range(c2)\n(partition `p0` values less than (10) (\nsubpartition `x0` values less than (5),\nsubpartition `x1` values less than (MAXVALUE)),\npartition `p1` values less than (20) (\nsubpartition `y0` values less than (100)))");
    assert_eq!(names(&rnt), ["x0", "x1", "y0"]);
    assert_eq!(at(&rnt, "5, 5"), "x1 0 1");
    assert_eq!(at(&rnt, "15, 100"), "unknown: no partition for value");
}

#[test]
fn oceanbase_column_types() {
    let dt = format!("CREATE TABLE `dt` (\n  `d` date DEFAULT NULL,\n  `dt` datetime(3) DEFAULT NULL,\n  `ts` timestamp(6) NULL DEFAULT NULL,\n  `tm` time DEFAULT NULL,\n  `y` year(4) DEFAULT NULL,\n  `f` float DEFAULT NULL,\n  `dd` double DEFAULT NULL,\n  `dec1` decimal(10,2) DEFAULT NULL,\n  `u` bigint(20) unsigned DEFAULT NULL,\n  `b` binary(8) DEFAULT NULL,\n  `ch` char(5) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL,\n  `t` tinyint(4) DEFAULT NULL\n{OB_OPTS} partition by key(d, dt, ts, tm, y, f, dd, dec1, u, b, ch, t)\n(partition `p0`,\npartition `p1`,\npartition `p2`,\npartition `p3`,\npartition `p4`,\npartition `p5`,\npartition `p6`)");
    let t = parse_create_table(&dt).unwrap();
    let types: Vec<&ColumnType> = t.columns.iter().map(|c| &c.ty).collect();
    assert_eq!(
        types,
        [
            &ColumnType::Date,
            &ColumnType::DateTime { fsp: 3 },
            &ColumnType::Timestamp { fsp: 6 },
            &ColumnType::Time { fsp: 0 },
            &ColumnType::Year,
            &ColumnType::Float,
            &ColumnType::Double,
            &ColumnType::Decimal { precision: 10, scale: 2 },
            &ColumnType::Int { bytes: 8, unsigned: true },
            &ColumnType::Binary { len: 8 },
            &ColumnType::Char { len: 5 },
            &ColumnType::Int { bytes: 1, unsigned: false },
        ]
    );
    assert_eq!(t.columns[9].collation, "binary");
    let row = "'2024-01-02', '2024-01-02 03:04:05.123', '2024-01-02 03:04:05', '01:00:00', 2024, 1.5, 1.5, 12.34, 18446744073709551615, 'ab', 'x', -5";
    assert!(at(&dt, row).starts_with('p'));
}

#[test]
fn mariadb_output() {
    let h1 = "CREATE TABLE `h1` (\n  `c1` int(11) DEFAULT NULL,\n  `c2` varchar(20) DEFAULT NULL\n) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci\n PARTITION BY HASH (`c1`)\nPARTITIONS 8";
    assert_eq!(at(h1, "-7"), "p7 7");
    let k2 = "CREATE TABLE `k2` (\n  `id` bigint(20) NOT NULL,\n  `c2` varchar(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL,\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci\n PARTITION BY KEY ()\nPARTITIONS 4";
    assert_eq!(parse_create_table(k2).unwrap().level1.func, PartFunc::KeyImplicit);
    let r1 = "CREATE TABLE `r1` (\n  `c1` int(11) DEFAULT NULL,\n  `c2` date DEFAULT NULL\n) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci\n PARTITION BY RANGE (`c1`)\n(PARTITION `p0` VALUES LESS THAN (10) ENGINE = InnoDB,\n PARTITION `p1` VALUES LESS THAN (100) ENGINE = InnoDB,\n PARTITION `pm` VALUES LESS THAN MAXVALUE ENGINE = InnoDB)";
    assert_eq!(at(r1, "10"), "p1 1");
    let rc = "CREATE TABLE `rc` (\n  `c1` varchar(10) DEFAULT NULL,\n  `c2` int(11) DEFAULT NULL\n) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci\n PARTITION BY RANGE  COLUMNS(`c1`,`c2`)\n(PARTITION `a` VALUES LESS THAN ('m',5) ENGINE = InnoDB,\n PARTITION `b` VALUES LESS THAN (MAXVALUE,MAXVALUE) ENGINE = InnoDB)";
    assert_eq!(at(rc, "'a', 1"), "unknown: cannot calculate: collation latin1_swedish_ci not supported");
    let l1 = "CREATE TABLE `l1` (\n  `c1` int(11) DEFAULT NULL\n) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci\n PARTITION BY LIST (`c1`)\n(PARTITION `p0` VALUES IN (NULL,1,2) ENGINE = InnoDB,\n PARTITION `p1` VALUES IN (3) ENGINE = InnoDB,\n PARTITION `pd` DEFAULT ENGINE = InnoDB)";
    assert_eq!(at(l1, "7"), "pd 2");
    let lc = "CREATE TABLE `lc` (\n  `c1` varchar(10) DEFAULT NULL,\n  `c2` int(11) DEFAULT NULL\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci\n PARTITION BY LIST  COLUMNS(`c1`,`c2`)\n(PARTITION `p0` VALUES IN (('a',1),('b',2)) ENGINE = InnoDB,\n PARTITION `p1` VALUES IN (('c',3)) ENGINE = InnoDB)";
    assert_eq!(at(lc, "'b', 2"), "p0 0");
    let rs = "CREATE TABLE `rs` (\n  `c1` int(11) DEFAULT NULL,\n  `c2` int(11) DEFAULT NULL\n) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci\n PARTITION BY RANGE (`c1`)\nSUBPARTITION BY HASH (`c2`)\nSUBPARTITIONS 2\n(PARTITION `p0` VALUES LESS THAN (10) ENGINE = InnoDB,\n PARTITION `p1` VALUES LESS THAN (20) ENGINE = InnoDB)";
    assert_eq!(names(rs), ["p0sp0", "p0sp1", "p1sp0", "p1sp1"]);
    let rnt = "CREATE TABLE `rnt` (\n  `c1` int(11) DEFAULT NULL,\n  `c2` int(11) DEFAULT NULL\n) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci\n PARTITION BY RANGE (`c1`)\nSUBPARTITION BY KEY (`c2`)\n(PARTITION `p0` VALUES LESS THAN (10)\n (SUBPARTITION `x0` ENGINE = InnoDB,\n  SUBPARTITION `x1` ENGINE = InnoDB),\n PARTITION `p1` VALUES LESS THAN (20)\n (SUBPARTITION `y0` ENGINE = InnoDB,\n  SUBPARTITION `y1` ENGINE = InnoDB))";
    assert_eq!(names(rnt), ["x0", "x1", "y0", "y1"]);
    let kc = "CREATE TABLE `kc` (\n  `a` varchar(10) CHARACTER SET latin1 COLLATE latin1_swedish_ci DEFAULT NULL,\n  `b` char(3) DEFAULT NULL\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin\n PARTITION BY KEY (`b`,`a`)\nPARTITIONS 3";
    let t = parse_create_table(kc).unwrap();
    assert_eq!(
        (t.columns[0].collation.as_str(), t.columns[1].collation.as_str()),
        ("latin1_swedish_ci", "utf8mb4_bin")
    );
    assert_eq!(t.key_columns().unwrap(), [1, 0]);
}

#[test]
fn partition_counts_are_bounded() {
    assert!(parse_create_table("CREATE TABLE t (c1 int) PARTITION BY HASH(c1) PARTITIONS 8192").is_ok());
    assert!(parse_create_table("CREATE TABLE t (c1 int) PARTITION BY HASH(c1) PARTITIONS 89551737").is_err());
    let two_levels =
        "CREATE TABLE t (c1 int, c2 int) PARTITION BY HASH(c1) PARTITIONS 1000 SUBPARTITION BY HASH(c2) SUBPARTITIONS";
    assert!(parse_create_table(&format!("{two_levels} 65")).is_ok());
    assert!(parse_create_table(&format!("{two_levels} 66")).is_err());
}

#[test]
fn parse_errors() {
    assert!(parse_create_table("CREATE TABLE t (c1 int)").is_err());
    assert!(parse_create_table("CREATE TABLE t (c1 int) PARTITION BY FOO(c1)").is_err());
    assert!(parse_create_table("CREATE TABLE t (c1 int PARTITION BY HASH(c1)").is_err());
    assert!(parse_create_table(
        "CREATE TABLE t (c1 int) PARTITION BY RANGE(c1) (PARTITION p0 VALUES LESS THAN (f(1)))"
    )
    .is_err());
}

/// Deep nesting and long lists in a `CREATE TABLE` (metadata comes from servers and from
/// `gateway locate` users): an answer, never a stack overflow, on a tokio worker's stack.
#[test]
fn deep_nesting_is_bounded() {
    let n = 100_000;
    let cases = [
        format!(
            "CREATE TABLE t (c1 int DEFAULT {}1{}) PARTITION BY HASH(c1) PARTITIONS 2",
            "(".repeat(n),
            ")".repeat(n)
        ),
        format!("CREATE TABLE t (c1 int) PARTITION BY HASH({}c1{}) PARTITIONS 2", "(".repeat(n), ")".repeat(n)),
        format!("CREATE TABLE t (c1 int) PARTITION BY HASH(c1{}) PARTITIONS 2", " + 1".repeat(n)),
        format!(
            "CREATE TABLE t (c1 int) PARTITION BY RANGE(c1) (PARTITION p0 VALUES LESS THAN ({}1{}))",
            "(".repeat(n),
            ")".repeat(n)
        ),
        format!("CREATE TABLE t (c1 int) PARTITION BY LIST(c1) (PARTITION p0 VALUES IN ({}))", vec!["1"; n].join(",")),
        format!("CREATE TABLE t (c1 int) PARTITION BY HASH(c1) {}", "(".repeat(n)),
        format!("CREATE TABLE t ({}c1 int)", "(".repeat(n)),
    ];
    let answers = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || cases.iter().map(|ddl| parse_create_table(ddl).is_ok()).collect::<Vec<_>>())
        .unwrap()
        .join()
        .unwrap();
    // The list of 100,000 values is an ordinary (long) definition; the rest are not partitioning
    // this parser accepts, or parse as plain expressions.
    assert_eq!(answers.len(), 7);
    assert!(answers[4], "100,000-value LIST partition parses");
}
