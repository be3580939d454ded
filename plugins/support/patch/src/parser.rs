//! The V4A parser: the patch's lines and the current text of the files it updates or deletes
//! give the actions, with every hunk already placed in its file.
//!
//! Termination: every loop iteration either consumes a line or leaves its loop, so the parser
//! takes at most a few steps per line. It also counts its steps against a budget proportional to
//! the input; should a change ever break that property, the input fails with an error instead
//! of looping (Cline's parser loops forever on some inputs, e.g. a blank line right after
//! `*** Update File:`).
//!
//! Deliberate differences from Cline, all about inputs it refuses, hangs on or half-applies:
//! - blank lines: leading and trailing blank lines of a hunk and blank lines between file
//!   sections are separators; blank lines inside a hunk are empty context lines (Cline ends the
//!   hunk there, then throws `Invalid Line:` or loops forever);
//! - a hunk whose context cannot be found fails the patch (Cline skips it with a warning the
//!   model never sees), and so does a hunk with no context lines whose `@@` line is not found;
//! - `***` or `@@x` where a hunk should start is `Invalid Line:` (Cline loops forever at the
//!   start of a file);
//! - a second `*** Begin Patch` block after `*** End Patch` is parsed too (Cline ignores it).

use std::collections::HashMap;

use crate::error::PatchError;
use crate::js;
use crate::matching::{canonicalize, find_context, FileLines};
use crate::preprocess::{ADD, BEGIN, DELETE, END, END_OF_FILE, MOVE, SECTION, UPDATE};

/// One change inside a file: at line `orig_index`, `del_lines` are replaced by `ins_lines`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The 0-based index of the first file line the change replaces (or inserts before).
    pub orig_index: usize,
    /// The lines removed (as the patch gives them).
    pub del_lines: Vec<String>,
    /// The lines inserted.
    pub ins_lines: Vec<String>,
}

/// What the patch does to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Create the file with this content.
    Add {
        /// The new file's content (the `+` lines joined with `\n`, no final newline).
        content: String,
    },
    /// Delete the file.
    Delete,
    /// Change the file, and possibly move it.
    Update {
        /// The placed changes, in file order.
        chunks: Vec<Chunk>,
        /// `*** Move to:` destination.
        move_to: Option<String>,
    },
}

/// A parsed patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The actions by path, in the order of the patch.
    pub actions: Vec<(String, Action)>,
    /// The sum of the fuzz of every placement (0 when everything matched exactly).
    pub fuzz: u64,
}

/// Parses preprocessed patch lines. `files` holds the LF-normalised text of every file the
/// patch updates or deletes, by the path as written in the patch. `cancelled` is polled during
/// slow matching.
pub fn parse(
    lines: &[String],
    files: &HashMap<String, String>,
    cancelled: &dyn Fn() -> bool,
) -> Result<Parsed, PatchError> {
    let mut parser = Parser {
        lines,
        pos: 0,
        files,
        cancelled,
        actions: Vec::new(),
        fuzz: 0,
        steps: 0,
        budget: 3 * lines.len() + 8,
    };
    parser.run()?;
    Ok(Parsed {
        actions: parser.actions,
        fuzz: parser.fuzz,
    })
}

/// The message of the step budget: reaching it means a parser bug, never a bad patch.
pub const NO_PROGRESS: &str = "The patch parser stopped making progress";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Keep,
    Add,
    Delete,
}

/// A hunk's lines: the context to find (kept and deleted lines, in order), the changes relative
/// to it, and whether it is anchored at the end of the file.
struct Body {
    context: Vec<String>,
    chunks: Vec<Chunk>,
    eof: bool,
}

struct Parser<'a> {
    lines: &'a [String],
    pos: usize,
    files: &'a HashMap<String, String>,
    cancelled: &'a dyn Fn() -> bool,
    actions: Vec<(String, Action)>,
    fuzz: u64,
    steps: usize,
    budget: usize,
}

/// Whether a line starts a new file section or ends the patch (markers without their trailing
/// space, as Cline compares them).
fn is_section_marker(line: &str) -> bool {
    [END, UPDATE, DELETE, ADD]
        .iter()
        .any(|marker| line.starts_with(marker.trim_end()))
}

/// Whether a line ends an update section.
fn ends_update(line: &str) -> bool {
    is_section_marker(line) || line.starts_with(END_OF_FILE)
}

/// Whether a line ends a hunk's body.
fn ends_hunk(line: &str) -> bool {
    ends_update(line) || line.starts_with(SECTION) || line == "***"
}

