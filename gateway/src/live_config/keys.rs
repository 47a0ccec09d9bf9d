//! The settings `SHOW PROXYCONFIG` lists and `ALTER PROXYCONFIG` changes: name, documentation,
//! when a change takes effect, how to read it and (for runtime settings) how to set it.

use std::net::SocketAddr;

use crate::config::Config;

/// When a changed setting takes effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// At once (read per statement or per event).
    Immediate,
    /// For sessions that log in after the change.
    NewSessions,
    /// After a restart; a reload keeps the old value.
    Restart,
}

/// Sets a runtime setting from the text of `ALTER PROXYCONFIG SET name = value`.
pub type Setter = fn(&mut Config, &str) -> Result<(), String>;

/// One setting.
pub struct Key {
    /// Dotted name (`listen.max_packet_size`).
    pub name: &'static str,
    /// One-line documentation.
    pub info: &'static str,
    /// When a change takes effect.
    pub effect: Effect,
    /// Its current value as text.
    pub get: fn(&Config) -> String,
    /// Present for settings `ALTER PROXYCONFIG` may change.
    pub set: Option<Setter>,
}

impl Key {
    /// `need_reboot` of SHOW PROXYCONFIG.
    pub fn need_reboot(&self) -> bool {
        self.effect == Effect::Restart
    }

    /// Why `ALTER PROXYCONFIG` refuses it.
    pub fn why_not_runtime(&self) -> &'static str {
        match self.effect {
            Effect::Restart => "it needs a restart",
            _ => "change it in the config file and reload (SIGHUP)",
        }
    }
}

/// The setting called `name` (case-insensitive).
pub fn find(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.name.eq_ignore_ascii_case(name))
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(T::to_string).unwrap_or_default()
}

fn num<T: std::str::FromStr>(v: &str) -> Result<T, String> {
    v.trim().parse().map_err(|_| format!("'{v}' is not a non-negative integer"))
}

fn routing(c: &Config) -> Option<&crate::config::RoutingConfig> {
    c.routing.as_ref()
}

fn dataplane(c: &Config) -> String {
    c.dataplane.as_ref().map(|d| format!("{d:?}")).unwrap_or_default()
}

fn server_addresses(c: &Config) -> String {
    let Some(r) = routing(c) else { return String::new() };
    let mut v: Vec<String> = r.server_addresses.iter().map(|(k, a)| format!("{k}={a}")).collect();
    v.sort();
    v.join(",")
}

/// `***` for a set secret, empty for none.
fn hidden(secret: &str) -> String {
    if secret.is_empty() {
        String::new()
    } else {
        "***".into()
    }
}

fn clusters(c: &Config) -> String {
    let one = |k: &crate::clusters::ClusterConfig| {
        let from = match &k.config_server_url {
            Some(url) => url.clone(),
            None => k.rslist.iter().map(ToString::to_string).collect::<Vec<_>>().join(";"),
        };
        format!("{}={} (sys_user {}, refresh_ms {})", k.name, from, k.sys_user, k.refresh_ms)
    };
    c.clusters.iter().map(one).collect::<Vec<_>>().join(", ")
}

fn dialled(c: &Config) -> String {
    let one = |d: &crate::clusters::DialledDefault| {
        format!("{}=cluster:{},tenant:{}", d.address, opt(&d.cluster), opt(&d.tenant))
    };
    c.listen.dialled.iter().map(one).collect::<Vec<_>>().join(", ")
}

fn users(c: &Config) -> String {
    let flag = |on: bool, name: &str| if on { format!("({name})") } else { String::new() };
    let names: Vec<String> = c
        .users
        .iter()
        .map(|u| format!("{}{}{}", u.name, flag(u.admin, "admin"), flag(u.require_tls, "require_tls")))
        .collect();
    names.join(",")
}

fn set_log_level(c: &mut Config, v: &str) -> Result<(), String> {
    tracing_subscriber::EnvFilter::try_new(v).map_err(|e| e.to_string())?;
    c.log.level = v.to_string();
    Ok(())
}

