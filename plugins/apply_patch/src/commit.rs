//! Writing a patch's changes all-or-nothing.
//!
//! 1. Stage: every new content goes to a temporary file in its target's directory (missing
//!    directories are created and remembered). A failure here deletes the temporary files and
//!    the new directories: nothing visible changed.
//! 2. Install, in order: each temporary file is renamed over its target (atomic per file); each
//!    deleted file is renamed to a hidden backup name beside it. On a failure, everything already
//!    installed is undone in reverse order: replaced files get their original bytes and
//!    permissions back (written the same atomic way), new files are removed, backups are renamed
//!    back, and the new directories are removed.
//! 3. Finish: the backups are deleted.

use std::ffi::OsStr;
use std::fs::{self, Permissions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use tool_api::sdk::files::{create_missing_dirs, remove_empty_dirs, sync_dir};

use tempfile::{NamedTempFile, TempPath};

/// The content a replaced file had, to put back if the patch fails half-way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Original {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// The permissions.
    pub permissions: Permissions,
}

/// One change to the file system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Write `bytes` to `target`: a new file (`replaces` is `None`) or a replacement.
    Write {
        /// The path as the patch names it, for messages.
        label: String,
        /// Where to write.
        target: PathBuf,
        /// The new content.
        bytes: Vec<u8>,
        /// The file being replaced.
        replaces: Option<Original>,
    },
    /// Delete `target`.
    Remove {
        /// The path as the patch names it, for messages.
        label: String,
        /// The file (or symlink) to delete.
        target: PathBuf,
    },
}

impl Op {
    fn label(&self) -> &str {
        match self {
            Self::Write { label, .. } | Self::Remove { label, .. } => label,
        }
    }
}

/// Carries out `ops` completely or not at all. The error is a message for the model.
pub fn commit(ops: &[Op]) -> Result<(), String> {
    let mut created_dirs = Vec::new();
    let staged = match stage(ops, &mut created_dirs) {
        Ok(staged) => staged,
        Err((label, error)) => {
            remove_empty_dirs(&created_dirs);
            return Err(format!(
                "Could not write {label}: {error}. No file was changed."
            ));
        }
    };
    let mut installed = Vec::new();
    for (op, temp) in ops.iter().zip(staged) {
        if let Err(error) = install(op, temp, &mut installed) {
            let unrestored = roll_back(installed);
            remove_empty_dirs(&created_dirs);
            let label = op.label();
            return Err(if unrestored.is_empty() {
                format!("Could not change {label}: {error}. No file was changed.")
            } else {
                format!(
                    "Could not change {label}: {error}. Undoing the other changes failed for: {}.",
                    unrestored.join(", ")
                )
            });
        }
    }
    // Dropping the backups deletes them: the removals are now final.
    let dirs: Vec<PathBuf> = ops
        .iter()
        .filter_map(|op| parent_of(op_target(op)))
        .collect();
    drop(installed);
    for dir in dirs {
        sync_dir(&dir);
    }
    Ok(())
}

/// What was installed, to undo it.
enum Installed<'a> {
    Wrote {
        label: &'a str,
        target: &'a Path,
        replaces: Option<&'a Original>,
    },
    Removed {
        label: &'a str,
        target: &'a Path,
        backup: TempPath,
    },
}

fn op_target(op: &Op) -> &Path {
    match op {
        Op::Write { target, .. } | Op::Remove { target, .. } => target,
    }
}

fn parent_of(path: &Path) -> Option<PathBuf> {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => Some(parent.to_path_buf()),
        _ => None,
    }
}

fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// Writes the temporary file of every write (`None` for removals).
fn stage<'a>(
    ops: &'a [Op],
    created_dirs: &mut Vec<PathBuf>,
) -> Result<Vec<Option<NamedTempFile>>, (&'a str, io::Error)> {
    let mut staged = Vec::with_capacity(ops.len());
    for op in ops {
        match op {
            Op::Write {
                label,
                target,
                bytes,
                replaces,
            } => {
                let dir = dir_of(target);
                created_dirs.extend(create_missing_dirs(dir).map_err(|e| (label.as_str(), e))?);
                let temp = temp_file(
                    dir,
                    target,
                    bytes,
                    replaces.as_ref().map(|o| &o.permissions),
                )
                .map_err(|e| (label.as_str(), e))?;
                staged.push(Some(temp));
            }
            Op::Remove { .. } => staged.push(None),
        }
    }
    Ok(staged)
}

