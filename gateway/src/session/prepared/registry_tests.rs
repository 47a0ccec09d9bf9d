use super::*;

fn ok(server_id: u32, params: u16) -> PrepareOk {
    PrepareOk { statement_id: server_id, columns: 2, params, warnings: 0 }
}

fn long_data(id: u32, param: u16, data: &[u8]) -> Vec<u8> {
    let mut p = vec![0x18];
    p.extend_from_slice(&id.to_le_bytes());
    p.extend_from_slice(&param.to_le_bytes());
    p.extend_from_slice(data);
    p
}

#[test]
fn ids_start_at_one_and_are_never_reused() {
    let mut r = Registry::default();
    let a = r.register("SELECT ?", &ok(900, 1)).unwrap();
    let b = r.register("SELECT 1", &ok(901, 0)).unwrap();
    assert_eq!((a, b), (1, 2), "client ids are the gateway's, not the server's");
    assert!(r.close(a).is_some());
    let c = r.register("SELECT ?", &ok(900, 1)).unwrap();
    assert_eq!(c, 3);
    let s = r.get(c).unwrap();
    assert_eq!((s.sql(), s.params(), s.columns(), s.kind()), ("SELECT ?", 1, 2, StmtKind::Select));
}

#[test]
fn unknown_ids_get_mariadbs_message_per_command() {
    let mut r = Registry::default();
    let e = r.lookup(42, Command::Execute).unwrap_err();
    assert_eq!(e.to_string(), "Unknown prepared statement handler (42) given to mysqld_stmt_execute");
    assert_eq!(e.code(), 1243);
    let e = r.lookup(7, Command::Fetch).unwrap_err();
    assert_eq!(e.to_string(), "Unknown prepared statement handler (7) given to mysqld_stmt_fetch");
    let e = r.lookup(7, Command::Reset).unwrap_err();
    assert_eq!(e.to_string(), "Unknown prepared statement handler (7) given to mysqld_stmt_reset");
    assert!(!Command::Close.answers() && !Command::SendLongData.answers() && Command::Execute.answers());
}

#[test]
fn last_statement_id_names_the_latest_prepare() {
    let mut r = Registry::default();
    assert!(r.resolve(LAST_STMT_ID).is_none());
    r.register("SELECT 1", &ok(5, 0)).unwrap();
    let b = r.register("SELECT 2", &ok(6, 0)).unwrap();
    assert_eq!(r.resolve(LAST_STMT_ID), Some(b));
    assert_eq!(r.lookup(LAST_STMT_ID, Command::Execute).unwrap().0, b);
    r.close(b);
    assert!(r.resolve(LAST_STMT_ID).is_none());
}

#[test]
fn begin_is_refused_other_statements_are_not() {
    for sql in ["BEGIN", "begin work", "START TRANSACTION", "start transaction read only"] {
        let e = Registry::default().refuse_prepare(sql).unwrap_or_else(|| panic!("{sql}"));
        assert_eq!(
            (e.code(), e.to_string().as_str()),
            (1295, "This command is not supported in the prepared statement protocol yet")
        );
    }
    for sql in ["COMMIT", "SELECT * FROM t WHERE c = ?", "INSERT INTO t VALUES (?)"] {
        assert!(Registry::default().refuse_prepare(sql).is_none(), "{sql}");
    }
}

#[test]
fn types_version_changes_only_with_other_types() {
    let mut r = Registry::default();
    let id = r.register("SELECT ?", &ok(1, 1)).unwrap();
    let (_, s) = r.lookup(id, Command::Execute).unwrap();
    assert_eq!(s.types_version(), 0);
    s.bind_types(&[8, 0]);
    assert_eq!(s.types_version(), 1);
    s.bind_types(&[8, 0]);
    assert_eq!(s.types_version(), 1, "same types again");
    s.bind_types(&[8, 0x80]);
    assert_eq!(s.types_version(), 2);
    assert_eq!(s.types().unwrap().get(0), Some((8, true)));
}

#[test]
fn long_data_is_buffered_until_execute_and_cleared_by_reset() {
    let mut r = Registry::new(10);
    let id = r.register("INSERT INTO t VALUES (?, ?)", &ok(1, 2)).unwrap();
    r.long_data(&long_data(id, 1, b"abc"));
    r.long_data(&long_data(id, 1, b"de"));
    r.long_data(&long_data(99, 0, b"ignored: unknown statement"));
    r.long_data(&[0x18, 1, 0]);
    assert_eq!(r.long_data_bytes(), 5);
    let (_, s) = r.lookup(id, Command::Execute).unwrap();
    assert_eq!(s.long_data().value(1), b"abcde");
    assert!(s.pending_error().is_none());
    s.executed();
    assert!(s.long_data().is_empty(), "an execute consumes long data");
    r.long_data(&long_data(id, 0, b"x"));
    r.lookup(id, Command::Reset).unwrap().1.reset();
    assert_eq!(r.long_data_bytes(), 0);
}

