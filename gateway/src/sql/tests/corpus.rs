//! The differential corpus: sysbench's statements, generated variants and MySQL edge cases.

/// sysbench's statement templates (oltp_common.lua), `{t}` = table, `{a}`, `{b}`, … = values.
const SYSBENCH: [&str; 9] = [
    "SELECT c FROM {t} WHERE id={a}",
    "SELECT c FROM {t} WHERE id BETWEEN {a} AND {b}",
    "SELECT SUM(k) FROM {t} WHERE id BETWEEN {a} AND {b}",
    "SELECT c FROM {t} WHERE id BETWEEN {a} AND {b} ORDER BY c",
    "SELECT DISTINCT c FROM {t} WHERE id BETWEEN {a} AND {b} ORDER BY c",
    "UPDATE {t} SET k=k+1 WHERE id={a}",
    "UPDATE {t} SET c={s} WHERE id={a}",
    "DELETE FROM {t} WHERE id={a}",
    "INSERT INTO {t} (id, k, c, pad) VALUES ({a}, {b}, {s}, {s})",
];

const TABLES: [&str; 8] =
    ["sbtest1", "sbtest7", "`sbtest2`", "sbtest.sbtest3", "`sbtest`.`sbtest4`", "SBTEST5", "t_`x`", "`we``ird`"];

const VALUES: [&str; 24] = [
    "5",
    "?",
    "0",
    "-7",
    "- 7",
    "9223372036854775807",
    "18446744073709551615",
    "99999999999999999999",
    "1.50",
    "1e3",
    "'abc'",
    "\"dq\"",
    "'it''s'",
    "'a\\'b\\n'",
    "X'4142'",
    "0x0A0b",
    "NULL",
    "TRUE",
    "_utf8mb4'x'",
    "_binary 'y'",
    "ABS(-123)",
    "3+4*2",
    "7 DIV 2",
    "CONCAT('a', 1)",
];

const MORE_VALUES: [&str; 14] = [
    "SUBSTR('hello', 2, 3)",
    "SUBSTRING('hello', -3)",
    "LOWER('AbC')",
    "UCASE('x')",
    "TRIM('  a ')",
    "LTRIM(' a')",
    "RTRIM('a ')",
    "LENGTH('abc')",
    "NOW()",
    "CURRENT_TIMESTAMP",
    "7/2",
    "10 % 3",
    "(5)",
    "k + 1",
];

const STRINGS: [&str; 4] = ["'xyz'", "?", "'0123-45'", "CONCAT('a','b')"];

/// sysbench statements over tables and values.
fn sysbench(out: &mut Vec<String>) {
    for (ti, t) in TABLES.iter().enumerate() {
        for (vi, a) in VALUES.iter().chain(MORE_VALUES.iter()).enumerate() {
            let tmpl = SYSBENCH[(ti + vi) % SYSBENCH.len()];
            let b = VALUES[(vi + 3) % VALUES.len()];
            let s = STRINGS[(ti + vi) % STRINGS.len()];
            out.push(tmpl.replace("{t}", t).replace("{a}", a).replace("{b}", b).replace("{s}", s));
            for tmpl in SYSBENCH {
                if vi % 4 == ti % 4 {
                    out.push(tmpl.replace("{t}", t).replace("{a}", a).replace("{b}", b).replace("{s}", s));
                }
            }
        }
    }
}

/// Spelling variants of one statement: case, spacing, comments, hints.
fn variants(stmt: &str, out: &mut Vec<String>) {
    out.push(stmt.to_owned());
    out.push(stmt.to_ascii_lowercase());
    out.push(stmt.replace(' ', "\n\t "));
    out.push(stmt.replace('=', " = "));
    out.push(format!("/* app comment */ {stmt}"));
    out.push(format!("{stmt} -- trailing\n"));
    out.push(format!("{stmt} # hash comment"));
    out.push(format!("{stmt};"));
    if let Some((head, tail)) = stmt.split_once(' ') {
        out.push(format!("{head} /*+ READ_CONSISTENCY(WEAK) */ {tail}"));
        out.push(format!("{head} /*+ODP: target_db_server=127.0.0.1:2881,127.0.0.2:2881 */ {tail}"));
        out.push(format!("/* target_db_server=10.0.0.1:2881 */ {head} {tail}"));
        out.push(format!("{head} /* +READ_CONSISTENCY(STRONG) */ {tail}"));
    }
}

