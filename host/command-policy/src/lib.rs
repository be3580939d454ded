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
//! use command_policy::{CommandPermissions, Reason};
//!
//! let permissions = CommandPermissions::from_value(Some(r#"{"allow":["echo *"],"deny":["rm *"]}"#));
//! assert!(permissions.check("echo hello").allowed);
//! let verdict = permissions.check("echo \"$(rm -rf ~)\"");
//! assert_eq!(verdict.reason, Reason::SegmentDenied);
//! assert_eq!(verdict.failed_segment.as_deref(), Some("rm -rf ~"));
//! ```

mod check;
mod cline;
mod expansions;
mod found;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod pattern;
pub mod plan_guard;
mod risky;
mod rules;
mod scripts;
mod shell;
mod verdict;
mod wrappers;

use check::evaluate;
use rules::parse_rules;
use verdict::Denial;
pub use verdict::{CheckedPart, CommandVerdict, Trace, UnsafeConstruct};

use std::sync::OnceLock;

pub use pattern::Pattern;
pub use rules::{Reason, Rules, ENV_VAR};

/// The check runs on a thread of its own with this much stack: the parser is recursive.
const CHECK_STACK_BYTES: usize = 64 * 1024 * 1024;

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

#[cfg(test)]
mod tests;

#[cfg(test)]
mod hardening_tests;
