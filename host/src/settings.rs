//! The settings file: approval defaults, limits and anything tools look up by key.
//!
//! Where it is read from, first match wins: `--settings FILE`, `$TOOLHOST_SETTINGS`,
//! `$XDG_CONFIG_HOME/toolhost/settings.toml`, `~/.config/toolhost/settings.toml`. No file means
//! the defaults below. The format is TOML; tools read any key through the `setting` host service
//! (dotted keys, e.g. `model.supports_images`).
//!
//! Path-valued keys have `~` and `${env:NAME}` expanded ([`tool_api::sdk::paths`], the
//! helper the tools use for theirs); a configured directory to read that does not exist is an
//! error naming the key; misspelled keys of the host's own sections are named ([`keys`]).

mod keys;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which approval categories are granted without asking (Cline's auto-approval settings).
///
/// The defaults differ from Cline's on purpose: only reads inside the workspace are
/// auto-approved, because with no terminal nobody could see what else ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AutoApprove {
    /// Read files inside the workspace.
    pub read_files: bool,
    /// Also read files outside it (only together with `read_files`).
    pub read_files_externally: bool,
    /// Create and change files inside the workspace.
    pub edit_files: bool,
    /// Also outside it (only together with `edit_files`).
    pub edit_files_externally: bool,
    /// Run commands the model marks as safe.
    pub execute_safe_commands: bool,
    /// Run any command (only together with `execute_safe_commands`).
    pub execute_all_commands: bool,
    /// Drive the browser.
    pub use_browser: bool,
    /// Fetch and search the web.
    pub use_web: bool,
    /// Use MCP servers.
    pub use_mcp: bool,
    /// Tell the user when an auto-approved command is still running after a while (Cline's
    /// `enableNotifications`; the tool reads it).
    pub enable_notifications: bool,
}

impl Default for AutoApprove {
    fn default() -> Self {
        Self {
            read_files: true,
            read_files_externally: false,
            edit_files: false,
            edit_files_externally: false,
            execute_safe_commands: false,
            execute_all_commands: false,
            use_browser: false,
            use_web: false,
            use_mcp: false,
            enable_notifications: false,
        }
    }
}

/// Limits the host enforces on every call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// A call still running after this many seconds is cancelled and reported as timed out.
    pub call_timeout_secs: u64,
    /// Consecutive mistakes after which the task is stopped (Cline's default: 3).
    pub max_consecutive_mistakes: u32,
    /// The largest JSON-RPC message `toolhost mcp` accepts, in bytes (a larger one is answered
    /// with an error and skipped).
    pub max_request_bytes: u64,
    /// How long a question to the user of a client (an MCP elicitation, a `serve --ask`
    /// question) waits for its answer, in seconds; unanswered, it is withdrawn and counts as
    /// declined (an approval is a denial).
    pub ask_timeout_secs: u64,
    /// `mcp --http`: how long a client may take to send a request's headers, in seconds (also
    /// how long an idle keep-alive connection stays open); slower, the connection is closed.
    pub header_timeout_secs: u64,
    /// `mcp --http`: connections open at once; beyond it the oldest connection that has not
    /// yet sent an authorized request is closed to make room, else the new one is refused.
    pub max_connections: u32,
    /// `mcp --http`: connections open at once from one peer address, likewise.
    pub max_connections_per_peer: u32,
    /// `mcp --http`: sessions open at once for the bearer token; a new one beyond it ends the
    /// session idle the longest (one with no call running).
    pub max_sessions: u32,
}

/// A hundred years: a longer limit is never, and would overflow a deadline.
const NEVER_SECS: u64 = 100 * 365 * 24 * 3600;

impl Limits {
    /// How long a handler may run before its call is given up (at least a second).
    pub fn call_timeout(&self) -> Duration {
        Duration::from_secs(self.call_timeout_secs.clamp(1, NEVER_SECS))
    }

    /// How long a question waits for its answer (at least a second).
    pub fn ask_timeout(&self) -> Duration {
        Duration::from_secs(self.ask_timeout_secs.clamp(1, NEVER_SECS))
    }

    /// How long an HTTP client may take to send a request's headers (at least a second).
    pub fn header_timeout(&self) -> Duration {
        Duration::from_secs(self.header_timeout_secs.clamp(1, NEVER_SECS))
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            call_timeout_secs: 900,
            max_consecutive_mistakes: 3,
            max_request_bytes: 16 * 1024 * 1024,
            ask_timeout_secs: 600,
            header_timeout_secs: 10,
            max_connections: 512,
            // A local client's sessions all come from 127.0.0.1, each with an event stream
            // and a request open: twice the sessions.
            max_connections_per_peer: 128,
            max_sessions: 64,
        }
    }
}

