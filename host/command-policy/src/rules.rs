//! What `CLINE_COMMAND_PERMISSIONS` configures: the variable, its rules as read from its JSON,
//! and the reason codes of a verdict.

use serde::Serialize;
use serde_json::Value;

use crate::pattern::Pattern;

/// The environment variable that holds the permissions.
pub const ENV_VAR: &str = "CLINE_COMMAND_PERMISSIONS";

/// Why a command is allowed or refused: Cline's reason codes, plus `dynamic_command`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// No permissions configured: everything is allowed.
    NoConfig,
    /// Every rule passed.
    Allowed,
    /// A deny pattern matched the command.
    Denied,
    /// An allow list exists and no pattern matched.
    NoMatchDenyDefault,
    /// A redirect appeared and `allowRedirects` is not true.
    RedirectDetected,
    /// A line separator or backtick outside quotes, or a command that does not parse.
    ShellOperatorDetected,
    /// A deny pattern matched one part of the command.
    SegmentDenied,
    /// One part of the command matched no allow pattern.
    SegmentNoMatch,
    /// A command whose name or code is only known at run time (this port's addition).
    DynamicCommand,
    /// A construct whose effect cannot be computed before it runs: prompt expansion,
    /// indirection, arithmetic on variables (this port's addition).
    UnsafeExpansion,
    /// An option that runs code or writes files that no allow pattern names (this port's
    /// addition).
    RiskyOption,
    /// `CLINE_COMMAND_PERMISSIONS` is malformed: every command is refused (this port's
    /// addition; Cline ignores such a value).
    InvalidConfig,
    /// The plan preset's rule: the command can modify files ([`crate::plan_guard`]).
    PlanMode,
}

impl Reason {
    /// The code as it appears in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoConfig => "no_config",
            Self::Allowed => "allowed",
            Self::Denied => "denied",
            Self::NoMatchDenyDefault => "no_match_deny_default",
            Self::RedirectDetected => "redirect_detected",
            Self::ShellOperatorDetected => "shell_operator_detected",
            Self::SegmentDenied => "segment_denied",
            Self::SegmentNoMatch => "segment_no_match",
            Self::DynamicCommand => "dynamic_command",
            Self::UnsafeExpansion => "unsafe_expansion",
            Self::RiskyOption => "risky_option",
            Self::InvalidConfig => "invalid_config",
            Self::PlanMode => "plan_mode",
        }
    }
}

/// The configured rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    /// Allow patterns; when non-empty, every command must match one.
    pub allow: Vec<Pattern>,
    /// Deny patterns; checked first.
    pub deny: Vec<Pattern>,
    /// Whether redirects (`>`, `<`, `2>&1`, here-documents, process substitution) are allowed.
    pub allow_redirects: bool,
}

impl Rules {
    pub(crate) fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty()
    }
}

/// Reads a configuration: `None` for `null`, the rules of an object, or what is wrong.
pub(crate) fn parse_rules(text: &str) -> Result<Option<Rules>, String> {
    let json = serde_json::from_str::<Value>(text)
        .map_err(|e| format!("{ENV_VAR} is not valid JSON ({e})"))?;
    let object = match json {
        Value::Null => return Ok(None),
        Value::Object(object) => object,
        other => {
            return Err(format!(
                "{ENV_VAR} is not a JSON object (it is {})",
                kind(&other)
            ))
        }
    };
    let patterns = |key: &str| -> Result<Vec<Pattern>, String> {
        match object.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(list)) => list
                .iter()
                .enumerate()
                .map(|(i, entry)| match entry {
                    Value::String(text) => Ok(Pattern::new(text)),
                    other => Err(format!(
                        "`{key}` in {ENV_VAR} is not an array of strings (entry {} is {})",
                        i + 1,
                        kind(other)
                    )),
                })
                .collect(),
            Some(other) => Err(format!(
                "`{key}` in {ENV_VAR} is not an array of strings (it is {})",
                kind(other)
            )),
        }
    };
    let allow_redirects = match object.get("allowRedirects") {
        None => false,
        Some(Value::Bool(value)) => *value,
        Some(other) => {
            return Err(format!(
                "`allowRedirects` in {ENV_VAR} is not a boolean (it is {})",
                kind(other)
            ))
        }
    };
    Ok(Some(Rules {
        allow: patterns("allow")?,
        deny: patterns("deny")?,
        allow_redirects,
    }))
}

/// A JSON value's kind, for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
