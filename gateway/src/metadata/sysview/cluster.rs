//! Zones, servers, tenants and single-leader tenants from their view rows (docs/routing.md §12).

use std::net::SocketAddr;

use crate::metadata::information_schema::TextRow;
use crate::metadata::MetadataError;
use crate::topology::{PrimaryZone, Server, ServerStatus, Tenant, Zone, ZoneStatus, ZoneType};

use super::cells::{parse_addr, Cells};

/// A `DBA_OB_ZONES` row (docs/routing.md §12): zone, status, is_merging, region, spare4 (IDC), spare5 (type).
pub fn zone(row: &TextRow) -> Result<Zone, MetadataError> {
    let c = Cells::new(row, "DBA_OB_ZONES", 6)?;
    let status = c.text(1, "status")?;
    Ok(Zone {
        name: c.text(0, "zone")?.to_string(),
        status: status.parse::<ZoneStatus>().map_err(|e| c.invalid("status", e))?,
        merging: c.int_or(2, "is_merging", 0)? != 0,
        region: c.opt_text(3).unwrap_or_default().to_string(),
        idc: c.opt_text(4).unwrap_or_default().to_string(),
        zone_type: c.opt_text(5).map_or(ZoneType::ReadWrite, ZoneType::from_view),
    })
}

/// A `DBA_OB_SERVERS` row (docs/routing.md §12): svr_ip, rpc_port, svr_port (SQL), zone, status,
/// start_service_time (bool), stop_time (bool). Named `ip:sql_port`.
pub fn server(row: &TextRow) -> Result<Server, MetadataError> {
    let c = Cells::new(row, "DBA_OB_SERVERS", 7)?;
    let addr = c.addr(0, 2, ("svr_ip", "svr_port"))?;
    if addr.port() == 0 {
        return Err(c.invalid("svr_port", "SQL port 0"));
    }
    let status = c.text(4, "status")?;
    Ok(Server {
        name: addr.to_string(),
        addr,
        rpc_port: Some(c.port(1, "rpc_port", false)?),
        zone: c.text(3, "zone")?.to_string(),
        status: status.parse::<ServerStatus>().map_err(|e| c.invalid("status", e))?,
        in_service: c.flag(5, "start_service_time")?,
        stopping: c.flag(6, "stop_time")?,
    })
}

/// A `DBA_OB_TENANTS` row (docs/routing.md §12): tenant_name, tenant_id, locality, previous_locality,
/// primary_zone, status.
pub fn tenant(row: &TextRow) -> Result<Tenant, MetadataError> {
    let c = Cells::new(row, "DBA_OB_TENANTS", 6)?;
    Ok(Tenant {
        name: c.text(0, "tenant_name")?.to_string(),
        id: Some(c.uint(1, "tenant_id")?),
        primary_zone: PrimaryZone::parse(c.opt_text(4).unwrap_or_default()),
        locality: c.opt_text(2).unwrap_or_default().to_string(),
        single_leader: None,
    })
}

/// A `CDB_OB_LS_LOCATIONS` row (docs/routing.md §12): tenant_name, leader_addr, is_single_leader. Returns the
/// tenant and its single leader; `None` for a row without a tenant (the RIGHT JOIN found no
/// tenant) or for a tenant whose leaders are on several servers.
pub fn single_leader(row: &TextRow) -> Result<Option<(String, SocketAddr)>, MetadataError> {
    let c = Cells::new(row, "CDB_OB_LS_LOCATIONS", 3)?;
    let Some(tenant) = c.opt_text(0) else {
        return Ok(None);
    };
    if !c.flag(2, "is_single_leader")? {
        return Ok(None);
    }
    let text = c.text(1, "leader_addr")?;
    let addr = parse_addr(text).ok_or_else(|| c.invalid("leader_addr", format!("`{text}` is not ip:port")))?;
    Ok(Some((tenant.to_string(), addr)))
}

/// Sets `single_leader` on the tenants named in `leaders` (tenant names compare case-insensitively).
pub fn apply_single_leaders(tenants: &mut [Tenant], leaders: &[(String, SocketAddr)]) {
    for t in tenants.iter_mut() {
        t.single_leader = leaders.iter().find(|(n, _)| n.eq_ignore_ascii_case(&t.name)).map(|(_, a)| *a);
    }
}

/// Parses every row with `f`.
pub fn all<T>(rows: &[TextRow], f: impl Fn(&TextRow) -> Result<T, MetadataError>) -> Result<Vec<T>, MetadataError> {
    rows.iter().map(f).collect()
}
