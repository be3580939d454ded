//! More tasks over the same plugins.
//!
//! A long-running frontend serving several clients (`toolhost mcp`, one MCP session each) gives
//! every client a task of its own: [`Host::new_task`] builds a host that shares the plugins
//! (the registry, hot swap included) and the settings, with its own workspace, UI, approval
//! mode, read cache, mistake counter, sessions and task id; dropping it ends the task
//! (`task_ended` to the handlers).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use super::hooks::{HookInput, Hooks};
use super::host::Host;
use super::sessions::Sessions;
use super::task::TaskState;
use super::workers::Workers;
use crate::permissions::{ApprovalMode, Workspace};
use crate::ui::Ui;

/// What a new task over the same plugins has of its own ([`Host::new_task`]).
pub struct TaskConfig {
    /// Its workspace.
    pub workspace: Workspace,
    /// Its user interface.
    pub ui: Box<dyn Ui>,
    /// How its approvals are decided.
    pub approval: ApprovalMode,
}

/// A new task id: the time, the process and a counter.
fn new_task_id() -> String {
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
            listing_route: self.listing_route.clone(),
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
}
