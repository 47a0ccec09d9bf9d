//! Command bytes of the command phase and the shape of the server's answer to each.

pub const SLEEP: u8 = 0x00;
pub const QUIT: u8 = 0x01;
pub const INIT_DB: u8 = 0x02;
pub const QUERY: u8 = 0x03;
pub const FIELD_LIST: u8 = 0x04;
pub const CREATE_DB: u8 = 0x05;
pub const DROP_DB: u8 = 0x06;
pub const REFRESH: u8 = 0x07;
pub const SHUTDOWN: u8 = 0x08;
pub const STATISTICS: u8 = 0x09;
pub const PROCESS_INFO: u8 = 0x0A;
pub const CONNECT: u8 = 0x0B;
pub const PROCESS_KILL: u8 = 0x0C;
pub const DEBUG: u8 = 0x0D;
pub const PING: u8 = 0x0E;
pub const TIME: u8 = 0x0F;
pub const DELAYED_INSERT: u8 = 0x10;
pub const CHANGE_USER: u8 = 0x11;
pub const BINLOG_DUMP: u8 = 0x12;
pub const TABLE_DUMP: u8 = 0x13;
pub const CONNECT_OUT: u8 = 0x14;
pub const REGISTER_SLAVE: u8 = 0x15;
pub const STMT_PREPARE: u8 = 0x16;
pub const STMT_EXECUTE: u8 = 0x17;
pub const STMT_SEND_LONG_DATA: u8 = 0x18;
pub const STMT_CLOSE: u8 = 0x19;
pub const STMT_RESET: u8 = 0x1A;
pub const SET_OPTION: u8 = 0x1B;
pub const STMT_FETCH: u8 = 0x1C;
pub const DAEMON: u8 = 0x1D;
pub const BINLOG_DUMP_GTID: u8 = 0x1E;
pub const RESET_CONNECTION: u8 = 0x1F;
/// MariaDB's COM_STMT_BULK_EXECUTE (MARIADB_CLIENT_STMT_BULK_OPERATIONS): one prepared
/// statement run for an array of parameter rows; answered like COM_STMT_EXECUTE.
pub const STMT_BULK_EXECUTE: u8 = 0xFA;

/// What the server sends back for a command, which tells the forwarder where the answer ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// No answer at all (COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA).
    None,
    /// Exactly one packet: OK, ERR or EOF (COM_PING, COM_INIT_DB, …) or a plain string
    /// (COM_STATISTICS).
    Single,
    /// One or more results, each OK/ERR or a result set, possibly a LOCAL INFILE exchange
    /// (COM_QUERY, COM_STMT_EXECUTE, COM_PROCESS_INFO).
    Results,
    /// Rows of an open cursor up to an EOF/OK (COM_STMT_FETCH).
    Fetch,
    /// The prepare answer: OK with column and parameter definitions (COM_STMT_PREPARE).
    Prepare,
    /// Column definitions up to an EOF (COM_FIELD_LIST).
    FieldList,
}

/// How the gateway treats a command byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handling {
    /// Forward to the server and relay the answer of this shape.
    Forward(Shape),
    /// Close the session (COM_QUIT).
    Quit,
    /// Authenticate again (COM_CHANGE_USER), handled by the gateway.
    ChangeUser,
    /// A real command the gateway refuses (replication, shutdown): ER_NOT_SUPPORTED_YET.
    Refuse(&'static str),
    /// Not a client command: ER_UNKNOWN_COM_ERROR.
    Unknown,
}

/// Classifies a command byte.
pub fn handling(cmd: u8) -> Handling {
    use Shape::*;
    match cmd {
        QUERY | STMT_EXECUTE | PROCESS_INFO | STMT_BULK_EXECUTE => Handling::Forward(Results),
        INIT_DB | PING | REFRESH | PROCESS_KILL | DEBUG | SET_OPTION | STMT_RESET | RESET_CONNECTION | CREATE_DB
        | DROP_DB | STATISTICS => Handling::Forward(Single),
        STMT_CLOSE | STMT_SEND_LONG_DATA => Handling::Forward(None),
        STMT_FETCH => Handling::Forward(Fetch),
        STMT_PREPARE => Handling::Forward(Prepare),
        FIELD_LIST => Handling::Forward(FieldList),
        QUIT => Handling::Quit,
        CHANGE_USER => Handling::ChangeUser,
        SHUTDOWN => Handling::Refuse("COM_SHUTDOWN"),
        BINLOG_DUMP | BINLOG_DUMP_GTID | TABLE_DUMP | REGISTER_SLAVE | CONNECT_OUT => {
            Handling::Refuse("replication commands")
        }
        _ => Handling::Unknown,
    }
}

