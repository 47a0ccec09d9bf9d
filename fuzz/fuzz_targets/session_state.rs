//! The SET / session-state scanner: client `SET` statements and servers' session-track blocks fed
//! to a `ClientState`, then the sync plans for a connection that follows it and for a fresh one.
//! After a sync the connection must be in sync with the client.
#![no_main]

use gateway::session::state::{parse_set, ClientState, ConnSync, SyncStep};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut state = ClientState::new(Some("db0"), 45);
    let mut conn = ConnSync::new(Some("db0"), 8);
    for item in data.split(|b| *b == 0xFF).take(16) {
        let Some((&flags, body)) = item.split_first() else {
            continue;
        };
        let on = (flags & 1 != 0).then_some(&mut conn);
        if flags & 2 != 0 {
            let _ = state.observe_ok(body, on);
        } else {
            let _ = parse_set(body, state.mode());
            state.observe_statement(body, on);
        }
        if flags & 4 != 0 {
            sync(&mut state, &mut ConnSync::new(None, 33));
        }
    }
    sync(&mut state, &mut conn);
    let _ = (state.autocommit(), state.has_expressions(), state.database());
});

/// Plans a sync of `conn`, checks the statements it would send, and records it as done.
fn sync(state: &mut ClientState, conn: &mut ConnSync) {
    let plan = state.plan(conn);
    for step in &plan.steps {
        if let SyncStep::Query(q) = step {
            // The values are kept verbatim, not checked: a statement the server would refuse
            // renders to one it refuses too, so only crashes and the sync bookkeeping are checked.
            let _ = parse_set(q, state.mode());
        }
    }
    state.synced(conn, &plan);
    assert!(state.in_sync(conn), "a connection is in sync right after its sync");
}
