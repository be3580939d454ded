//! What a sandbox allows: [`SandboxPolicy`], the paths inside a writable root that stay
//! read-only ([`protected_paths`]; its git repositories are [`crate::git_guard`]'s), and
//! fitting a policy to what the kernel offers ([`SandboxPolicy::adapt`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::support::{Feature, Support};

/// How much of the file system a sandboxed process may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FilesystemMode {
    /// No file system restriction (masks, read-only and pinned paths still apply).
    Off,
    /// Everything readable, nothing writable but a few device files (`/dev/null`, terminals).
    ReadOnly,
    /// Everything readable; writable only beneath [`SandboxPolicy::writable_roots`].
    WorkspaceWrite,
}

impl FilesystemMode {
    /// The mode's name as the settings spell it (`read-only`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
        }
    }
}

/// Resource limits of a sandboxed command. `None` leaves the limit as inherited.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Processes (and threads) that may exist at once inside the sandbox. With a PID namespace
    /// this is the namespace's `pid_max` (the kernel's minimum is 301, so smaller values act as
    /// about 300); otherwise `RLIMIT_NPROC`, counted in the sandbox's user namespace.
    pub max_processes: Option<u64>,
    /// Memory of the whole command, in bytes: a cgroup's limit where this user may make one
    /// (the command is killed when it is reached, and the supervisor says so); else the data
    /// size of each process (`RLIMIT_DATA`: allocations beyond it fail).
    pub max_memory_bytes: Option<u64>,
    /// CPU seconds of each process (`RLIMIT_CPU`).
    pub max_cpu_secs: Option<u64>,
    /// Open files of each process (`RLIMIT_NOFILE`).
    pub max_open_files: Option<u64>,
    /// Size of each private temporary directory ([`SandboxPolicy::private_tmp`]), in bytes.
    pub max_tmp_bytes: Option<u64>,
}

/// What a sandboxed command may do. Serialized as JSON for the supervisor's command line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxPolicy {
    /// File system confinement (Landlock).
    pub filesystem: FilesystemMode,
    /// Where writes are allowed in [`FilesystemMode::WorkspaceWrite`]: the workspace roots, the
    /// temporary directory, configured extra roots. Paths that do not exist are skipped.
    pub writable_roots: Vec<PathBuf>,
    /// Paths bound read-only over themselves (a mount), also inside writable roots: see
    /// [`protected_paths`]. Being mount points, they cannot be renamed, removed or replaced.
    pub read_only_paths: Vec<PathBuf>,
    /// Paths bound over themselves writable, only so that they cannot be renamed, removed or
    /// replaced (a repository's `.git`, whose protected files would otherwise be moved aside).
    pub pinned_paths: Vec<PathBuf>,
    /// Files and directories hidden from the command: an empty read-only file or directory is
    /// mounted over each, so every way of reaching that name (`cat`, `grep -r`, a program, a
    /// symbolic link) finds nothing. Hard links under other names must be listed themselves.
    pub masked_paths: Vec<PathBuf>,
    /// Where reading is allowed (Landlock), `None`: everywhere. Writable roots are readable too.
    pub readable_roots: Option<Vec<PathBuf>>,
    /// Directories that get an empty file system of their own (a tmpfs of at most
    /// [`Limits::max_tmp_bytes`]) for the command's life: `/tmp`, `$TMPDIR`, `/dev/shm`.
    /// Nothing the command leaves there outlives it, and nobody else's files there are seen.
    /// The writable roots, readable roots and [`SandboxPolicy::keep_visible`] paths below them
    /// are mounted back in place.
    pub private_tmp: Vec<PathBuf>,
    /// Paths below a private temporary directory that stay as they are (a home directory
    /// there).
    pub keep_visible: Vec<PathBuf>,
    /// Environment variables removed before the command starts: names or patterns (`*`
    /// matches any run of characters, `?` one), compared without regard to case.
    pub env_remove: Vec<String>,
    /// Variables kept although [`SandboxPolicy::env_remove`] names them: exact names.
    pub env_keep: Vec<String>,
    /// Roots whose git repositories are guarded ([`crate::git_guard`]): what exists of their
    /// hooks, configuration and pointers to other repositories is read-only, and what the
    /// command makes of them is set aside when it ends.
    pub git_guarded_roots: Vec<PathBuf>,
    /// Whether the network can be reached. `false`: a network namespace of its own (when the
    /// kernel allows one) and a seccomp filter refusing every socket but Unix ones.
    pub network: bool,
    /// With `network` false: the host's egress proxy, the command's one way out. The command
    /// gets a network namespace whose loopback has a port leading there (named by
    /// `HTTP_PROXY` and its kin); see [`EgressLink`]. Without a network namespace it gets no
    /// network at all.
    pub egress: Option<EgressLink>,
    /// Whether programs may be started. `false`: `execve` and `execveat` fail with `EPERM`
    /// (seccomp); only for a process that confines itself, since a supervisor must start its
    /// command.
    pub spawn: bool,
    /// Resource limits.
    pub limits: Limits,
    /// Whether the sandbox (the command and everything it started) dies with the process that
    /// started the supervisor.
    pub die_with_parent: bool,
}

