//! More tasks over the same plugins, and what a frontend gives one call.
//!
//! A long-running frontend serving several clients (`toolhost mcp`, one MCP session each) gives
//! every client a task of its own: [`Host::new_task`] builds a host that shares the plugins
//! (the registry, hot swap included) and the settings, with its own workspace, UI, approval
//! mode, read cache, mistake counter, sessions and task id; dropping it ends the task
//! (`task_ended` to the handlers). [`CallOptions`] carry what a frontend gives one call: a
//! cancellation it can trigger, a UI of the call's own (progress, questions) and a
//! [`CallScope`] to run on the call's thread.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use super::{Host, Sessions, TaskState, Workers};
use crate::call::hooks::{HookInput, Hooks};
use crate::permissions::{ApprovalMode, Workspace};
use crate::plugins::handler::Cancellation;
use crate::plugins::Registry;
use crate::ui::Ui;

/// What one call gets from the frontend that makes it.
#[derive(Clone, Default)]
pub struct CallOptions {
    /// Cancelling it cancels the call (the tool sees a cancellation of its own, a child of
    /// this one, so that the call's timeout does not cancel the frontend's).
    pub cancellation: Option<Arc<Cancellation>>,
    /// Where the call's UI events and questions go instead of the host's UI.
    pub ui: Option<Arc<dyn Ui>>,
    /// What runs around the call on its thread (and around the calls it makes).
    pub scope: CallScope,
}

/// What a frontend runs around each call on the call's own thread: where it sets what
/// belongs to the call and is found by thread (the MCP frontend: which session the messages
/// logged during the call go to).
#[derive(Clone, Default)]
pub struct CallScope(Option<Arc<Around>>);

/// Runs the call it is given.
type Around = dyn Fn(&mut dyn FnMut()) + Send + Sync;

impl CallScope {
    /// A scope that runs each call inside `around` (which must run the call it is given).
    pub fn new(around: impl Fn(&mut dyn FnMut()) + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(around)))
    }

    /// Runs `work` inside the scope; `None` if the scope did not run it.
    pub(super) fn in_scope<T>(&self, work: impl FnOnce() -> T) -> Option<T> {
        let Some(around) = &self.0 else {
            return Some(work());
        };
        let mut work = Some(work);
        let mut done = None;
        around(&mut || {
            if let Some(work) = work.take() {
                done = Some(work());
            }
        });
        done
    }
}

impl CallOptions {
    /// The cancellation the call runs under: a child of the frontend's, else a new one.
    pub(super) fn call_cancellation(&self) -> Arc<Cancellation> {
        self.cancellation
            .as_ref()
            .map_or_else(Arc::default, Cancellation::child)
    }
}

/// What a new task over the same plugins has of its own ([`Host::new_task`]).
pub struct TaskConfig {
    /// Its workspace.
    pub workspace: Workspace,
    /// Its user interface.
    pub ui: Box<dyn Ui>,
    /// How its approvals are decided.
    pub approval: ApprovalMode,
}

/// The registry shared by the hosts over the same plugins, and who wants to know when its
/// tools change.
pub(super) struct RegistrySlot {
    /// The current snapshot; hot swap replaces it while calls in flight keep theirs.
    pub(super) current: RwLock<Arc<Registry>>,
    listeners: Mutex<Vec<Listener>>,
}

/// Answers whether it still wants to hear of changes.
type Listener = Box<dyn Fn() -> bool + Send + Sync>;

impl RegistrySlot {
    pub(super) fn new(registry: Registry) -> Self {
        Self {
            current: RwLock::new(Arc::new(registry)),
            listeners: Mutex::new(Vec::new()),
        }
    }

    /// Tells every listener that the registry changed; drops those that no longer listen.
    pub(super) fn changed(&self) {
        self.listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|listener| listener());
    }
}

/// A new task id: the time, the process and a counter.
pub(super) fn new_task_id() -> String {
    static TASKS: AtomicU64 = AtomicU64::new(1);
    format!(
        "{}-{}-{}",
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or_default(),
        std::process::id(),
        TASKS.fetch_add(1, Ordering::Relaxed)
    )
}

impl Host {
    /// A host for another task over this host's plugins and settings: the registry is shared
    /// (a hot swap reaches both), everything of the task is its own (a fresh read cache,
    /// mistake counter, browser and other sessions). An isolated plugin serves a task over
    /// other workspace roots from a worker of its own, granted those roots.
    pub fn new_task(&self, config: TaskConfig) -> Arc<Host> {
        let task_id = new_task_id();
        let task = TaskState::default();
        task.set_mode(self.task.mode());
        task.set_yolo(self.task.yolo());
        let roots: Vec<std::path::PathBuf> = config
            .workspace
            .roots()
            .into_iter()
            .map(|r| r.path.into())
            .collect();
        let hooks = Hooks::discover(&self.settings.hooks, &roots);
        let hook_input = HookInput {
            task_id: task_id.clone(),
            workspace_roots: config
                .workspace
                .roots()
                .into_iter()
                .map(|r| r.path)
                .collect(),
        };
        Arc::new_cyclic(|me| Host {
            registry: self.registry.clone(),
            workspace: config.workspace,
            settings: self.settings.clone(),
            approval: config.approval,
            command_permissions: self.command_permissions.clone(),
            ui: config.ui,
            task,
            task_id,
            hooks,
            hook_input,
            sessions: Sessions::default(),
            contexts: Default::default(),
            workers: Workers::default(),
            placement: self.placement.clone(),
            me: me.clone(),
        })
    }

    /// Calls `listener` whenever the registered tools may have changed (a hot swap), from the
    /// thread that changed them, until it answers `false`.
    pub fn on_tools_changed(&self, listener: impl Fn() -> bool + Send + Sync + 'static) {
        self.registry
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Box::new(listener));
    }

    /// The task's id.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }

    /// How approvals are decided for this task.
    pub fn approval_mode(&self) -> ApprovalMode {
        self.approval
    }

    /// The UI of a call made with `options`.
    pub(super) fn ui_for<'a>(&'a self, options: &'a CallOptions) -> &'a dyn Ui {
        options.ui.as_deref().unwrap_or(self.ui.as_ref())
    }
}
