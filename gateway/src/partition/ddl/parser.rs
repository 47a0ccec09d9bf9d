//! Recursive descent over the CREATE TABLE subset: name, columns, primary key, table charset.

use super::lexer::{tokenize, Tok, Token};
use super::partitions::{parse_partitioning, Partitioning};
use crate::partition::collation::Collation;
use crate::partition::scheme::{Column, ColumnType, TableScheme};
use crate::partition::PartitionError;

/// Token cursor with keyword helpers.
pub(super) struct Parser {
    toks: Vec<Token>,
    pub(super) i: usize,
    end: usize,
}

impl Parser {
    pub(super) fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.i).map(|t| &t.tok)
    }

    pub(super) fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.i + k).map(|t| &t.tok)
    }

    pub(super) fn err(&self, msg: impl Into<String>) -> PartitionError {
        let pos = self.toks.get(self.i).map_or(self.end, |t| t.pos);
        PartitionError::Ddl { pos, msg: msg.into() }
    }

    pub(super) fn is_word(&self, kw: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(w)) if w.eq_ignore_ascii_case(kw))
    }

    pub(super) fn eat_word(&mut self, kw: &str) -> bool {
        let yes = self.is_word(kw);
        if yes {
            self.i += 1;
        }
        yes
    }

    pub(super) fn expect_word(&mut self, kw: &str) -> Result<(), PartitionError> {
        if self.eat_word(kw) {
            Ok(())
        } else {
            Err(self.err(format!("expected {kw}")))
        }
    }

    pub(super) fn is_punct(&self, c: char) -> bool {
        self.peek() == Some(&Tok::Punct(c))
    }

    pub(super) fn eat_punct(&mut self, c: char) -> bool {
        let yes = self.is_punct(c);
        if yes {
            self.i += 1;
        }
        yes
    }

    pub(super) fn expect_punct(&mut self, c: char) -> Result<(), PartitionError> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            Err(self.err(format!("expected '{c}'")))
        }
    }

    pub(super) fn ident(&mut self) -> Result<String, PartitionError> {
        match self.peek() {
            Some(Tok::Word(w) | Tok::Quoted(w)) => {
                let w = w.clone();
                self.i += 1;
                Ok(w)
            }
            _ => Err(self.err("expected a name")),
        }
    }

    pub(super) fn number(&mut self) -> Result<u32, PartitionError> {
        match self.peek() {
            Some(Tok::Number(n)) => {
                let v = n.parse().map_err(|_| self.err("expected an integer"))?;
                self.i += 1;
                Ok(v)
            }
            _ => Err(self.err("expected an integer")),
        }
    }

    /// Skips one token, or a whole balanced `( … )` group.
    pub(super) fn skip_item(&mut self) -> Result<(), PartitionError> {
        if !self.is_punct('(') {
            self.i += 1;
            return Ok(());
        }
        let mut depth = 0usize;
        while let Some(t) = self.peek() {
            match t {
                Tok::Punct('(') => depth += 1,
                Tok::Punct(')') => depth -= 1,
                _ => {}
            }
            self.i += 1;
            if depth == 0 {
                return Ok(());
            }
        }
        Err(self.err("unbalanced parentheses"))
    }

    /// Token texts of a balanced group's inside, with the group consumed.
    pub(super) fn group(&mut self) -> Result<Vec<Tok>, PartitionError> {
        let start = self.i;
        self.skip_item()?;
        Ok(self.toks[start + 1..self.i - 1].iter().map(|t| t.tok.clone()).collect())
    }

    pub(super) fn tokens_from(&self, start: usize) -> &[Token] {
        &self.toks[start..]
    }

    pub(super) fn at_end(&self) -> bool {
        self.i >= self.toks.len() || self.is_punct(';')
    }
}

/// Parses a CREATE TABLE statement into a `TableScheme` (an error if it has no partitioning).
pub fn parse_create_table(text: &str) -> Result<TableScheme, PartitionError> {
    let mut p = Parser { toks: tokenize(text)?, i: 0, end: text.len() };
    p.expect_word("create")?;
    p.eat_word("temporary");
    p.expect_word("table")?;
    if p.eat_word("if") {
        p.expect_word("not")?;
        p.expect_word("exists")?;
    }
    let mut name = p.ident()?;
    if p.eat_punct('.') {
        name = p.ident()?;
    }
    p.expect_punct('(')?;
    let (mut columns, primary_key) = definitions(&mut p)?;
    let table_collation = table_options(&mut p)?;
    for c in &mut columns {
        if c.collation.is_empty() {
            c.collation = table_collation.clone();
        }
    }
    if p.at_end() {
        return Err(p.err("the table is not partitioned"));
    }
    let Partitioning { level1, level2, partitions } = parse_partitioning(&mut p)?;
    if !p.at_end() {
        return Err(p.err("unexpected text after the partition definition"));
    }
    Ok(TableScheme::new(name, columns, primary_key, level1, level2, partitions))
}

const INDEX_WORDS: [&str; 9] =
    ["primary", "key", "index", "unique", "fulltext", "spatial", "foreign", "constraint", "check"];

fn definitions(p: &mut Parser) -> Result<(Vec<Column>, Vec<String>), PartitionError> {
    let mut columns = Vec::new();
    let mut pk = Vec::new();
    loop {
        let is_index = matches!(p.peek(), Some(Tok::Word(w)) if INDEX_WORDS.iter().any(|k| w.eq_ignore_ascii_case(k)));
        if is_index {
            if p.eat_word("constraint")
                && !p.is_word("primary")
                && !p.is_word("unique")
                && !p.is_word("foreign")
                && !p.is_word("check")
            {
                p.ident()?;
            }
            if p.eat_word("primary") {
                p.expect_word("key")?;
                while !p.is_punct('(') && !p.at_end() {
                    p.skip_item()?;
                }
                pk = key_parts(p)?;
            }
        } else {
            columns.push(column(p)?);
        }
        while !p.is_punct(',') && !p.is_punct(')') {
            if p.at_end() {
                return Err(p.err("unterminated column list"));
            }
            p.skip_item()?;
        }
        if p.eat_punct(')') {
            return Ok((columns, pk));
        }
        p.expect_punct(',')?;
    }
}

