//! From parsed actions to the file-system changes, the files to approve and the result entries,
//! with every check done before anything is written.
//!
//! Deliberate differences from Cline, which would lose data:
//! - `*** Add File` on a path that exists fails (`Add File Error: File already exists: <path>`,
//!   the message Cline's own parser has for it); Cline overwrites the file. The model asked to
//!   create a file, so it does not know what it would destroy.
//! - `*** Move to:` an existing path fails the same way (`Move File Error: ...`); Cline
//!   overwrites. A move onto the file itself is an in-place update (Cline deletes the file).
//! - Two actions that end up on the same file (`a.txt` and `./a.txt`, a delete and a move onto
//!   it) fail with `Duplicate <action> for file: <path>`.
//! - A file that is not UTF-8 text, or is read-only, is not updated in place.
//! - Add and move destinations are checked against `.clineignore` too.

use std::collections::HashMap;
use std::path::PathBuf;

use tool_api::model::PathVerdict;
use tool_api::workspace::Workspace;

use crate::apply::apply_chunks;
use crate::commit::{Op, Original};
use crate::error::{Failure, PatchError};
use crate::files::{entry_verdict, occupied, real_target, Loaded};
use crate::js;
use crate::parser::{Action, Parsed};

/// A file the patch touches, to be approved and shown in the UI.
#[derive(Debug, Clone, PartialEq)]
pub struct Touched {
    /// The path as the patch names it.
    pub path: String,
    /// What the host says about it.
    pub verdict: PathVerdict,
    /// Cline's UI kind: `newFileCreated`, `editedExistingFile` or `fileDeleted`.
    pub tool: &'static str,
    /// The 1-based lines where the hunks start (updates only).
    pub start_line_numbers: Vec<usize>,
}

/// One file in the result text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// Saved with this content.
    Saved(String),
    /// Deleted (or moved away).
    Deleted,
}

/// Everything to do, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The file-system changes, in patch order.
    pub ops: Vec<Op>,
    /// The files to approve, in patch order.
    pub touched: Vec<Touched>,
    /// The result entries in the order Cline inserts them.
    pub results: Vec<(String, Entry)>,
}

/// Asks the host about a path that the patch creates; fails when `.clineignore` blocks it.
pub type CheckPath<'a> = dyn Fn(&str) -> Result<PathVerdict, Failure> + 'a;

/// Plans the parsed actions against the loaded files of `workspace`.
pub fn plan(
    parsed: &Parsed,
    loaded: &HashMap<String, Loaded>,
    workspace: &Workspace,
    check: &CheckPath<'_>,
) -> Result<Plan, Failure> {
    let keys: Vec<&str> = parsed.actions.iter().map(|(p, _)| p.as_str()).collect();
    let order = js::object_order(&keys);

    // First every action's content (Cline's patchToCommit), then the checks of each change in
    // turn (its applyCommit), so that errors come in Cline's order.
    let mut contents = HashMap::new();
    for &i in &order {
        let (path, action) = &parsed.actions[i];
        match action {
            Action::Add { content } if content.is_empty() => {
                return Err(PatchError::new("ADD action without file content").into());
            }
            Action::Update { chunks, .. } => {
                let file = known(loaded, path)?;
                contents.insert(i, apply_chunks(&file.text, chunks, path)?);
            }
            Action::Add { .. } | Action::Delete => {}
        }
    }

    let mut planner = Planner {
        workspace,
        plan: Plan {
            ops: Vec::new(),
            touched: Vec::new(),
            results: Vec::new(),
        },
        claimed: Vec::new(),
    };
    for &i in &order {
        let (path, action) = &parsed.actions[i];
        match action {
            Action::Add { content } => planner.add(path, content, check)?,
            Action::Delete => planner.delete(path, known(loaded, path)?)?,
            Action::Update { chunks, move_to } => {
                let new_content = contents.remove(&i).unwrap_or_default();
                let starts = chunks.iter().map(|c| c.orig_index + 1).collect();
                let file = known(loaded, path)?;
                planner.update(path, file, new_content, starts, move_to.as_deref(), check)?;
            }
        }
    }
    Ok(planner.plan)
}

fn known<'a>(loaded: &'a HashMap<String, Loaded>, path: &str) -> Result<&'a Loaded, Failure> {
    // The parser only accepts updates and deletes of loaded files.
    loaded
        .get(path)
        .ok_or_else(|| PatchError::new(format!("File not found: {path}")).into())
}

struct Planner<'w> {
    workspace: &'w Workspace,
    plan: Plan,
    /// The real paths already written or removed, with the action that did it.
    claimed: Vec<PathBuf>,
}

