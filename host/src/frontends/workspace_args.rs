//! The workspace options of the commands that run tools (`call`, `serve`, `replay`, `mcp`,
//! `policy`): its roots, from the command line, else the settings, else the current
//! directory.

use std::path::PathBuf;

use tool_api::workspace::RootSpec;

use super::error::FrontendError;
use crate::permissions::Workspace;
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
pub fn open_workspace(roots: &[RootSpec], settings: &Settings) -> Result<Workspace, FrontendError> {
    let configured;
    let roots = if roots.is_empty() {
        configured = settings.workspace.root_specs()?;
        &configured[..]
    } else {
        roots
    };
    if roots.is_empty() {
        return Workspace::new(std::path::Path::new(".")).map_err(FrontendError::CurrentDirectory);
    }
    Workspace::with_roots(roots).map_err(|source| match roots {
        [one] => FrontendError::Workspace {
            path: one.path.clone(),
            source,
        },
        _ => FrontendError::Roots(source),
    })
}

/// What a client is told of the workspace (the MCP server's instructions): where relative
/// paths resolve, and in a multi-root workspace the roots' names and Cline's hints.
pub fn describe_workspace(workspace: &Workspace) -> String {
    if !workspace.is_multi_root() {
        return format!(
            "Relative paths are resolved against the workspace {}.",
            workspace.cwd().display()
        );
    }
    let roots: Vec<String> = (0..workspace.root_count())
        .map(|root| {
            format!(
                "{} ({})",
                workspace.root_name(root),
                workspace.root_path(root).display()
            )
        })
        .collect();
    format!(
        "The workspace has several roots: {}. Relative paths are resolved against the first; \
         `@NAME:path` names a file of another root, `@NAME:command` runs a command there, and \
         search_files without a hint searches every root.",
        roots.join(", ")
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_roots_come_from_the_command_line_then_the_settings() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let args = WorkspaceArgs {
            cwd: vec![a.path().to_path_buf()],
            workspace: vec![RootSpec::named("api", b.path())],
        };
        let workspace = open_workspace(&args.roots(), &Settings::default()).unwrap();
        assert_eq!(workspace.root_name(1), "api");
        assert_eq!(workspace.cwd(), a.path());
        let described = describe_workspace(&workspace);
        assert!(described.contains(&format!("api ({})", b.path().display())));
        let toml = format!(
            "[workspace]\nroots = [\"api={}\", {:?}]\n",
            b.path().display(),
            a.path().to_str().unwrap()
        );
        let settings = Settings::from_toml(&toml).unwrap();
        let workspace = open_workspace(&[], &settings).unwrap();
        assert_eq!(workspace.cwd(), b.path());
        assert_eq!(workspace.root_name(0), "api");
        let missing = format!("[workspace]\nroots = [\"{}/nope\"]\n", a.path().display());
        assert!(Settings::from_toml(&missing)
            .unwrap_err()
            .to_string()
            .contains("workspace.roots"));
        assert!(Settings::from_toml("[workspace]\nroot = []\n")
            .unwrap_err()
            .to_string()
            .contains("roots"));
    }
}
