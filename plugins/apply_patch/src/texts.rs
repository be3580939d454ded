//! Model-visible texts of the apply_patch tool (descriptions in our own words; result and error
//! formats as Cline's).

/// The tool's description.
pub const DESCRIPTION: &str = "\
Changes files with a patch in the V4A format: create, edit, delete and rename one or more files \
in a single call. The patch is applied all-or-nothing: when any part of it does not fit the \
files, nothing is changed and the error says why.

Layout:
*** Begin Patch
*** Add File: path/to/new_file
+each line of the new file, prefixed with +
*** Update File: path/to/file
*** Move to: path/to/renamed_file   (optional: renames the file)
@@ a line near the change, e.g. the enclosing function's signature   (optional)
 an unchanged line, prefixed with a space
-a line to remove
+a line to add
*** End of File   (optional: the hunk ends at the end of the file)
*** Delete File: path/to/old_file
*** End Patch

Every hunk of an update starts with @@ and shows the changed lines together with about three \
unchanged lines before and after them, copied exactly from the current file, so that the place \
can be found. Write an empty unchanged line as a single space. Paths are relative to the working \
directory.";

/// The `input` parameter's description.
pub const INPUT_PARAM: &str =
    "The whole patch, from *** Begin Patch to *** End Patch, in the format described above.";

/// The description that prefixes results.
pub const DESCRIBE: &str = "[apply_patch for patch application]";

/// The prefix of every failure (Cline's executor wraps thrown errors this way).
pub fn failed(message: &str) -> String {
    format!("Error executing apply_patch: {message}")
}
