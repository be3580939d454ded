//! The sandbox keys of the settings section of the tool that asks for a sandbox (the tool
//! sends its section with each request).

use serde::Deserialize;
use serde_json::Value;
use toolhost_sandbox::FilesystemMode;

/// The sandbox keys of a tool's settings section.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct SandboxSettings {
    /// `off`, `read-only` or `workspace-write`.
    pub sandbox: FilesystemMode,
    /// Whether commands reach the network.
    pub network: bool,
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
    /// The settings section the keys came from, as messages name it.
    #[serde(skip)]
    pub section: String,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        Self {
            sandbox: FilesystemMode::WorkspaceWrite,
            network: true,
            writable_roots: Vec::new(),
            mask_ignored: true,
            sandbox_required: false,
            max_processes: 2048,
            max_memory_mb: 4096,
            max_tmp_mb: 1024,
            git_guard: true,
            hide_committed_ignored: true,
            section: "sandbox".to_string(),
        }
    }
}

impl SandboxSettings {
    /// The sandbox keys of a `sandbox.wrap_command` request: `settings` is the asking tool's
    /// settings section (its other keys are the tool's and are ignored here), `section` its
    /// name.
    pub fn from_request(request: &Value) -> Result<Self, String> {
        let section_name = request["section"].as_str().unwrap_or("sandbox").to_string();
        let section = &request["settings"];
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
        ] {
            if let Some(value) = section.get(key) {
                keys.insert(key.to_string(), value.clone());
            }
        }
        let mut settings: Self = serde_json::from_value(Value::Object(keys))
            .map_err(|e| format!("[{section_name}]: {e}"))?;
        settings.section = section_name;
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
        assert!(!s.network);
        assert!(
            SandboxSettings::from_request(&json!({"settings": {"sandbox": "strict"}})).is_err()
        );
    }
}
