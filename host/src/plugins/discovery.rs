//! Where plugin libraries are looked for.
//!
//! The directories, first rule that applies: every `--plugins DIR` given; else the
//! `TOOLHOST_PLUGIN_PATH` list (`:`-separated); else the host's own directory: `plugins/` next
//! to the executable, or one level up (the layout of `target/dist`: `bin/toolhost`,
//! `plugins/`), or `lib/toolhost/plugins/` one level up (the layout `cargo xtask install`
//! makes: `PREFIX/bin/toolhost`, `PREFIX/lib/toolhost/plugins/`).

use std::path::{Path, PathBuf};

/// The file extension of shared libraries on this platform.
pub const LIBRARY_EXTENSION: &str = std::env::consts::DLL_EXTENSION;

/// The plugin directories to search, in priority order.
pub fn plugin_dirs(explicit: &[PathBuf]) -> Vec<PathBuf> {
    if !explicit.is_empty() {
        return explicit.to_vec();
    }
    if let Some(dirs) = env_dirs() {
        return dirs;
    }
    own_dir().into_iter().collect()
}

/// The directories of `TOOLHOST_PLUGIN_PATH`, when it names any.
fn env_dirs() -> Option<Vec<PathBuf>> {
    let list = std::env::var_os("TOOLHOST_PLUGIN_PATH")?;
    let dirs: Vec<PathBuf> = std::env::split_paths(&list)
        .filter(|p| !p.as_os_str().is_empty())
        .collect();
    (!dirs.is_empty()).then_some(dirs)
}

/// The host's own plugin directory: the first of [`own_candidates`] that is a directory.
pub fn own_dir() -> Option<PathBuf> {
    own_candidates().into_iter().find(|dir| dir.is_dir())
}

/// Where the host's own plugin directory may be, in order: `plugins/` next to the
/// executable, `../plugins`, `../lib/toolhost/plugins`.
pub fn own_candidates() -> Vec<PathBuf> {
    let Some(exe_dir) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
    else {
        return Vec::new();
    };
    let mut candidates = vec![exe_dir.join("plugins")];
    if let Some(prefix) = exe_dir.parent() {
        candidates.push(prefix.join("plugins"));
        candidates.push(prefix.join("lib").join("toolhost").join("plugins"));
    }
    candidates
}

/// Where plugins were looked for under the rules of [`plugin_dirs`], for a message that says
/// nothing was found there.
pub fn searched(explicit: &[PathBuf]) -> String {
    let list = |dirs: &[PathBuf]| {
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !explicit.is_empty() {
        return format!("in {} (--plugins)", list(explicit));
    }
    if let Some(dirs) = env_dirs() {
        return format!("in {} (TOOLHOST_PLUGIN_PATH)", list(&dirs));
    }
    match own_dir() {
        Some(dir) => format!("in {} (the host's own plugin directory)", dir.display()),
        None => format!(
            "in {} (the host's own plugin directory, relative to the executable; none exists), \
             and neither --plugins nor TOOLHOST_PLUGIN_PATH was given",
            list(&own_candidates())
        ),
    }
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
