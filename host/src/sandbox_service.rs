//! The command sandbox, host side: the `sandbox.wrap_command` service, the settings it reads,
//! and the hidden supervisor mode of the `toolhost` binary (`toolhost __sandbox-exec --policy
//! <json> -- <argv...>`, see [`toolhost_sandbox::run_sandboxed`]).
//!
//! execute_command asks `wrap_command` (`{"cwd", "escalated"}`) before each run and puts the
//! answer's `argv_prefix` before the shell. The policy comes from `[execute_command]`:
//!
//! - `sandbox`: `off` (no sandbox: the prefix is empty), `read-only`, `workspace-write`
//!   (default): the workspace roots, the temporary directory, the package caches
//!   ([`default_cache_roots`]) and `writable_roots` are writable, everything else read-only.
//! - `network` (default true), `writable_roots` (`~` expanded), `mask_ignored` (default true:
//!   what `.clineignore` blocks is hidden), `max_processes` (default 2048), `sandbox_required`
//!   (default false: on a kernel without a part of the sandbox, run without it and warn once;
//!   true: refuse the command).
//!
//! An `escalated` run (approved by the user outside the sandbox) keeps only the containment:
//! no process outlives it.

use std::collections::HashSet;
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{json, Value};
use tool_api::abi::{ToolError, ToolErrorKind};
use tool_api::workspace::ignore::ClineIgnore;
use toolhost_sandbox::{FilesystemMode, Limits, SandboxPolicy, Support};

use crate::executor::Host;

/// The hidden mode of the binary.
pub const SUPERVISOR_MODE: &str = "__sandbox-exec";

/// Most entries one `.clineignore` walk looks at; a walk past it (or past [`WALK_TIME`])
/// refuses the command rather than run it with files unmasked.
const WALK_ENTRIES: usize = 200_000;
/// Longest one walk may take.
const WALK_TIME: Duration = Duration::from_secs(3);
/// Most masks one command gets (each is a mount, and the policy travels on the command line).
const MAX_MASKS: usize = 2_000;

static IN_TOOLHOST_BINARY: AtomicBool = AtomicBool::new(false);
static WARNED: AtomicBool = AtomicBool::new(false);

/// Called first by the `toolhost` binary's `main`: in the supervisor mode this runs the
/// supervisor and exits; otherwise it notes that this process is the `toolhost` binary (so
/// that it can be its own supervisor) and returns.
pub fn run_supervisor_if_asked() {
    IN_TOOLHOST_BINARY.store(true, Ordering::Relaxed);
    let mut args = std::env::args_os();
    if args.nth(1).is_some_and(|mode| mode == SUPERVISOR_MODE) {
        let code = toolhost_sandbox::exec_main(args);
        std::process::exit(code);
    }
}

/// The sandbox keys of `[execute_command]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct SandboxSettings {
    /// `off`, `read-only` or `workspace-write`.
    pub sandbox: FilesystemMode,
    /// Whether commands reach the network.
    pub network: bool,
    /// More writable roots (`~` expanded).
    pub writable_roots: Vec<String>,
    /// Whether what `.clineignore` blocks is hidden from commands.
    pub mask_ignored: bool,
    /// Whether a command is refused when a part of the sandbox cannot be had.
    pub sandbox_required: bool,
    /// Processes a command may have at once.
    pub max_processes: u64,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        Self {
            sandbox: FilesystemMode::WorkspaceWrite,
            network: true,
            writable_roots: Vec::new(),
            mask_ignored: true,
            sandbox_required: false,
            max_processes: 2048,
        }
    }
}

impl SandboxSettings {
    /// The sandbox keys of a settings document (other `[execute_command]` keys are the
    /// plugin's and are ignored here).
    pub fn from_document(document: &Value) -> Result<Self, String> {
        let Some(section) = document.get("execute_command") else {
            return Ok(Self::default());
        };
        let mut keys = serde_json::Map::new();
        for key in [
            "sandbox",
            "network",
            "writable_roots",
            "mask_ignored",
            "sandbox_required",
            "max_processes",
        ] {
            if let Some(value) = section.get(key) {
                keys.insert(key.to_string(), value.clone());
            }
        }
        serde_json::from_value(Value::Object(keys)).map_err(|e| format!("[execute_command]: {e}"))
    }
}

/// Checks the sandbox keys when the settings are read (a wrong value is a settings error).
pub fn validate_settings(document: &Value) -> Result<(), String> {
    SandboxSettings::from_document(document).map(|_| ())
}

