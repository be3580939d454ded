//! A run's output on its way: the bytes as they come to the log ([`crate::log`]) once the
//! output is large (and, at the end, when what the model sees of it is cut), the lines to the
//! collector ([`crate::collector`]) and to the user (streamed until the output is large, as in
//! Cline), and at the end the text for the model: Cline's line limit, then at most
//! `output_byte_limit` bytes.
//!
//! Memory holds at most, whatever the output's shape: 1 MiB of output until it is large (and
//! a read; past that it goes to a log already, which is dropped if the output never gets
//! large), a partial line (64 KiB), both ends of the lines (each the larger of 512 KiB and the
//! byte limit, and a line) and the lines waiting to be streamed (2 KiB and a line, also the
//! most the user gets at once). The user sees at most what came before the output was large
//! (1000 lines or 512 KiB, and a line of at most 64 KiB).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::collector::Collector;
use crate::log::Log;
use crate::output::{self, LineSplitter};

/// Streaming: pending lines are sent at this many lines, bytes, or after this long.
const FLUSH_LINES: usize = 20;
const FLUSH_BYTES: usize = 2048;
const FLUSH_AFTER: Duration = Duration::from_millis(100);
/// Output held in memory before it is large: past this it goes to a log already (trimmed
/// blanks do not count as Cline counts the output's size, and would otherwise pile up here).
const PENDING_LIMIT: usize = 1024 * 1024;

/// How much of a run's output is kept, and for whom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Lines the model sees (`output_line_limit`).
    pub line_limit: usize,
    /// Bytes of output the model sees (`output_byte_limit`).
    pub byte_limit: usize,
    /// MiB one log keeps (`output_log_limit_mb`; `None`: no limit).
    pub log_limit_mb: Option<u64>,
    /// MiB all of this process's logs keep together (`output_logs_total_mb`; `None`: no limit).
    pub logs_total_mb: Option<u64>,
    /// The task whose logs they are (removed when it ends).
    pub task_id: String,
}

impl Default for Limits {
    /// The defaults of the settings.
    fn default() -> Self {
        Self {
            line_limit: output::DEFAULT_LINE_LIMIT,
            byte_limit: output::DEFAULT_BYTE_LIMIT,
            log_limit_mb: Some(DEFAULT_LOG_LIMIT_MB),
            logs_total_mb: Some(DEFAULT_LOGS_TOTAL_MB),
            task_id: String::new(),
        }
    }
}

/// The default of `output_log_limit_mb`.
pub const DEFAULT_LOG_LIMIT_MB: u64 = 32;
/// The default of `output_logs_total_mb`.
pub const DEFAULT_LOGS_TOTAL_MB: u64 = 256;

/// What a run printed, ready for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collected {
    /// The output for the model, within the limits.
    pub text: String,
    /// The lines kept (before the limits).
    pub lines: Vec<String>,
    /// The log holding the output, when it was large or the text is cut.
    pub log: Option<PathBuf>,
}

/// Where the output's bytes are.
#[derive(Debug)]
enum Disk {
    /// In memory, until the output is large.
    Pending(Vec<u8>),
    /// Going to the log.
    Writing(Log),
    /// No log could be made.
    Unavailable,
}

/// A run's output on its way.
#[derive(Debug)]
pub struct Capture {
    limits: Limits,
    splitter: LineSplitter,
    collector: Collector,
    stream: Stream,
    disk: Disk,
}

impl Capture {
    /// Nothing seen yet.
    pub fn new(limits: Limits) -> Self {
        Self {
            collector: Collector::new(limits.byte_limit),
            limits,
            splitter: LineSplitter::default(),
            stream: Stream::default(),
            disk: Disk::Pending(Vec::new()),
        }
    }

    /// Takes bytes of output; `out` gets what is streamed to the user.
    pub fn push(&mut self, bytes: &[u8], out: &mut dyn FnMut(&str)) {
        match &mut self.disk {
            Disk::Pending(raw) => raw.extend_from_slice(bytes),
            Disk::Writing(log) => log.write(bytes),
            Disk::Unavailable => {}
        }
        if matches!(&self.disk, Disk::Pending(raw) if raw.len() > PENDING_LIMIT) {
            let _ = self.open_log();
        }
        for line in self.splitter.push(bytes) {
            self.take_line(line, out);
        }
    }