impl<'a> Parser<'a> {
    fn line(&self) -> Option<&'a str> {
        self.lines.get(self.pos).map(String::as_str)
    }

    /// The index of the first non-empty line at or after `from`.
    fn next_non_blank(&self, from: usize) -> Option<usize> {
        (from..self.lines.len()).find(|&i| !self.lines[i].is_empty())
    }

    /// One step of any loop; fails once the budget is spent.
    fn step(&mut self) -> Result<(), PatchError> {
        self.steps += 1;
        if self.steps > self.budget {
            return Err(PatchError::new(format!(
                "{NO_PROGRESS} at line {}. No file was changed.",
                self.pos + 1
            )));
        }
        Ok(())
    }

    fn run(&mut self) -> Result<(), PatchError> {
        if self.line().is_some_and(|l| l.starts_with(BEGIN)) {
            self.pos += 1;
        }
        loop {
            self.step()?;
            let Some(line) = self.line() else {
                return Ok(());
            };
            if line.is_empty() {
                self.pos += 1;
            } else if line.starts_with(END) {
                match self.next_non_blank(self.pos + 1) {
                    Some(next) if self.lines[next].starts_with(BEGIN) => self.pos = next + 1,
                    _ => return Ok(()),
                }
            } else if let Some(rest) = line.strip_prefix(UPDATE) {
                self.parse_update(js::trim(rest))?;
            } else if let Some(rest) = line.strip_prefix(DELETE) {
                self.parse_delete(js::trim(rest))?;
            } else if let Some(rest) = line.strip_prefix(ADD) {
                self.parse_add(js::trim(rest))?;
            } else {
                return Err(PatchError::new(format!(
                    "Unknown line while parsing: {line}"
                )));
            }
        }
    }

    fn check_duplicate(&self, path: &str, operation: &str) -> Result<(), PatchError> {
        if self.actions.iter().any(|(p, _)| p == path) {
            return Err(PatchError::new(format!(
                "Duplicate {operation} for file: {path}"
            )));
        }
        Ok(())
    }

    fn parse_delete(&mut self, path: &str) -> Result<(), PatchError> {
        self.check_duplicate(path, "delete")?;
        if !self.files.contains_key(path) {
            return Err(PatchError::new(format!(
                "Delete File Error: Missing File: {path}"
            )));
        }
        self.actions.push((path.to_string(), Action::Delete));
        self.pos += 1;
        Ok(())
    }

    fn parse_add(&mut self, path: &str) -> Result<(), PatchError> {
        self.check_duplicate(path, "add")?;
        if self.files.contains_key(path) {
            return Err(PatchError::new(format!(
                "Add File Error: File already exists: {path}"
            )));
        }
        self.pos += 1;
        let mut content = Vec::new();
        loop {
            self.step()?;
            let Some(line) = self.line() else { break };
            if is_section_marker(line) {
                break;
            }
            if line.is_empty() {
                // Blank lines before the next section separate; anywhere else they are the
                // model's mistake, as in Cline.
                match self.next_non_blank(self.pos) {
                    None => {
                        self.pos = self.lines.len();
                        break;
                    }
                    Some(next) if is_section_marker(&self.lines[next]) => {
                        self.pos = next;
                        break;
                    }
                    Some(_) => {}
                }
            }
            let Some(text) = line.strip_prefix('+') else {
                return Err(PatchError::new(format!(
                    "Invalid Add File line (missing '+'): {line}"
                )));
            };
            content.push(text);
            self.pos += 1;
        }
        self.actions.push((
            path.to_string(),
            Action::Add {
                content: content.join("\n"),
            },
        ));
        Ok(())
    }

    fn parse_update(&mut self, path: &str) -> Result<(), PatchError> {
        self.check_duplicate(path, "update")?;
        self.pos += 1;
        let move_to = match self.line() {
            Some(line) if line.starts_with(MOVE) => {
                self.pos += 1;
                Some(js::trim(&line[MOVE.len()..]).to_string())
            }
            _ => None,
        };
        let Some(text) = self.files.get(path) else {
            return Err(PatchError::new(format!(
                "Update File Error: Missing File: {path}"
            )));
        };
        let file = FileLines::new(text);
        let chunks = self.parse_hunks(path, &file)?;
        self.actions
            .push((path.to_string(), Action::Update { chunks, move_to }));
        Ok(())
    }

    /// The hunks of one update section, each placed in the file.
    fn parse_hunks(&mut self, path: &str, file: &FileLines) -> Result<Vec<Chunk>, PatchError> {
        let mut chunks = Vec::new();
        let mut file_pos = 0;
        let mut number = 0;
        loop {
            self.step()?;
            while self.line() == Some("") {
                self.pos += 1;
            }
            let Some(line) = self.line() else { break };
            if ends_update(line) {
                break;
            }
            let start = self.pos;
            let mut anchor = None;
            if let Some(text) = line.strip_prefix("@@ ") {
                anchor = Some(text);
                self.pos += 1;
            } else if line == SECTION {
                self.pos += 1;
            } else if file_pos != 0 || line == "***" || line.starts_with(SECTION) {
                return Err(PatchError::new(format!("Invalid Line:\n{line}")));
            }
            number += 1;
            let anchor_missing = match anchor {
                Some(text) => !self.seek_anchor(text, file, &mut file_pos),
                None => false,
            };
            let body = self.read_body()?;
            if self.pos == start {
                return Err(PatchError::new(format!("Invalid Line:\n{line}")));
            }
            if anchor_missing && body.context.is_empty() && !body.chunks.is_empty() {
                return Err(PatchError::new(format!(
                    "{path}: hunk {number} cannot be placed: its line '@@ {}' is not in the file \
                     and the hunk has no context lines. No file was changed.",
                    anchor.unwrap_or_default()
                )));
            }
            let Some(found) = find_context(file, &body.context, file_pos, body.eof, self.cancelled)
            else {
                return Err(PatchError::new(unplaceable(path, number, &body.context)));
            };
            self.fuzz += found.fuzz;
            chunks.extend(body.chunks.into_iter().map(|chunk| Chunk {
                orig_index: chunk.orig_index + found.index,
                ..chunk
            }));
            file_pos = found.index + body.context.len();
        }
        Ok(chunks)
    }

    /// Moves `file_pos` past the first line from `file_pos` on that equals the `@@` text (after
    /// canonicalisation, or after trimming too, which costs one fuzz). Returns whether it was
    /// found; an empty text is not searched for.
    fn seek_anchor(&mut self, text: &str, file: &FileLines, file_pos: &mut usize) -> bool {
        let trimmed = js::trim(text);
        if trimmed.is_empty() {
            return true;
        }
        let wanted = canonicalize(trimmed);
        for (i, line) in file.raw.iter().enumerate().skip(*file_pos) {
            if line.is_empty() {
                continue;
            }
            let exact = canonicalize(line) == wanted;
            if exact || canonicalize(js::trim(line)) == wanted {
                *file_pos = i + 1;
                if !exact {
                    self.fuzz += 1;
                }
                return true;
            }
        }
        false
    }

    /// Reads a hunk's lines up to the next hunk, section or end-of-file marker (Cline's `peek`).
    fn read_body(&mut self) -> Result<Body, PatchError> {
        let mut context = Vec::new();
        let mut chunks = Vec::new();
        let mut del_lines = Vec::new();
        let mut ins_lines = Vec::new();
        let mut mode = Mode::Keep;
        let mut seen_line = false;
        loop {
            self.step()?;
            let Some(line) = self.line() else { break };
            let (run, texts): (usize, Vec<(Mode, &str)>) = if line.is_empty() {
                let next = self.next_non_blank(self.pos);
                let run_end = next.unwrap_or(self.lines.len());
                match next {
                    _ if !seen_line => {
                        self.pos = run_end;
                        continue;
                    }
                    None => break,
                    Some(next) if ends_hunk(&self.lines[next]) => {
                        if self.lines[next] == END_OF_FILE {
                            self.pos = next;
                        }
                        break;
                    }
                    Some(_) => (
                        run_end - self.pos,
                        vec![(Mode::Keep, ""); run_end - self.pos],
                    ),
                }
            } else if ends_hunk(line) {
                break;
            } else if line.starts_with("***") {
                return Err(PatchError::new(format!("Invalid line: {line}")));
            } else {
                (1, vec![classify(line)])
            };
            self.pos += run;
            seen_line = true;
            for (line_mode, text) in texts {
                let last_mode = mode;
                mode = line_mode;
                if mode == Mode::Keep && last_mode != Mode::Keep {
                    flush(&context, &mut del_lines, &mut ins_lines, &mut chunks);
                }
                match mode {
                    Mode::Delete => {
                        del_lines.push(text.to_string());
                        context.push(text.to_string());
                    }
                    Mode::Add => ins_lines.push(text.to_string()),
                    Mode::Keep => context.push(text.to_string()),
                }
            }
        }
        flush(&context, &mut del_lines, &mut ins_lines, &mut chunks);
        let eof = self.line() == Some(END_OF_FILE);
        if eof {
            self.pos += 1;
        }
        Ok(Body {
            context,
            chunks,
            eof,
        })
    }
}