/// The names of a command byte, from one table: (protocol name, process-list name as in MariaDB's
/// `SHOW PROCESSLIST` `Command` column, route-log name). Unknown bytes: `COM_OTHER`, `Query`, `other`.
fn names(cmd: u8) -> (&'static str, &'static str, &'static str) {
    match cmd {
        SLEEP => ("COM_SLEEP", "Sleep", "sleep"),
        QUIT => ("COM_QUIT", "Quit", "quit"),
        INIT_DB => ("COM_INIT_DB", "Init DB", "init_db"),
        QUERY => ("COM_QUERY", "Query", "query"),
        FIELD_LIST => ("COM_FIELD_LIST", "Field List", "field_list"),
        CREATE_DB => ("COM_CREATE_DB", "Create DB", "create_db"),
        DROP_DB => ("COM_DROP_DB", "Drop DB", "drop_db"),
        REFRESH => ("COM_REFRESH", "Refresh", "refresh"),
        SHUTDOWN => ("COM_SHUTDOWN", "Shutdown", "shutdown"),
        STATISTICS => ("COM_STATISTICS", "Statistics", "statistics"),
        PROCESS_INFO => ("COM_PROCESS_INFO", "Processlist", "processlist"),
        PROCESS_KILL => ("COM_PROCESS_KILL", "Kill", "kill"),
        DEBUG => ("COM_DEBUG", "Debug", "debug"),
        PING => ("COM_PING", "Ping", "ping"),
        CHANGE_USER => ("COM_CHANGE_USER", "Change user", "change_user"),
        STMT_PREPARE => ("COM_STMT_PREPARE", "Prepare", "prepare"),
        STMT_EXECUTE => ("COM_STMT_EXECUTE", "Execute", "execute"),
        STMT_SEND_LONG_DATA => ("COM_STMT_SEND_LONG_DATA", "Long Data", "long_data"),
        STMT_CLOSE => ("COM_STMT_CLOSE", "Close stmt", "close"),
        STMT_RESET => ("COM_STMT_RESET", "Reset stmt", "reset"),
        SET_OPTION => ("COM_SET_OPTION", "Set option", "set_option"),
        STMT_FETCH => ("COM_STMT_FETCH", "Fetch", "fetch"),
        RESET_CONNECTION => ("COM_RESET_CONNECTION", "Reset connection", "reset_connection"),
        STMT_BULK_EXECUTE => ("COM_STMT_BULK_EXECUTE", "Execute", "bulk_execute"),
        _ => ("COM_OTHER", "Query", "other"),
    }
}

/// Protocol name of a command (`COM_INIT_DB`), for the gateway's own logs.
pub fn name(cmd: u8) -> &'static str {
    names(cmd).0
}

/// Process-list name of a command (`Init DB`): the `Command` of SHOW PROCESSLIST / PROXYSESSION.
pub fn process_name(cmd: u8) -> &'static str {
    names(cmd).1
}

/// Route-log name of a command (`init_db`).
pub fn log_name(cmd: u8) -> &'static str {
    names(cmd).2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_driver_command_is_forwarded_or_handled() {
        for c in [
            QUERY,
            INIT_DB,
            PING,
            FIELD_LIST,
            STATISTICS,
            STMT_PREPARE,
            STMT_EXECUTE,
            STMT_SEND_LONG_DATA,
            STMT_CLOSE,
            STMT_RESET,
            STMT_FETCH,
            SET_OPTION,
            RESET_CONNECTION,
        ] {
            assert!(matches!(handling(c), Handling::Forward(_)), "{c:#x}");
        }
        assert_eq!(handling(QUIT), Handling::Quit);
        assert_eq!(handling(CHANGE_USER), Handling::ChangeUser);
        assert_eq!(handling(0x7F), Handling::Unknown);
        assert_eq!(handling(SLEEP), Handling::Unknown);
        assert!(matches!(handling(BINLOG_DUMP), Handling::Refuse(_)));
    }

    #[test]
    fn one_command_has_one_set_of_names() {
        assert_eq!((name(INIT_DB), process_name(INIT_DB), log_name(INIT_DB)), ("COM_INIT_DB", "Init DB", "init_db"));
        assert_eq!((name(0x7F), process_name(0x7F), log_name(0x7F)), ("COM_OTHER", "Query", "other"));
    }
}
