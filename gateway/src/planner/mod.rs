//! The per-statement routing pipeline: analyse, locate the partition, look up its replicas,
//! decide — one traced value that EXPLAIN ROUTE, `gateway route` and the session all use.

mod calc_trace;
mod candidates;
mod explain;
mod memo;
mod route_memo;
pub(crate) mod show_route;
mod steps;

use std::sync::Arc;

use tokio::time::Instant;

use crate::config::RoutingConfig;
use crate::metadata::{MetadataError, StaticSource};
use crate::partition::{locate_statement, CastContext, Location};
use crate::route::{
    decide, decide_untraced, ClientLocation, ConsistencyInputs, PartitionState, PlanStep, Point, ProxyRoutePolicy,
    RequestKind, RouteDecision, RouteError, RoutePlan, RouteRequest, TargetDbServer, TargetSource,
};
use crate::sql::{self, Analysis, StmtKind};
use crate::topology::{Locator, Lookup, PartitionReplicas, PlacedReplica, Replica, TableEntry, TableKey};
use steps::Trace;

pub use explain::render_explain;
pub use route_memo::RouteMemo;

/// Session facts that change how a statement is routed.
#[derive(Debug, Clone, Default)]
pub struct StatementContext {
    /// Tenant of the session.
    pub tenant: std::sync::Arc<str>,
    /// Current database (shared with the session's state: no copy per statement).
    pub database: Option<std::sync::Arc<str>>,
    /// Session `ob_read_consistency`.
    pub read_consistency: Option<crate::route::ReadConsistency>,
    /// Session `ob_route_policy`.
    pub ob_route_policy: Option<i64>,
    /// User variable `@proxy_route_policy`, when set to a name the route engine knows.
    pub proxy_route_policy: Option<ProxyRoutePolicy>,
    /// User variable `@proxy_idc_name`: the session's IDC, instead of `[routing] idc`.
    pub idc: Option<Arc<str>>,
    /// Inside a transaction.
    pub in_transaction: bool,
    /// `autocommit`.
    pub autocommit: bool,
}

/// The outcome of planning one statement.
#[derive(Debug)]
pub struct Planned {
    /// The decision, or why none could be made.
    pub decision: Result<RouteDecision, RouteError>,
    /// The full trace, pipeline stages included.
    pub plan: RoutePlan,
    /// The partition, when one was computed.
    pub location: Option<Location>,
    /// The table entry the route used (its key), when the statement names a table.
    pub table: Option<Arc<TableKey>>,
    /// The tablet of `location` in that entry, when both are known.
    pub tablet_id: Option<u64>,
    /// The table is partitioned: `location` says whether its partition was computed.
    pub partitioned: bool,
    /// How the table-entry lookup went (metrics), when the statement names a table.
    pub cache: Option<crate::metrics::CacheLookup>,
    /// The session's memory of its table ([`RouteMemo`]) stood in for the cache lookups.
    pub remembered: bool,
    /// The clock reading of the planning: the cache probes' freshness, and the congestion check
    /// of the attempts that follow (one reading for the statement).
    pub at: Instant,
}

/// What [`Planner::request`] learnt besides the route request.
#[derive(Default)]
struct Located {
    location: Option<Location>,
    table: Option<Arc<TableKey>>,
    tablet_id: Option<u64>,
    partitioned: bool,
    cache: Option<crate::metrics::CacheLookup>,
    remembered: bool,
}

/// Plans statements against one topology. Each session plans with its own clone.
#[derive(Debug)]
pub struct Planner {
    locator: Locator,
    config: Arc<RoutingConfig>,
    /// `config.idc`, shared by every statement's route request.
    client_idc: Option<Arc<str>>,
    /// `config.proxy_route_policy`, parsed once (an unknown name is ignored, as ODP does).
    route_policy: Option<ProxyRoutePolicy>,
    /// `config.proxy_primary_zone_name`, parsed once; each session's planner has its own copy
    /// (as `client_idc`), lent to its requests.
    zone_names: Option<Arc<[String]>>,
    /// `config.target_db_server`, parsed once (`Config::validate` refuses one that does not
    /// parse); a copy per session, as `zone_names`.
    target: Option<Arc<TargetDbServer>>,
    tenants: Arc<memo::TenantMemo>,
}

