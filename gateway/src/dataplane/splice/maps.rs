//! Typed access to the splice maps (names and layouts in `gateway_common::splice`).

use std::os::fd::AsRawFd;

use aya::{
    maps::{sock::SockMapFd, HashMap, MapData, MapError, PerCpuArray, SockHash},
    Ebpf,
};
use gateway_common::splice::{
    SpliceFlow, SplicePeer, SpliceTotals, SPLICE_DIR_TO_BACKEND, SPLICE_DIR_TO_CLIENT, SPLICE_FLOW_MAP,
    SPLICE_PEER_MAP, SPLICE_SLOT_WAKEUPS, SPLICE_SOCKS_MAP, SPLICE_TOTALS_MAP,
};

use crate::dataplane::DataplaneError;

/// Per-direction totals and the wake-up counts, summed over CPUs.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Totals {
    pub to_backend: SpliceTotals,
    pub to_client: SpliceTotals,
    /// `wakeups` and `wakeups_lost` only.
    pub wakes: SpliceTotals,
}

/// The four maps, taken out of the object (the object itself stays alive in the `Splicer`).
pub(super) struct SpliceMaps {
    socks: SockHash<MapData, u64>,
    peer: HashMap<MapData, u64, SplicePeer>,
    flow: HashMap<MapData, u64, SpliceFlow>,
    totals: PerCpuArray<MapData, SpliceTotals>,
}

impl SpliceMaps {
    pub fn take(ebpf: &mut Ebpf) -> Result<Self, DataplaneError> {
        let mut take = |name: &'static str| ebpf.take_map(name).ok_or(DataplaneError::MapMissing { name });
        let socks = take(SPLICE_SOCKS_MAP)?;
        let peer = take(SPLICE_PEER_MAP)?;
        let flow = take(SPLICE_FLOW_MAP)?;
        let totals = take(SPLICE_TOTALS_MAP)?;
        Ok(SpliceMaps {
            socks: SockHash::try_from(socks).map_err(err(SPLICE_SOCKS_MAP))?,
            peer: HashMap::try_from(peer).map_err(err(SPLICE_PEER_MAP))?,
            flow: HashMap::try_from(flow).map_err(err(SPLICE_FLOW_MAP))?,
            totals: PerCpuArray::try_from(totals).map_err(err(SPLICE_TOTALS_MAP))?,
        })
    }

    /// The sockhash, to attach the verdict to.
    pub fn socks_fd(&self) -> &SockMapFd {
        self.socks.fd()
    }

    /// Creates the socket's zeroed flow entry, then inserts the socket, so that the verdict
    /// counts every byte it sees from the first one on.
    pub fn insert_socket(&mut self, cookie: u64, socket: &impl AsRawFd) -> Result<(), DataplaneError> {
        self.flow.insert(cookie, SpliceFlow::default(), 0).map_err(err(SPLICE_FLOW_MAP))?;
        if let Err(e) = self.socks.insert(cookie, socket.as_raw_fd(), 0) {
            let _ = self.flow.remove(&cookie);
            return Err(err(SPLICE_SOCKS_MAP)(e));
        }
        Ok(())
    }

    /// Sets (or replaces) the terms of the flow whose source is `src`.
    pub fn set_terms(&mut self, src: u64, terms: SplicePeer) -> Result<(), DataplaneError> {
        self.peer.insert(src, terms, 0).map_err(err(SPLICE_PEER_MAP))
    }

    /// The verdict's counters of the flow whose source is `src`.
    pub fn flow(&self, src: u64) -> Result<SpliceFlow, DataplaneError> {
        self.flow.get(&src, 0).map_err(err(SPLICE_FLOW_MAP))
    }

    /// Unsplices the flow whose source is `src` (P2) and drops its counters. The socket itself
    /// stays in the sockhash until it is closed (P3).
    pub fn forget(&mut self, src: u64) {
        for result in [self.peer.remove(&src), self.flow.remove(&src)] {
            match result {
                Ok(()) | Err(MapError::KeyNotFound) => {}
                Err(MapError::SyscallError(e)) if e.io_error.raw_os_error() == Some(libc::ENOENT) => {}
                Err(e) => tracing::warn!(cookie = src, error = %e, "removing a splice map entry"),
            }
        }
    }

    /// Per-direction totals summed over CPUs.
    pub fn totals(&self) -> Result<Totals, DataplaneError> {
        let sum = |slot: u32| -> Result<SpliceTotals, DataplaneError> {
            let per_cpu = self.totals.get(&slot, 0).map_err(err(SPLICE_TOTALS_MAP))?;
            let mut total = SpliceTotals::default();
            for c in per_cpu.iter() {
                total.add(c);
            }
            Ok(total)
        };
        Ok(Totals {
            to_backend: sum(SPLICE_DIR_TO_BACKEND)?,
            to_client: sum(SPLICE_DIR_TO_CLIENT)?,
            wakes: sum(SPLICE_SLOT_WAKEUPS)?,
        })
    }
}

fn err(name: &'static str) -> impl Fn(MapError) -> DataplaneError {
    move |source| DataplaneError::Map { name, source: Box::new(source) }
}
