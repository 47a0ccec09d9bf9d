//! A client command read once into the value both kinds of session match on: what the gateway
//! answers itself (its own queries, KILL on gateway ids, refusals) and what goes to a server.

use super::glance::{Glance, Word};
use super::internal::{self, Internal};
use super::kill::{self, Kill};
use super::processlist;
use crate::protocol::codes;
use crate::protocol::command::{self, Handling, Shape};
use crate::protocol::message::ErrPacket;
use crate::sql::Mode;

/// What a client command asks of its session.
#[derive(Debug)]
pub enum ClientCommand {
    /// A query about the gateway itself ([`internal`]), answered here by every kind of session.
    Internal(Internal),
    /// KILL naming a gateway connection id (text or COM_PROCESS_KILL).
    Kill(Kill),
    /// A question the gateway's process list answers (`SHOW PROCESSLIST`, COM_PROCESS_INFO, …).
    Processlist(processlist::Question),
    /// A command for the session's server: the shape of its answer, and the words that tell the
    /// session's recognisers whether to run.
    Forward(Shape, Glance),
    /// COM_QUIT.
    Quit,
    /// COM_CHANGE_USER.
    ChangeUser,
    /// Answered with this error and sent nowhere: a KILL form the gateway does not take, a
    /// command it does not support, a byte that is no command.
    Refused(ErrPacket),
}

impl ClientCommand {
    /// Reads the command `payload` (its command byte first) of the session whose gateway id is
    /// `own_id` (what `KILL CONNECTION_ID()` names), its text read in the SQL `modes` (the
    /// session's, or [`Mode::ALL`] when the session does not follow its client's `sql_mode`).
    pub fn read(payload: &[u8], own_id: u32, modes: &[Mode]) -> ClientCommand {
        // One scan of a COM_QUERY's words decides which recognisers run at all.
        let glance = Glance::of_command(payload);
        if glance.mentions(Word::Internal) || glance.mentions(Word::Kill) {
            if let Some(internal) = internal::recognise(payload) {
                return ClientCommand::Internal(internal);
            }
        }
        let Some(&cmd) = payload.first() else { return ClientCommand::Refused(unknown_command()) };
        match command::handling(cmd) {
            Handling::Forward(shape) => {
                if glance.mentions(Word::Kill) {
                    if let Some(k) = kill::parse(payload, own_id) {
                        return ClientCommand::Kill(k);
                    }
                    if cmd == command::PROCESS_KILL {
                        // Too short for its id: never sent on (kill::malformed).
                        return ClientCommand::Refused(kill::malformed());
                    }
                    if kill::refused(payload, modes) {
                        return ClientCommand::Refused(kill::unsupported());
                    }
                }
                if cmd == command::PROCESS_INFO {
                    return ClientCommand::Processlist(processlist::Question::Show { full: false });
                }
                // A statement of the process list is a COM_QUERY's; any other command's bytes
                // (an EXECUTE's values, a PREPARE's text) are the server's to answer.
                if cmd == command::QUERY && glance.mentions(Word::Processlist) {
                    let text = String::from_utf8_lossy(&payload[1..]);
                    if let Some(q) = processlist::question(&text, own_id) {
                        return ClientCommand::Processlist(q);
                    }
                }
                ClientCommand::Forward(shape, glance)
            }
            Handling::Quit => ClientCommand::Quit,
            Handling::ChangeUser => ClientCommand::ChangeUser,
            Handling::Refuse(what) => ClientCommand::Refused(ErrPacket::new(
                codes::NOT_SUPPORTED,
                format!("gateway: {what} are not supported"),
            )),
            Handling::Unknown => ClientCommand::Refused(unknown_command()),
        }
    }
}

