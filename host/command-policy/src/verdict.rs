//! What a check says: the verdict, the refusal before its message is written, and the trace of
//! every part checked.

use serde::Serialize;

use crate::pattern::Pattern;
use crate::rules::{Reason, ENV_VAR};

/// The outcome of a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandVerdict {
    /// Whether the command may run.
    pub allowed: bool,
    /// Why.
    pub reason: Reason,
    /// The deny pattern that matched.
    pub matched_pattern: Option<String>,
    /// The part of the command that failed, in a command of several parts.
    pub failed_segment: Option<String>,
    /// The operator that was found (`\n`, `` ` ``, `parse_error`…).
    pub detected_operator: Option<String>,
    /// The message Cline shows for a refusal (wrapped once more for the model).
    pub denial_message: Option<String>,
    /// Whether the refusal comes from this port's stricter analysis rather than Cline's check.
    pub stricter_than_cline: bool,
}

impl CommandVerdict {
    pub(crate) fn allowed(reason: Reason) -> Self {
        Self {
            allowed: true,
            reason,
            matched_pattern: None,
            failed_segment: None,
            detected_operator: None,
            denial_message: None,
            stricter_than_cline: false,
        }
    }

    pub(crate) fn denied(command: &str, denial: Denial) -> Self {
        let message = match &denial.failed_segment {
            Some(segment) => format!(
                "Command \"{command}\" was denied by {ENV_VAR}. Segment \"{segment}\" {}.",
                denial.reason.as_str()
            ),
            None => {
                let pattern = denial
                    .matched_pattern
                    .as_deref()
                    .map(|p| format!(" (matched pattern: {p})"))
                    .unwrap_or_default();
                let detail = denial
                    .detail
                    .as_deref()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default();
                format!(
                    "Command \"{command}\" was denied by {ENV_VAR}. Reason: {}{pattern}{detail}",
                    denial.reason.as_str()
                )
            }
        };
        Self {
            allowed: false,
            reason: denial.reason,
            matched_pattern: denial.matched_pattern,
            failed_segment: denial.failed_segment,
            detected_operator: denial.detected_operator,
            denial_message: Some(message),
            stricter_than_cline: denial.stricter,
        }
    }
}

/// A refusal, before its message is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Denial {
    pub(crate) reason: Reason,
    pub(crate) matched_pattern: Option<String>,
    pub(crate) failed_segment: Option<String>,
    pub(crate) detected_operator: Option<String>,
    /// More about the refusal, for the message (what is wrong with the configuration).
    pub(crate) detail: Option<String>,
    pub(crate) stricter: bool,
}

impl Denial {
    pub(crate) fn new(reason: Reason) -> Self {
        Self {
            reason,
            matched_pattern: None,
            failed_segment: None,
            detected_operator: None,
            detail: None,
            stricter: false,
        }
    }

    pub(crate) fn stricter(
        reason: Reason,
        segment: Option<String>,
        pattern: Option<&Pattern>,
    ) -> Self {
        Self {
            failed_segment: segment,
            matched_pattern: pattern.map(|p| p.as_str().to_string()),
            stricter: true,
            ..Self::new(reason)
        }
    }

    pub(crate) fn unparsable() -> Self {
        Self {
            detected_operator: Some("parse_error".to_string()),
            stricter: true,
            ..Self::new(Reason::ShellOperatorDetected)
        }
    }
}

/// How a check went, for `toolhost policy check-command`: what each stage looked at and what
/// it said.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Trace {
    /// Cline's segments and their outcome.
    pub segments: Vec<CheckedPart>,
    /// The commands the stricter stage found and their outcome.
    pub commands: Vec<CheckedPart>,
    /// Constructs refused as `unsafe_expansion`.
    pub unsafe_constructs: Vec<UnsafeConstruct>,
}

/// One segment or command, as checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckedPart {
    /// Its text.
    pub command: String,
    /// `allow_and_deny`, or `deny_only` for code that only might run (inside quotes).
    pub checked_with: &'static str,
    /// The allow pattern that matched it, when there is an allow list.
    pub allowed_by: Option<String>,
    /// `None` when it passed; else the reason it was refused for.
    pub refused: Option<Reason>,
    /// The deny pattern that matched, when one did.
    pub denied_by: Option<String>,
    /// Its options that run code or write files (`-c`, `--output`…).
    pub risky_options: Vec<String>,
}

/// A construct refused as `unsafe_expansion`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnsafeConstruct {
    /// The part of the command.
    pub construct: String,
    /// What it is (`@P`, `$((`…).
    pub operator: String,
}