#[test]
fn long_data_errors_wait_for_execute_and_last_until_reset() {
    let mut r = Registry::new(8);
    let id = r.register("INSERT INTO t VALUES (?)", &ok(1, 1)).unwrap();
    r.long_data(&long_data(id, 3, b"x"));
    let err = r.get(id).unwrap().pending_error().cloned().unwrap();
    assert_eq!((err.code(), err.to_string().as_str()), (1210, "Incorrect arguments to mysqld_stmt_send_long_data"));
    r.lookup(id, Command::Execute).unwrap().1.executed();
    assert!(r.get(id).unwrap().pending_error().is_some(), "stays until COM_STMT_RESET");
    r.lookup(id, Command::Reset).unwrap().1.reset();
    r.long_data(&long_data(id, 0, b"12345"));
    r.long_data(&long_data(id, 0, b"6789"));
    let err = r.get(id).unwrap().pending_error().cloned().unwrap();
    assert_eq!(err.code(), 1105);
    assert!(err.to_string().contains("mysql_send_long_data() is longer than 'max_allowed_packet' bytes"));
    assert_eq!(r.long_data_bytes(), 0, "an overflowing statement's buffer is dropped");
}

#[test]
fn cursor_owner_is_replaced_by_the_next_execute() {
    let mut r = Registry::default();
    let id = r.register("SELECT * FROM t", &ok(1, 0)).unwrap();
    r.open_cursor(id, 17);
    assert_eq!((r.cursor(id), r.has_cursor()), (Some(17), true));
    r.end_cursor(id);
    assert_eq!((r.cursor(id), r.has_cursor()), (None, false));
    r.open_cursor(id, 18);
    r.close(id);
    assert!(!r.has_cursor(), "a closed statement's cursor is gone");
    r.open_cursor(id, 19);
    assert!(!r.has_cursor(), "no cursor for a statement that is not open");
}

#[test]
fn a_session_holds_at_most_max_statements() {
    let mut r = Registry::default();
    for n in 0..MAX_STATEMENTS {
        r.register(&format!("SELECT {n}"), &ok(n as u32, 0)).unwrap_or_else(|e| panic!("statement {n}: {e}"));
    }
    let refused = r.refuse_prepare("SELECT 'one more'").expect("refused before asking a server");
    assert_eq!(
        (refused.code(), refused.to_err().sql_state, refused.to_string()),
        (
            1461,
            *b"42000",
            "Can't create more than max_prepared_stmt_count statements (current value: 16382)".to_string()
        )
    );
    assert!(r.register("SELECT 'one more'", &ok(1, 0)).is_err(), "register refuses too");
    assert!(r.close(1).is_some());
    assert!(r.refuse_prepare("SELECT 'one more'").is_none(), "a closed statement makes room");
}

#[test]
fn a_session_holds_at_most_max_text_bytes() {
    let mut r = Registry::default();
    let big = format!("SELECT '{}'", "x".repeat(MAX_TEXT_BYTES / 4));
    let ids: Vec<u32> = (0..3).map(|n| r.register(&big, &ok(n, 0)).expect("fits")).collect();
    let e = r.refuse_prepare(&big).expect("a fourth quarter and more does not fit");
    assert_eq!(e.code(), 1461);
    assert!(e.to_string().contains("64 MiB"), "{e}");
    assert!(r.refuse_prepare("SELECT 1").is_none(), "a short one still fits");
    r.close(ids[0]);
    assert!(r.refuse_prepare(&big).is_none(), "closing gives the bytes back");
}

#[test]
fn an_execution_reuses_the_analysis_kept_for_its_sql_mode_and_reads_again_in_another() {
    let mut r = Registry::default();
    let sql = r#"SELECT c FROM t WHERE "id" = ?"#;
    let id = r.register(sql, &ok(900, 1)).unwrap();
    let ansi = Mode { nbe: false, ansi_quotes: true };
    let (_, s) = r.lookup(id, Command::Execute).unwrap();
    let first = s.analysed(Mode::default());
    assert!(Arc::ptr_eq(&first, &s.analysed(Mode::default())), "the same mode reads the text once");
    // Under ANSI_QUOTES "id" is the key column compared with the placeholder; by default a string.
    let quoted = s.analysed(ansi);
    assert_eq!(quoted.mode(), ansi);
    assert!(first.analysis().keys.is_empty(), "{:?}", first.analysis().keys);
    let bound = quoted.bind(&[sql::Value::Int(4)]);
    assert_eq!(bound.keys.iter().map(|k| &k.value).collect::<Vec<_>>(), [&sql::Value::Int(4)]);
    assert!(Arc::ptr_eq(&quoted, &s.analysed(ansi)));
    assert!(!Arc::ptr_eq(&quoted, &s.analysed(Mode::default())), "back in the default mode: read again");
}

#[test]
fn a_prepared_kill_is_known_from_its_text() {
    let mut r = Registry::default();
    let kill = r.register("KILL QUERY ?", &ok(900, 1)).unwrap();
    let select = r.register("SELECT 1", &ok(901, 0)).unwrap();
    assert!(r.get(kill).unwrap().kill().is_some());
    assert!(r.get(select).unwrap().kill().is_none());
}
