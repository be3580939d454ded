//! Which files of a directory are outlined, and the text for the whole directory.
//!
//! The directory is read through its handle from the workspace capability, and each file is
//! opened relative to it: `.clineignore` is applied where a file is listed and where it really
//! is, and a symbolic link counts only when it stays within the directory's scope.

use std::ffi::OsString;
use std::path::Path;

use tool_api::workspace::{Dir, EntryKind, Followed, FsError, OpenedFile};

use crate::language::Language;
use crate::outline::{outline, OutlineError};

/// How many entries Cline's top-level listing returns at most (`listFiles(dir, false, 200)`).
pub const LISTING_LIMIT: usize = 200;

/// How many source files are outlined at most.
pub const MAX_FILES: usize = 50;

/// A source file larger than this is left out.
pub const MAX_SOURCE_BYTES: u64 = 20 << 20;

/// The text when no file has a definition (an empty directory included).
pub const NO_DEFINITIONS: &str = "No source code definitions found.";

/// A source file picked for outlining.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// The entry's name in the directory.
    pub entry: OsString,
    /// Whether the entry is a symbolic link (to a file).
    pub is_link: bool,
    /// The file name, as shown above its outline.
    pub name: String,
    /// The language its extension names.
    pub language: Language,
}

/// What can go wrong for the directory as a whole.
#[derive(Debug)]
pub enum DirectoryError {
    /// The directory cannot be read.
    Unreadable(FsError),
    /// A query or grammar is broken (a bug).
    Outline(OutlineError),
}

impl std::fmt::Display for DirectoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unreadable(e) => write!(f, "{e}"),
            Self::Outline(e) => write!(f, "{e}"),
        }
    }
}

/// The source files of `dir` (whose absolute path as named is `path`) to outline, in order,
/// before any `.clineignore` filtering.
///
/// Cline takes the directory's top-level listing (hidden files included, nothing descended
/// into), keeps the files whose extension it parses, and the first [`MAX_FILES`] of those. The
/// listing itself stops at [`LISTING_LIMIT`] entries and is empty for the file system root and
/// the home directory (`home`), as for list_files.
///
/// Cline lists in the file system's order; here files are taken by name (byte order) so the
/// files kept at the limits and the order of the output are the same on every machine. Files
/// come before directories in that listing, so only files count towards its limit. A symbolic
/// link counts as what it points to, when it stays within the directory's scope.
pub fn source_files(
    dir: &Dir<'_>,
    path: &Path,
    home: Option<&Path>,
) -> Result<Vec<SourceFile>, FsError> {
    if path.parent().is_none() || home.is_some_and(|home| home == path) {
        return Ok(Vec::new());
    }
    let mut files: Vec<(String, OsString, bool)> = Vec::new();
    for entry in dir.entries()? {
        let is_file = match entry.kind {
            EntryKind::File => true,
            // A dangling link, or one out of scope, is no file to read.
            EntryKind::Symlink => matches!(dir.follow(&entry.name), Ok(Followed::File)),
            EntryKind::Dir | EntryKind::Other => false,
        };
        if is_file {
            let name = entry.name.to_string_lossy().into_owned();
            files.push((name, entry.name, entry.kind == EntryKind::Symlink));
        }
    }
    files.sort();
    Ok(files
        .into_iter()
        .take(LISTING_LIMIT)
        .filter_map(|(name, entry, is_link)| {
            let extension = Path::new(&name).extension()?.to_str()?;
            let language = Language::from_extension(extension)?;
            Some(SourceFile {
                entry,
                is_link,
                name,
                language,
            })
        })
        .take(MAX_FILES)
        .collect())
}

