//! The prepared-statement machinery of `gateway::session::prepared` against a real MariaDB,
//! without the gateway process: the library's EXECUTE rewrite (a new server id, the remembered
//! types re-sent after a fresh prepare) is accepted and answers what the original connection
//! answers; the library's binary-value decoding reads parameters as the server does; the
//! library's error packets are the server's, code, SQL state and text.
//!
//! One test function owns the server so it is stopped (by PID, on drop) when the test ends.

use gateway::session::prepared::answer::PrepareOk;
use gateway::session::prepared::binary::{self, ty};
use gateway::session::prepared::execute::{self, Execute};
use gateway::session::prepared::{text, Command, LongData, PreparedError, Registry};
use gateway::sql::Value;
use gateway_tests::mariadb::MariaDb;
use gateway_tests::raw::{self, cmd, lenenc, Param, RawConn};

const SQL: &str = "SELECT id, v FROM t WHERE id = ? OR v = ? ORDER BY id";

fn login(db: &MariaDb) -> RawConn {
    RawConn::login(db.addr(), "root", "", Some("test")).expect("login")
}

/// A client EXECUTE payload (command byte first) with or without the types.
fn execute_payload(id: u32, params: &[Param], with_types: bool) -> Vec<u8> {
    let mut b = vec![cmd::STMT_EXECUTE];
    b.extend_from_slice(&id.to_le_bytes());
    b.push(0);
    b.extend_from_slice(&1u32.to_le_bytes());
    let mut bitmap = vec![0u8; params.len().div_ceil(8)];
    for (i, p) in params.iter().enumerate() {
        if matches!(p.value, raw::ParamValue::Null) {
            bitmap[i / 8] |= 1 << (i % 8);
        }
    }
    b.extend_from_slice(&bitmap);
    b.push(u8::from(with_types));
    if with_types {
        for p in params {
            b.extend_from_slice(&[p.ty, if p.unsigned { 0x80 } else { 0 }]);
        }
    }
    for p in params {
        if let raw::ParamValue::Bytes(v) = &p.value {
            b.extend_from_slice(v);
        }
    }
    b
}

/// Sends a whole command payload and reads the complete answer.
fn send(c: &mut RawConn, payload: &[u8]) -> Vec<Vec<u8>> {
    c.command(payload[0], &payload[1..]).expect("write");
    c.read_response(false).expect("read answer")
}

fn err_of(answer: &[Vec<u8>]) -> raw::ErrPacket {
    raw::parse_err(&answer[0]).unwrap_or_else(|| panic!("expected an ERR, got {:02x?}", &answer[0]))
}

/// The server's ERR equals the one the library builds: code, SQL state and message.
fn assert_same_err(server: &raw::ErrPacket, ours: &PreparedError) {
    let e = ours.to_err();
    let ours = (e.code, String::from_utf8_lossy(&e.sql_state).into_owned(), e.message);
    assert_eq!((server.code, server.sql_state.clone(), server.message.clone()), ours);
}

#[test]
fn prepared_machinery_against_mariadb() {
    let db = MariaDb::start("prepared-rewrite").expect("starting MariaDB");
    db.sql("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20)); INSERT INTO t VALUES (1,'a'),(2,'b'),(3,'c'),(4,'d')")
        .expect("schema");
    rewritten_execute_is_accepted_with_the_same_result(&db);
    decoded_values_match_what_the_server_read(&db);
    error_packets_match_the_server(&db);
    long_data_errors_match_the_server(&db);
    text_protocol_errors_match_the_server(&db);
}

fn rewritten_execute_is_accepted_with_the_same_result(db: &MariaDb) {
    let params = [Param::longlong(2), Param::string("c")];
    // Connection A: the client's own connection. First EXECUTE binds the types, the second
    // (what the gateway must re-route) carries none.
    let mut a = login(db);
    let pa = a.prepare(SQL).expect("prepare on A");
    let first = send(&mut a, &execute_payload(pa.id, &params, true));
    let client_packet = execute_payload(pa.id, &params, false);
    let on_a = send(&mut a, &client_packet);
    assert_eq!(first, on_a, "the server remembered the types");
    assert!(on_a.len() > 5 && raw::parse_err(&on_a[0]).is_none(), "{on_a:02x?}");

    // Connection B: never saw the statement. Another statement first so the ids differ.
    let mut b = login(db);
    b.prepare("SELECT 1").expect("prepare filler");
    b.command(cmd::STMT_PREPARE, SQL.as_bytes()).expect("write prepare");
    let ok = PrepareOk::parse(&b.read_packet().expect("prepare OK")).expect("a PREPARE OK");
    for _ in 0..(ok.params + 1 + ok.columns + 1) {
        b.read_packet().expect("definitions");
    }
    assert_ne!(ok.statement_id, pa.id);
    assert_eq!((ok.params, ok.columns), (2, 2));

    let mut reg = Registry::default();
    let client_id = reg.register(SQL, &ok).expect("register");
    let (_, stmt) = reg.lookup(client_id, Command::Execute).expect("registered");
    stmt.bind_types(&[ty::LONGLONG, 0, ty::VAR_STRING, 0]);
    let rewritten = execute::rewrite(&client_packet, ok.statement_id, 2, stmt.types()).expect("rewrite");
    assert_eq!(send(&mut b, &rewritten), on_a, "same answer through the rewritten EXECUTE");

    // The types are needed: the same packet with only the id replaced is not what A answered.
    let mut bare = client_packet.clone();
    let mut c = login(db);
    c.prepare("SELECT 1").expect("filler");
    let pc = c.prepare(SQL).expect("prepare on C");
    execute::set_statement_id(&mut bare, pc.id).expect("id");
    assert_ne!(send(&mut c, &bare), on_a, "without types a fresh connection reads the values differently");
}

