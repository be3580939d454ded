//! Per-task state the host keeps for the tools: the mistake counter and the file-read cache.
//!
//! Handlers keep no task state of their own; they reach this through the host services.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tool_api::model::Mode;

/// One entry of the read cache.
#[derive(Debug, Clone, Copy)]
struct FileRead {
    count: u32,
    mtime_ms: u64,
}

#[derive(Debug, Default)]
struct Inner {
    mode: Mode,
    yolo: bool,
    consecutive_mistakes: u32,
    /// Keyed by the lower-cased absolute path, as Cline keys it.
    file_reads: HashMap<String, FileRead>,
}

/// The mutable state of one task.
#[derive(Debug, Default)]
pub struct TaskState {
    inner: Mutex<Inner>,
}

impl TaskState {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // The state stays consistent under every operation below, so a poisoned lock is usable.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a read; returns how many reads of the unchanged file there have now been.
    /// A changed modification time starts the count again.
    pub fn record_file_read(&self, absolute_path: &str, mtime_ms: u64) -> u32 {
        let mut inner = self.lock();
        let entry = inner
            .file_reads
            .entry(absolute_path.to_lowercase())
            .or_insert(FileRead { count: 0, mtime_ms });
        if entry.mtime_ms != mtime_ms {
            *entry = FileRead { count: 0, mtime_ms };
        }
        entry.count += 1;
        entry.count
    }

    /// Forgets one path, or every path when `absolute_path` is empty.
    pub fn forget_file_reads(&self, absolute_path: &str) {
        let mut inner = self.lock();
        if absolute_path.is_empty() {
            inner.file_reads.clear();
        } else {
            inner.file_reads.remove(&absolute_path.to_lowercase());
        }
    }

    /// Plan or act: an agent switches modes during a task.
    pub fn mode(&self) -> Mode {
        self.lock().mode
    }

    /// Switches between plan and act mode.
    pub fn set_mode(&self, mode: Mode) {
        self.lock().mode = mode;
    }

    /// Whether the task runs non-interactively ("yolo"): questions are not asked.
    pub fn yolo(&self) -> bool {
        self.lock().yolo
    }

    /// Turns non-interactive mode on or off.
    pub fn set_yolo(&self, yolo: bool) {
        self.lock().yolo = yolo;
    }

    /// The consecutive-mistake count.
    pub fn mistakes(&self) -> u32 {
        self.lock().consecutive_mistakes
    }

    /// Counts one more mistake.
    pub fn add_mistake(&self) {
        self.lock().consecutive_mistakes += 1;
    }

    /// Sets the count (loop detection raises it to the limit).
    pub fn set_mistakes(&self, count: u32) {
        self.lock().consecutive_mistakes = count;
    }

    /// A successful call resets the count.
    pub fn reset_mistakes(&self) {
        self.lock().consecutive_mistakes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_count_until_the_file_changes() {
        let state = TaskState::default();
        assert_eq!(state.record_file_read("/W/A.txt", 1), 1);
        assert_eq!(state.record_file_read("/w/a.txt", 1), 2);
        assert_eq!(state.record_file_read("/w/a.txt", 2), 1);
        state.forget_file_reads("");
        assert_eq!(state.record_file_read("/w/a.txt", 2), 1);
    }
}
