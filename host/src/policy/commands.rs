//! `CLINE_COMMAND_PERMISSIONS`: which commands `execute_command` may run.
//!
//! The variable holds JSON: `{"allow": [patterns], "deny": [patterns], "allowRedirects": bool}`.
//! Unset, empty, invalid JSON or `null` mean no restriction at all. A pattern matches a whole
//! command, `*` standing for any characters and `?` for one (see [`Pattern`]).
//!
//! A command is checked in two stages, and refused if either refuses it:
//!
//! 1. Cline's own check, reproduced exactly (module `cline`): line separators or backticks outside
//!    quotes, redirects unless `allowRedirects` is true, and the allow/deny rules on every
//!    segment between `&&`, `||`, `|` and `;` and inside `( … )`. Its reason codes and messages
//!    are Cline's.
//! 2. A stricter analysis of what would really run, with a shell parser (module `shell`): chains with
//!    `&` and `;;` (which Cline merges into one segment), command substitutions inside double
//!    quotes, process substitutions, here-documents, `bash -c` strings, `eval`, and the commands
//!    behind wrappers such as `sudo`, `env`, `timeout` or `xargs` (whose name may also be given
//!    with a directory, `/bin/rm`). Every command found must pass the deny rules (an expansion
//!    counts as "anything", so `rm $FLAGS /` meets `rm -rf *`) and, if there is an allow list,
//!    the allow rules; a command whose name is only known at run time (`$CMD`, `bash -c "$X"`)
//!    is refused as `dynamic_command`. Cline let all of these through; the port refuses them
//!    (`stricter_than_cline` in the verdict).
//!
//! The check fails closed: a command the parser cannot read, or one nested beyond reason, is
//! refused (`shell_operator_detected` with the operator `parse_error`, the code Cline itself
//! reserves for parse failures) whenever the variable is set.
//!
//! ```
//! use toolhost::policy::commands::{CommandPermissions, Reason};
//!
//! let permissions = CommandPermissions::from_value(Some(r#"{"allow":["echo *"],"deny":["rm *"]}"#));
//! assert!(permissions.check("echo hello").allowed);
//! let verdict = permissions.check("echo \"$(rm -rf ~)\"");
//! assert_eq!(verdict.reason, Reason::SegmentDenied);
//! assert_eq!(verdict.failed_segment.as_deref(), Some("rm -rf ~"));
//! ```

mod cline;
mod found;
mod pattern;
mod shell;
mod wrappers;

use std::sync::OnceLock;

use serde::Serialize;
use serde_json::Value;

pub use pattern::Pattern;

use super::Workspace;

/// The environment variable that holds the permissions.
pub const ENV_VAR: &str = "CLINE_COMMAND_PERMISSIONS";

/// Longest command the parser is given; longer ones are refused when permissions are set.
const MAX_COMMAND_BYTES: usize = 128 * 1024;
/// Most nesting constructs (`(`, `{`, backticks, `if`, loops) a command may contain.
const MAX_NESTING: usize = 500;
/// The check runs on a thread of its own with this much stack: the parser is recursive.
const CHECK_STACK_BYTES: usize = 64 * 1024 * 1024;

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
    fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty()
    }
}

/// The command permissions of a process: no restriction, or a set of rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandPermissions {
    rules: Option<Rules>,
}

