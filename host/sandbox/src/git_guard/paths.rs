//! Paths compared as written: the roots, and where git's files point.

use std::path::{Component, Path, PathBuf};

/// `path` without `.` and `..` components (lexically).
pub(super) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
