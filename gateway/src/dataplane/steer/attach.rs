//! Loading and attaching the steering programs, pinning the fail-closed connect links, and the
//! config / liveness maps.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use aya::maps::{Array, MapData, SockMap};
use aya::programs::links::{FdLink, PinnedLink};
use aya::programs::{CgroupAttachMode, CgroupSockAddr, CgroupSockopt, SockOps};
use aya::Ebpf;
use gateway_common::steer::{
    SteerConfig, STEER_CONFIG_MAP, STEER_CONNECT4_PROGRAM, STEER_CONNECT6_PROGRAM, STEER_GETSOCKOPT_PROGRAM,
    STEER_LIVENESS_MAP, STEER_SOCK_OPS_PROGRAM,
};

use super::cgroup::{self, cgroup_id};
use super::{SteerError, PIN_DIR};
use crate::dataplane::DataplaneError;

/// Removes the connect4 / connect6 pins an earlier run left for these application cgroups
/// (unlinking a pin releases that link, which detaches it); returns the pin directory when
/// `fail_closed` needs one. Pins of other cgroups (another gateway on this host) are left alone.
pub(super) fn prepare_pins(fail_closed: bool, app_cgroups: &[PathBuf]) -> Result<Option<PathBuf>, SteerError> {
    let Some(bpffs) = cgroup::bpffs_mount()? else {
        return if fail_closed { Err(SteerError::NoBpffs) } else { Ok(None) };
    };
    let dir = bpffs.join(PIN_DIR);
    for (app, program) in app_cgroups.iter().flat_map(|a| [(a, STEER_CONNECT4_PROGRAM), (a, STEER_CONNECT6_PROGRAM)]) {
        let pin = pin_path(&dir, app, program)?;
        if pin.exists() {
            std::fs::remove_file(&pin).map_err(|e| SteerError::Pin { path: pin.clone(), message: e.to_string() })?;
            tracing::info!(pin = %pin.display(), "removed the pinned steering link of an earlier run");
        }
    }
    if !fail_closed {
        return Ok(None);
    }
    std::fs::create_dir_all(&dir).map_err(|e| SteerError::Pin { path: dir.clone(), message: e.to_string() })?;
    Ok(Some(dir))
}

/// `<bpffs>/gateway-steer/connect4-<cgroup id>` (and `connect6-…`).
pub(super) fn pin_path(dir: &Path, app: &Path, program: &str) -> Result<PathBuf, SteerError> {
    let kind = if program == STEER_CONNECT6_PROGRAM { "connect6" } else { "connect4" };
    Ok(dir.join(format!("{kind}-{}", cgroup_id(app)?)))
}

pub(super) fn pin(link: FdLink, path: &Path) -> Result<PinnedLink, SteerError> {
    link.pin(path).map_err(|e| {
        let cause = std::error::Error::source(&e).map(|c| format!(": {c}")).unwrap_or_default();
        SteerError::Pin { path: path.to_path_buf(), message: format!("{e}{cause}") }
    })
}

pub(super) fn open_cgroup(dir: &Path) -> Result<File, SteerError> {
    File::open(dir).map_err(|source| SteerError::Cgroup { path: dir.to_path_buf(), source })
}

pub(super) fn write_config(ebpf: &mut Ebpf, config: SteerConfig) -> Result<(), SteerError> {
    let mut map: Array<&mut MapData, SteerConfig> =
        Array::try_from(ebpf.map_mut(STEER_CONFIG_MAP).ok_or(missing(STEER_CONFIG_MAP))?)
            .map_err(|e| map_error(STEER_CONFIG_MAP, e))?;
    map.set(0, config, 0).map_err(|e| map_error(STEER_CONFIG_MAP, e))?;
    Ok(())
}

pub(super) fn register_listener(ebpf: &mut Ebpf, listener: &impl AsRawFd) -> Result<(), SteerError> {
    let mut map: SockMap<&mut MapData> =
        SockMap::try_from(ebpf.map_mut(STEER_LIVENESS_MAP).ok_or(missing(STEER_LIVENESS_MAP))?)
            .map_err(|e| map_error(STEER_LIVENESS_MAP, e))?;
    map.set(0, listener, 0).map_err(|e| map_error(STEER_LIVENESS_MAP, e))?;
    Ok(())
}

pub(super) fn attach_getsockopt(ebpf: &mut Ebpf, cgroup: &Path) -> Result<(), SteerError> {
    let name = STEER_GETSOCKOPT_PROGRAM;
    let dir = open_cgroup(cgroup)?;
    let prog: &mut CgroupSockopt =
        ebpf.program_mut(name).and_then(|p| p.try_into().ok()).ok_or(DataplaneError::ProgramMissing { name })?;
    prog.load().map_err(|e| program_error(name, e))?;
    prog.attach(&dir, CgroupAttachMode::Single).map_err(|e| program_error(name, e))?;
    Ok(())
}

pub(super) fn attach_sock_ops(ebpf: &mut Ebpf, dir: &File) -> Result<(), SteerError> {
    let name = STEER_SOCK_OPS_PROGRAM;
    let prog: &mut SockOps =
        ebpf.program_mut(name).and_then(|p| p.try_into().ok()).ok_or(DataplaneError::ProgramMissing { name })?;
    if prog.fd().is_err() {
        prog.load().map_err(|e| program_error(name, e))?;
    }
    prog.attach(dir, CgroupAttachMode::Single).map_err(|e| program_error(name, e))?;
    Ok(())
}

/// Attaches a `cgroup_sock_addr` program; returns the link as an owned [`FdLink`] for connect4
/// and connect6 (so it can be pinned), `None` for the others (kept by the program).
pub(super) fn attach_sock_addr(ebpf: &mut Ebpf, name: &'static str, dir: &File) -> Result<Option<FdLink>, SteerError> {
    let prog: &mut CgroupSockAddr =
        ebpf.program_mut(name).and_then(|p| p.try_into().ok()).ok_or(DataplaneError::ProgramMissing { name })?;
    if prog.fd().is_err() {
        prog.load().map_err(|e| program_error(name, e))?;
    }
    let id = prog.attach(dir, CgroupAttachMode::Single).map_err(|e| program_error(name, e))?;
    if name != STEER_CONNECT4_PROGRAM && name != STEER_CONNECT6_PROGRAM {
        return Ok(None);
    }
    let link = prog.take_link(id).map_err(|e| program_error(name, e))?;
    // Owned links detach when dropped; the caller pins it or keeps it alive.
    FdLink::try_from(link).map(Some).map_err(|e| SteerError::Pin { path: PathBuf::from(name), message: e.to_string() })
}

pub(super) fn missing(name: &'static str) -> DataplaneError {
    DataplaneError::MapMissing { name }
}

pub(super) fn map_error(name: &'static str, source: aya::maps::MapError) -> SteerError {
    DataplaneError::Map { name, source: Box::new(source) }.classify().into()
}

pub(super) fn program_error(name: &'static str, source: aya::programs::ProgramError) -> SteerError {
    DataplaneError::Program { name, source: Box::new(source) }.classify().into()
}
