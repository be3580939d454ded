//! Why the egress policy or its proxy cannot be had.

use std::path::PathBuf;

use super::rules::BadRule;

/// Why the egress policy or its proxy cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum EgressError {
    /// A rule of a setting cannot be read.
    #[error("{key}: {source}")]
    Rule {
        /// The setting.
        key: &'static str,
        /// The rule.
        source: BadRule,
    },
    /// A path setting cannot be expanded.
    #[error("{key}: {reason}")]
    Path {
        /// The setting.
        key: &'static str,
        /// Why.
        reason: String,
    },
    /// A file of the policy cannot be read or written.
    #[error("cannot use {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The proxy could not start.
    #[error("the egress proxy cannot start: {0}")]
    Proxy(String),
}