/// Point selects with aliases, qualifiers, IN lists, locks, partitions, extra predicates.
fn selects(out: &mut Vec<String>) {
    let froms =
        ["t1", "t1 a", "t1 AS a", "db.t1 a", "`db`.`t1` AS `a`", "t1 PARTITION (p0)", "t1 PARTITION (p1, p2) x"];
    let preds = [
        "id = 1",
        "1 = id",
        "a.id = 2",
        "id IN (1, 2, 3)",
        "id IN (?, ?)",
        "id = 1 AND k = 2",
        "id = 1 AND k > 2",
        "id = 1 OR k = 2",
        "NOT id = 1",
        "id NOT IN (1, 2)",
        "id = k",
        "id = 1 AND (k = 2 OR k = 3)",
        "(id = 4)",
        "id = 1 AND c LIKE 'a%'",
        "id IS NULL",
        "id IS NOT NULL AND k = 5",
        "id <=> 5",
        "id >= 1 AND id < 10",
        "id = ? AND k = ?",
        "id IN (1, k)",
        "id = NOW()",
        "id = (SELECT 1)",
        "id = @v",
        "id = -(3)",
        "c = 'a' 'b'",
        "id = 1 XOR k = 2",
        "id BETWEEN 1 AND 5 AND k = 3",
        "t1.id = 9",
        "db.t1.id = 9",
        "5 < id AND a.id <= ? AND (id) > 1",
        "id BETWEEN ? AND 10 - 1 AND id NOT BETWEEN 2 AND 3",
        "id >= '2024-01-01' AND id < -1.5e2 AND id > k",
        "id <= _utf8mb4'x' AND 7 >= id",
    ];
    let tails = ["", " ORDER BY id", " LIMIT 10", " ORDER BY id DESC LIMIT 5, 10", " GROUP BY c", " LIMIT ? OFFSET ?"];
    let locks = [
        "",
        " FOR UPDATE",
        " FOR UPDATE NOWAIT",
        " FOR UPDATE SKIP LOCKED",
        " FOR SHARE",
        " LOCK IN SHARE MODE",
        " FOR UPDATE WAIT 5",
        " FOR SHARE NOWAIT",
    ];
    for (i, from) in froms.iter().enumerate() {
        for (j, pred) in preds.iter().enumerate() {
            let tail = tails[(i + j) % tails.len()];
            let lock = locks[(i * 3 + j) % locks.len()];
            out.push(format!("SELECT * FROM {from} WHERE {pred}{tail}{lock}"));
            out.push(format!("select c, k FROM {from} where {pred}"));
        }
    }
}

/// INSERT / REPLACE forms.
fn inserts(out: &mut Vec<String>) {
    let heads = ["INSERT INTO", "INSERT", "INSERT IGNORE INTO", "REPLACE INTO", "insert low_priority into", "REPLACE"];
    let bodies = [
        "t (id, c) VALUES (1, 'a')",
        "t (id, c) VALUES (1, 'a'), (2, 'b'), (3, 'c')",
        "t VALUES (1, 'a', 2)",
        "t VALUES (?, ?, ?), (?, ?, ?)",
        "t (id, c) VALUE (-1, NULL)",
        "t SET id = 5, c = 'x'",
        "db.t (`id`, `c`) VALUES (0x01, X'ff')",
        "t PARTITION (p1) (id) VALUES (7)",
        "t (id, c) VALUES (1, DEFAULT)",
        "t (id, ts) VALUES (1, NOW())",
        "t (id, c) VALUES (ABS(-5), CONCAT('a', 'b'))",
        "t (id, c) VALUES (1, 'a') ON DUPLICATE KEY UPDATE c = 'b'",
        "t (id, c) VALUES (1, 'a') ON DUPLICATE KEY UPDATE c = VALUES(c)",
        "t (id, c) SELECT id, c FROM s WHERE id = 1",
        "t (id, c) VALUES (1, 2, 3)",
        "t (id) VALUES (LAST_INSERT_ID())",
        "t (id, c) VALUES (@a, @b)",
        "t (id) VALUES (1 + ?)",
    ];
    for head in heads {
        for body in bodies {
            out.push(format!("{head} {body}"));
        }
    }
    let mut rows = String::new();
    for r in 0..10 {
        rows.push_str(&format!("{}({r}, {}, 'c{r}', 'pad', {}.5)", if r > 0 { ", " } else { "" }, r * 7, r));
    }
    out.push(format!("INSERT INTO t5 (a, b, c, d, e) VALUES {rows}"));
}

