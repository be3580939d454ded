//! What git's own files say: where a `.git` file or `commondir` points, a configuration's
//! `core.hooksPath`, and where the user's configuration is.

use std::path::{Path, PathBuf};

use super::paths::normalize;

/// The path a `.git` file (`gitdir: PATH`) or a `commondir` file (`PATH`) names, relative to
/// the file's directory.
pub(super) fn pointed_at(file: &Path, prefix: &str) -> Option<PathBuf> {
    let text = std::fs::read_to_string(file).ok()?;
    let value = text.lines().next()?.trim().strip_prefix(prefix)?.trim();
    if value.is_empty() {
        return None;
    }
    let base = file.parent()?;
    Some(normalize(&base.join(value)))
}

/// `core.hooksPath` of a git configuration text. Read by hand because this is the one key
/// needed and a configuration library would be most of this crate; `include` files are not
/// followed (the repository's configuration is read-only to commands, so a value here cannot
/// be changed by one).
pub(super) fn hooks_path(config: &str) -> Option<String> {
    let mut in_core = false;
    let mut value = None;
    for line in config.lines() {
        let line = line.trim();
        if let Some(section) = line.strip_prefix('[') {
            let name = section.split([']', ' ', '"']).next().unwrap_or_default();
            in_core = name.eq_ignore_ascii_case("core");
            continue;
        }
        if !in_core {
            continue;
        }
        let Some((key, rest)) = line.split_once('=') else {
            continue;
        };
        if key.trim().eq_ignore_ascii_case("hookspath") {
            let rest = rest.split(['#', ';']).next().unwrap_or_default().trim();
            value = Some(rest.trim_matches('"').to_string());
        }
    }
    value.filter(|v| !v.is_empty())
}

/// The user's own git configuration files.
pub(super) fn user_git_configs() -> Vec<PathBuf> {
    let mut configs = Vec::new();
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from) {
        configs.push(home.join(".gitconfig"));
        let xdg = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| home.join(".config"));
        configs.push(xdg.join("git/config"));
    }
    configs
}
