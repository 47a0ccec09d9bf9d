//! Collects the self-check of cgroup steering (`dataplane::steer_status`): what the file system
//! and the kernel say about each configured cgroup, not what the daemon believes it attached.
//!
//! Programs are checked with `BPF_PROG_QUERY` and `BPF_F_QUERY_EFFECTIVE` on the cgroup: a
//! program counts as attached only when the kernel reports its id among the programs that run
//! for that cgroup (attached there or inherited from an ancestor).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use crate::dataplane::steer_status::CgroupCheck;

/// `CGROUP2_SUPER_MAGIC` (linux/magic.h).
const CGROUP2_SUPER_MAGIC: i64 = 0x6367_7270;
/// `BPF_PROG_QUERY` command of bpf(2).
const BPF_PROG_QUERY: libc::c_long = 16;
/// `BPF_F_QUERY_EFFECTIVE`.
const BPF_F_QUERY_EFFECTIVE: u32 = 1;
/// Walk bounds: directories visited and processes looked at per configured cgroup.
const MAX_DIRS: usize = 4096;
const MAX_PROCS: usize = 65_536;

/// `enum bpf_attach_type` values of the steering programs.
pub mod attach_type {
    /// `BPF_CGROUP_SOCK_OPS`.
    pub const SOCK_OPS: u32 = 3;
    /// `BPF_CGROUP_INET4_CONNECT`.
    pub const CONNECT4: u32 = 10;
    /// `BPF_CGROUP_INET6_CONNECT`.
    pub const CONNECT6: u32 = 11;
    /// `BPF_CGROUP_INET4_GETPEERNAME`.
    pub const GETPEERNAME4: u32 = 29;
    /// `BPF_CGROUP_INET6_GETPEERNAME`.
    pub const GETPEERNAME6: u32 = 30;
}

/// A loaded steering program: name, attach type, kernel id.
#[derive(Debug, Clone, Copy)]
pub struct Attached {
    /// Program name.
    pub name: &'static str,
    /// `attach_type::*`.
    pub attach_type: u32,
    /// Kernel program id.
    pub id: u32,
}

/// Checks one configured cgroup against the programs that should run there.
pub fn check(dir: &Path, programs: &[Attached]) -> CgroupCheck {
    let mut c = CgroupCheck { path: dir.display().to_string(), ..Default::default() };
    c.exists = dir.is_dir();
    if !c.exists {
        c.programs = programs.iter().map(|p| (p.name.to_owned(), false)).collect();
        return c;
    }
    c.cgroup2 = is_cgroup2(dir);
    let own = own_netns();
    for pid in subtree_pids(dir) {
        c.processes += 1;
        if let (Some(own), Some(theirs)) = (own, netns_of(&pid)) {
            if own != theirs {
                c.other_netns += 1;
            }
        }
    }
    let file = File::open(dir).ok();
    c.programs = programs
        .iter()
        .map(|p| {
            let on =
                file.as_ref().and_then(|f| effective(f, p.attach_type).ok()).is_some_and(|ids| ids.contains(&p.id));
            (p.name.to_owned(), on)
        })
        .collect();
    c
}

/// Whether `dir` is on a cgroup v2 file system.
pub fn is_cgroup2(dir: &Path) -> bool {
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: statfs is plain old data; all-zero is a valid value.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is a NUL-terminated string and `st` a valid out-buffer, both outliving the call.
    let rc = unsafe { libc::statfs(path.as_ptr(), &mut st) };
    rc == 0 && st.f_type as i64 == CGROUP2_SUPER_MAGIC
}

/// Pids listed in `cgroup.procs` of `dir` and its descendants (bounded walk).
fn subtree_pids(dir: &Path) -> Vec<String> {
    let (mut pids, mut stack, mut dirs) = (Vec::new(), vec![dir.to_path_buf()], 0usize);
    while let Some(d) = stack.pop() {
        dirs += 1;
        if dirs > MAX_DIRS || pids.len() >= MAX_PROCS {
            break;
        }
        if let Ok(text) = std::fs::read_to_string(d.join("cgroup.procs")) {
            pids.extend(text.split_whitespace().take(MAX_PROCS).map(str::to_owned));
        }
        if let Ok(entries) = std::fs::read_dir(&d) {
            stack.extend(entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()));
        }
    }
    pids.truncate(MAX_PROCS);
    pids
}

fn own_netns() -> Option<u64> {
    std::fs::metadata("/proc/self/ns/net").ok().map(|m| m.ino())
}

fn netns_of(pid: &str) -> Option<u64> {
    std::fs::metadata(PathBuf::from("/proc").join(pid).join("ns/net")).ok().map(|m| m.ino())
}

/// `union bpf_attr` as used by `BPF_PROG_QUERY` (the `query` member, 64 bytes on current
/// kernels; older kernels accept the longer struct as long as the tail is zero).
#[repr(C)]
#[derive(Default)]
struct QueryAttr {
    target_fd: u32,
    attach_type: u32,
    query_flags: u32,
    attach_flags: u32,
    prog_ids: u64,
    prog_cnt: u32,
    _pad: u32,
    prog_attach_flags: u64,
    link_ids: u64,
    link_attach_flags: u64,
    revision: u64,
}

/// Ids of the programs the kernel runs for `cgroup` at `attach_type` (effective set).
pub fn effective(cgroup: &File, attach_type: u32) -> io::Result<Vec<u32>> {
    let mut ids = [0u32; 64];
    let mut attr = QueryAttr {
        target_fd: cgroup.as_raw_fd() as u32,
        attach_type,
        query_flags: BPF_F_QUERY_EFFECTIVE,
        prog_ids: ids.as_mut_ptr() as u64,
        prog_cnt: ids.len() as u32,
        ..Default::default()
    };
    // SAFETY: `attr` is a valid, zero-tailed bpf_attr of the size passed; the kernel writes at
    // most `prog_cnt` ids into `ids`, which outlives the call, and updates `prog_cnt`.
    let rc = unsafe {
        libc::syscall(libc::SYS_bpf, BPF_PROG_QUERY, std::ptr::addr_of_mut!(attr), std::mem::size_of::<QueryAttr>())
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let n = (attr.prog_cnt as usize).min(ids.len());
    Ok(ids[..n].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_cgroup_is_reported_as_such() {
        let p = [Attached { name: "steer_connect4", attach_type: attach_type::CONNECT4, id: 1 }];
        let c = check(Path::new("/nonexistent/cgroup/dir"), &p);
        assert!(!c.exists && !c.cgroup2);
        assert_eq!(c.programs, vec![("steer_connect4".to_owned(), false)]);
    }

    #[test]
    fn a_plain_directory_is_not_cgroup2() {
        assert!(!is_cgroup2(Path::new("/tmp")));
    }

    #[test]
    fn the_bpf_attr_layout_matches_the_kernel() {
        assert_eq!(std::mem::size_of::<QueryAttr>(), 64);
        assert_eq!(std::mem::offset_of!(QueryAttr, prog_ids), 16);
        assert_eq!(std::mem::offset_of!(QueryAttr, prog_cnt), 24);
    }
}
