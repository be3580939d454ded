//! The workspace: its roots, how paths resolve against them, and where the boundary is.
//!
//! The implementation is the workspace capability of `tool-api`
//! ([`tool_api::workspace`]), which the plugins use to reach the files: the host's verdicts
//! and the plugins' checks of what they really opened are made by the same code.

#[cfg(test)]
use tool_api::workspace::normalize;
pub use tool_api::workspace::Workspace;

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    #[test]
    fn dotdot_is_lexical() {
        assert_eq!(
            normalize(Path::new("/a/b/../c/./d")),
            PathBuf::from("/a/c/d")
        );
        assert_eq!(normalize(Path::new("/a/../../x")), PathBuf::from("/x"));
    }

    #[test]
    fn boundary_follows_symlinks() -> std::io::Result<()> {
        let outside = tempfile::tempdir()?;
        let ws = tempfile::tempdir()?;
        std::fs::write(outside.path().join("secret"), "s")?;
        std::os::unix::fs::symlink(outside.path(), ws.path().join("link"))?;
        let workspace = Workspace::new(ws.path())?;
        assert!(workspace.verdict("a/new/file.txt").inside_workspace);
        assert!(!workspace.verdict("link/secret").inside_workspace);
        assert!(!workspace.verdict("link/not-yet").inside_workspace);
        assert!(!workspace.verdict("../x").inside_workspace);
        assert!(!workspace.verdict("/etc/passwd").inside_workspace);
        assert_eq!(workspace.verdict("a/b.txt").display, "a/b.txt");
        Ok(())
    }
}