impl Clone for Planner {
    /// A clone with its own copy of the IDC name: every statement's route request takes a
    /// reference to it, and a count that every session's statements change would be a cache
    /// line that all cores write (docs/performance.md §3, "No line every session writes").
    fn clone(&self) -> Self {
        Planner {
            locator: self.locator.clone(),
            config: Arc::clone(&self.config),
            client_idc: self.client_idc.as_deref().map(Arc::from),
            route_policy: self.route_policy,
            zone_names: self.zone_names.as_deref().map(Arc::from),
            target: self.target.as_deref().map(|t| Arc::new(t.clone())),
            tenants: Arc::clone(&self.tenants),
        }
    }
}

impl Planner {
    /// A planner over the static topology named in the config; refreshes the cluster once.
    /// Without `topology` (clusters only from `[[clusters]]`) there is none: `Invalid`.
    pub async fn from_config(config: &RoutingConfig) -> Result<Planner, MetadataError> {
        let source = match config.topology.as_deref() {
            None => return Err(MetadataError::Invalid("[routing] has no topology".into())),
            Some("demo") => StaticSource::demo(&config.server_addresses)?,
            Some(path) => StaticSource::load(std::path::Path::new(path), &config.server_addresses)?,
        };
        let source: Arc<dyn crate::metadata::MetadataSource> = match &config.table_discovery {
            Some(d) => Arc::new(crate::metadata::DiscoveringSource::new(source, d.clone())),
            None => Arc::new(source),
        };
        let locator = Locator::new(source, config.cache.clone());
        locator.refresh_cluster().await?;
        Ok(Planner::with_locator(locator, config))
    }

    /// A planner over a locator whose cluster model is loaded (a sys-tenant cluster).
    pub fn with_locator(locator: Locator, config: &RoutingConfig) -> Planner {
        let client_idc = config.idc.as_deref().map(Arc::from);
        let route_policy = config.proxy_route_policy.as_deref().and_then(ProxyRoutePolicy::parse);
        let zone_names = config.proxy_primary_zone_name.as_deref().map(crate::route::parse_zone_list).map(Arc::from);
        let target = config
            .target_db_server
            .as_deref()
            .and_then(|t| TargetDbServer::parse(t, TargetSource::Config).ok())
            .map(Arc::new);
        Planner {
            locator,
            config: Arc::new(config.clone()),
            client_idc,
            route_policy,
            zone_names,
            target,
            tenants: Arc::default(),
        }
    }

    /// The location service.
    pub fn locator(&self) -> &Locator {
        &self.locator
    }

    /// Plans `sql` for a session, with the full EXPLAIN ROUTE trace.
    pub async fn plan(&self, sql: &str, ctx: &StatementContext) -> Planned {
        self.plan_analysis(&sql::analyze(sql), "COM_QUERY", ctx).await
    }

    /// Plans an execution of the prepared statement `sql` with its bound parameter values
    /// (docs/partition.md §2: a `?` in a key predicate routes by the value bound to it), traced.
    pub async fn plan_bound<'a>(&self, sql: &'a str, params: &[sql::Value<'a>], ctx: &StatementContext) -> Planned {
        self.plan_analysis(&sql::analyze_prepared(sql, params), "COM_STMT_EXECUTE", ctx).await
    }

    /// Plans an already analysed statement, traced; `cmd` names the client command in the trace.
    pub async fn plan_analysis(&self, analysis: &Analysis<'_>, cmd: &str, ctx: &StatementContext) -> Planned {
        self.run(analysis, ctx, Trace::on(steps::parse(analysis, cmd))).await
    }

    /// Plans a command without a statement (the login's validation, COM_PING, COM_STATISTICS …
    /// before any statement chose a server), traced: a request of kind
    /// [`RequestKind::Command`], which read-only zones accept (docs/routing.md §5) where an
    /// unparsed statement would be refused under FORCE_READONLY_ZONE.
    pub async fn plan_command(&self, ctx: &StatementContext) -> Planned {
        let a = sql::analyze("");
        let trace = Trace::on(steps::parse(&a, "command"));
        self.run_as(&a, ctx, trace, Some(RequestKind::Command), None, Instant::now()).await
    }

