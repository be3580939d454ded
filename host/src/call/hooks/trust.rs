//! Trust in workspace hook scripts, a deliberate deviation from Cline.
//!
//! A repository can ship `.clinerules/hooks/PreToolUse`, and Cline runs it, with the user's
//! permissions, on the first tool call. Here a workspace script runs only when the user approved
//! that exact version: its canonical path and the SHA-256 of its content are in the trust file,
//! or the user approves it now. `--yes` runs it for this process only (nothing is remembered:
//! `--yes` approves one run, as it does for tool calls, and a CI job with `--yes` should not
//! leave trust behind); on a terminal the user is asked once per script version, and a yes is
//! remembered; with nobody to ask it does not run, and one warning per script says how to trust
//! it. Global hooks (`[hooks] dir`, `~/Documents/Cline/Hooks/`) are the user's own and need none.
//!
//! The trust file: `[hooks] trust_file` of the settings, else `$TOOLHOST_TRUSTED_HOOKS`, else
//! `$XDG_CONFIG_HOME/toolhost/trusted-hooks.json`, else `~/.config/toolhost/trusted-hooks.json`.
//! It holds one version per script: trusting a new version replaces the old one. It is read on
//! every check, so `toolhost hooks trust` and `untrust` take effect in running hosts too.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tool_api::model::AskResponse;

use super::script::ScriptVersion;
use crate::settings::{HookSettings, TRUST_FILE_ENV};
use crate::ui::Ui;

/// The format version the trust file is written in.
const FORMAT_VERSION: u32 = 1;

/// How many lines of an untrusted script the question shows.
const PREVIEW_LINES: usize = 12;

/// The trust file's contents.
#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    version: u32,
    /// By canonical script path.
    scripts: BTreeMap<PathBuf, TrustedVersion>,
}

/// The one trusted version of a script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustedVersion {
    /// The SHA-256 of the trusted content, as hex.
    pub sha256: String,
    /// When it was trusted, in milliseconds since the Unix epoch.
    pub trusted_at_ms: u64,
}

/// What the trust file says of one script version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustStatus {
    /// This version is trusted.
    Trusted,
    /// No version of the script is trusted.
    Untrusted,
    /// Another version is trusted: the script changed since.
    Changed {
        /// The trusted version's SHA-256.
        trusted_sha256: String,
    },
    /// The trust file cannot be read (nothing counts as trusted).
    Unreadable(TrustError),
}

/// The trust file of workspace hook scripts.
#[derive(Debug, Clone, Default)]
pub struct TrustStore {
    file: Option<PathBuf>,
}

impl TrustStore {
    /// The store in `file`; `None` when no location is known (nothing is trusted, and trusting
    /// fails).
    pub fn new(file: Option<PathBuf>) -> Self {
        Self { file }
    }

    /// The store the settings name, else the default location (see the module docs).
    pub fn from_settings(settings: &HookSettings) -> Self {
        Self::new(crate::settings::trust_file(settings))
    }

    /// Where the trust is kept.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// Whether `script` is trusted as it is.
    pub fn status(&self, script: &ScriptVersion) -> TrustStatus {
        match self.load() {
            Err(e) => TrustStatus::Unreadable(e),
            Ok(contents) => match contents.scripts.get(&script.path) {
                Some(trusted) if trusted.sha256 == script.sha256 => TrustStatus::Trusted,
                Some(trusted) => TrustStatus::Changed {
                    trusted_sha256: trusted.sha256.clone(),
                },
                None => TrustStatus::Untrusted,
            },
        }
    }

    /// Every trusted script, by canonical path.
    pub fn entries(&self) -> Result<BTreeMap<PathBuf, TrustedVersion>, TrustError> {
        self.load().map(|contents| contents.scripts)
    }

