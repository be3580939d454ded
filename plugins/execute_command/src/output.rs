//! A command's output, as Cline shapes it: split into lines, trimmed at the end, a trailing
//! prompt character removed from the last line; past 1000 lines or 512 KiB the whole output is
//! written to a file and only the first and last 100 lines are kept; and finally at most
//! `limit` lines (half from the start, half from the end) for the model.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

/// Lines seen before the output is written to a file instead.
pub const SPILL_LINES: usize = 1000;
/// Bytes seen before the output is written to a file instead.
pub const SPILL_BYTES: u64 = 512 * 1024;
/// Lines kept from the start and from the end of output written to a file.
pub const KEPT_LINES: usize = 100;
/// The default number of lines the model sees (Cline's `terminalOutputLineLimit`).
pub const DEFAULT_LINE_LIMIT: usize = 500;
/// A line longer than this is cut into pieces, so that output without newlines cannot exhaust
/// memory.
pub const MAX_LINE_BYTES: usize = 1024 * 1024;

/// Splits a byte stream into lines.
#[derive(Debug, Default)]
pub struct LineSplitter {
    partial: Vec<u8>,
}

impl LineSplitter {
    /// Adds bytes; returns the lines they complete, each trimmed at the end.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut lines = Vec::new();
        for &byte in bytes {
            if byte == b'\n' {
                lines.push(
                    decode(&std::mem::take(&mut self.partial))
                        .trim_end()
                        .to_string(),
                );
            } else {
                self.partial.push(byte);
                if self.partial.len() >= MAX_LINE_BYTES {
                    lines.push(decode(&std::mem::take(&mut self.partial)));
                }
            }
        }
        lines
    }

    /// The unfinished last line, if any: trimmed, and without a trailing prompt character
    /// (`%`, `$`, `#`, `>`), as Cline cleans it.
    pub fn finish(&mut self) -> Option<String> {
        let rest = decode(&std::mem::take(&mut self.partial));
        let mut lines: Vec<&str> = rest.trim_end().split('\n').collect();
        if let Some(last) = lines.last_mut() {
            let trimmed = last.trim_end();
            *last = match trimmed.chars().last() {
                Some('%' | '$' | '#' | '>') => &trimmed[..trimmed.len() - 1],
                _ => last,
            };
        }
        let cleaned = lines.join("\n").trim_end().to_string();
        (!cleaned.is_empty()).then_some(cleaned)
    }
}

fn decode(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Where large output went.
#[derive(Debug)]
struct Spill {
    path: PathBuf,
    file: Option<BufWriter<File>>,
}

/// Collects the lines of a run, writing them to a file once the output gets large.
#[derive(Debug, Default)]
pub struct Collector {
    /// Every line, or the first [`KEPT_LINES`] once spilled.
    head: Vec<String>,
    /// The last [`KEPT_LINES`] lines after the head, once spilled.
    tail: VecDeque<String>,
    total_lines: usize,
    bytes: u64,
    spill: Option<Spill>,
}

/// What a run printed, ready for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collected {
    /// The lines for the model (before the line limit).
    pub lines: Vec<String>,
    /// The file holding the whole output, when it was large.
    pub spill_path: Option<PathBuf>,
    /// How many lines there were in all.
    pub total_lines: usize,
}

impl Collector {
    /// Adds one line. Returns the notice for the user when this line makes the output large.
    pub fn push(&mut self, line: String) -> Option<String> {
        self.total_lines += 1;
        self.bytes += line.len() as u64 + 1;
        if let Some(spill) = &mut self.spill {
            write_line(&mut spill.file, &line);
            if self.head.len() < KEPT_LINES {
                self.head.push(line);
            } else {
                if self.tail.len() == KEPT_LINES {
                    self.tail.pop_front();
                }
                self.tail.push_back(line);
            }
            return None;
        }
        self.head.push(line);
        if self.total_lines >= SPILL_LINES || self.bytes >= SPILL_BYTES {
            return self.start_spill();
        }
        None
    }

    /// Whether the output is being written to a file.
    pub fn is_spilling(&self) -> bool {
        self.spill.is_some()
    }

    fn start_spill(&mut self) -> Option<String> {
        let created = tempfile::Builder::new()
            .prefix("large-output-")
            .suffix(".log")
            .tempfile()
            .and_then(|file| file.keep().map_err(|e| e.error));
        let (file, path) = match created {
            Ok((file, path)) => (Some(BufWriter::new(file)), path),
            // Without a file the summary still keeps the first and last lines.
            Err(_) => (
                None,
                std::env::temp_dir().join("large-output-unavailable.log"),
            ),
        };
        let mut spill = Spill { path, file };
        for line in &self.head {
            write_line(&mut spill.file, line);
        }
        let rest = self.head.split_off(KEPT_LINES.min(self.head.len()));
        let skip = rest.len().saturating_sub(KEPT_LINES);
        self.tail = rest.into_iter().skip(skip).collect();
        let notice = format!(
            "\n📋 Output is large ({} lines, {}KB). Writing to: {}",
            self.total_lines,
            (self.bytes as f64 / 1024.0).round() as u64,
            spill.path.display()
        );
        self.spill = Some(spill);
        Some(notice)
    }

