use std::sync::Arc;

use super::*;
use crate::sql::analyze;

fn key(text: &str) -> Key {
    Key::from_slice(text.as_bytes())
}

fn template(sql: &str) -> Template {
    Arc::new(crate::sql::analysed::owned(&analyze(sql)))
}

#[test]
fn a_kept_shape_is_lent_once_until_it_is_given_back() {
    let mut memo = ShapeMemo::default();
    let t = template("SELECT 1");
    memo.remember(&key("a"), Some(&t));
    let Memo::Kept(lent) = memo.lend(&key("a")) else { panic!("remembered as kept") };
    assert!(Arc::ptr_eq(&lent, &t), "the template the shared cache gave");
    assert!(matches!(memo.lend(&key("a")), Memo::Unknown), "lent: the shared cache is asked");
    memo.give_back(lent);
    assert!(matches!(memo.lend(&key("a")), Memo::Kept(_)), "given back");
    assert!(matches!(memo.lend(&key("b")), Memo::Unknown));
}

#[test]
fn a_shape_not_kept_is_remembered_as_such() {
    let mut memo = ShapeMemo::default();
    memo.remember(&key("n"), None);
    assert!(matches!(memo.lend(&key("n")), Memo::NotKept));
    assert!(matches!(memo.lend(&key("n")), Memo::NotKept), "nothing is lent");
}

#[test]
fn the_memo_is_bounded_and_forgets_the_oldest_shape() {
    let mut memo = ShapeMemo::default();
    let first = template("SELECT 1");
    memo.remember(&key("k0"), Some(&first));
    let Memo::Kept(lent) = memo.lend(&key("k0")) else { panic!("kept") };
    for i in 1..=MAX_ENTRIES {
        memo.remember(&key(&format!("k{i}")), None);
    }
    assert_eq!(memo.entries.len(), MAX_ENTRIES);
    assert!(matches!(memo.lend(&key("k0")), Memo::Unknown), "the oldest was replaced");
    assert!(matches!(memo.lend(&key(&format!("k{MAX_ENTRIES}"))), Memo::NotKept));
    // The forgotten shape's template comes back to nothing: it is dropped, not misfiled.
    memo.give_back(lent);
    assert!(memo.entries.iter().all(|e| matches!(e.state, State::NotKept)));
    assert_eq!(Arc::strong_count(&first), 1, "only the test holds it");
    let long = "x".repeat(MAX_KEY + 1);
    memo.remember(&key(&long), None);
    assert!(matches!(memo.lend(&key(&long)), Memo::Unknown), "a long key is not remembered");
}