fn install<'a>(
    op: &'a Op,
    temp: Option<NamedTempFile>,
    installed: &mut Vec<Installed<'a>>,
) -> io::Result<()> {
    match (op, temp) {
        (
            Op::Write {
                label,
                target,
                replaces,
                ..
            },
            Some(temp),
        ) => {
            // On failure the temporary file comes back inside the error and is deleted with it.
            temp.persist(target).map_err(|e| e.error)?;
            installed.push(Installed::Wrote {
                label,
                target,
                replaces: replaces.as_ref(),
            });
        }
        (Op::Remove { label, target }, _) => {
            let backup = reserve_backup(target)?;
            // Renaming over our own reserved, empty file: the name is ours alone.
            fs::rename(target, &backup)?;
            installed.push(Installed::Removed {
                label,
                target,
                backup,
            });
        }
        (Op::Write { .. }, None) => {
            return Err(io::Error::other("the new content was not staged"));
        }
    }
    Ok(())
}

/// Undoes installed changes, last first; returns the labels it could not restore.
fn roll_back(installed: Vec<Installed<'_>>) -> Vec<String> {
    let mut failed = Vec::new();
    for change in installed.into_iter().rev() {
        let (label, result) = match change {
            Installed::Wrote {
                label,
                target,
                replaces: Some(original),
            } => (
                label,
                temp_file(
                    dir_of(target),
                    target,
                    &original.bytes,
                    Some(&original.permissions),
                )
                .and_then(|temp| temp.persist(target).map(drop).map_err(|e| e.error)),
            ),
            Installed::Wrote {
                label,
                target,
                replaces: None,
            } => (label, fs::remove_file(target)),
            Installed::Removed {
                label,
                target,
                backup,
            } => {
                let result = fs::rename(&backup, target);
                if result.is_ok() {
                    // The backup name is gone; do not let the drop delete anything.
                    let _ = backup.keep();
                }
                (label, result)
            }
        };
        if result.is_err() {
            failed.push(label.to_string());
        }
    }
    failed
}

/// A temporary file beside `target` holding `bytes`, synced, with `permissions` (or, for a new
/// file, the usual permissions of new files: 0666 less the umask).
fn temp_file(
    dir: &Path,
    target: &Path,
    bytes: &[u8],
    permissions: Option<&Permissions>,
) -> io::Result<NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    let prefix = hidden_prefix(target);
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    if permissions.is_none() {
        use std::os::unix::fs::PermissionsExt;
        // tempfile's default is 0600; a new file should get what any other new file gets.
        builder.permissions(Permissions::from_mode(0o666));
    }
    // Dropping `temp` on any error below deletes the temporary file.
    let mut temp = builder.tempfile_in(dir)?;
    temp.write_all(bytes)?;
    if let Some(permissions) = permissions {
        fs::set_permissions(temp.path(), permissions.clone())?;
    }
    temp.as_file().sync_all()?;
    Ok(temp)
}

/// An empty file with a fresh hidden name beside `target`, deleted when dropped.
fn reserve_backup(target: &Path) -> io::Result<TempPath> {
    let prefix = hidden_prefix(target);
    let reserved = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".bak")
        .tempfile_in(dir_of(target))?;
    Ok(reserved.into_temp_path())
}

/// `.<name>.`: a hidden name derived from the target's, short enough for name-length limits.
fn hidden_prefix(target: &Path) -> String {
    let name = target.file_name().unwrap_or(OsStr::new("file"));
    let stem: String = name.to_string_lossy().chars().take(64).collect();
    format!(".{stem}.")
}

#[cfg(test)]
#[path = "commit_tests.rs"]
mod tests;
