//! The `[plugins]` section: where plugins run (`isolation`) and what an isolated one's worker
//! is granted, as defaults and per plugin name (`[plugins.<name>]`). How a library is placed
//! from these, a bundle's requirement and the command line is `crate::plugins::isolation`'s.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::InvalidSettings;

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

/// What an isolated plugin may do with the file system (tool-api's access, as plugins declare
/// it): `none`, `workspace-read`, `workspace-write`, `full`.
pub use tool_api::model::access::FsAccess as FsGrant;

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
    pub fn merged(&self, other: &Self) -> Self {
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
    pub fn from_section(section: &Value) -> Result<Self, InvalidSettings> {
        let Some(table) = section.as_object() else {
            return match section {
                Value::Null => Ok(Self::default()),
                _ => Err(InvalidSettings::NotATable { section: "plugins" }),
            };
        };
        let mut defaults = serde_json::Map::new();
        let mut by_name = BTreeMap::new();
        for (key, value) in table {
            if value.is_object() {
                let options = serde_json::from_value(value.clone()).map_err(|source| {
                    InvalidSettings::Section {
                        section: format!("plugins.{key}"),
                        source,
                    }
                })?;
                by_name.insert(key.clone(), options);
            } else {
                defaults.insert(key.clone(), value.clone());
            }
        }
        let defaults = serde_json::from_value(Value::Object(defaults)).map_err(|source| {
            InvalidSettings::Section {
                section: "plugins".to_string(),
                source,
            }
        })?;
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
