//! Model-visible texts: tool descriptions, results and error help.
//!
//! The structure of the results follows Cline's (models are tuned to the tags and the order of
//! the parts); the prose is written for this port.

/// The description of `write_to_file`.
pub const WRITE_TO_FILE_DESCRIPTION: &str = "Write a file: create it, or replace everything in \
it, with the given content. Missing parent directories are created. The content becomes the \
whole file, so always give it complete: never leave parts out or write placeholders such as \
'// rest of the file unchanged'. To change some parts of an existing file, replace_in_file is \
usually the better tool; use write_to_file for new files and for rewrites of most of a file.";

/// The description of `replace_in_file`.
pub const REPLACE_IN_FILE_DESCRIPTION: &str = "Edit parts of an existing file with SEARCH/REPLACE \
blocks. Each block names text that is in the file and the text to put in its place:

------- SEARCH
[lines copied exactly from the file]
=======
[the lines that replace them]
+++++++ REPLACE

Rules:
1. SEARCH text must match the file exactly, character for character, including whitespace, \
indentation, comments and line endings. Copy whole lines; do not abbreviate.
2. A block replaces only the first match after the previous block's match. Order blocks as \
their text appears in the file, with just enough lines to make each match unique.
3. Keep blocks small: a few changed lines with a little context. Use several blocks rather than \
one large one; never repeat the whole file.
4. To delete code, leave the REPLACE part empty. To move code, use one block to delete it and \
another to insert it at its new place.
5. Each marker goes on a line of its own, exactly as shown.
With a path to a file that does not exist yet, a block with an empty SEARCH part creates it.";

/// The description of `new_rule`.
pub const NEW_RULE_DESCRIPTION: &str = "Write a rule file: guidance that is given to you in \
later tasks in this workspace, such as coding conventions, project structure or preferred \
workflows. Rules are Markdown files in the .clinerules/ directory at the top of the workspace \
(it is created if missing), with a short hyphenated name, for example \
'.clinerules/testing-conventions.md'. Start with a '## Brief overview' section, then add \
sections for the specific guidance. The file is written exactly at the given path, as with \
write_to_file: the tool does not move it into .clinerules/ itself. The content must not be empty.";

/// The description of the `path` parameter.
pub const PATH_PARAM: &str =
    "The path of the file, relative to the current working directory (or absolute).";

/// The description of `write_to_file`'s `content` parameter.
pub const CONTENT_PARAM: &str = "The complete content of the file, without any part left out. \
May be empty to create an empty file.";

/// The description of `new_rule`'s `content` parameter.
pub const RULE_CONTENT_PARAM: &str = "The complete Markdown content of the rule file.";

/// The description of the `diff` parameter.
pub const DIFF_PARAM: &str = "One or more SEARCH/REPLACE blocks, in the order their SEARCH text \
appears in the file: '------- SEARCH', the exact lines to find, '=======', the replacement \
lines, '+++++++ REPLACE'.";

/// The help for a `replace_in_file` call whose `diff` is empty.
///
/// The example uses the legacy markers, as Cline's does; the matcher accepts both kinds.
pub fn missing_diff_help(rel_path: &str) -> String {
    format!(
        "Failed to edit '{rel_path}': The 'diff' parameter was empty.\n\n\
The diff parameter has to hold one or more SEARCH/REPLACE blocks like this one:\n\
<<<<<<< SEARCH\n\
lines copied exactly from the file\n\
=======\n\
the lines to put in their place\n\
>>>>>>> REPLACE\n\n\
Rules:\n\
- The SEARCH part must match the file's content exactly, whitespace and indentation included\n\
- One diff parameter may hold several SEARCH/REPLACE blocks\n\
- If you are not sure what the file contains, read it with read_file first"
    )
}

/// The error for a final `replace_in_file` diff that applies no SEARCH/REPLACE block: either it
/// has no SEARCH marker at all (`has_markers` false) or none of its blocks is complete. Cline
/// saved the file unchanged and reported success.
pub fn no_block_error(rel_path: &str, has_markers: bool) -> String {
    let what = if has_markers {
        "The diff has no complete SEARCH/REPLACE block: a '------- SEARCH' marker needs the lines \
to find, a '=======' line, the replacement lines and a '+++++++ REPLACE' line"
    } else {
        "The diff contains no SEARCH/REPLACE block: no line of it is a '------- SEARCH' marker"
    };
    format!(
        "{what}, so '{rel_path}' was not changed.\n\n\
A valid diff holds one or more blocks like this one, each marker on a line of its own:\n\
------- SEARCH\n\
lines copied exactly from the file\n\
=======\n\
the lines to put in their place\n\
+++++++ REPLACE\n\n\
To replace the whole file, use write_to_file instead."
    )
}

/// The help that follows a SEARCH/REPLACE failure: why it probably failed, the file's current
/// content, and how to retry.
pub fn diff_error(rel_path: &str, original: &str) -> String {
    format!(
        "This usually means the SEARCH text is not an exact copy of lines in the file, or that \
several SEARCH/REPLACE blocks were not given in the order their text appears in the file. Also \
keep the markers exactly as specified: do not add or change characters in them, and end every \
block with the +++++++ REPLACE marker.\n\n\
The file was reverted to its original state:\n\n\
<file_content path=\"{rel_path}\">\n{original}\n</file_content>\n\n\
With the current content of the file above, try the edit again with fewer SEARCH blocks that \
copy the file's lines precisely. In a large file, send fewer than 5 blocks per call and wait for \
the result before making further edits with another replace_in_file call.\n\
(If this error happens 3 times in a row, you may use write_to_file instead.)"
    )
}

/// The result of a successful save. `final_content` is the saved file in its normalised form.
pub fn saved(rel_path: &str, final_content: &str) -> String {
    format!(
        "The content was successfully saved to {rel_path}.\n\n\
Here is the full, updated content of the file that was saved:\n\n\
<final_file_content path=\"{rel_path}\">\n{final_content}\n</final_file_content>\n\n\
IMPORTANT: Use the final_file_content above as the reference for any further change to this \
file. It is the file as it now is on disk, so base every future SEARCH block on it rather than \
on what you wrote earlier.\n\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_text_has_clines_structure() {
        assert_eq!(
            saved("src/a.ts", "x\n"),
            "The content was successfully saved to src/a.ts.\n\n\
Here is the full, updated content of the file that was saved:\n\n\
<final_file_content path=\"src/a.ts\">\nx\n\n</final_file_content>\n\n\
IMPORTANT: Use the final_file_content above as the reference for any further change to this \
file. It is the file as it now is on disk, so base every future SEARCH block on it rather than \
on what you wrote earlier.\n\n"
        );
    }

    #[test]
    fn diff_error_shows_the_file_as_it_is() {
        let text = diff_error("a.txt", "one\ntwo");
        let (_, after) = text
            .split_once("The file was reverted to its original state:\n\n")
            .unwrap_or_default();
        let (block, _) = after.split_once("\n\nWith the current").unwrap_or_default();
        assert_eq!(
            block,
            "<file_content path=\"a.txt\">\none\ntwo\n</file_content>"
        );
    }

    #[test]
    fn missing_diff_help_names_the_file() {
        let help = missing_diff_help("b.rs");
        assert_eq!(
            help.split("\n\n").next(),
            Some("Failed to edit 'b.rs': The 'diff' parameter was empty.")
        );
    }
}
