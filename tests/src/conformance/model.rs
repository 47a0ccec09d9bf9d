//! Column types of the partition conformance tables: their SQL type, how the kernel's copy of a
//! value is read back (`SELECT` expression) and how that text becomes the SQL literal handed to
//! `gateway locate` (plain literals: `42`, `-1.5`, `1.4e-45`, `NULL`, `'text'`, `X'00ff'`,
//! `'2024-01-02'`).

/// A character-column collation used by the tables (utf8mb4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coll {
    /// `utf8mb4_general_ci` (the kernel's default).
    GeneralCi,
    /// `utf8mb4_bin`.
    Bin,
}

impl Coll {
    fn sql(self) -> &'static str {
        match self {
            Coll::GeneralCi => "utf8mb4_general_ci",
            Coll::Bin => "utf8mb4_bin",
        }
    }
}

/// A column type (docs/partition.md §4 key types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// TINYINT (8), SMALLINT (16), MEDIUMINT (24), INT (32), BIGINT (64), signed or unsigned.
    Int { bits: u32, unsigned: bool },
    /// FLOAT.
    Float,
    /// DOUBLE.
    Double,
    /// DECIMAL(p, s).
    Decimal { p: u32, s: u32 },
    /// DATE.
    Date,
    /// DATETIME(fsp).
    DateTime { fsp: u32 },
    /// TIMESTAMP (NULL-able; values are written and read in the table's session time zone).
    Timestamp,
    /// TIME.
    Time,
    /// TIMESTAMP(fsp) (NULL-able, like [`Kind::Timestamp`]).
    TimestampFsp { fsp: u32 },
    /// TIME(fsp).
    TimeFsp { fsp: u32 },
    /// YEAR.
    Year,
    /// CHAR(n) with a utf8mb4 collation.
    Char { n: u32, coll: Coll },
    /// VARCHAR(n) with a utf8mb4 collation.
    VarChar { n: u32, coll: Coll },
    /// BINARY(n) (collation `binary`).
    Binary { n: u32 },
    /// VARBINARY(n) (collation `binary`).
    VarBinary { n: u32 },
}

impl Kind {
    /// The column type as written in `CREATE TABLE`.
    pub fn sql_type(&self) -> String {
        match *self {
            Kind::Int { bits, unsigned } => {
                let base = match bits {
                    8 => "TINYINT",
                    16 => "SMALLINT",
                    24 => "MEDIUMINT",
                    32 => "INT",
                    _ => "BIGINT",
                };
                if unsigned {
                    format!("{base} UNSIGNED")
                } else {
                    base.to_string()
                }
            }
            Kind::Float => "FLOAT".into(),
            Kind::Double => "DOUBLE".into(),
            Kind::Decimal { p, s } => format!("DECIMAL({p},{s})"),
            Kind::Date => "DATE".into(),
            Kind::DateTime { fsp: 0 } => "DATETIME".into(),
            Kind::DateTime { fsp } => format!("DATETIME({fsp})"),
            Kind::Timestamp => "TIMESTAMP".into(),
            Kind::Time => "TIME".into(),
            Kind::TimestampFsp { fsp } => format!("TIMESTAMP({fsp})"),
            Kind::TimeFsp { fsp } => format!("TIME({fsp})"),
            Kind::Year => "YEAR".into(),
            Kind::Char { n, coll } => format!("CHAR({n}) CHARACTER SET utf8mb4 COLLATE {}", coll.sql()),
            Kind::VarChar { n, coll } => format!("VARCHAR({n}) CHARACTER SET utf8mb4 COLLATE {}", coll.sql()),
            Kind::Binary { n } => format!("BINARY({n})"),
            Kind::VarBinary { n } => format!("VARBINARY({n})"),
        }
    }

    /// `(min, max)` of an integer type.
    pub fn int_range(&self) -> (i128, i128) {
        match *self {
            Kind::Int { bits, unsigned: true } => (0, (1i128 << bits) - 1),
            Kind::Int { bits, unsigned: false } => (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
            _ => (0, 0),
        }
    }

    /// The expression that reads column `c` back in a form [`Kind::literal`] turns into an exact
    /// literal: integers and DECIMAL as printed, FLOAT widened to DOUBLE (`c+0`, the shortest
    /// round-trip text of the stored f32), YEAR as its number, strings as HEX.
    pub fn readback_expr(&self, c: &str) -> String {
        match self {
            Kind::Float | Kind::Year => format!("`{c}`+0"),
            Kind::Char { .. } | Kind::VarChar { .. } | Kind::Binary { .. } | Kind::VarBinary { .. } => {
                format!("HEX(`{c}`)")
            }
            _ => format!("`{c}`"),
        }
    }

    /// The SQL literal for a value the kernel printed for [`Kind::readback_expr`] (batch mode, so
    /// SQL NULL is the text `NULL`; HEX never prints that).
    pub fn literal(&self, field: &str) -> Result<String, String> {
        if field == "NULL" {
            return Ok("NULL".into());
        }
        Ok(match self {
            Kind::Int { .. } | Kind::Float | Kind::Double | Kind::Decimal { .. } | Kind::Year => field.to_string(),
            Kind::Date
            | Kind::DateTime { .. }
            | Kind::Timestamp
            | Kind::Time
            | Kind::TimestampFsp { .. }
            | Kind::TimeFsp { .. } => format!("'{field}'"),
            Kind::Char { .. } | Kind::VarChar { .. } => {
                let bytes = unhex(field)?;
                let s = String::from_utf8(bytes).map_err(|e| format!("stored text is not UTF-8: {e}"))?;
                quote_text(&s)
            }
            Kind::Binary { .. } | Kind::VarBinary { .. } => format!("X'{}'", field.to_ascii_lowercase()),
        })
    }

    /// Whether values of this type are strings.
    pub fn is_text(&self) -> bool {
        matches!(self, Kind::Char { .. } | Kind::VarChar { .. })
    }
}

/// A quoted SQL string literal: `'` doubled, backslash, NUL, tab, CR, LF and Ctrl-Z escaped with
/// the MySQL backslash escapes.
pub fn quote_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for ch in s.chars() {
        match ch {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\x1a' => out.push_str("\\Z"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Bytes of a hex string (either case).
pub fn unhex(s: &str) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err(format!("odd-length hex {s:?}"));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|e| format!("bad hex {s:?}: {e}")))
        .collect()
}

/// One column of a conformance table.
#[derive(Debug, Clone)]
pub struct Col {
    /// Column name.
    pub name: String,
    /// Type.
    pub kind: Kind,
    /// Whether the column accepts NULL (the generators then produce some).
    pub nullable: bool,
}

impl Col {
    /// The column definition in `CREATE TABLE`.
    pub fn ddl(&self) -> String {
        // TIMESTAMP columns are NOT NULL by default in MySQL mode unless declared NULL.
        let null = match (self.nullable, self.kind) {
            (true, Kind::Timestamp | Kind::TimestampFsp { .. }) => " NULL",
            (true, _) => "",
            (false, _) => " NOT NULL",
        };
        format!("`{}` {}{}", self.name, self.kind.sql_type(), null)
    }
}
