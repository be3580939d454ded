//! A memory cgroup of the command's own, where this user may make one: below the
//! supervisor's own cgroup, in the unified hierarchy (v2) when its memory controller is
//! enabled for children there, else in a v1 memory hierarchy. The limit then holds for the
//! command and everything it starts together, and the kernel counts the processes it killed
//! for it, so the supervisor can say why the command ended. Where none can be made the
//! caller falls back to a limit per process (`RLIMIT_DATA`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A cgroup made for one command.
#[derive(Debug)]
pub struct Cgroup {
    dir: PathBuf,
    unified: bool,
}

impl Cgroup {
    /// Makes a cgroup limited to `bytes` below this process's own, or `None` where this user
    /// may not (no delegated hierarchy with a memory controller).
    pub fn create(bytes: u64) -> Option<Self> {
        if crate::support::is_simulated_missing(crate::support::Feature::MemoryCgroup) {
            return None;
        }
        let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        let name = format!("toolhost-sandbox-{}", std::process::id());
        if let Some(parent) = unified_dir(&own, &mounts) {
            let controls = std::fs::read_to_string(parent.join("cgroup.subtree_control"));
            if controls.is_ok_and(|c| c.split_whitespace().any(|c| c == "memory")) {
                let cgroup = Self {
                    dir: parent.join(&name),
                    unified: true,
                };
                if cgroup.make(&[("memory.max", bytes), ("memory.swap.max", 0)]) {
                    return Some(cgroup);
                }
            }
        }
        let parent = v1_memory_dir(&own, &mounts)?;
        let cgroup = Self {
            dir: parent.join(&name),
            unified: false,
        };
        // Without swap accounting (`memsw`) the limit holds for memory alone.
        let limits: &[(&str, u64)] = if parent.join("memory.memsw.limit_in_bytes").exists() {
            &[
                ("memory.limit_in_bytes", bytes),
                ("memory.memsw.limit_in_bytes", bytes),
            ]
        } else {
            &[("memory.limit_in_bytes", bytes)]
        };
        cgroup.make(limits).then_some(cgroup)
    }

    /// Whether one could be made: a hierarchy with a memory controller for children, whose
    /// directory this user may write.
    pub fn available() -> bool {
        let (Ok(own), Ok(mounts)) = (
            std::fs::read_to_string("/proc/self/cgroup"),
            std::fs::read_to_string("/proc/self/mountinfo"),
        ) else {
            return false;
        };
        let writable = |dir: &Path| rustix::fs::access(dir, rustix::fs::Access::WRITE_OK).is_ok();
        let unified = unified_dir(&own, &mounts).is_some_and(|dir| {
            std::fs::read_to_string(dir.join("cgroup.subtree_control"))
                .is_ok_and(|c| c.split_whitespace().any(|c| c == "memory"))
                && writable(&dir)
        });
        unified || v1_memory_dir(&own, &mounts).is_some_and(|dir| writable(&dir))
    }

    /// Moves the calling process (and so everything it starts later) into the cgroup. (`0`
    /// is the writer itself: a process id would be read in the writer's PID namespace.)
    pub fn enter(&self) -> std::io::Result<()> {
        std::fs::write(self.dir.join("cgroup.procs"), "0")
    }

    /// Whether the kernel killed a process of the cgroup for its limit.
    pub fn oom_killed(&self) -> bool {
        let (file, key) = if self.unified {
            ("memory.events", "oom_kill")
        } else {
            ("memory.oom_control", "oom_kill")
        };
        std::fs::read_to_string(self.dir.join(file)).is_ok_and(|text| {
            text.lines().any(|line| {
                let mut words = line.split_whitespace();
                words.next() == Some(key)
                    && words.next().and_then(|n| n.parse::<u64>().ok()) > Some(0)
            })
        })
    }

    /// Removes the cgroup once its processes are gone (they are being reaped: a few tries).
    pub fn remove(self) {
        let deadline = Instant::now() + Duration::from_millis(500);
        while std::fs::remove_dir(&self.dir).is_err() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Makes the directory and writes the limits; removes it again when a write fails.
    fn make(&self, limits: &[(&str, u64)]) -> bool {
        if std::fs::create_dir(&self.dir).is_err() {
            return false;
        }
        for (file, value) in limits {
            if std::fs::write(self.dir.join(file), value.to_string()).is_err() {
                let _ = std::fs::remove_dir(&self.dir);
                return false;
            }
        }
        true
    }
}

/// This process's cgroup directory in the unified hierarchy (`0::/path` in
/// `/proc/self/cgroup`, under the `cgroup2` mount).
fn unified_dir(own: &str, mounts: &str) -> Option<PathBuf> {
    let path = own.lines().find_map(|line| line.strip_prefix("0::"))?;
    let mount = mount_point(mounts, |fs_type, _| fs_type == "cgroup2")?;
    Some(join(&mount, path))
}

/// This process's directory in a v1 memory hierarchy.
fn v1_memory_dir(own: &str, mounts: &str) -> Option<PathBuf> {
    let path = own.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers
            .split(',')
            .any(|c| c == "memory")
            .then_some(path)
    })?;
    let mount = mount_point(mounts, |fs_type, options| {
        fs_type == "cgroup" && options.split(',').any(|o| o == "memory")
    })?;
    Some(join(&mount, path))
}

/// The mount point of the first mount in `/proc/self/mountinfo` whose file system type and
/// super options `wanted` accepts.
fn mount_point(mountinfo: &str, wanted: impl Fn(&str, &str) -> bool) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (mine, theirs) = line.split_once(" - ")?;
        let point = mine.split_whitespace().nth(4)?;
        let mut theirs = theirs.split_whitespace();
        let fs_type = theirs.next()?;
        let options = theirs.nth(1).unwrap_or_default();
        wanted(fs_type, options).then(|| PathBuf::from(point))
    })
}

fn join(mount: &Path, path: &str) -> PathBuf {
    mount.join(path.trim_start_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTS: &str = "\
25 1 0:22 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
30 25 0:26 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
33 25 0:29 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn hierarchies_are_found_from_proc() {
        let own = "4:memory:/jobs/abc\n1:cpu:/\n0::/user.slice/u.service\n";
        assert_eq!(
            unified_dir(own, MOUNTS),
            Some(PathBuf::from("/sys/fs/cgroup/unified/user.slice/u.service"))
        );
        assert_eq!(
            v1_memory_dir(own, MOUNTS),
            Some(PathBuf::from("/sys/fs/cgroup/memory/jobs/abc"))
        );
        assert_eq!(v1_memory_dir("0::/\n", MOUNTS), None);
        assert_eq!(
            unified_dir(own, "25 1 0:22 / /x rw - tmpfs tmpfs rw\n"),
            None
        );
    }
}
