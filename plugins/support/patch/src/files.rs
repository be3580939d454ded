//! Reading the files a patch updates or deletes, through the workspace capability.

use std::fs::Permissions;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tool_api::model::PathVerdict;
use tool_api::workspace::{FsError, Workspace};

use crate::error::{Failure, PatchError};

/// The largest file a patch reads.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

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

/// The verdict on the entry a path names itself (a symbolic link as the link, not what it
/// leads to): the real path of its directory and its own name. Deleting a link deletes that.
pub fn entry_verdict(workspace: &Workspace, verdict: &PathVerdict) -> PathVerdict {
    let absolute = Path::new(&verdict.absolute);
    let (Some(parent), Some(name)) = (absolute.parent(), absolute.file_name()) else {
        return verdict.clone();
    };
    let parent = workspace.verdict(&parent.to_string_lossy());
    PathVerdict {
        resolved: Path::new(&parent.resolved)
            .join(name)
            .to_string_lossy()
            .into_owned(),
        // The entry is reached from its directory's anchor, not from its target's.
        anchor: parent.anchor,
        ..verdict.clone()
    }
}

/// Reads the file at `verdict` (`path` is the patch's spelling, for messages).
pub fn load(workspace: &Workspace, path: &str, verdict: PathVerdict) -> Result<Loaded, Failure> {
    let mut file = match workspace.open_file(&verdict) {
        Ok(file) => file,
        Err(FsError::NotFound) => {
            return Err(PatchError::new(format!("File not found: {path}")).into());
        }
        Err(e) if e.is_blocked() => return Err(Failure::Host(e.into())),
        Err(e) => return Err(cannot_read(path, &e.to_string()).into()),
    };
    let bytes = file
        .read_all(MAX_FILE_BYTES)
        .map_err(|e| cannot_read(path, &e.to_string()))?;
    let (text, is_utf8) = match std::str::from_utf8(&bytes) {
        Ok(text) => (text.replace("\r\n", "\n"), true),
        Err(_) => (String::from_utf8_lossy(&bytes).replace("\r\n", "\n"), false),
    };
    Ok(Loaded {
        verdict,
        bytes,
        text,
        is_utf8,
        permissions: Permissions::from_mode(file.mode()),
    })
}

/// Whether anything (a file, a directory, a symlink even if dangling) is at the path itself.
pub fn occupied(workspace: &Workspace, verdict: &PathVerdict) -> bool {
    let entry = entry_verdict(workspace, verdict);
    match workspace.parent_dir(&entry, false) {
        Ok((dir, name, _)) => dir.entry(&name).is_some(),
        Err(_) => false,
    }
}

fn cannot_read(path: &str, reason: &str) -> PatchError {
    PatchError::new(format!("Cannot read {path}: {reason}."))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::fs;

    fn load_at(root: &Path, path: &str) -> Result<Loaded, String> {
        let workspace = Workspace::new(root).unwrap();
        let verdict = workspace.verdict(path);
        load(&workspace, path, verdict).map_err(|failure| match failure {
            Failure::Patch(e) => e.0,
            Failure::Blocked(p) => format!("blocked: {p}"),
            Failure::Host(e) => format!("host: {}", e.message),
        })
    }

    #[test]
    fn files_are_read_with_crlf_normalised() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("f"), "a\r\nb\r\n").unwrap();
        let loaded = load_at(dir.path(), "f").unwrap();
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
        fs::create_dir(dir.path().join("d")).unwrap();
        assert_eq!(
            load_at(dir.path(), "nope").unwrap_err(),
            "File not found: nope"
        );
        assert_eq!(
            load_at(dir.path(), "d").unwrap_err(),
            "Cannot read d: it is a directory."
        );
    }

    #[test]
    fn non_utf8_files_are_marked() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("f"), b"caf\xe9").unwrap();
        let loaded = load_at(dir.path(), "f").unwrap();
        assert_eq!(
            (loaded.text.as_str(), loaded.is_utf8),
            ("caf\u{FFFD}", false)
        );
    }
}
