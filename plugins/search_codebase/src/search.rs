//! One query over the workspace, answered as Cline's SDK answers a search that shows its
//! matching lines: `Found N results for pattern: Q`, the number of files searched, then each
//! match as `file:line:column` with the two lines around it (`>` marking the match), at most
//! [`MAX_RESULTS`] of them, the whole cut in the middle past [`MAX_OUTPUT_CHARS`].
//!
//! The files are ripgrep's (the `ignore` crate's walk: `.gitignore`, `.ignore`, hidden files
//! skipped; files with a NUL byte in their first 8 KiB are binary and skipped), cut as Cline's
//! search cuts its file list ([`is_searched`]: source and text extensions, not below
//! `node_modules`, `target` and the like, at most 20 directories deep), in path order,
//! each opened beneath the workspace's directory handle without following a link, and
//! `.clineignore`d ones left out. Each line is searched on its own, case-insensitively, every
//! match of it a result with its own window of context (windows of near matches overlap, as in
//! Cline's answer), which is why the lines are scanned here rather than with grep-searcher,
//! whose context lines are shared between matches.

use std::path::Path;

use regex::{Regex, RegexBuilder};
use tool_api::workspace::{Dir, Workspace};

/// The most matches one query answers with (Cline's `maxResults`).
pub const MAX_RESULTS: usize = 100;

/// How many lines before and after a match are shown (Cline's `contextLines`).
const CONTEXT: usize = 2;

/// The most characters one query answers with (Cline's `MAX_SEARCH_OUTPUT_CHARS`).
pub const MAX_OUTPUT_CHARS: usize = 48_000;

/// The largest file searched.
const MAX_FILE_BYTES: u64 = 20 << 20;

/// How many leading bytes decide that a file is binary.
const BINARY_SNIFF: usize = 8192;

/// The extensions of the files searched (Cline's `DEFAULT_INCLUDE_EXTENSIONS`); a file without
/// one is searched too, unless its name starts with a dot.
const INCLUDE_EXTENSIONS: [&str; 40] = [
    "ts",
    "tsx",
    "js",
    "jsx",
    "mjs",
    "cjs",
    "json",
    "md",
    "mdx",
    "txt",
    "yaml",
    "yml",
    "toml",
    "py",
    "rb",
    "go",
    "rs",
    "java",
    "kt",
    "swift",
    "c",
    "cpp",
    "h",
    "hpp",
    "css",
    "scss",
    "less",
    "html",
    "vue",
    "svelte",
    "sql",
    "sh",
    "bash",
    "zsh",
    "fish",
    "ps1",
    "env",
    "gitignore",
    "dockerignore",
    "editorconfig",
];

/// Directories never searched below (Cline's `DEFAULT_EXCLUDE_DIRS`).
const EXCLUDE_DIRS: [&str; 16] = [
    "node_modules",
    ".git",
    "dist",
    "build",
    ".next",
    "coverage",
    "__pycache__",
    ".venv",
    "venv",
    ".cache",
    ".turbo",
    ".output",
    "out",
    "target",
    "bin",
    "obj",
];

/// The deepest directory searched in (Cline's `maxDepth`).
const MAX_DEPTH: usize = 20;

/// Whether the file at `relative` (to the root) is searched, as Cline's `shouldIncludeFile`
/// decides: not too deep, below no excluded directory, and with an included extension (as
/// Node's `extname` reads it: a leading dot starts no extension) or none.
pub fn is_searched(relative: &Path) -> bool {
    let segments: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let Some((name, dirs)) = segments.split_last() else {
        return false;
    };
    if dirs.len() > MAX_DEPTH || dirs.iter().any(|d| EXCLUDE_DIRS.contains(&d.as_str())) {
        return false;
    }
    let extension = match name.rfind('.') {
        Some(at) if at > 0 => name[at + 1..].to_lowercase(),
        _ => String::new(),
    };
    if extension.is_empty() {
        return !name.starts_with('.');
    }
    INCLUDE_EXTENSIONS.contains(&extension.as_str())
}

/// The regex of a query, as Cline's search compiles it (case-insensitive, `^`/`$` at lines).
pub fn compile(query: &str) -> Result<Regex, String> {
    RegexBuilder::new(query)
        .case_insensitive(true)
        .multi_line(true)
        .build()
        .map_err(|e| format!("Invalid regex pattern: {query}. {e}"))
}

/// One match: where, and the lines around it.
struct Found {
    file: String,
    line: usize,
    column: usize,
    context: Vec<String>,
}

/// Searches the workspace's primary root for `regex`; `allowed` says whether a file (by its
/// path relative to the root) may be read (`.clineignore`), `cancelled` whether to stop.
pub fn search(
    workspace: &Workspace,
    query: &str,
    regex: &Regex,
    allowed: &dyn Fn(&Path) -> bool,
    cancelled: &dyn Fn() -> bool,
) -> Result<String, String> {
    let root = workspace.root_path(0).to_path_buf();
    let verdict = workspace.verdict(&root.display().to_string());
    let dir = workspace
        .open_dir(&verdict)
        .map_err(|e| format!("cannot search the workspace: {e}"))?;
    let mut found = Vec::new();
    let mut searched = 0usize;
    // The walk does not go where no file would be searched.
    let walk = ignore::WalkBuilder::new(&root)
        .sort_by_file_name(|a, b| a.cmp(b))
        .max_depth(Some(MAX_DEPTH + 1))
        .filter_entry(|entry| {
            let excluded = entry.depth() > 0
                && entry.file_type().is_some_and(|t| t.is_dir())
                && EXCLUDE_DIRS.contains(&entry.file_name().to_string_lossy().as_ref());
            !excluded
        })
        .build();
    for entry in walk.flatten() {
        if found.len() >= MAX_RESULTS {
            break;
        }
        if cancelled() {
            return Err("Search operation aborted".to_string());
        }
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(&root) else {
            continue;
        };
        if !is_searched(relative) || !allowed(relative) {
            continue;
        }
        let Some(text) = read_text(&dir, relative) else {
            continue;
        };
        searched += 1;
        let shown = relative.to_string_lossy().replace('\\', "/");
        scan(&shown, &text, regex, &mut found);
    }
    found.truncate(MAX_RESULTS);
    Ok(answer(query, searched, &found))
}

