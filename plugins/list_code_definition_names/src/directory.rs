//! Which files of a directory are outlined, and the text for the whole directory.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::language::Language;
use crate::outline::{outline, OutlineError};

/// How many entries Cline's top-level listing returns at most (`listFiles(dir, false, 200)`).
pub const LISTING_LIMIT: usize = 200;

/// How many source files are outlined at most.
pub const MAX_FILES: usize = 50;

/// The text when no file has a definition (an empty directory included).
pub const NO_DEFINITIONS: &str = "No source code definitions found.";

/// A source file picked for outlining.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// The file's path: the directory joined with its name.
    pub path: PathBuf,
    /// The file name, as shown above its outline.
    pub name: String,
    /// The language its extension names.
    pub language: Language,
}

/// What can go wrong for the directory as a whole.
#[derive(Debug)]
pub enum DirectoryError {
    /// The directory cannot be read.
    Unreadable(io::Error),
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

/// The source files of `dir` to outline, in order, before any `.clineignore` filtering.
///
/// Cline takes the directory's top-level listing (hidden files included, nothing descended
/// into), keeps the files whose extension it parses, and the first [`MAX_FILES`] of those. The
/// listing itself stops at [`LISTING_LIMIT`] entries and is empty for the file system root and
/// the home directory (`home`), as for list_files.
///
/// Cline lists in the file system's order; here files are taken by name (byte order) so the
/// files kept at the limits and the order of the output are the same on every machine. Files
/// come before directories in that listing, so only files count towards its limit. A symbolic
/// link counts as what it points to.
pub fn source_files(dir: &Path, home: Option<&Path>) -> io::Result<Vec<SourceFile>> {
    if dir.parent().is_none() || home.is_some_and(|home| home == dir) {
        return Ok(Vec::new());
    }
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for entry in fs::read_dir(dir)? {
        let Ok(entry) = entry else { continue };
        // fs::metadata follows symbolic links; a dangling link is no file to read.
        if fs::metadata(entry.path()).is_ok_and(|m| m.is_file()) {
            let name = entry.file_name().to_string_lossy().into_owned();
            files.push((name, entry.path()));
        }
    }
    files.sort();
    Ok(files
        .into_iter()
        .take(LISTING_LIMIT)
        .filter_map(|(name, path)| {
            let extension = path.extension()?.to_str()?;
            let language = Language::from_extension(extension)?;
            Some(SourceFile {
                path,
                name,
                language,
            })
        })
        .take(MAX_FILES)
        .collect())
}

/// The definitions text for `dir`: each picked file that `is_ignored` lets through and that has
/// definitions, as `<name>\n<outline>\n`, in order; [`NO_DEFINITIONS`] when there are none.
///
/// A file that cannot be read is left out. `should_stop` is asked before each file; when it
/// says so, the files done so far are what is returned.
pub fn definitions_text(
    dir: &Path,
    home: Option<&Path>,
    mut is_ignored: impl FnMut(&Path) -> bool,
    mut should_stop: impl FnMut() -> bool,
) -> Result<String, DirectoryError> {
    let files = source_files(dir, home).map_err(DirectoryError::Unreadable)?;
    let mut result = String::new();
    for file in files {
        if should_stop() {
            break;
        }
        if is_ignored(&file.path) {
            continue;
        }
        // Node's readFile(…, "utf8") replaces invalid UTF-8 the same way.
        let Ok(bytes) = fs::read(&file.path) else {
            continue;
        };
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

    fn names(dir: &Path) -> Vec<String> {
        source_files(dir, None)
            .unwrap()
            .into_iter()
            .map(|f| f.name)
            .collect()
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
        assert!(source_files(temp.path(), Some(temp.path()))
            .unwrap()
            .is_empty());
        assert!(source_files(Path::new("/"), None).unwrap().is_empty());
    }

    #[test]
    fn ignored_files_and_dangling_links_are_left_out() {
        let temp = tempfile::tempdir().unwrap();
        fs::write(temp.path().join("a.py"), "def f(): pass\n").unwrap();
        fs::write(temp.path().join("b.py"), "def g(): pass\n").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(temp.path().join("gone.py"), temp.path().join("c.py")).unwrap();
        let text = definitions_text(temp.path(), None, |p| p.ends_with("a.py"), || false).unwrap();
        assert_eq!(text, "b.py\n|----\n│def g(): pass\n|----\n\n");
        let none = definitions_text(temp.path(), None, |_| true, || false).unwrap();
        assert_eq!(none, NO_DEFINITIONS);
    }

    #[test]
    fn stopping_returns_what_was_done() {
        let temp = tempfile::tempdir().unwrap();
        fs::write(temp.path().join("a.py"), "def f(): pass\n").unwrap();
        fs::write(temp.path().join("b.py"), "def g(): pass\n").unwrap();
        let mut asked = 0;
        let text = definitions_text(
            temp.path(),
            None,
            |_| false,
            || {
                asked += 1;
                asked > 1
            },
        )
        .unwrap();
        assert_eq!(text, "a.py\n|----\n│def f(): pass\n|----\n\n");
    }
}