fn set_retries(c: &mut Config, v: &str) -> Result<(), String> {
    let n: usize = num(v)?;
    if !(2..=5).contains(&n) {
        return Err("must be between 2 and 5".into());
    }
    let r = c.routing.as_mut().ok_or("no [routing] section is configured")?;
    r.connect_observer_max_retries = n;
    Ok(())
}

fn set_default_tenant(c: &mut Config, v: &str) -> Result<(), String> {
    if v.is_empty() {
        return Err("must not be empty".into());
    }
    let r = c.routing.as_mut().ok_or("no [routing] section is configured")?;
    r.default_tenant = v.to_string();
    Ok(())
}

fn set_backend(c: &mut Config, v: &str) -> Result<(), String> {
    c.backend.address = v.trim().parse::<SocketAddr>().map_err(|_| format!("'{v}' is not an ip:port address"))?;
    Ok(())
}

/// Every setting, in file order.
pub static KEYS: &[Key] = &[
    Key {
        name: "listen.address",
        info: "address and port clients connect to",
        effect: Effect::Restart,
        get: |c| c.listen.address.to_string(),
        set: None,
    },
    Key {
        name: "listen.extra_addresses",
        info: "more addresses to accept clients on (each may have a [[listen.dialled]] entry)",
        effect: Effect::Restart,
        get: |c| c.listen.extra_addresses.iter().map(ToString::to_string).collect::<Vec<_>>().join(","),
        set: None,
    },
    Key {
        name: "listen.max_packet_size",
        info: "largest client packet in bytes (1024 to 1 GiB); larger ones get ERR 1153",
        effect: Effect::NewSessions,
        get: |c| c.listen.max_packet_size.to_string(),
        set: Some(|c, v| {
            c.listen.max_packet_size = num(v)?;
            Ok(())
        }),
    },
    Key {
        name: "listen.handshake_timeout_secs",
        info: "seconds a client may take to complete the handshake and authentication",
        effect: Effect::NewSessions,
        get: |c| c.listen.handshake_timeout_secs.to_string(),
        set: Some(|c, v| {
            c.listen.handshake_timeout_secs = num(v)?;
            Ok(())
        }),
    },
    Key {
        name: "listen.worker_threads",
        info: "threads that run sessions (empty: one per CPU)",
        effect: Effect::Restart,
        get: |c| opt(&c.listen.worker_threads),
        set: None,
    },
    Key {
        name: "listen.session_io",
        info: "how 1:1 sessions wait for their sockets: epoll or io_uring",
        effect: Effect::Restart,
        get: |c| c.listen.session_io.name().to_string(),
        set: None,
    },
    Key {
        name: "listen.server_version",
        info: "server version announced to clients (empty: the backend's)",
        effect: Effect::Restart,
        get: |c| opt(&c.listen.server_version),
        set: None,
    },
    Key {
        name: "listen.shutdown_grace_secs",
        info: "on SIGTERM, seconds running statements may take before the gateway exits",
        effect: Effect::Immediate,
        get: |c| c.listen.shutdown_grace_secs.to_string(),
        set: Some(|c, v| {
            c.listen.shutdown_grace_secs = num(v)?;
            Ok(())
        }),
    },
    Key {
        name: "listen.tls",
        info: "client-leg TLS: off, optional or required (default optional when [tls] has a certificate)",
        effect: Effect::NewSessions,
        get: |c| crate::tls::client_tls_mode(c, Some(c.listen.address)).name().to_string(),
        set: None,
    },
    Key {
        name: "listen.dialled",
        info: "default cluster and tenant of logins by the address the client dialled",
        effect: Effect::NewSessions,
        get: dialled,
        set: None,
    },
    Key {
        name: "backend.address",
        info: "server of sessions without [routing] (and passthrough sessions)",
        effect: Effect::NewSessions,
        get: |c| c.backend.address.to_string(),
        set: Some(set_backend),
    },
    Key {
        name: "backend.connect_timeout_ms",
        info: "milliseconds allowed for the backend's TCP connect and greeting",
        effect: Effect::NewSessions,
        get: |c| c.backend.connect_timeout_ms.to_string(),
        set: Some(|c, v| {
            c.backend.connect_timeout_ms = num(v)?;
            Ok(())
        }),
    },
    Key {
        name: "backend.tls",
        info: "server-leg TLS: off, preferred, required, verify_ca or verify_identity, with ca and server_name (CA re-read on reload)",
        effect: Effect::NewSessions,
        get: |c| c.backend.tls.summary(),
        set: None,
    },
    Key {
        name: "users",
        info: "accounts that may log in, with admin and require_tls (edit the file and reload to change them)",
        effect: Effect::NewSessions,
        get: users,
        set: None,
    },
    Key {
        name: "log.level",
        info: "tracing filter, e.g. info or gateway=debug (RUST_LOG overrides it)",
        effect: Effect::Immediate,
        get: |c| c.log.level.clone(),
        set: Some(set_log_level),
    },
    Key {
        name: "log.route_diagnosis",
        info: "route diagnosis log at target gateway::route: off, route (a line per request) or trace (EXPLAIN ROUTE)",
        effect: Effect::Immediate,
        get: |c| c.log.route_diagnosis.name().to_string(),
        set: Some(|c, v| {
            c.log.route_diagnosis = crate::config::RouteDiagnosis::parse(v).ok_or("must be off, route or trace")?;
            Ok(())
        }),
    },
    Key {
        name: "log.slow_statement_ms",
        info: "requests slower than this log a WARN line at target gateway::slow; 0 = off",
        effect: Effect::Immediate,
        get: |c| c.log.slow_statement_ms.to_string(),
        set: Some(|c, v| {
            c.log.slow_statement_ms = num(v)?;
            Ok(())
        }),
    },
    Key {
        name: "routing.topology",
        info: "static topology file, or demo",
        effect: Effect::Restart,
        get: |c| routing(c).and_then(|r| r.topology.clone()).unwrap_or_default(),
        set: None,
    },
    Key {
        name: "routing.config_server_url",
        info: "config server's cluster list: logins may name any cluster listed there",
        effect: Effect::Restart,
        get: |c| routing(c).map(|r| opt(&r.config_server_url)).unwrap_or_default(),
        set: None,
    },
    Key {
        name: "routing.cluster_sys_user",
        info: "sys-tenant user for clusters of the config server's list",
        effect: Effect::Restart,
        get: |c| routing(c).map(|r| r.cluster_sys_user.clone()).unwrap_or_default(),
        set: None,
    },
    Key {
        name: "routing.cluster_sys_password",
        info: "password of routing.cluster_sys_user (not shown)",
        effect: Effect::Restart,
        get: |c| routing(c).map(|r| hidden(&r.cluster_sys_password)).unwrap_or_default(),
        set: None,
    },
    Key {
        name: "clusters",
        info: "[[clusters]] routed through their sys tenant: name, rslist or config_server_url, sys_user, refresh_ms",
        effect: Effect::Restart,
        get: clusters,
        set: None,
    },
    Key {
        name: "routing.table_discovery",
        info: "tables the topology does not list are discovered through information_schema (as this user)",
        effect: Effect::Restart,
        get: |c| routing(c).and_then(|r| r.table_discovery.as_ref()).map(|d| d.user.clone()).unwrap_or_default(),
        set: None,
    },
    Key {
        name: "routing.server_addresses",
        info: "server name to address overrides of the topology",
        effect: Effect::Restart,
        get: server_addresses,
        set: None,
    },
    Key {
        name: "routing.default_tenant",
        info: "tenant of logins that name none",
        effect: Effect::NewSessions,
        get: |c| routing(c).map(|r| r.default_tenant.clone()).unwrap_or_default(),
        set: Some(set_default_tenant),
    },
    Key {
        name: "routing.idc",
        info: "IDC of this gateway (proxy_idc_name) for LDC ordering",
        effect: Effect::Restart,
        get: |c| routing(c).map(|r| opt(&r.idc)).unwrap_or_default(),
        set: None,
    },
    Key {
        name: "routing.proxy_route_policy",
        info: "proxy_route_policy (e.g. FOLLOWER_FIRST); empty follows ob_route_policy",
        effect: Effect::Restart,
        get: |c| routing(c).map(|r| opt(&r.proxy_route_policy)).unwrap_or_default(),
        set: None,
    },
    Key {
        name: "routing.proxy_primary_zone_name",
        info: "zones ('z1;z2') every request of a tenant without read-only zones is kept to; empty: off",
        effect: Effect::Restart,
        get: |c| routing(c).map(|r| opt(&r.proxy_primary_zone_name)).unwrap_or_default(),
        set: None,
    },
    Key {
        name: "routing.enable_primary_zone",
        info: "strong requests without a located partition go to the tenant's primary zone first",
        effect: Effect::Restart,
        get: |c| routing(c).map(|r| r.enable_primary_zone.to_string()).unwrap_or_default(),
        set: None,
    },
    Key {
        name: "routing.target_db_server",
        info: "servers ('ip:port,…') every request goes to unless its hint names others; empty: off",
        effect: Effect::Restart,
        get: |c| routing(c).map(|r| opt(&r.target_db_server)).unwrap_or_default(),
        set: None,
    },
    Key {
        name: "routing.seed",
        info: "fixed tie-breaking seed (tests); empty: random per statement",
        effect: Effect::Restart,
        get: |c| routing(c).map(|r| opt(&r.seed)).unwrap_or_default(),
        set: None,
    },
    Key {
        name: "routing.cache",
        info: "location cache timing",
        effect: Effect::Restart,
        get: |c| routing(c).map(|r| format!("{:?}", r.cache)).unwrap_or_default(),
        set: None,
    },
    Key {
        name: "routing.route_log",
        info: "JSON-lines route log file",
        effect: Effect::Restart,
        get: |c| routing(c).and_then(|r| r.route_log.as_ref()).map(|p| p.display().to_string()).unwrap_or_default(),
        set: None,
    },
    Key {
        name: "routing.connect_observer_max_retries",
        info: "connection attempts per request when servers fail (2 to 5)",
        effect: Effect::Immediate,
        get: |c| routing(c).map(|r| r.connect_observer_max_retries.to_string()).unwrap_or_default(),
        set: Some(set_retries),
    },
    Key { name: "dataplane", info: "eBPF data plane settings", effect: Effect::Restart, get: dataplane, set: None },
    Key {
        name: "pool.max_per_key",
        info: "most pooled connections per (server, tenant, user)",
        effect: Effect::Restart,
        get: |c| c.pool.max_per_key.to_string(),
        set: None,
    },
    Key {
        name: "pool.max_connects_per_server",
        info: "most connection attempts in flight per server",
        effect: Effect::Restart,
        get: |c| c.pool.max_connects_per_server.to_string(),
        set: None,
    },
    Key {
        name: "pool.acquire_timeout_ms",
        info: "how long a request may wait for a pooled connection",
        effect: Effect::Restart,
        get: |c| c.pool.acquire_timeout_ms.to_string(),
        set: None,
    },
    Key {
        name: "pool.connect_timeout_ms",
        info: "bound of one pooled connection attempt",
        effect: Effect::Restart,
        get: |c| c.pool.connect_timeout_ms.to_string(),
        set: None,
    },
    Key {
        name: "pool.idle_timeout_secs",
        info: "idle pooled connections older than this are closed",
        effect: Effect::Restart,
        get: |c| c.pool.idle_timeout_secs.to_string(),
        set: None,
    },
    Key {
        name: "pool.health_check_after_ms",
        info: "idle time after which a pooled connection is pinged before reuse",
        effect: Effect::Restart,
        get: |c| c.pool.health_check_after_ms.to_string(),
        set: None,
    },
    Key {
        name: "tls.cert",
        info: "client-leg certificate (PEM chain); re-read and validated on every reload, served to new handshakes",
        effect: Effect::NewSessions,
        get: |c| c.tls.as_ref().map(|t| t.cert.display().to_string()).unwrap_or_default(),
        set: None,
    },
    Key {
        name: "tls.key",
        info: "private key of tls.cert (PEM); re-read with it on every reload",
        effect: Effect::NewSessions,
        get: |c| c.tls.as_ref().map(|t| t.key.display().to_string()).unwrap_or_default(),
        set: None,
    },
    Key {
        name: "metrics.address",
        info: "Prometheus endpoint address",
        effect: Effect::Restart,
        get: |c| opt(&c.metrics.address),
        set: None,
    },
    Key {
        name: "auth.accounts",
        info: "accounts clients log in with: config ([[users]] only) or servers (also the servers' accounts)",
        effect: Effect::Restart,
        get: |c| format!("{:?}", c.auth.accounts).to_lowercase(),
        set: None,
    },
    Key {
        name: "auth.user",
        info: "metadata account reading the servers' accounts",
        effect: Effect::Restart,
        get: |c| c.auth.user.clone(),
        set: None,
    },
    Key {
        name: "auth.server",
        info: "server whose accounts are read (default: backend.address)",
        effect: Effect::Restart,
        get: |c| opt(&c.auth.server),
        set: None,
    },
    Key {
        name: "auth.refresh_secs",
        info: "seconds after which the servers' accounts are read again",
        effect: Effect::Restart,
        get: |c| c.auth.refresh_secs.to_string(),
        set: None,
    },
    Key {
        name: "auth.negative_cache_secs",
        info: "seconds a user name the servers do not know stays unknown",
        effect: Effect::Restart,
        get: |c| c.auth.negative_cache_secs.to_string(),
        set: None,
    },
];

