//! Cline's `.clineignore` heuristic for commands: the rules themselves are the workspace
//! capability's ([`tool_api::workspace::ClineIgnore`]).

use std::path::Path;

pub use tool_api::workspace::ClineIgnore;

/// Cline's heuristic for commands that read files: when the first word (any case) is `cat`,
/// `less`, `more`, `head`, `tail`, `grep`, `awk`, `sed`, `get-content`, `gc`, `type`,
/// `select-string` or `sls`, each later word that does not start with `-` or `/` and has no
/// `:` is checked as a path; the first blocked one is returned. Pipelines and chains are not
/// looked into, and absolute paths are never checked (as in Cline).
pub fn blocked_command_arg(ignore: &ClineIgnore, cwd: &Path, command: &str) -> Option<String> {
    if !ignore.is_active() {
        return None;
    }
    let mut words = command.split_whitespace();
    let first = words.next()?.to_lowercase();
    if !FILE_READING_COMMANDS.contains(&first.as_str()) {
        return None;
    }
    words
        .filter(|arg| !arg.starts_with('-') && !arg.starts_with('/') && !arg.contains(':'))
        .find(|arg| !ignore.allows(cwd, arg))
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
    use super::*;

    #[test]
    fn commands_that_read_ignored_files_are_caught() {
        let cwd = Path::new("/work/project");
        let ignore = ClineIgnore::from_text(cwd, "secrets/\n.env\n");
        let blocked = |command: &str| blocked_command_arg(&ignore, cwd, command);
        assert_eq!(blocked("cat README.md"), None);
        assert_eq!(
            blocked("grep -r password secrets/db.txt").as_deref(),
            Some("secrets/db.txt")
        );
        assert_eq!(blocked("  CAT .env").as_deref(), Some(".env"));
        assert_eq!(blocked("ls | cat .env"), None);
        assert_eq!(blocked("cat /work/project/.env"), None);
        assert_eq!(blocked("cat c:.env"), None);
        assert_eq!(
            blocked_command_arg(&ClineIgnore::default(), cwd, "cat .env"),
            None
        );
    }
}
