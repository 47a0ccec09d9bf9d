//! Gateway: a transparent routing gateway for OceanBase and MySQL-protocol traffic.
#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod accounts;
pub mod clusters;
pub mod config;
pub mod dataplane;
pub mod live_config;
pub mod login_name;
pub mod metadata;
pub mod metrics;
pub mod partition;
pub mod planner;
pub mod protocol;
pub mod route;
pub mod server;
pub mod session;
pub mod sql;
pub mod tls;
pub mod topology;
