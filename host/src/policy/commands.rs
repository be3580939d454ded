//! `CLINE_COMMAND_PERMISSIONS`: which commands `execute_command` may run.
//!
//! The variable holds JSON: `{"allow": [patterns], "deny": [patterns], "allowRedirects": bool}`.
//! Unset, empty or `null` mean no restriction at all. A value that is not such an object (not
//! JSON, an array, `allow` that is not an array of strings…) refuses every command, naming the
//! problem (`invalid_config`; Cline ignores such a value). A pattern matches a whole command,
//! `*` standing for any characters and `?` for one (see [`Pattern`]).
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
//!    is refused as `dynamic_command`. Options that run code or write files (`git -c`,
//!    `sed -i`, `find -exec`, module `risky`) count as commands of their own: an allow pattern
//!    must name them literally (`risky_option`), and deny rules see them. Cline let all of these
//!    through; the port refuses them (`stricter_than_cline` in the verdict).
//!
//! Constructs whose effect cannot be computed before they run (`${x@P}`, `$((y))` with a
//! variable, `${!name}`, module `expansions`) are refused as `unsafe_expansion` whenever the
//! variable is set.
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
mod expansions;
mod found;
mod pattern;
mod risky;
mod scripts;
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
    /// A construct whose effect cannot be computed before it runs: prompt expansion,
    /// indirection, arithmetic on variables (this port's addition).
    UnsafeExpansion,
    /// An option that runs code or writes files that no allow pattern names (this port's
    /// addition).
    RiskyOption,
    /// `CLINE_COMMAND_PERMISSIONS` is malformed: every command is refused (this port's
    /// addition; Cline ignores such a value).
    InvalidConfig,
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

/// The command permissions of a process: no restriction, a set of rules, or a malformed value
/// that refuses everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandPermissions {
    rules: Option<Rules>,
    /// What is wrong with a malformed value.
    problem: Option<String>,
}

impl CommandPermissions {
    /// Parses a value of [`ENV_VAR`] (`None` when unset). An empty value or `null` configure
    /// nothing, as in Cline. An object configures what its `allow`, `deny` (arrays of strings)
    /// and `allowRedirects` (a boolean) say; other keys are ignored. Anything else (not JSON,
    /// not an object, a field of another type) is malformed and refuses every command: Cline
    /// then restricts nothing, which would silently drop the rules someone meant to set.
    pub fn from_value(value: Option<&str>) -> Self {
        let Some(text) = value.filter(|t| !t.is_empty()) else {
            return Self::default();
        };
        match parse_rules(text) {
            Ok(rules) => Self {
                rules,
                problem: None,
            },
            Err(problem) => {
                let problem = format!("{problem}; every command is refused until it is fixed");
                tracing::warn!("{problem}");
                Self {
                    rules: None,
                    problem: Some(problem),
                }
            }
        }
    }

    /// What is wrong with a malformed value, when it is.
    pub fn problem(&self) -> Option<&str> {
        self.problem.as_deref()
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

    /// Whether permissions are configured (even without rules, redirects are then refused; a
    /// malformed value counts).
    pub fn is_configured(&self) -> bool {
        self.rules.is_some() || self.problem.is_some()
    }

    /// The rules, when configured.
    pub fn rules(&self) -> Option<&Rules> {
        self.rules.as_ref()
    }

    /// Checks a command without running anything.
    pub fn check(&self, command: &str) -> CommandVerdict {
        self.run_check(command, None)
    }

    /// Checks a command and tells how: what each stage found and which rule decided.
    pub fn explain(&self, command: &str) -> (CommandVerdict, Trace) {
        let mut trace = Trace::default();
        let verdict = self.run_check(command, Some(&mut trace));
        (verdict, trace)
    }

    fn run_check(&self, command: &str, trace: Option<&mut Trace>) -> CommandVerdict {
        if let Some(problem) = &self.problem {
            return CommandVerdict::denied(
                command,
                Denial {
                    detail: Some(problem.clone()),
                    stricter: true,
                    ..Denial::new(Reason::InvalidConfig)
                },
            );
        }
        let Some(rules) = &self.rules else {
            return CommandVerdict::allowed(Reason::NoConfig);
        };
        // The parser recurses: on a thread of its own it gets a stack large enough for any
        // command within the nesting limit, so no input can overflow the host's stack.
        let outcome = std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("command-check".to_string())
                .stack_size(CHECK_STACK_BYTES)
                .spawn_scoped(scope, || {
                    let mut local = trace.is_some().then(Trace::default);
                    let denial = evaluate(rules, command, local.as_mut());
                    (denial, local)
                })
                .ok()
                .and_then(|handle| handle.join().ok())
        });
        match outcome {
            Some((denial, local)) => {
                if let (Some(trace), Some(local)) = (trace, local) {
                    *trace = local;
                }
                match denial {
                    None => CommandVerdict::allowed(Reason::Allowed),
                    Some(denial) => CommandVerdict::denied(command, denial),
                }
            }
            // The check itself failed: refuse.
            None => CommandVerdict::denied(command, Denial::unparsable()),
        }
    }
}

