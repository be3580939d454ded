//! The settings file: approval defaults, limits and anything tools look up by key.
//!
//! Where it is read from, first match wins: `--settings FILE`, `$TOOLHOST_SETTINGS`,
//! `$XDG_CONFIG_HOME/toolhost/settings.toml`, `~/.config/toolhost/settings.toml`. No file means
//! the defaults of [`sections`] and [`plugins`]. The format is TOML; tools read any key through the `setting` host service
//! (dotted keys, e.g. `model.supports_images`).
//!
//! Path-valued keys have `~` and `${env:NAME}` expanded ([`tool_api::sdk::paths`], the
//! helper the tools use for theirs); a configured directory to read that does not exist is an
//! error naming the key; misspelled keys of the host's own sections are named ([`keys`]).

mod error;
mod keys;
mod plugins;
mod sections;
mod tool_set;

use std::path::{Path, PathBuf};

use serde_json::Value;

pub use error::{InvalidSettings, SettingsError, UnknownKey};
pub use plugins::{FsGrant, Isolation, PluginOptions, PluginsSettings};
pub use sections::{
    AutoApprove, EgressSettings, HookSettings, Limits, ToolsSettings, WorkspaceSettings,
};
pub use tool_set::{ModelFacts, ToolSet};

/// The parsed settings file.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Auto-approval per category.
    pub auto_approve: AutoApprove,
    /// Host limits.
    pub limits: Limits,
    /// Hook discovery.
    pub hooks: HookSettings,
    /// Where plugins run and what isolated ones are granted (`[plugins]`).
    pub plugins: PluginsSettings,
    /// The workspace's roots (`[workspace]`).
    pub workspace: WorkspaceSettings,
    /// The tool set served (`[tools]`).
    pub tools: ToolsSettings,
    /// Where connections may go (`[egress]`).
    pub egress: EgressSettings,
    /// The whole file as JSON, for tools' `setting` lookups.
    raw: Value,
    /// Where the settings came from, if from a file.
    pub source: Option<PathBuf>,
}

/// An XDG base directory: `$variable` when it is an absolute path, else `~/in_home`
/// (`XDG_CONFIG_HOME` and `.config`, say); `None` without either.
pub fn xdg_base(variable: &str, in_home: &str) -> Option<PathBuf> {
    std::env::var_os(variable)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(in_home)))
}

/// toolhost's configuration directory: `$XDG_CONFIG_HOME/toolhost`, else
/// `~/.config/toolhost` (settings, trusted hooks, tokens the user keeps there).
pub fn config_dir() -> Option<PathBuf> {
    Some(xdg_base("XDG_CONFIG_HOME", ".config")?.join("toolhost"))
}

/// The variable that names the trust file of workspace hook scripts when the settings do not.
pub const TRUST_FILE_ENV: &str = "TOOLHOST_TRUSTED_HOOKS";

/// Where the trust in workspace hook scripts is kept: `[hooks] trust_file`, else
/// `$TOOLHOST_TRUSTED_HOOKS`, else the configuration directory's `trusted-hooks.json`.
pub fn trust_file(hooks: &HookSettings) -> Option<PathBuf> {
    if let Some(file) = &hooks.trust_file {
        return Some(file.clone());
    }
    if let Some(file) = std::env::var_os(TRUST_FILE_ENV).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(file));
    }
    Some(config_dir()?.join("trusted-hooks.json"))
}

impl Settings {
    /// The default settings file location, if a home or config directory is known.
    pub fn default_path() -> Option<PathBuf> {
        if let Some(path) = std::env::var_os("TOOLHOST_SETTINGS") {
            return Some(PathBuf::from(path));
        }
        Some(config_dir()?.join("settings.toml"))
    }

    /// Loads `explicit`, or the default location. A missing default file means defaults;
    /// a missing explicit file is an error.
    pub fn load(explicit: Option<&Path>) -> Result<Self, SettingsError> {
        match explicit {
            Some(path) => Self::from_file(path),
            None => match Self::default_path() {
                Some(path) if path.exists() => Self::from_file(&path),
                _ => Ok(Self::default()),
            },
        }
    }

