//! The texts both apply_patch tools share (in our own words; Cline's formats are the plugins').

/// The error for a patch that names no file to add, update or delete (Cline reported success).
pub const NO_ACTIONS: &str = "The patch contains no file operations, so nothing was changed. \
Each file to change needs a section of its own between the sentinels, for example:
*** Begin Patch
*** Update File: path/to/file
@@
 an unchanged line
-a line to remove
+a line to add
*** End Patch
(or `*** Add File: path` followed by `+` lines, or `*** Delete File: path`).";

/// The error for a path `.clineignore` blocks.
pub fn access_denied(path: &str) -> String {
    format!("Access denied: {path}")
}

/// The result when the user refuses a file.
pub const PATCH_DENIED: &str = "The user denied this patch operation.";

/// The result of a call cancelled before anything was written.
pub const CANCELLED: &str =
    "The patch was not applied: the call was cancelled. No file was changed.";
