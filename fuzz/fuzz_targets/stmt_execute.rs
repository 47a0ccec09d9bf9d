//! COM_STMT_EXECUTE decoding: the header, null bitmap, bound types and values, long data sent
//! before it (COM_STMT_SEND_LONG_DATA, bounded), and the rewrite for a server connection. The
//! rewritten packet must decode to the same values as the client's.
#![no_main]

use arbitrary::Arbitrary;
use gateway::protocol::command::{STMT_EXECUTE, STMT_SEND_LONG_DATA};
use gateway::session::prepared::answer::PrepareOk;
use gateway::session::prepared::execute::{self, Execute};
use gateway::session::prepared::registry::LAST_STMT_ID;
use gateway::session::prepared::{binary, Command, ParamTypes, Registry};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    /// `?` parameters of the prepared statement.
    params: u8,
    /// Long-data budget of the session.
    long_data_limit: u16,
    /// COM_STMT_SEND_LONG_DATA packets: (use the real id, parameter, data).
    long_data: Vec<(bool, u16, Vec<u8>)>,
    /// Types the session remembers from an earlier EXECUTE.
    remembered: Option<Vec<u8>>,
    /// Address the statement as the last prepared one (0xFFFFFFFF) rather than by id.
    last: bool,
    /// The EXECUTE payload after the command byte and statement id.
    body: Vec<u8>,
}

fuzz_target!(|input: Input| {
    let mut reg = Registry::new(usize::from(input.long_data_limit));
    let ok = PrepareOk { statement_id: 7, columns: 1, params: u16::from(input.params), warnings: 0 };
    let Ok(id) = reg.register("SELECT c FROM t WHERE a = ? AND b IN (?, ?)", &ok) else {
        return;
    };
    let wire_id = if input.last { LAST_STMT_ID } else { id };
    for (real, param, data) in &input.long_data {
        let mut p = vec![STMT_SEND_LONG_DATA];
        p.extend_from_slice(&(if *real { wire_id } else { id ^ 0x55 }).to_le_bytes());
        p.extend_from_slice(&param.to_le_bytes());
        p.extend_from_slice(data);
        reg.long_data(&p);
        assert!(reg.long_data_bytes() <= usize::from(input.long_data_limit), "long data over its budget");
    }
    let mut payload = vec![STMT_EXECUTE];
    payload.extend_from_slice(&wire_id.to_le_bytes());
    payload.extend_from_slice(&input.body);
    let Ok(sent_id) = execute::statement_id(&payload) else {
        return;
    };
    let Ok((_, stmt)) = reg.lookup(sent_id, Command::Execute) else {
        return;
    };
    if let Some(t) = &input.remembered {
        stmt.bind_types(t);
    }
    if stmt.pending_error().is_some() {
        return;
    }
    let params = stmt.params();
    let Ok(ex) = Execute::parse(&payload, params) else {
        return;
    };
    let _ = (ex.wants_cursor(), ex.values(), (0..params).filter(|i| ex.is_null(*i)).count());
    if let Some(t) = ex.types {
        stmt.bind_types(t);
    }
    let types: Option<ParamTypes> = stmt.types().cloned();
    let long = stmt.long_data().clone();
    let values = binary::values(&ex, types.as_ref(), &long);
    let Ok(rewritten) = execute::rewrite(&payload, 99, params, types.as_ref()) else {
        return;
    };
    assert_eq!(execute::statement_id(&rewritten).ok(), Some(99), "rewritten statement id");
    let again = Execute::parse(&rewritten, params).unwrap_or_else(|e| panic!("rewritten EXECUTE does not parse: {e}"));
    if let Ok(values) = &values {
        let from_server = binary::values(&again, types.as_ref(), &long);
        // Compared as text: NaN is a value here, and equal to itself.
        let (a, b) = (format!("{:?}", from_server.as_ref().ok()), format!("{:?}", Some(values)));
        assert_eq!(a, b, "the server would decode other values");
        let _ = gateway::sql::analyze_prepared(stmt.sql(), values);
    }
    stmt.executed();
});
