//! Where plugin libraries are looked for.
//!
//! The directories, first rule that applies: every `--plugins DIR` given; else the
//! `TOOLHOST_PLUGIN_PATH` list (`:`-separated); else a `plugins/` directory next to the
//! executable, or one level up (the layout of `target/dist`: `bin/toolhost`, `plugins/`).

use std::path::{Path, PathBuf};

/// The file extension of shared libraries on this platform.
pub const LIBRARY_EXTENSION: &str = std::env::consts::DLL_EXTENSION;

/// The plugin directories to search, in priority order.
pub fn plugin_dirs(explicit: &[PathBuf]) -> Vec<PathBuf> {
    if !explicit.is_empty() {
        return explicit.to_vec();
    }
    if let Some(list) = std::env::var_os("TOOLHOST_PLUGIN_PATH") {
        let dirs: Vec<PathBuf> = std::env::split_paths(&list)
            .filter(|p| !p.as_os_str().is_empty())
            .collect();
        if !dirs.is_empty() {
            return dirs;
        }
    }
    own_dir().into_iter().collect()
}

/// The host's own plugin directory: `plugins/` next to the executable, or one level up.
pub fn own_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let exe_dir = exe.parent()?;
    let beside = exe_dir.join("plugins");
    if beside.is_dir() {
        return Some(beside);
    }
    let above = exe_dir.parent()?.join("plugins");
    above.is_dir().then_some(above)
}

/// The shared libraries directly in `dir`, sorted by file name (the load order).
pub fn library_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_file() && path.extension().is_some_and(|e| e == LIBRARY_EXTENSION))
        .collect();
    files.sort();
    Ok(files)
}
