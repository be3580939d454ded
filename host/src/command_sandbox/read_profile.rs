//! What a command may read: everything the user can but the deny-read list (`read = "all"`,
//! the default), or only the workspace, the system and the toolchains (`read = "workspace"`,
//! the list `readable.txt`), enforced by Landlock.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::table;

/// The readable places of the strict profile besides the workspace: `path | why`.
const TABLE: &str = include_str!("readable.txt");

/// The `read` setting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadProfile {
    /// Everything the user can read, except what the deny-read list and `.clineignore` hide.
    #[default]
    All,
    /// Only the workspace roots, the writable roots, the command's temporary directories,
    /// the package caches and [`system_and_toolchains`] (still without what is hidden).
    Workspace,
}

impl ReadProfile {
    /// The profile's name as the settings spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::All => "all",
            Self::Workspace => "workspace",
        }
    }
}

/// The system directories and toolchains readable in [`ReadProfile::Workspace`], `~`
/// expanded (an entry with `~` is skipped without a home), with why each is there; only
/// those that exist.
pub fn system_and_toolchains() -> Vec<(PathBuf, &'static str)> {
    table::rows(TABLE)
        .filter_map(|row| {
            let [path, why, _] = table::three(&row);
            let path = tool_api::sdk::paths::expand(path).ok()?;
            path.exists().then_some((path, why))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_names_the_system_and_absolute_paths() {
        let rows: Vec<[&str; 3]> = table::rows(TABLE).map(|r| table::three(&r)).collect();
        for [path, why, _] in &rows {
            assert!(path.starts_with('/') || path.starts_with("~/"), "{path}");
            assert!(!why.is_empty(), "{path}");
        }
        let paths: Vec<&str> = rows.iter().map(|[p, _, _]| *p).collect();
        for needed in [
            "/usr",
            "/bin",
            "/lib",
            "/etc",
            "~/.cargo",
            "~/.rustup",
            "~/.npm",
        ] {
            assert!(paths.contains(&needed), "{needed}");
        }
        assert!(system_and_toolchains()
            .iter()
            .any(|(p, _)| p == &PathBuf::from("/usr")));
    }
}
