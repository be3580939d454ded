//! The lines of a run kept for the model, as Cline keeps them: every line until the output is
//! large (1000 lines or 512 KiB), then only the first and last 100 lines, around a line saying
//! how many went to the log. Beyond Cline, the two ends are bounded in bytes too, so that long
//! lines cannot make them large: once the output is large, each holds at most `window` bytes
//! (and a line).

use std::collections::VecDeque;
use std::path::Path;

use crate::output::{KEPT_LINES, SPILL_BYTES, SPILL_LINES};

/// What the output was when it became large.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Large {
    /// Lines so far.
    pub lines: usize,
    /// Bytes so far (of the trimmed lines and their newlines).
    pub bytes: u64,
}

/// Collects the lines of a run.
#[derive(Debug)]
pub struct Collector {
    /// Bytes each end may hold once the output is large.
    window: usize,
    /// Every line, or the first ones once the output is large.
    head: Vec<String>,
    head_bytes: usize,
    /// The last lines after the head, once the output is large.
    tail: VecDeque<String>,
    tail_bytes: usize,
    total_lines: usize,
    bytes: u64,
    large: bool,
}

impl Collector {
    /// A collector whose ends hold at most `window` bytes each (at least Cline's 512 KiB, so
    /// that its 100 lines are kept whole where they are short).
    pub fn new(window: usize) -> Self {
        Self {
            window: window.max(SPILL_BYTES as usize),
            head: Vec::new(),
            head_bytes: 0,
            tail: VecDeque::new(),
            tail_bytes: 0,
            total_lines: 0,
            bytes: 0,
            large: false,
        }
    }

    /// Adds one line. Returns what the output was when this line made it large.
    pub fn push(&mut self, line: String) -> Option<Large> {
        self.total_lines += 1;
        self.bytes += line.len() as u64 + 1;
        if !self.large {
            self.head_bytes += line.len();
            self.head.push(line);
            if self.total_lines >= SPILL_LINES || self.bytes >= SPILL_BYTES {
                self.become_large();
                return Some(Large {
                    lines: self.total_lines,
                    bytes: self.bytes,
                });
            }
            return None;
        }
        if self.head.len() < KEPT_LINES && self.head_bytes < self.window {
            self.head_bytes += line.len();
            self.head.push(line);
        } else {
            self.push_tail(line);
        }
        None
    }

    /// Whether the output is large.
    pub fn is_large(&self) -> bool {
        self.large
    }

    fn become_large(&mut self) {
        self.large = true;
        let rest = self.head.split_off(KEPT_LINES.min(self.head.len()));
        self.head_bytes = self.head.iter().map(String::len).sum();
        for line in rest {
            self.push_tail(line);
        }
    }

    fn push_tail(&mut self, line: String) {
        self.tail_bytes += line.len();
        self.tail.push_back(line);
        while self.tail.len() > KEPT_LINES || (self.tail_bytes > self.window && self.tail.len() > 1)
        {
            if let Some(first) = self.tail.pop_front() {
                self.tail_bytes -= first.len();
            }
        }
    }

    /// The lines for the model (before the line limit): all of them, or once the output was
    /// large both ends around `... (N lines written to LOG) ...` (`... (N lines truncated)
    /// ...` when no log keeps them).
    pub fn finish(self, log: Option<&Path>) -> Vec<String> {
        if !self.large {
            return self.head;
        }
        let skipped = self.total_lines - self.head.len() - self.tail.len();
        let mut lines = self.head;
        lines.push(match log {
            Some(path) => format!(
                "\n... ({skipped} lines written to {}) ...\n",
                path.display()
            ),
            None => format!("\n... ({skipped} lines truncated) ...\n"),
        });
        lines.extend(self.tail);
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_output_keeps_both_ends() {
        let mut collector = Collector::new(0);
        let mut large = Vec::new();
        for n in 1..=1500 {
            large.extend(collector.push(format!("line {n}")));
        }
        assert_eq!(
            large,
            [Large {
                lines: 1000,
                bytes: 8893
            }]
        );
        let lines = collector.finish(Some(Path::new("/tmp/o.log")));
        assert_eq!(lines.len(), 201);
        assert_eq!(lines[99], "line 100");
        assert_eq!(lines[100], "\n... (1300 lines written to /tmp/o.log) ...\n");
        assert_eq!(lines[101], "line 1401");
        assert_eq!(lines[200], "line 1500");
    }

    #[test]
    fn few_huge_lines_are_not_repeated() {
        let mut collector = Collector::new(0);
        for n in 0..3 {
            collector.push(format!("{n}{}", "x".repeat(200 * 1024)));
        }
        let lines = collector.finish(None);
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[2].len(), 200 * 1024 + 1);
        assert_eq!(lines[3], "\n... (0 lines truncated) ...\n");
    }

    #[test]
    fn the_ends_are_bounded_in_bytes() {
        let window = 1024 * 1024;
        let mut collector = Collector::new(window);
        for n in 0..2000 {
            collector.push(format!("{n:05}{}", "y".repeat(60 * 1024)));
        }
        let lines = collector.finish(None);
        let bytes = |lines: &[String]| lines.iter().map(String::len).sum::<usize>();
        let marker = lines
            .iter()
            .position(|l| l.starts_with("\n... ("))
            .unwrap_or_default();
        assert!(bytes(&lines[..marker]) <= window + 61 * 1024);
        assert!(bytes(&lines[marker + 1..]) <= window);
        assert!(lines[marker + 1..].len() > 10);
        assert!(lines[lines.len() - 1].starts_with("01999"));
        let skipped = 2000 - (lines.len() - 1);
        assert_eq!(
            lines[marker],
            format!("\n... ({skipped} lines truncated) ...\n")
        );
    }
}