    fn take_line(&mut self, line: String, out: &mut dyn FnMut(&str)) {
        if !self.collector.is_large() {
            self.stream.push(&line);
            // As soon as it is due, as Cline sends it: one read may bring many lines.
            self.stream.flush_if_due(Instant::now(), out);
        }
        if let Some(large) = self.collector.push(line) {
            // Everything up to here was streamed; from now on the output goes to the log.
            let size = format!(
                "\n📋 Output is large ({} lines, {}KB).",
                large.lines,
                (large.bytes as f64 / 1024.0).round() as u64
            );
            let notice = match self.open_log() {
                Ok(path) => format!("{size} Writing to: {}", path.display()),
                Err(e) => format!("{size} It cannot be written to a file: {e}"),
            };
            self.stream.flush(out);
            out(&notice);
        }
    }

    /// The log, made (with the output so far) when it is not yet.
    fn open_log(&mut self) -> Result<PathBuf, String> {
        match std::mem::replace(&mut self.disk, Disk::Unavailable) {
            Disk::Pending(raw) => {
                let mut log = Log::create(&self.limits.task_id, self.limits.log_limit_mb)?;
                log.write(&raw);
                let path = log.path().to_path_buf();
                self.disk = Disk::Writing(log);
                Ok(path)
            }
            Disk::Writing(log) => {
                let path = log.path().to_path_buf();
                self.disk = Disk::Writing(log);
                Ok(path)
            }
            Disk::Unavailable => Err("an earlier attempt failed".to_string()),
        }
    }

    /// Streams what waited long enough.
    pub fn flush_if_due(&mut self, now: Instant, out: &mut dyn FnMut(&str)) {
        self.stream.flush_if_due(now, out);
    }

    /// Ends the output: the last line, the log completed, the text for the model.
    pub fn finish(mut self, out: &mut dyn FnMut(&str)) -> Collected {
        if let Some(line) = self.splitter.finish() {
            self.take_line(line, out);
        }
        self.stream.flush(out);
        let total = self
            .limits
            .logs_total_mb
            .map(|mb| mb.saturating_mul(1024 * 1024));
        let (log, pending) = match std::mem::replace(&mut self.disk, Disk::Unavailable) {
            Disk::Writing(log) => (log.finish(total), None),
            Disk::Pending(raw) => (None, Some(raw)),
            Disk::Unavailable => (None, None),
        };
        let large = self.collector.is_large();
        let lines = self.collector.finish(log.as_deref());
        let shaped = output::process_output(&lines, self.limits.line_limit);
        let Some(text) = output::cut_to_bytes(&shaped, self.limits.byte_limit) else {
            // A log made only because memory would have held too much is not Cline's: the
            // model saw all there was (but blanks).
            let log = match log {
                Some(path) if !large => {
                    crate::logs::discard(&path);
                    None
                }
                log => log,
            };
            return Collected {
                text: shaped,
                lines,
                log,
            };
        };
        // The model does not see all of it: a log keeps the whole output, also when it was not
        // large (Cline writes one only then).
        let log = log.or_else(|| {
            let mut log = Log::create(&self.limits.task_id, self.limits.log_limit_mb).ok()?;
            log.write(&pending?);
            log.finish(total)
        });
        Collected { text, lines, log }
    }
}

/// Output lines waiting to be shown to the user.
#[derive(Debug, Default)]
struct Stream {
    pending: Vec<String>,
    bytes: usize,
    since: Option<Instant>,
}

impl Stream {
    fn push(&mut self, line: &str) {
        self.since.get_or_insert_with(Instant::now);
        self.bytes += line.len() + 1;
        self.pending.push(line.to_string());
    }

