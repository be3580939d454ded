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
    /// Whether the command reaches the network directly.
    #[serde(default = "yes")]
    pub network: bool,
    /// Whether it reaches the network through the host's egress proxy instead (whose
    /// refusals the command's output already names).
    #[serde(default)]
    pub egress_proxy: bool,
    /// Where it may write (workspace-write).
    #[serde(default)]
    pub writable_roots: Vec<PathBuf>,
    /// The temporary directories that are the command's own (emptied when it ends).
    #[serde(default)]
    pub private_tmp: Vec<PathBuf>,
    /// A one-time warning: a part of the sandbox this system cannot enforce.
    #[serde(default)]
    pub warning: Option<String>,
    /// The command's memory limit, in MiB (`None`: none).
    #[serde(default)]
    pub max_memory_mb: Option<u64>,
    /// The size of each of its private temporary directories, in MiB.
    #[serde(default)]
    pub max_tmp_mb: Option<u64>,
    /// How many processes it may have at once.
    #[serde(default)]
    pub max_processes: Option<u64>,
    /// Whether the memory limit holds for the command as a whole (a cgroup), not for each
    /// process.
    #[serde(default)]
    pub memory_cgroup: bool,
    /// What the command may read: `all` (but the hidden files) or `workspace` (only the
    /// workspace, the system and the toolchains).
    #[serde(default)]
    pub read: String,
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

/// What the supervisor prints when the kernel killed a process for the memory limit.
const MEMORY_KILLED: &str = "toolhost sandbox: the memory limit was reached";

/// What programs print when an allocation failed.
const ALLOCATION_FAILURES: [&str; 6] = [
    "memoryerror",
    "cannot allocate memory",
    "out of memory",
    "std::bad_alloc",
    "memory allocation of",
    "allocation failed",
];

/// The note after the output when the sandbox or its limits seem to have stopped something,
/// naming what and how to allow it: a run outside the sandbox, or a larger limit.
pub fn denial_note(wrap: &Wrap, lines: &[String]) -> Option<String> {
    let lower: Vec<String> = lines.iter().map(|l| l.to_lowercase()).collect();
    let notes: Vec<String> = [sandbox_note(wrap, &lower), limits_note(wrap, &lower)]
        .into_iter()
        .flatten()
        .collect();
    (!notes.is_empty()).then(|| notes.join(" "))
}

