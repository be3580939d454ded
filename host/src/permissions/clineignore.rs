//! Cline's `.clineignore` heuristic for commands: the rules themselves are the workspace
//! capability's ([`tool_api::workspace::ClineIgnore`]).

use tool_api::workspace::normalize;

use super::Workspace;

/// Cline's heuristic for commands that read files: when the first word (any case) is `cat`,
/// `less`, `more`, `head`, `tail`, `grep`, `awk`, `sed`, `get-content`, `gc`, `type`,
/// `select-string` or `sls`, each later word that does not start with `-` or `/` and has no
/// `:` is checked as a path, relative to the root the command runs in (`root`); the first one
/// the rules of the root it lands in block is returned. Pipelines and chains are not looked
/// into, and absolute paths are never checked (as in Cline).
pub fn blocked_command_arg(workspace: &Workspace, root: usize, command: &str) -> Option<String> {
    if !(0..workspace.root_count()).any(|r| workspace.root_ignore(r).is_active()) {
        return None;
    }
    let mut words = command.split_whitespace();
    let first = words.next()?.to_lowercase();
    if !FILE_READING_COMMANDS.contains(&first.as_str()) {
        return None;
    }
    let base = workspace.root_path(root);
    words
        .filter(|arg| !arg.starts_with('-') && !arg.starts_with('/') && !arg.contains(':'))
        .find(|arg| {
            let typed = arg.replace('\\', "/");
            let absolute = normalize(&base.join(&typed));
            workspace.blocks_as_typed(&absolute, typed.ends_with('/'))
        })
        .map(str::to_string)
}

/// The commands Cline's `.clineignore` heuristic looks at.
const FILE_READING_COMMANDS: &[&str] = &[
    "cat",
    "less",
    "more",
    "head",
    "tail",
    "grep",
    "awk",
    "sed",
    "get-content",
    "gc",
    "type",
    "select-string",
    "sls",
];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use tool_api::workspace::RootSpec;

    #[test]
    fn commands_that_read_ignored_files_are_caught() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".clineignore"), "secrets/\n.env\n").unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let blocked = |command: &str| blocked_command_arg(&workspace, 0, command);
        assert_eq!(blocked("cat README.md"), None);
        assert_eq!(
            blocked("grep -r password secrets/db.txt").as_deref(),
            Some("secrets/db.txt")
        );
        assert_eq!(blocked("  CAT .env").as_deref(), Some(".env"));
        assert_eq!(blocked("ls | cat .env"), None);
        assert_eq!(blocked(&format!("cat {}/.env", dir.path().display())), None);
        assert_eq!(blocked("cat c:.env"), None);
        let open = tempfile::tempdir().unwrap();
        let unruled = Workspace::new(open.path()).unwrap();
        assert_eq!(blocked_command_arg(&unruled, 0, "cat .env"), None);
    }

    #[test]
    fn each_root_has_its_own_rules_and_arguments_resolve_in_the_commands_root() {
        let parent = tempfile::tempdir().unwrap();
        let (a, b) = (parent.path().join("a"), parent.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(a.join(".clineignore"), "a-secret\n").unwrap();
        std::fs::write(b.join(".clineignore"), "b-secret\n").unwrap();
        let workspace =
            Workspace::with_roots(&[RootSpec::unnamed(&a), RootSpec::unnamed(&b)]).unwrap();
        let blocked = |root, command: &str| blocked_command_arg(&workspace, root, command);
        assert_eq!(blocked(0, "cat a-secret").as_deref(), Some("a-secret"));
        assert_eq!(blocked(0, "cat b-secret"), None);
        assert_eq!(blocked(1, "cat b-secret").as_deref(), Some("b-secret"));
        assert_eq!(blocked(1, "cat a-secret"), None);
        // Into another root: that root's rules.
        assert_eq!(
            blocked(1, "cat ../a/a-secret").as_deref(),
            Some("../a/a-secret")
        );
    }
}