    fn flush_if_due(&mut self, now: Instant, out: &mut dyn FnMut(&str)) {
        let due = self.pending.len() >= FLUSH_LINES
            || self.bytes >= FLUSH_BYTES
            || self
                .since
                .is_some_and(|since| now.saturating_duration_since(since) >= FLUSH_AFTER);
        if due {
            self.flush(out);
        }
    }

    fn flush(&mut self, out: &mut dyn FnMut(&str)) {
        if !self.pending.is_empty() {
            out(&self.pending.join("\n"));
        }
        self.pending.clear();
        self.bytes = 0;
        self.since = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(limits: Limits, chunks: &[&[u8]]) -> (Collected, Vec<String>) {
        let mut streamed = Vec::new();
        let mut out = |chunk: &str| streamed.push(chunk.to_string());
        let mut capture = Capture::new(limits);
        for chunk in chunks {
            capture.push(chunk, &mut out);
        }
        let collected = capture.finish(&mut out);
        (collected, streamed)
    }

    fn limits(task: &str) -> Limits {
        Limits {
            task_id: task.to_string(),
            ..Limits::default()
        }
    }

    #[test]
    fn large_output_goes_to_a_log() {
        let output: String = (1..=1500).map(|n| format!("line {n}\n")).collect();
        let (collected, streamed) = captured(limits("capture-unit-1"), &[output.as_bytes()]);
        let path = collected.log.clone().unwrap_or_default();
        let saved = std::fs::read_to_string(&path).unwrap_or_default();
        crate::logs::task_ended("capture-unit-1");
        assert_eq!(saved, output);
        assert!(!path.exists());
        assert_eq!(
            streamed.last().cloned().unwrap_or_default(),
            format!(
                "\n📋 Output is large (1000 lines, 9KB). Writing to: {}",
                path.display()
            )
        );
        assert!(collected.text.contains(&format!(
            "line 100\n\n... (1300 lines written to {}) ...\n\nline 1401",
            path.display()
        )));
    }

    #[test]
    fn small_output_has_no_log() {
        let (collected, streamed) = captured(limits("capture-unit-2"), &[b"a\nb\n", b"c"]);
        assert_eq!(collected.text, "a\nb\nc");
        assert_eq!(collected.log, None);
        assert_eq!(streamed.join("\n"), "a\nb\nc");
    }

    #[test]
    fn what_trimming_hides_does_not_pile_up_in_memory() {
        // 900 lines of 60 KiB of blanks: never large (the lines are empty once trimmed).
        let mut line = vec![b' '; 60 * 1024];
        line.push(b'\n');
        let mut capture = Capture::new(limits("capture-unit-4"));
        let mut out = |_: &str| {};
        let mut most = 0;
        for _ in 0..900 {
            capture.push(&line, &mut out);
            if let Disk::Pending(raw) = &capture.disk {
                most = most.max(raw.len());
            }
        }
        assert!(most <= PENDING_LIMIT + line.len(), "{most} bytes held");
        let collected = capture.finish(&mut out);
        // Cline's line limit still applies to the 900 empty lines.
        let text = "... (output truncated) ...";
        assert_eq!((collected.text.as_str(), collected.log), (text, None));
        crate::logs::task_ended("capture-unit-4");
    }

    #[test]
    fn output_cut_for_the_model_is_in_a_log() {
        let output: String = (1..=300)
            .map(|n| format!("{n:03}{}\n", "-".repeat(60)))
            .collect();
        let limits = Limits {
            byte_limit: 1000,
            ..limits("capture-unit-3")
        };
        let (collected, _) = captured(limits, &[output.as_bytes()]);
        let saved = std::fs::read_to_string(collected.log.clone().unwrap_or_default());
        crate::logs::task_ended("capture-unit-3");
        assert!(collected.text.len() <= 1000);
        assert!(collected.text.starts_with("001---"));
        assert!(collected
            .text
            .ends_with("300------------------------------------------------------------"));
        assert!(collected.text.contains(" bytes truncated) ...\n"));
        assert_eq!(saved.unwrap_or_default(), output);
    }
}
