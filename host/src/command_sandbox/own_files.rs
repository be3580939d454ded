//! toolhost's own files, hidden from every command (masked, as `.clineignore`d files are): the
//! configuration directory (settings, trusted hooks, the tokens kept there), the settings file
//! and trust file in use wherever they are, the files a frontend read a secret from (an MCP
//! token file), and this process's private directory. A command must not read a secret of the
//! host that runs it, nor change what decides its next run.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::settings::Settings;

static SECRET_FILES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Hides `path` from every command this process runs from now on (a file a secret was read
/// from).
pub fn hide_from_commands(path: PathBuf) {
    let mut files = SECRET_FILES.lock().unwrap_or_else(PoisonError::into_inner);
    if !files.contains(&path) {
        files.push(path);
    }
}

/// The files and directories to mask for a command of a host with `settings` and the
/// process's `private_dir`; only those that exist.
pub fn own_files(settings: &Settings, private_dir: Option<&Path>) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = Vec::new();
    paths.extend(crate::settings::config_dir());
    paths.extend(settings.source.clone());
    paths.extend(crate::settings::trust_file(&settings.hooks));
    paths.extend(
        SECRET_FILES
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned(),
    );
    paths.extend(private_dir.map(Path::to_path_buf));
    paths.retain(|p| p.is_absolute() && p.exists());
    paths.sort();
    paths.dedup();
    paths
}
