//! File-system steps that tools writing files share: creating missing parent directories (and
//! removing them again when a write fails) and making a rename durable.

use std::io;
use std::path::{Path, PathBuf};

/// Creates `dir` and its missing ancestors; returns the ones it created, deepest first, so that
/// a failed write can remove exactly those with [`remove_empty_dirs`].
pub fn create_missing_dirs(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut missing = Vec::new();
    let mut current = Some(dir);
    while let Some(d) = current {
        if d.as_os_str().is_empty() || d.exists() {
            break;
        }
        missing.push(d.to_path_buf());
        current = d.parent();
    }
    if let Err(e) = std::fs::create_dir_all(dir) {
        remove_empty_dirs(&missing);
        return Err(e);
    }
    Ok(missing)
}

/// Removes the directories that are (still) empty, deepest first.
pub fn remove_empty_dirs(dirs: &[PathBuf]) {
    let mut dirs: Vec<&PathBuf> = dirs.iter().collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for dir in dirs {
        // Not empty (someone else wrote there) or already gone: leave it.
        let _ = std::fs::remove_dir(dir);
    }
}

/// Makes renames in `dir` durable. Best effort: not every file system supports it.
pub fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(handle) = std::fs::File::open(dir) {
        let _ = handle.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// A Jupyter notebook without its cells' outputs, re-serialised with one-space indentation as
/// Cline does (`JSON.stringify(notebook, null, 1)`). Text that is not a notebook comes back
/// unchanged.
pub fn strip_notebook_outputs(text: &str) -> String {
    use serde::Serialize;
    use serde_json::Value;
    let Ok(mut notebook) = serde_json::from_str::<Value>(text) else {
        return text.to_string();
    };
    let Some(cells) = notebook.get_mut("cells").and_then(Value::as_array_mut) else {
        return text.to_string();
    };
    for cell in cells {
        if let Some(outputs) = cell.get_mut("outputs").filter(|o| o.is_array()) {
            *outputs = Value::Array(Vec::new());
        }
    }
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    match notebook.serialize(&mut serializer) {
        Ok(()) => String::from_utf8(out).unwrap_or_else(|_| text.to_string()),
        Err(_) => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_dirs_are_removed_again() -> io::Result<()> {
        let root = std::env::temp_dir().join(format!("tool-api-files-{}", std::process::id()));
        let created = create_missing_dirs(&root.join("a/b/c"))?;
        assert_eq!(created.len(), 4);
        remove_empty_dirs(&created);
        assert!(!root.exists());
        Ok(())
    }

    #[test]
    fn notebooks_lose_their_outputs() {
        let nb = r#"{"cells":[{"cell_type":"code","source":["1+1"],"outputs":[{"data":"2"}]}]}"#;
        let stripped = strip_notebook_outputs(nb);
        assert!(stripped.contains("\"outputs\": []"), "{stripped}");
        assert_eq!(strip_notebook_outputs("not json"), "not json");
    }
}