/// Transaction, session and miscellaneous statements, MySQL edge cases.
const EDGE: &[&str] = &[
    // An escape MySQL reads as the letter itself (`\a` is `a`, `\f` is `f`): the reference
    // tokenizer once read BEL and form feed, so the key went to another partition.
    "INSERT INTO t0 VALUES (8,'x\\ay')",
    "SELECT c FROM t WHERE id = 'p\\fq' AND k = \"r\\as\"",
    "SELECT * FROM `a``b` WHERE id = 'it''s'",
    // A unary plus is ignored by MySQL: `+5` is 5; `+id` is no longer a bare column.
    "SELECT c FROM t WHERE id = +5",
    "SELECT c FROM t WHERE +id = 5",
    "INSERT INTO t0 VALUES (+1, +'a')",
    "SELECT c FROM t WHERE id = - +5",
    // `<=>` is an equality for locating; parentheses change nothing.
    "SELECT c FROM t WHERE id <=> 5",
    "SELECT c FROM t WHERE id <=> NULL AND k = 1",
    "SELECT c FROM t WHERE (id) = (5)",
    "SELECT c FROM t WHERE ((t.id)) = ((?))",
    "SELECT c FROM t WHERE (id) IN ((1), (2))",
    // `@@global` without a dot is a variable's name, not a scope.
    "SET @@global= 0",
    "SET @@global.autocommit = 0, @@session = 1",
    // Typed temporal literals are their strings.
    "SELECT c FROM t WHERE d = DATE '2024-01-02'",
    "SELECT c FROM t WHERE d = TIMESTAMP '2024-01-02 03:04:05' AND id = 1",
    "BEGIN",
    "begin work",
    "START TRANSACTION",
    "START TRANSACTION READ ONLY",
    "START TRANSACTION READ WRITE",
    "START TRANSACTION WITH CONSISTENT SNAPSHOT",
    "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
    "START TRANSACTION READ ONLY, WITH CONSISTENT SNAPSHOT",
    "COMMIT",
    "commit work",
    "ROLLBACK",
    "ROLLBACK WORK",
    "ROLLBACK TO SAVEPOINT s1",
    "SAVEPOINT s1",
    "SET autocommit=0",
    "SET autocommit = 1",
    "SET AUTOCOMMIT=ON",
    "set autocommit = off",
    "SET @@autocommit = 0",
    "SET @@session.autocommit = 1",
    "SET SESSION autocommit = 0",
    "SET GLOBAL max_connections = 100",
    "SET @@global.max_connections = 100",
    "SET @a = 1",
    "SET @a := 1, @b = 'x'",
    "SET NAMES utf8mb4",
    "SET NAMES 'utf8mb4' COLLATE 'utf8mb4_bin'",
    "SET CHARACTER SET utf8",
    "SET CHARSET utf8",
    "SET TRANSACTION ISOLATION LEVEL READ COMMITTED",
    "SET SESSION TRANSACTION READ ONLY",
    "SET GLOBAL TRANSACTION ISOLATION LEVEL SERIALIZABLE",
    "SET sql_mode = 'STRICT_TRANS_TABLES'",
    "SET ob_read_consistency = 'WEAK'",
    "SET @proxy_route_policy = 'follower_first'",
    "SET x = 1, GLOBAL y = 2",
    "USE test",
    "USE `my db`",
    "use sbtest",
    "SHOW TABLES",
    "SHOW DATABASES",
    "SHOW VARIABLES LIKE 'x%'",
    "SHOW PROCESSLIST",
    "SHOW CREATE TABLE t",
    "SHOW WARNINGS",
    "CREATE TABLE t (id INT PRIMARY KEY)",
    "CREATE TEMPORARY TABLE tmp (id INT)",
    "DROP TABLE t",
    "ALTER TABLE t ADD COLUMN c INT",
    "TRUNCATE TABLE t",
    "CREATE INDEX i ON t (c)",
    "CREATE DATABASE d",
    "CALL p(1, 2)",
    "LOCK TABLES t READ",
    "LOCK TABLE t WRITE",
    "UNLOCK TABLES",
    "XA START 'x'",
    "XA END 'x'",
    "XA COMMIT 'x'",
    "EXPLAIN SELECT * FROM t WHERE id = 1",
    "EXPLAIN ROUTE SELECT * FROM t WHERE id = 1",
    "explain route update t set c = 1 where id = 2",
    "PREPARE s FROM 'SELECT * FROM t WHERE id = ?'",
    "EXECUTE s USING @a",
    "DEALLOCATE PREPARE s",
    "DROP PREPARE s",
    "SELECT 1",
    "SELECT @@version",
    "SELECT LAST_INSERT_ID()",
    "SELECT FOUND_ROWS()",
    "SELECT ROW_COUNT()",
    "SELECT GET_LOCK('l', 10)",
    "SELECT RELEASE_LOCK('l')",
    "SELECT @a",
    "SELECT 1 FROM DUAL",
    "SELECT * FROM t1 JOIN t2 ON t1.id = t2.id WHERE t1.id = 5",
    "SELECT * FROM t1, t2 WHERE t1.id = 1",
    "SELECT * FROM (SELECT * FROM t) x WHERE id = 1",
    "SELECT * FROM t WHERE id = 1 UNION SELECT * FROM s",
    "WITH c AS (SELECT 1) SELECT * FROM c",
    "SELECT * FROM t WHERE id IN (SELECT id FROM s)",
    "SELECT * FROM t FORCE INDEX (i) WHERE id = 1",
    "SELECT SQL_CALC_FOUND_ROWS * FROM t WHERE id = 1 LIMIT 1",
    "SELECT * FROM t WHERE id = 1 FOR UPDATE OF t",
    "UPDATE t1, t2 SET t1.c = 1 WHERE t1.id = t2.id",
    "UPDATE t SET c = DEFAULT WHERE id = 3",
    "UPDATE LOW_PRIORITY IGNORE t SET c = 1 WHERE id = 3 ORDER BY id LIMIT 1",
    "DELETE FROM t WHERE id = 1 ORDER BY id LIMIT 1",
    "DELETE QUICK IGNORE FROM t WHERE id IN (1,2)",
    "DELETE t1 FROM t1 JOIN t2 ON t1.id = t2.id WHERE t2.id = 3",
    "DELETE FROM t AS a WHERE a.id = 1",
    "SELECT * FROM t WHERE id = 1 -- comment with ; semicolon",
    "SELECT * FROM t WHERE c = 'semi;colon'",
    "SELECT /*! STRAIGHT_JOIN */ * FROM t WHERE id = 1",
    "SELECT * FROM t /*!50000 WHERE id = 1 */",
    "SELECT * FROM t WHERE c = N'abc'",
    "SELECT * FROM t WHERE c = b'101'",
    "SELECT * FROM t WHERE id = .5",
    "SELECT * FROM t WHERE id = 1.",
    "SELECT * FROM t WHERE `select` = 1",
    "SELECT * FROM t WHERE date = '2020-01-01'",
    "SELECT * FROM t WHERE id = CAST('5' AS SIGNED)",
    "SELECT * FROM t WHERE id = CASE WHEN 1 THEN 2 END",
    "SELECT * FROM t WHERE c = TRIM(LEADING 'x' FROM 'xxa')",
    "SELECT * FROM t WHERE c = SUBSTRING('abc' FROM 2)",
    "SELECT * FROM t WHERE c = 'a' COLLATE utf8mb4_bin",
    "SELECT * FROM t WHERE id = +5",
    "SELECT * FROM t WHERE id = ~5",
    "SELECT * FROM t WHERE id = 1 && k = 2",
    "SELECT * FROM t WHERE id = 1 || k = 2",
    "SELECT * FROM t WHERE id = 1 <> 2",
    "SELECT * FROM t WHERE id = 1 = 1",
    "SELECT * FROM t WHERE (id, k) = (1, 2)",
    "SELECT * FROM t WHERE id = 'a' 'b'",
    "SELECT * FROM t WHERE id = 1 AND id = 2",
    "SELECT * FROM t WHERE c = 'äöü'",
    "SELECT * FROM tä WHERE id = 1",
    "SELECT * FROM t WHERE id = 2 LOCK IN SHARE MODE",
    "SELECT * FROM t WHERE id = @@x",
    "HELP 'x'",
    "DO 1",
    "KILL 5",
    "KILL QUERY 5",
    "LOAD DATA LOCAL INFILE 'f' INTO TABLE t",
    "SELECT * FROM t INTO OUTFILE 'x'",
    "REPLACE INTO t SELECT * FROM s",
    "GRANT ALL ON *.* TO u",
    "FLUSH PRIVILEGES",
    "ANALYZE TABLE t",
    "SELECT * FROM t WHERE id = 1e400",
    "SELECT * FROM t WHERE id = 0x",
    "SELECT * FROM t WHERE id = x'4'",
    "SELECT * FROM t WHERE id = --5",
    "SELECT * FROM t WHERE id = -- 5\n 6",
    "SELECT * FROM t WHERE c = \"a\"\"b\"",
    "SELECT * FROM t WHERE c = 'a\\%b'",
    "SELECT * FROM t WHERE c = 'tab\\tz\\0'",
    "SELECT * FROM `t``q` WHERE id = 1",
];

