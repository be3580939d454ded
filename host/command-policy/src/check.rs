//! Both stages of the check: Cline's, then the parser-based analysis of what would really run.

use crate::found::Risky;
use crate::pattern::Pattern;
use crate::rules::{Reason, Rules};
use crate::verdict::{CheckedPart, Denial, Trace, UnsafeConstruct};
use crate::{cline, shell};

/// Longest command the parser is given; longer ones are refused when permissions are set.
const MAX_COMMAND_BYTES: usize = 128 * 1024;
/// Most nesting constructs (`(`, `{`, backticks, `if`, loops) a command may contain.
const MAX_NESTING: usize = 500;

/// Both stages of the check; `None` when the command may run. With a trace, every part is
/// checked and recorded; the verdict is the same (the first refusal).
pub(crate) fn evaluate(
    rules: &Rules,
    command: &str,
    mut trace: Option<&mut Trace>,
) -> Option<Denial> {
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
    let risky_denial = |risky: &Risky| Denial {
        detected_operator: Some(risky.option.clone()),
        ..Denial::stricter(Reason::RiskyOption, Some(found.display_risky(risky)), None)
    };
    if let Some(risky) = found.risky.iter().find(|r| !r.nameable()) {
        return Err(risky_denial(risky));
    }
    let all: Vec<&Risky> = found.risky.iter().collect();
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
    brackets + keywords > MAX_NESTING || paren_depth(command) > MAX_PAREN_DEPTH
}

/// How many opening parentheses may follow each other (with only blanks between). The shell
/// parser tries each `((` as arithmetic before a subshell, so its time doubles with every one
/// of them in a row when they are not closed (24 took seconds, found by the command-policy
/// fuzz target); nesting with commands between (`(ls; (cd a && …))`) costs nothing.
const MAX_PAREN_DEPTH: usize = 12;

/// The longest run of `(` with only blanks between, over the whole text (quotes or not: a
/// refusal then only costs a command no one writes).
fn paren_depth(command: &str) -> usize {
    let (mut run, mut longest) = (0usize, 0);
    for c in command.chars() {
        match c {
            '(' => {
                run += 1;
                longest = longest.max(run);
            }
            c if c.is_whitespace() => {}
            _ => run = 0,
        }
    }
    longest
}
