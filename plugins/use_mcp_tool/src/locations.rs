//! Where the MCP settings file is.
//!
//! The setting `mcp.settings_file` (`~` and `${env:NAME}` expanded), which must name an
//! existing file. Without it, the first of these that exists, so that the servers Cline is
//! configured with are found without configuring anything:
//!
//! 1. toolhost's own: `$XDG_CONFIG_HOME/toolhost/cline_mcp_settings.json` (else
//!    `~/.config/toolhost/…`);
//! 2. the Cline CLI's: `$CLINE_MCP_SETTINGS_PATH`, else
//!    `$CLINE_DATA_DIR/settings/cline_mcp_settings.json`, else
//!    `$CLINE_DIR/data/settings/…`, else `~/.cline/data/settings/…` (as Cline's
//!    `resolveMcpSettingsPath` resolves it);
//! 3. the VS Code extension's global storage (`saoudrizwan.claude-dev/settings/…`) of VS Code,
//!    VS Code Insiders, VSCodium, Cursor and Windsurf: `$XDG_CONFIG_HOME/<app>/User/globalStorage`
//!    (else `~/.config/…`) on Linux, `~/Library/Application Support/<app>/User/globalStorage` on
//!    macOS.
//!
//! When none exists, toolhost's own path is used (no servers until it is written).

use std::path::PathBuf;

use serde_json::Value;
use tool_api::sdk::paths;

/// The settings key.
pub const KEY: &str = "mcp.settings_file";

/// The file name, in every location.
const FILE_NAME: &str = "cline_mcp_settings.json";

/// The Cline extension's id, the name of its global storage directory.
const EXTENSION_ID: &str = "saoudrizwan.claude-dev";

/// The VS Code family, by the name of their user data directory.
const EDITORS: [&str; 5] = ["Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf"];

/// The MCP settings file for the value of `mcp.settings_file` (absent: found, see the module
/// documentation). A configured file that does not exist is an error naming the key.
pub fn settings_file(setting: Option<&Value>) -> Result<PathBuf, String> {
    if let Some(file) = paths::setting_path(KEY, setting)? {
        paths::existing_file(KEY, &file)?;
        return Ok(file);
    }
    let candidates = candidates();
    Ok(candidates
        .iter()
        .find(|file| file.is_file())
        .or(candidates.first())
        .cloned()
        .unwrap_or_else(|| PathBuf::from(FILE_NAME)))
}

/// The user's configuration directory: `$XDG_CONFIG_HOME` (when absolute), else `~/.config`.
fn config_dir() -> Option<PathBuf> {
    env_path("XDG_CONFIG_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| env_path("HOME").map(|h| h.join(".config")))
}

/// toolhost's configuration directory (the host's too, masked from every command it runs).
pub fn toolhost_config_dir() -> Option<PathBuf> {
    config_dir().map(|dir| dir.join("toolhost"))
}

/// Every place looked in, in order (toolhost's own first).
pub fn candidates() -> Vec<PathBuf> {
    let home = env_path("HOME");
    let config = config_dir();
    let mut found = Vec::new();
    found.extend(toolhost_config_dir().map(|dir| dir.join(FILE_NAME)));
    found.extend(cline_cli(home.as_ref()));
    let storages = config.iter().cloned().chain(
        home.iter()
            .filter(|_| cfg!(target_os = "macos"))
            .map(|h| h.join("Library/Application Support")),
    );
    for base in storages {
        for editor in EDITORS {
            found.push(
                base.join(editor)
                    .join("User/globalStorage")
                    .join(EXTENSION_ID)
                    .join("settings")
                    .join(FILE_NAME),
            );
        }
    }
    found
}

/// The Cline CLI's file, as its `resolveMcpSettingsPath` finds it.
fn cline_cli(home: Option<&PathBuf>) -> Option<PathBuf> {
    if let Some(file) = env_path("CLINE_MCP_SETTINGS_PATH") {
        return Some(file);
    }
    let data = env_path("CLINE_DATA_DIR").or_else(|| {
        env_path("CLINE_DIR")
            .or_else(|| home.map(|h| h.join(".cline")))
            .map(|dir| dir.join("data"))
    })?;
    Some(data.join("settings").join(FILE_NAME))
}

/// A variable's value as a path, when it is set and not blank.
fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}
