//! The demo's sample schema, created with the same rows on every server (each MariaDB plays a
//! full replica of every tablet): the tables of the embedded demo topology plus `demo.items`.

use anyhow::Context;
use gateway_tests::MariaDb;

/// The tables of `gateway/src/metadata/demo_topology.toml` (HASH, non-partitioned, KEY, RANGE),
/// with a few rows each, and the `demo.items` table of the first demo. Idempotent.
const SAMPLE_SCHEMA: &str = "
CREATE DATABASE IF NOT EXISTS test;
CREATE TABLE IF NOT EXISTS test.t0 (c1 INT NOT NULL, c2 VARCHAR(64)) PARTITION BY HASH(c1) PARTITIONS 8;
CREATE TABLE IF NOT EXISTS test.t1 (c1 INT NOT NULL PRIMARY KEY, c2 VARCHAR(64));
CREATE TABLE IF NOT EXISTS test.t_key (c1 INT NOT NULL, c2 VARCHAR(64)) PARTITION BY KEY(c1) PARTITIONS 4;
CREATE TABLE IF NOT EXISTS test.t_range (c1 INT NOT NULL, c2 VARCHAR(64)) PARTITION BY RANGE(c1) (
    PARTITION p_low VALUES LESS THAN (100), PARTITION p_mid VALUES LESS THAN (1000),
    PARTITION p_high VALUES LESS THAN (10000), PARTITION p_max VALUES LESS THAN MAXVALUE);
DELETE FROM test.t0; DELETE FROM test.t1; DELETE FROM test.t_key; DELETE FROM test.t_range;
INSERT INTO test.t0 VALUES (4, 'four'), (5, 'five'), (123, 'one two three');
INSERT INTO test.t1 VALUES (1, 'one'), (2, 'two');
INSERT INTO test.t_key VALUES (2, 'two'), (7, 'seven');
INSERT INTO test.t_range VALUES (50, 'low'), (500, 'mid'), (5000, 'high'), (50000, 'max');
CREATE DATABASE IF NOT EXISTS demo;
CREATE TABLE IF NOT EXISTS demo.items (
    id INT PRIMARY KEY, name VARCHAR(64) NOT NULL, price DECIMAL(10,2) NOT NULL);
REPLACE INTO demo.items VALUES
    (1, 'apple', 1.20), (2, 'banana', 0.50), (3, 'cherry', 4.75), (4, 'durian', 12.00), (5, 'elderberry', 3.30);
";

/// Loads the sample schema and creates the `demo`/`demo` account (root already logs in with an
/// empty password), then checks that `demo` can log in directly.
pub fn load(db: &MariaDb) -> anyhow::Result<()> {
    db.cli().sql(SAMPLE_SCHEMA).context("loading the sample schema")?;
    db.create_user("demo", "demo")?;
    db.cli()
        .user("demo")
        .password("demo")
        .database("test")
        .sql("SELECT COUNT(*) FROM t0")
        .context("logging in directly as demo/demo")?;
    Ok(())
}
