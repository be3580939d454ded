//! Where a team is kept, and how its state changes: one directory per team
//! (`<team.dir>/<name>/`, by default in toolhost's data directory's `teams/`), holding
//! `state.json` in Cline's envelope (`{version, updatedAt, teamState, teammates}`), with
//! toolhost's id counters and the teammates' conversations beside the team state.
//!
//! Every change is a locked read, change and atomic write ([`Store::update`]): two calls of
//! one host, or two hosts, never lose each other's changes, and a crash leaves the old file
//! or the new one. A member or run left running by a process that is gone is taken back when
//! the state is next read: the member is idle again, the run queued again (Cline's recovery).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use agent_support::conversation::Message;
use serde::{Deserialize, Serialize};
use tool_api::sdk::prelude::*;

use crate::board::Board;

/// The state file's name in the team's directory.
const STATE_FILE: &str = "state.json";

/// What the state file holds.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Envelope {
    /// Cline's format version, 1.
    pub version: u32,
    /// When it was last written.
    pub updated_at: String,
    /// The team.
    pub team_state: Board,
    /// Cline's teammate specs (`{agentId, rolePrompt}`).
    pub teammates: Vec<serde_json::Value>,
    /// The last number used for each kind of id (`task`, `msg`, ...): ids are never reused,
    /// not even after a cleanup.
    #[serde(default)]
    pub counters: BTreeMap<String, u64>,
    /// Each teammate's conversation, for a run that continues it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub conversations: BTreeMap<String, Vec<Message>>,
}

impl Envelope {
    /// Each id counter at least the highest id of its kind in the state (a state written by
    /// Cline's SDK has no counters).
    fn count_from_ids(&mut self) {
        let board = &self.team_state;
        let ids = [
            (
                "task",
                board.tasks.iter().map(|t| &t.id).collect::<Vec<_>>(),
            ),
            ("msg", board.mailbox.iter().map(|m| &m.id).collect()),
            ("log", board.mission_log.iter().map(|l| &l.id).collect()),
            ("run", board.runs.iter().map(|r| &r.id).collect()),
            ("out", board.outcomes.iter().map(|o| &o.id).collect()),
            (
                "frag",
                board.outcome_fragments.iter().map(|f| &f.id).collect(),
            ),
        ];
        for (prefix, ids) in ids {
            let highest = ids
                .iter()
                .filter_map(|id| {
                    id.strip_prefix(prefix)?
                        .strip_prefix('_')?
                        .parse::<u64>()
                        .ok()
                })
                .max()
                .unwrap_or(0);
            let counter = self.counters.entry(prefix.to_string()).or_insert(0);
            *counter = (*counter).max(highest);
        }
    }

    /// The next id of `prefix`, zero-padded to `width` digits (`task_0001`).
    pub fn next_id(&mut self, prefix: &str, width: usize) -> String {
        let counter = self.counters.entry(prefix.to_string()).or_insert(0);
        *counter += 1;
        format!("{prefix}_{:0width$}", *counter)
    }
}

/// One team's directory.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
    name: String,
}

impl Store {
    /// The team of this call: `team.name` from the settings, else the task's own team (named
    /// after the task), in `team.dir` or toolhost's data directory.
    pub fn of_call(ctx: &Ctx<'_>, task_id: &str) -> Result<Self, ToolError> {
        let name = match ctx.setting::<String>("team.name") {
            Some(name) if !name.trim().is_empty() => name.trim().to_string(),
            _ => format!("task-{task_id}"),
        };
        let base = match ctx.setting_path("team.dir")? {
            Some(dir) => dir,
            None => tool_api::sdk::paths::data_dir()
                .map(|dir| dir.join("teams"))
                .ok_or_else(|| {
                    failed("There is no directory to keep the team in: set team.dir in the toolhost settings.")
                })?,
        };
        let folder = folder_name(&name).ok_or_else(|| {
            failed(&format!(
                "The team name {name:?} makes no directory name: set team.name to letters, digits, '.', '_' or '-'."
            ))
        })?;
        Ok(Self::at(base.join(folder), name))
    }

    /// Team `name`, kept in `dir`.
    pub fn at(dir: PathBuf, name: String) -> Self {
        Self { dir, name }
    }

    /// Reads the state, lets `change` change it, and writes it back when `change` succeeds.
    pub fn update<T>(
        &self,
        change: impl FnOnce(&mut Envelope) -> Result<T, String>,
    ) -> Result<T, String> {
        let _lock = self.lock()?;
        let mut envelope = self.load()?;
        let result = change(&mut envelope)?;
        self.save(&mut envelope)?;
        Ok(result)
    }