/// `(a, b(10), c DESC)` → names.
fn key_parts(p: &mut Parser) -> Result<Vec<String>, PartitionError> {
    p.expect_punct('(')?;
    let mut names = Vec::new();
    loop {
        names.push(p.ident()?);
        while !p.is_punct(',') && !p.is_punct(')') {
            if p.at_end() {
                return Err(p.err("unterminated key"));
            }
            p.skip_item()?;
        }
        if p.eat_punct(')') {
            return Ok(names);
        }
        p.expect_punct(',')?;
    }
}

fn column(p: &mut Parser) -> Result<Column, PartitionError> {
    let name = p.ident()?;
    let ty_name = p.ident()?.to_ascii_lowercase();
    if ty_name == "double" {
        p.eat_word("precision");
    }
    let mut args = Vec::new();
    if p.is_punct('(') {
        for t in p.group()? {
            if let Tok::Number(n) = t {
                args.push(n.parse::<u32>().map_err(|_| p.err("bad type argument"))?);
            }
        }
    }
    let (mut unsigned, mut charset, mut collation, mut generated) = (false, None, None, false);
    while !p.is_punct(',') && !p.is_punct(')') && !p.at_end() {
        if p.eat_word("unsigned") || p.eat_word("zerofill") {
            unsigned = true;
        } else if p.eat_word("character") {
            p.expect_word("set")?;
            charset = Some(p.ident()?);
        } else if p.eat_word("charset") {
            charset = Some(p.ident()?);
        } else if p.eat_word("collate") {
            collation = Some(p.ident()?.to_ascii_lowercase());
        } else if p.eat_word("generated") || p.eat_word("as") {
            generated = true;
        } else {
            p.skip_item()?;
        }
    }
    let ty = column_type(&ty_name, &args, unsigned);
    let is_binary = matches!(ty, ColumnType::Binary { .. } | ColumnType::VarBinary { .. })
        || charset.as_deref().is_some_and(|c| c.eq_ignore_ascii_case("binary"));
    let collation = match (collation, charset) {
        _ if is_binary => "binary".to_string(),
        (Some(c), _) => c,
        (None, Some(cs)) => Collation::default_for_charset(&cs),
        (None, None) => String::new(),
    };
    let ty = match (ty, is_binary) {
        (ColumnType::Char { len }, true) => ColumnType::Binary { len },
        (ColumnType::VarChar { len }, true) => ColumnType::VarBinary { len },
        (ty, _) => ty,
    };
    Ok(Column { name, ty, collation, generated })
}

fn column_type(name: &str, args: &[u32], unsigned: bool) -> ColumnType {
    let arg = |i: usize, d: u32| args.get(i).copied().unwrap_or(d);
    let fsp = arg(0, 0).min(6) as u8;
    let int = |bytes| ColumnType::Int { bytes, unsigned };
    match name {
        "tinyint" | "bool" | "boolean" => int(1),
        "smallint" => int(2),
        "mediumint" => int(3),
        "int" | "integer" => int(4),
        "bigint" => int(8),
        "float" if args.len() <= 1 && arg(0, 0) <= 24 => ColumnType::Float,
        "float" if args.len() <= 1 => ColumnType::Double,
        "double" | "real" if args.is_empty() => ColumnType::Double,
        "decimal" | "numeric" | "dec" | "fixed" => {
            ColumnType::Decimal { precision: arg(0, 10).min(255) as u8, scale: arg(1, 0).min(255) as u8 }
        }
        "date" => ColumnType::Date,
        "datetime" => ColumnType::DateTime { fsp },
        "timestamp" => ColumnType::Timestamp { fsp },
        "time" => ColumnType::Time { fsp },
        "year" => ColumnType::Year,
        "char" | "nchar" => ColumnType::Char { len: arg(0, 1) },
        "varchar" | "nvarchar" => ColumnType::VarChar { len: arg(0, 65535) },
        "binary" => ColumnType::Binary { len: arg(0, 1) },
        "varbinary" => ColumnType::VarBinary { len: arg(0, 65535) },
        other => ColumnType::Other(other.to_string()),
    }
}

/// Table options up to `PARTITION BY`; returns the table's default collation.
fn table_options(p: &mut Parser) -> Result<String, PartitionError> {
    let (mut charset, mut collation) = (None, None);
    let at_partition_by = |p: &Parser| {
        p.is_word("partition") && matches!(p.peek_at(1), Some(Tok::Word(w)) if w.eq_ignore_ascii_case("by"))
    };
    while !p.at_end() && !at_partition_by(p) {
        if p.eat_word("character") {
            p.expect_word("set")?;
            p.eat_punct('=');
            charset = Some(p.ident()?);
        } else if p.eat_word("charset") {
            p.eat_punct('=');
            charset = Some(p.ident()?);
        } else if p.eat_word("collate") {
            p.eat_punct('=');
            collation = Some(p.ident()?.to_ascii_lowercase());
        } else {
            p.skip_item()?;
        }
    }
    Ok(match (collation, charset) {
        (Some(c), _) => c,
        (None, Some(cs)) => Collation::default_for_charset(&cs),
        (None, None) => "utf8mb4_general_ci".to_string(),
    })
}
