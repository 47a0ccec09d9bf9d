//! The reference path: `sqlparser` (MySqlDialect) for statements the fast path declines.

mod expr;
mod stmt;
mod tokens;

use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Tokenizer;

use crate::sql::analysis::{Analysis, Path, StmtKind};
use crate::sql::depth;
pub(crate) use tokens::class;

/// Analyses one statement with `sqlparser`. Never fails: a statement it cannot parse gets kind
/// `Other`, path `Unparsed` and no tables or key values (hints and pins are kept when the text
/// could at least be tokenized). A statement whose tree would be deeper than
/// [`depth::MAX_TREE_DEPTH`] is not parsed: it is analysed as unparsed (its hints and pins kept).
pub fn analyze<'a>(sql: &str) -> Analysis<'a> {
    let dialect = MySqlDialect {};
    let mut an = Analysis::new(StmtKind::Other, Path::Unparsed);
    let Ok(mut tokens) = Tokenizer::new(&dialect, sql).with_unescape(false).tokenize_with_location() else {
        return an;
    };
    tokens::unescape(&mut tokens);
    tokens::at_signs(&mut tokens);
    let ctx = expr::Ctx { places: tokens::scan(&tokens, &mut an) };
    if !depth::within(tokens.iter().map(|t| class(&t.token))) {
        return an;
    }
    let lock = tokens::strip_lock(&mut tokens);
    let txn = tokens::strip_snapshot(&mut tokens);
    let insert_partitions = tokens::normalize(&mut tokens);
    let parsed = Parser::new(&dialect)
        .with_recursion_limit(depth::RECURSION_LIMIT)
        .with_tokens_with_locations(tokens)
        .parse_statements();
    let Ok(statements) = parsed else {
        return an;
    };
    let [statement] = statements.as_slice() else {
        return an;
    };
    an.path = Path::Reference;
    stmt::statement(statement, &ctx, &mut an);
    an.txn.insert(txn);
    if let (Some(t), false) = (an.tables.first_mut(), insert_partitions.is_empty()) {
        t.partitions = insert_partitions.into_iter().map(std::borrow::Cow::Owned).collect();
    }
    if lock.is_some() {
        if an.kind != StmtKind::Select {
            return Analysis { pins: an.pins, hints: an.hints, ..Analysis::new(StmtKind::Other, Path::Unparsed) };
        }
        an.lock = lock;
    }
    an
}
