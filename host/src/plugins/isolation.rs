//! Where a plugin's code runs: in the host's process, or isolated in a worker process of its
//! own ([`super::worker`]), and what an isolated plugin is granted.
//!
//! The choice for a library, the first rule that applies:
//!
//! 1. a signed bundle that requires isolation for it (or for all its plugins);
//! 2. `[plugins.<name>] isolation` in the settings;
//! 3. `--isolation` on the command line;
//! 4. `[plugins] isolation` in the settings;
//! 5. the library's directory: the host's own plugin directory (`plugins/` beside the
//!    executable) runs in-process, any other (`--plugins`, `TOOLHOST_PLUGIN_PATH`, a bundle)
//!    isolated.
//!
//! A plugin's name is known only once its library is open, so when rule 2 could decide, a
//! library is first opened in a worker (never in the host's process on a guess) and moved
//! in-process only when its name says so.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolhost_sandbox::{FilesystemMode, SandboxPolicy};

use super::error::LoadError;
use super::worker::{Launch, WorkerConfig, WorkerLimits};

/// Where a plugin runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    /// In the host's process: fastest; a crash of the plugin ends the host.
    #[value(name = "in-process", alias = "in_process")]
    InProcess,
    /// In a worker process: a crash ends only the worker.
    Process,
}

impl Isolation {
    /// The name settings and reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InProcess => "in_process",
            Self::Process => "process",
        }
    }
}

/// What an isolated plugin may do with the file system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FsGrant {
    /// Read its own library and the system's files only (and use its own temporary
    /// directory, as every worker may).
    None,
    /// Also read the workspace roots.
    WorkspaceRead,
    /// Also write there.
    WorkspaceWrite,
    /// No file system confinement.
    Full,
}

/// The options of `[plugins]` (the defaults) or `[plugins.<name>]` (one plugin).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PluginOptions {
    /// Where it runs.
    pub isolation: Option<Isolation>,
    /// Address space of its worker, in MiB (0: no limit). Default 4096.
    pub memory_mb: Option<u64>,
    /// CPU seconds of its worker over its life (0: no limit). Default: no limit.
    pub cpu_seconds: Option<u64>,
    /// Open files of its worker. Default 1024.
    pub open_files: Option<u64>,
    /// File system grant of its worker. Default `workspace-read`.
    pub fs: Option<FsGrant>,
    /// Whether its worker reaches the network. Default false.
    pub network: Option<bool>,
    /// Whether its worker may start programs. Default false.
    pub spawn: Option<bool>,
    /// Environment variables its worker gets beyond the basic ones (`*`: all).
    pub env: Option<Vec<String>>,
    /// Whether a worker runs when the kernel cannot enforce its sandbox (false: it is refused).
    pub sandbox_required: Option<bool>,
}

impl PluginOptions {
    /// `self`, with `other`'s values where it sets them.
    fn merged(&self, other: &Self) -> Self {
        Self {
            isolation: other.isolation.or(self.isolation),
            memory_mb: other.memory_mb.or(self.memory_mb),
            cpu_seconds: other.cpu_seconds.or(self.cpu_seconds),
            open_files: other.open_files.or(self.open_files),
            fs: other.fs.or(self.fs),
            network: other.network.or(self.network),
            spawn: other.spawn.or(self.spawn),
            env: other.env.clone().or_else(|| self.env.clone()),
            sandbox_required: other.sandbox_required.or(self.sandbox_required),
        }
    }
}

/// The `[plugins]` section: defaults, and one table per plugin name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PluginsSettings {
    /// `[plugins]` keys.
    pub defaults: PluginOptions,
    /// `[plugins.<name>]` tables.
    pub by_name: BTreeMap<String, PluginOptions>,
}

