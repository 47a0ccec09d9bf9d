//! Data-plane status: what the daemon reports (mode, attached programs, map sizes, steering
//! events, splice counters), its Prometheus text encoding and the `gateway dataplane status`
//! report.
//!
//! Interface (one source of truth): the daemon serves `GET /metrics` on
//! `[dataplane] metrics_address` (modes/metrics.rs), rendered by [`DataplaneStatus::to_prometheus`].
//! `gateway dataplane status` fetches that page, decodes it with [`DataplaneStatus::from_prometheus`]
//! and prints [`DataplaneStatus::report`]. No files or pinned maps are left behind by a daemon
//! that dies; a scrape always shows live values.

use std::fmt::Write as _;

/// Whether the eBPF side is running.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum EbpfState {
    /// The configured mode needs no eBPF program (`off`), or nothing is attached by this module.
    #[default]
    Off,
    /// Programs are attached.
    Active,
    /// eBPF was wanted but is not available (no privilege, no object): userspace-only operation.
    Unavailable(String),
}

impl EbpfState {
    fn label(&self) -> &'static str {
        match self {
            EbpfState::Off => "off",
            EbpfState::Active => "active",
            EbpfState::Unavailable(_) => "unavailable",
        }
    }
}

/// One attached program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramStatus {
    /// Program name in the object.
    pub name: String,
    /// Kernel program type (`sched_cls`, `sk_lookup`, …).
    pub kind: String,
    /// Attach point (`tc ingress eth0`, `netns`, a cgroup path).
    pub target: String,
    /// Kernel program id (for `bpftool prog show id N`), when readable.
    pub id: Option<u32>,
}

/// Fill level of one map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapStatus {
    /// Map name in the object.
    pub name: String,
    /// Entries in use.
    pub entries: u64,
    /// Capacity (`max_entries`).
    pub capacity: u64,
}

/// The router / sk_lookup steering at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SteeringStatus {
    /// Attached programs.
    pub programs: Vec<ProgramStatus>,
    /// Map fill levels.
    pub maps: Vec<MapStatus>,
    /// Event counters summed over CPUs, `(event, count)` in slot order.
    pub counters: Vec<(String, u64)>,
    /// Steered destination ports.
    pub ports: Vec<u16>,
    /// VIP ranges whose `local` route the daemon added (and removes at exit).
    pub routes_added: Vec<String>,
    /// VIP ranges whose `local` route existed already (left in place).
    pub routes_kept: Vec<String>,
}

/// Kernel splice counters (docs/dataplane.md §3): the splice engine's `SpliceStats` as mapped by
/// modes/runtime.rs (`kernel_bytes` = bytes redirected in both directions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpliceStatus {
    /// Connection pairs spliced right now.
    pub active: u64,
    /// Connection pairs spliced since start.
    pub spliced_total: u64,
    /// Bytes the kernel forwarded between spliced sockets.
    pub kernel_bytes: u64,
    /// Times a connection fell back to userspace forwarding because of its redirect budget.
    pub budget_fallbacks: u64,
    /// Times the kernel woke the daemon to forward bytes it passed to userspace.
    pub wakeups: u64,
    /// Wake-ups lost to a full ring buffer (those bytes waited up to a second).
    pub wakeups_lost: u64,
}

/// Everything `gateway dataplane status` shows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DataplaneStatus {
    /// Daemon process id.
    pub pid: u32,
    /// Configured steering mode (`off`, `cgroup`, `router`, `sk_lookup`).
    pub mode: String,
    /// Whether eBPF runs.
    pub ebpf: EbpfState,
    /// Router mode: the ingress interface.
    pub interface: Option<String>,
    /// Configured VIP ranges.
    pub vip_cidrs: Vec<String>,
    /// Router / sk_lookup steering, when attached.
    pub steering: Option<SteeringStatus>,
    /// Kernel splice, when a splice engine reports.
    pub splice: Option<SpliceStatus>,
    /// Cgroup steering's self-check (mode `cgroup`, when attached).
    pub cgroup: Option<super::steer_status::CgroupSteering>,
}

