//! The user's answers: "allow for this task" kept per task in memory, "always" appended to
//! the allowed file.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use super::error::EgressError;
use super::rules::Rule;

/// The rules the user's answers added for each task.
static ANSWERS: Mutex<BTreeMap<String, Vec<Rule>>> = Mutex::new(BTreeMap::new());

/// The rules the user's answers added for `task`.
pub fn answers(task: &str) -> Vec<Rule> {
    ANSWERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(task)
        .cloned()
        .unwrap_or_default()
}

/// Adds an answer's rule for `task`.
pub fn answered(task: &str, rule: Rule) {
    ANSWERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(task.to_string())
        .or_default()
        .push(rule);
}

/// Appends `rule` to the allowed file (made, with its directory, when missing).
pub fn remember(file: &Path, rule: &Rule) -> Result<(), EgressError> {
    use std::io::Write;
    let failed = |source| EgressError::Read {
        path: file.to_path_buf(),
        source,
    };
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .map_err(failed)?;
    writeln!(out, "{}", rule.text()).map_err(failed)
}
