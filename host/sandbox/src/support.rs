//! What the kernel offers a sandbox: [`Support`] (from [`crate::probe`]) and the [`Feature`]s
//! a policy may need.

use serde::{Deserialize, Serialize};

/// A kernel feature the sandbox uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Feature {
    /// Landlock (file system confinement).
    Landlock,
    /// User namespaces (namespaces and mounts without privileges).
    UserNamespaces,
    /// Mount namespaces (masks, read-only and pinned paths).
    MountNamespaces,
    /// PID namespaces (everything in the sandbox ends with it).
    PidNamespaces,
    /// Network namespaces.
    NetworkNamespaces,
    /// Seccomp filters (the network filter).
    Seccomp,
    /// A way to limit the number of processes.
    ProcessLimit,
    /// A memory cgroup of the command's own (else each process is limited by itself).
    MemoryCgroup,
}

impl Feature {
    /// The feature's name in `TOOLHOST_SANDBOX_UNAVAILABLE` and in messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Landlock => "landlock",
            Self::UserNamespaces => "userns",
            Self::MountNamespaces => "mountns",
            Self::PidNamespaces => "pidns",
            Self::NetworkNamespaces => "netns",
            Self::Seccomp => "seccomp",
            Self::ProcessLimit => "process-limit",
            Self::MemoryCgroup => "memory-cgroup",
        }
    }
}

/// What this kernel, for this user, offers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Support {
    /// The Landlock ABI version, when Landlock is enabled.
    pub landlock_abi: Option<u32>,
    /// Whether an unprivileged process can create a user namespace.
    pub user_namespaces: bool,
    /// Whether a mount namespace can be created (inside a new user namespace, or as root).
    pub mount_namespaces: bool,
    /// Whether a PID namespace can be created.
    pub pid_namespaces: bool,
    /// Whether a network namespace can be created.
    pub network_namespace: bool,
    /// Whether seccomp filters can be installed.
    pub seccomp: bool,
    /// Whether the process runs as root (namespaces need no user namespace; `RLIMIT_NPROC` does
    /// not apply to root).
    pub privileged: bool,
    /// Whether `pid_max` is per PID namespace (Linux 6.14 and later): the process limit.
    pub pid_max_per_namespace: bool,
    /// Whether a memory cgroup can be made for a command (its memory limit then holds for
    /// everything it starts together; else for each process).
    #[serde(default)]
    pub memory_cgroup: bool,
}

impl Support {
    /// Everything available (for tests of policy logic).
    pub fn everything() -> Self {
        Self {
            landlock_abi: Some(7),
            user_namespaces: true,
            mount_namespaces: true,
            pid_namespaces: true,
            network_namespace: true,
            seccomp: true,
            privileged: false,
            pid_max_per_namespace: true,
            memory_cgroup: true,
        }
    }

    /// Whether masks and read-only paths can be mounted.
    pub fn mounts(&self) -> bool {
        self.mount_namespaces && (self.user_namespaces || self.privileged)
    }

    /// Whether a network namespace can be made.
    pub fn network_namespaces(&self) -> bool {
        self.network_namespace && (self.user_namespaces || self.privileged)
    }

    /// Whether a process limit can be enforced: a PID namespace's `pid_max`, or `RLIMIT_NPROC`
    /// for a user that is not root.
    pub fn process_limit(&self) -> bool {
        let pid_namespace = self.pid_namespaces && self.mounts();
        (pid_namespace && self.pid_max_per_namespace) || !self.privileged
    }

    /// The features missing, by name (for one-line reports).
    pub fn missing(&self) -> Vec<Feature> {
        let mut missing = Vec::new();
        if self.landlock_abi.is_none() {
            missing.push(Feature::Landlock);
        }
        if !self.user_namespaces && !self.privileged {
            missing.push(Feature::UserNamespaces);
        }
        if !self.mount_namespaces {
            missing.push(Feature::MountNamespaces);
        }
        if !self.pid_namespaces {
            missing.push(Feature::PidNamespaces);
        }
        if !self.network_namespace {
            missing.push(Feature::NetworkNamespaces);
        }
        if !self.seccomp {
            missing.push(Feature::Seccomp);
        }
        if !self.process_limit() {
            missing.push(Feature::ProcessLimit);
        }
        missing
    }
}

/// The features `TOOLHOST_SANDBOX_UNAVAILABLE` (a comma-separated list of [`Feature::name`]s)
/// declares missing. Only tests set it: it lets them see how the sandbox behaves on a kernel
/// without those features. Both the probe and the supervisor honour it, so they agree.
pub fn simulated_missing() -> Vec<Feature> {
    let Ok(value) = std::env::var("TOOLHOST_SANDBOX_UNAVAILABLE") else {
        return Vec::new();
    };
    let all = [
        Feature::Landlock,
        Feature::UserNamespaces,
        Feature::MountNamespaces,
        Feature::PidNamespaces,
        Feature::NetworkNamespaces,
        Feature::Seccomp,
        Feature::ProcessLimit,
        Feature::MemoryCgroup,
    ];
    value
        .split(',')
        .filter_map(|name| all.into_iter().find(|f| f.name() == name.trim()))
        .collect()
}

/// Whether a feature is declared missing by `TOOLHOST_SANDBOX_UNAVAILABLE`.
pub fn is_simulated_missing(feature: Feature) -> bool {
    simulated_missing().contains(&feature)
}