const INFO: &str = "gateway_dataplane_info";
const VIP: &str = "gateway_dataplane_vip_range";
const PORT: &str = "gateway_dataplane_steered_port";
const PROGRAM: &str = "gateway_dataplane_program_attached";
const MAP_ENTRIES: &str = "gateway_dataplane_map_entries";
const MAP_CAPACITY: &str = "gateway_dataplane_map_capacity";
const EVENTS: &str = "gateway_dataplane_steering_events_total";
const SPLICE_ACTIVE: &str = "gateway_splice_active_connections";
const SPLICE_TOTAL: &str = "gateway_splice_connections_total";
const SPLICE_BYTES: &str = "gateway_splice_kernel_bytes_total";
const SPLICE_FALLBACKS: &str = "gateway_splice_budget_fallbacks_total";
const SPLICE_WAKEUPS: &str = "gateway_splice_wakeups_total";
const SPLICE_WAKEUPS_LOST: &str = "gateway_splice_wakeups_lost_total";

/// The splice families with their types and help, in the order of [`SpliceStatus::values`]: the
/// one list both this page and the metrics page (which names them without samples when no
/// splice engine reports) write from.
pub const SPLICE_FAMILIES: [(&str, &str, &str); 6] = [
    (SPLICE_ACTIVE, "gauge", "Connection pairs spliced in the kernel now."),
    (SPLICE_TOTAL, "counter", "Connection pairs spliced since start."),
    (SPLICE_BYTES, "counter", "Bytes forwarded by the kernel between spliced sockets."),
    (SPLICE_FALLBACKS, "counter", "Fallbacks to userspace forwarding over the redirect budget."),
    (SPLICE_WAKEUPS, "counter", "Kernel wake-ups of the daemon for bytes passed to userspace."),
    (SPLICE_WAKEUPS_LOST, "counter", "Kernel wake-ups lost to a full ring buffer."),
];

impl SpliceStatus {
    /// The counters in the order of [`SPLICE_FAMILIES`].
    fn values(&self) -> [u64; 6] {
        [self.active, self.spliced_total, self.kernel_bytes, self.budget_fallbacks, self.wakeups, self.wakeups_lost]
    }
}

impl DataplaneStatus {
    /// Prometheus text exposition format (version 0.0.4).
    pub fn to_prometheus(&self) -> String {
        let mut out = String::new();
        let reason = match &self.ebpf {
            EbpfState::Unavailable(r) => r.as_str(),
            _ => "",
        };
        let pid = self.pid.to_string();
        let iface = self.interface.as_deref().unwrap_or("");
        family(&mut out, INFO, "gauge", "Data-plane mode of this gateway (always 1).");
        sample(
            &mut out,
            INFO,
            &[
                ("pid", &pid),
                ("mode", &self.mode),
                ("ebpf", self.ebpf.label()),
                ("interface", iface),
                ("reason", reason),
            ],
            1,
        );
        family(&mut out, VIP, "gauge", "Configured VIP range and who owns its local route (always 1).");
        for cidr in &self.vip_cidrs {
            sample(&mut out, VIP, &[("cidr", cidr), ("route", self.route_owner(cidr))], 1);
        }
        if let Some(s) = &self.steering {
            family(&mut out, PORT, "gauge", "Destination port steered to the gateway (always 1).");
            for port in &s.ports {
                sample(&mut out, PORT, &[("port", &port.to_string())], 1);
            }
            family(&mut out, PROGRAM, "gauge", "Attached eBPF program (always 1).");
            for p in &s.programs {
                let id = p.id.map(|i| i.to_string()).unwrap_or_default();
                sample(
                    &mut out,
                    PROGRAM,
                    &[("program", &p.name), ("type", &p.kind), ("target", &p.target), ("id", &id)],
                    1,
                );
            }
            family(&mut out, MAP_ENTRIES, "gauge", "Entries in use in an eBPF map.");
            for m in &s.maps {
                sample(&mut out, MAP_ENTRIES, &[("map", &m.name)], m.entries);
            }
            family(&mut out, MAP_CAPACITY, "gauge", "Capacity (max_entries) of an eBPF map.");
            for m in &s.maps {
                sample(&mut out, MAP_CAPACITY, &[("map", &m.name)], m.capacity);
            }
            family(&mut out, EVENTS, "counter", "Steering events counted by the eBPF programs.");
            for (event, n) in &s.counters {
                sample(&mut out, EVENTS, &[("event", event)], *n);
            }
        }
        if let Some(c) = &self.cgroup {
            c.encode(&mut out);
        }
        if let Some(sp) = &self.splice {
            for ((name, kind, help), value) in SPLICE_FAMILIES.into_iter().zip(sp.values()) {
                family(&mut out, name, kind, help);
                sample(&mut out, name, &[], value);
            }
        }
        out
    }

