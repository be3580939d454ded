//! What can go wrong when a file is reached through the workspace capability.

use std::io;

use crate::abi::{ToolError, ToolErrorKind};

/// Why a file could not be read, written or listed.
#[derive(Debug)]
pub enum FsError {
    /// Nothing is at the path.
    NotFound,
    /// It is a directory, where a file was wanted.
    IsADirectory,
    /// It is not a directory, where one was wanted.
    NotADirectory,
    /// It is not a regular file; what it is instead (`"a FIFO"`, `"a device"`, ...).
    NotRegular(&'static str),
    /// It is larger than the limit.
    TooLarge {
        /// Its size in bytes.
        size: u64,
        /// The limit in bytes.
        limit: u64,
    },
    /// `.clineignore` blocks it: the path as typed, or the file it reaches.
    Ignored {
        /// The path as the model gave it.
        path: String,
    },
    /// It was approved as a path inside the workspace, but leads outside it (a symbolic link,
    /// or a change made while it was being opened); nothing was read or written.
    Escaped {
        /// The path as the model gave it.
        path: String,
    },
    /// It goes through a magic link (`/proc/*/root`, `/proc/*/fd/*`, `/dev/fd/*`) or a
    /// symbolic link loop, which are refused outright.
    Refused {
        /// The path as the model gave it.
        path: String,
    },
    /// It is inside a root's `.git` directory, which the file tools never write: its hooks
    /// and configuration run code whenever git runs.
    Protected {
        /// The path as the model gave it.
        path: String,
    },
    /// It no longer leads where it led when the host checked it (and the user approved it):
    /// a directory on the way was replaced, or became a symbolic link. Nothing was read or
    /// written; the host checks the path again ([`ToolErrorKind::PATH_CHANGED`]).
    Changed {
        /// The path as the model gave it.
        path: String,
    },
    /// Any other failure of the system.
    Io(io::Error),
}

impl FsError {
    /// Whether nothing is at the path.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::NotFound)
    }

    /// Whether the capability refused the access (a policy, or a path that changed after its
    /// check) rather than the file system failing it: a tool passes these on as they are.
    pub fn is_blocked(&self) -> bool {
        matches!(
            self,
            Self::Ignored { .. }
                | Self::Escaped { .. }
                | Self::Refused { .. }
                | Self::Protected { .. }
                | Self::Changed { .. }
        )
    }

    /// The error for an I/O failure: missing paths, directories and links refused by the
    /// kernel get their own variants.
    pub fn from_io(error: io::Error, path: &str) -> Self {
        if super::sys::is_missing(&error) {
            Self::NotFound
        } else if super::sys::is_link_refused(&error) {
            Self::Refused {
                path: path.to_string(),
            }
        } else if super::sys::is_escape(&error) {
            Self::Escaped {
                path: path.to_string(),
            }
        } else if error.raw_os_error() == Some(rustix::io::Errno::ISDIR.raw_os_error()) {
            Self::IsADirectory
        } else {
            Self::Io(error)
        }
    }
}

impl std::fmt::Display for FsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotFound => f.write_str("no such file or directory"),
            Self::IsADirectory => f.write_str("it is a directory"),
            Self::NotADirectory => f.write_str("it is not a directory"),
            Self::NotRegular(kind) => write!(f, "it is {kind}, not a regular file"),
            Self::TooLarge { size, limit } => write!(
                f,
                "the file is {size} bytes, more than the {limit} bytes that may be read"
            ),
            Self::Ignored { path } => f.write_str(&crate::texts::clineignore_error(path)),
            Self::Escaped { path } => write!(
                f,
                "{path} leads outside the workspace (through a symbolic link, or it changed while it was being opened); it was not accessed."
            ),
            Self::Refused { path } => write!(
                f,
                "{path} goes through a /proc or /dev/fd magic link or a symbolic link loop, which are never followed."
            ),
            Self::Protected { path } => write!(
                f,
                "{path} is inside the repository's .git directory, which file tools do not change (its hooks and configuration run code when git runs). Use git commands to change the repository."
            ),
            Self::Changed { path } => write!(
                f,
                "{path} changed after it was checked (a directory on the way was replaced or became a symbolic link); nothing was read or written through it."
            ),
            Self::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for FsError {}

impl From<FsError> for ToolError {
    /// Policy refusals are `BLOCKED` (not a mistake), a changed path is `PATH_CHANGED`;
    /// everything else is `FAILED`.
    fn from(error: FsError) -> Self {
        let kind = if matches!(error, FsError::Changed { .. }) {
            ToolErrorKind::PATH_CHANGED
        } else if error.is_blocked() {
            ToolErrorKind::BLOCKED
        } else {
            ToolErrorKind::FAILED
        };
        ToolError::new(kind, error.to_string())
    }
}