/// Restart-only settings whose value differs between `old` and `new`.
pub fn restart_only_changes(old: &Config, new: &Config) -> Vec<&'static str> {
    KEYS.iter().filter(|k| k.need_reboot() && (k.get)(old) != (k.get)(new)).map(|k| k.name).collect()
}

/// Gives `new` the restart-only values of `old` (the running process keeps using them).
pub fn keep_restart_only(old: &Config, new: &mut Config) {
    new.listen.address = old.listen.address;
    new.listen.extra_addresses.clone_from(&old.listen.extra_addresses);
    new.listen.worker_threads = old.listen.worker_threads;
    new.listen.server_version.clone_from(&old.listen.server_version);
    new.dataplane.clone_from(&old.dataplane);
    new.pool.clone_from(&old.pool);
    new.metrics.clone_from(&old.metrics);
    new.auth.clone_from(&old.auth);
    new.clusters.clone_from(&old.clusters);
    match (&old.routing, &mut new.routing) {
        (Some(o), Some(n)) => {
            n.topology.clone_from(&o.topology);
            n.config_server_url.clone_from(&o.config_server_url);
            n.cluster_sys_user.clone_from(&o.cluster_sys_user);
            n.cluster_sys_password.clone_from(&o.cluster_sys_password);
            n.server_addresses.clone_from(&o.server_addresses);
            n.table_discovery.clone_from(&o.table_discovery);
            n.idc.clone_from(&o.idc);
            n.proxy_route_policy.clone_from(&o.proxy_route_policy);
            n.proxy_primary_zone_name.clone_from(&o.proxy_primary_zone_name);
            n.enable_primary_zone = o.enable_primary_zone;
            n.target_db_server.clone_from(&o.target_db_server);
            n.seed = o.seed;
            n.cache.clone_from(&o.cache);
            n.route_log.clone_from(&o.route_log);
        }
        _ => new.routing.clone_from(&old.routing),
    }
}
