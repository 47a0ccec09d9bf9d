//! Splitting a multi-statement COM_QUERY on top-level `;` (quotes and comments respected).

/// Iterator over the statements of a COM_QUERY text, each trimmed, empty ones skipped.
#[derive(Debug, Clone)]
pub struct Statements<'a> {
    sql: &'a str,
    pos: usize,
}

/// Splits `sql` into its statements.
pub fn statements(sql: &str) -> Statements<'_> {
    Statements { sql, pos: 0 }
}

impl<'a> Iterator for Statements<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        while self.pos < self.sql.len() {
            let start = self.pos;
            let end = statement_end(self.sql.as_bytes(), start);
            self.pos = end + 1;
            let stmt = self.sql.get(start..end).unwrap_or("").trim();
            if !stmt.is_empty() && !only_comments(stmt) {
                return Some(stmt);
            }
        }
        None
    }
}

/// Offset of the `;` ending the statement that starts at `i` (or the text's length).
fn statement_end(b: &[u8], mut i: usize) -> usize {
    // No `;` left (the common case): the rest is one statement, found by one memchr.
    if !b.get(i..).is_some_and(|rest| rest.contains(&b';')) {
        return b.len();
    }
    while i < b.len() {
        i = match b[i] {
            b';' => return i,
            q @ (b'\'' | b'"' | b'`') => skip_quoted(b, i, q),
            b'#' => skip_line(b, i),
            b'-' if b.get(i + 1) == Some(&b'-')
                && b.get(i + 2).is_none_or(|c| c.is_ascii_whitespace() || c.is_ascii_control()) =>
            {
                skip_line(b, i)
            }
            b'/' if b.get(i + 1) == Some(&b'*') => skip_block(b, i),
            _ => i + 1,
        };
    }
    b.len()
}

fn skip_quoted(b: &[u8], i: usize, q: u8) -> usize {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' if q != b'`' => j += 2,
            c if c == q && b.get(j + 1) == Some(&q) => j += 2,
            c if c == q => return j + 1,
            _ => j += 1,
        }
    }
    b.len()
}

fn skip_line(b: &[u8], i: usize) -> usize {
    b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| i + p + 1)
}

fn skip_block(b: &[u8], i: usize) -> usize {
    b[i + 2..].windows(2).position(|w| w == b"*/").map_or(b.len(), |p| i + 2 + p + 2)
}

/// Whether a statement holds nothing but comments and blanks.
fn only_comments(stmt: &str) -> bool {
    let b = stmt.as_bytes();
    let mut i = 0;
    while i < b.len() {
        i = match b[i] {
            c if c.is_ascii_whitespace() => i + 1,
            b'#' => skip_line(b, i),
            b'-' if b.get(i + 1) == Some(&b'-')
                && b.get(i + 2).is_none_or(|c| c.is_ascii_whitespace() || c.is_ascii_control()) =>
            {
                skip_line(b, i)
            }
            b'/' if b.get(i + 1) == Some(&b'*') && b.get(i + 2) != Some(&b'!') => skip_block(b, i),
            _ => return false,
        };
    }
    true
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
}
