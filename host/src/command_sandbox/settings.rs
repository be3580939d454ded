//! The sandbox keys of the settings section of the tool that asks for a sandbox (the tool
//! sends its section with each request).

use serde::Deserialize;
use serde_json::Value;
use toolhost_sandbox::FilesystemMode;

use super::env_scrub;
use super::error::SettingsError;
use super::read_profile::ReadProfile;

/// How sandboxed commands reach the network (`network`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network {
    /// `false` / `"off"`: not at all (no proxy either).
    Off,
    /// `"proxy"` (default): only through the host's egress proxy, under `[egress]`.
    Proxy,
    /// `true` / `"direct"`: directly, anywhere (the sandbox keeps no network of its own).
    Direct,
}

impl Network {
    /// The setting's name for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Proxy => "proxy",
            Self::Direct => "direct",
        }
    }
}

impl<'de> Deserialize<'de> for Network {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Switch(bool),
            Name(String),
        }
        match Written::deserialize(deserializer)? {
            Written::Switch(true) => Ok(Self::Direct),
            Written::Switch(false) => Ok(Self::Off),
            Written::Name(name) => match name.as_str() {
                "off" => Ok(Self::Off),
                "proxy" => Ok(Self::Proxy),
                "direct" => Ok(Self::Direct),
                other => Err(serde::de::Error::custom(format!(
                    "network = \"{other}\" is not a network setting: \"proxy\" (the default: \
                     through the egress proxy), \"off\" (false) or \"direct\" (true)"
                ))),
            },
        }
    }
}

/// The sandbox keys of a tool's settings section.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct SandboxSettings {
    /// `off`, `read-only` or `workspace-write`.
    pub sandbox: FilesystemMode,
    /// How commands reach the network.
    pub network: Network,
    /// More writable roots (`~` expanded).
    pub writable_roots: Vec<String>,
    /// Whether what `.clineignore` blocks is hidden from commands.
    pub mask_ignored: bool,
    /// Whether a command is refused when a part of the sandbox cannot be had.
    pub sandbox_required: bool,
    /// Processes a command may have at once.
    pub max_processes: u64,
    /// Memory a command may use, in MiB (all of its processes where a cgroup can be made,
    /// else each of them).
    pub max_memory_mb: u64,
    /// Size of each of a command's private temporary directories, in MiB.
    pub max_tmp_mb: u64,
    /// Whether the git repositories below the writable roots are guarded.
    pub git_guard: bool,
    /// Whether a repository whose history holds files `.clineignore` blocks has its objects
    /// hidden from commands.
    pub hide_committed_ignored: bool,
    /// More paths no command reads, besides the default list (`~` expanded; `*` and `?`
    /// match within one name).
    pub deny_read: Vec<String>,
    /// Paths of the deny-read list commands may read after all: a glob matching a listed
    /// path or a directory above it.
    pub allow_read: Vec<String>,
    /// What commands may read: everything but the deny-read list, or only the workspace, the
    /// system and the toolchains.
    pub read: ReadProfile,
    /// Variables commands keep although their names look like secrets (exact names).
    pub env_keep: Vec<String>,
    /// The settings section the keys came from, as messages name it.
    #[serde(skip)]
    pub section: String,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        Self {
            sandbox: FilesystemMode::WorkspaceWrite,
            network: Network::Proxy,
            writable_roots: Vec::new(),
            mask_ignored: true,
            sandbox_required: false,
            max_processes: 2048,
            max_memory_mb: 4096,
            max_tmp_mb: 1024,
            git_guard: true,
            hide_committed_ignored: true,
            deny_read: Vec::new(),
            allow_read: Vec::new(),
            read: ReadProfile::All,
            env_keep: Vec::new(),
            section: "sandbox".to_string(),
        }
    }
}

impl SandboxSettings {
    /// The sandbox keys of a `sandbox.wrap_command` request: `settings` is the asking tool's
    /// settings section (its other keys are the tool's and are ignored here), `section` its
    /// name.
    pub fn from_request(request: &Value) -> Result<Self, SettingsError> {
        let section_name = request["section"].as_str().unwrap_or("sandbox").to_string();
        Self::from_section(&request["settings"], &section_name)
    }

    /// The sandbox keys of the settings section `section` named `section_name`.
    pub fn from_section(section: &Value, section_name: &str) -> Result<Self, SettingsError> {
        let mut keys = serde_json::Map::new();
        for key in [
            "sandbox",
            "network",
            "writable_roots",
            "mask_ignored",
            "sandbox_required",
            "max_processes",
            "max_memory_mb",
            "max_tmp_mb",
            "git_guard",
            "hide_committed_ignored",
            "deny_read",
            "allow_read",
            "read",
            "env_keep",
        ] {
            if let Some(value) = section.get(key) {
                keys.insert(key.to_string(), value.clone());
            }
        }
        let mut settings: Self =
            serde_json::from_value(Value::Object(keys)).map_err(|e| SettingsError::Invalid {
                section: section_name.to_string(),
                message: e.to_string(),
            })?;
        settings.section = section_name.to_string();
        for name in &settings.env_keep {
            if let Some(pattern) = env_scrub::own_pattern(name) {
                return Err(SettingsError::OwnVariableKept {
                    section: settings.section.clone(),
                    name: name.clone(),
                    pattern: pattern.to_string(),
                });
            }
        }
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn settings_have_defaults_and_are_checked() {
        let s = SandboxSettings::from_request(&json!({})).unwrap_or_default();
        assert_eq!(s, SandboxSettings::default());
        assert_eq!(s.sandbox, FilesystemMode::WorkspaceWrite);
        let s = SandboxSettings::from_request(&json!({"section": "tool", "settings": {
            "sandbox": "read-only", "network": false, "output_line_limit": 10}}))
        .unwrap_or_default();
        assert_eq!(s.sandbox, FilesystemMode::ReadOnly);
        assert_eq!(s.network, Network::Off);
        assert_eq!(SandboxSettings::default().network, Network::Proxy);
        for (written, network) in [
            (json!(true), Network::Direct),
            (json!("direct"), Network::Direct),
            (json!("proxy"), Network::Proxy),
            (json!("off"), Network::Off),
        ] {
            let s = SandboxSettings::from_request(&json!({"settings": {"network": written}}));
            assert_eq!(s.map(|s| s.network).ok(), Some(network));
        }
        let wrong = SandboxSettings::from_request(&json!({"settings": {"network": "open"}}));
        assert!(wrong
            .err()
            .is_some_and(|e| e.to_string().contains("\"proxy\"")));
        assert!(matches!(
            SandboxSettings::from_request(&json!({"settings": {"sandbox": "strict"}})),
            Err(SettingsError::Invalid { .. })
        ));
        let s = SandboxSettings::from_request(&json!({"settings": {
            "read": "workspace", "deny_read": ["~/notes"], "env_keep": ["GH_TOKEN"]}}))
        .unwrap_or_default();
        assert_eq!(s.read, ReadProfile::Workspace);
        assert_eq!(s.deny_read, ["~/notes"]);
        assert_eq!(s.env_keep, ["GH_TOKEN"]);
        let own = SandboxSettings::from_request(&json!({"section": "execute_command",
            "settings": {"env_keep": ["TOOLHOST_MCP_TOKEN"]}}));
        assert_eq!(
            own.err().map(|e| e.to_string()).unwrap_or_default(),
            "The setting execute_command.env_keep names TOOLHOST_MCP_TOKEN, one of toolhost's \
             own variables (TOOLHOST_*), which no command gets."
        );
    }
}
