//! The command sandbox, host side: the `sandbox.wrap_command` service ([`wrap_command`]), the
//! settings it reads ([`settings`]), the policy it builds ([`policy`], with the files
//! `.clineignore` blocks from [`ignored`], the secrets of the deny-read list from
//! [`deny_read`], what may be read from [`read_profile`], the variables removed from
//! [`env_scrub`]), what `toolhost policy sandbox` shows of it ([`report`]), and the hidden
//! supervisor mode of the `toolhost` binary ([`supervisor`]). The lists are data: the
//! `*.txt` tables beside the code.
//!
//! The command tool asks `wrap_command` (`{"cwd", "escalated", "section", "settings"}`) before
//! each run and puts the answer's `argv_prefix` before the shell. The policy comes from the
//! tool's settings section, which it sends along:
//!
//! - `sandbox`: `off` (no sandbox: the prefix is empty), `read-only`, `workspace-write`
//!   (default): the workspace roots, the temporary directory, the package caches
//!   ([`policy::default_cache_roots`]) and `writable_roots` are writable, everything else read-only.
//! - `network`: `"proxy"` (default: only through the host's egress proxy, under `[egress]`;
//!   see [`crate::egress`]), `"off"` (`false`), `"direct"` (`true`); `writable_roots` (`~` and `${env:NAME}` expanded), `mask_ignored` (default true:
//!   what `.clineignore` blocks is hidden), `max_processes` (default 2048), `sandbox_required`
//!   (default false: on a kernel without a part of the sandbox, run without it and warn once;
//!   true: refuse the command).
//! - `deny_read`, `allow_read` (globs, `~` expanded): paths added to and let through the
//!   deny-read list; `read` (`all`, default, or `workspace`: only the workspace, the system and
//!   the toolchains); `env_keep`: variables kept although their names look like secrets.
//!
//! An `escalated` run (approved by the user outside the sandbox) keeps only the containment
//! (no process outlives it) and loses only toolhost's own variables.

pub mod deny_read;
pub mod env_scrub;
pub mod error;
mod git_history;
mod ignored;
pub(crate) mod own_files;
mod policy;
pub mod read_profile;
pub mod report;
pub(crate) mod settings;
pub(crate) mod supervisor;
mod table;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use crate::error::{CallError, ErrorKind};
use serde_json::{json, Value};
use toolhost_sandbox::{FilesystemMode, Limits, SandboxPolicy, Support};

pub use policy::{Context, EgressAsking};
use settings::{Network, SandboxSettings};
use supervisor::SUPERVISOR_MODE;

static WARNED: AtomicBool = AtomicBool::new(false);

/// What the kernel offers, probed once per process.
pub(crate) fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(toolhost_sandbox::probe)
}

/// The `sandbox.wrap_command` service.
pub fn wrap_command(context: Context<'_>, payload: &Value) -> Result<Value, CallError> {
    let escalated = payload["escalated"].as_bool().unwrap_or(false);
    let settings = SandboxSettings::from_request(payload)
        .map_err(|e| CallError::new(ErrorKind::InvalidParams, e.to_string()))?;
    wrap(context, &settings, escalated)
}

fn blocked(message: String) -> CallError {
    CallError::new(ErrorKind::Blocked, message)
}