    /// Trusts these script versions (each replacing any other trusted version of its script).
    pub fn trust(&self, scripts: &[&ScriptVersion]) -> Result<(), TrustError> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or_default();
        self.update(|contents| {
            for script in scripts {
                contents.scripts.insert(
                    script.path.clone(),
                    TrustedVersion {
                        sha256: script.sha256.clone(),
                        trusted_at_ms: now,
                    },
                );
            }
        })
    }

    /// Stops trusting the scripts at these canonical paths; returns those that were trusted.
    pub fn untrust(&self, paths: &[PathBuf]) -> Result<Vec<PathBuf>, TrustError> {
        let mut removed = Vec::new();
        self.update(|contents| {
            removed = paths
                .iter()
                .filter(|path| contents.scripts.remove(*path).is_some())
                .cloned()
                .collect();
        })?;
        Ok(removed)
    }

    /// The contents; a missing file is an empty store, one that cannot be read or parsed is an
    /// error (so that trusting never overwrites what it could not read).
    fn load(&self) -> Result<TrustFile, TrustError> {
        let Some(file) = &self.file else {
            return Ok(TrustFile::default());
        };
        let text = match std::fs::read_to_string(file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TrustFile::default()),
            Err(e) => {
                return Err(TrustError::Read {
                    file: file.clone(),
                    message: e.to_string(),
                })
            }
        };
        let contents: TrustFile =
            serde_json::from_str(&text).map_err(|e| TrustError::NotATrustFile {
                file: file.clone(),
                message: e.to_string(),
            })?;
        if contents.version != FORMAT_VERSION {
            return Err(TrustError::Version {
                file: file.clone(),
                version: contents.version,
            });
        }
        Ok(contents)
    }

    /// Reads, changes and writes the file back, atomically (another host may be reading it):
    /// a temporary file with mode 0600, renamed over it. Two processes trusting at the same
    /// moment may lose one of the two updates; that script is then asked about again.
    fn update(&self, change: impl FnOnce(&mut TrustFile)) -> Result<(), TrustError> {
        let file = self.file.as_deref().ok_or(TrustError::NoPlace)?;
        let mut contents = self.load()?;
        contents.version = FORMAT_VERSION;
        change(&mut contents);
        let write_error = |e: &dyn std::fmt::Display| TrustError::Write {
            file: file.to_path_buf(),
            message: e.to_string(),
        };
        let json = serde_json::to_vec_pretty(&contents).map_err(|e| write_error(&e))?;
        let write = || -> std::io::Result<()> {
            use std::os::unix::fs::OpenOptionsExt;
            if let Some(parent) = file.parent() {
                std::fs::create_dir_all(parent)?;
            }
            static WRITES: AtomicU64 = AtomicU64::new(0);
            let write = WRITES.fetch_add(1, Ordering::Relaxed);
            let temporary = file.with_extension(format!("json.{}-{write}.tmp", std::process::id()));
            let mut out = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&temporary)?;
            out.write_all(&json)?;
            out.write_all(b"\n")?;
            drop(out);
            std::fs::rename(&temporary, file).inspect_err(|_| {
                let _ = std::fs::remove_file(&temporary);
            })
        };
        write().map_err(|e| write_error(&e))
    }
}

/// Why the trust file could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrustError {
    /// It exists but cannot be read.
    #[error("cannot read {}: {message}", file.display())]
    Read {
        /// The trust file.
        file: PathBuf,
        /// Why.
        message: String,
    },
    /// It holds no trust file.
    #[error("{} is not a trust file: {message}", file.display())]
    NotATrustFile {
        /// The trust file.
        file: PathBuf,
        /// What does not parse.
        message: String,
    },
    /// It was written by a toolhost with another format.
    #[error("{} has format version {version}; this toolhost reads version {FORMAT_VERSION}", file.display())]
    Version {
        /// The trust file.
        file: PathBuf,
        /// Its format version.
        version: u32,
    },
    /// It cannot be written.
    #[error("cannot write {}: {message}", file.display())]
    Write {
        /// The trust file.
        file: PathBuf,
        /// Why.
        message: String,
    },
    /// No environment variable says where it lives.
    #[error("no place to keep trusted hooks: set {TRUST_FILE_ENV}, XDG_CONFIG_HOME or HOME")]
    NoPlace,
}

/// Who may approve an untrusted workspace script on this call.
#[derive(Clone, Copy)]
pub enum Consent<'a> {
    /// `--yes`: it runs, for this process; nothing is remembered.
    All,
    /// The user, asked through this UI; a yes is remembered.
    Ask(&'a dyn Ui),
    /// Nobody (no terminal, no `--yes`, or a subagent's call): it does not run.
    Nobody,
}

/// Decides whether a workspace script may run, and remembers this process's answers and which
/// scripts were already warned about.
#[derive(Debug, Default)]
pub struct TrustGate {
    store: TrustStore,
    state: Mutex<GateState>,
}

#[derive(Debug, Default)]
struct GateState {
    /// Versions (path, SHA-256) approved (`true`) or refused (`false`) in this process.
    decided: HashMap<(PathBuf, String), bool>,
    /// Scripts whose not running was warned about.
    warned: HashSet<PathBuf>,
}

impl TrustGate {
    /// A gate over `store`.
    pub fn new(store: TrustStore) -> Self {
        Self {
            store,
            state: Mutex::default(),
        }
    }

    /// The trust file.
    pub fn store(&self) -> &TrustStore {
        &self.store
    }

