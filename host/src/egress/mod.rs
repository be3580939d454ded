//! Egress: where connections may go, and the proxy that makes it so for commands.
//!
//! - [`policy`]: `[egress]` as rules ([`rules`]): deny, then allow (the settings, the hosts
//!   answered "always", the package registries of `registries.txt`), then ask. Decided on
//!   the name as given, before resolving it, so a refused name is never looked up.
//! - [`addresses`]: after resolving, loopback, private, link-local, metadata and this
//!   machine's own addresses are refused unless a rule names that exact address.
//! - The proxy (`proxy.rs`): one per process, on a Unix socket in the host's private
//!   directory. A sandboxed command's supervisor connects with the token of a [`Grant`]
//!   ([`link`]) and hands over every connection the command makes to its namespace's
//!   loopback port; the proxy serves each as an HTTP proxy (CONNECT and plain HTTP),
//!   decides, asks through the grant's [`Asker`], connects, and writes [`log`].
//!   Refusals are also sent back to the supervisor, which prints them on the command's
//!   standard error, so the model reads which host was refused and which setting allows it.

pub mod addresses;
pub mod error;
pub mod log;
pub mod policy;
mod proxy;
pub mod rules;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use toolhost_sandbox::EgressLink;

pub use error::EgressError;
pub use policy::{Decision, Policy};
use rules::Rule;

/// What the user answered to "may this connection be made?".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Allowed for the rest of the task: by whom (the user, `--yes`).
    ThisTask(&'static str),
    /// Allowed from now on: written to the allowed file.
    Always,
    /// Refused: by whom (the user, nobody to ask, a subagent's rule).
    Refused(String),
}

/// Who answers the proxy's questions for one command: the frontend's user, under the
/// session's approval mode.
pub trait Asker: Send + Sync {
    /// Asks `question`.
    fn ask(&self, question: &str) -> Answer;
}

/// What a command's connections are decided under: its task and tool, the policy, who is
/// asked.
pub struct Grant {
    /// The task.
    pub task: String,
    /// The tool that runs the command.
    pub tool: String,
    /// The policy of the host's settings.
    pub policy: Policy,
    /// Who answers.
    pub asker: Arc<dyn Asker>,
}

/// Registers `grant` with the proxy (started on first use, its socket in `private_dir`) and
/// returns the link a sandbox policy carries to reach it. The token is good for one
/// connection.
pub fn link(grant: Grant, private_dir: &Path) -> Result<EgressLink, EgressError> {
    proxy::register(grant, private_dir)
}

/// The rules the user's answers added for each task.
static ANSWERS: Mutex<BTreeMap<String, Vec<Rule>>> = Mutex::new(BTreeMap::new());

/// The rules the user's answers added for `task`.
fn answers(task: &str) -> Vec<Rule> {
    ANSWERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(task)
        .cloned()
        .unwrap_or_default()
}

/// Adds an answer's rule for `task`.
fn answered(task: &str, rule: Rule) {
    ANSWERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(task.to_string())
        .or_default()
        .push(rule);
}

/// Appends `rule` to the allowed file (made, with its directory, when missing).
fn remember(file: &Path, rule: &Rule) -> Result<(), EgressError> {
    use std::io::Write;
    let failed = |source| EgressError::Read {
        path: file.to_path_buf(),
        source,
    };
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .map_err(failed)?;
    writeln!(out, "{}", rule.text()).map_err(failed)
}
