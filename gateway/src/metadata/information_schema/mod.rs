//! Partition definitions from `information_schema` (PARTITIONS, COLUMNS, STATISTICS), the portable
//! path that works on OceanBase, MySQL and MariaDB (docs/routing.md §12).
//!
//! It knows *which partition* a row is in but not *where* it lives: no tablet ids, replicas,
//! servers or zones (docs/routing.md §12). Those come from the static topology or the sys views.

pub(crate) mod client;
pub(crate) mod ddl;

#[cfg(test)]
mod tests;

use crate::partition::{parse_create_table, TableScheme};
use crate::topology::{Cluster, TableEntry, TableKey, TableMeta, TableType, TabletLocation, TenantServers};

use super::{MetaFuture, MetadataError, MetadataSource};
pub use client::{MysqlClient, SqlClient, TextRow};
use ddl::{ColumnRow, PartitionRow};

/// What discovery found about one table.
#[derive(Debug, Clone)]
pub struct Discovered {
    /// Number of leaf partitions (1 for a non-partitioned table).
    pub part_num: usize,
    /// The rebuilt `CREATE TABLE` text (`None` for a non-partitioned table).
    pub ddl: Option<String>,
    /// The scheme, or why it cannot be calculated (`Ok(None)`: not partitioned).
    pub scheme: Result<Option<TableScheme>, MetadataError>,
}

/// A metadata source reading partition definitions over a MySQL connection.
#[derive(Debug, Clone)]
pub struct InformationSchemaSource<C = MysqlClient> {
    client: C,
}

impl<C: SqlClient> InformationSchemaSource<C> {
    /// A source querying through `client`.
    pub fn new(client: C) -> Self {
        InformationSchemaSource { client }
    }

    /// The client.
    pub fn client(&self) -> &C {
        &self.client
    }

    /// Reads the partition definition of `db.table` (NotFound if the table does not exist).
    pub async fn discover(&self, db: &str, table: &str) -> Result<Discovered, MetadataError> {
        let parts = ddl::partition_rows(&self.client.query(&ddl::partitions_sql(db, table)).await?);
        if parts.is_empty() {
            return Err(MetadataError::NotFound(format!("table {db}.{table}")));
        }
        if parts.len() == 1 && parts[0].method.is_none() {
            return Ok(Discovered { part_num: 1, ddl: None, scheme: Ok(None) });
        }
        let part_num = parts.len();
        let (text, scheme) = match self.rebuild(db, table, &parts).await {
            Ok(Some(t)) => {
                let scheme = parse_create_table(&t).map(Some).map_err(MetadataError::from);
                (Some(t), scheme)
            }
            Ok(None) => (None, Ok(None)),
            Err(e @ MetadataError::Invalid(_)) => (None, Err(e)),
            Err(e) => return Err(e),
        };
        if let Err(e) = &scheme {
            tracing::warn!(db, table, error = %e, "partitioning found but not calculable");
        }
        Ok(Discovered { part_num, ddl: text, scheme })
    }

    /// The DDL text: rebuilt from the views, or `SHOW CREATE TABLE` when the views lack the
    /// sub-partition bounds.
    async fn rebuild(&self, db: &str, table: &str, parts: &[PartitionRow]) -> Result<Option<String>, MetadataError> {
        if ddl::needs_show_create(parts) {
            return self.show_create(db, table).await.map(Some);
        }
        let columns: Vec<ColumnRow> = ddl::column_rows(&self.client.query(&ddl::columns_sql(db, table)).await?)?;
        let pk_rows = self.client.query(&ddl::primary_key_sql(db, table)).await?;
        let pk: Vec<String> = pk_rows.into_iter().filter_map(|r| r.into_iter().next().flatten()).collect();
        let defaults = if ambiguous_default(parts) {
            ddl::default_partitions(&self.show_create(db, table).await?)
        } else {
            Vec::new()
        };
        ddl::create_table(table, &columns, &pk, parts, &defaults).map_err(|e| match e {
            MetadataError::Invalid(m) => MetadataError::Invalid(format!("{db}.{table}: {m}")),
            other => other,
        })
    }

    async fn show_create(&self, db: &str, table: &str) -> Result<String, MetadataError> {
        let sql = format!("SHOW CREATE TABLE `{}`.`{}`", db.replace('`', "``"), table.replace('`', "``"));
        let rows = self.client.query(&sql).await?;
        rows.into_iter()
            .next()
            .and_then(|r| r.into_iter().nth(1).flatten())
            .ok_or_else(|| MetadataError::Invalid(format!("SHOW CREATE TABLE {db}.{table} returned nothing")))
    }

    async fn table_meta(&self, key: &TableKey) -> Result<TableMeta, MetadataError> {
        let found = self.discover(&key.database, &key.table).await?;
        let entry = TableEntry {
            key: key.clone(),
            table_id: None,
            table_type: TableType::UserTable,
            schema_version: None,
            part_num: found.part_num,
            duplicate: false,
            scheme: found.scheme.ok().flatten(),
            replicas: Vec::new(),
        };
        Ok(TableMeta { entry, tablets: Vec::new() })
    }
}

/// A LIST partition described as `0`: MariaDB's DEFAULT partition, or a real `IN (0)`.
fn ambiguous_default(parts: &[PartitionRow]) -> bool {
    let list = parts[0].method.as_deref().is_some_and(|m| m.trim().to_ascii_uppercase().starts_with("LIST"));
    list && parts.iter().any(|p| p.description.as_deref().map(str::trim) == Some("0"))
}

impl<C: SqlClient> MetadataSource for InformationSchemaSource<C> {
    fn name(&self) -> &'static str {
        "information_schema"
    }

    fn fetch_cluster(&self) -> MetaFuture<'_, Cluster> {
        Box::pin(async {
            Err(MetadataError::Unsupported { source_name: "information_schema", what: "servers and zones" })
        })
    }

    fn fetch_tenant_servers<'a>(&'a self, _tenant: &'a str) -> MetaFuture<'a, TenantServers> {
        Box::pin(async {
            Err(MetadataError::Unsupported { source_name: "information_schema", what: "tenant servers" })
        })
    }

    fn fetch_table<'a>(&'a self, key: &'a TableKey) -> MetaFuture<'a, TableMeta> {
        Box::pin(self.table_meta(key))
    }

    fn fetch_tablets<'a>(&'a self, _key: &'a TableKey, _ids: &'a [u64]) -> MetaFuture<'a, Vec<TabletLocation>> {
        Box::pin(async {
            Err(MetadataError::Unsupported { source_name: "information_schema", what: "tablet locations" })
        })
    }
}
