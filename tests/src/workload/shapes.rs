//! The request shapes of the workload: each appends one request (or a transaction, a statement
//! pair) to a client's list, with its expectation and comparability.

use super::generate::{Effect, Gen, ALL, WRITTEN};
use super::{Expect, Item, Stmt};
use crate::cluster::schema;

impl Gen<'_> {
    pub(super) fn dml_item(&mut self, prepared: bool) {
        let table = *self.rng.pick(&WRITTEN);
        let m = self.marker();
        if !prepared && table != "t_key" && self.rng.chance(15) {
            return self.multi_row_insert(table, m);
        }
        let d = self.dml(table, m);
        let expect = self.strong(d.table, d.key);
        self.push(m, Self::dml_stmt(m, &d, prepared), expect, true);
        self.apply(d.effect);
    }

    /// `INSERT … VALUES (a), (b)` with both keys in one partition (the gateway checks that all
    /// rows map to one partition, docs/partition.md §2).
    pub(super) fn multi_row_insert(&mut self, table: &'static str, m: u64) {
        let Some(a) = self.absent_owned(table) else { return };
        let Some(b) = self.partition_mate(table, a).filter(|b| !self.present[table].contains(b)) else { return };
        let body = format!("INSERT INTO {table} (c1, c2, c3) VALUES ({a}, 'm{m}', 1), ({b}, 'm{m}', 2)");
        let expect = self.strong(table, a);
        self.text(m, &body, expect, true);
        self.apply(Effect::Insert(table, a));
        self.apply(Effect::Insert(table, b));
    }

    pub(super) fn point_read(&mut self) {
        let table = *self.rng.pick(&ALL);
        let k = self.read_key(table);
        let hint = if self.rng.chance(20) { "/*+READ_CONSISTENCY(STRONG)*/ " } else { "" };
        let m = self.marker();
        let expect = self.strong(table, k);
        self.text(m, &format!("SELECT {hint}c2, c3 FROM {table} WHERE c1 = {k}"), expect, true);
    }

    /// Weak reads of written tables may be stale by design (the follower never sees the
    /// leader's writes here): their results are compared only for the never-written table.
    pub(super) fn weak_read(&mut self) {
        let table = *self.rng.pick(&ALL);
        let k = self.read_key(table);
        let m = self.marker();
        let expect = self.weak(table, k);
        let compare = schema::READONLY_TABLES.contains(&table);
        self.text(
            m,
            &format!("SELECT /*+READ_CONSISTENCY(WEAK)*/ c2, c3 FROM {table} WHERE c1 = {k}"),
            expect,
            compare,
        );
    }

    /// A locking read is STRONG whatever its hint says (docs/routing.md §2 [GW]).
    pub(super) fn locking_read(&mut self) {
        let table = *self.rng.pick(&WRITTEN);
        let k = self.owned_key();
        let lock = *self.rng.pick(&["FOR UPDATE", "FOR UPDATE NOWAIT", "LOCK IN SHARE MODE"]);
        let m = self.marker();
        let expect = self.strong(table, k);
        self.text(
            m,
            &format!("SELECT /*+READ_CONSISTENCY(WEAK)*/ c2 FROM {table} WHERE c1 = {k} {lock}"),
            expect,
            true,
        );
    }

    /// BEGIN / START TRANSACTION, two or three statements on one partition, COMMIT or ROLLBACK.
    pub(super) fn transaction(&mut self) {
        let table = *self.rng.pick(&WRITTEN);
        let k = self.owned_key();
        let begin = self.marker();
        let first = self.marker();
        let opener = if self.rng.chance(50) { "BEGIN" } else { "START TRANSACTION" };
        self.text(begin, opener, Expect::Begin { first }, true);
        let prepared = self.rng.chance(30);
        let d = self.rng.below(10) as i64 + 1;
        let stmt = if prepared {
            Stmt::Prepared {
                sql: format!("/* q:{first} */ UPDATE {table} SET c3 = c3 + ? WHERE c1 = ?"),
                params: vec![d, k],
            }
        } else {
            Stmt::Text(format!("/* q:{first} */ UPDATE {table} SET c3 = c3 + {d} WHERE c1 = {k}"))
        };
        let expect = self.strong(table, k);
        self.push(first, stmt, expect, true);
        let m = self.marker();
        self.text(m, &format!("SELECT c2, c3 FROM {table} WHERE c1 = {k}"), Expect::SameAs(first), true);
        let mut pending = Vec::new();
        if let Some(k2) = self.partition_mate(table, k) {
            let m = self.marker();
            let exists = self.present[table].contains(&k2);
            let (body, effect) = if exists {
                (format!("DELETE FROM {table} WHERE c1 = {k2}"), Effect::Delete(table, k2))
            } else {
                (format!("INSERT INTO {table} (c1, c2, c3) VALUES ({k2}, 't{m}', 0)"), Effect::Insert(table, k2))
            };
            self.text(m, &body, Expect::SameAs(first), true);
            pending.push(effect);
        }
        let commit = self.rng.chance(80);
        let m = self.marker();
        self.text(m, if commit { "COMMIT" } else { "ROLLBACK" }, Expect::SameAs(first), true);
        if commit {
            pending.into_iter().for_each(|e| self.apply(e));
        }
    }

    /// `SET autocommit = 0`: the first statement opens the transaction on its leader.
    pub(super) fn autocommit_off(&mut self) {
        let table = *self.rng.pick(&WRITTEN);
        let m = self.marker();
        self.text(m, "SET autocommit = 0", Expect::Session, true);
        let first = self.marker();
        let d = self.dml(table, first);
        let expect = self.strong(d.table, d.key);
        self.push(first, Self::dml_stmt(first, &d, false), expect, true);
        let m = self.marker();
        let k = d.key;
        self.text(m, &format!("SELECT c2, c3 FROM {table} WHERE c1 = {k}"), Expect::SameAs(first), true);
        let m = self.marker();
        self.text(m, "COMMIT", Expect::SameAs(first), true);
        self.apply(d.effect);
        let m = self.marker();
        self.text(m, "SET autocommit = 1", Expect::Session, true);
    }

    /// IN lists: strong; routed to a leader of the table (the partition when the gateway computes
    /// it, a random partition's otherwise). Results compared where any leader has the rows.
    pub(super) fn in_list(&mut self) {
        let table = *self.rng.pick(&["t_hash", "t_range", "t_plain", "r_hash"]);
        let mut keys = vec![self.read_key(table)];
        if table == "r_hash" || table == "t_plain" {
            keys.extend((0..2).map(|_| self.read_key(table)));
        } else if keys[0] >= 0 {
            let a = keys[0];
            keys.extend((0..2).filter_map(|_| self.partition_mate(table, a)));
        }
        let list: Vec<String> = keys.iter().map(i64::to_string).collect();
        let m = self.marker();
        let expect = if table == "t_plain" {
            Expect::Leader(self.topo.leader(table, 0))
        } else {
            Expect::OneOf(self.topo.leaders(table))
        };
        let compare = table == "t_plain" || table == "r_hash";
        self.text(
            m,
            &format!("SELECT c1, c2, c3 FROM {table} WHERE c1 IN ({}) ORDER BY c1", list.join(", ")),
            expect,
            compare,
        );
    }

    /// Statements without a usable key: tenant routing, or a leader / local replica of the table.
    pub(super) fn keyless(&mut self) {
        let m = self.marker();
        let x = self.rng.below(1000) as i64;
        match self.rng.below(5) {
            0 => self.text(m, &format!("SELECT {x} + 1 AS v"), Expect::Any, true),
            1 => self.text(m, &format!("DO {x}"), Expect::Any, true),
            2 => {
                let e = Expect::OneOf(self.topo.leaders("r_hash"));
                self.text(m, &format!("SELECT COUNT(*), SUM(c3) FROM r_hash WHERE c3 < {x}"), e, true)
            }
            3 => {
                let e = Expect::OneOf(self.topo.local_servers());
                let body = format!("SELECT /*+READ_CONSISTENCY(WEAK)*/ COUNT(*) FROM r_hash WHERE c3 > {x}");
                self.text(m, &body, e, true)
            }
            _ => {
                let e = Expect::Leader(self.topo.leader("t_plain", 0));
                let (c, n) = (self.client, self.clients);
                self.text(m, &format!("SELECT COUNT(*), SUM(c3) FROM t_plain WHERE c1 % {n} = {c}"), e, true)
            }
        }
    }

    /// A user variable set, then read back (it must follow the client to whatever server).
    pub(super) fn session_var(&mut self) {
        let m = self.marker();
        let v = self.rng.below(1_000_000);
        let c = self.client;
        if self.rng.chance(20) {
            self.text(m, "USE test", Expect::Session, true);
        } else {
            self.text(m, &format!("SET @v{c} = {v}"), Expect::Session, true);
        }
        let m = self.marker();
        self.text(m, &format!("SELECT @v{c} AS v, DATABASE() AS db"), Expect::Any, true);
    }

    /// A prepared point read with its own text (one prepare + one execute).
    pub(super) fn prepared_read(&mut self) {
        let table = *self.rng.pick(&ALL);
        let k = self.read_key(table);
        let m = self.marker();
        let weak = self.rng.chance(30);
        let (hint, expect, compare) = if weak {
            ("/*+READ_CONSISTENCY(WEAK)*/ ", self.weak(table, k), schema::READONLY_TABLES.contains(&table))
        } else {
            ("", self.strong(table, k), true)
        };
        let sql = format!("/* q:{m} */ SELECT {hint}c2, c3 FROM {table} WHERE c1 = ?");
        self.push(m, Stmt::Prepared { sql, params: vec![k] }, expect, compare);
    }

    /// Executions of the client's four reused prepared statements (prepared once per server the
    /// gateway sends them to).
    pub(super) fn hot_prepared(&mut self) {
        let j = self.rng.below(4);
        let c = self.client;
        let (body, table, key, weak) = match j {
            0 => ("SELECT c2, c3 FROM t_hash WHERE c1 = ?", "t_hash", self.read_key("t_hash"), false),
            1 => ("UPDATE t_range SET c3 = c3 + 1 WHERE c1 = ?", "t_range", self.owned_key(), false),
            2 => ("SELECT c2 FROM t_key WHERE c1 = ?", "t_key", self.owned_key(), false),
            _ => (
                "SELECT /*+READ_CONSISTENCY(WEAK)*/ c2 FROM r_hash WHERE c1 = ?",
                "r_hash",
                self.read_key("r_hash"),
                true,
            ),
        };
        let tag = format!("ps:{c}:{j}");
        let expect = if weak { self.weak(table, key) } else { self.strong(table, key) };
        let stmt = Stmt::Prepared { sql: format!("/* {tag} */ {body}"), params: vec![key] };
        self.items.push(Item { marker: 0, stmt, expect, compare: true, hot: Some(tag) });
    }

    /// Multi-statements, never split: routed by the first statement, or by the second when the
    /// first opens a transaction (docs/routing.md §9).
    pub(super) fn multi_statement(&mut self) {
        let table = *self.rng.pick(&WRITTEN);
        let k = self.owned_key();
        let m = self.marker();
        let expect = self.strong(table, k);
        let q = format!("/* q:{m} */");
        let sql = if self.rng.chance(50) {
            format!("{q} UPDATE {table} SET c3 = c3 + 1 WHERE c1 = {k}; {q} SELECT c2, c3 FROM {table} WHERE c1 = {k}")
        } else {
            format!("{q} BEGIN; {q} UPDATE {table} SET c2 = 'mb{m}' WHERE c1 = {k}; {q} COMMIT")
        };
        self.push(m, Stmt::Text(sql), expect, true);
    }
}
