//! The MySQL client/server wire protocol: framing, handshake, authentication and packet shapes.

pub mod auth;
pub mod buf;
pub(crate) mod client_charset;
pub mod command;
pub mod ed25519;
pub mod frame;
pub mod handshake;
pub mod message;
pub mod response;
pub(crate) mod resultset;

/// Errors of the wire protocol layer.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    /// The peer closed the connection.
    #[error("connection closed by peer")]
    Closed,
    /// The peer closed the connection in the middle of a packet.
    #[error("connection closed in the middle of a packet")]
    Truncated,
    /// Socket error.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// A packet that does not follow the protocol.
    #[error("malformed packet: {0}")]
    Malformed(&'static str),
    /// A sequence id other than the expected one.
    #[error("packets out of order: expected sequence {expected}, got {got}")]
    OutOfOrder {
        /// The sequence id the protocol requires here.
        expected: u8,
        /// The sequence id that arrived.
        got: u8,
    },
    /// A logical packet larger than the configured maximum.
    #[error("packet of {size} bytes exceeds the maximum of {max}")]
    TooLarge {
        /// Bytes received so far for the packet.
        size: usize,
        /// Configured maximum.
        max: usize,
    },
}

/// Capability flags (`CLIENT_*`), as in the MySQL protocol documentation.
pub mod caps {
    pub const LONG_PASSWORD: u32 = 1;
    pub const FOUND_ROWS: u32 = 1 << 1;
    pub const LONG_FLAG: u32 = 1 << 2;
    pub const CONNECT_WITH_DB: u32 = 1 << 3;
    pub const NO_SCHEMA: u32 = 1 << 4;
    pub const COMPRESS: u32 = 1 << 5;
    pub const ODBC: u32 = 1 << 6;
    pub const LOCAL_FILES: u32 = 1 << 7;
    pub const IGNORE_SPACE: u32 = 1 << 8;
    pub const PROTOCOL_41: u32 = 1 << 9;
    pub const INTERACTIVE: u32 = 1 << 10;
    pub const SSL: u32 = 1 << 11;
    pub const IGNORE_SIGPIPE: u32 = 1 << 12;
    pub const TRANSACTIONS: u32 = 1 << 13;
    pub const RESERVED: u32 = 1 << 14;
    pub const SECURE_CONNECTION: u32 = 1 << 15;
    pub const MULTI_STATEMENTS: u32 = 1 << 16;
    pub const MULTI_RESULTS: u32 = 1 << 17;
    pub const PS_MULTI_RESULTS: u32 = 1 << 18;
    pub const PLUGIN_AUTH: u32 = 1 << 19;
    pub const CONNECT_ATTRS: u32 = 1 << 20;
    pub const PLUGIN_AUTH_LENENC_CLIENT_DATA: u32 = 1 << 21;
    pub const CAN_HANDLE_EXPIRED_PASSWORDS: u32 = 1 << 22;
    pub const SESSION_TRACK: u32 = 1 << 23;
    pub const DEPRECATE_EOF: u32 = 1 << 24;

    /// Everything the gateway understands and can forward. No SSL (each leg negotiates TLS on
    /// its own, `crate::tls`), no compression, no query attributes, no MariaDB extended capabilities.
    pub const SUPPORTED: u32 = LONG_PASSWORD
        | FOUND_ROWS
        | LONG_FLAG
        | CONNECT_WITH_DB
        | NO_SCHEMA
        | ODBC
        | LOCAL_FILES
        | IGNORE_SPACE
        | PROTOCOL_41
        | INTERACTIVE
        | IGNORE_SIGPIPE
        | TRANSACTIONS
        | RESERVED
        | SECURE_CONNECTION
        | MULTI_STATEMENTS
        | MULTI_RESULTS
        | PS_MULTI_RESULTS
        | PLUGIN_AUTH
        | CONNECT_ATTRS
        | PLUGIN_AUTH_LENENC_CLIENT_DATA
        | CAN_HANDLE_EXPIRED_PASSWORDS
        | SESSION_TRACK
        | DEPRECATE_EOF;
}