/// `SELECT CAST(? AS CHAR), …` shows the server's reading of each typed parameter; the library's
/// decoding of the same packet must give the same text.
fn decoded_values_match_what_the_server_read(db: &MariaDb) {
    let mut date = vec![11, 0xe8, 0x07, 1, 2, 3, 4, 5];
    date.extend_from_slice(&1500u32.to_le_bytes());
    let raw_param = |ty: u8, unsigned: bool, v: Vec<u8>| Param { ty, unsigned, value: raw::ParamValue::Bytes(v) };
    let params = vec![
        Param::tiny(-1),
        Param::utiny(255),
        Param::short(-300),
        Param::ulong(u32::MAX),
        Param::longlong(i64::MIN),
        Param::ulonglong(u64::MAX),
        raw_param(ty::NEWDATE, false, vec![4, 0xe8, 0x07, 1, 2]),
        raw_param(ty::DECIMAL, false, b"\x031.5".to_vec()),
        raw_param(ty::ENUM, false, b"\x02hi".to_vec()),
        Param::decimal("-1.50"),
        Param::string("abc"),
        Param::blob(b"xyz"),
        Param::date(2024, 2, 29),
        raw_param(ty::DATETIME, false, date),
        raw_param(ty::TIMESTAMP, false, vec![7, 0xe8, 0x07, 1, 2, 3, 4, 5]),
        raw_param(ty::DATETIME, false, vec![0]),
        Param::time(true, 1, 2, 3, 4, 0),
        Param::time(false, 0, 10, 20, 30, 7),
    ];
    let casts = vec!["CAST(? AS CHAR)"; params.len()].join(", ");
    let mut c = login(db);
    let p = c.prepare(&format!("SELECT {casts}")).expect("prepare casts");
    let payload = execute_payload(p.id, &params, true);
    let answer = send(&mut c, &payload);
    let server = binary_row_strings(&answer, params.len());

    let ex = Execute::parse(&payload, params.len() as u16).expect("parse");
    let long = LongData::default();
    let ours: Vec<String> = binary::values(&ex, None, &long).expect("decode").iter().map(text_of).collect();
    assert_eq!(ours, server);
}

fn text_of(v: &Value<'_>) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Decimal(d) => d.to_string(),
        Value::Str { bytes, .. } => String::from_utf8_lossy(bytes).into_owned(),
        other => format!("{other:?}"),
    }
}

/// The string columns of the single binary-protocol row in a result set answer.
fn binary_row_strings(answer: &[Vec<u8>], cols: usize) -> Vec<String> {
    assert!(raw::parse_err(&answer[0]).is_none(), "{:?}", raw::parse_err(&answer[0]));
    let row = &answer[1 + cols + 1];
    assert_eq!(row[0], 0, "a binary row");
    let bitmap = &row[1..1 + (cols + 7 + 2) / 8];
    let mut pos = 1 + bitmap.len();
    let mut out = Vec::new();
    for i in 0..cols {
        if bitmap[(i + 2) / 8] & (1 << ((i + 2) % 8)) != 0 {
            out.push("NULL".to_string());
            continue;
        }
        let (n, used) = lenenc(&row[pos..]).expect("length");
        pos += used;
        out.push(String::from_utf8_lossy(&row[pos..pos + n as usize]).into_owned());
        pos += n as usize;
    }
    out
}

fn error_packets_match_the_server(db: &MariaDb) {
    let mut c = login(db);
    let unknown = |cmd| Registry::default().lookup(12345, cmd).map(|_| ()).expect_err("unknown");
    let ans = send(&mut c, &execute_payload(12345, &[], false)[..10]);
    assert_same_err(&err_of(&ans), &unknown(Command::Execute));
    c.command(0x1c, &[0x39, 0x30, 0, 0, 1, 0, 0, 0]).expect("fetch");
    assert_same_err(&raw::parse_err(&c.read_packet().expect("answer")).expect("ERR"), &unknown(Command::Fetch));
    c.command(0x1a, &12345u32.to_le_bytes()).expect("reset");
    assert_same_err(&raw::parse_err(&c.read_packet().expect("answer")).expect("ERR"), &unknown(Command::Reset));

    let p = c.prepare("SELECT ?").expect("prepare");
    let short_header = &execute_payload(p.id, &[], false)[..8];
    assert_eq!(execute::statement_id(short_header), Err(PreparedError::Malformed));
    assert_same_err(&err_of(&send(&mut c, short_header)), &PreparedError::Malformed);

    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("short LONGLONG", short_value(p.id, ty::LONGLONG, 0, &[1, 2, 3])),
        ("JSON type", short_value(p.id, 0xf5, 0, b"\x02{}")),
        ("TIMESTAMP2 type", short_value(p.id, 0x11, 0, &[0])),
        ("flags beyond unsigned", short_value(p.id, ty::LONG, 0x01, &[1, 0, 0, 0])),
    ];
    for (what, payload) in cases {
        let ex = Execute::parse(&payload, 1).expect("header");
        let ours = binary::values(&ex, None, &LongData::default()).expect_err(what);
        assert_same_err(&err_of(&send(&mut c, &payload)), &ours);
    }
    let mut bad_flag = execute_payload(p.id, &[Param::longlong(1)], true);
    bad_flag[11] = 2;
    assert_eq!(Execute::parse(&bad_flag, 1), Err(PreparedError::Malformed));
    assert_same_err(&err_of(&send(&mut c, &bad_flag)), &PreparedError::Malformed);
}

