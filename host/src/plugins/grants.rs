//! Grants the user gave one build of a plugin (`toolhost plugin grant NAME`): what it
//! declares, for the library whose SHA-256 it was given to, kept in toolhost's configuration
//! directory (`plugin-grants.json`, masked from every command). A new build (another hash)
//! has no grant until the user gives it one, as a workspace hook script's new version has no
//! trust; `toolhost plugin revoke NAME` takes it back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tool_api::model::access::Access;

use crate::settings::PluginOptions;

/// The file's name in toolhost's configuration directory.
const FILE_NAME: &str = "plugin-grants.json";

/// One plugin build's grant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Remembered {
    /// The plugin's version when it was granted.
    pub version: String,
    /// The SHA-256 of the library granted, as hex.
    pub sha256: String,
    /// What was granted (what it declared).
    pub access: Access,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct GrantFile {
    #[serde(default)]
    plugins: BTreeMap<String, Remembered>,
}

/// The file, when there is a place for it.
pub fn path() -> Option<PathBuf> {
    crate::settings::config_dir().map(|dir| dir.join(FILE_NAME))
}

fn read(path: &Path) -> GrantFile {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

/// The grant remembered for the plugin `name` whose library is `library`, when that exact
/// build was granted.
pub fn remembered(name: &str, library: &Path) -> Option<PluginOptions> {
    let file = read(&path()?);
    let entry = file.plugins.get(name)?;
    let sha = super::sealed::sha256_file(library).ok()?;
    (sha == entry.sha256).then(|| options(&entry.access))
}

/// The `[plugins.<name>]` options that grant `access`.
fn options(access: &Access) -> PluginOptions {
    PluginOptions {
        fs: Some(access.fs),
        spawn: Some(access.spawn),
        network: Some(!access.network.is_empty()),
        memory_mb: access.memory_mb,
        cpu_seconds: access.cpu_seconds,
        ..PluginOptions::default()
    }
}

/// Remembers `access` granted to the build of `name` at `library`.
pub fn remember(
    name: &str,
    version: &str,
    library: &Path,
    access: &Access,
) -> Result<PathBuf, String> {
    let path = path().ok_or("no place to keep grants: set XDG_CONFIG_HOME or HOME")?;
    let sha256 = super::sealed::sha256_file(library)
        .map_err(|e| format!("cannot read {}: {e}", library.display()))?;
    let mut file = read(&path);
    file.plugins.insert(
        name.to_string(),
        Remembered {
            version: version.to_string(),
            sha256,
            access: access.clone(),
        },
    );
    write(&path, &file)?;
    Ok(path)
}

/// Forgets the grant of `name`; whether there was one.
pub fn forget(name: &str) -> Result<bool, String> {
    let Some(path) = path() else {
        return Ok(false);
    };
    let mut file = read(&path);
    let had = file.plugins.remove(name).is_some();
    if had {
        write(&path, &file)?;
    }
    Ok(had)
}

fn write(path: &Path, file: &GrantFile) -> Result<(), String> {
    let failed = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    let text = serde_json::to_string_pretty(file).map_err(|e| e.to_string())?;
    let staging = path.with_extension("json.tmp");
    std::fs::write(&staging, text).map_err(failed)?;
    std::fs::rename(&staging, path).map_err(failed)
}
