//! The sandbox a command runs in: asked of the host (`sandbox.wrap_command`), which answers
//! with the program and arguments to put before the shell; and what the model is told when
//! the sandbox seems to have denied something.
//!
//! Denials are recognised by the messages programs print for them: `Read-only file system`
//! (a protected path or a mask), `Permission denied` / `Operation not permitted` on a write,
//! and the network errors (`socket: Operation not permitted`, unresolved names, unreachable
//! networks) when the network is off. The kernel does not tell the supervisor which of a
//! command's calls it refused, so the note says "may have".

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::json;
use tool_api::sdk::prelude::*;

/// The host's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Wrap {
    /// What goes before the shell (empty: no sandbox).
    #[serde(default)]
    pub argv_prefix: Vec<String>,
    /// `off`, `read-only`, `workspace-write` or `escalated`.
    #[serde(default)]
    pub mode: String,
    /// Whether the command reaches the network.
    #[serde(default = "yes")]
    pub network: bool,
    /// Where it may write (workspace-write).
    #[serde(default)]
    pub writable_roots: Vec<PathBuf>,
    /// A one-time warning: a part of the sandbox this system cannot enforce.
    #[serde(default)]
    pub warning: Option<String>,
}

fn yes() -> bool {
    true
}

impl Wrap {
    /// Whether the command is confined (not off, not escalated).
    pub fn confines(&self) -> bool {
        matches!(self.mode.as_str(), "read-only" | "workspace-write")
    }
}

/// This tool's settings section, which holds the sandbox keys the host reads.
const SECTION: &str = "execute_command";

/// Asks the host how to run a command, sending this tool's settings section (the host reads
/// its sandbox keys). A host without the service runs it as before, without a sandbox; a host
/// that requires a sandbox it cannot make refuses (`BLOCKED`).
pub fn wrap(ctx: &Ctx<'_>, cwd: &str, escalated: bool) -> Result<Wrap, ToolError> {
    let settings = ctx
        .setting::<serde_json::Value>(SECTION)
        .unwrap_or_else(|| json!({}));
    match ctx.call_service(
        "sandbox",
        "wrap_command",
        &json!({"cwd": cwd, "escalated": escalated, "section": SECTION, "settings": settings}),
    ) {
        Ok(reply) => serde_json::from_value(reply).map_err(|e| {
            ToolError::new(
                ToolErrorKind::INTERNAL,
                format!("invalid sandbox answer from the host: {e}"),
            )
        }),
        Err(e) if e.kind == ToolErrorKind::UNAVAILABLE => Ok(Wrap {
            mode: "off".into(),
            network: true,
            ..Wrap::default()
        }),
        Err(e) => Err(e),
    }
}

const WRITE_DENIALS: [&str; 3] = [
    "read-only file system",
    "permission denied",
    "operation not permitted",
];

const NETWORK_DENIALS: [&str; 16] = [
    "couldn't connect to server",
    "failed to connect",
    "socket: operation not permitted",
    "[errno 1] operation not permitted",
    "connect: operation not permitted",
    "network is unreachable",
    "could not resolve host",
    "couldn't resolve host",
    "temporary failure in name resolution",
    "name or service not known",
    "failed to lookup address",
    "no address associated with hostname",
    "getaddrinfo",
    "enotfound",
    "eai_again",
    "dns error",
];

/// The note after the output when the sandbox seems to have denied something, naming what and
/// how to ask for a run outside it.
pub fn denial_note(wrap: &Wrap, lines: &[String]) -> Option<String> {
    if !wrap.confines() {
        return None;
    }
    let lower: Vec<String> = lines.iter().map(|l| l.to_lowercase()).collect();
    let network = !wrap.network
        && lower
            .iter()
            .any(|l| NETWORK_DENIALS.iter().any(|p| l.contains(p)));
    let write = lower.iter().any(|l| {
        WRITE_DENIALS.iter().any(|p| l.contains(p))
            && !NETWORK_DENIALS.iter().any(|p| l.contains(p))
    });
    let mut denied = Vec::new();
    if write {
        denied.push(if wrap.mode == "read-only" {
            "writing files (the sandbox is read-only)".to_string()
        } else {
            let roots: Vec<String> = wrap
                .writable_roots
                .iter()
                .map(|r| r.display().to_string())
                .collect();
            format!(
                "writing outside the writable roots ({}), or to .git/hooks, .git/config or a \
                 file hidden by .clineignore",
                roots.join(", ")
            )
        });
    }
    if network {
        denied.push("the network (it is off in the sandbox)".to_string());
    }
    if denied.is_empty() {
        return None;
    }
    Some(format!(
        "The command ran in a sandbox ({}{}), which may have denied: {}. If the task needs \
         this, run the command again with sandbox_escalation set to \"true\": the user is asked \
         to approve a run outside the sandbox.",
        wrap.mode,
        if wrap.network { "" } else { ", network off" },
        denied.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn confined(network: bool) -> Wrap {
        Wrap {
            argv_prefix: vec!["toolhost".into()],
            mode: "workspace-write".into(),
            network,
            writable_roots: vec!["/w".into(), "/tmp".into()],
            warning: None,
        }
    }

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn writes_and_network_are_named() {
        let note = denial_note(
            &confined(true),
            &lines("bash: /home/u/x: Permission denied"),
        )
        .unwrap_or_default();
        assert!(
            note.contains("writing outside the writable roots (/w, /tmp)"),
            "{note}"
        );
        assert!(note.contains("sandbox_escalation"), "{note}");
        let note = denial_note(
            &confined(false),
            &lines("curl: (6) Could not resolve host: example.com"),
        )
        .unwrap_or_default();
        assert!(note.contains("the network"), "{note}");
        assert!(!note.contains("writing"), "{note}");
        let note = denial_note(
            &confined(false),
            &lines("PermissionError: [Errno 1] Operation not permitted"),
        )
        .unwrap_or_default();
        assert!(
            note.contains("the network") && !note.contains("writing"),
            "{note}"
        );
    }

    #[test]
    fn nothing_to_say() {
        assert_eq!(denial_note(&confined(false), &lines("all good")), None);
        // With the network on, network errors are not the sandbox's.
        assert_eq!(
            denial_note(&confined(true), &lines("Could not resolve host: x")),
            None
        );
        let off = Wrap {
            mode: "off".into(),
            ..Wrap::default()
        };
        assert_eq!(denial_note(&off, &lines("Permission denied")), None);
    }
}
