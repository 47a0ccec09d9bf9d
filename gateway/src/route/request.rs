//! The input of one route decision: request facts, session and configuration settings, candidates.

use std::net::SocketAddr;
use std::sync::Arc;

use super::candidate::Candidate;
use super::consistency::ConsistencyInputs;
use super::ldc::ClientLocation;
use super::policy::ProxyRoutePolicy;
use super::primary_zone::PrimaryZone;

/// What kind of request is routed, as far as read-only-zone support goes (docs/routing.md §5,
/// `is_request_readonly_zone_support`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RequestKind {
    /// A `COM_QUERY` `SELECT`.
    Select,
    /// A `COM_QUERY` `SET`, `SET NAMES`, `USE`, `HELP`, `SHOW …` (also WARNINGS / ERRORS / TRACE).
    SessionStatement,
    /// Any other `COM_QUERY` statement (DML, DDL, `BEGIN`, …).
    OtherStatement,
    /// A command other than `COM_QUERY` (login, `COM_STMT_*`, `COM_PING`, …).
    Command,
}

/// Whether a partition location is known for the request (docs/routing.md §12, docs/routing.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PartitionState {
    /// The partition was computed and its location found: `Candidate::partition_server` marks
    /// the tablet's replicas.
    Located,
    /// A partitioned table whose partition could not be computed: `partition_server` marks the
    /// servers holding any partition of the table, `role` Leader the servers leading one (docs/routing.md §12).
    CalcFailed,
    /// No table name, or no location found: every candidate is a tenant server.
    NoLocation,
}

/// Where a `target_db_server` setting came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TargetSource {
    /// `/* target_db_server=… */` or `/*+ODP: target_db_server=…*/`.
    Comment,
    /// Configuration `target_db_server`.
    Config,
}

/// Forced target servers (docs/routing.md §1 step 4.4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetDbServer {
    /// Addresses in the order given.
    pub addrs: Vec<SocketAddr>,
    /// Comment or configuration.
    pub source: TargetSource,
}

/// Most distinct `target_db_server` addresses a hint or the configuration may give (ODP's
/// lists name a few servers; the bound keeps a hostile hint's work small).
pub const MAX_TARGETS: usize = 64;

impl TargetDbServer {
    /// Parses `ip:port,ip:port` (blanks and quotes around each address ignored; a repeated
    /// address counts once).
    ///
    /// # Errors
    ///
    /// [`super::RouteError::TargetNotAllowed`]: an item that is not an address, no address at
    /// all, or more than [`MAX_TARGETS`] distinct ones.
    pub fn parse(text: &str, source: TargetSource) -> Result<TargetDbServer, super::RouteError> {
        use super::error::TargetRefusal;
        let mut addrs: Vec<SocketAddr> = Vec::new();
        for item in text.split(',').map(|a| a.trim().trim_matches(|c| c == '\'' || c == '"').trim()) {
            if item.is_empty() {
                continue;
            }
            let addr = item.parse().map_err(|_| super::RouteError::target(item, TargetRefusal::NotAnAddress))?;
            if !addrs.contains(&addr) {
                if addrs.len() == MAX_TARGETS {
                    return Err(super::RouteError::target(text, TargetRefusal::TooMany));
                }
                addrs.push(addr);
            }
        }
        if addrs.is_empty() {
            return Err(super::RouteError::target(text, TargetRefusal::Empty));
        }
        Ok(TargetDbServer { addrs, source })
    }
}

/// Everything the route engine needs to place one request. Pure data: the engine neither reads
/// configuration nor the location cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteRequest {
    /// Request kind (read-only-zone support, docs/routing.md §5).
    pub kind: RequestKind,
    /// A table name was parsed from the statement.
    pub names_table: bool,
    /// Consistency inputs (docs/routing.md §2).
    pub consistency: ConsistencyInputs,
    /// Session `ob_route_policy`; `None` = default (1, READONLY_ZONE_FIRST).
    pub ob_route_policy: Option<i64>,
    /// User variable `@proxy_route_policy`, if set to a known name (parsed when it is set).
    pub proxy_route_policy_var: Option<ProxyRoutePolicy>,
    /// Configuration `proxy_route_policy`, if set to a known name (parsed once, by the planner).
    pub proxy_route_policy_config: Option<ProxyRoutePolicy>,
    /// Configuration `proxy_primary_zone_name`, parsed (see `parse_zone_list`); `None`: unset.
    /// Shared: the session's planner lends its copy to every request.
    pub proxy_primary_zone_name: Option<Arc<[String]>>,
    /// Configuration `enable_primary_zone` (default on).
    pub enable_primary_zone: bool,
    /// Random-routing mode (disables PRIMARY_ZONE_FIRST).
    pub random_routing_mode: bool,
    /// `target_db_server` from a comment or configuration.
    pub target_db_server: Option<Arc<TargetDbServer>>,
    /// The gateway's IDC and regions.
    pub client: ClientLocation,
    /// The tenant's primary zone.
    pub primary_zone: PrimaryZone,
    /// Partition location state.
    pub partition: PartitionState,
    /// Ignore merge states (`disable_merge_status_check`, docs/routing.md §3).
    pub disable_merge_status_check: bool,
    /// Partition replicas and tenant servers, each server once. Shared: a session's memory of a
    /// tablet and a tenant's facts lend their lists without copying each candidate's names.
    pub candidates: Arc<[Candidate]>,
    /// Seed of the tie-breaking RNG (printed in the trace).
    pub seed: u64,
}

thread_local! {
    /// An empty candidate list, this thread's: a request starts with it (an empty list of its
    /// own would be an allocation, a process-wide one a reference count every core writes).
    static NO_CANDIDATES: Arc<[Candidate]> = Arc::from(Vec::new());
}

/// `candidates` as a shared list.
fn shared(candidates: Vec<Candidate>) -> Arc<[Candidate]> {
    if candidates.is_empty() {
        NO_CANDIDATES.with(Arc::clone)
    } else {
        candidates.into()
    }
}

impl RouteRequest {
    /// A request with ODP's default settings: a non-SELECT `COM_QUERY` statement, no table,
    /// primary zone enabled, no LDC.
    pub fn new(candidates: Vec<Candidate>, seed: u64) -> Self {
        RouteRequest {
            kind: RequestKind::OtherStatement,
            names_table: false,
            consistency: ConsistencyInputs::default(),
            ob_route_policy: None,
            proxy_route_policy_var: None,
            proxy_route_policy_config: None,
            proxy_primary_zone_name: None,
            enable_primary_zone: true,
            random_routing_mode: false,
            target_db_server: None,
            client: ClientLocation::default(),
            primary_zone: PrimaryZone::default(),
            partition: PartitionState::NoLocation,
            disable_merge_status_check: false,
            candidates: shared(candidates),
            seed,
        }
    }

    /// A weak or strong `SELECT` naming a table whose partition was located.
    pub fn select(candidates: Vec<Candidate>, seed: u64) -> Self {
        let mut req = RouteRequest::new(candidates, seed);
        req.kind = RequestKind::Select;
        req.names_table = true;
        req.consistency.is_select = true;
        req.partition = PartitionState::Located;
        req
    }
}