    fn route_owner(&self, cidr: &str) -> &'static str {
        let Some(s) = &self.steering else {
            return "none";
        };
        if s.routes_added.iter().any(|c| c == cidr) {
            "added"
        } else if s.routes_kept.iter().any(|c| c == cidr) {
            "kept"
        } else {
            "none"
        }
    }

    /// Decodes what [`Self::to_prometheus`] wrote (unknown metrics are ignored).
    pub fn from_prometheus(text: &str) -> Result<Self, String> {
        let mut st = DataplaneStatus::default();
        let mut seen_info = false;
        let mut vips: Vec<(String, String)> = Vec::new();
        let mut steering = SteeringStatus::default();
        let mut has_steering = false;
        let mut splice = SpliceStatus::default();
        let mut has_splice = false;
        let mut cgroup = super::steer_status::CgroupSteering::default();
        let mut has_cgroup = false;
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (name, labels, value) = parse_sample(line).map_err(|e| format!("line {}: {e}: {line}", n + 1))?;
            let l = |k: &str| labels.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone()).unwrap_or_default();
            if cgroup.decode(&name, &l, value) {
                has_cgroup = true;
                continue;
            }
            match name.as_str() {
                INFO => {
                    seen_info = true;
                    st.pid = l("pid").parse().unwrap_or(0);
                    st.mode = l("mode");
                    st.interface = Some(l("interface")).filter(|i| !i.is_empty());
                    st.ebpf = match l("ebpf").as_str() {
                        "active" => EbpfState::Active,
                        "unavailable" => EbpfState::Unavailable(l("reason")),
                        _ => EbpfState::Off,
                    };
                }
                VIP => vips.push((l("cidr"), l("route"))),
                PORT => {
                    has_steering = true;
                    steering.ports.push(l("port").parse().map_err(|_| format!("bad port in: {line}"))?);
                }
                PROGRAM => {
                    has_steering = true;
                    let id = l("id").parse().ok();
                    steering.programs.push(ProgramStatus {
                        name: l("program"),
                        kind: l("type"),
                        target: l("target"),
                        id,
                    });
                }
                MAP_ENTRIES | MAP_CAPACITY => {
                    has_steering = true;
                    let map = l("map");
                    let idx = match steering.maps.iter().position(|m| m.name == map) {
                        Some(i) => i,
                        None => {
                            steering.maps.push(MapStatus { name: map, entries: 0, capacity: 0 });
                            steering.maps.len() - 1
                        }
                    };
                    if name == MAP_ENTRIES {
                        steering.maps[idx].entries = value;
                    } else {
                        steering.maps[idx].capacity = value;
                    }
                }
                EVENTS => {
                    has_steering = true;
                    steering.counters.push((l("event"), value));
                }
                SPLICE_ACTIVE | SPLICE_TOTAL | SPLICE_BYTES | SPLICE_FALLBACKS | SPLICE_WAKEUPS
                | SPLICE_WAKEUPS_LOST => {
                    has_splice = true;
                    match name.as_str() {
                        SPLICE_ACTIVE => splice.active = value,
                        SPLICE_TOTAL => splice.spliced_total = value,
                        SPLICE_BYTES => splice.kernel_bytes = value,
                        SPLICE_FALLBACKS => splice.budget_fallbacks = value,
                        SPLICE_WAKEUPS => splice.wakeups = value,
                        _ => splice.wakeups_lost = value,
                    }
                }
                _ => {}
            }
        }
        if !seen_info {
            return Err(format!("no {INFO} sample: not a gateway metrics page"));
        }
        for (cidr, route) in vips {
            match route.as_str() {
                "added" => steering.routes_added.push(cidr.clone()),
                "kept" => steering.routes_kept.push(cidr.clone()),
                _ => {}
            }
            st.vip_cidrs.push(cidr);
        }
        st.steering = has_steering.then_some(steering);
        st.splice = has_splice.then_some(splice);
        st.cgroup = has_cgroup.then_some(cgroup);
        Ok(st)
    }

    /// The human-readable report of `gateway dataplane status`.
    pub fn report(&self) -> String {
        let mut o = String::new();
        let ebpf = match &self.ebpf {
            EbpfState::Off if self.mode == "off" => "eBPF off".to_owned(),
            EbpfState::Off if self.mode == "cgroup" => "cgroup programs not attached".to_owned(),
            EbpfState::Off => "no router / sk_lookup programs".to_owned(),
            EbpfState::Active => "eBPF active".to_owned(),
            EbpfState::Unavailable(r) => format!("eBPF unavailable, userspace only: {r}"),
        };
        let _ = writeln!(o, "mode:             {} ({ebpf}; daemon pid {})", self.mode, self.pid);
        if let Some(i) = &self.interface {
            let _ = writeln!(o, "interface:        {i}");
        }
        for cidr in &self.vip_cidrs {
            let route = match self.route_owner(cidr) {
                "added" => "local route added by the gateway",
                "kept" => "local route pre-existing, kept",
                _ => "no local route",
            };
            let _ = writeln!(o, "VIP range:        {cidr} ({route})");
        }
        if let Some(s) = &self.steering {
            let ports: Vec<String> = s.ports.iter().map(ToString::to_string).collect();
            let _ = writeln!(o, "steered ports:    {}", ports.join(", "));
            for p in &s.programs {
                let id = p.id.map(|i| format!(", id {i}")).unwrap_or_default();
                let _ = writeln!(o, "program:          {} ({}) on {}{id}", p.name, p.kind, p.target);
            }
            for m in &s.maps {
                let _ = writeln!(o, "map:              {} {}/{} entries", m.name, m.entries, m.capacity);
            }
            let events: Vec<String> = s.counters.iter().map(|(e, n)| format!("{e}={n}")).collect();
            let _ = writeln!(o, "steering events:  {}", events.join(" "));
        }
        if let Some(c) = &self.cgroup {
            c.report(&mut o);
        }
        match &self.splice {
            Some(sp) => {
                let _ = writeln!(
                    o,
                    "splice:           {} spliced now, {} in total, {} bytes forwarded in kernel, {} budget fallbacks, \
                     {} wake-ups ({} lost)",
                    sp.active, sp.spliced_total, sp.kernel_bytes, sp.budget_fallbacks, sp.wakeups, sp.wakeups_lost
                );
            }
            None => {
                let _ = writeln!(o, "splice:           not reported (kernel splice off or not built)");
            }
        }
        o
    }
}

