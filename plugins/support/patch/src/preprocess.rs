//! From the raw `input` parameter to the patch's lines: shell wrappers removed, sentinels checked
//! or added, and the list of files that must be read before parsing.

use crate::error::PatchError;
use crate::js;

/// `*** Begin Patch`.
pub const BEGIN: &str = "*** Begin Patch";
/// `*** End Patch`.
pub const END: &str = "*** End Patch";
/// `*** Add File: `.
pub const ADD: &str = "*** Add File: ";
/// `*** Update File: `.
pub const UPDATE: &str = "*** Update File: ";
/// `*** Delete File: `.
pub const DELETE: &str = "*** Delete File: ";
/// `*** Move to: `.
pub const MOVE: &str = "*** Move to: ";
/// `@@`: a hunk header.
pub const SECTION: &str = "@@";
/// `*** End of File`.
pub const END_OF_FILE: &str = "*** End of File";

/// Lines that start with one of these before the patch are shell or Markdown wrapping.
const WRAPPERS: [&str; 4] = ["%%bash", "apply_patch", "EOF", "```"];

/// The message for a patch with only one of its two sentinels.
pub const INCOMPLETE_SENTINELS: &str =
    "Invalid patch text - incomplete sentinels. Try breaking it into smaller patches.";

/// The patch's lines, ready for the parser: `\r` removed at line ends, wrappers stripped, and
/// `*** Begin Patch` / `*** End Patch` added when both are missing. One sentinel without the
/// other is an error.
pub fn patch_lines(input: &str) -> Result<Vec<String>, PatchError> {
    let lines: Vec<&str> = input
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect();
    let lines = strip_wrappers(&lines);
    let has_begin = lines.first().is_some_and(|l| l.starts_with(BEGIN));
    let has_end = lines.last().is_some_and(|l| *l == END);
    match (has_begin, has_end) {
        (true, true) => Ok(lines.into_iter().map(str::to_string).collect()),
        (false, false) => Ok(std::iter::once(BEGIN)
            .chain(lines)
            .chain(std::iter::once(END))
            .map(str::to_string)
            .collect()),
        _ => Err(PatchError::new(INCOMPLETE_SENTINELS)),
    }
}

/// The paths of `*** Update File:` and `*** Delete File:` lines, in order: the files read before
/// parsing.
///
/// Like Cline, this looks at the raw input (line ends not cleaned), and skips a path that the
/// trimmed input ends with, taking it for one still being typed. Such a file is then not loaded,
/// and the parser reports it missing.
pub fn files_to_load(input: &str) -> Vec<String> {
    let raw: Vec<&str> = input.split('\n').collect();
    let trimmed_input = js::trim(input);
    let mut files = Vec::new();
    for line in strip_wrappers(&raw) {
        let Some(rest) = line
            .strip_prefix(UPDATE)
            .or_else(|| line.strip_prefix(DELETE))
        else {
            continue;
        };
        let path = js::trim(rest);
        if !trimmed_input.ends_with(path) {
            files.push(path.to_string());
        }
    }
    files
}

/// Every path the patch names (updated, deleted, added, or moved to), with the UI kind of its
/// change (`editedExistingFile`, `fileDeleted`, `newFileCreated`), in patch order: what must
/// be checked before anything is read.
pub fn patch_paths(input: &str) -> Vec<(String, &'static str)> {
    let raw: Vec<&str> = input.split('\n').collect();
    let mut paths = Vec::new();
    for line in strip_wrappers(&raw) {
        let line = line.trim_end_matches('\r');
        let found = [
            (UPDATE, "editedExistingFile"),
            (DELETE, "fileDeleted"),
            (ADD, "newFileCreated"),
            (MOVE, "newFileCreated"),
        ]
        .into_iter()
        .find_map(|(prefix, tool)| line.strip_prefix(prefix).map(|rest| (rest, tool)));
        if let Some((rest, tool)) = found {
            let path = js::trim(rest);
            if !path.is_empty() && !paths.iter().any(|(p, _)| p == path) {
                paths.push((path.to_string(), tool));
            }
        }
    }
    paths
}

/// One file's change as the patch states it, for the question the user approves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// `add`, `update` or `delete`.
    pub kind: &'static str,
    /// The path as the patch names it.
    pub path: String,
    /// Where an update moves the file.
    pub moved_to: Option<String>,
    /// Lines the patch adds (`+`).
    pub added: usize,
    /// Lines the patch removes (`-`).
    pub removed: usize,
}

/// Every file section of the patch, in patch order, with the lines it adds and removes:
/// read from the patch alone, before any file is.
pub fn changes(input: &str) -> Vec<Change> {
    let raw: Vec<&str> = input.split('\n').collect();
    let mut changes: Vec<Change> = Vec::new();
    for line in strip_wrappers(&raw) {
        let line = line.trim_end_matches('\r');
        let section = [(ADD, "add"), (UPDATE, "update"), (DELETE, "delete")]
            .into_iter()
            .find_map(|(prefix, kind)| line.strip_prefix(prefix).map(|rest| (rest, kind)));
        if let Some((rest, kind)) = section {
            changes.push(Change {
                kind,
                path: js::trim(rest).to_string(),
                moved_to: None,
                added: 0,
                removed: 0,
            });
            continue;
        }
        let Some(change) = changes.last_mut() else {
            continue;
        };
        if let Some(rest) = line.strip_prefix(MOVE) {
            change.moved_to = Some(js::trim(rest).to_string());
        } else if line.starts_with("***") {
            continue;
        } else if line.starts_with('+') {
            change.added += 1;
        } else if line.starts_with('-') {
            change.removed += 1;
        }
    }
    changes
}