/// Where hook scripts come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HookSettings {
    /// Whether PreToolUse/PostToolUse hooks run at all.
    pub enabled: bool,
    /// An extra directory searched first (like Cline's `--hooks-dir`).
    pub dir: Option<PathBuf>,
    /// Where the trusted workspace hook scripts are kept (see [`crate::hooks::trust`]);
    /// default `$TOOLHOST_TRUSTED_HOOKS`, else `~/.config/toolhost/trusted-hooks.json`.
    pub trust_file: Option<PathBuf>,
}

impl Default for HookSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            dir: None,
            trust_file: None,
        }
    }
}

/// The workspace's roots when the command line names none (`[workspace] roots`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkspaceSettings {
    /// The roots, the primary first: each `PATH` (named after its directory) or `NAME=PATH`,
    /// with `~` and `${env:NAME}` expanded.
    pub roots: Vec<String>,
}

impl WorkspaceSettings {
    /// The roots the settings name, expanded; empty when none.
    pub fn root_specs(&self) -> Result<Vec<tool_api::workspace::RootSpec>, String> {
        use tool_api::workspace::RootSpec;
        self.roots
            .iter()
            .map(|entry| {
                let (name, path) = match entry.split_once('=') {
                    Some((name, path)) if !name.contains('/') => (Some(name), path),
                    _ => (None, entry.as_str()),
                };
                let path = tool_api::sdk::paths::expand(path)
                    .map_err(|e| format!("workspace.roots: {e}"))?;
                tool_api::sdk::paths::existing_dir("workspace.roots", &path)?;
                Ok(match name {
                    Some(name) => RootSpec::named(name, path),
                    None => RootSpec::unnamed(path),
                })
            })
            .collect()
    }
}

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
    pub plugins: crate::plugins::isolation::PluginsSettings,
    /// The workspace's roots (`[workspace]`).
    pub workspace: WorkspaceSettings,
    /// The whole file as JSON, for tools' `setting` lookups.
    raw: Value,
    /// Where the settings came from, if from a file.
    pub source: Option<PathBuf>,
}

/// A settings file that could not be read or parsed.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The file exists but cannot be read.
    #[error("cannot read settings file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML or has a wrong value.
    #[error("invalid settings file {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A path the file configures cannot be used (it does not exist, say).
    #[error("settings file {path}: {message}")]
    Unusable {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the key.
        message: String,
    },
}

/// toolhost's configuration directory: `$XDG_CONFIG_HOME/toolhost`, else
/// `~/.config/toolhost` (settings, trusted hooks, tokens the user keeps there).
pub fn config_dir() -> Option<PathBuf> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(config.join("toolhost"))
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
            Self::parse(&text).map_err(|message| SettingsError::Parse {
                path: path.to_path_buf(),
                message,
            })?;
        for warning in warnings {
            keys::warn_once(format!("settings file {}: {warning}", path.display()));
        }
        if let Some(dir) = &settings.hooks.dir {
            tool_api::sdk::paths::existing_dir("hooks.dir", dir).map_err(|message| {
                SettingsError::Unusable {
                    path: path.to_path_buf(),
                    message,
                }
            })?;
        }
        settings.source = Some(path.to_path_buf());
        Ok(settings)
    }

    /// Parses settings from TOML text (warnings are logged once per process).
    pub fn from_toml(text: &str) -> Result<Self, String> {
        let (settings, warnings) = Self::parse(text)?;
        for warning in warnings {
            keys::warn_once(format!("settings: {warning}"));
        }
        Ok(settings)
    }

    /// Parses settings from TOML text; also returns what to warn about.
    fn parse(text: &str) -> Result<(Self, Vec<String>), String> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
        let raw = serde_json::to_value(&table).map_err(|e| e.to_string())?;
        let section = |name: &str| {
            raw.get(name)
                .cloned()
                .unwrap_or(Value::Object(Default::default()))
        };
        let warnings = keys::check(&raw)?;
        let auto_approve = serde_json::from_value(section("auto_approve"))
            .map_err(|e| format!("[auto_approve]: {e}"))?;
        let limits =
            serde_json::from_value(section("limits")).map_err(|e| format!("[limits]: {e}"))?;
        let mut hooks: HookSettings =
            serde_json::from_value(section("hooks")).map_err(|e| format!("[hooks]: {e}"))?;
        let path = |key: &str| {
            let value = key.split('.').try_fold(&raw, |value, part| value.get(part));
            tool_api::sdk::paths::setting_path(key, value)
        };
        hooks.dir = path("hooks.dir")?;
        hooks.trust_file = path("hooks.trust_file")?;
        let plugins =
            crate::plugins::isolation::PluginsSettings::from_section(&section("plugins"))?;
        let workspace: WorkspaceSettings = serde_json::from_value(section("workspace"))
            .map_err(|e| format!("[workspace]: {e}"))?;
        workspace.root_specs()?;
        let settings = Self {
            auto_approve,
            limits,
            hooks,
            plugins,
            workspace,
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
            .unwrap_or_default();
        assert!(err.contains("edit_file"), "{err}");
    }
}