    /// Parses a settings file. Its warnings (misspelled keys) are logged once per process; a
    /// configured hooks directory that does not exist is an error.
    pub fn from_file(path: &Path) -> Result<Self, SettingsError> {
        let text = std::fs::read_to_string(path).map_err(|source| SettingsError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let (mut settings, warnings) =
            Self::parse(&text).map_err(|source| SettingsError::Parse {
                path: path.to_path_buf(),
                source: Box::new(source),
            })?;
        for warning in warnings {
            keys::warn_once(format!("settings file {}: {warning}", path.display()));
        }
        if let Some(dir) = &settings.hooks.dir {
            tool_api::sdk::paths::existing_dir("hooks.dir", dir).map_err(|reason| {
                SettingsError::Unusable {
                    path: path.to_path_buf(),
                    source: Box::new(InvalidSettings::Path {
                        key: "hooks.dir",
                        reason,
                    }),
                }
            })?;
        }
        settings.source = Some(path.to_path_buf());
        Ok(settings)
    }

    /// Parses settings from TOML text (warnings are logged once per process).
    pub fn from_toml(text: &str) -> Result<Self, InvalidSettings> {
        let (settings, warnings) = Self::parse(text)?;
        for warning in warnings {
            keys::warn_once(format!("settings: {warning}"));
        }
        Ok(settings)
    }

    /// Parses settings from TOML text; also returns what to warn about.
    fn parse(text: &str) -> Result<(Self, Vec<String>), InvalidSettings> {
        let table: toml::Table = text.parse()?;
        let raw = serde_json::to_value(&table)?;
        let section = |name: &str| {
            raw.get(name)
                .cloned()
                .unwrap_or(Value::Object(Default::default()))
        };
        let warnings = keys::check(&raw)?;
        let auto_approve: AutoApprove = typed(section("auto_approve"), "auto_approve")?;
        let limits: Limits = typed(section("limits"), "limits")?;
        let mut hooks: HookSettings = typed(section("hooks"), "hooks")?;
        let path = |key: &'static str| {
            let value = key.split('.').try_fold(&raw, |value, part| value.get(part));
            tool_api::sdk::paths::setting_path(key, value)
                .map_err(|reason| InvalidSettings::Path { key, reason })
        };
        hooks.dir = path("hooks.dir")?;
        hooks.trust_file = path("hooks.trust_file")?;
        let plugins = PluginsSettings::from_section(&section("plugins"))?;
        let workspace: WorkspaceSettings = typed(section("workspace"), "workspace")?;
        workspace.root_specs()?;
        let egress: EgressSettings = typed(section("egress"), "egress")?;
        let tools: ToolsSettings = typed(section("tools"), "tools")?;
        if let Some(set) = &tools.set {
            ToolSet::parse(set).map_err(|reason| InvalidSettings::Value {
                key: "tools.set",
                reason,
            })?;
        }
        let settings = Self {
            auto_approve,
            limits,
            hooks,
            plugins,
            workspace,
            tools,
            egress,
            raw,
            source: None,
        };
        Ok((settings, warnings))
    }

    /// The whole settings document, as JSON (what plugins serving run-time tools receive).
    pub fn document(&self) -> &Value {
        &self.raw
    }

    /// A value by dotted key (`model.supports_images`), as JSON.
    pub fn lookup(&self, key: &str) -> Option<&Value> {
        key.split('.')
            .try_fold(&self.raw, |value, part| value.get(part))
    }
}

/// A typed section from its JSON; an error names the section.
fn typed<T: serde::de::DeserializeOwned>(
    value: Value,
    section: &str,
) -> Result<T, InvalidSettings> {
    serde_json::from_value(value).map_err(|source| InvalidSettings::Section {
        section: section.to_string(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_approve_only_reads() {
        let s = Settings::from_toml("").unwrap_or_default();
        assert_eq!(s.auto_approve, AutoApprove::default());
        assert!(s.auto_approve.read_files && !s.auto_approve.edit_files);
    }

    #[test]
    fn sections_and_dotted_lookups() {
        let s = Settings::from_toml(
            "[auto_approve]\nedit_files = true\n[model]\nsupports_images = false\n",
        )
        .unwrap_or_default();
        assert!(s.auto_approve.edit_files);
        assert_eq!(s.lookup("model.supports_images"), Some(&Value::Bool(false)));
        assert_eq!(s.lookup("model.nope"), None);
    }

    #[test]
    fn hooks_name_their_trust_file() {
        let s = Settings::from_toml("[hooks]\ntrust_file = \"/etc/toolhost/trusted-hooks.json\"\n")
            .unwrap_or_default();
        assert_eq!(
            s.hooks.trust_file.as_deref(),
            Some(Path::new("/etc/toolhost/trusted-hooks.json"))
        );
        assert!(s.hooks.enabled);
    }

    #[test]
    fn unknown_approval_keys_are_errors() {
        let err = Settings::from_toml("[auto_approve]\nedit_file = true\n")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("edit_file"), "{err}");
    }

    #[test]
    fn errors_say_what_is_wrong_and_where() {
        let unknown = Settings::from_toml("[plugins.read_file]\nnetwrk = true\n").err();
        assert!(
            matches!(
                &unknown,
                Some(InvalidSettings::UnknownKey { section, unknown })
                    if section == "plugins.read_file"
                        && unknown.nearest.as_deref() == Some("network")
            ),
            "{unknown:?}"
        );
        let wrong = Settings::from_toml("[limits]\ncall_timeout_secs = \"soon\"\n").err();
        assert!(
            matches!(&wrong, Some(InvalidSettings::Section { section, .. }) if section == "limits"),
            "{wrong:?}"
        );
        let path = Settings::from_toml("[hooks]\ndir = \"${env:\"\n").err();
        assert!(
            matches!(
                &path,
                Some(InvalidSettings::Path {
                    key: "hooks.dir",
                    ..
                })
            ),
            "{path:?}"
        );
        let toml = Settings::from_toml("[limits\n").err();
        assert!(matches!(&toml, Some(InvalidSettings::Toml(_))), "{toml:?}");
    }
}
