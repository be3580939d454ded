//! The files and directories no sandboxed command reads: the default list (`deny_read.txt`,
//! SSH and GPG keys, cloud, git and registry credentials, password stores, browser profiles,
//! shell histories, toolhost's and Cline's settings and tokens), the `deny_read` setting's
//! additions and the `allow_read` setting's exceptions. Each path found is masked as
//! `.clineignore`d files are.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;
use toolhost_sandbox::wildcard_match;

use super::error::PolicyError;
use super::settings::SandboxSettings;
use super::table;

/// The default list, kept as data: `path | category | what it holds`.
const TABLE: &str = include_str!("deny_read.txt");

/// The category of the entries the `deny_read` setting adds.
const SETTING_CATEGORY: &str = "setting";

/// One entry of the deny-read list and what it names on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DenyEntry {
    /// The path as written (`~/.ssh`, `~/.*_history`).
    pub path: String,
    /// What kind of secret (`ssh`, `cloud`, `history`, ...; `setting` for `deny_read`'s).
    pub category: String,
    /// What it holds.
    pub what: String,
    /// The paths it names that exist and are hidden.
    pub hidden: Vec<PathBuf>,
    /// The paths it names that exist and that `allow_read` lets commands read.
    pub allowed: Vec<PathBuf>,
}

/// The default list: `(path, category, what)`.
pub fn defaults() -> Vec<[&'static str; 3]> {
    table::rows(TABLE).map(|row| table::three(&row)).collect()
}

/// The deny-read list of `settings` (the defaults, then `deny_read`'s), each entry with the
/// paths it names here. A default entry is skipped when `~` has no meaning (no `HOME`); a
/// setting that cannot be expanded is an error naming it.
pub(super) fn entries(settings: &SandboxSettings) -> Result<Vec<DenyEntry>, PolicyError> {
    let allow: Vec<PathBuf> = settings
        .allow_read
        .iter()
        .map(|glob| expand(glob, &format!("{}.allow_read", settings.section)))
        .collect::<Result<_, _>>()?;
    let mut entries = Vec::new();
    for [path, category, what] in defaults() {
        let Ok(pattern) = tool_api::sdk::paths::expand(path) else {
            continue;
        };
        entries.push(entry(path, category, what, &pattern, &allow));
    }
    let key = format!("{}.deny_read", settings.section);
    for glob in &settings.deny_read {
        let pattern = expand(glob, &key)?;
        entries.push(entry(glob, SETTING_CATEGORY, &key, &pattern, &allow));
    }
    Ok(entries)
}

/// The paths of `entries` to hide, refused when one holds a workspace root (hiding it would
/// hide the workspace).
pub(super) fn hidden_paths(
    entries: &[DenyEntry],
    roots: &[PathBuf],
    section: &str,
) -> Result<Vec<PathBuf>, PolicyError> {
    let mut hidden = Vec::new();
    for entry in entries {
        for path in &entry.hidden {
            let real = path.canonicalize().unwrap_or_else(|_| path.clone());
            if let Some(root) = roots.iter().find(|root| root.starts_with(&real)) {
                let key = if entry.category == SETTING_CATEGORY {
                    format!("{section}.deny_read")
                } else {
                    format!("the deny-read list (set {section}.allow_read to let it be read)")
                };
                return Err(PolicyError::HidesWorkspace {
                    key,
                    path: path.clone(),
                    root: root.clone(),
                });
            }
            hidden.push(path.clone());
        }
    }
    Ok(hidden)
}

fn expand(glob: &str, key: &str) -> Result<PathBuf, PolicyError> {
    let unusable = |why: String| PolicyError::UnusablePath {
        key: key.to_string(),
        value: glob.to_string(),
        why,
    };
    let path = tool_api::sdk::paths::expand(glob).map_err(unusable)?;
    if !path.is_absolute() {
        return Err(unusable(
            "it is not an absolute path (start it with `/` or `~/`)".to_string(),
        ));
    }
    Ok(path)
}

fn entry(path: &str, category: &str, what: &str, pattern: &Path, allow: &[PathBuf]) -> DenyEntry {
    let (allowed, hidden) = matching(pattern)
        .into_iter()
        .partition(|found| allow.iter().any(|a| covers(a, found)));
    DenyEntry {
        path: path.to_string(),
        category: category.to_string(),
        what: what.to_string(),
        hidden,
        allowed,
    }
}

