//! The changed files between two git references, or between one and the working tree.
//!
//! git runs as a program, as Cline's simple-git does: a library like gix would add a large
//! dependency tree for three read-only queries.

use std::path::Path;

use std::process::Command;
use tool_api::workspace::Workspace;

/// Why the changes could not be listed; each variant's text is Cline's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangesError {
    /// The working directory is not inside a git work tree.
    NotARepository(String),
    /// A reference does not name anything (`to` refs get Cline's shorter hint).
    InvalidRef {
        /// The reference as given.
        reference: String,
        /// Whether it was the `to_ref`.
        is_to: bool,
    },
    /// git could not be run or failed unexpectedly.
    Git(String),
}

impl ChangesError {
    /// The message for the model and the UI.
    pub fn message(&self) -> String {
        match self {
            Self::NotARepository(cwd) => format!(
                "The current directory ({cwd}) is not a git repository. This tool requires git to compare changes."
            ),
            Self::InvalidRef {
                reference,
                is_to: false,
            } => format!(
                "Invalid git reference '{reference}'. Please provide a valid commit hash, branch name, tag, or relative reference (e.g., HEAD~1)."
            ),
            Self::InvalidRef {
                reference,
                is_to: true,
            } => format!(
                "Invalid git reference '{reference}'. Please provide a valid commit hash, branch name, tag, or relative reference."
            ),
            Self::Git(message) => format!("Failed to generate explanations: {message}"),
        }
    }
}

/// The files that differ between `from` and `to` (or the working tree when `to` is `None`),
/// relative to the repository, in git's order.
pub fn changed_files(
    cwd: &Path,
    from: &str,
    to: Option<&str>,
) -> Result<Vec<String>, ChangesError> {
    let inside = git(cwd, &["rev-parse", "--is-inside-work-tree"])?;
    if !inside.success || inside.stdout.trim() != "true" {
        return Err(ChangesError::NotARepository(cwd.display().to_string()));
    }
    verify(cwd, from, false)?;
    if let Some(to) = to {
        verify(cwd, to, true)?;
    }
    let range = match to {
        Some(to) => format!("{from}..{to}"),
        None => from.to_string(),
    };
    let diff = git(cwd, &["diff", "--name-only", "-z", &range, "--"])?;
    if !diff.success {
        return Err(ChangesError::Git(diff.stderr.trim().to_string()));
    }
    Ok(diff
        .stdout
        .split('\0')
        .filter(|name| !name.is_empty())
        .map(str::to_string)
        .collect())
}

/// Whether the working-tree file at `path` (relative to the workspace) looks binary (Cline
/// skips those); unreadable files do not. Read through the workspace capability, so a file
/// `.clineignore` blocks is never read (and counts as unreadable).
pub fn is_binary(workspace: &Workspace, path: &str) -> bool {
    let verdict = workspace.verdict(path);
    workspace
        .open_file(&verdict)
        .and_then(|mut file| file.read_head(1024))
        .is_ok_and(|head| content_inspector::inspect(&head).is_binary())
}

fn verify(cwd: &Path, reference: &str, is_to: bool) -> Result<(), ChangesError> {
    let invalid = || ChangesError::InvalidRef {
        reference: reference.to_string(),
        is_to,
    };
    // A reference that starts with '-' would be read as an option.
    if reference.starts_with('-') {
        return Err(invalid());
    }
    let output = git(cwd, &["rev-parse", "--verify", "--quiet", reference])?;
    if output.success {
        Ok(())
    } else {
        Err(invalid())
    }
}

struct Output {
    success: bool,
    stdout: String,
    stderr: String,
}

fn git(cwd: &Path, args: &[&str]) -> Result<Output, ChangesError> {
    let output = Command::new("git")
        .current_dir(cwd)
        .args(args)
        .output()
        .map_err(|e| ChangesError::Git(format!("cannot run git: {e}")))?;
    Ok(Output {
        success: output.status.success(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}
