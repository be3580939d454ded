//! `toolhost egress log`: the connections tasks' commands asked for, and what was decided.

use std::process::ExitCode;

use clap::Subcommand;

use super::report::print_line;
use crate::egress::log::{self, Entry};
use crate::egress::{EgressError, Policy};
use crate::frontends::FrontendError;
use crate::settings::Settings;

/// `toolhost egress ...`
#[derive(Debug, Subcommand)]
pub enum EgressCommand {
    /// Every connection the egress proxy was asked for (task, tool, host, verdict and why,
    /// bytes each way), oldest first, from the log directory of `[egress]`.
    Log {
        /// Only this task's.
        #[arg(long, value_name = "ID")]
        task: Option<String>,
        /// Print JSON lines (`time_ms`, `task`, `tool`, `target`, `verdict`, `why`, `address`,
        /// `sent`, `received`).
        #[arg(long)]
        json: bool,
    },
}

/// Runs an `egress` command.
pub(super) fn run_command(
    command: EgressCommand,
    settings: Option<&std::path::Path>,
) -> Result<ExitCode, FrontendError> {
    let EgressCommand::Log { task, json } = command;
    let settings = Settings::load(settings)?;
    let policy = Policy::from_settings(&settings.egress)?;
    let Some(dir) = policy.log_dir else {
        return Err(EgressError::Path {
            key: "egress.log_dir",
            reason: "no HOME or XDG_STATE_HOME to find it in; set egress.log_dir".into(),
        }
        .into());
    };
    let entries = log::read(&dir, task.as_deref()).map_err(|source| EgressError::Read {
        path: dir.clone(),
        source,
    })?;
    for entry in &entries {
        if json {
            print_line(&serde_json::to_string(entry).unwrap_or_default());
        } else {
            print_line(&line(entry));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One entry as a line of text.
fn line(entry: &Entry) -> String {
    let address = entry
        .address
        .as_deref()
        .map_or(String::new(), |a| format!(" via {a}"));
    format!(
        "{} {} {} {} {}{address}, {} B sent, {} B received: {}",
        entry.time_ms,
        entry.task,
        entry.tool,
        entry.verdict,
        entry.target,
        entry.sent,
        entry.received,
        entry.why
    )
}
