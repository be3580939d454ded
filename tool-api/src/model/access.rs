//! What a plugin says it needs to reach when it runs isolated: files, programs, the network,
//! memory and time. It is declared among the plugin's capabilities, one `access:` entry each:
//!
//! ```text
//! tool_api::export_plugin!(capabilities: [
//!     tool_api::model::access::FS_WORKSPACE_WRITE,
//!     tool_api::model::access::SPAWN,
//!     "access:network=api.example.com",
//!     "access:memory_mb=512",
//! ]);
//! ```
//!
//! The host gives an isolated plugin's worker what the user granted (`[plugins.<name>]`, a
//! bundle's manifest) and the plugin declared, never more. A plugin that declares no access
//! at all is an older one: its grant alone decides.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The prefix of an access declaration among a plugin's capabilities.
pub const PREFIX: &str = "access:";

/// Reads no files but the system's and its own temporary directory's.
pub const FS_NONE: &str = "access:fs=none";
/// Reads the workspace.
pub const FS_WORKSPACE_READ: &str = "access:fs=workspace-read";
/// Reads and writes the workspace.
pub const FS_WORKSPACE_WRITE: &str = "access:fs=workspace-write";
/// Reads and writes anywhere the user may (paths outside the workspace).
pub const FS_FULL: &str = "access:fs=full";
/// Starts programs.
pub const SPAWN: &str = "access:spawn";
/// Reaches any network host (the host's egress policy decides which).
pub const NETWORK_ANY: &str = "access:network=*";

/// How much of the file system a plugin reaches, from least to most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FsAccess {
    /// The system's files and its own temporary directory.
    #[default]
    None,
    /// Also reading the workspace.
    WorkspaceRead,
    /// Also writing it.
    WorkspaceWrite,
    /// Anywhere.
    Full,
}

impl FsAccess {
    /// The name in declarations and settings (`workspace-write`).
    pub fn name(self) -> &'static str {
        match self {
            FsAccess::None => "none",
            FsAccess::WorkspaceRead => "workspace-read",
            FsAccess::WorkspaceWrite => "workspace-write",
            FsAccess::Full => "full",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        [
            FsAccess::None,
            FsAccess::WorkspaceRead,
            FsAccess::WorkspaceWrite,
            FsAccess::Full,
        ]
        .into_iter()
        .find(|access| access.name() == name)
    }
}

/// What a plugin declares it needs (or what it is granted).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Access {
    /// The file system.
    pub fs: FsAccess,
    /// Starting programs.
    pub spawn: bool,
    /// The network hosts it reaches (`*`: any); none: no network.
    pub network: Vec<String>,
    /// The address space it needs, in MiB (none, or 0 declared: no limit).
    pub memory_mb: Option<u64>,
    /// The CPU seconds it needs over its life (none, or 0 declared: no limit).
    pub cpu_seconds: Option<u64>,
}

/// An `access:` entry the host does not understand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownAccess(pub String);

impl fmt::Display for UnknownAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "'{}' is not an access declaration (access:fs=none|workspace-read|workspace-write|full, \
             access:spawn, access:network=HOST[,HOST...], access:memory_mb=N, access:cpu_seconds=N)",
            self.0
        )
    }
}

impl Access {
    /// The access declared among `capabilities`; `None` when none is (an older plugin).
    pub fn declared(capabilities: &[String]) -> Result<Option<Access>, UnknownAccess> {
        let mut access = Access::default();
        let mut any = false;
        for capability in capabilities {
            let Some(entry) = capability.strip_prefix(PREFIX) else {
                continue;
            };
            any = true;
            let unknown = || UnknownAccess(capability.clone());
            let (key, value) = entry.split_once('=').unwrap_or((entry, ""));
            let number = || value.parse::<u64>().map_err(|_| unknown());
            match key {
                "fs" => access.fs = FsAccess::parse(value).ok_or_else(unknown)?,
                "spawn" if value.is_empty() => access.spawn = true,
                "network" if !value.is_empty() => access
                    .network
                    .extend(value.split(',').map(|h| h.trim().to_string())),
                // 0 is no limit, as in the settings.
                "memory_mb" => access.memory_mb = Some(number()?).filter(|&mb| mb > 0),
                "cpu_seconds" => access.cpu_seconds = Some(number()?).filter(|&s| s > 0),
                _ => return Err(unknown()),
            }
        }
        Ok(any.then_some(access))
    }

