//! MariaDB's COM_STMT_BULK_EXECUTE header (statement id, flags, parameter types) and its rewrite
//! for a server connection: any client packet parses or is refused, and a rewrite keeps the
//! rows byte for byte, carries the connection's statement id and the types it was given.
#![no_main]

use arbitrary::Arbitrary;
use gateway::session::prepared::bulk::{self, Bulk, SEND_TYPES};
use gateway::session::prepared::ParamTypes;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    /// `?` parameters of the prepared statement.
    params: u16,
    /// The connection's statement id.
    server_id: u32,
    /// Types the session remembers (inserted when the client sent none).
    remembered: Option<Vec<u8>>,
    /// The packet after the command byte.
    body: Vec<u8>,
}

fuzz_target!(|input: Input| {
    let mut payload = vec![0xFA];
    payload.extend_from_slice(&input.body);
    let Ok(head) = Bulk::parse(&payload, input.params) else {
        assert!(bulk::rewrite(&payload, input.params, input.server_id, None).is_err(), "refused, yet rewritten");
        return;
    };
    assert!(input.params > 0, "a statement without parameters has no rows to run");
    if let Some(types) = head.types {
        assert_eq!(types.len(), 2 * usize::from(input.params), "types of every parameter");
    }
    let remembered = input.remembered.as_deref().map(ParamTypes::new);
    let Ok(out) = bulk::rewrite(&payload, input.params, input.server_id, remembered.as_ref()) else {
        panic!("a parsed bulk execution must be rewritable");
    };
    let again = Bulk::parse(&out, input.params).unwrap_or_else(|e| panic!("the rewrite does not parse: {e}"));
    assert_eq!(again.statement_id, input.server_id, "the connection's statement id");
    assert_eq!(again.flags & !SEND_TYPES, head.flags & !SEND_TYPES, "flags other than SEND_TYPES kept");
    let rows_at = |b: &Bulk| 7 + b.types.map_or(0, <[u8]>::len);
    assert_eq!(&out[rows_at(&again)..], &payload[rows_at(&head)..], "rows sent on untouched");
    match (head.types, remembered.as_ref()) {
        (Some(t), _) => assert_eq!(again.types, Some(t), "the client's types kept"),
        (None, Some(r)) if r.wire().len() == 2 * usize::from(input.params) => {
            assert_eq!(again.types, Some(r.wire()), "remembered types inserted");
        }
        (None, _) => assert_eq!(again.types, None, "no types invented"),
    }
});
