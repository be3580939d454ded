//! Writing a patch's changes all-or-nothing, through the workspace capability.
//!
//! 1. Stage: every new content goes to a temporary file in its target's directory (missing
//!    directories are created and remembered). A failure here deletes the temporary files and
//!    the new directories: nothing visible changed.
//! 2. Install, in order: each temporary file is renamed over its target (atomic per file); each
//!    deleted file is moved aside to a hidden backup name beside it. On a failure, everything
//!    already installed is undone in reverse order: replaced files get their original bytes and
//!    permissions back (written the same atomic way), new files are removed, backups are moved
//!    back, and the new directories are removed.
//! 3. Finish: the backups are deleted.
//!
//! Every step happens inside the handle of the directory that was checked for it, so a
//! directory swapped for a link between the checks and the writes cannot redirect a write.

use std::ffi::OsString;
use std::fs::Permissions;
use std::os::unix::fs::PermissionsExt;

use tool_api::model::PathVerdict;
use tool_api::workspace::{Backup, CreatedDirs, Dir, FsError, StagedFile, Workspace};

/// The content a replaced file had, to put back if the patch fails half-way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Original {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// The permissions.
    pub permissions: Permissions,
}

/// One change to the file system.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Write `bytes` to the file `target` names (symbolic links followed): a new file
    /// (`replaces` is `None`) or a replacement.
    Write {
        /// The path as the patch names it, for messages.
        label: String,
        /// Where to write.
        target: PathVerdict,
        /// The new content.
        bytes: Vec<u8>,
        /// The file being replaced.
        replaces: Option<Original>,
    },
    /// Delete the entry `target` names itself (a symbolic link as the link: see
    /// [`crate::files::entry_verdict`]).
    Remove {
        /// The path as the patch names it, for messages.
        label: String,
        /// The file (or symlink) to delete.
        target: PathVerdict,
    },
}

impl Op {
    fn label(&self) -> &str {
        match self {
            Self::Write { label, .. } | Self::Remove { label, .. } => label,
        }
    }
}

/// A staged write: its directory, its name there, and the temporary file.
struct Staged<'w> {
    dir: Dir<'w>,
    name: OsString,
    temp: Option<StagedFile>,
}

/// What was installed, to undo it.
enum Installed<'a, 'w> {
    Wrote {
        label: &'a str,
        dir: Dir<'w>,
        name: OsString,
        replaces: Option<&'a Original>,
    },
    Removed {
        label: &'a str,
        dir: Dir<'w>,
        backup: Backup,
    },
}

/// Why the changes were not made: a message for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitError {
    /// What happened, and what was (not) changed.
    pub message: String,
    /// A path changed after it was checked ([`FsError::Changed`]): no file was changed, and
    /// the host checks the paths again.
    pub path_changed: bool,
}

/// Carries out `ops` completely or not at all.
pub fn commit(workspace: &Workspace, ops: &[Op]) -> Result<(), CommitError> {
    let mut created_dirs = CreatedDirs::default();
    let staged = match stage(workspace, ops, &mut created_dirs) {
        Ok(staged) => staged,
        Err((label, error)) => {
            created_dirs.remove();
            return Err(CommitError {
                path_changed: matches!(error, FsError::Changed { .. }),
                message: format!(
                    "Could not write {label}: {}. No file was changed.",
                    tool_api::texts::clause(&error)
                ),
            });
        }
    };
    let mut installed = Vec::new();
    for (op, staged) in ops.iter().zip(staged) {
        if let Err(error) = install(op, staged, &mut installed) {
            let unrestored = roll_back(installed);
            created_dirs.remove();
            let label = op.label();
            let message = if unrestored.is_empty() {
                format!(
                    "Could not change {label}: {}. No file was changed.",
                    tool_api::texts::clause(&error)
                )
            } else {
                format!(
                    "Could not change {label}: {}. Undoing the other changes failed for: {}.",
                    tool_api::texts::clause(&error),
                    unrestored.join(", ")
                )
            };
            return Err(CommitError {
                message,
                path_changed: false,
            });
        }
    }
    // Dropping the backups deletes them: the removals are now final.
    for change in installed {
        match change {
            Installed::Wrote { dir, .. } | Installed::Removed { dir, .. } => dir.sync(),
        }
    }
    Ok(())
}

/// Opens the directory of every change and writes the temporary file of every write.
fn stage<'a, 'w>(
    workspace: &'w Workspace,
    ops: &'a [Op],
    created_dirs: &mut CreatedDirs,
) -> Result<Vec<Staged<'w>>, (&'a str, FsError)> {
    let mut staged = Vec::with_capacity(ops.len());
    for op in ops {
        match op {
            Op::Write {
                label,
                target,
                bytes,
                replaces,
            } => {
                let (dir, name, created) = workspace
                    .parent_dir(target, true)
                    .map_err(|e| (label.as_str(), e))?;
                created_dirs.extend(created);
                let mode = replaces.as_ref().map(|o| o.permissions.mode() & 0o7777);
                let temp = dir
                    .stage(&name, bytes, mode)
                    .map_err(|e| (label.as_str(), e))?;
                staged.push(Staged {
                    dir,
                    name,
                    temp: Some(temp),
                });
            }
            Op::Remove { label, target } => {
                let (dir, name, _) = workspace
                    .parent_dir(target, false)
                    .map_err(|e| (label.as_str(), e))?;
                staged.push(Staged {
                    dir,
                    name,
                    temp: None,
                });
            }
        }
    }
    Ok(staged)
}

fn install<'a, 'w>(
    op: &'a Op,
    staged: Staged<'w>,
    installed: &mut Vec<Installed<'a, 'w>>,
) -> Result<(), FsError> {
    let Staged { dir, name, temp } = staged;
    match (op, temp) {
        (
            Op::Write {
                label, replaces, ..
            },
            Some(temp),
        ) => {
            // On failure the temporary file is deleted with it.
            temp.persist()?;
            installed.push(Installed::Wrote {
                label,
                dir,
                name,
                replaces: replaces.as_ref(),
            });
        }
        (Op::Remove { label, .. }, _) => {
            let backup = dir.move_aside(&name)?;
            installed.push(Installed::Removed { label, dir, backup });
        }
        (Op::Write { .. }, None) => {
            return Err(FsError::Io(std::io::Error::other(
                "the new content was not staged",
            )));
        }
    }
    Ok(())
}

/// Undoes installed changes, last first; returns the labels it could not restore.
fn roll_back(installed: Vec<Installed<'_, '_>>) -> Vec<String> {
    let mut failed = Vec::new();
    for change in installed.into_iter().rev() {
        let (label, result) = match change {
            Installed::Wrote {
                label,
                dir,
                name,
                replaces: Some(original),
            } => (
                label,
                dir.stage(
                    &name,
                    &original.bytes,
                    Some(original.permissions.mode() & 0o7777),
                )
                .and_then(StagedFile::persist),
            ),
            Installed::Wrote {
                label,
                dir,
                name,
                replaces: None,
            } => (label, dir.remove_file(&name)),
            Installed::Removed { label, backup, .. } => (label, backup.restore()),
        };
        if result.is_err() {
            failed.push(label.to_string());
        }
    }
    failed
}

#[cfg(test)]
#[path = "commit_tests.rs"]
mod tests;
