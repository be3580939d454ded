//! Why a command's sandbox could not be set up from its settings: [`SettingsError`] (the
//! settings are wrong: the call's parameters are invalid) and [`PolicyError`] (the command is
//! refused rather than run with something visible that should not be).

use std::path::PathBuf;

/// The sandbox keys of a settings section that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// A key has a value of the wrong type or an unknown one.
    #[error("[{section}]: {message}")]
    Invalid {
        /// The settings section.
        section: String,
        /// What is wrong, from the parser.
        message: String,
    },
    /// `env_keep` names one of toolhost's own variables.
    #[error(
        "The setting {section}.env_keep names {name}, one of toolhost's own variables \
         ({pattern}), which no command gets."
    )]
    OwnVariableKept {
        /// The settings section.
        section: String,
        /// The variable.
        name: String,
        /// The pattern of toolhost's own variables it matches.
        pattern: String,
    },
}

/// Why a command was not run: its sandbox could not hide what it must.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// A path setting cannot be expanded (`~` without a home, an unset `${env:NAME}`, a
    /// relative path).
    #[error("The setting {key} ({value}) cannot be used: {why}.")]
    UnusablePath {
        /// The setting, `section.key`.
        key: String,
        /// The value as written.
        value: String,
        /// Why.
        why: String,
    },
    /// A path to hide holds a workspace root, which cannot be hidden.
    #[error(
        "The command was not run: {key} names {path}, which holds the workspace root {root} \
         and cannot be hidden from commands. Remove it from {key}."
    )]
    HidesWorkspace {
        /// The setting (or list) that names the path.
        key: String,
        /// The path.
        path: PathBuf,
        /// The workspace root below it.
        root: PathBuf,
    },
    /// More paths to hide than the sandbox can mount.
    #[error(
        "The command was not run: .clineignore and the deny-read list block {count} files and \
         directories, more than the sandbox can hide ({max}). Block whole directories instead, \
         or set {section}.mask_ignored = false."
    )]
    TooManyMasks {
        /// How many.
        count: usize,
        /// The most there may be.
        max: usize,
        /// The settings section.
        section: String,
    },
    /// The `.clineignore` walk did not finish within its limits.
    #[error(
        "The command was not run: the workspace {root} is too large to find every file \
         .clineignore blocks within the sandbox's limits ({entries} entries, {secs} s), and \
         running it would show them. Set {section}.mask_ignored = false to run commands \
         without hiding them."
    )]
    WorkspaceTooLarge {
        /// The workspace root.
        root: PathBuf,
        /// Most entries a walk looks at.
        entries: usize,
        /// Longest a walk may take, in seconds.
        secs: u64,
        /// The settings section.
        section: String,
    },
    /// `.clineignore` blocks a link to a directory holding the workspace.
    #[error(
        "The command was not run: .clineignore blocks {link}, a link to {target}, which holds \
         the workspace and cannot be hidden."
    )]
    IgnoredLinkHoldsWorkspace {
        /// The link, relative to its root.
        link: PathBuf,
        /// Where it leads.
        target: PathBuf,
    },
    /// The `[egress]` settings cannot be used.
    #[error("The [egress] settings cannot be used: {0}.")]
    Egress(#[from] crate::egress::EgressError),
}