    /// [`Planner::plan_analysis`] for execution: the same decision and location, without the
    /// EXPLAIN trace (`plan` is empty). The per-statement path of a routed session, which
    /// remembers in `memo` what the lookups found ([`RouteMemo`]). `now`: the caller's clock
    /// reading, taken as the statement's.
    pub async fn route(
        &self,
        analysis: &Analysis<'_>,
        ctx: &StatementContext,
        memo: &mut RouteMemo,
        now: Instant,
    ) -> Planned {
        self.run_as(analysis, ctx, Trace::off(), None, Some(memo), now).await
    }

    async fn run(&self, analysis: &Analysis<'_>, ctx: &StatementContext, trace: Trace) -> Planned {
        self.run_as(analysis, ctx, trace, None, None, Instant::now()).await
    }

    /// [`Planner::run`], with the request kind given instead of taken from the statement.
    async fn run_as(
        &self,
        analysis: &Analysis<'_>,
        ctx: &StatementContext,
        mut trace: Trace,
        kind: Option<RequestKind>,
        memo: Option<&mut RouteMemo>,
        now: Instant,
    ) -> Planned {
        // One clock reading (`now`) for every cache probe of the statement.
        let (mut req, Located { location, table, tablet_id, partitioned, cache, remembered }) =
            self.request(analysis, ctx, now, &mut trace, memo).await;
        if let Some(kind) = kind {
            req.kind = kind;
        }
        req.seed = self.config.seed.unwrap_or_else(rand::random);
        // A hint that names no address is refused like one that names a foreign server.
        let refused = match self.target_of(analysis) {
            Ok(target) => {
                req.target_db_server = target;
                None
            }
            Err(e) => Some(e),
        };
        let (decision, plan) = match trace.into_steps() {
            Some(ours) => {
                let decision = refused.map_or_else(|| decide(&req), Err);
                let mut plan = decision.as_ref().map(|d| d.plan.clone()).unwrap_or_default();
                splice_steps(&mut plan, ours);
                (decision, plan)
            }
            None => (refused.map_or_else(|| decide_untraced(&req), Err), RoutePlan::default()),
        };
        Planned { decision, plan, location, table, tablet_id, partitioned, cache, remembered, at: now }
    }

    /// Builds the route request: candidates from the table's partition, or the tenant's servers;
    /// the location cache is probed as of `now`, unless `memo` remembers what it holds.
    async fn request(
        &self,
        a: &Analysis<'_>,
        ctx: &StatementContext,
        now: Instant,
        trace: &mut Trace,
        memo: Option<&mut RouteMemo>,
    ) -> (RouteRequest, Located) {
        // Read before the lookups: a change during them makes the memory of them stale.
        let generation = self.locator.generation();
        let mut req = RouteRequest::new(Vec::new(), 0);
        self.fill_inputs(&mut req, a, ctx);
        if let (Some(table), Some(memo)) = (a.table(), memo.as_deref()) {
            let db = table.schema.as_deref().or(ctx.database.as_deref()).unwrap_or("");
            if let Some(m) = memo.table(generation, now, &ctx.tenant, db, &table.name) {
                if let Some(located) = self.remembered(m, &mut req, a, table, now, trace) {
                    return (req, located);
                }
            }
        }
        let (tenant, tenant_fresh) = self.tenants.facts(&self.locator, &ctx.tenant, now).await;
        let tenant_servers = &tenant.placed;
        if let Some(pz) = &tenant.primary_zone {
            req.primary_zone = pz.clone();
        }
        // The tenant's servers are the candidates only where no partition gives replicas: cloned
        // there, not for every statement.
        let Some(table) = a.table() else {
            req.candidates = tenant.candidates.clone();
            return (req, Located::default());
        };
        req.names_table = true;
        trace.add(steps::cache_lookup);
        let db = table.schema.as_deref().or(ctx.database.as_deref()).unwrap_or("");
        let key = Arc::new(TableKey::of_tenant(&ctx.tenant, db, &table.name));
        let lookup = self.locator.table_at(&key, now).await;
        let cache = Some(match &lookup {
            Lookup::Found { from_remote: false, .. } => crate::metrics::CacheLookup::Hit,
            Lookup::Stale(_) => crate::metrics::CacheLookup::Stale,
            _ => crate::metrics::CacheLookup::Miss,
        });
        let Some(entry) = lookup.value().cloned() else {
            trace.add(|| steps::no_table_entry(&table.name, &key));
            req.partition = PartitionState::NoLocation;
            req.candidates = tenant.candidates.clone();
            return (req, Located { table: Some(key), cache, ..Located::default() });
        };
        trace.add(|| steps::table(&table.name, &entry, &lookup));
        let location = if entry.is_partitioned() {
            match self.partition(a, table, &entry, trace) {
                Some(l) => Some(l),
                None => {
                    req.partition = PartitionState::CalcFailed;
                    req.candidates =
                        candidates::all_partitions(&self.locator, &key, &entry, tenant_servers).await.into();
                    return (req, Located { table: Some(key), partitioned: true, cache, ..Located::default() });
                }
            }
        } else {
            None
        };
        match self.replicas(&key, &entry, &lookup, location.as_ref(), now).await {
            Ok((reps, tablet_fresh)) => {
                trace.add(|| steps::entry(&reps));
                req.partition = PartitionState::Located;
                req.candidates = candidates::with_replicas(&reps, tenant_servers, &tenant.candidates).into();
                if let Some(memo) = memo {
                    memo.remember(route_memo::Found {
                        generation,
                        tenant: &ctx.tenant,
                        database: db,
                        name: &table.name,
                        key: &key,
                        entry: &entry,
                        facts: &tenant,
                        tenant_fresh,
                        table_fresh: lookup.fresh_until(),
                        tablet_fresh,
                        tablet_id: reps.tablet_id,
                        candidates: &req.candidates,
                    });
                }
            }
            Err(e) => {
                trace.add(|| steps::entry_failed(&e));
                req.partition = PartitionState::NoLocation;
                req.candidates = tenant.candidates.clone();
            }
        }
        let tablet_id = location.as_ref().and_then(|l| entry.tablet_of(l));
        let partitioned = entry.is_partitioned();
        (req, Located { location, table: Some(key), tablet_id, partitioned, cache, remembered: false })
    }

