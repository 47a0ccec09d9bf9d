//! Worked examples of the public API.

use crate::sql::*;

#[test]
fn point_select() {
    let an = analyze("SELECT c FROM sbtest1 WHERE id=5");
    assert_eq!(an.path, Path::Fast);
    assert_eq!(an.kind, StmtKind::Select);
    assert_eq!(an.tables[0].name, "sbtest1");
    assert_eq!(an.keys[0].value, Value::Int(5));
}

#[test]
fn placeholders_bind_at_execute() {
    let an = analyze("UPDATE sbtest1 SET c=? WHERE id=?");
    assert_eq!((an.path, an.placeholders), (Path::Fast, 2));
    assert_eq!(an.keys[0].value, Value::Placeholder(1));
    let bound = an.bind(&[Value::str(b"x".to_vec()), Value::Int(42)]);
    assert_eq!(bound.keys[0].value, Value::Int(42));
}

#[test]
fn hints_locks_and_pins() {
    let an = analyze("SELECT /*+ READ_CONSISTENCY(WEAK) */ * FROM t0 WHERE c1 = ABS(-123) FOR UPDATE SKIP LOCKED");
    assert_eq!(an.hints.consistency, Some(Consistency::Weak));
    assert_eq!(an.keys[0].value, Value::Int(123));
    assert_eq!(an.lock, Some(LockRead { strength: LockStrength::Update, wait: LockWait::SkipLocked }));
    let an = analyze("SELECT * FROM t WHERE id = 1 FOR UPDATE WAIT 3");
    assert_eq!(an.lock.map(|l| l.wait), Some(LockWait::Wait(3)));
    assert!(analyze("SELECT GET_LOCK('a', 1)").pins.contains(Pins::USER_LOCK));
    assert!(analyze("INSERT INTO t VALUES (@v)").pins.contains(Pins::USER_VAR));
    assert!(analyze("CREATE TEMPORARY TABLE x (a INT)").pins.contains(Pins::TEMP_TABLE));
    assert!(analyze("LOCK TABLES t WRITE").pins.contains(Pins::LOCK_TABLES));
}

#[test]
fn or_and_not_give_no_values() {
    assert!(analyze("SELECT * FROM t WHERE id = 1 OR id = 2").keys.is_empty());
    assert!(analyze("SELECT * FROM t WHERE NOT id = 1").keys.is_empty());
    assert_eq!(analyze("SELECT * FROM t WHERE id IN (1, 2) AND k = 3").keys.len(), 3);
    assert_eq!(analyze("SELECT * FROM t WHERE d = NOW()").keys[0].value, Value::Unknown);
}

#[test]
fn inserts_and_session_statements() {
    let an = analyze("INSERT INTO t VALUES (1, 'a'), (2, 'b')");
    assert_eq!(an.keys[2].column, Column::Position(0));
    assert_eq!(an.keys[2].row, 1);
    let an = analyze("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY");
    assert!(an.txn.contains(TxnFlags::CONSISTENT_SNAPSHOT) && an.txn.contains(TxnFlags::READ_ONLY));
    let an = analyze("SET autocommit = 0");
    assert_eq!((an.kind, an.autocommit), (StmtKind::Set, Some(false)));
    let an = analyze("EXPLAIN ROUTE SELECT * FROM t WHERE id = 1");
    assert_eq!(an.inner_sql.as_deref(), Some("SELECT * FROM t WHERE id = 1"));
    assert_eq!(analyze("garbage ((( '").kind, StmtKind::Other);
}