/// A hunk line's kind and text: `+`, `-` and ` ` prefixes, anything else is context as it is
/// (Cline tolerates a missing leading space).
fn classify(line: &str) -> (Mode, &str) {
    match line.as_bytes().first() {
        Some(b'+') => (Mode::Add, &line[1..]),
        Some(b'-') => (Mode::Delete, &line[1..]),
        Some(b' ') => (Mode::Keep, &line[1..]),
        _ => (Mode::Keep, line),
    }
}

/// Closes the pending change, if any, as a chunk placed relative to the hunk's context.
fn flush(
    context: &[String],
    del_lines: &mut Vec<String>,
    ins_lines: &mut Vec<String>,
    chunks: &mut Vec<Chunk>,
) {
    if !del_lines.is_empty() || !ins_lines.is_empty() {
        chunks.push(Chunk {
            orig_index: context.len() - del_lines.len(),
            del_lines: std::mem::take(del_lines),
            ins_lines: std::mem::take(ins_lines),
        });
    }
    del_lines.clear();
    ins_lines.clear();
}

/// The error for a hunk whose context is not in the file.
fn unplaceable(path: &str, number: usize, context: &[String]) -> String {
    let text = context.join("\n");
    // Like Cline's warning, the context is cut after 200 characters.
    let shown = match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text,
    };
    format!(
        "{path}: hunk {number} does not match the file; these lines were not found:\n{shown}\n\
         No file was changed. Read the file again and copy the context lines exactly."
    )
}

#[cfg(test)]
#[path = "parser_tests.rs"]
mod tests;
