//! Paths as written: `.` and `..` removed without looking at the disk.

use std::path::{Component, Path, PathBuf};

/// Removes `.` and resolves `..` lexically.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}