/// Statements the two paths once disagreed on (found by fuzz/fuzz_targets/sql_agree.rs), almost
/// all refused by the server: the fast path declines each, so the reference path decides alone.
/// The differential test runs them with the rest; `fast_path_declines_what_it_once_guessed`
/// checks the declines (and that [`NEAR_DISAGREED`] is still answered).
pub const DISAGREED: &[&str] = &[
    // A select list ending on an operator or on a keyword that wants an operand: the reference
    // parser reads `FROM` as a column name (`SQL_CALC_FOUND_SOWS * FROM`) and finds no table.
    "SELECT SQL_CALC_FOUND_SOWS * FROM t WHERE id = 1",
    "SELECT c* FROM t_hash WHERE c1 != 2002",
    "SELECT SQL_CACHE * FROM t WHERE id = 1",
    "SELECT a + FROM t WHERE id = 1",
    "SELECT a <= FROM t WHERE id = 1",
    "SELECT a AND FROM t WHERE id = 1",
    "SELECT a NOT FROM t WHERE id = 1",
    "SELECT a, FROM t WHERE id = 1",
    "SELECT FROM t WHERE id = 1",
    // A variable glued to a name, number or variable: two tokens to the server, one name to the
    // reference tokenizer.
    "SELECT a@v",
    "SELECT ?, c2@GIN",
    "SELECT a@v FROM t WHERE id = 1",
    "SELECT c FROM t WHERE id = k@v",
    "SELECT 1@@x",
    "select @@S@SSION.socket",
    "SELECT @a@b FROM t WHERE id = 1",
    // A placeholder glued to a number: `?2` is one numbered placeholder to the reference
    // tokenizer, and no `?` placeholder.
    "SELECT ?2 FROM t0",
    "SELECT c FROM t WHERE id = ?1",
    "UPDATE t SET c = ?0x1f WHERE id = ?",
    // An empty back-quoted alias right after the table: no alias to the fast path, an empty
    // one to the reference path.
    "SELECT * FROM t``#(q` WHERE id = 0",
    "SELECT * FROM t `` WHERE id = 0",
    "SELECT * FROM t AS `` WHERE id = 0",
    // An `END` that closes no `CASE`: an operand to the fast path, to the reference parser the
    // end of something else (it finds no table).
    "SELECT CA2 END FROM t WHERE id = 0",
    // A `CASE` the server refuses: the reference parser finds no table. The fast path now leaves
    // every select list with `CASE` or `END` to the reference parser.
    "SELECT CASE END FROM t WHERE id = 1",
    "SELECT CASE x END FROM t WHERE id = 1",
    "SELECT CASE WHEN END FROM t WHERE id = 1",
    "SELECT CASE END, c FROM t WHERE id = 1",
    "SELECT a, END FROM t WHERE id = 0",
    "SELECT CASE WHEN k = 1 THEN 2 END END FROM t WHERE id = 1",
    // A select modifier word after an operator, then `*`: a product to the reference parser,
    // with `FROM` its operand.
    "SELECT 0++++++++SQL_CALC_FOUND_ROWS * FROM YEARTON",
    "SELECT a, DISTINCT * FROM t WHERE id = 1",
    // A table alias without `AS` that `sqlparser` keeps for other dialects' clauses (the server
    // takes these: `GLOBAL` is not reserved to it).
    "SELECT * FROM tT GLOBAL WHERE id = --5",
    "SELECT * FROM `t``q`GLOBAL WHERE id = 2",
    "SELECT * FROM t sample WHERE id = 1",
    // `REPLACE` as a table name: reserved to the server, SQLite's conflict clause to the
    // reference parser (`UPDATE REPLACE t` updates `t`).
    "UPDATE REPLACE t SET c = 'a' WHERE id = 0x1",
    // A variable called like a function: a call of `GET_LOCK` to the reference tokenizer.
    "SELECT @@session.GET_LOCK('a', 1)",
    "SELECT @v ('a')",
    // `--` and a control byte that is not whitespace: a comment to the server, two minus signs
    // to the reference tokenizer.
    "SELECT 1 --\0 @v",
    "SELECT c FROM t WHERE id = 1 --\x01 AND k = @v",
    // A variable glued to a quoted name or a string before it: an account (`'u'@'h'`) to the
    // server, a quoted token and a variable to the fast lexer.
    "SELECT `x`@`a`",
    "SELECT 'x'@a",
    "SELECT `c``END`@```autocommit`",
    // An unquoted variable name with non-ASCII bytes: `sqlparser` ends it at the first
    // character it does not take.
    "SET sql_mode = '', @v\u{fffd}27.0.0 = 'x'",
    "SELECT * FROM t WHERE id = @@vé",
    // A user variable's unquoted name with a dot: the name and a qualified name after it to the
    // reference tokenizer, which takes `FROM` as the column.
    "SELECT GET_LOCK('x', 1), @v. FROM dual",
];

