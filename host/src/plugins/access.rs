//! What an isolated plugin's workers may reach: what the plugin declares (tool-api's
//! `access:` capabilities), what the user granted (`[plugins.<name>]`, a bundle's manifest),
//! and what both allow, which is what its sandbox gives; and how a call its sandbox refused
//! is explained.

use tool_api::model::access::Access;

use crate::settings::{FsGrant, PluginOptions};

/// What `options` grant, as an access: the defaults are the workspace to read, no programs, no
/// network, 4096 MiB (0: no limit) and no CPU limit.
pub fn granted(options: &PluginOptions) -> Access {
    Access {
        fs: options.fs.unwrap_or(FsGrant::WorkspaceRead),
        spawn: options.spawn.unwrap_or(false),
        network: if options.network.unwrap_or(false) {
            vec!["*".to_string()]
        } else {
            Vec::new()
        },
        memory_mb: Some(options.memory_mb.unwrap_or(4096)).filter(|&mb| mb > 0),
        cpu_seconds: options.cpu_seconds.filter(|&s| s > 0),
    }
}

/// What a plugin's workers are given and why: what it declares (`None`: an older plugin that
/// declares nothing, or not known yet), what the user granted, what both allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessReport {
    /// What it declares.
    pub declared: Option<Access>,
    /// What the settings or its bundle grant.
    pub granted: Access,
    /// What its workers get.
    pub effective: Access,
    /// The grant is its bundle's manifest's.
    pub by_bundle: bool,
}

impl AccessReport {
    /// What it declares but is not granted, with the setting that grants each:
    /// `fs=workspace-write: set fs = "workspace-write" under [plugins.NAME]`.
    pub fn missing(&self, plugin: &str) -> Vec<String> {
        let Some(declared) = &self.declared else {
            return Vec::new();
        };
        declared
            .missing_from(&self.granted)
            .into_iter()
            .map(|need| {
                let setting = setting_for(&need);
                let place = if self.by_bundle {
                    "in its bundle's manifest (grants)".to_string()
                } else {
                    format!("under [plugins.{plugin}] (or run `toolhost plugin grant {plugin}`)")
                };
                format!("{need}: set {setting} {place}")
            })
            .collect()
    }

    /// One line: `declares …; granted …; lacks …`.
    pub fn summary(&self) -> String {
        let declared = match &self.declared {
            Some(declared) => format!("declares {declared}"),
            None => "declares nothing (its grant decides)".to_string(),
        };
        let mut line = format!("{declared}; granted {}", self.granted);
        if let Some(declared) = &self.declared {
            let missing = declared.missing_from(&self.granted);
            if !missing.is_empty() {
                line.push_str(&format!("; lacks {}", missing.join(", ")));
            }
        }
        line
    }
}

/// The `[plugins.<name>]` key and value granting `need` (`fs=workspace-write`, `spawn`).
fn setting_for(need: &str) -> String {
    match need.split_once('=') {
        Some(("fs", level)) => format!("fs = \"{level}\""),
        _ => format!("{need} = true"),
    }
}

/// What the messages of a call the sandbox refused say: no permission, not permitted, a
/// read-only file system.
const REFUSED: [&str; 5] = [
    "Permission denied",
    "Operation not permitted",
    "Read-only file system",
    "os error 13)",
    "os error 30)",
];

/// Why the sandbox of `plugin`'s worker may have refused a call that failed with `message`,
/// and the setting that would allow it; `None` when the message does not look like a refusal.
pub fn explain_refusal(plugin: &str, report: &AccessReport, message: &str) -> Option<String> {
    if !REFUSED.iter().any(|marker| message.contains(marker)) {
        return None;
    }
    let granted = &report.granted;
    let where_granted = if report.by_bundle {
        "its bundle's manifest ([plugins.<file>] of the manifest)".to_string()
    } else {
        format!("the settings file, under [plugins.{plugin}]")
    };
    let setting = |missing: &[String]| {
        let settings: Vec<String> = missing.iter().map(|need| setting_for(need)).collect();
        settings.join(", ")
    };
    let text = match &report.declared {
        Some(declared) => {
            let missing = declared.missing_from(granted);
            if missing.is_empty() {
                format!(
                    "toolhost's sandbox may have refused plugin \"{plugin}\" something it does \
                     not declare: it declares {declared} and its worker gets exactly that. A \
                     plugin gets no more than it declares; its author must declare what it needs \
                     (tool_api::model::access)."
                )
            } else {
                let command = if report.by_bundle {
                    String::new()
                } else {
                    format!(", or run `toolhost plugin grant {plugin}`")
                };
                format!(
                    "toolhost's sandbox refused plugin \"{plugin}\": it declares {declared}, but \
                     is granted only {granted}, so it lacks {}. To grant it, set {} in \
                     {where_granted}{command}.",
                    missing.join(", "),
                    setting(&missing)
                )
            }
        }
        None => {
            let more = if granted.fs < FsGrant::WorkspaceWrite {
                "fs = \"workspace-write\""
            } else {
                "fs = \"full\""
            };
            format!(
                "toolhost's sandbox may have refused plugin \"{plugin}\": it declares no access, \
                 so its worker gets what it is granted, {granted}. To grant more (say, {more}), \
                 set it in {where_granted}."
            )
        }
    };
    Some(text)
}