    /// Reads the state, as [`Store::update`] would find it, without writing it (but a new
    /// team's, which is written at once so that its id stays).
    pub fn read<T>(&self, look: impl FnOnce(&Envelope) -> T) -> Result<T, String> {
        if !self.dir.join(STATE_FILE).exists() {
            return self.update(|e| Ok(look(e)));
        }
        let _lock = self.lock()?;
        Ok(look(&self.load()?))
    }

    /// This process's lease on the team (see [`crate::lease`]), taken under the team's lock.
    pub fn lease(&self) -> Result<String, String> {
        let _lock = self.lock()?;
        crate::lease::ours(&self.dir)
    }

    /// The team's directory, made when missing, and its lock held until the guard drops.
    fn lock(&self) -> Result<File, String> {
        std::fs::create_dir_all(&self.dir).map_err(|e| self.trouble("create", &e))?;
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.dir.join("lock"))
            .map_err(|e| self.trouble("lock", &e))?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| self.trouble("lock", &std::io::Error::from(e)))?;
        Ok(file)
    }

    fn load(&self) -> Result<Envelope, String> {
        let path = self.dir.join(STATE_FILE);
        let mut envelope = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str::<Envelope>(&text).map_err(|e| {
                format!(
                    "The team's state in {} cannot be read ({e}); move it away to start the team again.",
                    path.display()
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Envelope {
                version: 1,
                team_state: Board::new(team_id(), self.name.clone()),
                ..Envelope::default()
            },
            Err(e) => return Err(self.trouble("read", &e)),
        };
        recover(&mut envelope.team_state, &self.dir, &now());
        envelope.count_from_ids();
        Ok(envelope)
    }

    fn save(&self, envelope: &mut Envelope) -> Result<(), String> {
        envelope.updated_at = now();
        envelope.teammates = envelope
            .team_state
            .members
            .iter()
            .filter(|m| m.role == "teammate" && m.status != "stopped")
            .map(|m| serde_json::json!({"agentId": m.agent_id, "rolePrompt": m.description}))
            .collect();
        let mut text = serde_json::to_string_pretty(envelope).map_err(|e| e.to_string())?;
        text.push('\n');
        // A state that would not read back (JSON nested past the parser's depth, say, from a
        // tool call in a teammate's conversation) is never written: the team would be lost.
        serde_json::from_str::<Envelope>(&text).map_err(|e| {
            format!("The team's new state would not read back ({e}); it was not written.")
        })?;
        write_atomically(&self.dir.join(STATE_FILE), &text).map_err(|e| self.trouble("write", &e))
    }

    fn trouble(&self, what: &str, e: &std::io::Error) -> String {
        format!(
            "Cannot {what} the team's state in {}: {e}",
            self.dir.display()
        )
    }
}

/// `text` as the file `path`, by way of a new file renamed over it.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(text.as_bytes())?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    tool_api::sdk::files::sync_dir(dir);
    Ok(())
}

/// Members and runs left running by a process that is gone (or by no lease at all, as Cline's
/// state has them), taken back.
fn recover(board: &mut Board, dir: &Path, now: &str) {
    let alive = |lease: &Option<String>| {
        lease
            .as_deref()
            .is_some_and(|l| crate::lease::is_alive(dir, l))
    };
    for member in &mut board.members {
        let unleased = member.running_in.is_none() && member.status == "running";
        if unleased || (member.running_in.is_some() && !alive(&member.running_in)) {
            member.running_in = None;
            if member.status == "running" {
                member.status = "idle".to_string();
            }
        }
    }
    for run in &mut board.runs {
        if run.status == "running" && !alive(&run.lease_owner) {
            run.status = "queued".to_string();
            run.lease_owner = None;
            run.error = None;
            run.ended_at = None;
            run.heartbeat_at = Some(now.to_string());
            run.last_progress_at = Some(now.to_string());
            run.last_progress_message = Some("runtime_recovered".to_string());
            run.current_activity = Some(RECOVERED.to_string());
        }
    }
}

/// The activity of a run taken back from a process that is gone.
pub const RECOVERED: &str = "recovered_queued";