impl Planner<'_> {
    /// Reserves a real path for one action; a second action on it is an error.
    fn claim(&mut self, real: PathBuf, operation: &str, path: &str) -> Result<(), Failure> {
        if self.claimed.contains(&real) {
            return Err(PatchError::new(format!("Duplicate {operation} for file: {path}")).into());
        }
        self.claimed.push(real);
        Ok(())
    }

    fn add(&mut self, path: &str, content: &str, check: &CheckPath<'_>) -> Result<(), Failure> {
        let verdict = check(path)?;
        if occupied(self.workspace, &verdict) {
            return Err(
                PatchError::new(format!("Add File Error: File already exists: {path}")).into(),
            );
        }
        self.claim(real_target(&verdict), "add", path)?;
        self.plan.ops.push(Op::Write {
            label: path.to_string(),
            target: verdict.clone(),
            bytes: content.as_bytes().to_vec(),
            replaces: None,
        });
        self.touch(path, verdict, "newFileCreated", Vec::new());
        self.plan
            .results
            .push((path.to_string(), Entry::Saved(content.to_string())));
        Ok(())
    }

    fn delete(&mut self, path: &str, file: &Loaded) -> Result<(), Failure> {
        self.claim(real_target(&file.verdict), "delete", path)?;
        self.plan.ops.push(Op::Remove {
            label: path.to_string(),
            // The path itself: deleting a symlink deletes the link, not what it points to.
            target: entry_verdict(self.workspace, &file.verdict),
        });
        self.touch(path, file.verdict.clone(), "fileDeleted", Vec::new());
        self.plan.results.push((path.to_string(), Entry::Deleted));
        Ok(())
    }

    fn update(
        &mut self,
        path: &str,
        file: &Loaded,
        new_content: String,
        starts: Vec<usize>,
        move_to: Option<&str>,
        check: &CheckPath<'_>,
    ) -> Result<(), Failure> {
        if new_content.is_empty() {
            return Err(
                PatchError::new(format!("UPDATE change for {path} has no new content")).into(),
            );
        }
        if !file.is_utf8 {
            return Err(PatchError::new(format!(
                "Cannot update {path}: the file is not UTF-8 text. No file was changed."
            ))
            .into());
        }
        let source = real_target(&file.verdict);
        let destination = match move_to {
            Some(dest) => {
                let verdict = check(dest)?;
                (real_target(&verdict) != source).then_some((dest, verdict))
            }
            None => None,
        };
        let Some((dest, dest_verdict)) = destination else {
            if file.permissions.readonly() {
                return Err(PatchError::new(format!(
                    "Cannot update {path}: the file is read-only. No file was changed."
                ))
                .into());
            }
            self.claim(source, "update", path)?;
            self.plan.ops.push(Op::Write {
                label: path.to_string(),
                target: file.verdict.clone(),
                bytes: new_content.as_bytes().to_vec(),
                replaces: Some(Original {
                    bytes: file.bytes.clone(),
                    permissions: file.permissions.clone(),
                }),
            });
            self.touch(path, file.verdict.clone(), "editedExistingFile", starts);
            self.plan
                .results
                .push((path.to_string(), Entry::Saved(new_content)));
            return Ok(());
        };
        if occupied(self.workspace, &dest_verdict) {
            return Err(
                PatchError::new(format!("Move File Error: File already exists: {dest}")).into(),
            );
        }
        self.claim(source, "update", path)?;
        self.claim(real_target(&dest_verdict), "move", dest)?;
        self.plan.ops.push(Op::Write {
            label: dest.to_string(),
            target: dest_verdict.clone(),
            bytes: new_content.as_bytes().to_vec(),
            replaces: None,
        });
        self.plan.ops.push(Op::Remove {
            label: path.to_string(),
            target: entry_verdict(self.workspace, &file.verdict),
        });
        self.touch(dest, dest_verdict, "newFileCreated", starts);
        self.touch(path, file.verdict.clone(), "fileDeleted", Vec::new());
        self.plan
            .results
            .push((dest.to_string(), Entry::Saved(new_content)));
        self.plan.results.push((path.to_string(), Entry::Deleted));
        Ok(())
    }

    fn touch(
        &mut self,
        path: &str,
        verdict: PathVerdict,
        tool: &'static str,
        start_line_numbers: Vec<usize>,
    ) {
        self.plan.touched.push(Touched {
            path: path.to_string(),
            verdict,
            tool,
            start_line_numbers,
        });
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
