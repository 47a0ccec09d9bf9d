//! Route candidates from the topology: partition replicas with their roles, tenant servers.

use crate::route::{self, Candidate, ReplicaType as RouteReplicaType, Role as RouteRole, ZoneType as RouteZoneType};
use crate::topology::{self, Locator, PartitionReplicas, PlacedServer, ReplicaType, Role, TableEntry, TableKey};

/// One candidate per tenant server (no partition known).
pub fn tenant(servers: &[PlacedServer]) -> Vec<Candidate> {
    servers.iter().map(server).collect()
}

fn server(p: &PlacedServer) -> Candidate {
    let zone_type = match p.zone_type() {
        topology::ZoneType::ReadOnly => RouteZoneType::ReadOnly,
        _ => RouteZoneType::ReadWrite,
    };
    Candidate::tenant_server(p.addr, p.zone_name(), p.region(), p.idc())
        .with_zone_type(zone_type)
        .with_merging(p.merging())
}

/// The partition's replicas as partition servers, then the other tenant servers.
/// `tenant_candidates` are [`tenant`] of `tenant_servers`: a replica placed exactly like a tenant
/// server (same server and zone records) starts from that candidate instead of a new one.
pub fn with_replicas(
    reps: &PartitionReplicas,
    tenant_servers: &[PlacedServer],
    tenant_candidates: &[Candidate],
) -> Vec<Candidate> {
    let tenant = || tenant_servers.iter().zip(tenant_candidates);
    let mut out: Vec<Candidate> = reps
        .replicas
        .iter()
        .map(|r| {
            tenant()
                .find(|(t, _)| same_place(t, &r.server))
                .map_or_else(|| server(&r.server), |(_, c)| c.clone())
                .with_replica(role(r.replica.role))
                .with_replica_type(replica_type(r.replica.replica_type))
                .with_duplicate(reps.table.duplicate)
        })
        .collect();
    for (t, c) in tenant() {
        if !out.iter().any(|o| o.addr == t.addr) {
            out.push(c.clone());
        }
    }
    out
}

/// Same address, placed from the same server and zone records (so [`server`] gives equal
/// candidates).
fn same_place(a: &PlacedServer, b: &PlacedServer) -> bool {
    fn same<T>(x: &Option<std::sync::Arc<T>>, y: &Option<std::sync::Arc<T>>) -> bool {
        match (x, y) {
            (Some(x), Some(y)) => std::sync::Arc::ptr_eq(x, y),
            (None, None) => true,
            _ => false,
        }
    }
    a.addr == b.addr && same(&a.server, &b.server) && same(&a.zone, &b.zone)
}

/// When no partition can be computed: every server holding one of the table's cached tablets
/// counts as a partition server, leaders of any tablet as leaders (docs/routing.md §12).
pub async fn all_partitions(
    locator: &Locator,
    key: &TableKey,
    entry: &TableEntry,
    tenant_servers: &[PlacedServer],
) -> Vec<Candidate> {
    let cluster = locator.cluster();
    let mut out: Vec<Candidate> = Vec::new();
    for tablet in entry.tablet_ids() {
        let Some(loc) = locator.tablet_of(key, tablet).await.value().cloned() else {
            continue;
        };
        for r in &loc.replicas {
            let placed = PlacedServer::place(r.addr, &cluster);
            match out.iter_mut().find(|c| c.addr == r.addr) {
                Some(c) if r.role == Role::Leader => c.role = RouteRole::Leader,
                Some(_) => {}
                None => {
                    out.push(server(&placed).with_replica(role(r.role)).with_replica_type(replica_type(r.replica_type)))
                }
            }
        }
    }
    for t in tenant_servers {
        if !out.iter().any(|c| c.addr == t.addr) {
            out.push(server(t));
        }
    }
    out
}

fn role(r: Role) -> RouteRole {
    match r {
        Role::Leader => RouteRole::Leader,
        Role::Follower => RouteRole::Follower,
    }
}

fn replica_type(t: ReplicaType) -> RouteReplicaType {
    match t {
        ReplicaType::Full | ReplicaType::Backup | ReplicaType::MemOnly => RouteReplicaType::Full,
        ReplicaType::LogOnly => RouteReplicaType::LogOnly,
        ReplicaType::ReadOnly => RouteReplicaType::ReadOnly,
        ReplicaType::EncryptionLogOnly => RouteReplicaType::EncryptedLogOnly,
        ReplicaType::Other(c) => RouteReplicaType::Other(c),
    }
}

/// The topology's primary zone as the route engine's.
pub fn primary_zone(p: &topology::PrimaryZone) -> route::PrimaryZone {
    match p {
        topology::PrimaryZone::Random => route::PrimaryZone::default(),
        topology::PrimaryZone::Groups(g) => {
            route::PrimaryZone::parse(&g.iter().map(|z| z.join(",")).collect::<Vec<_>>().join(";"))
        }
    }
}
