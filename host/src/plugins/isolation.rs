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

use toolhost_sandbox::{FilesystemMode, SandboxPolicy};

use super::error::LoadError;
use tool_api::model::access::Access;

use super::access::{granted, AccessReport};
use super::worker::{Launch, WorkerConfig, WorkerLimits};
use crate::settings::ToolSet;
use crate::settings::{FsGrant, Isolation, PluginOptions, PluginsSettings};

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
    /// The tool set served (`--tools`, else `[tools] set`, else the default set): plugins of
    /// other sets are not registered.
    pub tool_set: Option<ToolSet>,
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

    /// How a worker of `library` is started: for the plugin `known` (its name and
    /// capabilities) once they are, with the intersection of what the user granted it and what
    /// it declares (an older plugin that declares nothing: the grant); before that (the worker
    /// that reads them), with no more than the least any plugin is given.
    pub fn launch(
        &self,
        library: &Path,
        known: Option<(&str, &[String])>,
    ) -> Result<Launch, LoadError> {
        let name = known.map(|(name, _)| name);
        let mut options = self.settings.options(name);
        // The user's grant to this very build (`toolhost plugin grant`), over the settings'.
        if let Some(remembered) = name.and_then(|name| super::grants::remembered(name, library)) {
            options = options.merged(&remembered);
        }
        let bundle_grant = library
            .file_name()
            .and_then(|n| self.bundle_grants.get(n.to_string_lossy().as_ref()));
        if let Some(grants) = bundle_grant {
            options = options.merged(grants);
        }
        let granted = granted(&options);
        let declared = match known {
            Some((_, capabilities)) => {
                Access::declared(capabilities).map_err(|e| LoadError::Manifest(e.to_string()))?
            }
            None => Some(Access::default()),
        };
        let effective = match &declared {
            Some(declared) => declared.intersection(&granted),
            None => granted.clone(),
        };
        options.fs = Some(effective.fs);
        options.network = Some(!effective.network.is_empty());
        options.spawn = Some(effective.spawn);
        let program = match &self.program {
            Some(program) => program.clone(),
            None => crate::command_sandbox::supervisor::toolhost_program()
                .map_err(|e| LoadError::Worker(e.message.to_string()))?,
        };
        let mb = |value: u64| value.saturating_mul(1 << 20);
        let limits = WorkerLimits {
            memory_bytes: effective.memory_mb.map(mb),
            cpu_secs: effective.cpu_seconds,
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
            access: AccessReport {
                declared: known.and(declared),
                granted,
                effective: effective.clone(),
                by_bundle: bundle_grant.is_some(),
            },
            plugin,
            config: WorkerConfig {
                host_pid: i32::try_from(std::process::id()).unwrap_or(0),
                limits,
                sandbox: self.sandbox(&options, &temp_dir)?,
                library_sha256: String::new(),
            },
            env: options.env.clone().unwrap_or_default(),
            temp_dir,
            workspace_roots: match effective.fs {
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
        let adapted = policy.adapt(crate::command_sandbox::support());
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
