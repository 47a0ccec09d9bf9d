//! Bounds on statement depth: how deep a syntax tree the tokens of a statement could build.
//!
//! `sqlparser` counts its own recursion (parentheses, subqueries, unary operators) against
//! [`RECURSION_LIMIT`], but it builds chains of infix operators (`a OR b OR c …`, `x + 1 + 1 …`,
//! `… UNION …`) in a loop, as left-deep trees of any depth; walking or dropping such a tree
//! recurses once per operator, and a long enough statement overflows the stack. [`within`]
//! estimates the depth from the tokens before anything is parsed: per bracket level, the
//! operators since the last comma, summed over the open levels, plus the number of open levels.
//! Every left-deep chain needs one operator token per level, so the estimate is an upper bound.
//! Both paths classify their own tokens ([`Class`]) and share the count.

/// `sqlparser`'s recursion limit (its own default, stated here so that the bound is ours).
pub const RECURSION_LIMIT: usize = 50;

/// The deepest tree (by the estimate) the reference path parses. Deeper statements are analysed
/// as unparsed. A 500-term `OR` of equalities is within it.
pub const MAX_TREE_DEPTH: usize = 1_024;

/// What a token is to the depth estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// `(`, `[`, `{`.
    Open,
    /// `)`, `]`, `}`.
    Close,
    /// `,` or `;`: the next list item or statement starts a new chain.
    Separator,
    /// Operator punctuation or an operator keyword ([`is_operator_word`]).
    Operator,
    /// Names, literals, placeholders, variables.
    Operand,
}

/// Whether a statement of these token classes stays within [`MAX_TREE_DEPTH`] by the estimate.
/// Stops at the first token past the bound, so its own memory is bounded too.
pub fn within(classes: impl IntoIterator<Item = Class>) -> bool {
    let mut levels: Vec<usize> = Vec::new();
    let mut top = 0usize;
    let mut sum = 0usize;
    for class in classes {
        match class {
            Class::Open => {
                levels.push(top);
                top = 0;
            }
            Class::Close => {
                sum -= top;
                top = levels.pop().unwrap_or(0);
            }
            Class::Separator => {
                sum -= top;
                top = 0;
            }
            Class::Operator => {
                top += 1;
                sum += 1;
            }
            Class::Operand => {}
        }
        if sum + levels.len() > MAX_TREE_DEPTH {
            return false;
        }
    }
    true
}

/// Keywords that act as infix or postfix operators (or join query bodies) in MySQL syntax.
const OPERATOR_WORDS: [&str; 21] = [
    "AND",
    "OR",
    "XOR",
    "NOT",
    "IS",
    "IN",
    "LIKE",
    "RLIKE",
    "REGEXP",
    "BETWEEN",
    "COLLATE",
    "DIV",
    "MOD",
    "SOUNDS",
    "MEMBER",
    "ESCAPE",
    "BINARY",
    "UNION",
    "INTERSECT",
    "EXCEPT",
    "MINUS",
];

/// Whether an unquoted word is an operator keyword.
pub fn is_operator_word(word: &str) -> bool {
    OPERATOR_WORDS.iter().any(|w| w.eq_ignore_ascii_case(word))
}

/// The class of a punctuation byte of either lexer (operators are every other punctuation).
pub fn punct_class(c: u8) -> Class {
    match c {
        b'(' | b'[' | b'{' => Class::Open,
        b')' | b']' | b'}' => Class::Close,
        b',' | b';' => Class::Separator,
        _ => Class::Operator,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::hint::Hints;
    use crate::sql::{fast, lexer, reference};
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::tokenizer::Tokenizer;

    /// The estimate on both lexers' tokens; they must agree.
    fn within_sql(sql: &str) -> bool {
        let fast = lexer::lex(sql, &mut Hints::default()).unwrap();
        let by_fast = within(fast.iter().map(|t| fast::class(sql, t)));
        let tokens = Tokenizer::new(&MySqlDialect {}, sql).tokenize_with_location().unwrap();
        let by_reference = within(tokens.iter().map(|t| reference::class(&t.token)));
        assert_eq!(by_fast, by_reference, "{sql:.80}");
        by_fast
    }

    fn or_chain(terms: usize) -> String {
        let preds: Vec<String> = (0..terms).map(|i| format!("c1 = {i}")).collect();
        format!("SELECT * FROM t0 WHERE {}", preds.join(" OR "))
    }

    #[test]
    fn ordinary_statements_are_within() {
        assert!(within_sql("SELECT a, b + 1 FROM t WHERE a = 1 AND b IN (1, 2, 3) ORDER BY a LIMIT 5"));
        assert!(within_sql(&or_chain(500)));
        let values: Vec<String> = (0..20_000).map(|i| format!("({i}, -{i}, 'x')")).collect();
        assert!(within_sql(&format!("INSERT INTO t VALUES {}", values.join(", "))));
        let list: Vec<String> = (0..100_000).map(|i| i.to_string()).collect();
        assert!(within_sql(&format!("SELECT * FROM t WHERE c IN ({})", list.join(","))));
    }

    #[test]
    fn long_chains_and_deep_nesting_are_not() {
        assert!(!within_sql(&or_chain(600)));
        assert!(!within_sql(&format!("SELECT {}", ["1"; 2_000].join(" + "))));
        assert!(!within_sql(&format!("SELECT * FROM t WHERE c = {}1", "- ".repeat(2_000))));
        assert!(!within_sql(&format!("SELECT {}1{}", "(".repeat(2_000), ")".repeat(2_000))));
        assert!(!within_sql(&["SELECT 1"; 2_000].join(" UNION ")));
        // Commas inside an inner level do not reset the chain around it.
        assert!(!within_sql(&format!("SELECT * FROM t WHERE {} f(1, 2)", "a = 1 AND ".repeat(1_100))));
    }
}
