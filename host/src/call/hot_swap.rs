//! Hot swap: a new build of a plugin library loaded beside the running one, new calls sent to
//! it, calls in flight left to finish on the old generation.

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError};

use super::host::Host;
use crate::plugins::loader::LoadError;

/// Why a new build was not loaded; the running version keeps serving.
#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    /// The new build does not load.
    #[error("{}: {error}; the running version stays", file.display())]
    Unloadable {
        /// The library file.
        file: PathBuf,
        /// Why it does not load.
        error: LoadError,
    },
    /// The new build is older than the running one, and downgrades are not allowed.
    #[error("{}: plugin '{plugin}' {version} is older than the running {running}; it was not loaded (allow downgrades to load it)", file.display())]
    Downgrade {
        /// The library file.
        file: PathBuf,
        /// The plugin's name.
        plugin: String,
        /// The new build's version.
        version: String,
        /// The running version.
        running: String,
    },
}

impl Host {
    /// Loads a new build of the library `file` beside the running one and switches new calls
    /// to it; calls in flight finish on the old generation, which is shut down after them. A
    /// build that fails to load, or an older version without `allow_downgrade`, leaves the
    /// running version in place. Returns what was loaded.
    pub fn reload_library(
        &self,
        file: &Path,
        allow_downgrade: bool,
    ) -> Result<String, ReloadError> {
        let info =
            crate::plugins::loader::load_placed(file, &self.placement, true).map_err(|error| {
                ReloadError::Unloadable {
                    file: file.to_path_buf(),
                    error,
                }
            })?;
        let mut slot = self
            .registry
            .current
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(running) = slot.plugin(&info.name) {
            if info.version < running.version && !allow_downgrade {
                return Err(ReloadError::Downgrade {
                    file: file.to_path_buf(),
                    plugin: info.name.clone(),
                    version: info.version.to_string(),
                    running: running.version.to_string(),
                });
            }
        }
        let loaded = format!("{} {}", info.name, info.version);
        let next = slot.with_replaced(file, info);
        for warning in next.warnings() {
            tracing::warn!(target: "toolhost::plugins", "{warning}");
        }
        *slot = Arc::new(next);
        drop(slot);
        self.registry.changed();
        Ok(loaded)
    }

    /// Watches the plugin directories and reloads each library that changes, on a thread of
    /// its own, for as long as the host lives.
    pub fn watch(self: &Arc<Self>, dirs: &[PathBuf], allow_downgrade: bool) -> std::io::Result<()> {
        let mut watcher =
            crate::plugins::watch::LibraryWatcher::new(dirs).map_err(std::io::Error::other)?;
        let host = Arc::downgrade(self);
        std::thread::Builder::new().name("plugin-watcher".to_string()).spawn(move || {
            while let Some(changed) = watcher.next_changes() {
                let Some(host) = host.upgrade() else { break };
                for file in changed {
                    match host.reload_library(&file, allow_downgrade) {
                        Ok(loaded) => tracing::info!(target: "toolhost::plugins", "hot swap: {} now serves {loaded}", file.display()),
                        Err(message) => tracing::warn!(target: "toolhost::plugins", "hot swap: {message}"),
                    }
                }
            }
        })?;
        Ok(())
    }
}
