//! `toolhost plugin`: for plugin authors and the users who run their plugins. `show NAME`
//! (what a loaded plugin declares, is granted and gets), `grant NAME` and `revoke NAME` (what
//! it declares, for this build), `new NAME` (a crate to start from),
//! `check LIB` (what a host checks before loading a library, without loading it here).

mod check;
mod grant;
mod new;
mod show;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use crate::frontends::FrontendError;
use crate::Host;

/// `toolhost plugin ...`
#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Shows a loaded plugin: its library, version, tools, where it runs, and what its worker
    /// may reach (what it declares, what it is granted, what it lacks and the setting that
    /// grants it).
    Show {
        /// The plugin's name (as `toolhost tools` shows it).
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Grants a loaded plugin what it declares, for this build of it (its library's SHA-256):
    /// asked on a terminal, or `--yes`. A new build needs a new grant.
    Grant {
        /// The plugin's name.
        name: String,
        /// Grant without asking.
        #[arg(long)]
        yes: bool,
    },
    /// Takes back the grant `grant` gave a plugin.
    Revoke {
        /// The plugin's name.
        name: String,
    },
    /// Writes a plugin crate to start from: one tool with a partial handler, a test on the
    /// SDK's test host, a README. It depends on tool-api by path, git or version.
    New(new::NewArgs),
    /// Checks a library as a host would before loading it, without loading it into this
    /// process: the file (ELF, architecture, ABI), the manifest and specs (names, schemas
    /// within the OpenAI strict and Anthropic limits, descriptions, access declared), and a
    /// sample call in an isolated worker. Exit 0 when a host would load it, 1 otherwise.
    Check {
        /// The library file.
        library: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs `command`; `host` builds the host of this invocation for `show`.
pub fn run_command(
    command: PluginCommand,
    host: impl FnOnce() -> Result<std::sync::Arc<Host>, FrontendError>,
) -> Result<ExitCode, FrontendError> {
    match command {
        PluginCommand::Show { name, json } => show::run(&*host()?, &name, json),
        PluginCommand::Grant { name, yes } => grant::grant(&*host()?, &name, yes),
        PluginCommand::Revoke { name } => grant::revoke(&name),
        PluginCommand::New(args) => new::run(&args),
        PluginCommand::Check { library, json } => check::run(&library, json),
    }
}
