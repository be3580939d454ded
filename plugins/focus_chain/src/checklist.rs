//! The task-progress checklist and its markdown file (Cline's focus-chain file format).

use std::sync::OnceLock;

use regex::Regex;

/// The file's name for a task: `focus_chain_taskid_<id>.md` (characters that cannot be part of a
/// file name are replaced by `_`).
pub fn file_name(task_id: &str) -> String {
    let safe: String = task_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("focus_chain_taskid_{safe}.md")
}

/// The file's content: a heading, two comments explaining the syntax, the list, a closing comment.
pub fn file_content(task_id: &str, list: &str) -> String {
    format!(
        "# Focus Chain List for Task {task_id}\n\n<!-- Edit this markdown file to update your focus chain list -->\n<!-- Use the format: - [ ] for incomplete items and - [x] for completed items -->\n\n{list}\n\n<!-- Save this file and the focus chain list will be updated in the task -->"
    )
}

/// The checklist lines of a text (lines that, trimmed, start with `- [ ]`, `- [x]` or `- [X]`),
/// joined with newlines; `None` when there are none.
pub fn extract(text: &str) -> Option<String> {
    let items: Vec<&str> = text
        .split('\n')
        .filter(|line| {
            let trimmed = line.trim();
            ["- [ ]", "- [x]", "- [X]"]
                .iter()
                .any(|prefix| trimmed.starts_with(prefix))
        })
        .collect();
    (!items.is_empty()).then(|| items.join("\n"))
}

fn item_pattern() -> Option<&'static Regex> {
    static PATTERN: OnceLock<Option<Regex>> = OnceLock::new();
    PATTERN
        .get_or_init(|| Regex::new(r"^-\s*\[([ xX])\]\s*(.+)$").ok())
        .as_ref()
}

/// How many items a list has, and how many of them are done (Cline's lenient item syntax).
pub fn counts(list: &str) -> (usize, usize) {
    let Some(pattern) = item_pattern() else {
        return (0, 0);
    };
    list.lines()
        .filter_map(|line| pattern.captures(line.trim()))
        .fold((0, 0), |(done, total), item| {
            let checked = item.get(1).is_some_and(|m| m.as_str() != " ");
            (done + usize::from(checked), total + 1)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_round_trips() {
        let list = "- [x] read\n- [ ] write";
        let content = file_content("42", list);
        assert_eq!(
            content,
            "# Focus Chain List for Task 42\n\n<!-- Edit this markdown file to update your focus chain list -->\n<!-- Use the format: - [ ] for incomplete items and - [x] for completed items -->\n\n- [x] read\n- [ ] write\n\n<!-- Save this file and the focus chain list will be updated in the task -->"
        );
        assert_eq!(extract(&content).as_deref(), Some(list));
    }

    #[test]
    fn items_are_counted_leniently() {
        assert_eq!(
            counts("- [x] a\n-[X]b\n  - [ ] c\nnot an item\n- [ ]"),
            (2, 3)
        );
        assert_eq!(extract("no items"), None);
    }

    #[test]
    fn file_names_stay_in_their_directory() {
        assert_eq!(file_name("1700-42"), "focus_chain_taskid_1700-42.md");
        assert_eq!(file_name("../x"), "focus_chain_taskid____x.md");
    }
}
