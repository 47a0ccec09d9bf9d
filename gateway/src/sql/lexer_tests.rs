use super::*;

const ANSI: Mode = Mode { nbe: false, ansi_quotes: true };
const NBE: Mode = Mode { nbe: true, ansi_quotes: false };

/// (kind, text) of each token of `sql` read under `mode`.
fn toks(sql: &str, mode: Mode) -> Vec<(Kind, &str)> {
    Lexer::new(sql.as_bytes(), mode).map(|t| (t.kind, &sql[t.range()])).collect()
}

#[test]
fn tokens_of_a_statement() {
    let sql = "SELECT `a``b`, 'it''s', \"q\", 1.5e-3, 0x1F, X'0a', ?, @v, @@session.x FROM t WHERE c <=> -2";
    assert_eq!(
        toks(sql, Mode::default()),
        [
            (Kind::Word, "SELECT"),
            (Kind::Quoted, "`a``b`"),
            (Kind::Punct(b','), ","),
            (Kind::Str, "'it''s'"),
            (Kind::Punct(b','), ","),
            (Kind::Str, "\"q\""),
            (Kind::Punct(b','), ","),
            (Kind::Number, "1.5e-3"),
            (Kind::Punct(b','), ","),
            (Kind::Hex, "0x1F"),
            (Kind::Punct(b','), ","),
            (Kind::Hex, "X'0a'"),
            (Kind::Punct(b','), ","),
            (Kind::Placeholder, "?"),
            (Kind::Punct(b','), ","),
            (Kind::UserVar, "@v"),
            (Kind::Punct(b','), ","),
            (Kind::SysVar, "@@session.x"),
            (Kind::Word, "FROM"),
            (Kind::Word, "t"),
            (Kind::Word, "WHERE"),
            (Kind::Word, "c"),
            (Kind::Op(Op::NullSafeEq), "<=>"),
            (Kind::Punct(b'-'), "-"),
            (Kind::Number, "2"),
        ]
    );
}

#[test]
fn comments_are_skipped_or_kept_as_tokens() {
    let sql = "SELECT /*+ hint */ 1 # line\n-- line\n--x /*!50100 v */ /*M!100100 m */";
    assert_eq!(
        toks(sql, Mode::default()),
        [
            (Kind::Word, "SELECT"),
            (Kind::Comment, "/*+ hint */"),
            (Kind::Number, "1"),
            (Kind::Punct(b'-'), "-"),
            (Kind::Punct(b'-'), "-"),
            (Kind::Word, "x"),
            (Kind::Versioned, "/*!50100 v */"),
            (Kind::Versioned, "/*M!100100 m */"),
        ]
    );
    let entered: Vec<_> =
        Lexer::new(b"a /*!50100 PARTITION p */ b */", Mode::default()).entering_versioned().map(|t| t.kind).collect();
    // The versioned comment's body is read; a stray `*/` outside one is two bytes of punctuation.
    assert_eq!(entered, [Kind::Word, Kind::Word, Kind::Word, Kind::Word, Kind::Punct(b'*'), Kind::Punct(b'/')]);
}

#[test]
fn the_sql_mode_decides_what_quotes_and_backslashes_mean() {
    let sql = r#"SELECT "a\", 'b\' x"#;
    assert_eq!(toks(sql, Mode::default()), [(Kind::Word, "SELECT"), (Kind::Unterminated, r#""a\", 'b\' x"#)]);
    assert_eq!(
        toks(sql, NBE),
        [
            (Kind::Word, "SELECT"),
            (Kind::Str, r#""a\""#),
            (Kind::Punct(b','), ","),
            (Kind::Str, r"'b\'"),
            (Kind::Word, "x")
        ]
    );
    assert_eq!(toks(r#"SELECT "a\" FROM t"#, ANSI)[1], (Kind::Quoted, r#""a\""#));
    assert_eq!(toks(r#"SET @"a\"" = 1"#, Mode::default())[1], (Kind::UserVar, r#"@"a\"""#));
    assert_eq!(toks(r#"SET @"a\" = 1"#, ANSI)[1], (Kind::UserVar, r#"@"a\""#));
}

#[test]
fn unusual_literals_are_odd_tokens() {
    for odd in ["1abc", "1e", "1.2.3", "1.e", "0b1", "0xZZ", "X'zz'", "@"] {
        let kinds: Vec<_> = toks(odd, Mode::default()).into_iter().map(|(k, _)| k).collect();
        assert_eq!(kinds, [Kind::Odd], "{odd}");
    }
    assert_eq!(toks("\u{1}", Mode::default()), [(Kind::Odd, "\u{1}")]);
    for number in ["1.", "1.e7", "8.E-7", ".5", ".5e3", "12.50"] {
        assert_eq!(toks(number, Mode::default()), [(Kind::Number, number)]);
    }
    // The empty hex string is a literal (the partition reader locates rows keyed by it).
    assert_eq!(toks("X''", Mode::default()), [(Kind::Hex, "X''")]);
}

#[test]
fn unterminated_text_is_one_last_token() {
    for text in ["'abc", "`abc", "\"abc", "/* abc", "/*! abc", "X'ab", "@'ab"] {
        let sql = format!("SELECT {text}");
        assert_eq!(toks(&sql, Mode::default()).last(), Some(&(Kind::Unterminated, text)), "{sql}");
    }
    // A trailing backslash escapes past the end.
    assert_eq!(toks("'a\\", Mode::default()), [(Kind::Unterminated, "'a\\")]);
}

#[test]
fn the_fast_path_declines_what_it_does_not_handle() {
    let mut hints = Hints::default();
    let lexed = lex("SELECT /*+ READ_CONSISTENCY(WEAK) */ c FROM t WHERE id = 0x1f", &mut hints);
    assert_eq!(lexed.map(|t| t.len()), Some(8));
    for declined in ["SELECT N'x'", "SELECT b'1'", "SELECT 1abc", "SELECT /*! 1 */", "SELECT 'x", "SELECT é FROM t"] {
        assert!(lex(declined, &mut Hints::default()).is_none(), "{declined}");
    }
    for kept in ["SELECT 'é'", "SELECT _utf8mb4'x'", "SELECT an'x'", "SELECT 1 /* é */"] {
        assert!(lex(kept, &mut Hints::default()).is_some(), "{kept}");
    }
}

#[test]
fn hostile_text_lexes_in_one_pass() {
    let deep = "(".repeat(100_000) + &"'\\".repeat(50_000) + &"/*".repeat(10_000);
    let n = Lexer::new(deep.as_bytes(), Mode::default()).count();
    assert_eq!(n, 100_001, "parentheses, then the unterminated rest");
    let bytes: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
    for mode in [Mode::default(), NBE, ANSI] {
        let covered: usize = Lexer::new(&bytes, mode).map(|t| t.range().len()).sum();
        assert!(covered <= bytes.len());
    }
}

#[test]
fn leading_comments_are_skipped() {
    assert_eq!(skip_leading_comments("/* a */ -- b\n # c\n SHOW PROCESSLIST"), "SHOW PROCESSLIST");
    assert_eq!(skip_leading_comments("/*!40101 SET x=1 */"), "/*!40101 SET x=1 */");
    assert_eq!(skip_leading_comments("/* open"), "");
    assert_eq!(skip_leading_comments(" -- only"), "");
    assert_eq!(first_word("/**/Kill 5"), "Kill");
    assert_eq!(first_word("'x'"), "");
}