fn short_value(id: u32, ty: u8, flags: u8, value: &[u8]) -> Vec<u8> {
    let mut p = execute_payload(id, &[], false)[..10].to_vec();
    p.extend_from_slice(&[0, 1, ty, flags]);
    p.extend_from_slice(value);
    p
}

fn long_data_errors_match_the_server(db: &MariaDb) {
    let mut c = login(db);
    let p = c.prepare("SELECT ?").expect("prepare");
    let mut reg = Registry::new(1000);
    let ok = PrepareOk { statement_id: p.id, columns: 1, params: 1, warnings: 0 };
    let id = reg.register("SELECT ?", &ok).expect("register");
    // What the client sends (client id), and what the server gets (server id).
    let to_server = |client_packet: &[u8]| {
        let mut v = client_packet.to_vec();
        execute::set_statement_id(&mut v, p.id).expect("id");
        v
    };
    let long_data = |param: u16, data: &[u8]| {
        let mut v = vec![cmd::STMT_SEND_LONG_DATA];
        v.extend_from_slice(&id.to_le_bytes());
        v.extend_from_slice(&param.to_le_bytes());
        v.extend_from_slice(data);
        v
    };
    let bad_param = long_data(5, b"x");
    let direct = to_server(&bad_param);
    c.command(direct[0], &direct[1..]).expect("long data");
    reg.long_data(&bad_param);
    let ours = reg.get(id).and_then(|s| s.pending_error().cloned()).expect("pending error");
    let exec = execute_payload(id, &[Param::long_data(ty::BLOB)], true);
    for _ in 0..2 {
        assert_same_err(&err_of(&send(&mut c, &to_server(&exec))), &ours);
        reg.lookup(id, Command::Execute).expect("known").1.executed();
        assert!(reg.get(id).and_then(|s| s.pending_error()).is_some(), "the error stays until RESET");
    }
    c.command(0x1a, &p.id.to_le_bytes()).expect("reset");
    assert_eq!(c.read_packet().expect("reset answer")[0], 0, "RESET answers OK");
    reg.lookup(id, Command::Reset).expect("known").1.reset();
    assert!(reg.get(id).and_then(|s| s.pending_error()).is_none());

    // Long data buffered by the registry, replayed right before the rewritten EXECUTE.
    reg.long_data(&long_data(0, b"hello "));
    reg.long_data(&long_data(0, b"world"));
    let stmt = reg.get(id).expect("known");
    for packet in stmt.long_data().packets(p.id) {
        c.command(packet[0], &packet[1..]).expect("replay");
    }
    let rewritten = execute::rewrite(&exec, p.id, 1, None).expect("rewrite");
    let answer = send(&mut c, &rewritten);
    let ex = Execute::parse(&exec, 1).expect("parse");
    let ours = binary::values(&ex, None, stmt.long_data()).expect("values");
    assert_eq!(binary_row_strings(&answer, 1), vec![text_of(&ours[0])]);
    assert_eq!(text_of(&ours[0]), "hello world");
}

fn text_protocol_errors_match_the_server(db: &MariaDb) {
    let mut c = login(db);
    let ts = &mut text::TextStatements::default();
    let ans = c.query("EXECUTE nosuch").expect("query");
    assert_same_err(&err_of(&ans), &ts.execute("nosuch").expect_err("unknown"));
    let ans = c.query("DEALLOCATE PREPARE nosuch").expect("query");
    assert_same_err(&err_of(&ans), &ts.deallocate("nosuch").expect_err("unknown"));
    // The re-prepare statement the library writes is accepted and runs as the client's.
    c.query("SET @k = 3").expect("set");
    let sql = "SELECT id, v FROM t WHERE v = 'c' OR id = ?";
    let prep = text::prepare_sql("S 1", sql, false);
    assert_eq!(c.query(std::str::from_utf8(&prep).expect("utf8")).expect("prepare")[0][0], 0);
    let rows = c.query("EXECUTE `s 1` USING @k").expect("execute");
    assert!(raw::parse_err(&rows[0]).is_none(), "{rows:02x?}");
}