/// The directory name of team `name`: Cline's sanitizing (lower case; anything but letters,
/// digits, `.`, `_` and `-` made `-`; no `-` at the ends), and never `.` or `..`.
pub fn folder_name(name: &str) -> Option<String> {
    let mut folder = String::new();
    for c in name.to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-') {
            folder.push(c);
        } else if !folder.ends_with('-') {
            folder.push('-');
        }
    }
    let folder = folder.trim_matches('-').to_string();
    (!folder.is_empty() && folder.chars().any(|c| c != '.')).then_some(folder)
}

/// Now, as JavaScript's `toISOString` writes it.
pub fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// The epoch, the start of a run not yet started.
pub const EPOCH: &str = "1970-01-01T00:00:00.000Z";

/// A new team id: `t_` and ten characters of `[a-z0-9]`.
fn team_id() -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        ^ (u64::from(std::process::id()) << 32);
    let mut id = String::from("t_");
    for _ in 0..10 {
        // xorshift: an id that differs between teams, not a secret.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        id.push(char::from(
            ALPHABET[(seed % ALPHABET.len() as u64) as usize],
        ));
    }
    id
}

fn failed(message: &str) -> ToolError {
    ToolError::new(ToolErrorKind::FAILED, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn team_names_make_one_directory() {
        assert_eq!(folder_name("Auth Sprint!").as_deref(), Some("auth-sprint"));
        assert_eq!(folder_name("../../etc").as_deref(), Some("..-..-etc"));
        assert_eq!(folder_name(".."), None);
        assert_eq!(folder_name("/"), None);
        assert_eq!(folder_name("a/b").as_deref(), Some("a-b"));
    }

    #[test]
    fn ids_count_on_after_a_cleanup() {
        let mut envelope = Envelope::default();
        assert_eq!(envelope.next_id("task", 4), "task_0001");
        envelope.team_state.tasks.clear();
        assert_eq!(envelope.next_id("task", 4), "task_0002");
        assert_eq!(envelope.next_id("msg", 5), "msg_00001");
    }

    #[test]
    fn what_a_gone_process_ran_is_taken_back() {
        #![allow(clippy::unwrap_used)]
        let dir = tempfile::tempdir().unwrap();
        let mut board = Board::new("t_x".into(), "crew".into());
        board.members[0].status = "running".into();
        board.members[0].running_in = Some("toolhost-999999999-1".into());
        recover(&mut board, dir.path(), EPOCH);
        assert_eq!(board.members[0].status, "idle");
        board.members[0].running_in = Some(crate::lease::ours(dir.path()).unwrap());
        board.members[0].status = "running".into();
        recover(&mut board, dir.path(), EPOCH);
        assert_eq!(board.members[0].status, "running", "this process is alive");
        // Cline's state marks a running member without a lease.
        board.members[0].running_in = None;
        recover(&mut board, dir.path(), EPOCH);
        assert_eq!(board.members[0].status, "idle");
    }

    #[test]
    fn a_state_that_would_not_read_back_is_not_written() {
        #![allow(clippy::unwrap_used)]
        use agent_support::conversation::{Message, ToolRequest};
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path().join("crew"), "crew".into());
        store.update(|_| Ok(())).unwrap();
        let before = std::fs::read_to_string(dir.path().join("crew/state.json")).unwrap();
        let mut deep = serde_json::json!("x");
        for _ in 0..126 {
            deep = serde_json::json!([deep]);
        }
        let refused = store.update(|e| {
            let call = ToolRequest {
                id: "c".into(),
                name: "read_files".into(),
                raw_arguments: deep.clone(),
            };
            let turn = Message::Assistant {
                text: String::new(),
                calls: vec![call],
            };
            e.conversations.insert("ana".into(), vec![turn]);
            Ok(())
        });
        assert!(refused.unwrap_err().contains("would not read back"));
        let after = std::fs::read_to_string(dir.path().join("crew/state.json")).unwrap();
        assert_eq!(after, before);
    }

    #[test]
    fn counters_start_past_the_ids_a_state_holds() {
        let mut envelope = Envelope::default();
        envelope.team_state.tasks.push(crate::board::Task {
            id: "task_0007".into(),
            title: String::new(),
            description: String::new(),
            status: "pending".into(),
            created_at: EPOCH.into(),
            updated_at: EPOCH.into(),
            created_by: "lead".into(),
            assignee: None,
            depends_on: Vec::new(),
            summary: None,
        });
        envelope.count_from_ids();
        assert_eq!(envelope.next_id("task", 4), "task_0008");
        assert_eq!(envelope.next_id("run", 5), "run_00001");
    }
}