/// Cline's `stripBashWrapper`: outside the patch, wrapper lines are dropped; before any
/// `*** Begin Patch`, only lines that look like patch content are kept (and blank lines once
/// some content was seen); trailing blank lines go. Input with neither a Begin line nor any
/// patch-looking line (other than the last line) comes back unchanged.
fn strip_wrappers<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    let mut result = Vec::new();
    let mut inside = false;
    let mut found_begin = false;
    let mut found_content = false;
    for (i, &line) in lines.iter().enumerate() {
        if !inside && WRAPPERS.iter().any(|w| line.starts_with(w)) {
            continue;
        }
        if line.starts_with(BEGIN) {
            inside = true;
            found_begin = true;
            result.push(line);
            continue;
        }
        if line == END {
            inside = false;
            result.push(line);
            continue;
        }
        let is_patch_line = looks_like_patch(line);
        if is_patch_line && i != lines.len() - 1 {
            found_content = true;
        }
        if inside || (!found_begin && is_patch_line) || (line.is_empty() && found_content) {
            result.push(line);
        }
    }
    while result.last().is_some_and(|l| l.is_empty()) {
        result.pop();
    }
    if !found_begin && !found_content {
        lines.to_vec()
    } else {
        result
    }
}

/// Whether a line outside the sentinels looks like part of a patch.
fn looks_like_patch(line: &str) -> bool {
    [ADD, UPDATE, DELETE, MOVE, SECTION, "+", "-", " "]
        .iter()
        .any(|p| line.starts_with(p))
        || line == "***"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_count_each_files_added_and_removed_lines() {
        let patch = "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n one\n-two\n+TWO\n+2\n\
                     *** Add File: new.txt\n+x\n*** Delete File: old.txt\n*** End Patch";
        let change = |kind, path: &str, moved_to: Option<&str>, added, removed| Change {
            kind,
            path: path.to_string(),
            moved_to: moved_to.map(str::to_string),
            added,
            removed,
        };
        assert_eq!(
            changes(patch),
            [
                change("update", "a.txt", Some("b.txt"), 2, 1),
                change("add", "new.txt", None, 1, 0),
                change("delete", "old.txt", None, 0, 0),
            ]
        );
    }

    fn lines(input: &str) -> Result<Vec<String>, String> {
        patch_lines(input).map_err(|e| e.0)
    }

    #[test]
    fn sentinels_are_added_when_both_are_missing() {
        assert_eq!(
            lines("*** Delete File: a\r\n"),
            Ok(vec![BEGIN.into(), "*** Delete File: a".into(), END.into()])
        );
    }

    #[test]
    fn one_sentinel_alone_is_an_error() {
        let expected = Err(INCOMPLETE_SENTINELS.to_string());
        assert_eq!(lines("*** Begin Patch\n*** Delete File: a"), expected);
        assert_eq!(lines("*** Delete File: a\n*** End Patch"), expected);
    }

    #[test]
    fn shell_wrappers_are_stripped() {
        let input =
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF\n";
        assert_eq!(
            lines(input),
            Ok(vec![BEGIN.into(), "*** Delete File: a".into(), END.into()])
        );
        let fenced = "Here it is:\n```\n*** Update File: a\n x\n-y\n```";
        assert_eq!(
            lines(fenced),
            Ok(vec![
                BEGIN.into(),
                "*** Update File: a".into(),
                " x".into(),
                "-y".into(),
                END.into()
            ])
        );
    }

    #[test]
    fn plain_text_is_kept_for_the_parser_to_refuse() {
        assert_eq!(
            lines("hello"),
            Ok(vec![BEGIN.into(), "hello".into(), END.into()])
        );
    }

    #[test]
    fn every_named_path_is_found_once() {
        let patch = "*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@\n-x\n+y\n*** Add File: c\n+z\n*** Delete File: a\n*** End Patch";
        assert_eq!(
            patch_paths(patch),
            [
                ("a".to_string(), "editedExistingFile"),
                ("b".to_string(), "newFileCreated"),
                ("c".to_string(), "newFileCreated")
            ]
        );
    }

    #[test]
    fn a_path_at_the_very_end_is_not_loaded() {
        assert_eq!(
            files_to_load("*** Update File: a.txt"),
            Vec::<String>::new()
        );
        assert_eq!(
            files_to_load(
                "*** Begin Patch\r\n*** Update File: a.txt\r\n*** Delete File: b\r\n*** End Patch"
            ),
            vec!["a.txt".to_string(), "b".to_string()]
        );
        // The check is a plain suffix test on the whole input, as in Cline.
        assert_eq!(
            files_to_load("*** Delete File: b.txt\n*** Delete File: ab.txt"),
            Vec::<String>::new()
        );
    }
}