/// What the kernel offers, probed once per process.
fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(toolhost_sandbox::probe)
}

/// The `sandbox.wrap_command` service.
pub fn wrap_command(host: &Host, payload_json: &str) -> Result<String, ToolError> {
    let payload: Value = serde_json::from_str(payload_json).map_err(|e| {
        ToolError::new(
            ToolErrorKind::INVALID_PARAMS,
            format!("invalid wrap_command request: {e}"),
        )
    })?;
    let escalated = payload["escalated"].as_bool().unwrap_or(false);
    let settings = SandboxSettings::from_document(host.settings().document())
        .map_err(|e| ToolError::new(ToolErrorKind::INVALID_PARAMS, e))?;
    let reply = wrap(host, &settings, escalated)?;
    Ok(reply.to_string())
}

fn blocked(message: String) -> ToolError {
    ToolError::new(ToolErrorKind::BLOCKED, message)
}

fn wrap(host: &Host, settings: &SandboxSettings, escalated: bool) -> Result<Value, ToolError> {
    if settings.sandbox == FilesystemMode::Off {
        return Ok(json!({"argv_prefix": [], "mode": "off", "network": true}));
    }
    if !cfg!(target_os = "linux") {
        if settings.sandbox_required {
            return Err(blocked(
                "The sandbox is required (execute_command.sandbox_required) but needs Linux, so \
                 the command was not run."
                    .into(),
            ));
        }
        return Ok(json!({"argv_prefix": [], "mode": "off", "network": true,
            "warning": warn_once("commands run without a sandbox: it needs Linux")}));
    }
    let limits = Limits {
        max_processes: Some(settings.max_processes),
        ..Limits::default()
    };
    let wanted = if escalated {
        SandboxPolicy {
            limits,
            ..SandboxPolicy::containment_only()
        }
    } else {
        build_policy(host, settings, limits).map_err(blocked)?
    };
    let adapted = wanted.adapt(support());
    let mut warning = None;
    if !adapted.missing.is_empty() {
        let effects: Vec<String> = adapted.missing.iter().map(|m| m.effect.clone()).collect();
        let missing: Vec<&str> = adapted.missing.iter().map(|m| m.feature.name()).collect();
        if settings.sandbox_required {
            return Err(blocked(format!(
                "The sandbox is required (execute_command.sandbox_required) but this system \
                 cannot enforce all of it ({}): {}. The command was not run.",
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
    let policy = adapted.policy;
    let prefix = toolhost_sandbox::argv_prefix(&supervisor()?, SUPERVISOR_MODE, &policy);
    let mode = if escalated {
        "escalated"
    } else {
        policy.filesystem.as_str()
    };
    Ok(json!({
        "argv_prefix": prefix,
        "mode": mode,
        "network": policy.network,
        "writable_roots": policy.writable_roots,
        "warning": warning,
    }))
}

/// The warning text the first time in this process (also logged), `None` afterwards.
fn warn_once(text: &str) -> Option<String> {
    if WARNED.swap(true, Ordering::Relaxed) {
        return None;
    }
    tracing::warn!(target: "toolhost::sandbox", "{text}");
    Some(text.to_string())
}

/// The program that runs the supervisor: this `toolhost` binary; a process that embeds the
/// host library (tests, other frontends) uses `$TOOLHOST_SANDBOX_SUPERVISOR`, else a `toolhost`
/// next to its executable or one directory up (as plugin directories are found).
fn supervisor() -> Result<PathBuf, ToolError> {
    let exe = std::env::current_exe().map_err(|e| {
        ToolError::new(
            ToolErrorKind::INTERNAL,
            format!("cannot find the toolhost executable for the sandbox: {e}"),
        )
    })?;
    if IN_TOOLHOST_BINARY.load(Ordering::Relaxed) {
        return Ok(exe);
    }
    if let Some(path) = std::env::var_os("TOOLHOST_SANDBOX_SUPERVISOR") {
        return Ok(PathBuf::from(path));
    }
    let dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    for candidate in [dir.join("toolhost"), dir.join("..").join("toolhost")] {
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    Err(ToolError::new(
        ToolErrorKind::INTERNAL,
        "no toolhost executable to run the sandbox's supervisor (set TOOLHOST_SANDBOX_SUPERVISOR)",
    ))
}

/// `~/...` to an absolute path.
fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ if path == "~" => std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default(),
        _ => PathBuf::from(path),
    }
}

/// The package caches writable by default in workspace-write, so that builds and installs
/// work: `~/.cache` (pip, go, yarn, uv and most XDG-aware tools; `$XDG_CACHE_HOME` when set),
/// Cargo's home (`$CARGO_HOME`, else `~/.cargo`: the registry, git checkouts and its lock
/// files), `~/.npm`, pnpm's store, Go's module cache, Maven's and Gradle's caches. Only those
/// that exist. Inside them, what runs code later stays read-only ([`cache_protected`]).
pub fn default_cache_roots() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut roots = Vec::new();
    roots.push(cache_dir());
    roots.push(cargo_home());
    if let Some(home) = &home {
        for relative in [
            ".npm",
            ".local/share/pnpm",
            "go/pkg/mod",
            ".m2/repository",
            ".gradle/caches",
        ] {
            roots.push(home.join(relative));
        }
    }
    if let Some(mod_cache) = std::env::var_os("GOMODCACHE") {
        roots.push(PathBuf::from(mod_cache));
    }
    roots.retain(|p| !p.as_os_str().is_empty() && p.is_dir());
    roots
}

fn cache_dir() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_default()
}

fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_default()
}

/// What stays read-only inside the writable caches: Cargo's installed programs
/// (`bin/`), its configuration (which can name a compiler wrapper), credentials and `env`
/// script; toolhost's own cache (the plugin index).
pub fn cache_protected() -> Vec<PathBuf> {
    let cargo = cargo_home();
    let mut paths: Vec<PathBuf> = [
        "bin",
        "config.toml",
        "config",
        "credentials.toml",
        "credentials",
        "env",
    ]
    .iter()
    .map(|name| cargo.join(name))
    .collect();
    paths.push(cache_dir().join("toolhost"));
    if let Some(index) = std::env::var_os("TOOLHOST_PLUGIN_INDEX") {
        paths.push(PathBuf::from(index));
    }
    paths.retain(|p| p.is_absolute() && p.exists());
    paths
}

/// The policy of a sandboxed run, from the settings, the workspace roots and `.clineignore`.
fn build_policy(
    host: &Host,
    settings: &SandboxSettings,
    limits: Limits,
) -> Result<SandboxPolicy, String> {
    let roots: Vec<(PathBuf, Option<String>)> = host
        .workspace()
        .roots()
        .into_iter()
        .map(|r| (PathBuf::from(r.path), r.clineignore))
        .collect();
    let mut policy = SandboxPolicy {
        filesystem: settings.sandbox,
        network: settings.network,
        limits,
        die_with_parent: true,
        ..SandboxPolicy::default()
    };
    let extra: Vec<PathBuf> = settings
        .writable_roots
        .iter()
        .map(|p| expand_home(p))
        .collect();
    for (root, _) in &roots {
        let protected = toolhost_sandbox::protected_paths(root);
        policy.read_only_paths.extend(protected.read_only);
        policy.pinned_paths.extend(protected.pinned);
    }
    if settings.sandbox == FilesystemMode::WorkspaceWrite {
        policy
            .writable_roots
            .extend(roots.iter().map(|(r, _)| r.clone()));
        policy.writable_roots.push(std::env::temp_dir());
        for root in &extra {
            let protected = toolhost_sandbox::protected_paths(root);
            policy.read_only_paths.extend(protected.read_only);
            policy.pinned_paths.extend(protected.pinned);
        }
        policy.writable_roots.extend(extra);
        policy.writable_roots.extend(default_cache_roots());
        policy.read_only_paths.extend(cache_protected());
    }
    if settings.mask_ignored {
        for (root, rules) in &roots {
            if let Some(rules) = rules {
                let ignore = ClineIgnore::from_expanded(root, rules);
                policy
                    .masked_paths
                    .extend(ignored_paths(root, &ignore, &roots)?);
            }
        }
        if policy.masked_paths.len() > MAX_MASKS {
            return Err(format!(
                "The command was not run: .clineignore blocks {} files and directories, more than \
                 the sandbox can hide ({MAX_MASKS}). Block whole directories instead, or set \
                 execute_command.mask_ignored = false.",
                policy.masked_paths.len()
            ));
        }
    }
    Ok(policy)
}

/// Every path of `root` that `ignore` blocks (a blocked directory as a whole), and every other
/// name of a blocked file (hard links). Symbolic links are not followed; a blocked link is
/// hidden where it leads (the mount follows it), unless that holds a workspace root.
fn ignored_paths(
    root: &Path,
    ignore: &ClineIgnore,
    roots: &[(PathBuf, Option<String>)],
) -> Result<Vec<PathBuf>, String> {
    let deadline = Instant::now() + WALK_TIME;
    let mut seen = 0usize;
    let mut masked = Vec::new();
    let mut ignored_inodes: HashSet<(u64, u64)> = HashSet::new();
    let mut linked: Vec<(PathBuf, (u64, u64))> = Vec::new();
    // (directory, relative path, inside an ignored directory)
    let mut stack: Vec<(PathBuf, PathBuf, bool)> =
        vec![(root.to_path_buf(), PathBuf::new(), false)];
    let too_big = || {
        format!(
            "The command was not run: the workspace {} is too large to find every file \
             .clineignore blocks within the sandbox's limits ({WALK_ENTRIES} entries, {} s), and \
             running it would show them. Set execute_command.mask_ignored = false to run \
             commands without hiding them.",
            root.display(),
            WALK_TIME.as_secs()
        )
    };
    while let Some((dir, relative, in_ignored)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > WALK_ENTRIES || Instant::now() > deadline {
                return Err(too_big());
            }
            let name: OsString = entry.file_name();
            let path = dir.join(&name);
            let rel = relative.join(&name);
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let is_dir = meta.is_dir();
            let blocked = in_ignored || ignore.blocks(&rel, is_dir);
            if blocked && !in_ignored {
                if meta.file_type().is_symlink() {
                    if let Ok(target) = std::fs::canonicalize(&path) {
                        if roots.iter().any(|(r, _)| r.starts_with(&target)) {
                            return Err(format!(
                                "The command was not run: .clineignore blocks {}, a link to {}, \
                                 which holds the workspace and cannot be hidden.",
                                rel.display(),
                                target.display()
                            ));
                        }
                    }
                }
                masked.push(path.clone());
            }
            if meta.is_file() && meta.nlink() > 1 {
                let key = (meta.dev(), meta.ino());
                if blocked {
                    ignored_inodes.insert(key);
                } else {
                    linked.push((path.clone(), key));
                }
            }
            // Inside `.git` no file is the workspace's own (and hard links there are git's).
            if is_dir && !(relative.as_os_str().is_empty() && name == ".git") {
                stack.push((path, rel, blocked));
            }
        }
    }
    masked.extend(
        linked
            .into_iter()
            .filter(|(_, key)| ignored_inodes.contains(key))
            .map(|(path, _)| path),
    );
    Ok(masked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_have_defaults_and_are_checked() {
        let s = SandboxSettings::from_document(&json!({})).unwrap_or_default();
        assert_eq!(s, SandboxSettings::default());
        assert_eq!(s.sandbox, FilesystemMode::WorkspaceWrite);
        let s = SandboxSettings::from_document(&json!({"execute_command": {
            "sandbox": "read-only", "network": false, "output_line_limit": 10}}))
        .unwrap_or_default();
        assert_eq!(s.sandbox, FilesystemMode::ReadOnly);
        assert!(!s.network);
        assert!(
            SandboxSettings::from_document(&json!({"execute_command": {"sandbox": "strict"}}))
                .is_err()
        );
    }

    #[test]
    fn ignored_files_and_their_hard_links_are_found() {
        let Ok(dir) = tempfile::tempdir() else {
            return;
        };
        let root = dir.path();
        let write = |p: &str, text: &str| {
            if let Some(parent) = root.join(p).parent() {
                std::fs::create_dir_all(parent).ok();
            }
            std::fs::write(root.join(p), text).ok();
        };
        write(".env", "secret");
        write("secrets/key.pem", "k");
        write("src/main.rs", "fn main() {}");
        std::fs::hard_link(root.join(".env"), root.join("src/notes.txt")).ok();
        let ignore = ClineIgnore::from_text(root, ".env\nsecrets/\n");
        let mut found = ignored_paths(root, &ignore, &[]).unwrap_or_default();
        found.sort();
        assert_eq!(
            found,
            [
                root.join(".env"),
                root.join("secrets"),
                root.join("src/notes.txt")
            ]
        );
    }

    #[test]
    fn home_is_expanded() {
        if let Some(home) = std::env::var_os("HOME") {
            assert_eq!(expand_home("~/x"), PathBuf::from(home).join("x"));
        }
        assert_eq!(expand_home("/abs"), PathBuf::from("/abs"));
    }
}
