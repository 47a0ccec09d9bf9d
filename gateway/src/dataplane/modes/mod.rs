//! VIP steering modes: router (TC ingress + `bpf_sk_assign`, docs/dataplane.md §2) and sk_lookup
//! (netns-wide `sk_lookup`, docs/dataplane.md §2), plus the daemon-side runtime that attaches the configured mode,
//! serves the data-plane metrics and detaches everything at shutdown.
//!
//! Both modes share one setup: load the object, write the steered `VIP:port` prefixes into
//! `VIP_CIDRS` and the gateway listener into slot 0 of `LISTENER`, load and attach the mode's
//! program, then add a `local` route on `lo` for every VIP range. [`VipSteering`] owns all of it;
//! dropping it detaches the program, then removes the routes it added.

pub mod cli;
mod lookup;
pub(crate) mod metrics;
mod original;
pub(crate) mod plan;
pub(crate) mod route;
mod router;
pub(crate) mod runtime;

use std::os::fd::AsRawFd;

use aya::maps::lpm_trie::{Key, LpmTrie};
use aya::maps::{MapData, PerCpuArray, SockMap};
use aya::Ebpf;
use gateway_common::router::{
    VipKey, LISTENER_MAP, LISTENER_MAP_MAX, LISTENER_SLOT, ROUTER_STATS_MAP, STAT_NAMES, VIP_MAP, VIP_MAP_MAX,
};

use super::status::{MapStatus, ProgramStatus, SteeringStatus};
use super::{load_object, DataplaneError};
pub use original::vip_backend;
pub use plan::{Ipv4Cidr, VipMode, VipPlan};
pub use route::LocalRoutes;

/// Where the mode's program is attached; dropping the owning [`VipSteering`] detaches it.
enum Attachment {
    Router(router::RouterLink),
    Lookup(lookup::LookupLink),
}

/// An attached router or sk_lookup mode: programs, maps and the `local` routes.
pub struct VipSteering {
    /// Detached first (see `Drop`), while `ebpf` still owns the program.
    attachment: Option<Attachment>,
    /// Removed after the program is detached.
    routes: Option<LocalRoutes>,
    /// Owns programs and maps; dropping it detaches everything (docs/dataplane.md §5).
    ebpf: Ebpf,
    plan: VipPlan,
}

impl VipSteering {
    /// Attaches `plan`'s mode in the calling thread's network namespace with `listener` (a
    /// listening TCP socket of this process) as the target of steered connections.
    pub fn attach(plan: VipPlan, listener: &impl AsRawFd) -> Result<Self, DataplaneError> {
        let mut ebpf = load_object()?;
        fill_vip_map(&mut ebpf, &plan)?;
        set_listener(&mut ebpf, listener)?;
        let attachment = match plan.mode {
            VipMode::Router => {
                let iface = plan.interface.as_deref().unwrap_or_default();
                Attachment::Router(router::RouterLink::attach(&mut ebpf, iface)?)
            }
            VipMode::SkLookup => Attachment::Lookup(lookup::LookupLink::attach(&mut ebpf)?),
        };
        let mut me = Self { attachment: Some(attachment), routes: None, ebpf, plan };
        // The routes come last: until the program runs, a local VIP would only answer RST.
        me.routes = Some(LocalRoutes::add(&me.plan.cidrs)?);
        tracing::info!(
            mode = me.plan.mode.name(),
            interface = ?me.plan.interface,
            vips = ?me.plan.cidrs.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ports = ?me.plan.ports,
            "VIP steering attached"
        );
        Ok(me)
    }

    /// The plan this steering runs.
    pub fn plan(&self) -> &VipPlan {
        &self.plan
    }

    /// Programs, maps and counters at this moment.
    pub fn status(&self) -> Result<SteeringStatus, DataplaneError> {
        let programs = match &self.attachment {
            Some(Attachment::Router(l)) => vec![l.status(&self.ebpf)],
            Some(Attachment::Lookup(l)) => vec![l.status(&self.ebpf)],
            None => Vec::new(),
        };
        let maps = vec![
            MapStatus { name: VIP_MAP.into(), entries: vip_entries(&self.ebpf)?, capacity: u64::from(VIP_MAP_MAX) },
            MapStatus {
                name: LISTENER_MAP.into(),
                entries: u64::from(self.attachment.is_some()),
                capacity: u64::from(LISTENER_MAP_MAX),
            },
        ];
        let routes = self.routes.as_ref();
        Ok(SteeringStatus {
            programs,
            maps,
            counters: counters(&self.ebpf)?,
            ports: self.plan.ports.clone(),
            routes_added: routes.map(|r| r.added().iter().map(ToString::to_string).collect()).unwrap_or_default(),
            routes_kept: routes.map(|r| r.preexisting().iter().map(ToString::to_string).collect()).unwrap_or_default(),
        })
    }

