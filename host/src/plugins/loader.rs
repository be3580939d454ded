//! Loading one plugin library: open it, check its ABI and versions, build its handlers.
//!
//! A plugin may also be known before it is opened: the plugin index describes it (what the
//! library registered when it was last loaded, see [`super::index`]), and the library is opened
//! on the first use of one of its handlers.
//!
//! The opening itself (the ABI library's checks, in order: that the file is a library, that it
//! exports a root module, that its ABI library and tool-api versions are compatible, and that the
//! layout of every type reachable from the root module matches ours) is the ABI adapter's
//! ([`super::abi::library`]); this module checks the manifest and keeps what was opened. Each
//! failure becomes a [`LoadError`] naming the reason. Libraries are never unloaded: the ABI
//! library leaks them by design.
//!
//! An isolated plugin ([`super::isolation`]) is opened the same way, by a worker process
//! ([`super::worker`]), which reports the manifest for the same checks; the host's process
//! never maps its library.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use tool_api::model::ToolSpec;

use super::abi::library::{self, Manifest};
pub use super::error::LoadError;
use super::handler::{HandlerApi, OpenedPlugin};
use super::isolation::Placement;
use super::sealed::SealedLibrary;
use super::worker::{Launch, WorkerPlugin};
use crate::settings::Isolation;

/// A plugin library: loaded, or known from the plugin index and loaded on first use.
pub struct PluginInfo {
    /// The plugin's name.
    pub name: String,
    /// The plugin's version.
    pub version: semver::Version,
    /// The tool-api version it was built against.
    pub abi_version: semver::Version,
    /// The library file.
    pub path: PathBuf,
    /// Capability strings from the manifest.
    pub capabilities: Vec<String>,
    /// The opened library; unset for a plugin known from the index until its first use, and an
    /// error when opening it then failed.
    image: OnceLock<Result<Arc<dyn OpenedPlugin>, String>>,
    /// Whether this plugin was loaded from a private copy, so that its library image (and the
    /// threads and runtime inside it) belongs to this load alone.
    private_image: bool,
    /// Set when a tool of this plugin panicked: its tools are refused from then on.
    failure: Mutex<Option<String>>,
    /// How its workers start, when it runs isolated.
    launch: Option<Launch>,
}

impl PluginInfo {
    /// A plugin known by its manifest's facts (from the plugin index); its library is opened on
    /// first use.
    pub fn known(
        name: String,
        version: semver::Version,
        abi_version: semver::Version,
        path: &Path,
        capabilities: Vec<String>,
    ) -> Self {
        Self {
            name,
            version,
            abi_version,
            path: path.to_path_buf(),
            capabilities,
            image: OnceLock::new(),
            private_image: false,
            failure: Mutex::new(None),
            launch: None,
        }
    }

    /// What its workers may reach, when it runs isolated.
    pub fn access(&self) -> Option<&crate::plugins::access::AccessReport> {
        self.launch.as_ref().map(|launch| &launch.access)
    }

    /// The same plugin, run isolated by workers started with `launch`.
    pub fn isolated(mut self, launch: Launch) -> Self {
        self.launch = Some(launch);
        self
    }

    /// Where it runs.
    pub fn isolation(&self) -> Isolation {
        if self.launch.is_some() {
            Isolation::Process
        } else {
            Isolation::InProcess
        }
    }

    /// The process id of its running worker, when it runs isolated and one is running.
    pub fn worker_pid(&self) -> Option<u32> {
        match self.image.get() {
            Some(Ok(image)) => image.worker_pid(),
            _ => None,
        }
    }

    /// Whether the library is open (a plugin known from the index is not until first used).
    pub fn is_loaded(&self) -> bool {
        matches!(self.image.get(), Some(Ok(_)))
    }

    /// Whether the plugin declares `capability`.
    pub fn has_capability(&self, capability: &str) -> bool {
        self.capabilities.iter().any(|c| c == capability)
    }

