//! File access: the content before the edit, and an atomic write of the new content, both
//! through the workspace capability (the file the host's verdict names, checked again as it is
//! opened).
//!
//! The new content goes to a temporary file in the target's directory, which is then renamed
//! over the target inside that same directory handle. A reader therefore sees the old file or
//! the new one, never a half-written one, and a failure at any point leaves the old file as it
//! was and no temporary file behind.

use tool_api::model::PathVerdict;
use tool_api::workspace::{FsError, Workspace};

/// The largest file an edit reads.
pub const MAX_EDIT_BYTES: u64 = 64 << 20;

/// The bytes of the file `verdict` names, or `None` when there is no file yet.
pub fn read_existing(
    workspace: &Workspace,
    verdict: &PathVerdict,
) -> Result<Option<Vec<u8>>, FsError> {
    match workspace.open_file(verdict) {
        Ok(mut file) => file.read_all(MAX_EDIT_BYTES).map(Some),
        Err(FsError::NotFound) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Writes `bytes` to the file `verdict` names, atomically.
///
/// An existing file keeps its permissions; a read-only one is refused rather than silently
/// replaced (the rename would bypass the protection). A new file gets the usual permissions for
/// new files (0666 less the umask), and its missing parent directories are created; if the write
/// then fails, the directories created for it are removed again.
pub fn write_atomically(
    workspace: &Workspace,
    verdict: &PathVerdict,
    bytes: &[u8],
) -> Result<(), FsError> {
    workspace.write_file(verdict, bytes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::fs;
    use std::path::Path;

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn write(root: &Path, relative: &str, bytes: &[u8]) -> Result<(), FsError> {
        let workspace = Workspace::new(root).unwrap();
        write_atomically(&workspace, &workspace.verdict(relative), bytes)
    }

    fn read(root: &Path, relative: &str) -> Result<Option<Vec<u8>>, FsError> {
        let workspace = Workspace::new(root).unwrap();
        read_existing(&workspace, &workspace.verdict(relative))
    }

    #[test]
    fn new_files_get_their_parent_directories() {
        let root = tempfile::tempdir().unwrap();
        write(root.path(), "a/b/c.txt", b"hello").unwrap();
        assert_eq!(fs::read(root.path().join("a/b/c.txt")).unwrap(), b"hello");
        assert_eq!(names_in(&root.path().join("a/b")), vec!["c.txt"]);
    }

    #[test]
    fn existing_files_are_replaced_and_keep_their_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("script.sh");
        fs::write(&target, "old").unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o751)).unwrap();
        write(root.path(), "script.sh", b"new").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new");
        assert_eq!(names_in(root.path()), vec!["script.sh"]);
        let mode = fs::metadata(&target).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o751);
    }

    #[test]
    fn read_only_files_are_refused_and_left_alone() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("locked.txt");
        fs::write(&target, "keep").unwrap();
        let mut permissions = fs::metadata(&target).unwrap().permissions();
        permissions.set_readonly(true);
        fs::set_permissions(&target, permissions).unwrap();
        let error = write(root.path(), "locked.txt", b"new").unwrap_err();
        assert_eq!(error.to_string(), "the file is read-only");
        assert_eq!(fs::read(&target).unwrap(), b"keep");
        assert_eq!(names_in(root.path()), vec!["locked.txt"]);
    }

    #[test]
    fn directories_are_neither_read_nor_written() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("sub");
        fs::create_dir(&dir).unwrap();
        assert_eq!(
            read(root.path(), "sub").unwrap_err().to_string(),
            "it is a directory"
        );
        assert_eq!(
            write(root.path(), "sub", b"x").unwrap_err().to_string(),
            "it is a directory"
        );
        assert_eq!(names_in(&dir), Vec::<String>::new());
    }

    #[test]
    fn a_missing_file_reads_as_none() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(read(root.path(), "nope").unwrap(), None);
        fs::write(root.path().join("yes"), "data").unwrap();
        assert_eq!(read(root.path(), "yes").unwrap(), Some(b"data".to_vec()));
    }

    #[test]
    fn directories_created_for_a_failed_write_are_removed() {
        let root = tempfile::tempdir().unwrap();
        // The directories can be created, but the final rename fails: the name is too long.
        let long = format!("new/dir/{}", "n".repeat(300));
        assert!(write(root.path(), &long, b"data").is_err());
        assert_eq!(names_in(root.path()), Vec::<String>::new());
    }

    #[test]
    fn a_file_in_the_way_of_a_parent_directory_fails_cleanly() {
        let root = tempfile::tempdir().unwrap();
        // A file where a directory would have to be: creating "blocker/x" fails.
        fs::write(root.path().join("blocker"), "").unwrap();
        assert!(write(root.path(), "blocker/x/y.txt", b"data").is_err());
        assert_eq!(names_in(root.path()), vec!["blocker"]);
    }
}
