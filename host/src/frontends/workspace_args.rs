//! The workspace options of the commands that run tools (`call`, `serve`, `replay`, `mcp`,
//! `policy`): its roots, from the command line, else the settings, else the current
//! directory.

use std::path::PathBuf;

use tool_api::workspace::RootSpec;

use crate::policy::Workspace;
use crate::settings::Settings;

/// Where the workspace is: one root, or several (Cline's multi-root workspace).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct WorkspaceArgs {
    /// A workspace root, named after its directory (repeatable: several make a multi-root
    /// workspace, and the first is the primary one). Default: the settings' `[workspace] roots`,
    /// else the current directory.
    #[arg(long = "cwd", value_name = "DIR")]
    pub cwd: Vec<PathBuf>,
    /// A workspace root with a name of its own, for `@NAME:path` hints (repeatable; these come
    /// after the `--cwd` roots).
    #[arg(long = "workspace", value_name = "NAME=DIR", value_parser = RootSpec::parse_named)]
    pub workspace: Vec<RootSpec>,
}

impl WorkspaceArgs {
    /// The roots given, in order: the `--cwd` ones, then the `--workspace` ones.
    pub fn roots(&self) -> Vec<RootSpec> {
        self.cwd
            .iter()
            .map(RootSpec::unnamed)
            .chain(self.workspace.iter().cloned())
            .collect()
    }
}

/// Opens the workspace of `roots`; none given: the settings' roots, else the current
/// directory.
pub fn open_workspace(roots: &[RootSpec], settings: &Settings) -> Result<Workspace, String> {
    let configured;
    let roots = if roots.is_empty() {
        configured = settings.workspace.root_specs()?;
        &configured[..]
    } else {
        roots
    };
    if roots.is_empty() {
        return Workspace::new(std::path::Path::new("."))
            .map_err(|e| format!("cannot use . as the workspace: {e}"));
    }
    Workspace::with_roots(roots).map_err(|e| match roots {
        [one] => format!("cannot use {} as the workspace: {e}", one.path.display()),
        _ => format!("cannot open the workspace: {e}"),
    })
}