/// ER_UNKNOWN_COM_ERROR, as a server answers a byte that is no command.
fn unknown_command() -> ErrPacket {
    ErrPacket::with_state(codes::UNKNOWN_COMMAND, b"08S01", "Unknown command")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(sql: &str) -> Vec<u8> {
        [&[command::QUERY], sql.as_bytes()].concat()
    }

    #[test]
    fn only_a_com_query_asks_the_gateways_process_list() {
        let text = b"SHOW PROCESSLIST";
        for cmd in [command::STMT_PREPARE, command::STMT_EXECUTE, command::INIT_DB] {
            let payload = [&[cmd], &text[..]].concat();
            let read = ClientCommand::read(&payload, 3, &[Mode::default()]);
            assert!(matches!(read, ClientCommand::Forward(..)), "command {cmd:#x}: {read:?}");
        }
        let asked = ClientCommand::read(&query("SHOW PROCESSLIST"), 3, &[Mode::default()]);
        assert!(matches!(asked, ClientCommand::Processlist(_)), "{asked:?}");
    }

    #[test]
    fn gateway_answers_and_server_commands_apart() {
        assert!(matches!(
            ClientCommand::read(&query("KILL 7"), 3, &[Mode::default()]),
            ClientCommand::Kill(Kill { query_only: false, id: 7 })
        ));
        assert!(matches!(
            ClientCommand::read(&query("KILL QUERY CONNECTION_ID()"), 3, &[Mode::default()]),
            ClientCommand::Kill(Kill { query_only: true, id: 3 })
        ));
        let mut process_kill = vec![command::PROCESS_KILL];
        process_kill.extend_from_slice(&9u32.to_le_bytes());
        assert!(matches!(
            ClientCommand::read(&process_kill, 3, &[Mode::default()]),
            ClientCommand::Kill(Kill { id: 9, .. })
        ));
        let refused = |p: &[u8]| match ClientCommand::read(p, 3, &[Mode::default()]) {
            ClientCommand::Refused(err) => err.code,
            other => panic!("{other:?}"),
        };
        // A COM_PROCESS_KILL too short for its 4-byte id: MariaDB would read the id past the
        // packet, from a previous packet's bytes, and kill whichever thread that names.
        for short in [&[command::PROCESS_KILL][..], &[command::PROCESS_KILL, 15], &[command::PROCESS_KILL, 15, 0, 0]] {
            assert_eq!(refused(short), codes::MALFORMED, "{short:?}");
        }
        assert_eq!(refused(&query("KILL USER app")), codes::NOT_SUPPORTED);
        assert_eq!(refused(&query("SELECT 1; KILL 7")), codes::NOT_SUPPORTED);
        assert_eq!(refused(&[command::BINLOG_DUMP]), codes::NOT_SUPPORTED);
        assert_eq!(refused(&[0x7f]), codes::UNKNOWN_COMMAND);
        assert_eq!(refused(&[]), codes::UNKNOWN_COMMAND);
        assert!(matches!(
            ClientCommand::read(&query("KILL PROXYSESSION 7"), 3, &[Mode::default()]),
            ClientCommand::Internal(_)
        ));
        assert!(matches!(ClientCommand::read(&[command::QUIT], 3, &[Mode::default()]), ClientCommand::Quit));
        assert!(matches!(
            ClientCommand::read(&[command::CHANGE_USER, 0], 3, &[Mode::default()]),
            ClientCommand::ChangeUser
        ));
        match ClientCommand::read(&query("SELECT CONNECTION_ID() FROM t -- skill"), 3, &[Mode::default()]) {
            ClientCommand::Forward(Shape::Results, glance) => {
                assert!(glance.mentions(Word::ConnectionId) && !glance.mentions(Word::Kill))
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            ClientCommand::read(&[command::PING], 3, &[Mode::default()]),
            ClientCommand::Forward(Shape::Single, _)
        ));
        assert!(matches!(
            ClientCommand::read(&[command::PROCESS_INFO], 3, &[Mode::default()]),
            ClientCommand::Processlist(processlist::Question::Show { full: false })
        ));
        assert!(matches!(
            ClientCommand::read(&query("/* app */ SHOW FULL PROCESSLIST"), 3, &[Mode::default()]),
            ClientCommand::Processlist(processlist::Question::Show { full: true })
        ));
        assert!(matches!(
            ClientCommand::read(&query("SELECT id FROM information_schema.processlist"), 3, &[Mode::default()]),
            ClientCommand::Processlist(processlist::Question::Table(_))
        ));
        assert!(matches!(
            ClientCommand::read(&query("SELECT 'SHOW PROCESSLIST'"), 3, &[Mode::default()]),
            ClientCommand::Forward(..)
        ));
    }
}
