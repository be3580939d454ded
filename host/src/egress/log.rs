//! The connection log: one JSON line for every connection the proxy was asked for (task,
//! tool, host, verdict and why, the address reached, bytes each way), in a file per task,
//! read back by `toolhost egress log`.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// When it was asked for, in milliseconds since the Unix epoch.
    pub time_ms: u64,
    /// The task.
    pub task: String,
    /// The tool whose command or request made it.
    pub tool: String,
    /// The host and port asked for, as given.
    pub target: String,
    /// `allowed` or `denied`.
    pub verdict: String,
    /// Which rule, answer or check decided.
    pub why: String,
    /// The address connected to, when it was allowed.
    pub address: Option<String>,
    /// Bytes sent to the host.
    pub sent: u64,
    /// Bytes received from it.
    pub received: u64,
}

/// The default directory: `$XDG_STATE_HOME/toolhost/egress`, else
/// `~/.local/state/toolhost/egress`.
pub fn default_dir() -> Option<PathBuf> {
    Some(
        crate::settings::xdg_base("XDG_STATE_HOME", ".local/state")?
            .join("toolhost")
            .join("egress"),
    )
}

/// A task's file name: its id with anything but letters, digits, `-` and `_` replaced.
fn file_of(dir: &Path, task: &str) -> PathBuf {
    let name: String = task
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("{name}.jsonl"))
}

/// Appends `entry` to its task's file in `dir` (made, private to the user, when missing).
/// A log that cannot be written is reported in the host's log, and the connection goes on.
pub fn record(dir: &Path, entry: &Entry) {
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(file_of(dir, &entry.task))?;
        let mut line = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
        line.push(b'\n');
        // One write of one line: concurrent connections of a task never interleave lines.
        file.write_all(&line)
    };
    if let Err(e) = write() {
        tracing::warn!(target: "toolhost::egress", "cannot write the egress log in {}: {e}", dir.display());
    }
}

/// The entries of `task` (every task when `None`), oldest first.
pub fn read(dir: &Path, task: Option<&str>) -> std::io::Result<Vec<Entry>> {
    let files: Vec<PathBuf> = match task {
        Some(task) => vec![file_of(dir, task)],
        None => match std::fs::read_dir(dir) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e),
        },
    };
    let mut entries = Vec::new();
    for file in files {
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        entries.extend(
            text.lines()
                .filter_map(|line| serde_json::from_str(line).ok()),
        );
    }
    entries.sort_by_key(|entry: &Entry| entry.time_ms);
    Ok(entries)
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_per_task() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let entry = |task: &str, time_ms| Entry {
            time_ms,
            task: task.to_string(),
            tool: "execute_command".into(),
            target: "example.com:443".into(),
            verdict: "denied".into(),
            why: "nobody to ask".into(),
            address: None,
            sent: 0,
            received: 0,
        };
        record(dir.path(), &entry("t/1", 2));
        record(dir.path(), &entry("t2", 1));
        assert_eq!(read(dir.path(), Some("t/1"))?, vec![entry("t/1", 2)]);
        let all = read(dir.path(), None)?;
        assert_eq!(all, vec![entry("t2", 1), entry("t/1", 2)]);
        assert!(read(&dir.path().join("none"), None)?.is_empty());
        Ok(())
    }
}
