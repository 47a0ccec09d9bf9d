//! The planner's own EXPLAIN ROUTE steps (SQL_PARSE, location lookups, partition calculation),
//! built only when a trace is wanted: [`Trace::off`] makes every step a no-op.

use crate::partition::Location;
use crate::route::{FieldValue, PlanStep, Point};
use crate::sql::Analysis;
use crate::topology::{Lookup, PartitionReplicas, TableEntry, TableKey};

/// The steps of a trace being built, or nothing when the caller does not print one.
pub struct Trace(Option<Vec<PlanStep>>);

impl Trace {
    /// A trace starting with `first`.
    pub fn on(first: PlanStep) -> Self {
        Trace(Some(vec![first]))
    }

    /// No trace: steps are not even built.
    pub fn off() -> Self {
        Trace(None)
    }

    /// Adds the step `make` builds, if tracing.
    pub fn add(&mut self, make: impl FnOnce() -> PlanStep) {
        if let Some(steps) = &mut self.0 {
            steps.push(make());
        }
    }

    /// Adds the steps `make` builds, if tracing.
    pub fn extend(&mut self, make: impl FnOnce() -> Vec<PlanStep>) {
        if let Some(steps) = &mut self.0 {
            steps.extend(make());
        }
    }

    /// The steps, `None` when not tracing.
    pub fn into_steps(self) -> Option<Vec<PlanStep>> {
        self.0
    }
}

fn s(v: &str) -> FieldValue {
    FieldValue::Str(v.to_string())
}

fn other(name: &'static str, fields: Vec<(&'static str, FieldValue)>) -> Point {
    Point::Other { name, fields }
}

/// SQL_PARSE.
pub fn parse(a: &Analysis<'_>, cmd: &str) -> PlanStep {
    let mut fields = vec![("cmd", s(cmd))];
    if let Some(t) = a.table() {
        fields.push(("table", s(&t.name)));
    }
    PlanStep::new(other("SQL_PARSE", fields))
}

/// LOCATION_CACHE_LOOKUP.
pub fn cache_lookup() -> PlanStep {
    PlanStep::new(other("LOCATION_CACHE_LOOKUP", vec![("mode", s("oceanbase"))]))
}

/// TABLE_ENTRY_LOOKUP_DONE without an entry.
pub fn no_table_entry(name: &str, key: &TableKey) -> PlanStep {
    PlanStep::new(other("TABLE_ENTRY_LOOKUP_DONE", vec![("table", s(name))]))
        .at_depth(1)
        .warn(format!("no location for table {key}: routed by tenant servers"))
}

/// TABLE_ENTRY_LOOKUP_DONE.
pub fn table(name: &str, entry: &TableEntry, lookup: &Lookup<TableEntry>) -> PlanStep {
    let mut fields = vec![("table", s(name))];
    if let Some(id) = entry.table_id {
        fields.push(("table_id", FieldValue::UInt(id)));
    }
    fields.push(("partition_num", FieldValue::UInt(entry.part_num as u64)));
    fields.push(("table_type", s(entry.table_type.name())));
    fields.push(("entry_from_remote", FieldValue::Bool(lookup.from_remote())));
    PlanStep::new(other("TABLE_ENTRY_LOOKUP_DONE", fields)).at_depth(1)
}

/// PARTITION_ID_CALC_START.
pub fn calc_start() -> PlanStep {
    PlanStep::new(other("PARTITION_ID_CALC_START", vec![])).at_depth(1)
}

/// PARTITION_ID_CALC_DONE with the partition.
pub fn calc_done(loc: &Location, entry: &TableEntry, by_name: bool) -> PlanStep {
    let mut fields = Vec::new();
    if let Some(t) = entry.tablet_of(loc) {
        fields.push(("partition_id", FieldValue::UInt(t)));
    }
    fields.push(("level", FieldValue::UInt(if loc.sub.is_some() { 2 } else { 1 })));
    let step = if by_name {
        fields.push(("part_name", s(loc.name())));
        PlanStep::new(other("PARTITION_ID_CALC_DONE", fields))
            .info(format!("Will route to specified partition name({})", loc.name()))
    } else {
        let idx = match &loc.sub {
            Some((i, _)) => format!("(p{}sp{i})", loc.part_idx),
            None => format!("(p{})", loc.part_idx),
        };
        fields.push(("partitions", FieldValue::Str(idx)));
        PlanStep::new(other("PARTITION_ID_CALC_DONE", fields))
    };
    step.at_depth(1)
}

/// PARTITION_ID_CALC_DONE with the reason no partition was computed.
pub fn calc_failed(why: &str) -> PlanStep {
    PlanStep::new(other("PARTITION_ID_CALC_DONE", vec![("error", s(why))]))
        .at_depth(1)
        .warn(format!("Fail to calculate partition id ({why}): route to a server holding the table's partitions"))
}

/// PARTITION_ENTRY_LOOKUP_DONE.
pub fn entry(reps: &PartitionReplicas) -> PlanStep {
    let mut fields = Vec::new();
    if let Some(l) = reps.leader() {
        fields.push(("leader", s(&l.replica.addr.to_string())));
    }
    fields.push(("entry_from_remote", FieldValue::Bool(reps.from_remote)));
    PlanStep::new(other("PARTITION_ENTRY_LOOKUP_DONE", fields)).at_depth(1)
}

/// PARTITION_ENTRY_LOOKUP_DONE without replicas.
pub fn entry_failed(why: &str) -> PlanStep {
    PlanStep::new(other("PARTITION_ENTRY_LOOKUP_DONE", vec![])).at_depth(1).warn(why.to_string())
}