/// MariaDB's extended capabilities (`MARIADB_CLIENT_*` >> 32): 4 bytes in the greeting's filler and
/// in the last 4 bytes of the client's reserved area, when the server clears CLIENT_MYSQL
/// (`caps::LONG_PASSWORD`, bit 0) and the client does too.
pub mod ext_caps {
    /// Progress reports (0xFF 0xFFFF packets) during long statements.
    pub const PROGRESS: u32 = 1;
    /// COM_MULTI (never announced).
    pub const COM_MULTI: u32 = 1 << 1;
    /// COM_STMT_BULK_EXECUTE.
    pub const STMT_BULK_OPERATIONS: u32 = 1 << 2;
    /// Extended type information in column definitions.
    pub const EXTENDED_TYPE_INFO: u32 = 1 << 3;
    /// Result-set metadata skipped when unchanged (changes the binary result format; never
    /// announced: the response tracker counts column definitions).
    pub const CACHE_METADATA: u32 = 1 << 4;

    /// What a 1:1 session relays: the backend's answers are forwarded as they are, the
    /// tracker passes progress packets on, gateway-made result sets get the extended type
    /// information field (`resultset::with_extended_type_info`).
    pub const RELAYED: u32 = PROGRESS | STMT_BULK_OPERATIONS | EXTENDED_TYPE_INFO;
    /// What a routing gateway offers: bulk execution, and progress reports on pooled server
    /// connections opened for clients that asked for them (the pool keeps those apart).
    pub const ROUTED: u32 = PROGRESS | STMT_BULK_OPERATIONS;
}

/// Server status flags (`SERVER_*`) carried in OK and EOF packets.
pub mod status {
    pub const IN_TRANS: u16 = 1;
    pub const AUTOCOMMIT: u16 = 1 << 1;
    pub const MORE_RESULTS_EXISTS: u16 = 1 << 3;
    pub const CURSOR_EXISTS: u16 = 1 << 6;
    pub const LAST_ROW_SENT: u16 = 1 << 7;
    pub const IN_TRANS_READONLY: u16 = 1 << 13;
    pub const SESSION_STATE_CHANGED: u16 = 1 << 14;
}

/// MySQL error codes the gateway itself produces.
pub mod codes {
    /// ER_ACCESS_DENIED_ERROR
    pub const ACCESS_DENIED: u16 = 1045;
    /// ER_UNKNOWN_COM_ERROR
    pub const UNKNOWN_COMMAND: u16 = 1047;
    /// ER_HANDSHAKE_ERROR ("Bad handshake")
    pub const HANDSHAKE: u16 = 1043;
    /// ER_NO_SUCH_THREAD
    pub const NO_SUCH_THREAD: u16 = 1094;
    /// ER_NET_PACKET_TOO_LARGE
    pub const PACKET_TOO_LARGE: u16 = 1153;
    /// ER_NET_PACKETS_OUT_OF_ORDER
    pub const OUT_OF_ORDER: u16 = 1156;
    /// ER_NET_READ_ERROR
    pub const NET_READ: u16 = 1158;
    /// ER_SECURE_TRANSPORT_REQUIRED: a plain connection to a listener with `tls = "required"`.
    pub const SECURE_TRANSPORT_REQUIRED: u16 = 3159;
    /// ER_NOT_SUPPORTED_YET
    pub const NOT_SUPPORTED: u16 = 1235;
    /// ER_MALFORMED_PACKET
    pub const MALFORMED: u16 = 1835;
    /// CR_CONN_HOST_ERROR: the backend server could not be reached.
    pub const BACKEND_UNREACHABLE: u16 = 2003;
    /// CR_SSL_CONNECTION_ERROR: TLS to the backend failed or was impossible.
    pub const SSL_CONNECTION: u16 = 2026;
    /// CR_SERVER_LOST: the backend connection broke during a command.
    pub const BACKEND_LOST: u16 = 2013;
}
