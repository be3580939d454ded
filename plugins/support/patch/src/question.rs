//! The one question a patch is approved with: every file, what the patch does to it and the
//! lines it adds and removes, and the files outside the workspace.

use crate::preprocess::Change;

/// The question for `changes`: each path as `shown` shows it (where a link makes it lead
/// elsewhere, that too), and `outside` (the files outside the workspace, as shown).
pub fn text(changes: &[Change], shown: &dyn Fn(&str) -> String, outside: &[String]) -> String {
    let files = if changes.len() == 1 { "file" } else { "files" };
    let mut text = format!("Apply this patch? It changes {} {files}:", changes.len());
    for change in changes {
        let path = shown(&change.path);
        let what = match (change.kind, &change.moved_to) {
            ("add", _) => format!("create {path}"),
            ("delete", _) => format!("delete {path}"),
            (_, Some(to)) => format!("move {path} to {}", shown(to)),
            _ => format!("edit {path}"),
        };
        text.push_str("\n  ");
        text.push_str(&what);
        if change.added + change.removed > 0 {
            text.push_str(&format!(" (+{} −{})", change.added, change.removed));
        }
    }
    if !outside.is_empty() {
        text.push_str(&format!("\nOutside the workspace: {}", outside.join(", ")));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_question_lists_each_file_with_its_lines() {
        let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n\
                     *** Add File: ../new.txt\n+x\n+y\n*** Delete File: old.txt\n*** End Patch";
        let changes = crate::preprocess::changes(patch);
        let shown = |path: &str| match path {
            "a.txt" => "a.txt → src/a.txt".to_string(),
            other => other.to_string(),
        };
        assert_eq!(
            text(&changes, &shown, &["../new.txt".to_string()]),
            "Apply this patch? It changes 3 files:\n  edit a.txt → src/a.txt (+1 −1)\n  create \
             ../new.txt (+2 −0)\n  delete old.txt\nOutside the workspace: ../new.txt"
        );
    }
}
