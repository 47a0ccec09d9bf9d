//! The config server (ODP `obproxy_config_server_url`, docs/routing.md §14): a cluster's rslist and the list of clusters, as JSON over HTTP.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use serde::Deserialize;

use super::ClusterError;

/// Bound of one config-server request (connect, send, read).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// ODP's reply envelope: `Code`, `Message`, `Success`, `Data`.
#[derive(Debug, Deserialize)]
struct Reply<T> {
    #[serde(rename = "Code", default)]
    code: Option<i64>,
    #[serde(rename = "Message", default)]
    message: Option<String>,
    #[serde(rename = "Success", default)]
    success: Option<bool>,
    #[serde(rename = "Data")]
    data: Option<T>,
}

/// `Data` of a cluster entry.
#[derive(Debug, Deserialize)]
struct ClusterData {
    #[serde(rename = "ObRegion", default)]
    region: Option<String>,
    #[serde(rename = "RsList", default)]
    rs_list: Vec<RsEntry>,
}

/// One `RsList` entry: `address` is `ip:rpc_port`, `sql_port` the SQL port.
#[derive(Debug, Deserialize)]
struct RsEntry {
    address: String,
    sql_port: u16,
}

/// `Data` of the cluster list.
#[derive(Debug, Deserialize)]
struct ListData {
    #[serde(rename = "ObRootServiceInfoUrlList", default)]
    clusters: Vec<ListEntry>,
}

/// One cluster of the list.
#[derive(Debug, Clone, Deserialize)]
struct ListEntry {
    #[serde(rename = "ObRegion")]
    region: String,
    #[serde(rename = "ObRootServiceInfoUrl")]
    url: String,
}

/// A cluster's entry: its name as the config server spells it and the SQL addresses of its
/// RootService servers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterEntry {
    /// `Data.ObRegion`.
    pub region: Option<String>,
    /// `ip` of each `RsList[].address` with its `sql_port`.
    pub rslist: Vec<SocketAddr>,
}

/// Parses a cluster entry reply; `url` names it in errors.
pub fn parse_cluster(url: &str, body: &str) -> Result<ClusterEntry, ClusterError> {
    let data: ClusterData = parse_reply(url, body)?;
    let mut rslist = Vec::with_capacity(data.rs_list.len());
    for rs in &data.rs_list {
        let ip = rs.address.rsplit_once(':').map_or(rs.address.as_str(), |(ip, _)| ip);
        let ip: IpAddr = ip.trim_matches(['[', ']']).parse().map_err(|_| ClusterError::ConfigServer {
            url: url.to_string(),
            reason: format!("RsList address {:?} is not ip:port", rs.address),
        })?;
        rslist.push(SocketAddr::new(ip, rs.sql_port));
    }
    if rslist.is_empty() {
        return Err(ClusterError::ConfigServer { url: url.to_string(), reason: "the reply's RsList is empty".into() });
    }
    Ok(ClusterEntry { region: data.region, rslist })
}

/// Parses a cluster list reply: `(ObRegion, ObRootServiceInfoUrl)` pairs.
pub fn parse_list(url: &str, body: &str) -> Result<Vec<(String, String)>, ClusterError> {
    let data: ListData = parse_reply(url, body)?;
    Ok(data.clusters.into_iter().map(|e| (e.region, e.url)).collect())
}

fn parse_reply<T: serde::de::DeserializeOwned>(url: &str, body: &str) -> Result<T, ClusterError> {
    let bad = |reason: String| ClusterError::ConfigServer { url: url.to_string(), reason };
    let reply: Reply<T> = serde_json::from_str(body).map_err(|e| {
        let start: String = body.chars().take(80).collect();
        bad(format!("the reply is not the expected JSON ({e}): {start:?}"))
    })?;
    let message = reply.message.clone().unwrap_or_default();
    if reply.success == Some(false) || reply.code.is_some_and(|c| c != 200) {
        return Err(bad(format!("unsuccessful reply (Code {:?}, Message {message:?})", reply.code)));
    }
    reply.data.ok_or_else(|| bad("the reply has no Data".into()))
}

/// GETs `url` and returns the body of a 200 answer (in a blocking thread: `ureq` is synchronous).
pub async fn get(url: &str) -> Result<String, ClusterError> {
    let owned = url.to_string();
    let fetched = tokio::task::spawn_blocking(move || {
        let agent = ureq::AgentBuilder::new().timeout(REQUEST_TIMEOUT).redirects(0).build();
        match agent.get(&owned).call() {
            Ok(resp) if resp.status() == 200 => resp.into_string().map_err(|e| format!("reading the reply: {e}")),
            Ok(resp) => Err(format!("HTTP status {}", resp.status())),
            Err(ureq::Error::Status(code, _)) => Err(format!("HTTP status {code}")),
            Err(e) => Err(e.to_string()),
        }
    })
    .await
    .map_err(|e| e.to_string())
    .and_then(|r| r);
    let body = fetched.map_err(|reason| ClusterError::ConfigServer { url: url.to_string(), reason })?;
    tracing::debug!(url, bytes = body.len(), "config server answered");
    Ok(body)
}

/// Fetches and parses a cluster entry.
pub async fn fetch_cluster(url: &str) -> Result<ClusterEntry, ClusterError> {
    parse_cluster(url, &get(url).await?)
}

/// Fetches and parses the cluster list.
pub async fn fetch_list(url: &str) -> Result<Vec<(String, String)>, ClusterError> {
    parse_list(url, &get(url).await?)
}