    /// [`Planner::request`] from what the session remembers of the table (`m`): the partition
    /// of this statement's values, and the candidates remembered for its tablet. `None` when the
    /// memory does not cover it (a tablet not seen yet or expired, a partition not calculable):
    /// the lookups then run.
    fn remembered(
        &self,
        m: &route_memo::TableMemo,
        req: &mut RouteRequest,
        a: &Analysis<'_>,
        table: &sql::TableRef<'_>,
        now: Instant,
        trace: &mut Trace,
    ) -> Option<Located> {
        let partitioned = m.entry.is_partitioned();
        let location = if partitioned { Some(self.partition(a, table, &m.entry, trace)?) } else { None };
        let tablet_id = location.as_ref().and_then(|l| m.entry.tablet_of(l));
        if partitioned && tablet_id.is_none() {
            return None;
        }
        req.candidates = Arc::clone(m.candidates(tablet_id, now)?);
        req.names_table = true;
        req.partition = PartitionState::Located;
        if let Some(pz) = &m.facts.primary_zone {
            req.primary_zone = pz.clone();
        }
        let cache = Some(crate::metrics::CacheLookup::Hit);
        Some(Located { location, table: Some(Arc::clone(&m.key)), tablet_id, partitioned, cache, remembered: true })
    }

    /// The replicas of the partition `location` of the table `entry` (looked up as `table`);
    /// [`Locator::replicas`] without looking the table entry up a second time.
    async fn replicas(
        &self,
        key: &TableKey,
        entry: &Arc<TableEntry>,
        table: &Lookup<TableEntry>,
        location: Option<&Location>,
        now: Instant,
    ) -> Result<(PartitionReplicas, memo::Fresh), String> {
        let cluster = self.locator.cluster();
        let place = |reps: &[Replica]| reps.iter().map(|r| PlacedReplica::place(*r, &cluster)).collect();
        let (replicas, tablet_id, from_remote, stale, fresh) = match location.filter(|_| entry.is_partitioned()) {
            None if entry.is_partitioned() => {
                return Err(format!("table {key} not available: partitioned table and no partition given"))
            }
            // The replicas are the table entry's: nothing else to expire.
            None => (place(&entry.replicas), None, false, false, Some(None)),
            Some(loc) => {
                let Some(id) = entry.tablet_of(loc) else {
                    return Err(format!("partition {} of {key} not available: no tablet id", loc.name()));
                };
                let tablet = self.locator.tablet_of_at(key, id, now).await;
                let Some(t) = tablet.value() else {
                    let why = match &tablet {
                        Lookup::NotAvailable(r) => r.as_str(),
                        _ => "no value",
                    };
                    return Err(format!("tablet {id} of {key} not available: {why}"));
                };
                (place(&t.replicas), Some(id), tablet.from_remote(), tablet.is_stale(), tablet.fresh_until())
            }
        };
        let reps = PartitionReplicas {
            table: Arc::clone(entry),
            tablet_id,
            replicas,
            from_remote: table.from_remote() || from_remote,
            stale: table.is_stale() || stale,
        };
        Ok((reps, fresh))
    }