impl Default for SandboxPolicy {
    fn default() -> Self {
        Self {
            filesystem: FilesystemMode::WorkspaceWrite,
            writable_roots: Vec::new(),
            read_only_paths: Vec::new(),
            pinned_paths: Vec::new(),
            masked_paths: Vec::new(),
            readable_roots: None,
            private_tmp: Vec::new(),
            keep_visible: Vec::new(),
            env_remove: Vec::new(),
            env_keep: Vec::new(),
            git_guarded_roots: Vec::new(),
            network: true,
            egress: None,
            spawn: true,
            limits: Limits::default(),
            die_with_parent: true,
        }
    }
}

/// How a sandboxed command reaches the host's egress proxy: a Unix socket the host listens on,
/// and the token that tells the host whose command is connecting (one use).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EgressLink {
    /// The proxy's socket.
    pub socket: PathBuf,
    /// The token the supervisor presents.
    pub token: String,
}

impl EgressLink {
    /// The line the host answers to a token it knows (the supervisor sends the token as a
    /// line first). Each message after it carries one connected socket (`SCM_RIGHTS`, with
    /// one byte of data).
    pub const ACCEPTED: &'static str = "ok";
}

/// The paths of a writable root that stay protected.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protected {
    /// To bind read-only.
    pub read_only: Vec<PathBuf>,
    /// To pin (bind writable over themselves).
    pub pinned: Vec<PathBuf>,
}

/// The paths inside a writable root that a sandboxed command must not change, because they
/// weaken the rules of later runs: `.clineignore` (the rules that decide what is masked, for
/// this and later runs) and `.clinerules/hooks` (toolhost's workspace hooks; they run only
/// once trusted, but nothing should rewrite them behind the user's back). The root's git
/// repositories, and every other one below it, are [`crate::git_guard`]'s.
///
/// Paths that do not exist are not listed.
pub fn protected_paths(root: &Path) -> Protected {
    let mut protected = Protected::default();
    for path in [
        root.join(".clineignore"),
        root.join(".clinerules").join("hooks"),
    ] {
        if path.exists() {
            protected.read_only.push(path);
        }
    }
    protected
}

/// Whether `name` is one of the variables `policy` removes from a command's environment: one
/// that a pattern of [`SandboxPolicy::env_remove`] matches and [`SandboxPolicy::env_keep`]
/// does not name.
pub fn env_removed(name: &str, policy: &SandboxPolicy) -> bool {
    policy
        .env_remove
        .iter()
        .any(|pattern| wildcard_match(pattern, name, true))
        && !policy.env_keep.iter().any(|kept| kept == name)
}

