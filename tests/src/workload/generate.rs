//! Builds the per-client statement lists: a weighted mix of request shapes, each with its
//! expectation computed from the topology by the test's own oracle.

use std::collections::{BTreeSet, HashMap};

use super::{Expect, Item, Rng, Stmt};
use crate::cluster::schema::{self, KEY_SPACE, READONLY_KEYS};
use crate::cluster::{Partitioning, Topology};

/// Size and seed of a workload.
#[derive(Debug, Clone)]
pub struct WorkloadSpec {
    pub seed: u64,
    pub clients: usize,
    /// Requests per client (a transaction or a statement pair may overshoot by a few).
    pub per_client: usize,
}

/// Tables the workload writes.
pub(super) const WRITTEN: [&str; 4] = ["t_hash", "t_key", "t_range", "t_plain"];
/// Every workload table.
pub(super) const ALL: [&str; 5] = ["t_hash", "t_key", "t_range", "t_plain", "r_hash"];

/// The lists, one per client.
pub fn generate(topo: &Topology, spec: &WorkloadSpec) -> Vec<Vec<Item>> {
    (0..spec.clients).map(|c| Gen::new(topo, spec, c).run()).collect()
}

/// A write's effect on which owned keys exist.
#[derive(Debug, Clone, Copy)]
pub(super) enum Effect {
    None,
    Insert(&'static str, i64),
    Delete(&'static str, i64),
}

/// One keyed DML, as text and as a prepared statement.
pub(super) struct Dml {
    pub(super) text: String,
    pub(super) prepared: String,
    pub(super) params: Vec<i64>,
    pub(super) table: &'static str,
    pub(super) key: i64,
    pub(super) effect: Effect,
}

pub(super) struct Gen<'a> {
    pub(super) topo: &'a Topology,
    pub(super) rng: Rng,
    pub(super) client: i64,
    pub(super) clients: i64,
    target: usize,
    counter: u64,
    pub(super) items: Vec<Item>,
    /// Owned keys that currently exist, per written table.
    pub(super) present: HashMap<&'static str, BTreeSet<i64>>,
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl<'a> Gen<'a> {
    fn new(topo: &'a Topology, spec: &WorkloadSpec, client: usize) -> Self {
        let clients = spec.clients as i64;
        let client = client as i64;
        let present = WRITTEN
            .iter()
            .map(|t| {
                let keys =
                    (0..KEY_SPACE).filter(|k| k % clients == client && schema::initially_present(t, *k)).collect();
                (*t, keys)
            })
            .collect();
        Gen {
            topo,
            rng: Rng::new(spec.seed.wrapping_mul(1_000_003).wrapping_add(client as u64)),
            client,
            clients,
            target: spec.per_client,
            counter: 0,
            items: Vec::new(),
            present,
        }
    }

    fn run(mut self) -> Vec<Item> {
        while self.items.len() < self.target {
            match self.rng.below(100) {
                0..=17 => self.point_read(),
                18..=27 => self.weak_read(),
                28..=29 => self.locking_read(),
                30..=43 => self.dml_item(false),
                44..=51 => self.transaction(),
                52..=55 => self.in_list(),
                56..=60 => self.keyless(),
                61..=63 => self.session_var(),
                64..=75 => self.prepared_read(),
                76..=85 => self.hot_prepared(),
                86..=90 => self.multi_statement(),
                91..=92 => self.autocommit_off(),
                _ => self.dml_item(true),
            }
        }
        self.items
    }

    pub(super) fn marker(&mut self) -> u64 {
        self.counter += 1;
        (self.client as u64 + 1) * 1_000_000 + self.counter
    }

    pub(super) fn push(&mut self, marker: u64, stmt: Stmt, expect: Expect, compare: bool) {
        self.items.push(Item { marker, stmt, expect, compare, hot: None });
    }

    pub(super) fn text(&mut self, marker: u64, body: &str, expect: Expect, compare: bool) {
        self.push(marker, Stmt::Text(format!("/* q:{marker} */ {body}")), expect, compare);
    }

    pub(super) fn owned_key(&mut self) -> i64 {
        self.client + self.clients * self.rng.below((KEY_SPACE / self.clients) as u64) as i64
    }

    /// A key to read: any key of the never-written table, an owned key of a written one; now and
    /// then a negative key (never written by anyone, HASH uses `abs`).
    pub(super) fn read_key(&mut self, table: &str) -> i64 {
        if self.rng.chance(5) {
            return -(self.rng.below(100) as i64 + 1);
        }
        if schema::READONLY_TABLES.contains(&table) {
            self.rng.below(READONLY_KEYS as u64) as i64
        } else {
            self.owned_key()
        }
    }

    pub(super) fn strong(&self, table: &str, key: i64) -> Expect {
        match self.topo.partition_of(table, key) {
            Some(p) => Expect::Leader(self.topo.leader(table, p)),
            None => Expect::OneOf(self.topo.leaders(table)),
        }
    }

    pub(super) fn weak(&self, table: &str, key: i64) -> Expect {
        match self.topo.partition_of(table, key) {
            Some(p) => Expect::Weak(self.topo.weak_target(table, p)),
            None => Expect::OneOf(self.topo.local_servers()),
        }
    }

    /// Another owned key in the same partition as `key` (not for KEY tables: the test does not
    /// know their partitions).
    pub(super) fn partition_mate(&mut self, table: &str, key: i64) -> Option<i64> {
        let step = match &self.topo.table(table).partitioning {
            Partitioning::Hash(n) => {
                let n = i64::from(*n);
                n / gcd(n, self.clients) * self.clients
            }
            Partitioning::Range(_) | Partitioning::None => self.clients,
            Partitioning::Key(_) => return None,
        };
        let steps = 1 + self.rng.below(3) as i64;
        [key + step * steps, key - step * steps].into_iter().find(|k| {
            (0..KEY_SPACE).contains(k) && self.topo.partition_of(table, *k) == self.topo.partition_of(table, key)
        })
    }

    pub(super) fn absent_owned(&mut self, table: &'static str) -> Option<i64> {
        for _ in 0..50 {
            let k = self.owned_key();
            if !self.present[table].contains(&k) {
                return Some(k);
            }
        }
        None
    }

    pub(super) fn present_owned(&mut self, table: &'static str) -> Option<i64> {
        let set = &self.present[table];
        if set.is_empty() {
            return None;
        }
        let i = self.rng.below(set.len() as u64) as usize;
        set.iter().nth(i).copied()
    }

    pub(super) fn apply(&mut self, e: Effect) {
        match e {
            Effect::Insert(t, k) => {
                if let Some(s) = self.present.get_mut(t) {
                    s.insert(k);
                }
            }
            Effect::Delete(t, k) => {
                if let Some(s) = self.present.get_mut(t) {
                    s.remove(&k);
                }
            }
            Effect::None => {}
        }
    }

    /// A keyed INSERT (of an absent key), UPDATE or DELETE (of a present key) on `table`.
    pub(super) fn dml(&mut self, table: &'static str, marker: u64) -> Dml {
        let kind = self.rng.below(3);
        if kind == 0 {
            if let Some(k) = self.absent_owned(table) {
                let c3 = self.rng.below(1000) as i64;
                return Dml {
                    text: format!("INSERT INTO {table} (c1, c2, c3) VALUES ({k}, 'w{marker}', {c3})"),
                    prepared: format!("INSERT INTO {table} (c1, c2, c3) VALUES (?, 'w{marker}', ?)"),
                    params: vec![k, c3],
                    table,
                    key: k,
                    effect: Effect::Insert(table, k),
                };
            }
        }
        if kind == 1 {
            if let Some(k) = self.present_owned(table) {
                return Dml {
                    text: format!("DELETE FROM {table} WHERE c1 = {k}"),
                    prepared: format!("DELETE FROM {table} WHERE c1 = ?"),
                    params: vec![k],
                    table,
                    key: k,
                    effect: Effect::Delete(table, k),
                };
            }
        }
        let k = self.owned_key();
        let d = self.rng.below(10) as i64 + 1;
        Dml {
            text: format!("UPDATE {table} SET c3 = c3 + {d}, c2 = 'u{marker}' WHERE c1 = {k}"),
            prepared: format!("UPDATE {table} SET c3 = c3 + ?, c2 = 'u{marker}' WHERE c1 = ?"),
            params: vec![d, k],
            table,
            key: k,
            effect: Effect::None,
        }
    }

    pub(super) fn dml_stmt(marker: u64, d: &Dml, prepared: bool) -> Stmt {
        if prepared {
            Stmt::Prepared { sql: format!("/* q:{marker} */ {}", d.prepared), params: d.params.clone() }
        } else {
            Stmt::Text(format!("/* q:{marker} */ {}", d.text))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    fn lists() -> Vec<Vec<Item>> {
        generate(&Topology::standard(0), &WorkloadSpec { seed: 5, clients: 4, per_client: 2_600 })
    }

    #[test]
    fn deterministic_large_and_uniquely_marked() {
        let (a, b) = (lists(), lists());
        let texts = |l: &Vec<Vec<Item>>| l.iter().flatten().map(|i| format!("{:?}", i.stmt)).collect::<Vec<_>>();
        assert_eq!(texts(&a), texts(&b), "same seed, same workload");
        assert!(a.iter().map(Vec::len).sum::<usize>() >= 10_000);
        let markers: Vec<u64> = a.iter().flatten().map(|i| i.marker).filter(|m| *m != 0).collect();
        assert_eq!(markers.len(), markers.iter().collect::<HashSet<_>>().len(), "markers are unique");
        for i in a.iter().flatten().filter(|i| i.marker != 0) {
            assert!(i.stmt.sql().starts_with(&format!("/* q:{} */", i.marker)), "{:?}", i.stmt);
        }
    }

    #[test]
    fn every_shape_and_expectation_occurs() {
        let a = lists();
        let all: Vec<&Item> = a.iter().flatten().collect();
        let has = |f: &dyn Fn(&Item) -> bool| all.iter().filter(|i| f(i)).count();
        assert!(has(&|i| matches!(i.expect, Expect::Leader(_))) > 2000);
        assert!(has(&|i| matches!(i.expect, Expect::Weak(_))) > 500);
        assert!(has(&|i| matches!(i.expect, Expect::Begin { .. })) > 300);
        assert!(has(&|i| matches!(i.expect, Expect::SameAs(_))) > 900);
        assert!(has(&|i| i.hot.is_some()) > 500);
        assert!(has(&|i| matches!(i.stmt, Stmt::Prepared { .. }) && i.hot.is_none()) > 1000);
        assert!(has(&|i| i.stmt.sql().matches("; ").count() >= 1) > 200, "multi-statements");
        assert!(has(&|i| i.stmt.sql().contains(" IN (")) > 200);
        assert!(has(&|i| !i.compare) > 300, "weak reads of written tables are not compared");
    }
}