/// A file's text, unless it cannot be read, is too large or is binary.
fn read_text(dir: &Dir<'_>, relative: &Path) -> Option<String> {
    let mut file = dir.open_file(relative).ok()?;
    let bytes = file.read_all(MAX_FILE_BYTES).ok()?;
    if bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0) {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Every match of every line of `text`, with its window of context, until there are
/// [`MAX_RESULTS`].
fn scan(file: &str, text: &str, regex: &Regex, found: &mut Vec<Found>) {
    let lines: Vec<&str> = text.split('\n').collect();
    for (index, line) in lines.iter().enumerate() {
        for hit in regex.find_iter(line) {
            if found.len() >= MAX_RESULTS {
                return;
            }
            let first = index.saturating_sub(CONTEXT);
            let last = (index + CONTEXT).min(lines.len() - 1);
            let context = (first..=last)
                .map(|i| {
                    let marker = if i == index { '>' } else { ' ' };
                    format!("{marker} {}: {}", i + 1, lines[i])
                })
                .collect();
            found.push(Found {
                file: file.to_string(),
                line: index + 1,
                column: line[..hit.start()].encode_utf16().count() + 1,
                context,
            });
        }
    }
}

/// The answer to one query.
fn answer(query: &str, searched: usize, found: &[Found]) -> String {
    if found.is_empty() {
        return format!("No results found for pattern: {query}\nSearched {searched} files.");
    }
    let count = found.len();
    let plural = if count == 1 { "" } else { "s" };
    let mut lines = vec![
        format!("Found {count} result{plural} for pattern: {query}"),
        format!("Searched {searched} files."),
        String::new(),
    ];
    for hit in found {
        lines.push(format!("{}:{}:{}", hit.file, hit.line, hit.column));
        lines.extend(hit.context.iter().cloned());
        lines.push(String::new());
    }
    if count >= MAX_RESULTS {
        lines.push(format!(
            "(Showing first {MAX_RESULTS} results. Refine your search for more specific results.)"
        ));
    }
    cap(lines.join("\n"))
}

/// `text` cut in the middle past [`MAX_OUTPUT_CHARS`], saying how long it was.
fn cap(text: String) -> String {
    let length = text.encode_utf16().count();
    if length <= MAX_OUTPUT_CHARS {
        return text;
    }
    let half = MAX_OUTPUT_CHARS / 2;
    let chars: Vec<char> = text.chars().collect();
    let head: String = chars[..half].iter().collect();
    let tail: String = chars[chars.len() - half..].iter().collect();
    format!(
        "{head}\n[... search output truncated: {length} chars total. Narrow the pattern or scope \
         to view the elided matches ...]\n{tail}"
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_files_searched_are_cline_s() {
        let searched = |path: &str| is_searched(Path::new(path));
        for path in [
            "src/app.ts",
            "README.TXT",
            "Makefile",
            "a/b.Rs",
            "x.env",
            "name.",
        ] {
            assert!(searched(path), "{path}");
        }
        for path in [
            "node_modules/p/index.js",
            "src/target/x.rs",
            "image.png",
            ".gitignore",
            ".env",
            "data.bin",
        ] {
            assert!(!searched(path), "{path}");
        }
        let deep = format!("{}f.txt", "d/".repeat(MAX_DEPTH));
        let deeper = format!("{}f.txt", "d/".repeat(MAX_DEPTH + 1));
        assert!(searched(&deep) && !searched(&deeper));
    }

    #[test]
    fn matches_come_with_their_windows_in_path_order() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("src")).unwrap();
        std::fs::write(
            root.path().join("src/app.ts"),
            "import foo from \"x\";\nconst a = 1;\nfunction handleClick() {\n  return foo;\n}\n",
        )
        .unwrap();
        std::fs::write(root.path().join("b.txt"), "nothing here\n").unwrap();
        std::fs::write(root.path().join("bin.dat"), b"handleclick\0").unwrap();
        let workspace = Workspace::new(root.path()).unwrap();
        let regex = compile("HANDLECLICK").unwrap();
        let out = search(&workspace, "HANDLECLICK", &regex, &|_| true, &|| false).unwrap();
        assert_eq!(
            out,
            "Found 1 result for pattern: HANDLECLICK\nSearched 2 files.\n\nsrc/app.ts:3:10\n  1: import foo from \"x\";\n  2: const a = 1;\n> 3: function handleClick() {\n  4:   return foo;\n  5: }\n"
        );
        let none = search(
            &workspace,
            "zzz",
            &compile("zzz").unwrap(),
            &|_| true,
            &|| false,
        )
        .unwrap();
        assert_eq!(none, "No results found for pattern: zzz\nSearched 2 files.");
        let hidden = search(
            &workspace,
            "x",
            &compile("handle").unwrap(),
            &|p| !p.starts_with("src"),
            &|| false,
        )
        .unwrap();
        assert!(hidden.starts_with("No results found"), "{hidden}");
        assert!(compile("([bad")
            .unwrap_err()
            .starts_with("Invalid regex pattern: ([bad. "));
    }
}
