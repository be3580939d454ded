//! PreToolUse and PostToolUse hooks: user scripts that may veto a tool call or add context.
//!
//! Discovery follows Cline's: an executable file named after the hook in the `--hooks-dir`
//! directory, in `~/Documents/Cline/Hooks/`, and in the workspace's `.clinerules/hooks/`. Every
//! script found for a hook runs in parallel with one JSON document on stdin; each may answer
//! `{"cancel", "contextModification", "errorMessage"}` on stdout. A script has 30 s.
//!
//! A `cancel` ends the task as in Cline, in each frontend's way (see `crate::call::flow`).
//! A deviation in favour of the hook's author: a valid JSON answer is honoured whatever the
//! exit code (Cline's process layer drops it on a non-zero exit, so a failing security hook
//! could not veto). A script that fails without an answer lets the call go ahead, as in Cline.
//!
//! A third deviation, in favour of the user: a script from the workspace runs only once the
//! user trusted that version of it ([`trust`]), and then from a private copy of the bytes that
//! were checked ([`script`]).

pub mod script;
pub mod trust;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};

use crate::settings::HookSettings;
pub use script::ScriptVersion;
pub use trust::{Consent, TrustGate, TrustStatus, TrustStore};

/// How long one hook script may run.
pub const HOOK_TIMEOUT: Duration = Duration::from_secs(30);

/// `contextModification` beyond this many characters is cut.
pub const MAX_CONTEXT_CHARS: usize = 50_000;

/// Stdout beyond this many bytes is dropped.
const MAX_OUTPUT_BYTES: usize = 1024 * 1024;

/// A hook point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookName {
    /// Before a tool runs (after approval).
    PreToolUse,
    /// After a tool ran successfully.
    PostToolUse,
}

impl HookName {
    /// The script's file name and the hook's name in the input.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
        }
    }

    fn payload_key(self) -> &'static str {
        match self {
            Self::PreToolUse => "preToolUse",
            Self::PostToolUse => "postToolUse",
        }
    }
}

/// What the scripts of one hook decided together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookOutcome {
    /// Any script asked to cancel.
    pub cancel: bool,
    /// Context for the model, already wrapped in `<hook_context>`.
    pub context: Option<String>,
    /// The scripts' error messages, joined.
    pub error_message: Option<String>,
}

/// Where a hook directory comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `[hooks] dir` of the settings.
    Settings,
    /// Cline's global hooks directory, `~/Documents/Cline/Hooks/`.
    Global,
    /// The workspace's `.clinerules/hooks/`: its scripts run only once trusted.
    Workspace,
}

impl Origin {
    /// How listings name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Settings => "settings",
            Self::Global => "global",
            Self::Workspace => "workspace",
        }
    }
}

/// A hook script found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookScript {
    /// The hook it serves.
    pub hook: HookName,
    /// Its path, as found (not canonical).
    pub path: PathBuf,
    /// Its directory's origin.
    pub origin: Origin,
}

/// The hook directories of a host, and the trust in its workspace scripts.
#[derive(Debug, Default)]
pub struct Hooks {
    dirs: Vec<(PathBuf, Origin)>,
    trust: TrustGate,
}

impl Hooks {
    /// Hooks from `[hooks] dir`, the global Cline hooks directory and each workspace root's
    /// `.clinerules/hooks/` (as in Cline); none when the settings disable them.
    pub fn discover(settings: &HookSettings, workspace_roots: &[PathBuf]) -> Self {
        if !settings.enabled {
            return Self::default();
        }
        let mut dirs = Vec::new();
        dirs.extend(settings.dir.clone().map(|d| (d, Origin::Settings)));
        if let Some(home) = std::env::var_os("HOME") {
            dirs.push((
                PathBuf::from(home).join("Documents/Cline/Hooks"),
                Origin::Global,
            ));
        }
        for root in workspace_roots {
            dirs.push((root.join(".clinerules/hooks"), Origin::Workspace));
        }
        dirs.retain(|(d, _)| d.is_dir());
        // A workspace directory the user also named as a global one is theirs: it runs once,
        // as global (no trust needed).
        let global: Vec<PathBuf> = dirs
            .iter()
            .filter(|(_, origin)| *origin != Origin::Workspace)
            .filter_map(|(d, _)| d.canonicalize().ok())
            .collect();
        dirs.retain(|(d, origin)| {
            *origin != Origin::Workspace || d.canonicalize().map_or(true, |c| !global.contains(&c))
        });
        Self {
            dirs,
            trust: TrustGate::new(TrustStore::from_settings(settings)),
        }
    }

    /// The scripts for `hook`: regular, executable files named after it.
    pub fn scripts(&self, hook: HookName) -> Vec<HookScript> {
        use std::os::unix::fs::PermissionsExt;
        self.dirs
            .iter()
            .map(|(dir, origin)| HookScript {
                hook,
                path: dir.join(hook.as_str()),
                origin: *origin,
            })
            .filter(|script| {
                std::fs::metadata(&script.path)
                    .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            })
            .collect()
    }

