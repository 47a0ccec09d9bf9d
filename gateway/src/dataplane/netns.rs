//! Network namespaces: moving the calling thread into one (for attaching inside it).

use std::{fs::File, io, os::fd::AsRawFd, path::Path};

use super::DataplaneError;

/// Moves the **calling thread** into the network namespace at `path` (e.g. `/run/netns/<name>`
/// or `/proc/<pid>/ns/net`). Other threads keep theirs; threads spawned afterwards by this one
/// inherit it. Sockets, interface names and netlink requests of this thread then resolve in
/// that namespace, so [`super::PortCounter::attach`] called here attaches to its interfaces.
pub fn enter_thread(path: &Path) -> Result<(), DataplaneError> {
    let err = |source: io::Error| DataplaneError::Netns { path: path.display().to_string(), source };
    let file = File::open(path).map_err(err)?;
    // SAFETY: `file` is an open descriptor that lives across the call; setns only reads it and
    // changes this thread's network namespace.
    let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
    if rc != 0 {
        return Err(err(io::Error::last_os_error()).classify());
    }
    Ok(())
}