/// Statements next to those of [`DISAGREED`], mostly ones the server takes: the fast path still
/// answers them, and agrees.
pub const NEAR_DISAGREED: &[&str] = &[
    "SELECT SQL_CALC_FOUND_ROWS * FROM t WHERE id = 1",
    "SELECT DISTINCT * FROM t WHERE id = 1",
    "SELECT t.* FROM t WHERE id = 1",
    "SELECT a, t.* FROM t WHERE id = 1",
    "SELECT c * 2 FROM t WHERE id = 1",
    "SELECT NULL FROM t WHERE id = 1",
    "SELECT a IS UNKNOWN FROM t WHERE id = 1",
    "SELECT CURRENT_TIMESTAMP FROM t WHERE id = 1",
    "SELECT @v FROM t WHERE id = @w",
    "SELECT ? FROM t WHERE id = ? - 1",
    // A variable glued to a keyword: two tokens on both paths (the reference path splits
    // `sqlparser`'s one word); `SELECT OR@v` is refused by the server, the rest taken.
    "SELECT OR@ERSIGNED",
    "SELECT 1 AND@a",
    "SELECT@a",
    "SELECT 1 FROM t WHERE id = 1 AND@a = 1",
    // `<@` is one operator token to `sqlparser`, `<` and a variable to the server.
    "SELECT * FROM t WHERE id<@v AND k = 1",
    "SELECT * FROM t WHERE id<@6 AND k = 1",
    "SELECT B<@Jch",
    "SELECT c FROM t WHERE id = 2 AND k<@@x",
    // `INSERT … SET` with a back-quoted column: the reference path kept the quotes.
    "INSERT````SET`R`=-5",
    "INSERT INTO t SET `id` = 5, `c` = 'x'",
    "REPLACE t SET `we``ird` = 1",
    // A back-quoted alias the fast path reads, with and without AS.
    "SELECT * FROM t `a` WHERE id = 0",
    "SELECT * FROM t AS `a b` WHERE id = 0",
    "SELECT DISTINCT SQL_NO_CACHE * FROM t WHERE id = 1",
    // Next to the aliases `sqlparser` keeps: with `AS`, or another word.
    "SELECT * FROM t AS GLOBAL WHERE id = 1",
    "SELECT * FROM t globals WHERE id = 1",
    "UPDATE t SET c = REPLACE(c, 'a', 'b') WHERE id = 1",
    "SELECT @@session.autocommit, @v FROM t WHERE id = 1",
    "SELECT 1 --\t@v\n",
    "SELECT 1 --\x0b@v\n",
    "SET @v = 'é'",
];

/// Multi-statement texts (checked through `analyze`, not differentially).
pub const MULTI: &[&str] = &[
    "BEGIN; UPDATE T0 SET C2 = 'obproxy' WHERE C1=123; INSERT INTO T1 (C1, C2) VALUES (12, 'odp'); COMMIT;",
    "INSERT INTO t1 (C1, C2) VALUES (1, 'ob'), (2, 'odp'); UPDATE t0 SET C2 = 'odp' WHERE C1=123;",
];

/// The whole corpus.
pub fn corpus() -> Vec<String> {
    let mut base = Vec::new();
    sysbench(&mut base);
    selects(&mut base);
    inserts(&mut base);
    base.extend(EDGE.iter().chain(DISAGREED).chain(NEAR_DISAGREED).map(|s| (*s).to_owned()));
    let mut out = Vec::new();
    for (i, s) in base.iter().enumerate() {
        if i % 3 == 0 || s.starts_with("SELECT c FROM sbtest1") || s.starts_with("INSERT INTO t5") {
            variants(s, &mut out);
        } else {
            out.push(s.clone());
        }
    }
    out
}