pub(super) fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

pub(super) fn sample(out: &mut String, name: &str, labels: &[(&str, &str)], value: u64) {
    out.push_str(name);
    if !labels.is_empty() {
        out.push('{');
        for (i, (k, v)) in labels.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let v = v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n");
            let _ = write!(out, "{k}=\"{v}\"");
        }
        out.push('}');
    }
    let _ = writeln!(out, " {value}");
}

pub(super) type Labels = Vec<(String, String)>;

/// `name{k="v",…} value` → parts; values must be non-negative integers (all ours are).
pub(super) fn parse_sample(line: &str) -> Result<(String, Labels, u64), String> {
    let (head, value) = line.rsplit_once(' ').ok_or("no value")?;
    let value = value.parse::<f64>().map_err(|_| "value is not a number")?;
    let value = if value.is_finite() && value >= 0.0 { value as u64 } else { 0 };
    let Some((name, rest)) = head.split_once('{') else {
        return Ok((head.to_owned(), Vec::new(), value));
    };
    let body = rest.strip_suffix('}').ok_or("unterminated labels")?;
    let mut labels = Vec::new();
    let mut chars = body.chars().peekable();
    loop {
        let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
        if key.is_empty() {
            break;
        }
        if chars.next() != Some('"') {
            return Err("label value not quoted".into());
        }
        let mut v = String::new();
        loop {
            match chars.next().ok_or("unterminated label value")? {
                '\\' => match chars.next().ok_or("dangling escape")? {
                    'n' => v.push('\n'),
                    c => v.push(c),
                },
                '"' => break,
                c => v.push(c),
            }
        }
        labels.push((key.trim_start_matches(',').to_owned(), v));
        if chars.peek() == Some(&',') {
            chars.next();
        }
    }
    Ok((name.to_owned(), labels, value))
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
