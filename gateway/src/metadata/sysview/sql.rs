//! The statements ODP sends to the sys-tenant views (docs/routing.md §12), as the gateway sends them.
//!
//! WHERE clauses, ORDER BYs, LIMITs and hints are ODP's. Where ODP selects `A.*` / `*` and reads
//! columns by name, the gateway names the columns it reads: [`crate::metadata::information_schema::SqlClient`]
//! returns rows by position, and an explicit list keeps positions stable when a kernel adds
//! columns to a view. The partition statements add the text bound (`high_bound_val`) and the
//! position columns (`part_position`, `sub_part_position`) the gateway uses instead of decoding
//! `high_bound_val_bin` and trusting row order (docs/routing.md §12 [QUIRK]).

use crate::metadata::information_schema::ddl::quote;

/// `N` of docs/routing.md §12: ODP passes INT64_MAX as the LIMIT.
pub const LIMIT_ALL: i64 = i64::MAX;

/// The LIMIT of the partition-info statement: ODP's `OBPROXY_MAX_PART_KEY_NUM`.
pub const MAX_PART_KEYS: usize = 16;

const HINT: &str = "/*+READ_CONSISTENCY(WEAK)*/";

/// Columns of a location row (docs/routing.md §12–docs/routing.md §12), in the order `location::LocationRow` reads them.
pub const LOCATION_COLUMNS: &str = "A.tablet_id, A.svr_ip, A.sql_port, A.table_id, A.role, A.part_num, \
     A.replica_num, A.schema_version, A.replica_type, A.dup_replica_type, A.table_type, B.svr_port as svr_port";

const LOCATION_FROM: &str = "FROM oceanbase.__all_virtual_proxy_schema A inner join oceanbase.DBA_OB_SERVERS B \
     ON A.svr_ip = B.svr_ip and A.sql_port = B.sql_port";

/// Columns of a partition-info row (docs/routing.md §12), in the order `part_info` reads them.
pub const PART_INFO_COLUMNS: &str = "template_num, part_level, part_key_num, part_expr, sub_part_expr, part_type, \
     part_num, sub_part_type, all_part_num, part_key_level, part_key_idx, part_key_name, part_key_type, \
     part_key_collation_type, part_key_length, part_key_precision, part_key_scale, part_key_extra, part_key_expr";

fn table_where(tenant: &str, db: &str, table: &str) -> String {
    format!(
        "WHERE A.tenant_name = {} AND A.database_name = {} AND A.table_name = {}",
        quote(tenant),
        quote(db),
        quote(table)
    )
}

/// docs/routing.md §12: the table entry (`tablet_id = 0`), leader first.
pub fn table_entry(tenant: &str, db: &str, table: &str) -> String {
    format!(
        "SELECT {HINT} {LOCATION_COLUMNS} {LOCATION_FROM} {} AND A.tablet_id = 0 ORDER BY A.role ASC LIMIT {LIMIT_ALL}",
        table_where(tenant, db, table)
    )
}

/// docs/routing.md §12: the tenant's servers (the `__all_dummy` entry).
pub fn tenant_servers(tenant: &str) -> String {
    format!(
        "SELECT {HINT} {LOCATION_COLUMNS} {LOCATION_FROM} WHERE A.tenant_name = {} AND A.database_name = 'oceanbase' \
         AND A.table_name = '__all_dummy' AND A.sql_port > 0 ORDER BY A.tablet_id ASC, role ASC LIMIT {LIMIT_ALL}",
        quote(tenant)
    )
}

/// docs/routing.md §12, single form: one tablet's replicas, leader first.
pub fn tablet(tenant: &str, db: &str, table: &str, tablet_id: u64) -> String {
    format!(
        "SELECT {HINT} {LOCATION_COLUMNS} {LOCATION_FROM} {} AND A.tablet_id = {tablet_id} ORDER BY A.role ASC LIMIT {LIMIT_ALL}",
        table_where(tenant, db, table)
    )
}

/// docs/routing.md §12, batch form: several tablets' replicas.
pub fn tablets(tenant: &str, db: &str, table: &str, tablet_ids: &[u64]) -> String {
    let ids: Vec<String> = tablet_ids.iter().map(u64::to_string).collect();
    format!(
        "SELECT {HINT} {LOCATION_COLUMNS} {LOCATION_FROM} {} AND A.tablet_id IN ({}) ORDER BY A.tablet_id, A.role ASC LIMIT {LIMIT_ALL}",
        table_where(tenant, db, table),
        ids.join(", ")
    )
}

