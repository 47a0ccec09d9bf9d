//! Handshake collation ids a server refuses as the client character set: the multi-byte-minimum
//! sets (`ucs2`, `utf16`, `utf16le`, `utf32`), which no server can parse statements in. MariaDB
//! refuses such a login with ERROR 1231; the routed gateway, which answers the login itself,
//! gives the same error (ids as in MariaDB 10.11's `information_schema.COLLATIONS`).

use super::message::ErrPacket;

/// ER_WRONG_VALUE_FOR_VAR.
const WRONG_VALUE_FOR_VAR: u16 = 1231;

/// The character set of collation `id` when a server refuses it as the client's.
pub fn refused_charset(id: u8) -> Option<&'static str> {
    match id {
        35 | 90 | 128..=151 | 159 => Some("ucs2"),
        54 | 55 | 101..=124 => Some("utf16"),
        56 | 62 => Some("utf16le"),
        60 | 61 | 160..=183 => Some("utf32"),
        _ => None,
    }
}

/// The server's refusal of a login with handshake collation `id`, if it refuses it.
pub fn check(id: u8) -> Result<(), ErrPacket> {
    match refused_charset(id) {
        None => Ok(()),
        Some(cs) => Err(ErrPacket::with_state(
            WRONG_VALUE_FOR_VAR,
            b"42000",
            format!("Variable 'character_set_client' can't be set to the value of '{cs}'"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multibyte_minimum_sets_are_refused() {
        assert_eq!(refused_charset(35), Some("ucs2"));
        assert_eq!(refused_charset(101), Some("utf16"));
        assert_eq!(refused_charset(62), Some("utf16le"));
        assert_eq!(refused_charset(183), Some("utf32"));
        for ok in [8, 33, 45, 46, 63, 83, 192, 224, 255] {
            assert_eq!(refused_charset(ok), None, "{ok}");
        }
        let err = check(54).unwrap_err();
        assert_eq!(
            (err.code, err.message.as_str()),
            (1231, "Variable 'character_set_client' can't be set to the value of 'utf16'")
        );
    }
}
