//! What the looking commands print: the loaded tools, and the verdicts of
//! `toolhost policy check-path` and `check-command`.

use std::io::Write;

use serde_json::{json, Value};

use crate::known_tools::is_cline_tool;
use crate::permissions::commands::{CheckedPart, CommandExplanation, Reason};
use crate::permissions::Workspace;
use crate::Host;

pub(super) fn print_tools(host: &Host, json: bool) {
    let registry = host.registry();
    let tools = host.tools();
    if json {
        let tools: Vec<Value> = tools
            .iter()
            .map(|(name, tool)| {
                let plugin = &tool.handler.plugin;
                json!({
                    "name": name,
                    "plugin": plugin.name,
                    "plugin_version": plugin.version.to_string(),
                    "abi_version": plugin.abi_version.to_string(),
                    "library": plugin.path,
                    "loaded": plugin.is_loaded(),
                    "isolation": plugin.isolation().as_str(),
                    "worker_pid": plugin.worker_pid(),
                    "access": plugin.access().map(|report| json!({
                        "declared": report.declared.as_ref().map(ToString::to_string),
                        "granted": report.granted.to_string(),
                        "gets": report.effective.to_string(),
                        "missing": report.missing(&plugin.name),
                    })),
                    "partial": tool.spec.partial,
                    "handler_id": tool.handler.id,
                    "cline_tool": is_cline_tool(name),
                    "run_time": registry.get(name).is_none(),
                    "description": tool.spec.description,
                })
            })
            .collect();
        let warnings: Vec<Value> = registry
            .warnings()
            .iter()
            .map(|w| json!({"file": w.file, "message": w.message}))
            .collect();
        print_line(&json!({"tools": tools, "warnings": warnings}).to_string());
        return;
    }
    let mut out = String::new();
    for (name, tool) in &tools {
        let plugin = &tool.handler.plugin;
        let mode = match plugin.worker_pid() {
            Some(pid) => format!("process (pid {pid})"),
            None => plugin.isolation().as_str().to_string(),
        };
        out.push_str(&format!(
            "{name:<28} {:<22} {:<8} handler={:<24} partial={:<5} {mode:<20} {}\n",
            plugin.name,
            plugin.version,
            tool.handler.id,
            tool.spec.partial,
            plugin.path.display()
        ));
    }
    let mut isolated: Vec<_> = tools
        .iter()
        .filter_map(|(_, tool)| {
            let plugin = &tool.handler.plugin;
            Some((plugin.name.clone(), plugin.access()?.summary()))
        })
        .collect();
    isolated.dedup();
    if !isolated.is_empty() {
        out.push_str("\nwhat isolated plugins may reach:\n");
        for (plugin, summary) in isolated {
            out.push_str(&format!("  {plugin}: {summary}\n"));
        }
    }
    print!("{out}");
}

