//! The plugin index: what each library registered the last time it was loaded (plugin name,
//! versions, capabilities, the specs of its handlers), so that later runs register its tools
//! without opening it. A library is then opened on the first call of one of its tools: a
//! `toolhost call` opens one library instead of all of them, and a long-running host maps only
//! the plugins it uses.
//!
//! An entry is used only while the library file is byte-for-byte the one indexed as far as its
//! metadata can tell (same size, modification time, inode and device) and the host is the same
//! build (same executable size and modification time): any rebuild of either is loaded, checked
//! and indexed again. Only libraries that loaded cleanly are indexed, so a bad library is loaded,
//! and warned about, every time; nor are plugins whose specs depend on their environment
//! (capability `specs_from_environment`: use_subagents' names come from agent files). The index is a cache: unreadable, it is ignored; unwritable, it
//! is not kept.
//!
//! Location: `$TOOLHOST_PLUGIN_INDEX` (a file path, or `off`), else
//! `$XDG_CACHE_HOME/toolhost/plugin-index.json`, else `~/.cache/toolhost/plugin-index.json`.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use tool_api::model::ToolSpec;

use super::loader::PluginInfo;

/// The environment variable naming the index file (or `off`).
pub const INDEX_ENV: &str = "TOOLHOST_PLUGIN_INDEX";

/// What the index knows of one library.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexEntry {
    /// The file's identity when it was indexed.
    fingerprint: Fingerprint,
    /// The plugin's name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The tool-api version it was built against.
    pub abi_version: String,
    /// Its capabilities.
    pub capabilities: Vec<String>,
    /// The specs (JSON) of each of its handlers, in order.
    pub handlers: Vec<String>,
}

impl IndexEntry {
    /// The plugin this entry describes, known without opening its library, and its handlers'
    /// specs; `None` when the entry does not parse.
    pub fn plugin(&self, library: &Path) -> Option<(PluginInfo, Vec<Vec<ToolSpec>>)> {
        let info = PluginInfo::known(
            self.name.clone(),
            semver::Version::parse(&self.version).ok()?,
            semver::Version::parse(&self.abi_version).ok()?,
            library,
            self.capabilities.clone(),
        );
        let handlers = self
            .handlers
            .iter()
            .map(|json| serde_json::from_str(json).ok())
            .collect::<Option<Vec<_>>>()?;
        Some((info, handlers))
    }
}

/// What identifies a file's contents without reading them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Fingerprint {
    size: u64,
    modified_ns: i128,
    inode: u64,
    device: u64,
}

impl Fingerprint {
    /// The fingerprint of the file `path` leads to (symlinks followed).
    fn of(path: &Path) -> Option<Self> {
        let meta = std::fs::metadata(path).ok()?;
        Some(Self {
            size: meta.size(),
            modified_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            inode: meta.ino(),
            device: meta.dev(),
        })
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct IndexFile {
    /// The host build the entries were made by; another build starts an empty index.
    host: Option<Fingerprint>,
    libraries: BTreeMap<PathBuf, IndexEntry>,
}

/// The index, read at startup and written back when it changed.
#[derive(Debug, Default)]
pub struct PluginIndex {
    file: Option<PathBuf>,
    contents: IndexFile,
    changed: bool,
}

impl PluginIndex {
    /// Reads the index from its usual place (see the module documentation).
    pub fn open() -> Self {
        match index_file() {
            Some(file) => Self::open_at(file),
            None => Self::default(),
        }
    }

    /// Reads the index `file`; a missing or unreadable one, or one written by another host
    /// build, starts empty.
    pub fn open_at(file: PathBuf) -> Self {
        let host = std::env::current_exe()
            .ok()
            .and_then(|exe| Fingerprint::of(&exe));
        let contents = std::fs::read(&file)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<IndexFile>(&bytes).ok())
            .filter(|contents| contents.host == host && host.is_some())
            .unwrap_or(IndexFile {
                host,
                libraries: BTreeMap::new(),
            });
        Self {
            file: Some(file),
            contents,
            changed: false,
        }
    }

    /// The entry of `library`, if the file is still the one indexed.
    pub fn lookup(&self, library: &Path) -> Option<&IndexEntry> {
        let entry = self.contents.libraries.get(library)?;
        (Some(&entry.fingerprint) == Fingerprint::of(library).as_ref()).then_some(entry)
    }

    /// Records a library that loaded cleanly, with its handlers' specs.
    pub fn record(&mut self, library: &Path, info: &PluginInfo, handlers: &[Vec<ToolSpec>]) {
        let Some(fingerprint) = Fingerprint::of(library) else {
            return;
        };
        let handlers = handlers
            .iter()
            .map(|specs| serde_json::to_string(specs).unwrap_or_else(|_| "[]".to_string()))
            .collect();
        let entry = IndexEntry {
            fingerprint,
            name: info.name.clone(),
            version: info.version.to_string(),
            abi_version: info.abi_version.to_string(),
            capabilities: info.capabilities.clone(),
            handlers,
        };
        if self.contents.libraries.get(library) != Some(&entry) {
            self.contents.libraries.insert(library.to_path_buf(), entry);
            self.changed = true;
        }
    }

    /// Drops a library that did not load cleanly.
    pub fn forget(&mut self, library: &Path) {
        self.changed |= self.contents.libraries.remove(library).is_some();
    }

    /// Writes the index back if it changed, leaving out libraries that no longer exist. The
    /// file is replaced atomically, so concurrent hosts never read half an index.
    pub fn save(&mut self) {
        let Some(file) = &self.file else { return };
        if !self.changed {
            return;
        }
        self.contents.libraries.retain(|path, _| path.exists());
        let Ok(json) = serde_json::to_vec(&self.contents) else {
            return;
        };
        let written = file
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| {
                // Unique per process and per save: hosts in other processes and threads may be
                // writing the same index.
                static SAVES: AtomicU64 = AtomicU64::new(0);
                let save = SAVES.fetch_add(1, Ordering::Relaxed);
                let temporary =
                    file.with_extension(format!("json.{}-{save}.tmp", std::process::id()));
                std::fs::write(&temporary, json)?;
                std::fs::rename(&temporary, file)
            });
        if let Err(e) = written {
            tracing::debug!(target: "toolhost::plugins", "plugin index {} not written: {e}", file.display());
        }
        self.changed = false;
    }
}

/// Where the index lives, or `None` when it is switched off or no home is known.
fn index_file() -> Option<PathBuf> {
    match std::env::var_os(INDEX_ENV) {
        Some(value) if value == "off" => return None,
        Some(value) if !value.is_empty() => return Some(PathBuf::from(value)),
        _ => {}
    }
    let cache = crate::settings::xdg_base("XDG_CACHE_HOME", ".cache")?;
    Some(cache.join("toolhost").join("plugin-index.json"))
}