    /// The trust in workspace scripts.
    pub fn trust(&self) -> &TrustGate {
        &self.trust
    }

    /// Runs every script of `hook` that may run in parallel and merges their answers.
    /// Workspace scripts run only when trusted or approved (`consent`). `payload` is built only
    /// when a script runs: most calls have none, and the payload copies the parameters.
    pub fn run(
        &self,
        hook: HookName,
        base: &HookInput,
        payload: impl FnOnce() -> Value,
        cwd: &Path,
        consent: Consent<'_>,
    ) -> HookOutcome {
        // Looked for on every call, so that a script added during a task counts.
        let scripts = self.scripts(hook);
        if scripts.is_empty() {
            return HookOutcome::default();
        }
        let runnable: Vec<Runnable> = scripts
            .into_iter()
            .filter_map(|script| self.runnable(script, consent))
            .collect();
        if runnable.is_empty() {
            return HookOutcome::default();
        }
        let input = base.document(hook, payload()).to_string();
        let answers: Vec<Option<Answer>> = std::thread::scope(|scope| {
            let handles: Vec<_> = runnable
                .iter()
                .map(|script| scope.spawn(|| run_script(script, &input, cwd)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().ok().flatten())
                .collect()
        });
        merge(hook, answers.into_iter().flatten())
    }

    /// What runs of `script`: a global one by its path; a workspace one as the bytes read now,
    /// if that version may run. Decided before any script starts, one script at a time.
    fn runnable(&self, script: HookScript, consent: Consent<'_>) -> Option<Runnable> {
        if script.origin != Origin::Workspace {
            return Some(Runnable::Path(script.path));
        }
        let version = ScriptVersion::read(&script.path)
            .map_err(|e| tracing::warn!(target: "toolhost::hooks", "cannot read hook {}: {e}", script.path.display()))
            .ok()?;
        self.trust
            .allows(&version, consent)
            .then_some(Runnable::Copy(version))
    }
}

/// A script about to run.
enum Runnable {
    /// A global script, run where it is.
    Path(PathBuf),
    /// A workspace script's checked bytes, run from a private copy.
    Copy(ScriptVersion),
}

impl Runnable {
    /// The script's path for messages.
    fn path(&self) -> &Path {
        match self {
            Self::Path(path) => path,
            Self::Copy(version) => &version.path,
        }
    }
}

/// The fields common to every hook input.
#[derive(Debug, Clone)]
pub struct HookInput {
    /// The task's id.
    pub task_id: String,
    /// The workspace roots.
    pub workspace_roots: Vec<String>,
}

impl HookInput {
    fn document(&self, hook: HookName, payload: Value) -> Value {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or_default();
        let mut document = json!({
            "clineVersion": env!("CARGO_PKG_VERSION"),
            "hookName": hook.as_str(),
            "timestamp": now.to_string(),
            "taskId": self.task_id,
            "workspaceRoots": self.workspace_roots,
            "model": {"provider": "unknown", "slug": "unknown"},
        });
        document[hook.payload_key()] = payload;
        document
    }
}

/// One script's answer.
#[derive(Debug, Default)]
struct Answer {
    cancel: bool,
    context: Option<String>,
    error_message: Option<String>,
}

fn run_script(script: &Runnable, input: &str, cwd: &Path) -> Option<Answer> {
    use std::os::unix::process::CommandExt;
    let warn_start = |e: std::io::Error| tracing::warn!(target: "toolhost::hooks", "cannot start hook {}: {e}", script.path().display());
    // Kept until the script has exited: its interpreter opens the copy by name.
    let copy;
    let program = match script {
        Runnable::Path(path) => path.as_path(),
        Runnable::Copy(version) => {
            copy = version.private_copy().map_err(warn_start).ok()?;
            copy.path()
        }
    };
    let mut command = Command::new(program);
    command
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0);
    let mut child = spawn(&mut command).map_err(warn_start).ok()?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input.as_bytes());
    }
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut buffer = Vec::new();
        let _ = (&mut stdout)
            .take(MAX_OUTPUT_BYTES as u64)
            .read_to_end(&mut buffer);
        buffer
    });
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() >= HOOK_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                tracing::warn!(
                    target: "toolhost::hooks",
                    "Hook execution timed out after {}ms. The hook script at '{}' took too long to complete.",
                    HOOK_TIMEOUT.as_millis(),
                    script.path().display()
                );
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(_) => return None,
        }
    }
    let output = String::from_utf8_lossy(&reader.join().ok()?).into_owned();
    let answer = parse_answer(&output);
    if answer.is_none() {
        tracing::debug!(target: "toolhost::hooks", "hook {} gave no JSON answer", script.path().display());
    }
    answer
}

/// Starts `command`, again after a moment if the executable is busy: a process another thread
/// forks while a private copy is still open for writing holds that descriptor until it execs.
fn spawn(command: &mut Command) -> std::io::Result<Child> {
    let mut attempt = 0;
    loop {
        match command.spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && attempt < 5 => {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(5 * attempt));
            }
            result => return result,
        }
    }
}

