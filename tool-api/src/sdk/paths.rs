//! Path-valued settings, read the same way by the host and by every plugin: `~` (alone or
//! followed by `/`) is the home directory (`$HOME`), and `${env:NAME}` is the value of the
//! environment variable `NAME` (the syntax of Cline's MCP settings). A variable that is not
//! set, or a `~` without a home, is an error rather than a path nobody meant.
//!
//! ```
//! use tool_api::sdk::paths::expand;
//!
//! std::env::set_var("PATHS_DOC_DIR", "/srv/tools");
//! assert_eq!(expand("${env:PATHS_DOC_DIR}/hooks").unwrap(), std::path::Path::new("/srv/tools/hooks"));
//! assert!(expand("${env:PATHS_DOC_UNSET}/x").is_err());
//! ```

use std::path::{Path, PathBuf};

use serde_json::Value;

/// toolhost's data directory, where tools keep what outlives a call (`toolhost/` in
/// `$XDG_DATA_HOME`, else in `~/.local/share`; a relative `XDG_DATA_HOME` is ignored, as the
/// XDG rules say).
pub fn data_dir() -> Option<PathBuf> {
    data_dir_of(
        std::env::var_os("XDG_DATA_HOME").map(PathBuf::from),
        std::env::var_os("HOME").map(PathBuf::from),
    )
}

/// [`data_dir`] for the given `XDG_DATA_HOME` and home.
pub fn data_dir_of(xdg_data_home: Option<PathBuf>, home: Option<PathBuf>) -> Option<PathBuf> {
    let data = xdg_data_home
        .filter(|p| p.is_absolute())
        .or_else(|| home.map(|h| h.join(".local").join("share")))?;
    Some(data.join("toolhost"))
}

/// Expands `~` and `${env:NAME}` in `text`.
pub fn expand(text: &str) -> Result<PathBuf, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = match text.strip_prefix('~') {
        Some(after) if after.is_empty() || after.starts_with('/') => {
            let home = std::env::var("HOME")
                .ok()
                .filter(|h| !h.is_empty())
                .ok_or("`~` stands for the home directory, and HOME is not set")?;
            out.push_str(&home);
            after
        }
        _ => text,
    };
    while let Some(start) = rest.find("${env:") {
        out.push_str(&rest[..start]);
        let after = &rest[start + "${env:".len()..];
        let end = after.find('}').ok_or("`${env:` is not closed by `}`")?;
        let name = &after[..end];
        match std::env::var(name) {
            Ok(value) if !value.is_empty() => out.push_str(&value),
            _ => return Err(format!("the environment variable {name} is not set")),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(PathBuf::from(out))
}

/// The path a setting names, expanded: `Ok(None)` when it is absent or empty. The error
/// names the key.
pub fn setting_path(key: &str, value: Option<&Value>) -> Result<Option<PathBuf>, String> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if text.trim().is_empty() => Ok(None),
        Some(Value::String(text)) => expand(text)
            .map(Some)
            .map_err(|why| format!("The setting {key} ({text}) cannot be used: {why}.")),
        Some(other) => Err(format!("The setting {key} must be a path (found {other}).")),
    }
}

/// The paths a list-valued setting names, expanded (see [`setting_path`]).
pub fn setting_paths(key: &str, value: Option<&Value>) -> Result<Option<Vec<PathBuf>>, String> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(text) => expand(text)
                    .map_err(|why| format!("The setting {key} ({text}) cannot be used: {why}.")),
                other => Err(format!(
                    "The setting {key} must be a list of paths (found {other})."
                )),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(other) => Err(format!(
            "The setting {key} must be a list of paths (found {other})."
        )),
    }
}

/// `path`, when it is an existing file; otherwise the error names the setting.
pub fn existing_file(key: &str, path: &Path) -> Result<(), String> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => Ok(()),
        Ok(_) => Err(format!(
            "The file {} (setting {key}) is not a regular file.",
            path.display()
        )),
        Err(e) => Err(format!(
            "The file {} (setting {key}) cannot be used: {}.",
            path.display(),
            io_reason(&e)
        )),
    }
}

/// `path`, when it is an existing directory; otherwise the error names the setting.
pub fn existing_dir(key: &str, path: &Path) -> Result<(), String> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(format!(
            "The directory {} (setting {key}) is not a directory.",
            path.display()
        )),
        Err(e) => Err(format!(
            "The directory {} (setting {key}) cannot be used: {}.",
            path.display(),
            io_reason(&e)
        )),
    }
}

fn io_reason(error: &std::io::Error) -> String {
    if error.kind() == std::io::ErrorKind::NotFound {
        "it does not exist".to_string()
    } else {
        error.to_string()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn the_data_directory_follows_xdg() {
        assert_eq!(
            data_dir_of(Some("/data".into()), Some("/home/u".into())),
            Some(PathBuf::from("/data/toolhost"))
        );
        assert_eq!(
            data_dir_of(Some("relative".into()), Some("/home/u".into())),
            Some(PathBuf::from("/home/u/.local/share/toolhost"))
        );
        assert_eq!(data_dir_of(None, None), None);
    }

    #[test]
    fn home_and_variables_are_expanded() {
        let home = std::env::var("HOME").unwrap();
        std::env::set_var("PATHS_TEST_SUB", "sub");
        assert_eq!(expand("~").unwrap(), PathBuf::from(&home));
        assert_eq!(
            expand("~/a/${env:PATHS_TEST_SUB}/b").unwrap(),
            Path::new(&home).join("a/sub/b")
        );
        assert_eq!(expand("~user/x").unwrap(), PathBuf::from("~user/x"));
        assert_eq!(expand("/a/~/b").unwrap(), PathBuf::from("/a/~/b"));
        assert_eq!(
            expand("/x/${env:PATHS_TEST_UNSET_VAR}").unwrap_err(),
            "the environment variable PATHS_TEST_UNSET_VAR is not set"
        );
        assert!(expand("/x/${env:OPEN").is_err());
    }

    #[test]
    fn settings_name_their_key() {
        assert_eq!(setting_path("a.b", None).unwrap(), None);
        assert_eq!(setting_path("a.b", Some(&json!(""))).unwrap(), None);
        assert_eq!(
            setting_path("a.b", Some(&json!("${env:PATHS_TEST_UNSET_VAR}"))).unwrap_err(),
            "The setting a.b (${env:PATHS_TEST_UNSET_VAR}) cannot be used: the environment \
             variable PATHS_TEST_UNSET_VAR is not set."
        );
        assert_eq!(
            setting_path("a.b", Some(&json!(3))).unwrap_err(),
            "The setting a.b must be a path (found 3)."
        );
        assert_eq!(
            setting_paths("a.c", Some(&json!(["/x", "/y"]))).unwrap(),
            Some(vec![PathBuf::from("/x"), PathBuf::from("/y")])
        );
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        let missing = here.join("no-such-settings.json");
        assert_eq!(
            existing_file("a.b", &missing).unwrap_err(),
            format!(
                "The file {} (setting a.b) cannot be used: it does not exist.",
                missing.display()
            )
        );
        assert!(existing_file("a.b", &here.join("Cargo.toml")).is_ok());
        assert!(existing_dir("a.b", here).is_ok());
        assert!(existing_file("a.b", here).is_err());
        assert!(existing_dir("a.b", &missing).is_err());
    }
}