    /// Detaches the program and removes the routes now, reporting the first failure.
    pub fn detach(mut self) -> Result<(), DataplaneError> {
        self.teardown()
    }

    fn teardown(&mut self) -> Result<(), DataplaneError> {
        let was_attached = self.attachment.is_some();
        let detached = match self.attachment.take() {
            Some(Attachment::Router(l)) => l.detach(&mut self.ebpf),
            Some(Attachment::Lookup(l)) => l.detach(&mut self.ebpf),
            None => Ok(()),
        };
        let removed = self.routes.take().map_or(Ok(()), LocalRoutes::remove);
        if was_attached && detached.is_ok() && removed.is_ok() {
            tracing::info!(mode = self.plan.mode.name(), "VIP steering detached, local routes removed");
        }
        detached.and(removed)
    }
}

impl Drop for VipSteering {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            tracing::warn!(error = %e, "detaching the VIP steering failed");
        }
    }
}

impl std::fmt::Debug for VipSteering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VipSteering").field("plan", &self.plan).field("attached", &self.attachment.is_some()).finish()
    }
}

fn fill_vip_map(ebpf: &mut Ebpf, plan: &VipPlan) -> Result<(), DataplaneError> {
    let map = ebpf.map_mut(VIP_MAP).ok_or(DataplaneError::MapMissing { name: VIP_MAP })?;
    let mut trie: LpmTrie<&mut MapData, VipKey, u32> = LpmTrie::try_from(map).map_err(|e| map_error(VIP_MAP, e))?;
    for (prefix, key) in plan.entries() {
        trie.insert(&Key::new(prefix, key), 1u32, 0).map_err(|e| map_error(VIP_MAP, e))?;
    }
    Ok(())
}

fn set_listener(ebpf: &mut Ebpf, listener: &impl AsRawFd) -> Result<(), DataplaneError> {
    let map = ebpf.map_mut(LISTENER_MAP).ok_or(DataplaneError::MapMissing { name: LISTENER_MAP })?;
    let mut socks: SockMap<&mut MapData> = SockMap::try_from(map).map_err(|e| map_error(LISTENER_MAP, e))?;
    socks.set(LISTENER_SLOT, listener, 0).map_err(|e| map_error(LISTENER_MAP, e).classify())
}

fn vip_entries(ebpf: &Ebpf) -> Result<u64, DataplaneError> {
    let map = ebpf.map(VIP_MAP).ok_or(DataplaneError::MapMissing { name: VIP_MAP })?;
    let trie: LpmTrie<&MapData, VipKey, u32> = LpmTrie::try_from(map).map_err(|e| map_error(VIP_MAP, e))?;
    let mut n = 0u64;
    for key in trie.keys() {
        key.map_err(|e| map_error(VIP_MAP, e))?;
        n += 1;
    }
    Ok(n)
}

fn counters(ebpf: &Ebpf) -> Result<Vec<(String, u64)>, DataplaneError> {
    let map = ebpf.map(ROUTER_STATS_MAP).ok_or(DataplaneError::MapMissing { name: ROUTER_STATS_MAP })?;
    let stats: PerCpuArray<&MapData, u64> = PerCpuArray::try_from(map).map_err(|e| map_error(ROUTER_STATS_MAP, e))?;
    let mut out = Vec::with_capacity(STAT_NAMES.len());
    for (slot, name) in (0u32..).zip(STAT_NAMES) {
        let per_cpu = stats.get(&slot, 0).map_err(|e| map_error(ROUTER_STATS_MAP, e))?;
        out.push((name.to_owned(), per_cpu.iter().fold(0u64, |a, v| a.saturating_add(*v))));
    }
    Ok(out)
}

fn map_error(name: &'static str, source: aya::maps::MapError) -> DataplaneError {
    DataplaneError::Map { name, source: Box::new(source) }
}

fn program_error(name: &'static str, source: aya::programs::ProgramError) -> DataplaneError {
    DataplaneError::Program { name, source: Box::new(source) }
}

/// Status line of a loaded program: its kernel id when it can be read.
fn program_status(program: Option<&aya::programs::Program>, name: &str, kind: &str, target: String) -> ProgramStatus {
    let id = program.and_then(|p| match p {
        aya::programs::Program::SchedClassifier(p) => p.info().ok().map(|i| i.id()),
        aya::programs::Program::SkLookup(p) => p.info().ok().map(|i| i.id()),
        _ => None,
    });
    ProgramStatus { name: name.to_owned(), kind: kind.to_owned(), target, id }
}