impl PluginsSettings {
    /// Parses the section (a JSON object from the TOML); `null` is the defaults.
    pub fn from_section(section: &Value) -> Result<Self, String> {
        let Some(table) = section.as_object() else {
            return match section {
                Value::Null => Ok(Self::default()),
                _ => Err("[plugins] must be a table".to_string()),
            };
        };
        let mut defaults = serde_json::Map::new();
        let mut by_name = BTreeMap::new();
        for (key, value) in table {
            if value.is_object() {
                let options = serde_json::from_value(value.clone())
                    .map_err(|e| format!("[plugins.{key}]: {e}"))?;
                by_name.insert(key.clone(), options);
            } else {
                defaults.insert(key.clone(), value.clone());
            }
        }
        let defaults = serde_json::from_value(Value::Object(defaults))
            .map_err(|e| format!("[plugins]: {e}"))?;
        Ok(Self { defaults, by_name })
    }

    /// The options of the plugin `name` (the defaults when unknown).
    pub fn options(&self, name: Option<&str>) -> PluginOptions {
        match name.and_then(|n| self.by_name.get(n)) {
            Some(options) => self.defaults.merged(options),
            None => self.defaults.clone(),
        }
    }
}

/// What a signed bundle requires.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Required {
    /// Nothing: the usual rules.
    #[default]
    Nothing,
    /// Every plugin isolated.
    All,
    /// These library file names isolated.
    Libraries(Vec<String>),
}

/// How the host places plugins, and what their workers are started with.
#[derive(Debug, Clone, Default)]
pub struct Placement {
    /// The `[plugins]` settings.
    pub settings: PluginsSettings,
    /// `--isolation`: this run's default.
    pub default: Option<Isolation>,
    /// What a bundle requires.
    pub required: Required,
    /// A bundle's grants, by library file name; they replace the settings' for that library.
    pub bundle_grants: BTreeMap<String, PluginOptions>,
    /// The host's own plugin directory (`None`: found beside the executable).
    pub own_dir: Option<PathBuf>,
    /// The `toolhost` binary workers run (`None`: found as the sandbox supervisor is).
    pub program: Option<PathBuf>,
    /// The workspace roots (what `workspace-read` and `workspace-write` grant).
    pub workspace_roots: Vec<PathBuf>,
}

impl Placement {
    /// Where the library `file` of the plugin `name` (when known) runs.
    pub fn isolation(&self, file: &Path, name: Option<&str>) -> Isolation {
        if self.is_required(file) {
            return Isolation::Process;
        }
        if let Some(chosen) = name
            .and_then(|n| self.settings.by_name.get(n))
            .and_then(|o| o.isolation)
        {
            return chosen;
        }
        if let Some(chosen) = self.default.or(self.settings.defaults.isolation) {
            return chosen;
        }
        if self.is_own(file) {
            Isolation::InProcess
        } else {
            Isolation::Process
        }
    }

    /// Whether the plugin's name could change where `file` runs (it is then opened in a
    /// worker first).
    pub fn depends_on_name(&self, file: &Path) -> bool {
        !self.is_required(file)
            && self
                .settings
                .by_name
                .values()
                .any(|o| o.isolation.is_some())
    }

    fn is_required(&self, file: &Path) -> bool {
        match &self.required {
            Required::Nothing => false,
            Required::All => true,
            Required::Libraries(names) => file
                .file_name()
                .is_some_and(|n| names.iter().any(|l| n == l.as_str())),
        }
    }

    fn is_own(&self, file: &Path) -> bool {
        let own = self
            .own_dir
            .clone()
            .or_else(super::discovery::own_dir)
            .and_then(|d| d.canonicalize().ok());
        let dir = file.parent().and_then(|d| d.canonicalize().ok());
        own.is_some() && own == dir
    }

