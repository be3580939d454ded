//! `toolhost hooks`: which hook scripts a workspace would run, and trust in its own.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;
use serde_json::{json, Value};

use crate::call::hooks::{HookName, Hooks, Origin, ScriptVersion, TrustStatus, TrustStore};
use crate::frontends::FrontendError;
use crate::permissions::Workspace;
use crate::settings::Settings;

/// `toolhost hooks ...`
#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// Lists the hook scripts found for a workspace, where each comes from and whether it runs
    /// without asking (workspace scripts only once trusted).
    List {
        /// The workspace (every root's `.clinerules/hooks/` is listed).
        #[command(flatten)]
        workspace: crate::frontends::WorkspaceArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Trusts hook scripts as they are now (canonical path and SHA-256 of the content): a
    /// workspace's scripts then run without asking, until they change.
    Trust {
        /// The scripts.
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
    /// Stops trusting hook scripts.
    Untrust {
        /// The scripts.
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
}

/// Runs a `toolhost hooks` subcommand; `Err` is a usage error (exit 2).
pub fn run_command(
    command: HooksCommand,
    settings: Option<&Path>,
) -> Result<ExitCode, FrontendError> {
    let settings = Settings::load(settings)?;
    let store = TrustStore::from_settings(&settings.hooks);
    match command {
        HooksCommand::List { workspace, json } => {
            let workspace = crate::frontends::open_workspace(&workspace.roots(), &settings)?;
            let report = list(&settings, &workspace);
            if json {
                println!("{report}");
            } else {
                print!("{}", render_list(&report));
            }
            Ok(ExitCode::SUCCESS)
        }
        HooksCommand::Trust { paths } => {
            // Every script is read before anything is written: all are trusted, or none.
            let versions = paths
                .iter()
                .map(|path| {
                    ScriptVersion::read(path).map_err(|source| FrontendError::Read {
                        path: path.clone(),
                        source,
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            store.trust(&versions.iter().collect::<Vec<_>>())?;
            for version in &versions {
                println!(
                    "trusted {} (sha256 {})",
                    version.path.display(),
                    version.sha256
                );
                let name = version.path.file_name().and_then(|n| n.to_str());
                if !matches!(name, Some("PreToolUse" | "PostToolUse")) {
                    eprintln!(
                        "toolhost: note: {} is not named PreToolUse or PostToolUse; no hook runs it",
                        version.path.display()
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        HooksCommand::Untrust { paths } => {
            let canonical: Vec<PathBuf> = paths
                .iter()
                .map(|path| {
                    path.canonicalize()
                        .or_else(|_| std::path::absolute(path))
                        .unwrap_or_else(|_| path.clone())
                })
                .collect();
            let removed = store.untrust(&canonical)?;
            for path in &canonical {
                if removed.contains(path) {
                    println!("untrusted {}", path.display());
                } else {
                    println!("not trusted: {}", path.display());
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The hook scripts of `workspace` as JSON: `enabled`, `trust_file` and one entry per script
/// (`hook`, `path`, `origin`, `status`, `sha256`, `runs_without_asking`).
pub fn list(settings: &Settings, workspace: &Workspace) -> Value {
    let roots: Vec<PathBuf> = workspace
        .roots()
        .into_iter()
        .map(|r| PathBuf::from(r.path))
        .collect();
    let hooks = Hooks::discover(&settings.hooks, &roots);
    let store = hooks.trust().store();
    let mut entries = Vec::new();
    for hook in [HookName::PreToolUse, HookName::PostToolUse] {
        for script in hooks.scripts(hook) {
            let version = ScriptVersion::read(&script.path);
            let status = match (&version, script.origin) {
                (_, Origin::Settings | Origin::Global) => "own".to_string(),
                (Err(_), Origin::Workspace) => "unreadable".to_string(),
                (Ok(version), Origin::Workspace) => match store.status(version) {
                    TrustStatus::Trusted => "trusted".to_string(),
                    TrustStatus::Untrusted => "untrusted".to_string(),
                    TrustStatus::Changed { .. } => "changed".to_string(),
                    TrustStatus::Unreadable(e) => format!("untrusted ({e})"),
                },
            };
            entries.push(json!({
                "hook": hook.as_str(),
                "path": script.path,
                "origin": script.origin.as_str(),
                "status": status,
                "sha256": version.as_ref().ok().map(|v| v.sha256.clone()),
                "runs_without_asking": status == "own" || status == "trusted",
            }));
        }
    }
    json!({
        "enabled": settings.hooks.enabled,
        "trust_file": store.file(),
        "hooks": entries,
    })
}

/// The text form of [`list`]: one line per script, then the trust file.
fn render_list(report: &Value) -> String {
    if report["enabled"] == false {
        return "hooks are disabled by the settings ([hooks] enabled = false)\n".to_string();
    }
    let mut out = String::new();
    let hooks = report["hooks"].as_array().cloned().unwrap_or_default();
    if hooks.is_empty() {
        out.push_str("no hook scripts found\n");
    }
    for entry in &hooks {
        let text = |key: &str| entry[key].as_str().unwrap_or("-").to_string();
        let sha: String = text("sha256").chars().take(12).collect();
        out.push_str(&format!(
            "{:<12} {:<10} {:<10} {:<12} {}\n",
            text("hook"),
            text("origin"),
            text("status"),
            sha,
            text("path")
        ));
    }
    match report["trust_file"].as_str() {
        Some(file) => out.push_str(&format!("trust file: {file}\n")),
        None => out.push_str("trust file: none (set TOOLHOST_TRUSTED_HOOKS or HOME)\n"),
    }
    if hooks.iter().any(|e| e["runs_without_asking"] == false) {
        out.push_str("untrusted workspace scripts run once trusted: toolhost hooks trust PATH\n");
    }
    out
}
