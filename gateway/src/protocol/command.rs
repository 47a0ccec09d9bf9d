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
        INIT_DB | PING | REFRESH | PROCESS_KILL | DEBUG | SET_OPTION | STMT_RESET | RESET_CONNECTION
        | CREATE_DB | DROP_DB | STATISTICS => Handling::Forward(Single),
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

/// Name of a command for logs.
pub fn name(cmd: u8) -> &'static str {
    match cmd {
        QUIT => "COM_QUIT",
        INIT_DB => "COM_INIT_DB",
        QUERY => "COM_QUERY",
        FIELD_LIST => "COM_FIELD_LIST",
        STATISTICS => "COM_STATISTICS",
        PING => "COM_PING",
        CHANGE_USER => "COM_CHANGE_USER",
        STMT_PREPARE => "COM_STMT_PREPARE",
        STMT_EXECUTE => "COM_STMT_EXECUTE",
        STMT_SEND_LONG_DATA => "COM_STMT_SEND_LONG_DATA",
        STMT_CLOSE => "COM_STMT_CLOSE",
        STMT_RESET => "COM_STMT_RESET",
        SET_OPTION => "COM_SET_OPTION",
        STMT_FETCH => "COM_STMT_FETCH",
        RESET_CONNECTION => "COM_RESET_CONNECTION",
        STMT_BULK_EXECUTE => "COM_STMT_BULK_EXECUTE",
        _ => "COM_OTHER",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_driver_command_is_forwarded_or_handled() {
        for c in [QUERY, INIT_DB, PING, FIELD_LIST, STATISTICS, STMT_PREPARE, STMT_EXECUTE, STMT_SEND_LONG_DATA,
            STMT_CLOSE, STMT_RESET, STMT_FETCH, SET_OPTION, RESET_CONNECTION]
        {
            assert!(matches!(handling(c), Handling::Forward(_)), "{c:#x}");
        }
        assert_eq!(handling(QUIT), Handling::Quit);
        assert_eq!(handling(CHANGE_USER), Handling::ChangeUser);
        assert_eq!(handling(0x7F), Handling::Unknown);
        assert_eq!(handling(SLEEP), Handling::Unknown);
        assert!(matches!(handling(BINLOG_DUMP), Handling::Refuse(_)));
    }
}
