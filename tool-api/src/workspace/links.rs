//! Hard links: a file with several names is blocked when one of its names is ignored.
//!
//! A path check cannot see that `notes.txt` and `.env` are the same file. When a file with more
//! than one link is reached inside a root that has `.clineignore` rules, the root is walked once
//! (through handles, never following a symbolic link) to find the files with several links
//! among the ignored ones, and the file is compared with them by device and inode. A walk that
//! does not finish within its budget counts as finding the file: the check fails closed.

use std::collections::HashSet;
use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rustix::fs::{FileType, OFlags, Stat};

use super::{sys, Workspace};

/// Most entries one walk looks at.
const MAX_ENTRIES: usize = 200_000;
/// Longest one walk may take.
const MAX_TIME: Duration = Duration::from_secs(3);

/// Whether the file `stat` describes is also one of the ignored files of `root`.
pub(super) fn is_ignored_inode(workspace: &Workspace, root: usize, stat: &Stat) -> bool {
    let found = workspace
        .root(root)
        .ignored_inodes
        .get_or_init(|| ignored_linked_files(workspace, root));
    #[allow(clippy::unnecessary_cast)]
    let key = (stat.st_dev as u64, stat.st_ino as u64);
    found.as_ref().is_none_or(|set| set.contains(&key))
}

/// The (device, inode) of every ignored file of `root` with more than one link; `None` when the
/// walk ran out of budget.
fn ignored_linked_files(workspace: &Workspace, root: usize) -> Option<HashSet<(u64, u64)>> {
    let root_entry = workspace.root(root);
    let handle = root_entry.handle().ok()?;
    let start = sys::open_path(
        Some(handle.fd.as_fd()),
        std::path::Path::new(""),
        OFlags::DIRECTORY,
        sys::Resolve::BeneathNoLinks,
    )
    .ok()?;
    let deadline = Instant::now() + MAX_TIME;
    let mut seen = 0usize;
    let mut found = HashSet::new();
    let mut stack: Vec<(OwnedFd, PathBuf, bool)> = vec![(start, PathBuf::new(), false)];
    while let Some((dir, relative, dir_ignored)) = stack.pop() {
        let Ok(entries) = sys::read_entries(dir.as_fd()) else {
            continue;
        };
        for (name, kind) in entries {
            seen += 1;
            if seen > MAX_ENTRIES || Instant::now() > deadline {
                return None;
            }
            let path = relative.join(&name);
            let ignored = dir_ignored || root_entry.ignore.blocks(&path, kind.is_dir());
            match kind {
                FileType::Directory => {
                    if let Ok(sub) = sys::open_path(
                        Some(dir.as_fd()),
                        std::path::Path::new(&name),
                        OFlags::DIRECTORY,
                        sys::Resolve::BeneathNoLinks,
                    ) {
                        stack.push((sub, path, ignored));
                    }
                }
                FileType::RegularFile if ignored => {
                    if let Ok(stat) = sys::stat_entry(dir.as_fd(), &OsString::from(&name)) {
                        if stat.st_nlink > 1 {
                            #[allow(clippy::unnecessary_cast)]
                            found.insert((stat.st_dev as u64, stat.st_ino as u64));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    Some(found)
}
