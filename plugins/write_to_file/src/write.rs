//! File access: the content before the edit, and an atomic write of the new content.
//!
//! The new content goes to a temporary file in the target's directory, which is then renamed
//! over the target. A reader therefore sees the old file or the new one, never a half-written
//! one, and a failure at any point leaves the old file as it was.

use std::ffi::OsStr;
use std::fs::{self, Metadata};
use std::io::{self, ErrorKind, Write};
use std::path::Path;

use tool_api::sdk::files::{create_missing_dirs, remove_empty_dirs, sync_dir};

/// The bytes of the file at `path`, or `None` when there is no file yet.
pub fn read_existing(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match fs::metadata(path) {
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
        Ok(meta) if meta.is_dir() => Err(io::Error::other("it is a directory")),
        Ok(_) => fs::read(path).map(Some),
    }
}

/// Writes `bytes` to `target` atomically.
///
/// An existing file keeps its permissions; a read-only one is refused rather than silently
/// replaced (the rename would bypass the protection). A new file gets the usual permissions for
/// new files (0666 less the umask), and its missing parent directories are created; if the write
/// then fails, the directories created for it are removed again.
pub fn write_atomically(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = target
        .file_name()
        .ok_or_else(|| io::Error::new(ErrorKind::InvalidInput, "the path has no file name"))?;
    let dir = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let existing = match fs::metadata(target) {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    if let Some(meta) = &existing {
        if meta.is_dir() {
            return Err(io::Error::other("it is a directory"));
        }
        if meta.permissions().readonly() {
            return Err(io::Error::new(
                ErrorKind::PermissionDenied,
                "the file is read-only",
            ));
        }
    }
    let created = create_missing_dirs(dir)?;
    let result = replace_with_temp(dir, name, target, bytes, existing.as_ref());
    if result.is_err() {
        remove_empty_dirs(&created);
    }
    result
}

/// Writes a temporary file next to `target` and renames it over `target`.
fn replace_with_temp(
    dir: &Path,
    name: &OsStr,
    target: &Path,
    bytes: &[u8],
    existing: Option<&Metadata>,
) -> io::Result<()> {
    // A hidden name derived from the target's, short enough to stay within name-length limits.
    let stem: String = name.to_string_lossy().chars().take(64).collect();
    let prefix = format!(".{stem}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    if existing.is_none() {
        use std::os::unix::fs::PermissionsExt;
        // tempfile's default is 0600; a new file should get what any other new file gets.
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    // Dropping `temp` on any error below deletes the temporary file.
    let mut temp = builder.tempfile_in(dir)?;
    temp.write_all(bytes)?;
    if let Some(meta) = existing {
        fs::set_permissions(temp.path(), meta.permissions())?;
    }
    temp.as_file().sync_all()?;
    temp.persist(target).map_err(|e| e.error)?;
    sync_dir(dir);
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn new_files_get_their_parent_directories() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("a/b/c.txt");
        write_atomically(&target, b"hello").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"hello");
        assert_eq!(names_in(&root.path().join("a/b")), vec!["c.txt"]);
    }

    #[test]
    fn existing_files_are_replaced_and_keep_their_permissions() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("script.sh");
        fs::write(&target, "old").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&target, fs::Permissions::from_mode(0o751)).unwrap();
        }
        write_atomically(&target, b"new").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new");
        assert_eq!(names_in(root.path()), vec!["script.sh"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&target).unwrap().permissions().mode() & 0o7777;
            assert_eq!(mode, 0o751);
        }
    }

    #[test]
    fn read_only_files_are_refused_and_left_alone() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("locked.txt");
        fs::write(&target, "keep").unwrap();
        let mut permissions = fs::metadata(&target).unwrap().permissions();
        permissions.set_readonly(true);
        fs::set_permissions(&target, permissions).unwrap();
        let error = write_atomically(&target, b"new").unwrap_err();
        assert_eq!(error.kind(), ErrorKind::PermissionDenied);
        assert_eq!(fs::read(&target).unwrap(), b"keep");
        assert_eq!(names_in(root.path()), vec!["locked.txt"]);
    }

    #[test]
    fn directories_are_neither_read_nor_written() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("sub");
        fs::create_dir(&dir).unwrap();
        assert_eq!(
            read_existing(&dir).unwrap_err().to_string(),
            "it is a directory"
        );
        assert_eq!(
            write_atomically(&dir, b"x").unwrap_err().to_string(),
            "it is a directory"
        );
        assert_eq!(names_in(&dir), Vec::<String>::new());
    }

    #[test]
    fn a_missing_file_reads_as_none() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(read_existing(&root.path().join("nope")).unwrap(), None);
        fs::write(root.path().join("yes"), "data").unwrap();
        assert_eq!(
            read_existing(&root.path().join("yes")).unwrap(),
            Some(b"data".to_vec())
        );
    }

    #[test]
    fn directories_created_for_a_failed_write_are_removed() {
        let root = tempfile::tempdir().unwrap();
        // The directories can be created, but the final rename fails: the name is too long.
        let target = root.path().join("new/dir").join("n".repeat(300));
        assert!(write_atomically(&target, b"data").is_err());
        assert_eq!(names_in(root.path()), Vec::<String>::new());
    }

    #[test]
    fn a_file_in_the_way_of_a_parent_directory_fails_cleanly() {
        let root = tempfile::tempdir().unwrap();
        // A file where a directory would have to be: creating "blocker/x" fails.
        fs::write(root.path().join("blocker"), "").unwrap();
        let target = root.path().join("blocker/x/y.txt");
        assert!(write_atomically(&target, b"data").is_err());
        assert_eq!(names_in(root.path()), vec!["blocker"]);
    }
}