/// The definitions text for `dir`: each picked file that `.clineignore` lets through and that
/// has definitions, as `<name>\n<outline>\n`, in order; [`NO_DEFINITIONS`] when there are
/// none.
///
/// A file that cannot be read (or is blocked) is left out. `should_stop` is asked before each
/// file; when it says so, the files done so far are what is returned.
pub fn definitions_text(
    dir: &Dir<'_>,
    path: &Path,
    home: Option<&Path>,
    mut should_stop: impl FnMut() -> bool,
) -> Result<String, DirectoryError> {
    let files = source_files(dir, path, home).map_err(DirectoryError::Unreadable)?;
    let mut result = String::new();
    for file in files {
        if should_stop() {
            break;
        }
        if dir.is_ignored(&file.entry, false) {
            continue;
        }
        let opened: Result<OpenedFile, FsError> = if file.is_link {
            dir.open_followed(&file.entry)
        } else {
            dir.open_file(&file.entry)
        };
        let Ok(bytes) = opened.and_then(|mut f| f.read_all(MAX_SOURCE_BYTES)) else {
            continue;
        };
        // Node's readFile(…, "utf8") replaces invalid UTF-8 the same way.
        let source = String::from_utf8_lossy(&bytes);
        if let Some(block) = outline(&source, file.language).map_err(DirectoryError::Outline)? {
            result.push_str(&file.name);
            result.push('\n');
            result.push_str(&block);
            result.push('\n');
        }
    }
    Ok(if result.is_empty() {
        NO_DEFINITIONS.to_string()
    } else {
        result
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::fs;
    use tool_api::workspace::Workspace;

    fn with_dir<T>(path: &Path, f: impl FnOnce(&Dir<'_>) -> T) -> T {
        let workspace = Workspace::new(path).unwrap();
        let dir = workspace.open_dir(&workspace.verdict(".")).unwrap();
        f(&dir)
    }

    fn names(path: &Path) -> Vec<String> {
        with_dir(path, |dir| source_files(dir, path, None).unwrap())
            .into_iter()
            .map(|f| f.name)
            .collect()
    }

    fn text(path: &Path, should_stop: impl FnMut() -> bool) -> String {
        with_dir(path, |dir| {
            definitions_text(dir, path, None, should_stop).unwrap()
        })
    }

    #[test]
    fn only_supported_files_directly_inside_are_picked_in_name_order() {
        let temp = tempfile::tempdir().unwrap();
        for name in [
            "b.py",
            "a.rs",
            "notes.md",
            "Z.go",
            ".hidden.ts",
            "UPPER.RS",
            "Makefile",
        ] {
            fs::write(temp.path().join(name), "").unwrap();
        }
        fs::create_dir(temp.path().join("sub.rs")).unwrap();
        fs::write(temp.path().join("sub.rs/inner.rs"), "fn f() {}").unwrap();
        assert_eq!(names(temp.path()), [".hidden.ts", "Z.go", "a.rs", "b.py"]);
    }

    #[test]
    fn at_most_fifty_source_files_of_the_first_two_hundred_entries() {
        let temp = tempfile::tempdir().unwrap();
        for i in 0..60 {
            fs::write(temp.path().join(format!("f{i:03}.py")), "").unwrap();
        }
        let picked = names(temp.path());
        assert_eq!(picked.len(), MAX_FILES);
        assert_eq!(picked.first().map(String::as_str), Some("f000.py"));
        assert_eq!(picked.last().map(String::as_str), Some("f049.py"));

        let temp = tempfile::tempdir().unwrap();
        for i in 0..LISTING_LIMIT {
            fs::write(temp.path().join(format!("a{i:03}.txt")), "").unwrap();
        }
        fs::write(temp.path().join("z.py"), "").unwrap();
        assert!(names(temp.path()).is_empty());
    }

    #[test]
    fn root_and_home_list_nothing() {
        let temp = tempfile::tempdir().unwrap();
        fs::write(temp.path().join("a.py"), "def f(): pass").unwrap();
        with_dir(temp.path(), |dir| {
            assert!(source_files(dir, temp.path(), Some(temp.path()))
                .unwrap()
                .is_empty());
            assert!(source_files(dir, Path::new("/"), None).unwrap().is_empty());
        });
    }

    #[test]
    fn ignored_files_and_dangling_links_are_left_out() {
        let temp = tempfile::tempdir().unwrap();
        fs::write(temp.path().join("a.py"), "def f(): pass\n").unwrap();
        fs::write(temp.path().join("b.py"), "def g(): pass\n").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(temp.path().join("gone.py"), temp.path().join("c.py")).unwrap();
        // A link to an ignored file is left out too.
        #[cfg(unix)]
        std::os::unix::fs::symlink("a.py", temp.path().join("d.py")).unwrap();
        fs::write(temp.path().join(".clineignore"), "A.PY\n").unwrap();
        assert_eq!(
            text(temp.path(), || false),
            "b.py\n|----\n│def g(): pass\n|----\n\n"
        );
        fs::write(temp.path().join(".clineignore"), "*.py\n").unwrap();
        assert_eq!(text(temp.path(), || false), NO_DEFINITIONS);
    }

    #[test]
    fn stopping_returns_what_was_done() {
        let temp = tempfile::tempdir().unwrap();
        fs::write(temp.path().join("a.py"), "def f(): pass\n").unwrap();
        fs::write(temp.path().join("b.py"), "def g(): pass\n").unwrap();
        let mut asked = 0;
        let done = text(temp.path(), || {
            asked += 1;
            asked > 1
        });
        assert_eq!(done, "a.py\n|----\n│def f(): pass\n|----\n\n");
    }
}
