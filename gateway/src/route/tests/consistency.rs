//! Strong vs weak, docs/routing.md §2, one row per rule.

use crate::route::consistency::Consistency::{self, Strong, Weak};
use crate::route::consistency::{decide_consistency, ConsistencyInputs, ConsistencyRule, ReadConsistency};

fn select() -> ConsistencyInputs {
    ConsistencyInputs { is_select: true, ..ConsistencyInputs::default() }
}

type Setup = fn() -> ConsistencyInputs;

const CASES: &[(&str, Setup, Consistency, ConsistencyRule)] = &[
    (
        "DML is strong",
        || ConsistencyInputs { hint: Some(Weak), ..ConsistencyInputs::default() },
        Strong,
        ConsistencyRule::NotSelect,
    ),
    ("plain select is strong", select, Strong, ConsistencyRule::Default),
    ("weak hint", || ConsistencyInputs { hint: Some(Weak), ..select() }, Weak, ConsistencyRule::Hint),
    (
        "strong hint beats weak session",
        || ConsistencyInputs { hint: Some(Strong), session: Some(ReadConsistency::Weak), ..select() },
        Strong,
        ConsistencyRule::Hint,
    ),
    (
        "strong hint beats split",
        || ConsistencyInputs { hint: Some(Strong), read_write_split: true, ..select() },
        Strong,
        ConsistencyRule::Hint,
    ),
    (
        "session WEAK",
        || ConsistencyInputs { session: Some(ReadConsistency::Weak), ..select() },
        Weak,
        ConsistencyRule::SessionVariable,
    ),
    (
        "session FROZEN is strong",
        || ConsistencyInputs { session: Some(ReadConsistency::Frozen), ..select() },
        Strong,
        ConsistencyRule::Default,
    ),
    (
        "split, autocommit",
        || ConsistencyInputs { read_write_split: true, ..select() },
        Weak,
        ConsistencyRule::ReadWriteSplit,
    ),
    (
        "split overrides session STRONG (ODP quirk kept)",
        || ConsistencyInputs { read_write_split: true, session: Some(ReadConsistency::Strong), ..select() },
        Weak,
        ConsistencyRule::ReadWriteSplit,
    ),
    (
        "split, autocommit 0",
        || ConsistencyInputs { read_write_split: true, autocommit: false, ..select() },
        Strong,
        ConsistencyRule::Default,
    ),
    (
        "split + transaction split, autocommit 0",
        || ConsistencyInputs { read_write_split: true, transaction_split: true, autocommit: false, ..select() },
        Weak,
        ConsistencyRule::ReadWriteSplit,
    ),
    (
        "split in a transaction",
        || ConsistencyInputs { read_write_split: true, transaction_split: true, in_transaction: true, ..select() },
        Strong,
        ConsistencyRule::Default,
    ),
    (
        "FOR UPDATE forces strong",
        || ConsistencyInputs { hint: Some(Weak), locking_read: true, ..select() },
        Strong,
        ConsistencyRule::Downgraded,
    ),
    (
        "no weak-read support",
        || ConsistencyInputs { session: Some(ReadConsistency::Weak), server_supports_weak_read: false, ..select() },
        Strong,
        ConsistencyRule::Downgraded,
    ),
    (
        "locking strong read stays strong",
        || ConsistencyInputs { locking_read: true, ..select() },
        Strong,
        ConsistencyRule::Default,
    ),
];

#[test]
fn consistency_rules() {
    for (case, setup, level, rule) in CASES {
        assert_eq!(decide_consistency(&setup()), (*level, *rule), "{case}");
    }
}

#[test]
fn read_consistency_codes() {
    assert_eq!(ReadConsistency::from_code(1), Some(ReadConsistency::Frozen));
    assert_eq!(ReadConsistency::from_code(2), Some(ReadConsistency::Weak));
    assert_eq!(ReadConsistency::from_code(3), Some(ReadConsistency::Strong));
    assert_eq!(ReadConsistency::from_code(0), None);
}