/// Whether `pattern` matches all of `text`: `*` matches any run of characters (none
/// included), `?` any one character, everything else itself (without regard to ASCII case
/// when `fold_case`).
///
/// Written here rather than taken from globset: these patterns know only `*` and `?` (the
/// settings document no more), so a `[`, `{` or `\` in a variable's or a file's name means
/// itself, where a glob would read a class, alternatives or an escape.
pub fn wildcard_match(pattern: &str, text: &str, fold_case: bool) -> bool {
    let same = |p: char, t: char| p == t || (fold_case && p.eq_ignore_ascii_case(&t));
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    // The classic two-pointer match: on a mismatch, go back to the last `*` and let it take
    // one more character.
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == '?' || same(c, text[t]) => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((star_p, star_t)) => {
                    p = star_p + 1;
                    t = star_t + 1;
                    star = Some((star_p, star_t + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

/// A part of a policy the kernel cannot enforce, and what running without it means.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Missing {
    /// The missing kernel feature.
    pub feature: Feature,
    /// What the sandbox does not do without it, in plain words.
    pub effect: String,
}

/// A policy fitted to what the kernel offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adapted {
    /// The policy without the parts that cannot be enforced.
    pub policy: SandboxPolicy,
    /// What was dropped.
    pub missing: Vec<Missing>,
}

impl SandboxPolicy {
    /// A policy that confines nothing and only keeps processes from outliving the command (and
    /// its starter): for runs the user approved outside the sandbox.
    pub fn containment_only() -> Self {
        Self {
            filesystem: FilesystemMode::Off,
            network: true,
            ..Self::default()
        }
    }

    /// Whether the policy needs mounts (a user and mount namespace).
    pub fn needs_mounts(&self) -> bool {
        !(self.masked_paths.is_empty()
            && self.read_only_paths.is_empty()
            && self.pinned_paths.is_empty()
            && self.private_tmp.is_empty()
            && self.git_guarded_roots.is_empty())
    }

    /// The policy as compact JSON (what `--policy` takes).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A policy from JSON.
    pub fn from_json(text: &str) -> Result<Self, crate::SandboxError> {
        serde_json::from_str(text).map_err(|e| crate::SandboxError::Policy(e.to_string()))
    }

    /// The parts of this policy `support` cannot enforce, each with what running without it
    /// means, and the policy without them (the caller decides whether to run it).
    pub fn adapt(&self, support: &Support) -> Adapted {
        let mut policy = self.clone();
        let mut missing = Vec::new();
        if policy.filesystem != FilesystemMode::Off && support.landlock_abi.is_none() {
            missing.push(Missing {
                feature: Feature::Landlock,
                effect: format!(
                    "the file system is not confined ({} needs Landlock): the command can write \
                     anywhere the user can",
                    policy.filesystem.as_str()
                ),
            });
            policy.filesystem = FilesystemMode::Off;
        }
        if policy.needs_mounts() && !support.mounts() {
            let feature = if support.user_namespaces || support.privileged {
                Feature::MountNamespaces
            } else {
                Feature::UserNamespaces
            };
            missing.push(Missing {
                feature,
                effect: "ignored files and the deny-read list's secrets are not hidden, \
                         git's hooks and configuration are not protected, and the temporary \
                         directories are shared (they need a mount namespace)"
                    .to_string(),
            });
            policy.masked_paths.clear();
            policy.read_only_paths.clear();
            policy.pinned_paths.clear();
            policy.private_tmp.clear();
            policy.git_guarded_roots.clear();
        }
        if !policy.spawn && !support.seccomp {
            missing.push(Missing {
                feature: Feature::Seccomp,
                effect: "starting programs is not refused (that needs seccomp)".to_string(),
            });
            policy.spawn = true;
        }
        if !policy.network && !support.seccomp && !support.network_namespaces() {
            missing.push(Missing {
                feature: Feature::Seccomp,
                effect: "the network is not cut off (that needs seccomp or a network namespace)"
                    .to_string(),
            });
            policy.network = true;
        }
        if policy.egress.is_some() && !policy.network && !support.network_namespaces() {
            missing.push(Missing {
                feature: Feature::NetworkNamespaces,
                effect: "commands get no network at all: the egress proxy reaches them only \
                         through a network namespace of their own"
                    .to_string(),
            });
            policy.egress = None;
        }
        if policy.limits.max_processes.is_some() && !support.process_limit() {
            missing.push(Missing {
                feature: Feature::ProcessLimit,
                effect: "the number of processes is not limited (root ignores RLIMIT_NPROC, and \
                         no PID namespace is available)"
                    .to_string(),
            });
            policy.limits.max_processes = None;
        }
        Adapted { policy, missing }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip_and_names() {
        let policy = SandboxPolicy {
            filesystem: FilesystemMode::ReadOnly,
            writable_roots: vec!["/w".into()],
            masked_paths: vec!["/w/.env".into()],
            network: false,
            limits: Limits {
                max_processes: Some(500),
                ..Limits::default()
            },
            ..SandboxPolicy::default()
        };
        let json = policy.to_json();
        assert!(json.contains("\"read-only\""), "{json}");
        assert_eq!(SandboxPolicy::from_json(&json).ok(), Some(policy));
        assert!(SandboxPolicy::from_json("{\"filesystem\":\"everything\"}").is_err());
        assert!(SandboxPolicy::from_json("{\"nope\":1}").is_err());
    }

    #[test]
    fn variables_are_removed_by_name_or_pattern_unless_kept() {
        let policy = SandboxPolicy {
            env_remove: ["TOOLHOST_*", "GITHUB_TOKEN", "*SECRET*", "*_KEY"]
                .map(String::from)
                .to_vec(),
            env_keep: vec!["DEPLOY_KEY".to_string()],
            ..SandboxPolicy::default()
        };
        let removed: Vec<&str> = [
            "TOOLHOST_MCP_TOKEN",
            "GITHUB_TOKEN",
            "GITHUB_TOKENS",
            "PATH",
            "TOOLHOST",
            "AWS_SECRET_ACCESS_KEY",
            "my_secret",
            "OPENAI_API_KEY",
            "DEPLOY_KEY",
            "KEYBOARD",
        ]
        .into_iter()
        .filter(|name| env_removed(name, &policy))
        .collect();
        assert_eq!(
            removed,
            [
                "TOOLHOST_MCP_TOKEN",
                "GITHUB_TOKEN",
                "AWS_SECRET_ACCESS_KEY",
                "my_secret",
                "OPENAI_API_KEY"
            ]
        );
    }

    #[test]
    fn wildcards_match_whole_texts() {
        for (pattern, text, fold, expected) in [
            ("*", "", false, true),
            ("a*b*c", "aXXbYYc", false, true),
            ("a*b*c", "aXXbYY", false, false),
            ("*_history", ".bash_history", false, true),
            ("*_history", ".bash_history.bak", false, false),
            ("id_?sa", "id_rsa", false, true),
            ("id_?sa", "id_ecdsa", false, false),
            ("*token*", "GH_TOKEN", true, true),
            ("*token*", "GH_TOKEN", false, false),
            ("**a", "bba", false, true),
        ] {
            assert_eq!(
                wildcard_match(pattern, text, fold),
                expected,
                "{pattern} {text}"
            );
        }
    }

    #[test]
    fn the_rules_and_hooks_are_protected() {
        let Ok(dir) = tempfile::tempdir() else {
            return;
        };
        let root = dir.path();
        assert_eq!(protected_paths(root), Protected::default());
        std::fs::create_dir_all(root.join(".clinerules/hooks")).ok();
        std::fs::write(root.join(".clineignore"), ".env\n").ok();
        let protected = protected_paths(root);
        assert!(protected.pinned.is_empty());
        assert_eq!(
            protected.read_only,
            [root.join(".clineignore"), root.join(".clinerules/hooks")]
        );
    }

    #[test]
    fn adapting_drops_what_is_missing() {
        let policy = SandboxPolicy {
            masked_paths: vec!["/w/.env".into()],
            network: false,
            limits: Limits {
                max_processes: Some(100),
                ..Limits::default()
            },
            ..SandboxPolicy::default()
        };
        // Root, without anything: RLIMIT_NPROC does not bind root either.
        let nothing = Support {
            privileged: true,
            ..Support::default()
        };
        let adapted = policy.adapt(&nothing);
        assert_eq!(adapted.policy.filesystem, FilesystemMode::Off);
        assert!(adapted.policy.masked_paths.is_empty());
        assert!(adapted.policy.network);
        let features: Vec<Feature> = adapted.missing.iter().map(|m| m.feature).collect();
        assert_eq!(
            features,
            [
                Feature::Landlock,
                Feature::MountNamespaces,
                Feature::Seccomp,
                Feature::ProcessLimit
            ]
        );
        let everything = Support::everything();
        assert_eq!(policy.adapt(&everything).policy, policy);
        assert!(policy.adapt(&everything).missing.is_empty());
    }
}