/// Reads a configuration: `None` for `null`, the rules of an object, or what is wrong.
fn parse_rules(text: &str) -> Result<Option<Rules>, String> {
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
    reason: Reason,
    matched_pattern: Option<String>,
    failed_segment: Option<String>,
    detected_operator: Option<String>,
    /// More about the refusal, for the message (what is wrong with the configuration).
    detail: Option<String>,
    stricter: bool,
}

impl Denial {
    fn new(reason: Reason) -> Self {
        Self {
            reason,
            matched_pattern: None,
            failed_segment: None,
            detected_operator: None,
            detail: None,
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

/// Both stages of the check; `None` when the command may run. With a trace, every part is
/// checked and recorded; the verdict is the same (the first refusal).
fn evaluate(rules: &Rules, command: &str, mut trace: Option<&mut Trace>) -> Option<Denial> {
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
    let mut first = None;
    if let Ok(tokens) = cline::tokenize(command) {
        let parsed = cline::segments(&tokens);
        first = cline::validate(&parsed, rules);
        if let Some(trace) = trace.as_deref_mut() {
            trace.segments = cline::explain(&parsed, rules);
        }
        if first.is_some() && trace.is_none() {
            return first;
        }
    }
    let second = match shell::analyze(command) {
        Ok(analysis) => check_analysis(&analysis, rules, trace),
        Err(shell::Unparsable(reason)) => {
            tracing::debug!(target: "toolhost::policy", "command refused, it does not parse: {reason}");
            Some(Denial::unparsable())
        }
    };
    first.or(second)
}

/// The stricter stage: every command that would run must pass the rules, and no construct
/// whose effect cannot be computed may appear.
fn check_analysis(
    analysis: &shell::Analysis,
    rules: &Rules,
    mut trace: Option<&mut Trace>,
) -> Option<Denial> {
    if analysis.redirects && !rules.allow_redirects {
        return Some(Denial::stricter(Reason::RedirectDetected, None, None));
    }
    let mut first = None;
    if !rules.is_empty() {
        for found in &analysis.commands {
            let outcome = check_found(found, rules);
            if let Some(trace) = trace.as_deref_mut() {
                let (allowed_by, refused, denied_by) = match &outcome {
                    Ok(pattern) => (pattern.map(|p| p.as_str().to_string()), None, None),
                    Err(denial) => (None, Some(denial.reason), denial.matched_pattern.clone()),
                };
                trace.commands.push(CheckedPart {
                    command: found.display(),
                    checked_with: strictness(found.strength),
                    allowed_by,
                    refused,
                    denied_by,
                    risky_options: found.risky.iter().map(|r| r.option.clone()).collect(),
                });
            }
            if let Err(denial) = outcome {
                if trace.is_none() {
                    return Some(denial);
                }
                first = first.or(Some(denial));
            }
        }
    }
    if let Some(trace) = trace {
        trace.unsafe_constructs = analysis
            .unsafe_constructs
            .iter()
            .map(|u| UnsafeConstruct {
                construct: u.construct.clone(),
                operator: u.operator.clone(),
            })
            .collect();
    }
    first.or_else(|| {
        analysis.unsafe_constructs.first().map(|u| Denial {
            detected_operator: Some(u.operator.clone()),
            ..Denial::stricter(Reason::UnsafeExpansion, Some(u.construct.clone()), None)
        })
    })
}

fn strictness(strength: shell::Strength) -> &'static str {
    match strength {
        shell::Strength::Full => "allow_and_deny",
        shell::Strength::DenyOnly => "deny_only",
    }
}

/// One command found by the stricter stage: refused, or passed (with the allow pattern that
/// matched it, when there is an allow list).
fn check_found<'r>(found: &shell::Found, rules: &'r Rules) -> Result<Option<&'r Pattern>, Denial> {
    let segment = Some(found.display());
    let full = found.strength == shell::Strength::Full;
    let dynamic_name = found.words.first().is_none_or(|w| w.dynamic);
    if full && (found.opaque || dynamic_name) {
        return Err(Denial::stricter(Reason::DynamicCommand, segment, None));
    }
    let has_directory = !dynamic_name && found.words[0].text().contains('/');
    // The command as a whole, and each risky option as a command of its own.
    let mut templates = vec![(segment.clone(), found.template(false))];
    if has_directory {
        templates.push((segment.clone(), found.template(true)));
    }
    for risky in &found.risky {
        let part = Some(found.display_risky(risky));
        templates.push((part.clone(), found.template_risky(risky, false)));
        if has_directory {
            templates.push((part, found.template_risky(risky, true)));
        }
    }
    for (part, template) in &templates {
        if let Some(pattern) = rules.deny.iter().find(|p| p.may_match(template)) {
            return Err(Denial::stricter(
                Reason::SegmentDenied,
                part.clone(),
                Some(pattern),
            ));
        }
    }
    if !full || rules.allow.is_empty() {
        return Ok(None);
    }
    let risky_denial = |risky: &risky::Risky| Denial {
        detected_operator: Some(risky.option.clone()),
        ..Denial::stricter(Reason::RiskyOption, Some(found.display_risky(risky)), None)
    };
    if let Some(risky) = found.risky.iter().find(|r| !r.nameable()) {
        return Err(risky_denial(risky));
    }
    let all: Vec<&risky::Risky> = found.risky.iter().collect();
    if let Some(pattern) = rules
        .allow
        .iter()
        .find(|p| p.matches_marked(&found.allow_text(&all)))
    {
        return Ok(Some(pattern));
    }
    let plain = found.allow_text(&[]);
    if !found.risky.is_empty() && rules.allow.iter().any(|p| p.matches_marked(&plain)) {
        // The command is allowed, an option of it is not named: say which.
        let unnamed = found
            .risky
            .iter()
            .find(|r| {
                let text = found.allow_text(&[r]);
                !rules.allow.iter().any(|p| p.matches_marked(&text))
            })
            .unwrap_or(&found.risky[0]);
        return Err(risky_denial(unnamed));
    }
    Err(Denial::stricter(Reason::SegmentNoMatch, segment, None))
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

/// Everything `toolhost policy check-command` reports: the check, how each stage went, and
/// what is wrong with a malformed configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandExplanation {
    /// The check, as execute_command gets it.
    #[serde(flatten)]
    pub check: CommandCheck,
    /// What each stage looked at.
    #[serde(flatten)]
    pub trace: Trace,
    /// What is wrong with `CLINE_COMMAND_PERMISSIONS`, when it is malformed.
    pub configuration_problem: Option<String>,
}

