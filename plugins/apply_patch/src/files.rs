//! Reading the files a patch updates or deletes.

use std::fs::{self, Permissions};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use tool_api::model::PathVerdict;

use crate::PatchError;

/// A file the patch updates or deletes, as it was before.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// What the host says about its path.
    pub verdict: PathVerdict,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Its text with CRLF turned into LF, as the parser sees it (invalid UTF-8 replaced).
    pub text: String,
    /// Whether the bytes are UTF-8: only then can the file be updated.
    pub is_utf8: bool,
    /// Its permissions.
    pub permissions: Permissions,
}

/// Where a path really leads (symlinks resolved), so that a symlinked file is written through.
pub fn real_target(verdict: &PathVerdict) -> PathBuf {
    if verdict.resolved.is_empty() {
        PathBuf::from(&verdict.absolute)
    } else {
        PathBuf::from(&verdict.resolved)
    }
}

/// Reads the file at `verdict` (`path` is the patch's spelling, for messages).
pub fn load(path: &str, verdict: PathVerdict) -> Result<Loaded, PatchError> {
    let source = real_target(&verdict);
    let metadata = match fs::metadata(&source) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(PatchError::new(format!("File not found: {path}")));
        }
        Err(e) => return Err(cannot_read(path, &e.to_string())),
    };
    if metadata.is_dir() {
        return Err(cannot_read(path, "it is a directory"));
    }
    let bytes = fs::read(&source).map_err(|e| cannot_read(path, &e.to_string()))?;
    let (text, is_utf8) = match std::str::from_utf8(&bytes) {
        Ok(text) => (text.replace("\r\n", "\n"), true),
        Err(_) => (String::from_utf8_lossy(&bytes).replace("\r\n", "\n"), false),
    };
    Ok(Loaded {
        verdict,
        bytes,
        text,
        is_utf8,
        permissions: metadata.permissions(),
    })
}

/// Whether anything (a file, a directory, a symlink even if dangling) is at `path`.
pub fn occupied(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

fn cannot_read(path: &str, reason: &str) -> PatchError {
    PatchError::new(format!("Cannot read {path}: {reason}."))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn verdict(path: &Path) -> PathVerdict {
        PathVerdict {
            path: path.to_string_lossy().into_owned(),
            absolute: path.to_string_lossy().into_owned(),
            resolved: path.to_string_lossy().into_owned(),
            inside_workspace: true,
            ignored: false,
            display: "f".to_string(),
        }
    }

    #[test]
    fn files_are_read_with_crlf_normalised() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        fs::write(&file, "a\r\nb\r\n").unwrap();
        let loaded = load("f", verdict(&file)).unwrap();
        assert_eq!(
            (
                loaded.bytes.as_slice(),
                loaded.text.as_str(),
                loaded.is_utf8
            ),
            (b"a\r\nb\r\n".as_slice(), "a\nb\n", true)
        );
    }

    #[test]
    fn missing_files_and_directories_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            load("nope", verdict(&dir.path().join("nope")))
                .unwrap_err()
                .0,
            "File not found: nope"
        );
        assert_eq!(
            load("d", verdict(dir.path())).unwrap_err().0,
            "Cannot read d: it is a directory."
        );
    }

    #[test]
    fn non_utf8_files_are_marked() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        fs::write(&file, b"caf\xe9").unwrap();
        let loaded = load("f", verdict(&file)).unwrap();
        assert_eq!(
            (loaded.text.as_str(), loaded.is_utf8),
            ("caf\u{FFFD}", false)
        );
    }
}