impl CommandPermissions {
    /// Parses a value of [`ENV_VAR`] (`None` when unset), as Cline does: an empty value,
    /// invalid JSON or `null` configure nothing; any other JSON configures what its `allow`,
    /// `deny` (arrays) and `allowRedirects` (boolean) say, ignoring fields of other types.
    /// Array entries that are not strings match nothing (Cline fails on them).
    pub fn from_value(value: Option<&str>) -> Self {
        let Some(text) = value.filter(|t| !t.is_empty()) else {
            return Self::default();
        };
        let json = match serde_json::from_str::<Value>(text) {
            Ok(Value::Null) => return Self::default(),
            Ok(json) => json,
            Err(e) => {
                tracing::warn!("{ENV_VAR} is not valid JSON ({e}); commands are not restricted");
                return Self::default();
            }
        };
        let patterns = |key: &str| -> Vec<Pattern> {
            json.get(key)
                .and_then(Value::as_array)
                .map(|list| {
                    list.iter()
                        .map(|entry| match entry {
                            Value::String(text) => Pattern::new(text),
                            other => Pattern::never(&other.to_string()),
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        Self {
            rules: Some(Rules {
                allow: patterns("allow"),
                deny: patterns("deny"),
                allow_redirects: json.get("allowRedirects").and_then(Value::as_bool) == Some(true),
            }),
        }
    }

    /// Reads [`ENV_VAR`] from this process's environment.
    pub fn from_env() -> Self {
        let value = std::env::var_os(ENV_VAR).map(|v| v.to_string_lossy().into_owned());
        Self::from_value(value.as_deref())
    }

    /// The process's permissions, read from the environment once, on first use (Cline reads
    /// the variable once, when its controller is built).
    pub fn global() -> &'static Self {
        static GLOBAL: OnceLock<CommandPermissions> = OnceLock::new();
        GLOBAL.get_or_init(Self::from_env)
    }

    /// Whether permissions are configured (even without rules, redirects are then refused).
    pub fn is_configured(&self) -> bool {
        self.rules.is_some()
    }

    /// The rules, when configured.
    pub fn rules(&self) -> Option<&Rules> {
        self.rules.as_ref()
    }

    /// Checks a command without running anything.
    pub fn check(&self, command: &str) -> CommandVerdict {
        let Some(rules) = &self.rules else {
            return CommandVerdict::allowed(Reason::NoConfig);
        };
        // The parser recurses: on a thread of its own it gets a stack large enough for any
        // command within the nesting limit, so no input can overflow the host's stack.
        let outcome = std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("command-check".to_string())
                .stack_size(CHECK_STACK_BYTES)
                .spawn_scoped(scope, || evaluate(rules, command))
                .ok()
                .and_then(|handle| handle.join().ok())
        });
        match outcome {
            Some(None) => CommandVerdict::allowed(Reason::Allowed),
            Some(Some(denial)) => CommandVerdict::denied(command, denial),
            // The check itself failed: refuse.
            None => CommandVerdict::denied(command, Denial::unparsable()),
        }
    }
}

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
    fn allowed(reason: Reason) -> Self {
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

    fn denied(command: &str, denial: Denial) -> Self {
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
                format!(
                    "Command \"{command}\" was denied by {ENV_VAR}. Reason: {}{pattern}",
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
    reason: Reason,
    matched_pattern: Option<String>,
    failed_segment: Option<String>,
    detected_operator: Option<String>,
    stricter: bool,
}

impl Denial {
    fn new(reason: Reason) -> Self {
        Self {
            reason,
            matched_pattern: None,
            failed_segment: None,
            detected_operator: None,
            stricter: false,
        }
    }

    fn stricter(reason: Reason, segment: Option<String>, pattern: Option<&Pattern>) -> Self {
        Self {
            failed_segment: segment,
            matched_pattern: pattern.map(|p| p.as_str().to_string()),
            stricter: true,
            ..Self::new(reason)
        }
    }

    fn unparsable() -> Self {
        Self {
            detected_operator: Some("parse_error".to_string()),
            stricter: true,
            ..Self::new(Reason::ShellOperatorDetected)
        }
    }
}

/// Both stages of the check; `None` when the command may run.
fn evaluate(rules: &Rules, command: &str) -> Option<Denial> {
    if let Some(operator) = cline::dangerous_char(command) {
        return Some(Denial {
            detected_operator: Some(operator.to_string()),
            ..Denial::new(Reason::ShellOperatorDetected)
        });
    }
    if too_complex(command) {
        return Some(Denial::unparsable());
    }
    // Cline treats a tokenizer failure (`${` cut by a space) as a command with no segments,
    // which it allows; the port then relies on its own analysis alone.
    if let Ok(tokens) = cline::tokenize(command) {
        if let Some(denial) = cline::validate(&cline::segments(&tokens), rules) {
            return Some(denial);
        }
    }
    match shell::analyze(command) {
        Ok(analysis) => check_analysis(&analysis, rules),
        Err(shell::Unparsable(reason)) => {
            tracing::debug!(target: "toolhost::policy", "command refused, it does not parse: {reason}");
            Some(Denial::unparsable())
        }
    }
}

/// The stricter stage: every command that would run must pass the rules.
fn check_analysis(analysis: &shell::Analysis, rules: &Rules) -> Option<Denial> {
    if analysis.redirects && !rules.allow_redirects {
        return Some(Denial::stricter(Reason::RedirectDetected, None, None));
    }
    if rules.is_empty() {
        return None;
    }
    for found in &analysis.commands {
        let segment = Some(found.display());
        let full = found.strength == shell::Strength::Full;
        let dynamic_name = found.words.first().is_none_or(|w| w.dynamic);
        if full && (found.opaque || dynamic_name) {
            return Some(Denial::stricter(Reason::DynamicCommand, segment, None));
        }
        let has_directory = !dynamic_name && found.words[0].text().contains('/');
        let template = found.template(false);
        let base_template = has_directory.then(|| found.template(true));
        let denied_by = rules.deny.iter().find(|p| {
            p.may_match(&template) || base_template.as_deref().is_some_and(|t| p.may_match(t))
        });
        if let Some(pattern) = denied_by {
            return Some(Denial::stricter(
                Reason::SegmentDenied,
                segment,
                Some(pattern),
            ));
        }
        if full && !rules.allow.is_empty() {
            let text = found.literal_text();
            if !rules.allow.iter().any(|p| p.matches(&text)) {
                return Some(Denial::stricter(Reason::SegmentNoMatch, segment, None));
            }
        }
    }
    None
}

/// Whether a command is too long or nests too much to be parsed safely.
fn too_complex(command: &str) -> bool {
    if command.len() > MAX_COMMAND_BYTES {
        return true;
    }
    let brackets = command
        .chars()
        .filter(|c| matches!(c, '(' | '{' | '`'))
        .count();
    let keywords = command
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')'))
        .filter(|w| matches!(*w, "if" | "while" | "until" | "for" | "case" | "select"))
        .count();
    brackets + keywords > MAX_NESTING
}

/// Everything the policies say about a command: the permission verdict, the argument
/// `.clineignore` blocks (Cline's heuristic for file-reading commands), and whether permissions
/// are configured at all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandCheck {
    /// The permission verdict.
    #[serde(flatten)]
    pub verdict: CommandVerdict,
    /// The first argument `.clineignore` blocks, for commands that read files.
    pub clineignore_path: Option<String>,
    /// Whether `CLINE_COMMAND_PERMISSIONS` is set.
    pub configured: bool,
}

/// Checks `command` against the permissions and the workspace's `.clineignore`.
pub fn check_command(
    workspace: &Workspace,
    permissions: &CommandPermissions,
    command: &str,
) -> CommandCheck {
    CommandCheck {
        verdict: permissions.check(command),
        clineignore_path: super::clineignore::blocked_command_arg(
            workspace.ignore(),
            workspace.cwd(),
            command,
        ),
        configured: permissions.is_configured(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: &str = r#"{"allow":["npm *","git status","cd *","echo *","ls","ls *","cat *"],"deny":["npm publish*","rm -rf *"]}"#;

    fn check(command: &str) -> CommandVerdict {
        CommandPermissions::from_value(Some(RULES)).check(command)
    }

    #[test]
    fn configuration_follows_cline() {
        assert!(!CommandPermissions::from_value(None).is_configured());
        assert!(!CommandPermissions::from_value(Some("")).is_configured());
        assert!(!CommandPermissions::from_value(Some("{allow: [x]}")).is_configured());
        assert!(!CommandPermissions::from_value(Some("null")).is_configured());
        let array = CommandPermissions::from_value(Some("[]"));
        assert_eq!(array.rules(), Some(&Rules::default()));
        let odd = CommandPermissions::from_value(Some(r#"{"allow":"x","allowRedirects":"yes"}"#));
        assert_eq!(odd.rules(), Some(&Rules::default()));
        assert_eq!(
            CommandPermissions::from_value(None)
                .check("rm -rf /")
                .reason,
            Reason::NoConfig
        );
    }

    #[test]
    fn cline_verdicts_are_kept() {
        let v = check("cd /tmp && rm -rf x");
        assert_eq!(
            (
                v.reason,
                v.matched_pattern.as_deref(),
                v.failed_segment.as_deref()
            ),
            (Reason::SegmentDenied, Some("rm -rf *"), Some("rm -rf x"))
        );
        assert_eq!(
            v.denial_message.as_deref(),
            Some("Command \"cd /tmp && rm -rf x\" was denied by CLINE_COMMAND_PERMISSIONS. Segment \"rm -rf x\" segment_denied.")
        );
        assert!(!v.stricter_than_cline);
        let v = check("npm publish");
        assert_eq!(
            v.denial_message.as_deref(),
            Some("Command \"npm publish\" was denied by CLINE_COMMAND_PERMISSIONS. Reason: denied (matched pattern: npm publish*)")
        );
        assert_eq!(check("echo `id`").detected_operator.as_deref(), Some("`"));
        assert!(check("echo $(ls)").allowed);
        assert!(check("cat ~/.ssh/id_rsa").allowed);
    }

    #[test]
    fn what_cline_let_through_is_refused() {
        for (command, reason, segment) in [
            ("npm test & rm -rf /", Reason::SegmentDenied, "rm -rf /"),
            ("echo \"$(rm -rf x)\"", Reason::SegmentDenied, "rm -rf x"),
            ("ls a#b; whoami", Reason::SegmentNoMatch, "whoami"),
            (
                "echo \"$(sudo rm -rf /)\"",
                Reason::SegmentNoMatch,
                "sudo rm -rf /",
            ),
            (
                "ls \"$(bash -c 'rm -rf /')\"",
                Reason::SegmentNoMatch,
                "bash -c rm -rf /",
            ),
            ("$CMD", Reason::NoMatchDenyDefault, ""),
        ] {
            let v = check(command);
            assert_eq!(v.reason, reason, "{command}");
            if !segment.is_empty() {
                assert_eq!(v.failed_segment.as_deref(), Some(segment), "{command}");
            }
        }
        let deny_only = CommandPermissions::from_value(Some(r#"{"deny":["rm *"]}"#));
        for command in [
            "FOO=1 rm -rf x",
            "/bin/rm -rf x",
            "sudo -u root rm -rf x",
            "bash -c 'rm -rf x'",
            "eval 'rm -rf x'",
            "echo x | xargs rm",
            "find . -exec rm {} \\;",
            "rm$IFS-rf x",
            "command rm -rf x",
            "f() { rm -rf x; }; f",
        ] {
            let v = deny_only.check(command);
            assert!(!v.allowed, "{command} was allowed");
            assert!(v.stricter_than_cline, "{command}: {v:?}");
        }
        assert_eq!(deny_only.check("$CMD -rf x").reason, Reason::DynamicCommand);
        assert!(deny_only.check("ls -la && echo done").allowed);
    }

    #[test]
    fn unparsable_commands_are_refused() {
        for command in ["echo $(ls", "ls )", "echo 'abc", "ls ;; ls", "echo ${"] {
            let v = check(command);
            assert_eq!(
                (v.reason, v.detected_operator.as_deref()),
                (Reason::ShellOperatorDetected, Some("parse_error")),
                "{command}"
            );
        }
        let deep = format!("echo {}x{}", "$(".repeat(600), ")".repeat(600));
        assert!(!check(&deep).allowed);
        let nested = format!("{}ls{}", "(".repeat(450), ")".repeat(450));
        assert!(check(&nested).allowed);
        // Cline's tokenizer gives up on `${` cut by a space; the parser reads it.
        assert!(check("echo ${X:-a b}").allowed);
        assert_eq!(
            check("echo ${X:-$(rm -rf x)}").reason,
            Reason::SegmentDenied
        );
    }
}
