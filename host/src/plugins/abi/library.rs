//! Opening a plugin library: abi_stable's checks (a library, a root module, compatible
//! abi_stable and tool-api versions, matching layouts), then the plugin's manifest; its handlers
//! are built only once the manifest has been checked.

use std::path::Path;
use std::sync::Arc;

use abi_stable::library::{lib_header_from_path, LibraryError};
use abi_stable::std_types::{RErr, ROk};
use tool_api::abi::ToolPluginV1Ref;

use super::handler::InProcessPlugin;
use crate::plugins::error::LoadError;
use crate::plugins::handler::OpenedPlugin;

/// A plugin's manifest, in Rust types.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Manifest {
    /// The plugin's name.
    pub name: String,
    /// Its version (semver text).
    pub version: String,
    /// The tool-api version it was built against (semver text).
    pub abi_version: String,
    /// Its capability strings, as a JSON array.
    pub capabilities_json: String,
    /// Whether it was built with unwinding panics.
    pub panic_unwind: bool,
}

/// A library whose root module loaded and whose handlers are not built yet.
pub struct Opened {
    module: ToolPluginV1Ref,
    manifest: Manifest,
}

impl Opened {
    /// The plugin's manifest.
    pub fn manifest(&self) -> Manifest {
        self.manifest.clone()
    }

    /// Builds the plugin's handlers.
    pub fn start(self) -> Result<Arc<dyn OpenedPlugin>, LoadError> {
        let handlers = match (self.module.handlers())() {
            ROk(handlers) => handlers.into_vec(),
            RErr(e) => return Err(LoadError::Init(e.message.into_string())),
        };
        Ok(Arc::new(InProcessPlugin::new(self.module, handlers)))
    }
}

/// Opens the library at `path` and reads its manifest. The file's headers are checked first
/// ([`crate::plugins::elf`]): the dynamic loader would map a truncated file and die on it.
pub fn open(path: &Path) -> Result<Opened, LoadError> {
    crate::plugins::elf::check(path)?;
    let header = lib_header_from_path(path).map_err(classify)?;
    let module = header
        .init_root_module::<ToolPluginV1Ref>()
        .map_err(classify)?;
    let manifest = (module.manifest())();
    Ok(Opened {
        module,
        manifest: Manifest {
            name: manifest.name.into_string(),
            version: manifest.version.into_string(),
            abi_version: manifest.abi_version.into_string(),
            capabilities_json: manifest.capabilities_json.into_string(),
            panic_unwind: manifest.panic_unwind,
        },
    })
}

fn classify(error: LibraryError) -> LoadError {
    match error {
        LibraryError::OpenError { err, .. } => LoadError::Open(err.to_string()),
        LibraryError::GetSymbolError { .. } => LoadError::NotAPlugin,
        LibraryError::ParseVersionError(e) => LoadError::AbiVersion(e.to_string()),
        LibraryError::IncompatibleVersionNumber {
            expected_version,
            actual_version,
            ..
        } => {
            let (theirs, ours) = (actual_version.to_string(), expected_version.to_string());
            let major = |v: &str| {
                v.split('.')
                    .next()
                    .unwrap_or("0")
                    .parse::<u64>()
                    .unwrap_or(0)
            };
            let what_to_do = if major(&theirs) > major(&ours) {
                format!(
                    "it needs a toolhost built against tool-api {}.x (this one is toolhost {})",
                    major(&theirs),
                    env!("CARGO_PKG_VERSION")
                )
            } else {
                format!("rebuild it against tool-api {}.x", major(&ours))
            };
            LoadError::AbiVersion(format!(
                "built against tool-api {theirs}, this host uses tool-api {ours}: {what_to_do}"
            ))
        }
        LibraryError::InvalidAbiHeader(_) | LibraryError::InvalidCAbi { .. } => {
            LoadError::AbiVersion("built with an incompatible abi_stable version".to_string())
        }
        LibraryError::AbiInstability(report) => {
            LoadError::AbiLayout(summarize_layout_report(&report.to_string()))
        }
        LibraryError::RootModule { err, .. } => LoadError::Init(err.to_string()),
        other => LoadError::AbiLayout(other.to_string()),
    }
}

/// abi_stable's layout reports run to a thousand lines; what differs is in the paragraphs that
/// start with "Error:" (`Error:mismatched package` / `Expected:` / `tool-api` / `Found:` / ...).
fn summarize_layout_report(report: &str) -> String {
    tracing::debug!(target: "toolhost::loader", "full layout report:\n{report}");
    let mut paragraphs = Vec::new();
    let mut lines = report.lines().map(str::trim);
    while let Some(line) = lines.next() {
        if let Some(error) = line.strip_prefix("Error:") {
            let details: Vec<&str> = lines.by_ref().take_while(|l| !l.is_empty()).collect();
            paragraphs.push(format!("{} ({})", error.trim(), details.join(" ")));
            if paragraphs.len() == 3 {
                break;
            }
        }
    }
    if paragraphs.is_empty() {
        "the plugin's types do not match this host's".to_string()
    } else {
        paragraphs.join("; ")
    }
}
