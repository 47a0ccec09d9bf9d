use std::sync::Arc;

use super::*;
use crate::sql::analyze;

fn key(text: &str) -> Key {
    Key::from_slice(text.as_bytes())
}

fn template(sql: &str) -> Template {
    Arc::new(crate::sql::analysed::owned(&analyze(sql)))
}

/// `n` keys that fall in one set.
fn same_set(n: usize) -> Vec<Key> {
    let first = slot(hash(&key("k0")));
    (0..).map(|i| key(&format!("k{i}"))).filter(|k| slot(hash(k)) == first).take(n).collect()
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
fn a_template_not_lent_by_the_memo_is_dropped_when_given_back() {
    let mut memo = ShapeMemo::default();
    let t = template("SELECT 1");
    memo.remember(&key("a"), Some(&t));
    // The shared cache's copy, as a statement holds it after a miss.
    memo.give_back(Arc::clone(&t));
    assert_eq!(Arc::strong_count(&t), 2, "the test's and the memo's");
    assert!(matches!(memo.lend(&key("a")), Memo::Kept(_)));
}

#[test]
fn a_shape_not_kept_is_remembered_as_such() {
    let mut memo = ShapeMemo::default();
    memo.remember(&key("n"), None);
    assert!(matches!(memo.lend(&key("n")), Memo::NotKept));
    assert!(matches!(memo.lend(&key("n")), Memo::NotKept), "nothing is lent");
}

#[test]
fn a_set_keeps_its_two_last_used_shapes() {
    let mut memo = ShapeMemo::default();
    let keys = same_set(3);
    let first = template("SELECT 1");
    memo.remember(&keys[0], Some(&first));
    memo.remember(&keys[1], None);
    let Memo::Kept(lent) = memo.lend(&keys[0]) else { panic!("kept") };
    // keys[0] used last: the third shape of the set replaces keys[1].
    memo.remember(&keys[2], None);
    assert!(matches!(memo.lend(&keys[1]), Memo::Unknown), "replaced");
    assert!(matches!(memo.lend(&keys[2]), Memo::NotKept));
    memo.give_back(lent);
    let Memo::Kept(lent) = memo.lend(&keys[0]) else { panic!("kept and given back") };
    // Replacing the lent entry: its template, given back later, is dropped, not misfiled.
    memo.remember(&keys[1], None);
    memo.remember(&keys[2], None);
    memo.remember(&keys[1], None);
    memo.give_back(lent);
    assert_eq!(Arc::strong_count(&first), 1, "only the test holds it");
    let long = "x".repeat(MAX_KEY + 1);
    memo.remember(&key(&long), None);
    assert!(matches!(memo.lend(&key(&long)), Memo::Unknown), "a long key is not remembered");
}
