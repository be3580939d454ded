//! The "Required Files" section of a summary, and reading those files for the next turn.

use std::sync::OnceLock;

use regex::Regex;
use tool_api::sdk::prelude::*;

/// At most this many distinct paths are looked at.
const MAX_FILES_PROCESSED: usize = 10;
/// At most this many files are attached.
const MAX_FILES_LOADED: usize = 8;
/// At most this many characters (UTF-16 code units, as JavaScript counts) are attached in all.
const MAX_CHARS: usize = 100_000;

/// Cline's pattern for the section. JavaScript's `.` stops at every line terminator, so `.` is
/// spelled out as "not \n, \r, U+2028 or U+2029".
fn section_pattern() -> Option<&'static Regex> {
    static PATTERN: OnceLock<Option<Regex>> = OnceLock::new();
    PATTERN
        .get_or_init(|| {
            Regex::new(
                r"9\.\s*(?:Optional\s+)?Required Files:\s*((?:\n\s*-\s*[^\n\r\u{2028}\u{2029}]+)+)",
            )
            .ok()
        })
        .as_ref()
}

fn item_pattern() -> Option<&'static Regex> {
    static PATTERN: OnceLock<Option<Regex>> = OnceLock::new();
    PATTERN
        .get_or_init(|| Regex::new(r"^\s*-\s*([^\n\r\u{2028}\u{2029}]+)$").ok())
        .as_ref()
}

/// The paths listed under `9. Required Files:` (or `9. Optional Required Files:`), trimmed, in
/// order. Cline's own summary prompt numbers that section 8, which this pattern (Cline's) does
/// not match; that quirk is kept so that the same summaries load the same files.
pub fn listed_paths(summary: &str) -> Vec<String> {
    let (Some(section_pattern), Some(item_pattern)) = (section_pattern(), item_pattern()) else {
        return Vec::new();
    };
    let Some(section) = section_pattern.captures(summary).and_then(|c| c.get(1)) else {
        return Vec::new();
    };
    section
        .as_str()
        .split('\n')
        .filter_map(|line| item_pattern.captures(line))
        .filter_map(|c| c.get(1))
        .map(|m| m.as_str().trim().to_string())
        .collect()
}

/// One attached file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedFile {
    /// The path as the summary listed it.
    pub display: String,
    /// Its text.
    pub text: String,
}

/// Reads the listed files Cline would attach: distinct paths (case-insensitively), not blocked by
/// `.clineignore`, readable without asking (the read auto-approval settings), text rather than
/// binary, within the count and size limits. Files that cannot be read are skipped.
pub fn load(paths: &[String], ctx: &Ctx<'_>) -> Vec<LoadedFile> {
    let read_files = ctx
        .setting::<bool>("auto_approve.read_files")
        .unwrap_or(true);
    let read_externally = ctx
        .setting::<bool>("auto_approve.read_files_externally")
        .unwrap_or(false);
    let mut seen = std::collections::HashSet::new();
    let mut loaded = Vec::new();
    let mut total_chars = 0;
    for path in paths {
        if !seen.insert(path.to_lowercase()) {
            continue;
        }
        if seen.len() > MAX_FILES_PROCESSED {
            break;
        }
        let Ok(verdict) = ctx.check_path(path) else {
            continue;
        };
        if verdict.ignored {
            continue;
        }
        let approved = read_files && (verdict.inside_workspace || read_externally);
        if !approved {
            continue;
        }
        let Some(text) = read_text(ctx, &verdict) else {
            ctx.log_debug(&format!("{path}: not a readable text file, not attached"));
            continue;
        };
        let chars = text.encode_utf16().count();
        if total_chars + chars > MAX_CHARS {
            break;
        }
        total_chars += chars;
        loaded.push(LoadedFile {
            display: path.clone(),
            text,
        });
        if loaded.len() >= MAX_FILES_LOADED {
            break;
        }
    }
    loaded
}

/// The largest file attached.
const MAX_FILE_BYTES: u64 = 20 << 20;

/// A file's text, reached through the workspace capability (so `.clineignore` holds for the
/// file really opened); `None` for what cannot be read or is binary (images included, as Cline
/// reads these files with images disallowed).
fn read_text(ctx: &Ctx<'_>, verdict: &PathVerdict) -> Option<String> {
    let bytes = ctx
        .workspace()
        .open_file(verdict)
        .and_then(|mut file| file.read_all(MAX_FILE_BYTES))
        .ok()?;
    if content_inspector::inspect(&bytes).is_binary() {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The text appended to the result for the attached files (empty when there are none).
pub fn attachment(files: &[LoadedFile]) -> String {
    if files.is_empty() {
        return String::new();
    }
    let names: Vec<String> = files.iter().map(|f| format!("'{}'", f.display)).collect();
    let mut text = format!(
        "\n\nThe following files were automatically read based on the files listed in the Required Files section: {} (see below for file content). These are the latest versions of these files - you should reference them directly and not re-read them:",
        names.join(", ")
    );
    for file in files {
        text.push_str(&format!(
            "\n\n<file_content path=\"{}\">\n{}\n</file_content>",
            file.display, file.text
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_is_found_only_under_number_nine() {
        let summary =
            "1. Primary Request:\n   x\n9. Required Files:\n  - src/a.rs\n  - b.txt  \n\nmore";
        assert_eq!(listed_paths(summary), ["src/a.rs", "b.txt"]);
        let optional = "9. Optional Required Files:\n- a\n- b";
        assert_eq!(listed_paths(optional), ["a", "b"]);
        let eight = "8. Optional Required Files:\n- a";
        assert_eq!(listed_paths(eight), Vec::<String>::new());
    }

    #[test]
    fn carriage_returns_end_the_list_as_in_javascript() {
        assert_eq!(listed_paths("9. Required Files:\r\n- a\r\n- b\r\n"), ["a"]);
    }

    #[test]
    fn attachments_name_every_file() {
        let files = [
            LoadedFile {
                display: "a.txt".into(),
                text: "A".into(),
            },
            LoadedFile {
                display: "b.txt".into(),
                text: "B".into(),
            },
        ];
        assert_eq!(
            attachment(&files),
            "\n\nThe following files were automatically read based on the files listed in the Required Files section: 'a.txt', 'b.txt' (see below for file content). These are the latest versions of these files - you should reference them directly and not re-read them:\n\n<file_content path=\"a.txt\">\nA\n</file_content>\n\n<file_content path=\"b.txt\">\nB\n</file_content>"
        );
        assert_eq!(attachment(&[]), "");
    }
}
