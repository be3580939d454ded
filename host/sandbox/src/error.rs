//! The sandbox's errors, and how the supervisor reports them ([`SETUP_FAILED`],
//! [`MESSAGE_PREFIX`]).

use crate::support::Feature;

/// The supervisor's exit code when the sandbox could not be set up (the command did not run).
pub const SETUP_FAILED: i32 = 125;

/// The prefix of the supervisor's own messages on standard error.
pub const MESSAGE_PREFIX: &str = "toolhost sandbox: ";

/// Why a sandbox could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The kernel (or the user's rights) lacks a feature the policy needs.
    #[error("{detail} (needs {})", feature.name())]
    Unsupported {
        /// The missing feature.
        feature: Feature,
        /// What could not be done, and the system's answer.
        detail: String,
    },
    /// The policy or the supervisor's arguments are malformed.
    #[error("invalid sandbox policy: {0}")]
    Policy(String),
    /// The policy cannot be held for this command (it is not run).
    #[error("the command was not run: {0}")]
    Refused(String),
    /// A step of the setup failed.
    #[error("{step}: {source}")]
    Setup {
        /// What was being done.
        step: String,
        /// The system's answer.
        source: std::io::Error,
    },
    /// Sandboxes exist only on Linux.
    #[error("the sandbox needs Linux")]
    NotLinux,
}

impl SandboxError {
    /// A failed setup step.
    pub fn setup(step: impl Into<String>, source: impl Into<std::io::Error>) -> Self {
        Self::Setup {
            step: step.into(),
            source: source.into(),
        }
    }

    /// A missing feature.
    pub fn unsupported(feature: Feature, detail: impl Into<String>) -> Self {
        Self::Unsupported {
            feature,
            detail: detail.into(),
        }
    }
}
