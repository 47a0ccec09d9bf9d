//! Where cgroup v2 and bpffs are mounted, which cgroup this process is in, and cgroup ids.
//!
//! Never hard-code `/sys/fs/cgroup`: on the dev VMs cgroup2 is `/sys/fs/cgroup/unified`
//! (docs/dataplane.md §2). Mount points come from `/proc/self/mountinfo`.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use super::SteerError;

/// Mount point of the first mount of `fstype` in a mountinfo text.
///
/// Each line is `id parent major:minor root mountpoint options [optional…] - fstype source …`;
/// the number of optional fields varies, so the fs type is read after the `" - "` separator and
/// the mount point as the fifth field before it.
pub fn mount_point(mountinfo: &str, fstype: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        if after.split_whitespace().next()? != fstype {
            return None;
        }
        before.split_whitespace().nth(4).map(|p| PathBuf::from(unescape(p)))
    })
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo` octal.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 4 <= bytes.len() {
            let oct = bytes.get(i + 1..i + 4).and_then(|o| std::str::from_utf8(o).ok());
            if let Some(v) = oct.and_then(|o| u8::from_str_radix(o, 8).ok()) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The cgroup v2 mount point of this system.
pub fn cgroup2_mount() -> Result<PathBuf, SteerError> {
    let info = read("/proc/self/mountinfo")?;
    mount_point(&info, "cgroup2").ok_or(SteerError::NoCgroup2)
}

/// A bpffs mount point, preferring `/sys/fs/bpf`; `None` when no bpffs is mounted.
pub fn bpffs_mount() -> Result<Option<PathBuf>, SteerError> {
    let info = read("/proc/self/mountinfo")?;
    let preferred = Path::new("/sys/fs/bpf");
    let all: Vec<PathBuf> = info.lines().filter_map(|l| mount_point(l, "bpf")).collect();
    Ok(all.iter().find(|p| p.as_path() == preferred).or_else(|| all.first()).cloned())
}

/// This process's cgroup v2 path (the `0::<path>` line of `/proc/self/cgroup`), e.g. `/` or
/// `/gateway`.
pub fn own_cgroup() -> Result<String, SteerError> {
    let text = read("/proc/self/cgroup")?;
    parse_own_cgroup(&text).ok_or(SteerError::NoOwnCgroup)
}

/// The path of the `0::` (unified hierarchy) line of a `/proc/<pid>/cgroup` text.
pub fn parse_own_cgroup(text: &str) -> Option<String> {
    text.lines().find_map(|l| l.strip_prefix("0::")).map(|p| p.trim().to_owned())
}

/// Resolves a configured cgroup (absolute under the mount, or relative to it) to a directory.
/// A path that already starts with the mount point is taken as is.
pub fn resolve(mount: &Path, configured: &str) -> PathBuf {
    let p = Path::new(configured);
    if p.starts_with(mount) {
        return p.to_path_buf();
    }
    let rel = configured.trim_start_matches('/');
    if rel.is_empty() {
        mount.to_path_buf()
    } else {
        mount.join(rel)
    }
}

/// The cgroup v2 id of a cgroup directory (its kernfs inode number, as returned by
/// `bpf_get_current_cgroup_id`).
pub fn cgroup_id(dir: &Path) -> Result<u64, SteerError> {
    std::fs::metadata(dir).map(|m| m.ino()).map_err(|source| SteerError::Cgroup { path: dir.to_path_buf(), source })
}

fn read(path: &str) -> Result<String, SteerError> {
    std::fs::read_to_string(path).map_err(|source| SteerError::Cgroup { path: PathBuf::from(path), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
25 22 0:22 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs ro,mode=755
31 25 0:27 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:9 master:3 - cgroup2 cgroup2 rw
40 22 0:35 / /run/my\\040bpf rw,relatime - bpf bpf rw
";

    #[test]
    fn finds_the_cgroup2_mount_whatever_the_optional_fields() {
        assert_eq!(mount_point(MOUNTINFO, "cgroup2"), Some(PathBuf::from("/sys/fs/cgroup/unified")));
        assert_eq!(mount_point(MOUNTINFO, "bpf"), Some(PathBuf::from("/run/my bpf")));
        assert_eq!(mount_point(MOUNTINFO, "xfs"), None);
    }

    #[test]
    fn reads_the_unified_line_of_proc_cgroup() {
        let text = "9:name=systemd:/\n8:pids:/\n0::/apps/web\n";
        assert_eq!(parse_own_cgroup(text).as_deref(), Some("/apps/web"));
        assert_eq!(parse_own_cgroup("8:pids:/\n"), None);
    }

    #[test]
    fn resolves_configured_paths() {
        let m = Path::new("/sys/fs/cgroup/unified");
        assert_eq!(resolve(m, "/"), m.to_path_buf());
        assert_eq!(resolve(m, "apps"), m.join("apps"));
        assert_eq!(resolve(m, "/apps/web"), m.join("apps/web"));
        assert_eq!(resolve(m, "/sys/fs/cgroup/unified/apps"), m.join("apps"));
    }
}
