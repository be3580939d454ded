//! The policy of a sandboxed run: the settings, the workspace roots, the package caches, the
//! protected paths, the files `.clineignore` and the deny-read list hide, what the read
//! profile lets commands read, and the variables they do not get.

use std::path::{Path, PathBuf};

use tool_api::workspace::ignore::{self, ClineIgnore};
use tool_api::workspace::Workspace;
use toolhost_sandbox::{FilesystemMode, Limits, SandboxPolicy};

use super::error::PolicyError;
use super::ignored::ignored_paths;
use super::own_files::own_files;
use super::read_profile::{self, ReadProfile};
use super::settings::{Network, SandboxSettings};
use super::{deny_read, env_scrub, git_history};
use crate::settings::Settings;

/// What a command's sandbox is built from besides the tool's request.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    /// The task's workspace: its roots are writable, what their `.clineignore` blocks hidden.
    pub workspace: &'a Workspace,
    /// The host's settings: the files they name are toolhost's own, hidden.
    pub settings: &'a Settings,
    /// This process's private directory, hidden too (`None`: there is none); the egress
    /// proxy's socket is there.
    pub private_dir: Option<&'a Path>,
    /// Whose command it is, for the egress proxy (`None`: only described, never run).
    pub egress: Option<&'a EgressAsking>,
}

/// Who a command's connections through the egress proxy are made for, and who is asked.
pub struct EgressAsking {
    /// The task.
    pub task: String,
    /// The tool that runs the command.
    pub tool: String,
    /// Who answers the proxy's questions.
    pub asker: std::sync::Arc<dyn crate::egress::Asker>,
}

/// The temporary directories each command gets a private one of: `/tmp`, `$TMPDIR` and
/// `/dev/shm` (POSIX shared memory).
pub(super) fn private_tmp_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![
        PathBuf::from("/tmp"),
        std::env::temp_dir(),
        "/dev/shm".into(),
    ];
    dirs.dedup();
    dirs
}

/// Most masks one command gets (each is a mount, and the policy travels on the command line).
const MAX_MASKS: usize = 2_000;

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
    crate::settings::xdg_base("XDG_CACHE_HOME", ".cache").unwrap_or_default()
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

/// A policy, and what the user is told about it once.
pub(super) struct Built {
    /// The policy.
    pub policy: SandboxPolicy,
    /// Notes for the user (each said once per process).
    pub notes: Vec<String>,
}

/// The policy of a sandboxed run, from the settings, the workspace roots, `.clineignore` and
/// the deny-read list.
pub(super) fn build(
    context: Context<'_>,
    settings: &SandboxSettings,
    limits: Limits,
) -> Result<Built, PolicyError> {
    let mut notes = Vec::new();
    let roots: Vec<(PathBuf, Option<String>)> = context
        .workspace
        .roots()
        .into_iter()
        .map(|r| (PathBuf::from(r.path), r.clineignore))
        .collect();
    let mut policy = SandboxPolicy {
        filesystem: settings.sandbox,
        network: settings.network == Network::Direct,
        limits,
        die_with_parent: true,
        ..SandboxPolicy::default()
    };
    // `~` and `${env:NAME}` as in every path setting.
    let key = format!("{}.writable_roots", settings.section);
    let extra: Vec<PathBuf> = settings
        .writable_roots
        .iter()
        .map(|p| {
            tool_api::sdk::paths::expand(p).map_err(|why| PolicyError::UnusablePath {
                key: key.clone(),
                value: p.clone(),
                why,
            })
        })
        .collect::<Result<_, _>>()?;
    for (root, _) in &roots {
        let protected = toolhost_sandbox::protected_paths(root);
        policy.read_only_paths.extend(protected.read_only);
        policy.pinned_paths.extend(protected.pinned);
        // The files `!include` pulls in decide what is hidden as much as `.clineignore` does.
        policy.read_only_paths.extend(
            ignore::included_files(root)
                .into_iter()
                .filter(|p| p.exists()),
        );
    }
    // Nothing of another program's (or another toolhost's) in the shared temporary
    // directories is seen, and nothing the command leaves there outlives it.
    policy.private_tmp = private_tmp_dirs();
    policy
        .keep_visible
        .extend(roots.iter().map(|(root, _)| root.clone()));
    // A home inside a temporary directory stays visible, unless only the workspace, the
    // system and the toolchains are readable: then only its toolchains (readable roots) are
    // mounted back, since everything below a private directory is readable.
    if settings.read == ReadProfile::All {
        policy
            .keep_visible
            .extend(std::env::var_os("HOME").map(PathBuf::from));
    }
    policy.env_remove = env_scrub::removed_patterns();
    policy.env_keep = settings.env_keep.clone();
    if settings.read == ReadProfile::Workspace {
        let mut readable: Vec<PathBuf> = roots.iter().map(|(r, _)| r.clone()).collect();
        readable.extend(extra.iter().cloned());
        readable.extend(default_cache_roots());
        readable.extend(policy.private_tmp.iter().cloned());
        readable.extend(
            read_profile::system_and_toolchains()
                .into_iter()
                .map(|(path, _)| path),
        );
        policy.readable_roots = Some(readable);
    }
    if settings.sandbox == FilesystemMode::WorkspaceWrite {
        policy
            .writable_roots
            .extend(roots.iter().map(|(r, _)| r.clone()));
        for root in &extra {
            let protected = toolhost_sandbox::protected_paths(root);
            policy.read_only_paths.extend(protected.read_only);
            policy.pinned_paths.extend(protected.pinned);
        }
        if settings.git_guard {
            policy.git_guarded_roots = policy.writable_roots.clone();
            policy.git_guarded_roots.extend(extra.iter().cloned());
        }
        policy.writable_roots.extend(extra);
        policy.writable_roots.extend(default_cache_roots());
        policy.read_only_paths.extend(cache_protected());
    }
    policy
        .masked_paths
        .extend(own_files(context.settings, context.private_dir));
    let root_paths: Vec<PathBuf> = roots.iter().map(|(r, _)| r.clone()).collect();
    policy.masked_paths.extend(deny_read::hidden_paths(
        &deny_read::entries(settings)?,
        &root_paths,
        &settings.section,
    )?);
    if settings.mask_ignored {
        for (root, rules) in &roots {
            if let Some(rules) = rules {
                let ignore = ClineIgnore::from_expanded(root, rules);
                policy.masked_paths.extend(ignored_paths(
                    root,
                    &ignore,
                    &roots,
                    &settings.section,
                )?);
                if settings.hide_committed_ignored {
                    if let Some(leaked) = git_history::committed_ignored(root, &ignore) {
                        notes.extend(git_history::note_once(root, &leaked, &settings.section));
                        policy.masked_paths.push(leaked.objects);
                    }
                }
            }
        }
    }
    policy.masked_paths.sort();
    policy.masked_paths.dedup();
    if policy.masked_paths.len() > MAX_MASKS {
        return Err(PolicyError::TooManyMasks {
            count: policy.masked_paths.len(),
            max: MAX_MASKS,
            section: settings.section.clone(),
        });
    }
    Ok(Built { policy, notes })
}