    fn opened(&self) -> Result<&Arc<dyn OpenedPlugin>, String> {
        self.image
            .get_or_init(|| self.open_late())
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The handler at `index`, opening the library first when needed. The error says why the
    /// library could not be opened now.
    pub fn handler(&self, index: usize) -> Result<Arc<dyn HandlerApi>, String> {
        self.opened()?
            .handlers()
            .get(index)
            .cloned()
            .ok_or_else(|| format!("the plugin '{}' has no handler {index}", self.name))
    }

    /// The specs of every handler, opening the library when needed.
    pub fn handler_specs(&self) -> Result<Vec<Vec<ToolSpec>>, String> {
        self.opened()?
            .handlers()
            .iter()
            .enumerate()
            .map(|(i, h)| {
                h.specs()
                    .map_err(|e| format!("handler {i} has invalid tool specs: {e}"))
            })
            .collect()
    }

    /// Opens the library of a plugin known from the index; it must still be the plugin the
    /// index described.
    fn open_late(&self) -> Result<Arc<dyn OpenedPlugin>, String> {
        let loaded = match &self.launch {
            Some(launch) => load_isolated(&self.path, launch.clone(), |_| Ok(launch.clone())),
            None => load(&self.path),
        };
        let mut loaded = loaded.map_err(|e| {
            format!(
                "the plugin library {} could not be loaded: {e}",
                self.path.display()
            )
        })?;
        if loaded.name != self.name || loaded.version != self.version {
            return Err(format!(
                "the plugin library {} changed since it was indexed (now {} {})",
                self.path.display(),
                loaded.name,
                loaded.version
            ));
        }
        // Not private: dropping `loaded` shuts nothing down.
        loaded
            .image
            .take()
            .unwrap_or_else(|| Err("the plugin library was not opened".to_string()))
    }

    /// Marks the plugin as failed; its tools will refuse further calls.
    pub fn mark_failed(&self, reason: &str) {
        if let Ok(mut failure) = self.failure.lock() {
            failure.get_or_insert_with(|| reason.to_string());
        }
    }

    /// Why the plugin was disabled, if it was.
    pub fn failure(&self) -> Option<String> {
        self.failure.lock().ok().and_then(|f| f.clone())
    }

    /// Asks the plugin to stop its threads (the code stays mapped).
    /// A plugin whose library was never opened has nothing to stop.
    pub fn shutdown(&self) {
        if let Some(Ok(image)) = self.image.get() {
            image.shutdown();
        }
    }
}

impl Drop for PluginInfo {
    /// The last reference to a privately loaded generation is gone (a newer one replaced it and
    /// its last call finished): stop its threads. The code stays mapped. A library loaded from
    /// its own path may be shared by other hosts in this process (the dynamic loader hands out
    /// one image per file), so it is only shut down explicitly, at exit.
    fn drop(&mut self) {
        if self.private_image {
            self.shutdown();
        }
    }
}

impl std::fmt::Debug for PluginInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginInfo")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Loads the plugin library at `path`.
pub fn load(path: &Path) -> Result<PluginInfo, LoadError> {
    load_mapped(path, path)
}

/// Loads a private copy of the library at `path`, so that it can be loaded again after the
/// file changes: the dynamic loader hands back the already loaded image for a path (and for a
/// file with the same inode), so every generation needs a file of its own. The copy is sealed
/// in memory ([`SealedLibrary`]) and kept for the life of the process, as its image is
/// ([`SealedLibrary::keep_loaded`]).
pub fn load_copy(path: &Path) -> Result<PluginInfo, LoadError> {
    let copy = SealedLibrary::copy(path)?;
    let loaded = load_mapped(&copy.path(), path);
    copy.keep_loaded();
    loaded
}

/// Loads the library at `path` where `placement` says it runs; `copy`: a private copy when
/// in-process (for hot swap; an isolated plugin's workers always load a private copy).
pub fn load_placed(
    path: &Path,
    placement: &Placement,
    copy: bool,
) -> Result<PluginInfo, LoadError> {
    let in_process = |path: &Path| if copy { load_copy(path) } else { load(path) };
    if placement.isolation(path, None) == Isolation::InProcess && !placement.depends_on_name(path) {
        return in_process(path);
    }
    let first = placement.launch(path, None)?;
    let mut moved_in = false;
    let info = load_isolated(path, first, |manifest| {
        moved_in = placement.isolation(path, Some(&manifest.name)) == Isolation::InProcess;
        let capabilities: Vec<String> =
            serde_json::from_str(&manifest.capabilities_json).unwrap_or_default();
        placement.launch(path, Some((&manifest.name, &capabilities)))
    })?;
    if moved_in {
        info.shutdown();
        return in_process(path);
    }
    Ok(info)
}

/// Opens `path` in a worker started with `first`; `configure` gives, from the plugin's name,
/// how its workers start from then on.
fn load_isolated(
    path: &Path,
    first: Launch,
    configure: impl FnOnce(&Manifest) -> Result<Launch, LoadError>,
) -> Result<PluginInfo, LoadError> {
    let (manifest, plugin) = WorkerPlugin::start(path, first, configure)?;
    let launch = plugin.launch();
    let mut info = check_manifest(path, manifest)?.isolated(launch);
    info.image = OnceLock::from(Ok(Arc::new(plugin) as Arc<dyn OpenedPlugin>));
    Ok(info)
}

/// Opens the library copy at `mapped` inside a worker process (`origin`: the library file it
/// was copied from): the ABI checks, the manifest's, the handlers; what the worker serves.
pub fn open_in_worker(
    mapped: &Path,
    origin: &Path,
) -> Result<(Manifest, Arc<dyn OpenedPlugin>), LoadError> {
    let opened = library::open(mapped)?;
    let manifest = opened.manifest();
    check_manifest(origin, manifest.clone())?;
    Ok((manifest, opened.start()?))
}

/// Opens `mapped`, recording `origin` as the plugin's file.
fn load_mapped(mapped: &Path, origin: &Path) -> Result<PluginInfo, LoadError> {
    let opened = library::open(mapped)?;
    let mut info = check_manifest(origin, opened.manifest())?;
    info.private_image = mapped != origin;
    info.image = OnceLock::from(Ok(opened.start()?));
    Ok(info)
}

fn check_manifest(path: &Path, manifest: Manifest) -> Result<PluginInfo, LoadError> {
    let version = semver::Version::parse(&manifest.version)
        .map_err(|e| LoadError::Manifest(format!("plugin version '{}': {e}", manifest.version)))?;
    let abi_version = semver::Version::parse(&manifest.abi_version).map_err(|e| {
        LoadError::Manifest(format!("tool-api version '{}': {e}", manifest.abi_version))
    })?;
    let ours = host_abi_version();
    if abi_version.major != ours.major {
        return Err(LoadError::AbiVersion(format!(
            "built against tool-api {abi_version}, this host uses tool-api {ours}"
        )));
    }
    if !manifest.panic_unwind {
        return Err(LoadError::Manifest(
            "built with panic = \"abort\": its panics could not be contained".to_string(),
        ));
    }
    let capabilities: Vec<String> =
        serde_json::from_str(&manifest.capabilities_json).unwrap_or_default();
    let lacking: Vec<&str> = capabilities
        .iter()
        .filter_map(|capability| capability.strip_prefix(tool_api::model::NEEDS_PREFIX))
        .filter(|feature| !tool_api::model::HOST_FEATURES.contains(feature))
        .collect();
    if !lacking.is_empty() {
        return Err(LoadError::NeedsNewerHost(format!(
            "it needs {} of its host, which this toolhost {} (tool-api {ours}) does not have; \
             it was built against tool-api {abi_version}: run it with a toolhost built against \
             that tool-api or a later one",
            lacking.join(", "),
            env!("CARGO_PKG_VERSION"),
        )));
    }
    Ok(PluginInfo::known(
        manifest.name,
        version,
        abi_version,
        path,
        capabilities,
    ))
}

/// The tool-api version this host was built with.
pub fn host_abi_version() -> semver::Version {
    semver::Version::parse(tool_api::ABI_VERSION).unwrap_or_else(|_| semver::Version::new(1, 0, 0))
}
