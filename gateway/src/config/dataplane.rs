//! `[dataplane]`: the eBPF data plane's settings (steering mode, interception, splice, direct route).

use std::net::SocketAddr;

use serde::Deserialize;

/// How application connections reach the gateway (docs/dataplane.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SteeringMode {
    /// No steering: applications connect to the listener themselves.
    #[default]
    Off,
    /// cgroup/connect4 + sock_ops + cgroup/getsockopt for applications on this host.
    Cgroup,
    /// TC ingress + bpf_sk_assign for traffic passing through this host.
    Router,
    /// sk_lookup for a host that owns the database address.
    SkLookup,
}

/// eBPF data-plane settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataplaneConfig {
    /// Steering mode. Default `off`.
    #[serde(default)]
    pub mode: SteeringMode,
    /// cgroup v2 directories (absolute, or relative to the cgroup2 mount) whose processes'
    /// connections are steered (mode `cgroup`). The gateway's own cgroup must not be among them.
    #[serde(default)]
    pub app_cgroups: Vec<String>,
    /// Destinations intercepted besides every SQL address of the configured topology. IPv6
    /// addresses are steered when the gateway listens on IPv6; `[::ffff:a.b.c.d]:port` is IPv4.
    #[serde(default)]
    pub intercept: Vec<SocketAddr>,
    /// Mode `cgroup`, containers: where connects made in another network namespace than the
    /// gateway's (containers, pods) are sent, at most one address per family, e.g.
    /// `["172.17.0.1:6033", "[fd00:17::1]:6033"]`. Each must be a host address every application
    /// container can reach (the host side of the container bridge or veth, the node address) and
    /// be served by a gateway listener (`[listen] address` or `extra_addresses`, or a wildcard of
    /// that port). Empty (default): container connects are not steered (counted and warned about).
    #[serde(default)]
    pub container_addresses: Vec<SocketAddr>,
    /// When the daemon is gone: `false` (default) lets new connections reach their original
    /// destination directly (fail-open); `true` refuses them (fail-closed).
    #[serde(default)]
    pub fail_closed: bool,
    /// Router mode: the interface whose ingress traffic is steered.
    #[serde(default)]
    pub router_interface: Option<String>,
    /// Router and sk_lookup modes: database VIP ranges (`10.255.0.0/16`) that are steered.
    #[serde(default)]
    pub vip_cidrs: Vec<String>,
    /// Splice pinned sessions in the kernel (sockmap). Never for TLS sessions.
    /// Default off. Retransmitted bytes the kernel would hand the verdict twice are stripped in
    /// BPF (pitfall P11, `dataplane::splice`).
    #[serde(default)]
    pub splice: bool,
    /// Bytes a spliced connection may have redirected but not yet acknowledged by the receiver
    /// before forwarding falls back to userspace (docs/dataplane.md P4). Default 4 MiB.
    #[serde(default = "default_splice_budget")]
    pub splice_budget_bytes: u64,
    /// With `splice = true`: also splice a routed session once it is pinned to one server
    /// connection for good (temporary table, `LOCK TABLES`, user lock, a `SET` the gateway cannot
    /// replay, …), at the end of the answer that pinned it, when nothing else holds it in
    /// userspace (see `session/routed/splice.rs`). The connection then leaves the pool for good.
    /// Default true; ignored when `splice` is off.
    #[serde(default = "default_splice_pinned")]
    pub splice_pinned: bool,
    /// Users whose sessions are passthrough: pinned to their backend from login, never routed per
    /// statement, hence spliceable from the start.
    #[serde(default)]
    pub passthrough_users: Vec<String>,
    /// Rewrite an application's connect() straight to its server when the route is fixed before
    /// the session starts and the server accepts the login as-is (mode `cgroup` only): then the
    /// daemon is not in that connection's path at all. Default off, because such a session gets
    /// none of the gateway's services (its own authentication, statement routing, metrics, TLS
    /// policy); see `gateway/src/dataplane/steer/direct.rs` for exactly when it applies.
    #[serde(default)]
    pub direct_route: bool,
    /// Direct-route table (used only with `direct_route = true`): an intercepted address → the
    /// server its connections are sent to, e.g. `{ "10.0.0.5:2881" = "10.0.0.7:2881" }` for a
    /// passthrough deployment whose sessions always belong on that server. Each key must also be
    /// intercepted (`[backend] address`, `intercept`, or a topology address), each server must
    /// accept the application's login as-is (plain MySQL login, no TLS termination or login
    /// rewriting by the gateway), and must not be the gateway's own listener.
    #[serde(default)]
    pub direct_route_targets: std::collections::BTreeMap<SocketAddr, SocketAddr>,
    /// Address of the data-plane metrics endpoint (`GET /metrics`, Prometheus text: mode, attached
    /// programs, map sizes, steering events, splice counters), e.g. `127.0.0.1:9464`. It is also
    /// what `gateway dataplane status --config FILE` reads. Unset: no endpoint.
    #[serde(default)]
    pub metrics_address: Option<SocketAddr>,
}

fn default_splice_budget() -> u64 {
    4 << 20
}

fn default_splice_pinned() -> bool {
    true
}