/// docs/routing.md §12: partitioning functions and key columns, one row per key column.
pub fn partition_info(table_id: u64, tenant: &str) -> String {
    format!(
        "SELECT {HINT} {PART_INFO_COLUMNS} FROM oceanbase.__all_virtual_proxy_partition_info \
         WHERE table_id = {table_id} and tenant_name = {} order by part_key_idx LIMIT {MAX_PART_KEYS}",
        quote(tenant)
    )
}

/// The `ls_id` sub-select of docs/routing.md §12 and docs/routing.md §12.
fn ls_id(table_id: u64, tenant: &str) -> String {
    format!(
        "IFNULL((SELECT B.ls_id FROM oceanbase.__all_virtual_tablet_to_ls B WHERE A.tablet_id = B.tablet_id \
         AND B.table_id = {table_id} AND B.tenant_id = (SELECT tenant_id FROM oceanbase.DBA_OB_TENANTS \
         WHERE tenant_name = {} LIMIT 1) LIMIT 1), -1) as ls_id",
        quote(tenant)
    )
}

/// docs/routing.md §12: first-level partitions (plus `high_bound_val` and `part_position`).
pub fn partitions(table_id: u64, tenant: &str) -> String {
    format!(
        "SELECT {HINT}  A.tablet_id as tablet_id, {}, A.part_id as part_id, A.part_name as part_name, \
         A.high_bound_val_bin as high_bound_val_bin, A.sub_part_num AS sub_part_num, \
         A.high_bound_val as high_bound_val, A.part_position as part_position \
         FROM oceanbase.__all_virtual_proxy_partition A WHERE A.table_id = {table_id} AND A.tenant_name = {}LIMIT {LIMIT_ALL}",
        ls_id(table_id, tenant),
        quote(tenant)
    )
}

/// docs/routing.md §12: sub-partitions (plus `high_bound_val` and `sub_part_position`).
pub fn sub_partitions(table_id: u64, tenant: &str) -> String {
    format!(
        "SELECT {HINT}  A.tablet_id as tablet_id, {}, A.part_id as part_id, A.sub_part_id as sub_part_id, \
         A.part_name as part_name, A.high_bound_val_bin as high_bound_val_bin, \
         A.high_bound_val as high_bound_val, A.sub_part_position as sub_part_position \
         FROM oceanbase.__all_virtual_proxy_sub_partition A WHERE A.table_id = {table_id} AND A.tenant_name = {}LIMIT {LIMIT_ALL}",
        ls_id(table_id, tenant),
        quote(tenant)
    )
}

/// docs/routing.md §12: zones.
pub fn zones() -> String {
    format!(
        "SELECT {HINT} zone, status, 0 AS is_merging, region, idc AS spare4, type AS spare5 \
         FROM oceanbase.DBA_OB_ZONES LIMIT {LIMIT_ALL}"
    )
}

/// docs/routing.md §12: servers (the result's `svr_port` is the SQL port).
pub fn servers() -> String {
    format!(
        "SELECT {HINT} svr_ip, svr_port AS rpc_port, sql_port AS svr_port, zone, status, \
         start_service_time is not null AS start_service_time, stop_time is not null as stop_time \
         FROM oceanbase.DBA_OB_SERVERS WHERE svr_port > 0 ORDER BY zone LIMIT {LIMIT_ALL}"
    )
}

/// docs/routing.md §12: tenants (not sys, not in a locality change).
pub fn tenants() -> String {
    format!(
        "SELECT {HINT} tenant_name, tenant_id, locality, previous_locality, primary_zone, status \
         FROM oceanbase.DBA_OB_TENANTS where previous_locality is null and tenant_id != 1"
    )
}

/// docs/routing.md §12: the leader servers of the tenants' user log streams.
pub fn single_leaders(tenant_ids: &[u64]) -> String {
    let ids: Vec<String> = tenant_ids.iter().map(u64::to_string).collect();
    format!(
        "SELECT {HINT} t.tenant_name as tenant_name, leader_addr, count(*) = 1 AS is_single_leader \
         FROM oceanbase.DBA_OB_TENANTS t RIGHT JOIN (SELECT DISTINCT tenant_id, CONCAT(svr_ip, ':', sql_port) AS leader_addr \
         FROM oceanbase.CDB_OB_LS_LOCATIONS WHERE ls_id != 1 AND role='leader' AND tenant_id IN ({})) s \
         ON t.tenant_id = s.tenant_id GROUP BY tenant_name",
        ids.join(", ")
    )
}
