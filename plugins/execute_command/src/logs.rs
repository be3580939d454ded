//! Where the output logs are kept, and for how long.
//!
//! They live in a private directory of this process's, `$TMPDIR/toolhost-<pid>-output-<random>/`
//! (mode 0700, files 0600, [`tool_api::sdk::private_dir`]), each registered with its task. A
//! task's logs are removed when the host says it ended (`task_ended`), all of them with the
//! directory when the plugin shuts down (the host's exit), and the oldest first when together
//! they hold more than `execute_command.output_logs_total_mb`. What a killed host left behind is
//! removed by the next run that makes a private directory (the host makes one for every
//! sandboxed command; plugins and host sweep each other's).

use std::fs::File;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use tool_api::sdk::private_dir::PrivateDir;

/// A log and whose it is.
#[derive(Debug)]
struct Kept {
    task: String,
    path: PathBuf,
    /// Its size once it is complete; `None` while it is written.
    bytes: Option<u64>,
}

#[derive(Debug)]
struct Logs {
    dir: Option<PrivateDir>,
    kept: Vec<Kept>,
}

static LOGS: Mutex<Logs> = Mutex::new(Logs {
    dir: None,
    kept: Vec::new(),
});

fn logs() -> MutexGuard<'static, Logs> {
    LOGS.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Logs {
    /// The directory, made on first use (after removing those of killed hosts).
    fn dir(&mut self) -> Result<PathBuf, String> {
        if self.dir.is_none() {
            self.dir = Some(PrivateDir::create(&std::env::temp_dir(), "output-")?);
        }
        Ok(self
            .dir
            .as_ref()
            .map(|dir| dir.path().to_path_buf())
            .unwrap_or_default())
    }

    fn remove(&mut self, index: usize) {
        let kept = self.kept.remove(index);
        let _ = std::fs::remove_file(kept.path);
    }
}

/// A new log of `task`'s: its path and the file, open for writing.
pub fn create(task: &str) -> Result<(PathBuf, File), String> {
    let mut logs = logs();
    let mut error = String::new();
    // A command may have removed the directory (it can write to the temporary directory): then
    // a new one is made.
    for _ in 0..2 {
        let dir = logs.dir()?;
        match tempfile::Builder::new()
            .prefix("large-output-")
            .suffix(".log")
            .permissions(std::fs::Permissions::from_mode(0o600))
            .tempfile_in(&dir)
            .and_then(|file| file.keep().map_err(|e| e.error))
        {
            Ok((file, path)) => {
                logs.kept.push(Kept {
                    task: task.to_string(),
                    path: path.clone(),
                    bytes: None,
                });
                return Ok((path, file));
            }
            Err(e) => {
                error = format!("cannot create a log in {}: {e}", dir.display());
                logs.dir = None;
            }
        }
    }
    Err(error)
}

/// An unnamed file beside the logs, gone when closed (the end of a long output, kept until
/// its log is complete).
pub fn scratch() -> std::io::Result<File> {
    let dir = logs().dir().map_err(std::io::Error::other)?;
    tempfile::tempfile_in(dir)
}

/// The log at `path` is complete with `bytes`: the oldest other complete logs are removed
/// while all of them hold more than `total` bytes. Whether it is still kept (its task may have
/// ended meanwhile).
pub fn finished(path: &Path, bytes: u64, total: Option<u64>) -> bool {
    let mut logs = logs();
    let Some(entry) = logs.kept.iter_mut().find(|k| k.path == path) else {
        return false;
    };
    entry.bytes = Some(bytes);
    let Some(total) = total else {
        return true;
    };
    let mut held: u64 = logs.kept.iter().filter_map(|k| k.bytes).sum();
    let mut index = 0;
    while held > total && index < logs.kept.len() {
        match logs.kept[index].bytes {
            Some(size) if logs.kept[index].path != path => {
                held -= size;
                logs.remove(index);
            }
            _ => index += 1,
        }
    }
    true
}

/// Removes a log that could not be completed.
pub fn discard(path: &Path) {
    let mut logs = logs();
    if let Some(index) = logs.kept.iter().position(|k| k.path == path) {
        logs.remove(index);
    }
}

/// Removes the logs of a task that ended.
pub fn task_ended(task: &str) {
    let mut logs = logs();
    while let Some(index) = logs.kept.iter().position(|k| k.task == task) {
        logs.remove(index);
    }
}

/// Removes every log and the directory (the plugin shuts down).
pub fn remove_all() {
    let mut logs = logs();
    logs.kept.clear();
    if let Some(dir) = logs.dir.take() {
        dir.remove();
    }
}
