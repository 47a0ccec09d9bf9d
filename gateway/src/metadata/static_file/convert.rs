//! From the parsed file to the topology model: cluster, tenant server lists, table entries.

use std::collections::HashMap;
use std::net::SocketAddr;

use crate::partition::{parse_create_table, TableScheme};
use crate::topology::{
    Cluster, PrimaryZone, Replica, ReplicaType, Role, Server, ServerStatus, TableEntry, TableKey, TableMeta, TableType,
    TabletLocation, Tenant, Zone, ZoneStatus, ZoneType,
};

use super::file::{PartitionDef, PlacementDef, TableDef, TopologyFile};
use crate::metadata::MetadataError;

/// Everything the static source serves.
#[derive(Debug, Clone)]
pub(super) struct Loaded {
    pub cluster: Cluster,
    pub tenant_servers: Vec<(String, Vec<SocketAddr>)>,
    pub tables: Vec<(TableKey, TableMeta)>,
}

fn invalid(msg: String) -> MetadataError {
    MetadataError::Invalid(msg)
}

/// Converts a parsed file, replacing server addresses by `overrides` (server name → address).
pub(super) fn convert(file: TopologyFile, overrides: &HashMap<String, SocketAddr>) -> Result<Loaded, MetadataError> {
    if let Some(unknown) = overrides.keys().find(|n| !file.servers.iter().any(|s| &s.name == *n)) {
        return Err(invalid(format!("address override for unknown server {unknown}")));
    }
    let servers = file.servers.iter().map(|s| server(s, overrides)).collect::<Result<Vec<_>, _>>()?;
    let addr_of = |name: &str| -> Result<SocketAddr, MetadataError> {
        servers.iter().find(|s| s.name == name).map(|s| s.addr).ok_or_else(|| invalid(format!("unknown server {name}")))
    };
    let zones = file.zones.iter().map(zone).collect::<Result<Vec<_>, _>>()?;
    let mut tenants = Vec::new();
    let mut tenant_servers = Vec::new();
    for t in &file.tenants {
        let list = match &t.servers {
            Some(names) => names.iter().map(|n| addr_of(n)).collect::<Result<Vec<_>, _>>()?,
            None => servers.iter().map(|s| s.addr).collect(),
        };
        let single_leader = t.single_leader.as_deref().map(addr_of).transpose()?;
        tenant_servers.push((t.name.clone(), list));
        tenants.push(Tenant {
            name: t.name.clone(),
            id: t.id,
            primary_zone: PrimaryZone::parse(&t.primary_zone),
            locality: String::new(),
            single_leader,
        });
    }
    let mut tables = Vec::new();
    for (i, def) in file.tables.iter().enumerate() {
        if !file.tenants.iter().any(|t| t.name.eq_ignore_ascii_case(&def.tenant)) {
            return Err(invalid(format!("table {} names unknown tenant {}", def.name, def.tenant)));
        }
        tables.push(table(def, i as u64, &addr_of)?);
    }
    let cluster = Cluster::new(file.cluster, zones, servers, tenants)?;
    Ok(Loaded { cluster, tenant_servers, tables })
}

fn server(def: &super::file::ServerDef, overrides: &HashMap<String, SocketAddr>) -> Result<Server, MetadataError> {
    let status = match &def.status {
        Some(s) => s.parse::<ServerStatus>()?,
        None => ServerStatus::Active,
    };
    Ok(Server {
        name: def.name.clone(),
        addr: overrides.get(&def.name).copied().unwrap_or(def.addr),
        rpc_port: None,
        zone: def.zone.clone(),
        status,
        in_service: true,
        stopping: false,
    })
}

fn zone(def: &super::file::ZoneDef) -> Result<Zone, MetadataError> {
    let status = match &def.status {
        Some(s) => s.parse::<ZoneStatus>()?,
        None => ZoneStatus::Active,
    };
    Ok(Zone {
        name: def.name.clone(),
        region: def.region.clone(),
        idc: def.idc.clone(),
        zone_type: def.zone_type.as_deref().map_or(ZoneType::ReadWrite, ZoneType::from_view),
        status,
        merging: def.merging,
    })
}