    /// Whether `script` may run now. Decisions are made one at a time (a question on the
    /// terminal holds the others back), so parallel calls ask about a script once.
    pub fn allows(&self, script: &ScriptVersion, consent: Consent<'_>) -> bool {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (script.path.clone(), script.sha256.clone());
        if state.decided.get(&key) == Some(&true) {
            return true;
        }
        // Read every time rather than cached: a `toolhost hooks untrust` counts at once.
        let status = self.store.status(script);
        if status == TrustStatus::Trusted {
            return true;
        }
        if state.decided.get(&key) == Some(&false) {
            return false;
        }
        match consent {
            Consent::All => {
                tracing::info!(target: "toolhost::hooks", "running the untrusted workspace hook {} (sha256 {}): approved by --yes for this run only", script.path.display(), script.sha256);
                state.decided.insert(key, true);
                return true;
            }
            Consent::Ask(ui) => {
                if let Some(reply) = ui.ask("hook", &question(script, &status)) {
                    let approved = reply.response == AskResponse::Yes;
                    if approved {
                        if let Err(e) = self.store.trust(&[script]) {
                            tracing::warn!(target: "toolhost::hooks", "the hook {} runs, but its trust cannot be remembered: {e}", script.path.display());
                        }
                    }
                    state.decided.insert(key, approved);
                    return approved;
                }
            }
            Consent::Nobody => {}
        }
        if state.warned.insert(script.path.clone()) {
            tracing::warn!(target: "toolhost::hooks", "{}", not_running_warning(script, &status));
        }
        false
    }
}

/// Why a script did not run and how to trust it.
fn not_running_warning(script: &ScriptVersion, status: &TrustStatus) -> String {
    let path = script.path.display();
    let why = match status {
        TrustStatus::Changed { .. } => "it changed since it was trusted".to_string(),
        TrustStatus::Unreadable(e) => format!("the trust file cannot be read ({e})"),
        TrustStatus::Trusted | TrustStatus::Untrusted => "it is not trusted".to_string(),
    };
    format!(
        "not running the workspace hook {path}: {why}. Hook scripts a workspace ships run only \
         once approved; check it, then run `toolhost hooks trust {path}` (or approve it on a \
         terminal, or pass --yes to run it once)"
    )
}

/// The question asked on a terminal: the script's path, hash and first lines.
fn question(script: &ScriptVersion, status: &TrustStatus) -> String {
    let state = match status {
        TrustStatus::Changed { .. } => "changed since you trusted it",
        _ => "not trusted yet",
    };
    format!(
        "The workspace hook {} is {state}. It would run with your permissions around tool calls.\n\
         sha256 {}\n{}\nRun it, and trust this version from now on?",
        script.path.display(),
        script.sha256,
        script.preview(PREVIEW_LINES)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(dir: &Path, text: &str) -> std::io::Result<ScriptVersion> {
        let path = dir.join("PreToolUse");
        std::fs::write(&path, text)?;
        ScriptVersion::read(&path)
    }

    #[test]
    fn a_trusted_version_stays_trusted_until_it_changes() -> Result<(), Box<dyn std::error::Error>>
    {
        let dir = tempfile::tempdir()?;
        let store = TrustStore::new(Some(dir.path().join("config/trusted-hooks.json")));
        let first = script(dir.path(), "#!/bin/sh\necho one\n")?;
        assert_eq!(store.status(&first), TrustStatus::Untrusted);
        store.trust(&[&first])?;
        assert_eq!(store.status(&first), TrustStatus::Trusted);
        let second = script(dir.path(), "#!/bin/sh\necho two\n")?;
        assert_eq!(
            store.status(&second),
            TrustStatus::Changed {
                trusted_sha256: first.sha256.clone()
            }
        );
        // One version per script: trusting the new one forgets the old.
        store.trust(&[&second])?;
        assert_eq!(store.status(&second), TrustStatus::Trusted);
        assert_eq!(
            store.status(&first),
            TrustStatus::Changed {
                trusted_sha256: second.sha256.clone()
            }
        );
        assert_eq!(store.entries()?.len(), 1);
        assert_eq!(
            store.untrust(std::slice::from_ref(&second.path))?,
            vec![second.path]
        );
        assert_eq!(store.status(&first), TrustStatus::Untrusted);
        Ok(())
    }

    #[test]
    fn an_unreadable_trust_file_trusts_nothing_and_is_not_overwritten(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let file = dir.path().join("trusted-hooks.json");
        std::fs::write(&file, "not json")?;
        let store = TrustStore::new(Some(file.clone()));
        let version = script(dir.path(), "#!/bin/sh\n")?;
        assert!(matches!(store.status(&version), TrustStatus::Unreadable(_)));
        assert!(store.trust(&[&version]).is_err());
        assert_eq!(std::fs::read_to_string(&file)?, "not json");
        Ok(())
    }

    #[test]
    fn nobody_to_ask_means_no_run_and_yes_means_one_run_unremembered(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let file = dir.path().join("trusted-hooks.json");
        let gate = TrustGate::new(TrustStore::new(Some(file.clone())));
        let version = script(dir.path(), "#!/bin/sh\n")?;
        assert!(!gate.allows(&version, Consent::Nobody));
        assert!(!gate.allows(&version, Consent::Nobody));
        assert!(gate.allows(&version, Consent::All));
        assert!(!file.exists());
        // Trusted elsewhere (`toolhost hooks trust`): counts without asking.
        let other = TrustGate::new(TrustStore::new(Some(file)));
        other.store().trust(&[&version])?;
        assert!(other.allows(&version, Consent::Nobody));
        Ok(())
    }
}