/// [`check_command`], with how each stage went.
pub fn explain_command(
    workspace: &Workspace,
    permissions: &CommandPermissions,
    command: &str,
) -> CommandExplanation {
    let (verdict, trace) = permissions.explain(command);
    CommandExplanation {
        check: CommandCheck {
            verdict,
            clineignore_path: super::clineignore::blocked_command_arg(
                workspace.ignore(),
                workspace.cwd(),
                command,
            ),
            configured: permissions.is_configured(),
        },
        trace,
        configuration_problem: permissions.problem().map(str::to_string),
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
        assert!(!CommandPermissions::from_value(Some("null")).is_configured());
        let empty = CommandPermissions::from_value(Some("{}"));
        assert_eq!(empty.rules(), Some(&Rules::default()));
        assert_eq!(
            CommandPermissions::from_value(None)
                .check("rm -rf /")
                .reason,
            Reason::NoConfig
        );
    }

    // Deliberate change: Cline ignores a malformed value (no restriction at all); the port
    // refuses every command and names the problem. This test replaces the part of
    // `configuration_follows_cline` that asserted Cline's behaviour.
    #[test]
    fn malformed_configuration_refuses_everything() {
        for (value, problem) in [
            (
                "{allow: [x]}",
                "CLINE_COMMAND_PERMISSIONS is not valid JSON (key must be a string at line 1 column 2)",
            ),
            ("[]", "CLINE_COMMAND_PERMISSIONS is not a JSON object (it is an array)"),
            ("5", "CLINE_COMMAND_PERMISSIONS is not a JSON object (it is a number)"),
            ("\"x\"", "CLINE_COMMAND_PERMISSIONS is not a JSON object (it is a string)"),
            (
                r#"{"allow":"git *"}"#,
                "`allow` in CLINE_COMMAND_PERMISSIONS is not an array of strings (it is a string)",
            ),
            (
                r#"{"deny":["rm *",5]}"#,
                "`deny` in CLINE_COMMAND_PERMISSIONS is not an array of strings (entry 2 is a number)",
            ),
            (
                r#"{"allow":null}"#,
                "`allow` in CLINE_COMMAND_PERMISSIONS is not an array of strings (it is null)",
            ),
            (
                r#"{"allowRedirects":"yes"}"#,
                "`allowRedirects` in CLINE_COMMAND_PERMISSIONS is not a boolean (it is a string)",
            ),
        ] {
            let permissions = CommandPermissions::from_value(Some(value));
            assert!(permissions.is_configured(), "{value}");
            assert_eq!(permissions.rules(), None, "{value}");
            let v = permissions.check("ls");
            assert_eq!((v.allowed, v.reason), (false, Reason::InvalidConfig), "{value}");
            assert!(v.stricter_than_cline);
            assert_eq!(
                v.denial_message.as_deref(),
                Some(
                    format!(
                        "Command \"ls\" was denied by CLINE_COMMAND_PERMISSIONS. Reason: \
                         invalid_config: {problem}; every command is refused until it is fixed"
                    )
                    .as_str()
                ),
                "{value}"
            );
        }
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
        // Deliberate change: `((…ls…))` is an arithmetic command to bash (it evaluates the
        // variable `ls`), now refused as unsafe_expansion; nesting within the limit is still
        // checked, with subshells that do not start with `((` (the parser also reads
        // `( ( ls ) )` as arithmetic, which is refused too).
        let nested = format!("{}ls{}", "(ls;".repeat(450), ")".repeat(450));
        assert!(check(&nested).allowed);
        assert_eq!(check("( ( ls ) )").reason, Reason::UnsafeExpansion);
        let arithmetic = format!("{}ls{}", "(".repeat(450), ")".repeat(450));
        assert_eq!(check(&arithmetic).reason, Reason::UnsafeExpansion);
        // Cline's tokenizer gives up on `${` cut by a space; the parser reads it.
        assert!(check("echo ${X:-a b}").allowed);
        assert_eq!(
            check("echo ${X:-$(rm -rf x)}").reason,
            Reason::SegmentDenied
        );
    }

    /// A verdict's reason and failed segment under `rules`.
    fn verdict(rules: &str, command: &str) -> (bool, Reason, Option<String>, Option<String>) {
        let v = CommandPermissions::from_value(Some(rules)).check(command);
        (v.allowed, v.reason, v.failed_segment, v.detected_operator)
    }

    const DENY_RM: &str = r#"{"deny":["rm *"],"allowRedirects":true}"#;

    #[test]
    fn expansions_whose_effect_cannot_be_computed_are_refused() {
        // The attacker's two commands: both really delete `victim` in bash.
        let attacker = r#"{"allow":["git *","ls *"],"deny":["rm *"]}"#;
        let v =
            CommandPermissions::from_value(Some(attacker)).check(r"ls ${x:=\$(rm\ victim)} ${x@P}");
        assert_eq!((v.allowed, v.reason), (false, Reason::UnsafeExpansion));
        assert_eq!(
            v.denial_message.as_deref(),
            Some(
                r#"Command "ls ${x:=\$(rm\ victim)} ${x@P}" was denied by CLINE_COMMAND_PERMISSIONS. Segment "${x:=\$(rm\ victim)}" unsafe_expansion."#
            )
        );
        assert!(v.stricter_than_cline);
        assert_eq!(
            verdict(attacker, r"ls ${y:=a[\$(rm\ victim)]} $((y))").1,
            Reason::UnsafeExpansion
        );
        for (command, construct, operator) in [
            (r"ls ${x@P}", "${x@P}", "@P"),
            (r"ls ${x@E}", "${x@E}", "@E"),
            (r"ls ${x@A}", "${x@A}", "@A"),
            (r"ls ${x@Q}", "${x@Q}", "@Q"),
            (r"ls ${x@K}", "${x@K}", "@K"),
            (r"ls ${x@a}", "${x@a}", "@a"),
            (r"ls ${x@U}", "${x@U}", "@U"),
            (r"ls ${x@u}", "${x@u}", "@u"),
            (r"ls ${x@L}", "${x@L}", "@L"),
            (r"ls ${x@k}", "${x@k}", "@k"),
            (r"ls ${!name}", "${!name}", "!"),
            (r"ls ${x:=\$y}", r"${x:=\$y}", ":="),
            (r"ls ${x=\`id\`}", r"${x=\`id\`}", "="),
            (r"ls ${x:=a[1]}", "${x:=a[1]}", ":="),
            (r"ls ${x:=a\b}", r"${x:=a\b}", ":="),
            ("ls $((y))", "$((y))", "$(("),
            ("ls $((i + 1))", "$((i + 1))", "$(("),
            ("ls $[y]", "$[y]", "$["),
            ("ls ${a[i]}", "${a[i]}", "["),
            ("ls ${x:off:2}", "${x:off:2}", ":"),
            ("ls ${x:1:len}", "${x:1:len}", ":"),
            ("((y))", "((y))", "(("),
            (
                "for ((i=0; i<n; i++)); do ls; done",
                "for ((i=0))",
                "for ((",
            ),
            ("let y", "let y", "let"),
            ("a[i]=1", "a[i]=1", "["),
            ("a=([k]=1)", "a=([k]=1)", "["),
            ("[[ $x -eq 1 ]]", "[[ $x -eq 1 ]]", "-eq"),
            ("[[ 1 -lt y ]]", "[[ 1 -lt y ]]", "-lt"),
            ("[[ -v a[i] ]]", "a[i]", "["),
            ("declare -i x=1", "declare -i x=1", "declare -i"),
            ("local -i x", "local -i x", "local -i"),
            ("typeset -i x=y", "typeset -i x=y", "typeset -i"),
            ("declare -n r=x", "declare -n r=x", "declare -n"),
            (
                "declare \"$y=1\"",
                "declare \"$y=1\"",
                "name only known at run time",
            ),
            ("read a[i] <<< x", "a[i]", "["),
            ("printf -v a[i] x", "a[i]", "["),
            ("test -v a[i]", "a[i]", "["),
            (r"PS4=\$\(id\) bash -xc ls", r"PS4=\$\(id\)", "PS4="),
            (r"env PS4=\$x bash -xc ls", r"PS4=\$x", "PS4="),
            ("read PS4 <<< x", "PS4", "PS4="),
            (r"sudo -u root PS4=\$x bash -x", r"PS4=\$x", "PS4="),
            ("for PS4 in x; do ls; done", "for PS4 in", "PS4="),
            ("bash -c 'ls $((y))'", "$((y))", "$(("),
            ("echo \"$(ls $((y)))\"", "$((y))", "$(("),
            ("( ( ls ) )", "((ls))", "(("),
        ] {
            assert_eq!(
                verdict(DENY_RM, command),
                (
                    false,
                    Reason::UnsafeExpansion,
                    Some(construct.to_string()),
                    Some(operator.to_string())
                ),
                "{command}"
            );
        }
        for command in [
            "echo $((1024*1024)) $((0x10 + 2#101))",
            "echo $(( $# + 1 )) $((${#HOME} * 2))",
            "echo $[1+2]",
            "echo ${a[0]} ${a[@]} ${a[*]} ${!a[@]} ${!PATH*} ${arr[-1]}",
            "echo ${x:-$HOME} ${x:=plain} ${#x} ${x//a/b} ${x^^} ${x,} ${x%.rs}",
            "echo ${x:1:2}",
            "a[2]=1; a=([0]=x [1]=y)",
            "((1 + 2))",
            "let 1+2",
            "[[ 1 -eq 1 && $x == y ]]",
            "declare x=1; local y; export PATH=/bin; declare -a list",
            "read -r line <<< x; printf -v x %s y; test -v x",
            "export PS4='+ '",
            "echo '${x@P} $((y))'",
        ] {
            assert!(
                CommandPermissions::from_value(Some(DENY_RM))
                    .check(command)
                    .allowed,
                "{command}"
            );
        }
        // Refused whenever the variable is set, even without rules.
        assert_eq!(verdict("{}", "ls ${x@P}").1, Reason::UnsafeExpansion);
    }

    #[test]
    fn risky_options_need_an_allow_pattern_that_names_them() {
        let wildcards = r#"{"allow":["git *","sed *","find *","tar *","rg *","awk *","sort *","curl *","wget *","tee *","dd *","rsync *","ssh *","zip *","man *","uniq *","ls *","echo *"],"deny":["rm *"]}"#;
        for (command, part, option) in [
            (
                "git -c alias.x='!touch victim' x",
                "git -c alias.x=!touch victim",
                "-c",
            ),
            ("git -calias.x=!id x", "git -calias.x=!id", "-c"),
            (
                "git --config-env=core.pager=P log",
                "git --config-env=core.pager=P",
                "--config-env",
            ),
            (
                "git --exec-path=/tmp log",
                "git --exec-path=/tmp",
                "--exec-path",
            ),
            ("git log --output=x", "git --output=x", "--output"),
            ("git format-patch -o dir HEAD~1", "git -o dir", "-o"),
            (
                "git clone --upload-pack=x url",
                "git --upload-pack=x",
                "--upload-pack",
            ),
            ("git clone 'ext::sh -c id' d", "git ext::sh -c id", "ext::"),
            (
                "git push --receive-pack=x origin",
                "git --receive-pack=x",
                "--receive-pack",
            ),
            ("git rebase --exec id main", "git --exec", "--exec"),
            ("git bisect run id", "git bisect run", "bisect run"),
            (
                "git submodule foreach id",
                "git submodule foreach",
                "submodule foreach",
            ),
            ("git difftool -x id", "git -x id", "-x"),
            ("git grep -Oid x", "git -Oid", "-O"),
            (
                "git filter-branch --tree-filter id",
                "git filter-branch",
                "filter-branch",
            ),
            ("git config core.pager id", "git config", "config (a write)"),
            ("git log $X", "git $X", "an argument only known at run time"),
            ("find . -exec ls {} ;", "find -exec", "-exec"),
            ("find . -delete", "find -delete", "-delete"),
            ("find . -fprint out", "find -fprint", "-fprint"),
            ("sed -i s/a/b/ f", "sed -i", "-i"),
            ("sed -f script f", "sed -f script", "-f"),
            (
                "sed 's/a/b/w out' f",
                "sed s/a/b/w out",
                "sed script (s///w)",
            ),
            ("sed '1e id' f", "sed 1e id", "sed script (e)"),
            (
                "tar --to-command=sh -xf a",
                "tar --to-command=sh",
                "--to-command",
            ),
            ("tar -I sh -xf a", "tar -I sh", "-I"),
            ("rg --pre sh x", "rg --pre sh", "--pre"),
            (
                "awk 'BEGIN{system(\"id\")}'",
                "awk BEGIN{system(\"id\")}",
                "awk program (system)",
            ),
            ("sort -o out in", "sort -o out", "-o"),
            ("curl -o out http://127.0.0.1/", "curl -o out", "-o"),
            ("wget -O out http://127.0.0.1/", "wget -O out", "-O"),
            ("echo x | tee out", "tee out", "a file tee writes"),
            ("dd if=a of=b", "dd of=b", "of="),
            ("rsync -e sh a b", "rsync -e sh", "-e"),
            (
                "ssh -o ProxyCommand=sh h",
                "ssh -o ProxyCommand=sh",
                "-o ProxyCommand",
            ),
            ("zip -TT sh a.zip f", "zip -TT", "-TT"),
            ("man -P sh ls", "man -P sh", "-P"),
            ("uniq in out", "uniq out", "the file uniq writes"),
        ] {
            assert_eq!(
                verdict(wildcards, command),
                (
                    false,
                    Reason::RiskyOption,
                    Some(part.to_string()),
                    Some(option.to_string())
                ),
                "{command}"
            );
        }
        for command in [
            "git status",
            "git log --oneline -n 5",
            "git push -u origin main",
            "git commit -m \"$(echo msg)\"",
            "git config user.name",
            "git config --get user.name",
            "find . -name '*.rs'",
            "sed -n 1,5p f",
            "tar -xzf a.tgz",
            "rg -n x src",
            "awk '{print $1}' f",
            "sort -u f",
            "curl -sS http://127.0.0.1/",
            "uniq -c f",
            "dd if=a bs=1",
            "ls -la",
        ] {
            let (allowed, reason, ..) = verdict(wildcards, command);
            assert!(allowed, "{command}: {reason:?}");
        }
        // Behind a wrapper too.
        assert_eq!(
            verdict(r#"{"allow":["sudo *","git *"]}"#, "sudo git -c x=y log"),
            (
                false,
                Reason::RiskyOption,
                Some("git -c x=y".to_string()),
                Some("-c".to_string())
            )
        );
        // A pattern that names the option allows it.
        for (rules, command) in [
            (r#"{"allow":["git -c *"]}"#, "git -c core.pager=cat log"),
            (r#"{"allow":["git * --output=*"]}"#, "git log --output=x"),
            (r#"{"allow":["sed -i *"]}"#, "sed -i s/a/b/ f"),
            (
                r#"{"allow":["find * -exec ls *","ls *"]}"#,
                "find . -exec ls {} ;",
            ),
            (r#"{"allow":["tee out.log"]}"#, "tee out.log"),
            (r#"{"allow":["dd * of=*"]}"#, "dd if=a of=b"),
            (r#"{"allow":["git config *"]}"#, "git config user.name x"),
        ] {
            let (allowed, reason, ..) = verdict(rules, command);
            assert!(allowed, "{rules} {command}: {reason:?}");
        }
        // Deny rules see the option as a command of its own, and the code it runs.
        assert_eq!(
            verdict(r#"{"deny":["git -c *"]}"#, "git -ccore.pager=x log"),
            (
                false,
                Reason::SegmentDenied,
                Some("git -ccore.pager=x".to_string()),
                None
            )
        );
        assert_eq!(
            verdict(
                r#"{"allow":["git -c *"],"deny":["rm *"]}"#,
                "git -c alias.x='!rm victim' x"
            ),
            (
                false,
                Reason::SegmentDenied,
                Some("rm victim".to_string()),
                None
            )
        );
        // `git *` alone does not allow a configured pager either.
        assert_eq!(
            verdict(r#"{"allow":["git *"]}"#, "git -c core.pager='id' log").1,
            Reason::RiskyOption
        );
    }

    #[test]
    fn xargs_does_not_allow_what_it_runs() {
        let rules = r#"{"allow":["xargs *","echo *"]}"#;
        assert_eq!(
            verdict(rules, "echo x | xargs touch"),
            (
                false,
                Reason::SegmentNoMatch,
                Some("touch".to_string()),
                None
            )
        );
        assert_eq!(
            verdict(rules, "echo x | xargs -0 -n1 touch").1,
            Reason::SegmentNoMatch
        );
        assert_eq!(
            verdict(rules, "echo x | xargs sh -c 'touch y'").1,
            Reason::SegmentNoMatch
        );
        assert!(verdict(rules, "echo x | xargs echo").0);
        // With -I, the input becomes part of the code: unknown before it runs.
        assert_eq!(
            verdict(DENY_RM, "echo 'rm x' | xargs -I{} sh -c '{}'").1,
            Reason::DynamicCommand
        );
        assert_eq!(
            verdict(DENY_RM, "echo rm | xargs -I % % -rf x").1,
            Reason::DynamicCommand
        );
        // An option of the inner command counts too.
        assert_eq!(
            verdict(
                r#"{"allow":["echo *","xargs *","sed *"]}"#,
                "echo f | xargs sed -i s/a/b/"
            )
            .1,
            Reason::RiskyOption
        );
        // fd runs its -x command like find -exec.
        assert_eq!(
            verdict(DENY_RM, "fd x -x rm -rf {}").1,
            Reason::SegmentDenied
        );
    }

    #[test]
    fn redirect_operands_are_matched_as_cline_joins_them() {
        let rules = r#"{"allow":["cat *","echo *","npm test *"],"allowRedirects":true}"#;
        for command in [
            "cat < input.txt",
            "echo hi > out.txt",
            "echo > out.txt",
            "echo \"$(cat < input.txt)\"",
        ] {
            let (allowed, reason, ..) = verdict(rules, command);
            assert!(allowed, "{command}: {reason:?}");
        }
        // The operand is not an argument: it cannot stand for the literal part of a pattern.
        assert_eq!(
            verdict(rules, "npm >test publish"),
            (
                false,
                Reason::SegmentNoMatch,
                Some("npm publish".to_string()),
                None
            )
        );
        assert_eq!(
            verdict(r#"{"allow":["cat"],"allowRedirects":true}"#, "cat < in").1,
            Reason::NoMatchDenyDefault
        );
        // Prefix assignments are part of the text, as in Cline, also where Cline does not look.
        assert_eq!(
            verdict(
                r#"{"allow":["ls *","git *"]}"#,
                "ls -l & GIT_PAGER=id git log"
            ),
            (
                false,
                Reason::SegmentNoMatch,
                Some("GIT_PAGER=id git log".to_string()),
                None
            )
        );
    }

    #[test]
    fn env_and_sudo_assignments_are_read_as_they_read_them() {
        assert_eq!(
            verdict(DENY_RM, "env 'A%=1' rm -rf x").1,
            Reason::SegmentDenied
        );
        assert_eq!(
            verdict(DENY_RM, "env 'BASH_FUNC_ls%%=() { rm -rf x; }' bash -c ls"),
            (
                false,
                Reason::SegmentDenied,
                Some("rm -rf x".to_string()),
                None
            )
        );
        assert!(verdict(DENY_RM, "env A=1 B=2 ls").0);
    }

    #[test]
    fn explanations_record_every_part() {
        let permissions =
            CommandPermissions::from_value(Some(r#"{"allow":["echo *","git *"],"deny":["rm *"]}"#));
        let (verdict, trace) = permissions.explain("echo \"$(git -c x=y log)\" && echo ok");
        assert_eq!(
            verdict,
            permissions.check("echo \"$(git -c x=y log)\" && echo ok")
        );
        assert_eq!(verdict.reason, Reason::RiskyOption);
        let commands: Vec<(&str, Option<&str>, Option<Reason>)> = trace
            .commands
            .iter()
            .map(|c| (c.command.as_str(), c.allowed_by.as_deref(), c.refused))
            .collect();
        assert_eq!(
            commands,
            [
                ("git -c x=y log", None, Some(Reason::RiskyOption)),
                ("echo \"$(git -c x=y log)\"", Some("echo *"), None),
                ("echo ok", Some("echo *"), None),
            ]
        );
        assert_eq!(trace.commands[0].risky_options, ["-c"]);
        assert_eq!(trace.segments[0].allowed_by.as_deref(), Some("echo *"));
        let (_, trace) = CommandPermissions::from_value(Some(DENY_RM)).explain("echo '$(rm x)'");
        assert_eq!(trace.commands[0].checked_with, "deny_only");
        assert_eq!(trace.commands[0].denied_by.as_deref(), Some("rm *"));
    }
}