    /// The declarations, as capability entries.
    pub fn capabilities(&self) -> Vec<String> {
        let mut entries = vec![format!("{PREFIX}fs={}", self.fs.name())];
        if self.spawn {
            entries.push(SPAWN.to_string());
        }
        if !self.network.is_empty() {
            entries.push(format!("{PREFIX}network={}", self.network.join(",")));
        }
        entries.extend(self.memory_mb.map(|mb| format!("{PREFIX}memory_mb={mb}")));
        entries.extend(self.cpu_seconds.map(|s| format!("{PREFIX}cpu_seconds={s}")));
        entries
    }

    /// What both `self` and `other` allow: the smaller file system access, a program or the
    /// network only when both do, the smaller limits.
    pub fn intersection(&self, other: &Access) -> Access {
        let smaller = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let network = if other.network.iter().any(|h| h == "*") {
            self.network.clone()
        } else if self.network.iter().any(|h| h == "*") {
            other.network.clone()
        } else {
            (self.network.iter())
                .filter(|h| other.network.contains(h))
                .cloned()
                .collect()
        };
        Access {
            fs: self.fs.min(other.fs),
            spawn: self.spawn && other.spawn,
            network,
            memory_mb: smaller(self.memory_mb, other.memory_mb),
            cpu_seconds: smaller(self.cpu_seconds, other.cpu_seconds),
        }
    }

    /// What `self` needs that `granted` does not give, one phrase each (`fs=workspace-write`,
    /// `spawn`, `network`).
    pub fn missing_from(&self, granted: &Access) -> Vec<String> {
        let mut missing = Vec::new();
        if self.fs > granted.fs {
            missing.push(format!("fs={}", self.fs.name()));
        }
        if self.spawn && !granted.spawn {
            missing.push("spawn".to_string());
        }
        if !self.network.is_empty() && granted.network.is_empty() {
            missing.push("network".to_string());
        }
        missing
    }
}

impl fmt::Display for Access {
    /// `fs=workspace-write, spawn, network=api.example.com, memory_mb=512`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entries: Vec<String> = self
            .capabilities()
            .iter()
            .map(|c| c.trim_start_matches(PREFIX).to_string())
            .collect();
        f.write_str(&entries.join(", "))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn caps(entries: &[&str]) -> Vec<String> {
        entries.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn declarations_are_read_and_written_back() {
        let declared = Access::declared(&caps(&[
            "resources",
            FS_WORKSPACE_WRITE,
            SPAWN,
            "access:network=a.example,b.example",
            "access:memory_mb=512",
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(declared.fs, FsAccess::WorkspaceWrite);
        assert!(declared.spawn);
        assert_eq!(declared.network, ["a.example", "b.example"]);
        assert_eq!(
            Access::declared(&declared.capabilities()),
            Ok(Some(declared.clone()))
        );
        assert_eq!(
            declared.to_string(),
            "fs=workspace-write, spawn, network=a.example,b.example, memory_mb=512"
        );
        assert_eq!(Access::declared(&caps(&["resources"])), Ok(None));
        let unlimited = Access::declared(&caps(&["access:memory_mb=0"]))
            .unwrap()
            .unwrap();
        assert_eq!(unlimited.memory_mb, None);
        assert!(Access::declared(&caps(&["access:fs=everything"])).is_err());
        assert!(Access::declared(&caps(&["access:teleport"])).is_err());
    }

    #[test]
    fn the_intersection_gives_nothing_either_side_lacks() {
        let declared = Access {
            fs: FsAccess::WorkspaceWrite,
            spawn: false,
            network: vec!["api.example".into()],
            memory_mb: Some(512),
            cpu_seconds: None,
        };
        let granted = Access {
            fs: FsAccess::Full,
            spawn: true,
            network: vec!["*".into()],
            memory_mb: Some(4096),
            cpu_seconds: Some(60),
        };
        let both = declared.intersection(&granted);
        assert_eq!(both.fs, FsAccess::WorkspaceWrite);
        assert!(!both.spawn);
        assert_eq!(both.network, ["api.example"]);
        assert_eq!(both.memory_mb, Some(512));
        assert_eq!(both.cpu_seconds, Some(60));
        let read_only = Access {
            fs: FsAccess::WorkspaceRead,
            ..Access::default()
        };
        assert_eq!(
            declared.missing_from(&read_only),
            ["fs=workspace-write", "network"]
        );
    }
}