    /// How a worker of the plugin `name` (when known) is started, for `library`.
    pub fn launch(&self, library: &Path, name: Option<&str>) -> Result<Launch, LoadError> {
        let mut options = self.settings.options(name);
        if let Some(grants) = library
            .file_name()
            .and_then(|n| self.bundle_grants.get(n.to_string_lossy().as_ref()))
        {
            options = options.merged(grants);
        }
        let program = match &self.program {
            Some(program) => program.clone(),
            None => crate::sandbox::supervisor::toolhost_program()
                .map_err(|e| LoadError::Worker(e.message.to_string()))?,
        };
        let mb = |value: u64| (value > 0).then(|| value.saturating_mul(1 << 20));
        let limits = WorkerLimits {
            memory_bytes: mb(options.memory_mb.unwrap_or(4096)),
            cpu_secs: options.cpu_seconds.filter(|&s| s > 0),
            open_files: Some(options.open_files.unwrap_or(1024)),
        };
        let plugin = name.map(str::to_string).unwrap_or_else(|| {
            library
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        let temp_dir = super::private_dir::subdir(&format!("tmp-{plugin}"))?;
        Ok(Launch {
            program,
            library: library.to_path_buf(),
            image: None,
            plugin,
            config: WorkerConfig {
                host_pid: i32::try_from(std::process::id()).unwrap_or(0),
                limits,
                sandbox: self.sandbox(&options, &temp_dir)?,
                library_sha256: String::new(),
            },
            env: options.env.clone().unwrap_or_default(),
            temp_dir,
            workspace_roots: match options.fs.unwrap_or(FsGrant::WorkspaceRead) {
                FsGrant::WorkspaceRead | FsGrant::WorkspaceWrite => self.workspace_roots.clone(),
                FsGrant::None | FsGrant::Full => Vec::new(),
            },
        })
    }

    /// The worker's sandbox for `options`, fitted to the kernel: a missing part is refused
    /// when `sandbox_required`, else dropped with a warning.
    fn sandbox(
        &self,
        options: &PluginOptions,
        temp_dir: &Path,
    ) -> Result<Option<SandboxPolicy>, LoadError> {
        let fs = options.fs.unwrap_or(FsGrant::WorkspaceRead);
        let network = options.network.unwrap_or(false);
        let spawn = options.spawn.unwrap_or(false);
        if fs == FsGrant::Full && network && spawn {
            return Ok(None);
        }
        // The library itself needs no grant: it is a sealed copy in memory.
        let mut readable: Vec<PathBuf> = SYSTEM_READABLE.iter().map(PathBuf::from).collect();
        // Its own temporary directory (its `TMPDIR`), never the shared one: that holds other
        // programs' files.
        let mut writable = vec![temp_dir.to_path_buf()];
        if matches!(fs, FsGrant::WorkspaceRead | FsGrant::WorkspaceWrite) {
            readable.extend(self.workspace_roots.iter().cloned());
        }
        if fs == FsGrant::WorkspaceWrite {
            writable.extend(self.workspace_roots.iter().cloned());
        }
        let policy = SandboxPolicy {
            filesystem: match fs {
                FsGrant::Full => FilesystemMode::Off,
                _ => FilesystemMode::WorkspaceWrite,
            },
            readable_roots: (fs != FsGrant::Full).then_some(readable),
            writable_roots: writable,
            network,
            spawn,
            ..SandboxPolicy::default()
        };
        let adapted = policy.adapt(crate::sandbox::support());
        if !adapted.missing.is_empty() {
            let missing: Vec<String> = adapted.missing.iter().map(|m| m.effect.clone()).collect();
            if options.sandbox_required.unwrap_or(false) {
                return Err(LoadError::Worker(format!(
                    "its sandbox is required but this system cannot enforce all of it: {}",
                    missing.join("; ")
                )));
            }
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                tracing::warn!(target: "toolhost::plugins", "plugin workers run in a weaker sandbox on this system: {}", missing.join("; "));
            });
        }
        Ok(Some(adapted.policy))
    }
}

/// What every worker may read: the system's programs, libraries and configuration, the common
/// devices, and the kernel's view of the worker itself (`/proc/self/fd` is how the workspace
/// capability learns where an opened file is); not other processes' (the host's environment).
const SYSTEM_READABLE: [&str; 16] = [
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/bin",
    "/etc",
    "/sys",
    "/proc/self",
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/pts",
    "/dev/shm",
];