/// The answer in a script's stdout: the whole output as JSON, else the last balanced `{…}`.
fn parse_answer(stdout: &str) -> Option<Answer> {
    let object = match serde_json::from_str::<Value>(stdout.trim()) {
        Ok(Value::Object(map)) => map,
        _ => last_json_object(stdout)?,
    };
    if object.contains_key("shouldContinue") {
        tracing::warn!(target: "toolhost::hooks", "a hook answered with the legacy `shouldContinue`; use `cancel: true`");
        return None;
    }
    let text = |key: &str| match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(()),
    };
    let cancel = match object.get("cancel") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return None,
    };
    Some(Answer {
        cancel,
        context: text("contextModification").ok()?,
        error_message: text("errorMessage").ok()?,
    })
}

fn last_json_object(text: &str) -> Option<Map<String, Value>> {
    let mut end = text.len();
    while let Some(close) = text[..end].rfind('}') {
        let mut start = close;
        while let Some(open) = text[..start].rfind('{') {
            if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(&text[open..=close]) {
                return Some(map);
            }
            start = open;
        }
        end = close;
    }
    None
}

fn merge(hook: HookName, answers: impl Iterator<Item = Answer>) -> HookOutcome {
    let mut outcome = HookOutcome::default();
    let mut contexts = Vec::new();
    let mut errors = Vec::new();
    for answer in answers {
        outcome.cancel |= answer.cancel;
        contexts.extend(
            answer
                .context
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty()),
        );
        errors.extend(answer.error_message.filter(|e| !e.is_empty()));
    }
    if !contexts.is_empty() {
        outcome.context = Some(wrap_context(hook, &contexts.join("\n\n")));
    }
    if !errors.is_empty() {
        outcome.error_message = Some(errors.join("\n"));
    }
    outcome
}

/// `<hook_context source="…" type="…">` around the context; a first line `TYPE: rest` names the
/// type, else it is `general`.
pub fn wrap_context(hook: HookName, context: &str) -> String {
    let context = if context.chars().count() > MAX_CONTEXT_CHARS {
        let cut: String = context.chars().take(MAX_CONTEXT_CHARS).collect();
        format!("{cut}\n\n[... context truncated due to size limit ...]")
    } else {
        context.to_string()
    };
    let (kind, body) = split_type(&context);
    format!(
        "<hook_context source=\"{}\" type=\"{kind}\">\n{body}\n</hook_context>",
        hook.as_str()
    )
}

fn split_type(context: &str) -> (String, String) {
    let mut lines = context.lines();
    let first = lines.next().unwrap_or_default();
    if let Some((prefix, rest)) = first.split_once(':') {
        if !prefix.is_empty() && prefix.chars().all(|c| c.is_ascii_uppercase() || c == '_') {
            let mut body: Vec<&str> = Vec::new();
            let rest = rest.trim_start();
            if !rest.is_empty() {
                body.push(rest);
            }
            body.extend(lines.filter(|l| !l.trim().is_empty()));
            return (prefix.to_ascii_lowercase(), body.join("\n"));
        }
    }
    ("general".to_string(), context.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_found_after_debug_output() {
        let answer = parse_answer("debug line\n{\"cancel\": true, \"errorMessage\": \"no\"}\n");
        let answer = answer.unwrap_or_default();
        assert!(answer.cancel);
        assert_eq!(answer.error_message.as_deref(), Some("no"));
        assert!(parse_answer("{\"shouldContinue\": false}").is_none());
        assert!(parse_answer("{\"cancel\": \"yes\"}").is_none());
        assert!(parse_answer("nothing").is_none());
    }

    #[test]
    fn typed_context_is_wrapped() {
        assert_eq!(
            wrap_context(HookName::PreToolUse, "WORKSPACE_RULES: prefer tabs"),
            "<hook_context source=\"PreToolUse\" type=\"workspace_rules\">\nprefer tabs\n</hook_context>"
        );
        assert_eq!(
            wrap_context(HookName::PostToolUse, "plain note"),
            "<hook_context source=\"PostToolUse\" type=\"general\">\nplain note\n</hook_context>"
        );
    }

    #[test]
    fn a_workspace_script_runs_as_it_was_read_not_as_it_is_now() -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("PreToolUse");
        std::fs::write(
            &path,
            "#!/bin/sh\necho '{\"contextModification\": \"checked\"}'\n",
        )?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        let version = ScriptVersion::read(&path)?;
        // Replaced between the check and the run: what runs is still what was checked.
        std::fs::write(&path, "#!/bin/sh\necho '{\"cancel\": true}'\n")?;
        let answer = run_script(&Runnable::Copy(version), "{}", dir.path());
        let answer = answer.unwrap_or_default();
        assert!(!answer.cancel);
        assert_eq!(answer.context.as_deref(), Some("checked"));
        let now = run_script(&Runnable::Path(path), "{}", dir.path()).unwrap_or_default();
        assert!(now.cancel);
        Ok(())
    }
}
