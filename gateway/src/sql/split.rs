//! Splitting a multi-statement COM_QUERY on top-level `;` (quotes and comments respected): the
//! `;` tokens of [`super::lexer`], read in the client's SQL mode.

use super::lexer::{Kind, Lexer, Mode};

/// Iterator over the statements of a COM_QUERY text, each trimmed, empty ones skipped.
#[derive(Debug, Clone)]
pub struct Statements<'a> {
    sql: &'a str,
    pos: usize,
    mode: Mode,
}

/// Splits `sql`, read in the default SQL mode, into its statements.
pub fn statements(sql: &str) -> Statements<'_> {
    statements_in(sql, Mode::default())
}

/// Splits `sql`, read in `mode`, into its statements.
pub fn statements_in(sql: &str, mode: Mode) -> Statements<'_> {
    Statements { sql, pos: 0, mode }
}

impl<'a> Iterator for Statements<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        while self.pos < self.sql.len() {
            let start = self.pos;
            let end = statement_end(self.sql.as_bytes(), start, self.mode);
            self.pos = end + 1;
            let stmt = self.sql.get(start..end).unwrap_or("").trim();
            if !stmt.is_empty() && !only_comments(stmt, self.mode) {
                return Some(stmt);
            }
        }
        None
    }
}

/// Offset of the `;` ending the statement that starts at `i` (or the text's length).
fn statement_end(b: &[u8], i: usize, mode: Mode) -> usize {
    // No `;` left (the common case): the rest is one statement, found by one memchr.
    if memchr::memchr(b';', b.get(i..).unwrap_or(&[])).is_none() {
        return b.len();
    }
    Lexer::at(b, i, mode).find(|t| t.kind == Kind::Punct(b';')).map_or(b.len(), |t| t.start as usize)
}

/// Whether a statement holds nothing but comments and blanks (an unterminated comment included).
fn only_comments(stmt: &str, mode: Mode) -> bool {
    // The statement is trimmed: one that starts with no comment has something else.
    if !matches!(stmt.as_bytes().first(), Some(b'/' | b'#' | b'-')) {
        return false;
    }
    Lexer::new(stmt.as_bytes(), mode).all(|t| match t.kind {
        Kind::Comment => true,
        Kind::Unterminated => stmt.as_bytes()[t.range()].starts_with(b"/*") && !is_versioned(&stmt[t.range()]),
        _ => false,
    })
}

fn is_versioned(text: &str) -> bool {
    text.starts_with("/*!") || text.starts_with("/*M!")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits() {
        let v: Vec<_> = statements(
            "BEGIN; UPDATE t SET c=';' WHERE a='x\\';'; -- c;\n INSERT INTO `a;b` VALUES (\"q;\") /* ; */;;",
        )
        .collect();
        assert_eq!(
            v,
            ["BEGIN", "UPDATE t SET c=';' WHERE a='x\\';'", "-- c;\n INSERT INTO `a;b` VALUES (\"q;\") /* ; */"]
        );
        assert_eq!(statements("  ; /* x */ ; # y").count(), 0);
        assert_eq!(statements("SELECT 'it''s;' ; SELECT 2").count(), 2);
    }

    #[test]
    fn the_sql_mode_decides_where_a_string_ends() {
        let sql = r"INSERT INTO t VALUES ('C:\'); DELETE FROM t WHERE id = 1";
        assert_eq!(statements(sql).count(), 1, "in the default mode the backslash escapes the quote");
        let nbe = Mode { nbe: true, ansi_quotes: false };
        assert_eq!(
            statements_in(sql, nbe).collect::<Vec<_>>(),
            [r"INSERT INTO t VALUES ('C:\')", "DELETE FROM t WHERE id = 1"]
        );
    }
}