    /// Ends the collection.
    pub fn finish(mut self) -> Collected {
        let Some(mut spill) = self.spill.take() else {
            return Collected {
                lines: self.head,
                spill_path: None,
                total_lines: self.total_lines,
            };
        };
        if let Some(file) = &mut spill.file {
            let _ = file.flush();
        }
        let skipped = self.total_lines - self.head.len() - self.tail.len();
        let mut lines = self.head;
        lines.push(format!(
            "\n... ({skipped} lines written to {}) ...\n",
            spill.path.display()
        ));
        lines.extend(self.tail);
        Collected {
            lines,
            spill_path: spill.file.is_some().then_some(spill.path),
            total_lines: self.total_lines,
        }
    }
}

fn write_line(file: &mut Option<BufWriter<File>>, line: &str) {
    if let Some(writer) = file {
        if writeln!(writer, "{line}").is_err() {
            *file = None;
        }
    }
}

/// Cline's `processOutput`: more than `limit` lines keep the first and last `limit / 2` around
/// a `... (output truncated) ...` line; the result is trimmed.
pub fn process_output(lines: &[String], limit: usize) -> String {
    if lines.len() > limit {
        let half = limit / 2;
        let start = lines[..half].join("\n");
        let end = lines[lines.len() - half..].join("\n");
        format!("{start}\n... (output truncated) ...\n{end}")
            .trim()
            .to_string()
    } else {
        lines.join("\n").trim().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn lines_are_split_and_cleaned() {
        let mut splitter = LineSplitter::default();
        assert_eq!(splitter.push(b"a  \r\nb"), ["a"]);
        assert_eq!(splitter.push(b"c\n\nd $ "), ["bc", ""]);
        assert_eq!(splitter.finish().as_deref(), Some("d"));
        assert_eq!(splitter.finish(), None);
        let mut splitter = LineSplitter::default();
        assert_eq!(
            splitter.push("é".as_bytes()[..1].as_ref()),
            Vec::<String>::new()
        );
        assert_eq!(splitter.push(&"é\n".as_bytes()[1..]), ["é"]);
    }

    #[test]
    fn long_lines_are_cut() {
        let mut splitter = LineSplitter::default();
        let lines = splitter.push(&vec![b'x'; MAX_LINE_BYTES + 5]);
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].len(), MAX_LINE_BYTES);
        assert_eq!(splitter.finish().map(|l| l.len()), Some(5));
    }

    #[test]
    fn the_line_limit_keeps_both_ends() {
        let lines: Vec<String> = (1..=7).map(|n| n.to_string()).collect();
        assert_eq!(process_output(&lines, 10), "1\n2\n3\n4\n5\n6\n7");
        assert_eq!(
            process_output(&lines, 4),
            "1\n2\n... (output truncated) ...\n6\n7"
        );
        assert_eq!(process_output(&lines, 0), "... (output truncated) ...");
        assert_eq!(process_output(&strings(&["", " a", ""]), 10), "a");
    }

    #[test]
    fn large_output_goes_to_a_file() {
        let mut collector = Collector::default();
        let mut notices = Vec::new();
        for n in 1..=1500 {
            notices.extend(collector.push(format!("line {n}")));
        }
        assert_eq!(notices.len(), 1);
        assert!(notices[0].starts_with("\n📋 Output is large (1000 lines, 9KB). Writing to: "));
        let collected = collector.finish();
        let path = collected.spill_path.clone().unwrap_or_default();
        let file = std::fs::read_to_string(&path).unwrap_or_default();
        let _ = std::fs::remove_file(&path);
        let expected: String = (1..=1500).map(|n| format!("line {n}\n")).collect();
        assert_eq!(file, expected);
        assert_eq!(collected.lines.len(), 201);
        assert_eq!(collected.lines[99], "line 100");
        assert_eq!(
            collected.lines[100],
            format!("\n... (1300 lines written to {}) ...\n", path.display())
        );
        assert_eq!(collected.lines[101], "line 1401");
        assert_eq!(collected.lines[200], "line 1500");
    }

    #[test]
    fn few_huge_lines_are_not_repeated() {
        let mut collector = Collector::default();
        for n in 0..3 {
            collector.push(format!("{n}{}", "x".repeat(200 * 1024)));
        }
        let collected = collector.finish();
        if let Some(path) = &collected.spill_path {
            let _ = std::fs::remove_file(path);
        }
        assert_eq!(collected.lines.len(), 4);
        assert!(collected.lines[3].starts_with("\n... (0 lines written to "));
    }
}