/// Replicas of one placement: leader, followers, read-only replicas.
fn replicas(
    leader: Option<&str>,
    followers: &[String],
    readonly: &[String],
    addr_of: &dyn Fn(&str) -> Result<SocketAddr, MetadataError>,
) -> Result<Vec<Replica>, MetadataError> {
    let mut out = Vec::new();
    if let Some(l) = leader {
        out.push(Replica { addr: addr_of(l)?, role: Role::Leader, replica_type: ReplicaType::Full });
    }
    for f in followers {
        out.push(Replica { addr: addr_of(f)?, role: Role::Follower, replica_type: ReplicaType::Full });
    }
    for r in readonly {
        out.push(Replica { addr: addr_of(r)?, role: Role::Follower, replica_type: ReplicaType::ReadOnly });
    }
    Ok(out)
}

fn table(
    def: &TableDef,
    position: u64,
    addr_of: &dyn Fn(&str) -> Result<SocketAddr, MetadataError>,
) -> Result<(TableKey, TableMeta), MetadataError> {
    let key = TableKey::new(&def.tenant, &def.database, &def.name);
    let mut entry = TableEntry {
        key: key.clone(),
        table_id: Some(def.table_id.unwrap_or(500_001 + position)),
        table_type: TableType::UserTable,
        schema_version: None,
        part_num: 1,
        duplicate: def.duplicate,
        scheme: None,
        replicas: Vec::new(),
    };
    let Some(ddl) = &def.ddl else {
        let p = def.replicas.clone().unwrap_or_default();
        entry.replicas = placement(&p, addr_of)?;
        return Ok((key, TableMeta { entry, tablets: Vec::new() }));
    };
    let mut scheme = parse_create_table(ddl).map_err(|e| invalid(format!("table {}: {e}", def.name)))?;
    let first = def.first_tablet_id.unwrap_or(200_001 + 1000 * position);
    let tablets = assign_tablets(&mut scheme, first, &def.partitions, addr_of)
        .map_err(|e| invalid(format!("table {}: {e}", def.name)))?;
    entry.part_num = leaf_names(&scheme).len();
    entry.scheme = Some(scheme);
    Ok((key, TableMeta { entry, tablets }))
}

fn placement(
    p: &PlacementDef,
    addr_of: &dyn Fn(&str) -> Result<SocketAddr, MetadataError>,
) -> Result<Vec<Replica>, MetadataError> {
    replicas(p.leader.as_deref(), &p.followers, &p.readonly, addr_of)
}

/// Leaf partition names in partition order.
fn leaf_names(scheme: &TableScheme) -> Vec<String> {
    scheme
        .partitions
        .iter()
        .flat_map(|p| {
            if p.subs.is_empty() {
                vec![p.name.to_string()]
            } else {
                p.subs.iter().map(|s| s.name.to_string()).collect()
            }
        })
        .collect()
}

/// Sets the tablet id of every leaf partition and builds the locations of the placed ones.
fn assign_tablets(
    scheme: &mut TableScheme,
    first: u64,
    defs: &[PartitionDef],
    addr_of: &dyn Fn(&str) -> Result<SocketAddr, MetadataError>,
) -> Result<Vec<TabletLocation>, MetadataError> {
    let names = leaf_names(scheme);
    if let Some(d) = defs.iter().find(|d| !names.iter().any(|n| n.eq_ignore_ascii_case(&d.name))) {
        return Err(invalid(format!("placement for unknown partition {}", d.name)));
    }
    let def_of = |name: &str| defs.iter().find(|d| d.name.eq_ignore_ascii_case(name));
    let mut ids = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        ids.push(def_of(name).and_then(|d| d.tablet_id).unwrap_or(first + i as u64));
    }
    let mut next = ids.iter().copied();
    for p in &mut scheme.partitions {
        if p.subs.is_empty() {
            p.tablet_id = next.next();
        }
        for s in &mut p.subs {
            s.tablet_id = next.next();
        }
    }
    let mut tablets = Vec::new();
    for (name, id) in names.iter().zip(&ids) {
        if let Some(d) = def_of(name) {
            let replicas = replicas(d.leader.as_deref(), &d.followers, &d.readonly, addr_of)?;
            tablets.push(TabletLocation { tablet_id: *id, replicas });
        }
    }
    Ok(tablets)
}