/// Whether the `allow_read` glob `allow` lets `path` be read: it matches the path or a
/// directory above it, name by name.
pub(super) fn covers(allow: &Path, path: &Path) -> bool {
    let allow: Vec<Component<'_>> = allow.components().collect();
    let path: Vec<Component<'_>> = path.components().collect();
    allow.len() <= path.len()
        && allow.iter().zip(&path).all(|(a, p)| {
            let (a, p) = (
                a.as_os_str().to_string_lossy(),
                p.as_os_str().to_string_lossy(),
            );
            wildcard_match(&a, &p, false)
        })
}

/// The existing paths `pattern` names: its names with `*` or `?` are matched against the
/// directory entries found so far, the others taken as they are.
fn matching(pattern: &Path) -> Vec<PathBuf> {
    let mut found = vec![PathBuf::new()];
    for component in pattern.components() {
        let name = component.as_os_str().to_string_lossy();
        if !name.contains(['*', '?']) {
            found.iter_mut().for_each(|p| p.push(component));
            continue;
        }
        found = found
            .iter()
            .filter_map(|dir| std::fs::read_dir(dir).ok().map(|entries| (dir, entries)))
            .flat_map(|(dir, entries)| {
                let mut names: Vec<PathBuf> = entries
                    .flatten()
                    .filter(|e| wildcard_match(&name, &e.file_name().to_string_lossy(), false))
                    .map(|e| dir.join(e.file_name()))
                    .collect();
                names.sort();
                names
            })
            .collect();
    }
    found.retain(|p| p.exists());
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_list_is_well_formed() {
        let list = defaults();
        assert!(list.len() > 30, "{list:?}");
        for [path, category, what] in &list {
            assert!(path.starts_with("~/"), "{path}");
            assert!(!category.is_empty() && !what.is_empty(), "{path}");
        }
        let categories: Vec<&str> = list.iter().map(|[_, c, _]| *c).collect();
        for needed in [
            "ssh",
            "gpg",
            "cloud",
            "git",
            "registry",
            "passwords",
            "browser",
            "history",
            "toolhost",
            "cline",
        ] {
            assert!(categories.contains(&needed), "{needed}");
        }
    }

    #[test]
    fn patterns_match_names_and_allow_read_matches_directories_above() {
        let Ok(dir) = tempfile::tempdir() else {
            return;
        };
        let home = dir.path();
        for name in [".bash_history", ".python_history", ".history_notes"] {
            std::fs::write(home.join(name), "x").ok();
        }
        std::fs::create_dir_all(home.join(".ssh")).ok();
        let found = matching(&home.join(".*_history"));
        assert_eq!(
            found,
            [home.join(".bash_history"), home.join(".python_history")]
        );
        assert_eq!(matching(&home.join(".ssh")), [home.join(".ssh")]);
        assert!(matching(&home.join(".aws")).is_empty());
        let allow = [home.join(".py*_history")];
        let entry = entry(
            "~/.*_history",
            "history",
            "",
            &home.join(".*_history"),
            &allow,
        );
        assert_eq!(entry.hidden, [home.join(".bash_history")]);
        assert_eq!(entry.allowed, [home.join(".python_history")]);
        assert!(covers(
            &home.join(".config"),
            &home.join(".config/gh/hosts.yml")
        ));
        assert!(!covers(
            &home.join(".config/gh/hosts.yml"),
            &home.join(".config")
        ));
        assert!(!covers(&home.join(".conf"), &home.join(".config")));
    }

    #[test]
    fn a_path_holding_the_workspace_is_refused() {
        let entries = [DenyEntry {
            path: "~/work".into(),
            category: SETTING_CATEGORY.into(),
            what: String::new(),
            hidden: vec!["/".into()],
            allowed: Vec::new(),
        }];
        let refused = hidden_paths(&entries, &["/w".into()], "execute_command");
        assert!(
            matches!(&refused, Err(PolicyError::HidesWorkspace { key, .. })
                if key == "execute_command.deny_read"),
            "{refused:?}"
        );
        assert_eq!(
            hidden_paths(&entries, &[], "s").ok(),
            Some(vec![PathBuf::from("/")])
        );
    }
}