fn wrap(
    context: Context<'_>,
    settings: &SandboxSettings,
    escalated: bool,
) -> Result<Value, CallError> {
    if settings.sandbox == FilesystemMode::Off {
        return Ok(json!({"argv_prefix": [], "mode": "off", "network": true}));
    }
    if !cfg!(target_os = "linux") {
        if settings.sandbox_required {
            return Err(blocked(format!(
                "The sandbox is required ({}.sandbox_required) but needs Linux, so the command \
                 was not run.",
                settings.section
            )));
        }
        return Ok(json!({"argv_prefix": [], "mode": "off", "network": true,
            "warning": warn_once("commands run without a sandbox: it needs Linux")}));
    }
    let limits = Limits {
        max_processes: Some(settings.max_processes),
        max_memory_bytes: Some(settings.max_memory_mb.saturating_mul(1 << 20)),
        max_tmp_bytes: Some(settings.max_tmp_mb.saturating_mul(1 << 20)),
        ..Limits::default()
    };
    let mut notes = Vec::new();
    let wanted = if escalated {
        SandboxPolicy {
            limits,
            env_remove: env_scrub::own_patterns(),
            ..SandboxPolicy::containment_only()
        }
    } else {
        let built = policy::build(context, settings, limits).map_err(|e| blocked(e.to_string()))?;
        notes = built.notes;
        let mut policy = built.policy;
        if settings.network == Network::Proxy {
            policy.egress = Some(egress_link(context)?);
        }
        policy
    };
    let adapted = wanted.adapt(support());
    let mut warning = None;
    if !adapted.missing.is_empty() {
        let effects: Vec<String> = adapted.missing.iter().map(|m| m.effect.clone()).collect();
        let missing: Vec<&str> = adapted.missing.iter().map(|m| m.feature.name()).collect();
        if settings.sandbox_required {
            return Err(blocked(format!(
                "The sandbox is required ({}.sandbox_required) but this system cannot enforce \
                 all of it ({}): {}. The command was not run.",
                settings.section,
                missing.join(", "),
                effects.join("; ")
            )));
        }
        warning = warn_once(&format!(
            "commands run in a weaker sandbox on this system (missing: {}): {}",
            missing.join(", "),
            effects.join("; ")
        ));
    }
    notes.extend(warning);
    let warning = (!notes.is_empty()).then(|| notes.join(". "));
    let policy = adapted.policy;
    let prefix =
        toolhost_sandbox::argv_prefix(&supervisor::toolhost_program()?, SUPERVISOR_MODE, &policy);
    let mode = if escalated {
        "escalated"
    } else {
        policy.filesystem.as_str()
    };
    Ok(json!({
        "argv_prefix": prefix,
        "mode": mode,
        "network": policy.network,
        "egress_proxy": !policy.network && policy.egress.is_some(),
        "writable_roots": policy.writable_roots,
        "private_tmp": policy.private_tmp,
        "max_memory_mb": policy.limits.max_memory_bytes.map(|b| b >> 20),
        "max_tmp_mb": policy.limits.max_tmp_bytes.map(|b| b >> 20),
        "max_processes": policy.limits.max_processes,
        "memory_cgroup": support().memory_cgroup,
        "read": if escalated { "all" } else { settings.read.as_str() },
        "warning": warning,
    }))
}

/// Registers the command with the egress proxy, under the `[egress]` policy of the settings.
fn egress_link(context: Context<'_>) -> Result<toolhost_sandbox::EgressLink, CallError> {
    let unusable = |why: String| {
        blocked(format!(
            "The command was not run: its network goes through the egress proxy (network = \
             \"proxy\"), which cannot be used: {why}. Set network = \"off\" to run it without \
             any network."
        ))
    };
    let (Some(asking), Some(private_dir)) = (context.egress, context.private_dir) else {
        return Err(unusable("this host has no private directory for it".into()));
    };
    let policy = crate::egress::Policy::from_settings(&context.settings.egress)
        .map_err(|e| unusable(e.to_string()))?;
    let grant = crate::egress::Grant::new(
        asking.task.clone(),
        asking.tool.clone(),
        policy,
        asking.asker.clone(),
    );
    crate::egress::link(grant, private_dir).map_err(|e| unusable(e.to_string()))
}

/// The warning text the first time in this process (also logged), `None` afterwards.
fn warn_once(text: &str) -> Option<String> {
    if WARNED.swap(true, Ordering::Relaxed) {
        return None;
    }
    tracing::warn!(target: "toolhost::sandbox", "{text}");
    Some(text.to_string())
}
