//! `bundle.toml`: the bundle, its libraries with their hashes and version requirements, and
//! its policy.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::ManifestError;
use crate::settings::{AutoApprove, Isolation, PluginOptions};

/// A parsed `bundle.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Name and version of the bundle.
    pub bundle: BundleInfo,
    /// The vetted libraries.
    #[serde(default)]
    pub plugins: Vec<PluginEntry>,
    /// The policy that comes with them.
    #[serde(default)]
    pub policy: Policy,
}

/// The `[bundle]` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleInfo {
    /// The bundle's name.
    pub name: String,
    /// The bundle's version.
    pub version: String,
}

/// One `[[plugins]]` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginEntry {
    /// The library's file name inside the bundle directory.
    pub library: String,
    /// A semver requirement on the plugin's version (`">=0.1, <0.2"`).
    pub version: String,
    /// SHA-256 of the library file, lowercase hex.
    pub sha256: String,
    /// `process`: this plugin runs isolated, whatever the user's settings say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<Isolation>,
    /// What its worker is granted when it runs isolated (`fs`, `network`, `spawn`, limits;
    /// the keys of `[plugins.<name>]`); these replace the user's settings for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grants: Option<PluginOptions>,
}

/// The `[policy]` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// The tool names that register; `None` means all of the bundle's tools.
    pub enabled_tools: Option<Vec<String>>,
    /// Replaces the settings file's `[auto_approve]` when present.
    pub auto_approve: Option<AutoApprove>,
    /// The CLINE_COMMAND_PERMISSIONS JSON, as text.
    pub command_permissions: Option<String>,
    /// `process`: every plugin of the bundle runs isolated, whatever the user's settings say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<Isolation>,
}

impl Manifest {
    /// Parses and checks manifest text: library names are plain file names, requirements parse.
    pub fn parse(text: &str) -> Result<Self, ManifestError> {
        let manifest: Self = toml::from_str(text)?;
        for entry in &manifest.plugins {
            if Path::new(&entry.library).file_name() != Some(entry.library.as_ref()) {
                return Err(ManifestError::LibraryPath {
                    library: entry.library.clone(),
                });
            }
            semver::VersionReq::parse(&entry.version).map_err(|source| {
                ManifestError::VersionRequirement {
                    library: entry.library.clone(),
                    requirement: entry.version.clone(),
                    source,
                }
            })?;
        }
        Ok(manifest)
    }
}