/// The limits the command may have reached, and the settings that raise them.
fn limits_note(wrap: &Wrap, lower: &[String]) -> Option<String> {
    let mut notes = Vec::new();
    if let Some(mb) = wrap.max_memory_mb {
        let killed = lower.iter().any(|l| l.contains(MEMORY_KILLED));
        let failed = lower
            .iter()
            .any(|l| ALLOCATION_FAILURES.iter().any(|p| l.contains(p)));
        if killed {
            notes.push(format!(
                "The command was stopped by its memory limit ({mb} MiB for the command and \
                 everything it started)."
            ));
        } else if failed {
            let whole = if wrap.memory_cgroup {
                "for the command and everything it started"
            } else {
                "for each of its processes"
            };
            notes.push(format!(
                "The command may have reached its memory limit ({mb} MiB {whole})."
            ));
        }
        if killed || failed {
            notes.push(format!(
                "If the task needs more, the user can raise {SECTION}.max_memory_mb in the \
                 settings."
            ));
        }
    }
    if let Some(max) = wrap.max_processes {
        let refused = lower.iter().any(|l| {
            l.contains("cannot fork")
                || (l.contains("fork") && l.contains("resource temporarily unavailable"))
                || l.contains("[errno 11] resource temporarily unavailable")
        });
        if refused {
            notes.push(format!(
                "The command may have reached its process limit ({max} processes at once); if \
                 the task needs more, the user can raise {SECTION}.max_processes in the settings."
            ));
        }
    }
    if let Some(mb) = wrap.max_tmp_mb.filter(|_| !wrap.private_tmp.is_empty()) {
        if lower.iter().any(|l| l.contains("no space left on device")) {
            notes.push(format!(
                "A temporary directory may be full: each of the command's own ({}) holds at most \
                 {mb} MiB; the user can raise {SECTION}.max_tmp_mb, or the command can write to \
                 the workspace instead.",
                wrap.private_tmp
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    (!notes.is_empty()).then(|| notes.join(" "))
}

/// What the sandbox may have denied, and how to ask for a run outside it.
fn sandbox_note(wrap: &Wrap, lower: &[String]) -> Option<String> {
    if !wrap.confines() {
        return None;
    }
    let network = !wrap.network
        && !wrap.egress_proxy
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
            let list = |paths: &[PathBuf]| {
                paths
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let private = if wrap.private_tmp.is_empty() {
                String::new()
            } else {
                format!(
                    "; the temporary directories {} are the command's own and emptied when it \
                     ends",
                    list(&wrap.private_tmp)
                )
            };
            format!(
                "writing outside the writable roots ({}{private}), or to git's hooks and \
                 configuration or a file hidden by .clineignore or the deny-read list",
                list(&wrap.writable_roots)
            )
        });
        if wrap.read == "workspace" {
            denied.push(
                "reading outside the workspace, the system and the toolchains (read = \
                 \"workspace\")"
                    .to_string(),
            );
        }
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
        match (wrap.network, wrap.egress_proxy) {
            (true, _) => "",
            (false, true) => ", network through the egress proxy",
            (false, false) => ", network off",
        },
        denied.join("; ")
    ))
}

/// The sandbox a command will run in, as the user approving it reads it.
pub fn summary(wrap: &Wrap) -> String {
    if wrap.argv_prefix.is_empty() {
        return "no sandbox: it can do whatever you can".to_string();
    }
    let writes = match wrap.mode.as_str() {
        "read-only" => "it writes nothing",
        "workspace-write" => "it writes only in the workspace",
        _ => "it may write anywhere you can",
    };
    let network = match (wrap.network, wrap.egress_proxy) {
        (true, _) => "reaches the network directly",
        (false, true) => "reaches the network only through the egress proxy",
        (false, false) => "has no network",
    };
    let reads = if wrap.read == "workspace" {
        ", reads only the workspace, the system and the toolchains"
    } else {
        ""
    };
    format!("sandbox {}: {writes}, {network}{reads}", wrap.mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn confined(network: bool) -> Wrap {
        Wrap {
            argv_prefix: vec!["toolhost".into()],
            mode: "workspace-write".into(),
            network,
            egress_proxy: false,
            writable_roots: vec!["/w".into()],
            private_tmp: vec!["/tmp".into()],
            warning: None,
            max_memory_mb: Some(512),
            max_tmp_mb: Some(64),
            max_processes: Some(300),
            memory_cgroup: false,
            read: "all".into(),
        }
    }

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn the_summary_says_what_the_sandbox_lets_a_command_do() {
        let proxied = Wrap {
            egress_proxy: true,
            read: "workspace".into(),
            ..confined(false)
        };
        assert_eq!(
            summary(&proxied),
            "sandbox workspace-write: it writes only in the workspace, reaches the network \
             only through the egress proxy, reads only the workspace, the system and the \
             toolchains"
        );
        assert_eq!(
            summary(&confined(false)),
            "sandbox workspace-write: it writes only in the workspace, has no network"
        );
        assert_eq!(
            summary(&Wrap::default()),
            "no sandbox: it can do whatever you can"
        );
    }

    #[test]
    fn writes_and_network_are_named() {
        let note = denial_note(
            &confined(true),
            &lines("bash: /home/u/x: Permission denied"),
        )
        .unwrap_or_default();
        assert!(
            note.contains(
                "writing outside the writable roots (/w; the temporary directories /tmp are the \
                 command's own and emptied when it ends)"
            ),
            "{note}"
        );
        assert!(note.contains("sandbox_escalation"), "{note}");
        assert!(!note.contains("reading outside"), "{note}");
        let strict = Wrap {
            read: "workspace".into(),
            ..confined(true)
        };
        let note = denial_note(&strict, &lines("cat: /home/u/notes: Permission denied"))
            .unwrap_or_default();
        assert!(
            note.contains(
                "; reading outside the workspace, the system and the toolchains (read = \
                 \"workspace\")"
            ),
            "{note}"
        );
        let note = denial_note(
            &confined(false),
            &lines("curl: (6) Could not resolve host: example.com"),
        )
        .unwrap_or_default();
        assert!(note.contains("the network"), "{note}");
        assert!(!note.contains("writing"), "{note}");
        let proxied = Wrap {
            egress_proxy: true,
            ..confined(false)
        };
        let refused = lines("curl: (56) CONNECT tunnel failed, response 403");
        assert_eq!(
            denial_note(&proxied, &refused),
            None,
            "the proxy names its own refusals"
        );
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
    fn limits_are_named_with_their_settings() {
        let note = denial_note(
            &confined(true),
            &lines("toolhost sandbox: the memory limit was reached (512 MiB): the kernel killed"),
        )
        .unwrap_or_default();
        assert!(
            note.contains("stopped by its memory limit (512 MiB"),
            "{note}"
        );
        assert!(note.contains("execute_command.max_memory_mb"), "{note}");
        let note = denial_note(&confined(true), &lines("MemoryError")).unwrap_or_default();
        assert!(note.contains("512 MiB for each of its processes"), "{note}");
        let note = denial_note(
            &confined(true),
            &lines("dd: error writing: No space left on device"),
        )
        .unwrap_or_default();
        assert!(note.contains("execute_command.max_tmp_mb"), "{note}");
        assert!(note.contains("(/tmp) holds at most 64 MiB"), "{note}");
        let note = denial_note(
            &confined(true),
            &lines("bash: fork: retry: Resource temporarily unavailable"),
        )
        .unwrap_or_default();
        assert!(note.contains("process limit (300 processes"), "{note}");
        assert!(note.contains("execute_command.max_processes"), "{note}");
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
