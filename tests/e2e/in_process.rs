//! A host loaded into the test process, with a UI that records what it is told.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use tool_api::model::AskReply;
use toolhost::Settings;
use toolhost::Ui;
use toolhost::{ApprovalMode, Workspace};
use toolhost::{Host, HostConfig};

/// A UI event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    pub kind: String,
    pub text: String,
    pub partial: bool,
}

/// Records every `say`; nobody answers questions.
#[derive(Debug, Default, Clone)]
pub struct RecordingUi {
    pub said: Arc<Mutex<Vec<Said>>>,
}

impl RecordingUi {
    /// The complete events of one kind, in order.
    pub fn of_kind(&self, kind: &str) -> Vec<String> {
        self.said
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.kind == kind && !s.partial)
            .map(|s| s.text.clone())
            .collect()
    }
}

impl Ui for RecordingUi {
    fn say(&self, kind: &str, text: &str, partial: bool) {
        self.said.lock().unwrap().push(Said {
            kind: kind.to_string(),
            text: text.to_string(),
            partial,
        });
    }

    fn ask(&self, _kind: &str, _text: &str) -> Option<AskReply> {
        None
    }
}

/// A host over `plugin_dir` with the workspace `cwd`, default settings and no user.
pub fn host(plugin_dir: &Path, cwd: &Path) -> (Arc<Host>, RecordingUi) {
    host_with(plugin_dir, cwd, Settings::default())
}

/// A host over `plugin_dir` with the workspace `cwd`, the given settings and no user.
pub fn host_with(plugin_dir: &Path, cwd: &Path, settings: Settings) -> (Arc<Host>, RecordingUi) {
    let ui = RecordingUi::default();
    let host = host_asking(
        plugin_dir,
        cwd,
        settings,
        ApprovalMode::DenyUnlessAuto,
        Box::new(ui.clone()),
    );
    (host, ui)
}

/// The tasks made so far in this process.
static TASKS: AtomicU64 = AtomicU64::new(1);

/// A host over `plugin_dir` with the workspace `cwd`, the given settings, approval mode and UI.
pub fn host_asking(
    plugin_dir: &Path,
    cwd: &Path,
    settings: Settings,
    approval: ApprovalMode,
    ui: Box<dyn Ui>,
) -> Arc<Host> {
    // The egress policy's files stay with the test run, not in the user's home.
    static EGRESS: OnceLock<tempfile::TempDir> = OnceLock::new();
    let egress = EGRESS.get_or_init(|| tempfile::tempdir().expect("temp dir"));
    let mut settings = settings;
    let place = |name: &str| Some(egress.path().join(name).display().to_string());
    settings.egress.log_dir = settings.egress.log_dir.or_else(|| place("log"));
    settings.egress.allowed_file = settings
        .egress
        .allowed_file
        .or_else(|| place("allowed.txt"));
    Host::new(HostConfig {
        plugin_dirs: vec![plugin_dir.to_path_buf()],
        workspace: Workspace::new(cwd).expect("a workspace"),
        settings,
        approval,
        command_permissions: toolhost::CommandPermissions::from_env(),
        ui,
        // A task of its own: what a plugin keeps per task goes when its host is dropped.
        task_id: format!("test-task-{}", TASKS.fetch_add(1, Ordering::Relaxed)),
        placement: toolhost::Placement {
            default: Some(toolhost::Isolation::InProcess),
            ..toolhost::Placement::default()
        },
    })
}