    fn partition(
        &self,
        a: &Analysis<'_>,
        table: &sql::TableRef<'_>,
        entry: &crate::topology::TableEntry,
        trace: &mut Trace,
    ) -> Option<Location> {
        trace.add(steps::calc_start);
        let Some(scheme) = entry.scheme.as_ref() else {
            trace.add(|| steps::calc_failed("the table's partitioning is not known"));
            return None;
        };
        match locate_statement(scheme, a, table, &CastContext::default()) {
            Ok(loc) => {
                if table.partitions.is_empty() {
                    trace.extend(|| calc_trace::calc_steps(scheme, a));
                }
                trace.add(|| steps::calc_done(&loc, entry, !table.partitions.is_empty()));
                Some(loc)
            }
            Err(e) => {
                trace.add(|| steps::calc_failed(&e.to_string()));
                None
            }
        }
    }

    fn fill_inputs(&self, req: &mut RouteRequest, a: &Analysis<'_>, ctx: &StatementContext) {
        req.kind = match a.kind {
            StmtKind::Select => RequestKind::Select,
            StmtKind::Set | StmtKind::Use | StmtKind::Begin | StmtKind::Commit | StmtKind::Rollback => {
                RequestKind::SessionStatement
            }
            _ => RequestKind::OtherStatement,
        };
        // A multi-statement is always STRONG (docs/routing.md §9): whatever its hint or the session says.
        let multi = a.statements > 1;
        req.consistency = ConsistencyInputs {
            is_select: a.kind == StmtKind::Select,
            hint: if multi {
                Some(crate::route::Consistency::Strong)
            } else {
                a.hints.consistency.map(|c| match c {
                    sql::Consistency::Weak => crate::route::Consistency::Weak,
                    sql::Consistency::Strong => crate::route::Consistency::Strong,
                })
            },
            session: if multi { None } else { ctx.read_consistency },
            in_transaction: ctx.in_transaction,
            autocommit: ctx.autocommit,
            locking_read: a.lock.is_some(),
            ..ConsistencyInputs::default()
        };
        req.ob_route_policy = ctx.ob_route_policy;
        req.proxy_route_policy_var = ctx.proxy_route_policy;
        req.proxy_route_policy_config = self.route_policy;
        req.proxy_primary_zone_name.clone_from(&self.zone_names);
        req.enable_primary_zone = self.config.enable_primary_zone;
        let idc = ctx.idc.as_ref().or(self.client_idc.as_ref());
        req.client = ClientLocation { idc: idc.cloned(), regions: Vec::new() };
    }
}

impl Planner {
    /// The statement's `target_db_server` hint, else the configuration's (docs/routing.md §5).
    fn target_of(&self, a: &Analysis<'_>) -> Result<Option<Arc<TargetDbServer>>, RouteError> {
        match a.hints.target_db_server.as_deref() {
            Some(text) => TargetDbServer::parse(text, TargetSource::Comment).map(|t| Some(Arc::new(t))),
            None => Ok(self.target.clone()),
        }
    }
}

/// Puts the pipeline's steps in ODP's order: SQL_PARSE, ROUTE_INFO, the location steps, then
/// the rest of the decision's steps.
fn splice_steps(plan: &mut RoutePlan, mut ours: Vec<PlanStep>) {
    let decision_steps = std::mem::take(&mut plan.steps);
    let (info, rest): (Vec<_>, Vec<_>) =
        decision_steps.into_iter().partition(|st| matches!(st.point, Point::RouteInfo(_)));
    let location = ours.split_off(1.min(ours.len()));
    plan.steps = ours.into_iter().chain(info).chain(location).chain(rest).collect();
}

#[cfg(test)]
mod policy_input_tests;
#[cfg(test)]
mod route_memo_tests;
#[cfg(test)]
mod tests;
