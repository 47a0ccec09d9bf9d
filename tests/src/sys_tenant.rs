//! A MariaDB that plays an OceanBase sys tenant: database `oceanbase` with tables named and shaped
//! like the views the gateway reads (docs/routing.md §12), and rows for zones, servers, tenants and
//! tenant server lists (`__all_dummy`) naming real loopback servers.

use std::net::SocketAddr;

use crate::MariaDb;

/// The view-shaped tables (empty).
pub const DDL: &str = "
CREATE DATABASE oceanbase;
CREATE TABLE oceanbase.DBA_OB_ZONES (zone VARCHAR(128) NOT NULL, create_time DATETIME, modify_time DATETIME,
  status VARCHAR(32), idc VARCHAR(128), region VARCHAR(128), type VARCHAR(64));
CREATE TABLE oceanbase.DBA_OB_SERVERS (svr_ip VARCHAR(46) NOT NULL, svr_port BIGINT NOT NULL, id BIGINT,
  zone VARCHAR(128), sql_port BIGINT, with_rootserver VARCHAR(3), status VARCHAR(64),
  start_service_time DATETIME NULL, stop_time DATETIME NULL, build_version VARCHAR(256));
CREATE TABLE oceanbase.DBA_OB_TENANTS (tenant_id BIGINT, tenant_name VARCHAR(128), tenant_type VARCHAR(4),
  primary_zone VARCHAR(128), locality VARCHAR(4096), previous_locality VARCHAR(4096), status VARCHAR(64));
CREATE TABLE oceanbase.CDB_OB_LS_LOCATIONS (tenant_id BIGINT, ls_id BIGINT, svr_ip VARCHAR(46), svr_port BIGINT,
  sql_port BIGINT, zone VARCHAR(128), role VARCHAR(8), replica_type VARCHAR(16));
CREATE TABLE oceanbase.__all_virtual_proxy_schema (tenant_name VARCHAR(128), database_name VARCHAR(128),
  table_name VARCHAR(256), tablet_id BIGINT, svr_ip VARCHAR(46), sql_port BIGINT, table_id BIGINT, role BIGINT,
  part_num BIGINT, replica_num BIGINT, table_type BIGINT, schema_version BIGINT, replica_type BIGINT,
  dup_replica_type BIGINT, memstore_percent BIGINT, tenant_id BIGINT, spare1 BIGINT);
CREATE TABLE oceanbase.__all_virtual_proxy_partition_info (tenant_name VARCHAR(128), table_id BIGINT,
  tenant_id BIGINT, template_num BIGINT, part_level BIGINT, part_key_num BIGINT, part_key_level BIGINT,
  part_key_idx BIGINT, part_key_name VARCHAR(128), part_key_type BIGINT, part_key_collation_type BIGINT,
  part_key_length BIGINT, part_key_precision BIGINT, part_key_scale BIGINT, part_key_extra VARCHAR(4096),
  part_key_expr VARCHAR(4096), part_key_default_value VARBINARY(1024), part_key_rowkey_idx BIGINT,
  part_expr VARCHAR(4096), sub_part_expr VARCHAR(4096), part_type BIGINT, part_num BIGINT, part_space BIGINT,
  sub_part_type BIGINT, sub_part_num BIGINT, sub_part_space BIGINT, all_part_num BIGINT, spare1 BIGINT);
CREATE TABLE oceanbase.__all_virtual_proxy_partition (tenant_name VARCHAR(128), table_id BIGINT, part_id BIGINT,
  tenant_id BIGINT, part_name VARCHAR(64), status BIGINT, low_bound_val VARCHAR(4096),
  low_bound_val_bin VARBINARY(4096), high_bound_val VARCHAR(4096), high_bound_val_bin VARBINARY(4096),
  part_position BIGINT, tablet_id BIGINT, sub_part_num BIGINT, sub_part_space BIGINT, spare1 BIGINT);
CREATE TABLE oceanbase.__all_virtual_proxy_sub_partition (tenant_name VARCHAR(128), table_id BIGINT,
  part_id BIGINT, sub_part_id BIGINT, tenant_id BIGINT, part_name VARCHAR(64), status BIGINT,
  low_bound_val VARCHAR(4096), low_bound_val_bin VARBINARY(4096), high_bound_val VARCHAR(4096),
  high_bound_val_bin VARBINARY(4096), sub_part_position BIGINT, tablet_id BIGINT);
CREATE TABLE oceanbase.__all_virtual_tablet_to_ls (tenant_id BIGINT, tablet_id BIGINT, ls_id BIGINT, table_id BIGINT);
";

/// Starts a MariaDB with the empty view tables.
pub fn start(name: &str) -> anyhow::Result<MariaDb> {
    start_with(name, crate::MariaDbOptions::default())
}

/// [`start`] with server options (e.g. TLS).
pub fn start_with(name: &str, options: crate::MariaDbOptions) -> anyhow::Result<MariaDb> {
    let db = MariaDb::start_with(name, options)?;
    db.cli().sql(DDL)?;
    Ok(db)
}

/// `DBA_OB_ZONES` row of an active read-write zone in region `region`.
pub fn zone_sql(zone: &str, region: &str) -> String {
    format!("INSERT INTO oceanbase.DBA_OB_ZONES (zone, status, idc, region, type) VALUES ('{zone}','ACTIVE','{region}-1','{region}','ReadWrite');\n")
}

/// `DBA_OB_SERVERS` row of an active, in-service server (SQL address `addr`) in `zone`.
pub fn server_sql(addr: SocketAddr, zone: &str) -> String {
    format!(
        "INSERT INTO oceanbase.DBA_OB_SERVERS (svr_ip, svr_port, zone, sql_port, status, start_service_time, stop_time) \
         VALUES ('{}',2882,'{zone}',{},'ACTIVE',NOW(),NULL);\n",
        addr.ip(),
        addr.port()
    )
}

/// `DBA_OB_TENANTS` row of a user tenant with a full replica in `zone`.
pub fn tenant_sql(id: u64, name: &str, zone: &str) -> String {
    format!(
        "INSERT INTO oceanbase.DBA_OB_TENANTS (tenant_id, tenant_name, tenant_type, primary_zone, locality, previous_locality, status) \
         VALUES ({id},'{name}','USER','RANDOM','FULL{{1}}@{zone}',NULL,'NORMAL');\n"
    )
}

/// The `__all_dummy` row that puts `tenant` on the server at `addr` (its tenant server list).
pub fn dummy_sql(tenant: &str, addr: SocketAddr) -> String {
    format!(
        "INSERT INTO oceanbase.__all_virtual_proxy_schema VALUES \
         ('{tenant}','oceanbase','__all_dummy',0,'{}',{},1,2,1,3,3,1700000000,0,0,100,1002,0);\n",
        addr.ip(),
        addr.port()
    )
}

/// Removes `addr` from `tenant`'s server list.
pub fn drop_dummy_sql(tenant: &str, addr: SocketAddr) -> String {
    format!(
        "DELETE FROM oceanbase.__all_virtual_proxy_schema WHERE tenant_name = '{tenant}' AND table_name = '__all_dummy' \
         AND svr_ip = '{}' AND sql_port = {};\n",
        addr.ip(),
        addr.port()
    )
}