/// What `policy check-command` prints without `--json`.
pub fn render_command_report(report: &CommandExplanation) -> String {
    let verdict = &report.check.verdict;
    let mut out = String::new();
    let stricter = if verdict.stricter_than_cline {
        " (stricter than Cline)"
    } else {
        ""
    };
    let outcome = if verdict.allowed {
        "allowed"
    } else {
        "refused"
    };
    out.push_str(&format!(
        "{outcome}: {}{stricter}\n",
        verdict.reason.as_str()
    ));
    let part = verdict.failed_segment.as_deref().unwrap_or_default();
    let decided = match verdict.reason {
        Reason::NoConfig => {
            "CLINE_COMMAND_PERMISSIONS is not set: nothing is restricted".to_string()
        }
        Reason::Allowed => "every part passed the rules (see below)".to_string(),
        Reason::InvalidConfig => report.configuration_problem.clone().unwrap_or_default(),
        Reason::PlanMode => format!("{part} can modify files, and the plan preset forbids it"),
        Reason::Denied | Reason::SegmentDenied => format!(
            "deny pattern \"{}\" matches \"{}\"",
            verdict.matched_pattern.as_deref().unwrap_or_default(),
            if part.is_empty() { "the command" } else { part }
        ),
        Reason::NoMatchDenyDefault => "no allow pattern matches the command".to_string(),
        Reason::SegmentNoMatch => format!("no allow pattern matches \"{part}\""),
        Reason::RedirectDetected => "a redirect, and allowRedirects is not true".to_string(),
        Reason::ShellOperatorDetected => format!(
            "{} outside quotes",
            match verdict.detected_operator.as_deref() {
                Some("parse_error") => "a command the parser cannot read".to_string(),
                Some(operator) => format!("the operator {operator}"),
                None => "an operator".to_string(),
            }
        ),
        Reason::DynamicCommand => format!("\"{part}\" runs something only known at run time"),
        Reason::UnsafeExpansion => format!(
            "{part} ({}) has an effect the check cannot compute",
            verdict.detected_operator.as_deref().unwrap_or_default()
        ),
        Reason::RiskyOption => format!(
            "{} in \"{part}\" runs code or writes files, and no allow pattern names it",
            verdict.detected_operator.as_deref().unwrap_or_default()
        ),
    };
    out.push_str(&format!("  decided by: {decided}\n"));
    if let Some(message) = &verdict.denial_message {
        out.push_str(&format!("  message: {message}\n"));
    }
    let list = |out: &mut String, title: &str, parts: &[CheckedPart]| {
        if parts.is_empty() {
            return;
        }
        out.push_str(title);
        for p in parts {
            let outcome = match (&p.refused, &p.denied_by, &p.allowed_by) {
                (Some(reason), Some(pattern), _) => {
                    format!("refused: {} (deny \"{pattern}\")", reason.as_str())
                }
                (Some(reason), None, _) => format!("refused: {}", reason.as_str()),
                (None, _, Some(pattern)) => format!("allowed by \"{pattern}\""),
                (None, _, None) => "passed".to_string(),
            };
            let risky = if p.risky_options.is_empty() {
                String::new()
            } else {
                format!(
                    "; runs code or writes files: {}",
                    p.risky_options.join(", ")
                )
            };
            out.push_str(&format!(
                "  {}  [{}] {outcome}{risky}\n",
                p.command,
                p.checked_with.replace('_', " ")
            ));
        }
    };
    list(
        &mut out,
        "Cline's check, segment by segment:\n",
        &report.trace.segments,
    );
    list(
        &mut out,
        "Commands that would run (the stricter check):\n",
        &report.trace.commands,
    );
    if !report.trace.unsafe_constructs.is_empty() {
        out.push_str("Constructs whose effect cannot be computed:\n");
        for u in &report.trace.unsafe_constructs {
            out.push_str(&format!("  {} ({})\n", u.construct, u.operator));
        }
    }
    match &report.check.clineignore_path {
        Some(path) => out.push_str(&format!(".clineignore: blocks {path}\n")),
        None => out.push_str(".clineignore: no argument is blocked\n"),
    }
    out
}

/// The JSON `policy check-path` prints: the path as given, where it resolves and really
/// leads, and what decided (the magic-link refusal, the `.clineignore` rule, the boundary).
pub fn check_path_json(workspace: &Workspace, path: &str) -> Value {
    let verdict = workspace.verdict(path);
    let (allowed, reason) = if verdict.refused {
        (
            false,
            "refused: the path goes through a /proc or /dev/fd magic link or a symbolic link loop"
                .to_string(),
        )
    } else if let Some(rule) = &verdict.ignore_rule {
        (
            false,
            format!("blocked by the .clineignore rule '{rule}' (the path as typed, or the file it leads to)"),
        )
    } else if !verdict.inside_workspace {
        (
            false,
            "outside the workspace: needs approval (reads outside are not auto-approved by default)"
                .to_string(),
        )
    } else {
        (true, "inside the workspace and not ignored".to_string())
    };
    json!({
        "path": verdict.path,
        "absolute": verdict.absolute,
        "resolved": verdict.resolved,
        "inside_workspace": verdict.inside_workspace,
        "ignored": verdict.ignored,
        "ignore_rule": verdict.ignore_rule,
        "refused": verdict.refused,
        "allowed": allowed,
        "reason": reason,
    })
}

/// Prints one line on stdout and flushes it.
pub(super) fn print_line(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}");
    let _ = stdout.flush();
}
