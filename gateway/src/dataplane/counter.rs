//! MySQL-port traffic counter: the `port_counter` TC classifier on one interface's ingress.

use std::collections::BTreeSet;

use aya::{
    maps::{HashMap, MapData, PerCpuArray},
    programs::{
        tc::{self, SchedClassifierLinkId, TcError},
        SchedClassifier, TcAttachType,
    },
    Ebpf,
};
use gateway_common::{
    TrafficCounters, COUNTER_MYSQL, COUNTER_OTHER_TCP, MYSQL_PORTS_MAP, MYSQL_PORTS_MAX, PORT_COUNTERS_MAP,
    PORT_COUNTER_PROGRAM,
};

use super::{load_object, DataplaneError};

/// Counters summed over all CPUs at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortCounterSnapshot {
    /// TCP packets whose source or destination port is a configured MySQL port.
    pub mysql: TrafficCounters,
    /// All other TCP packets seen by the program.
    pub other_tcp: TrafficCounters,
}

/// The `port_counter` classifier attached to the ingress of one interface.
///
/// Counts TCP packets (and their bytes, L2 header included) arriving on the interface whose
/// source or destination port is in the configured set. The interface name is resolved in the
/// network namespace of the calling thread. Dropping the value detaches the program.
pub struct PortCounter {
    /// Owns programs and maps; dropping it would detach everything (docs/dataplane.md §5).
    ebpf: Ebpf,
    iface: String,
    link: Option<SchedClassifierLinkId>,
}

impl PortCounter {
    /// Loads the object, adds a clsact qdisc to `iface` (an existing one is fine) and attaches
    /// the classifier to its ingress. The port set starts empty: see [`Self::set_ports`].
    pub fn attach(iface: &str) -> Result<Self, DataplaneError> {
        let mut ebpf = load_object()?;
        add_clsact(iface)?;
        let program = program_mut(&mut ebpf)?;
        program.load().map_err(|e| program_error(e).classify())?;
        let link = program.attach(iface, TcAttachType::Ingress).map_err(|e| program_error(e).classify())?;
        tracing::debug!(iface, "port counter attached");
        Ok(Self { ebpf, iface: iface.to_owned(), link: Some(link) })
    }

    /// Interface the counter is attached to.
    pub fn interface(&self) -> &str {
        &self.iface
    }

    /// Replaces the set of MySQL ports (host byte order).
    pub fn set_ports(&mut self, ports: &[u16]) -> Result<(), DataplaneError> {
        let wanted: BTreeSet<u16> = ports.iter().copied().collect();
        if wanted.len() > MYSQL_PORTS_MAX as usize {
            return Err(DataplaneError::TooManyPorts { count: wanted.len(), max: MYSQL_PORTS_MAX });
        }
        let mut map = self.ports_map()?;
        let current = collect_keys(&map)?;
        for stale in current.difference(&wanted) {
            map.remove(stale).map_err(|e| map_error(MYSQL_PORTS_MAP, e))?;
        }
        for port in wanted.difference(&current) {
            map.insert(port, 1u8, 0).map_err(|e| map_error(MYSQL_PORTS_MAP, e))?;
        }
        Ok(())
    }

    /// The configured MySQL ports, ascending.
    pub fn ports(&mut self) -> Result<Vec<u16>, DataplaneError> {
        let map = self.ports_map()?;
        Ok(collect_keys(&map)?.into_iter().collect())
    }

    /// Reads the per-CPU counters and sums them.
    pub fn snapshot(&self) -> Result<PortCounterSnapshot, DataplaneError> {
        let map = self.ebpf.map(PORT_COUNTERS_MAP).ok_or(DataplaneError::MapMissing { name: PORT_COUNTERS_MAP })?;
        let counters: PerCpuArray<&MapData, TrafficCounters> =
            PerCpuArray::try_from(map).map_err(|e| map_error(PORT_COUNTERS_MAP, e))?;
        let sum = |slot: u32| -> Result<TrafficCounters, DataplaneError> {
            let per_cpu = counters.get(&slot, 0).map_err(|e| map_error(PORT_COUNTERS_MAP, e))?;
            let mut total = TrafficCounters::default();
            for c in per_cpu.iter() {
                total.add(c);
            }
            Ok(total)
        };
        Ok(PortCounterSnapshot { mysql: sum(COUNTER_MYSQL)?, other_tcp: sum(COUNTER_OTHER_TCP)? })
    }

    /// Detaches the program now, reporting failures (dropping detaches silently).
    pub fn detach(mut self) -> Result<(), DataplaneError> {
        self.detach_link()
    }

    fn detach_link(&mut self) -> Result<(), DataplaneError> {
        let Some(link) = self.link.take() else {
            return Ok(());
        };
        program_mut(&mut self.ebpf)?.detach(link).map_err(program_error)?;
        tracing::debug!(iface = %self.iface, "port counter detached");
        Ok(())
    }

    fn ports_map(&mut self) -> Result<HashMap<&mut MapData, u16, u8>, DataplaneError> {
        let map = self.ebpf.map_mut(MYSQL_PORTS_MAP).ok_or(DataplaneError::MapMissing { name: MYSQL_PORTS_MAP })?;
        HashMap::try_from(map).map_err(|e| map_error(MYSQL_PORTS_MAP, e))
    }
}

impl Drop for PortCounter {
    fn drop(&mut self) {
        if let Err(e) = self.detach_link() {
            tracing::warn!(iface = %self.iface, error = %e, "detaching the port counter failed");
        }
    }
}

impl std::fmt::Debug for PortCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PortCounter").field("iface", &self.iface).field("attached", &self.link.is_some()).finish()
    }
}

fn program_mut(ebpf: &mut Ebpf) -> Result<&mut SchedClassifier, DataplaneError> {
    ebpf.program_mut(PORT_COUNTER_PROGRAM)
        .and_then(|p| <&mut SchedClassifier>::try_from(p).ok())
        .ok_or(DataplaneError::ProgramMissing { name: PORT_COUNTER_PROGRAM })
}

fn collect_keys(map: &HashMap<&mut MapData, u16, u8>) -> Result<BTreeSet<u16>, DataplaneError> {
    map.keys().collect::<Result<BTreeSet<u16>, _>>().map_err(|e| map_error(MYSQL_PORTS_MAP, e))
}

/// Adds the clsact qdisc; one that already exists (EEXIST) is fine.
pub(crate) fn add_clsact(iface: &str) -> Result<(), DataplaneError> {
    match tc::qdisc_add_clsact(iface) {
        Ok(()) | Err(TcError::AlreadyAttached) => Ok(()),
        Err(TcError::NetlinkError(e)) if e.raw_os_error() == Some(libc::EEXIST) => Ok(()),
        Err(e) => Err(DataplaneError::Tc { iface: iface.to_owned(), source: Box::new(e) }.classify()),
    }
}

fn program_error(source: aya::programs::ProgramError) -> DataplaneError {
    DataplaneError::Program { name: PORT_COUNTER_PROGRAM, source: Box::new(source) }
}

fn map_error(name: &'static str, source: aya::maps::MapError) -> DataplaneError {
    DataplaneError::Map { name, source: Box::new(source) }
}
