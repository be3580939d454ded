//! What every MCP server of one `toolhost mcp` process shares ([`Shared`]): each HTTP session,
//! and each 2026-07-28 request over HTTP (which has no session), is served by a server of its
//! own, and these outlive them.

use std::sync::Arc;
use std::time::Duration;

use rmcp::task_manager::TaskManager;
use tokio::sync::broadcast;

use super::input_required::Parked;
use super::roots::root_specs;
use super::ui::{ClientLink, McpUi};
use crate::Host;

/// The state of one `toolhost mcp` process's servers.
pub struct Shared {
    /// Calls waiting for a 2026-07-28 client's retry.
    pub parked: Parked,
    /// The calls that are tasks of the tasks extension.
    pub tasks: TaskManager,
    /// The task 2026-07-28 requests over HTTP run in: they carry no session, so one
    /// conversation (its read cache, mistake count, focus chain and browser) runs through all
    /// of them; made on first use.
    conversation: tokio::sync::Mutex<Option<Arc<Host>>>,
    /// Rings once each time the tools change (a hot swap), for `subscriptions/listen`.
    tool_changes: broadcast::Sender<()>,
}

impl Shared {
    /// The shared state of servers over `base`'s plugins; questions wait `ask_timeout`.
    pub fn new(base: &Host, ask_timeout: Duration) -> Arc<Self> {
        let (tool_changes, _) = broadcast::channel(16);
        let rings = tool_changes.clone();
        base.on_tools_changed(move || {
            // No listener now is fine: a later one lists the tools when it subscribes.
            let _ = rings.send(());
            true
        });
        Arc::new(Self {
            parked: Parked::new(ask_timeout),
            tasks: TaskManager::new(),
            conversation: tokio::sync::Mutex::default(),
            tool_changes,
        })
    }

    /// The conversation task of 2026-07-28 requests over HTTP: a task of `base` over its
    /// workspace, made on first use.
    pub async fn conversation(&self, base: &Arc<Host>) -> Result<Arc<Host>, String> {
        let mut conversation = self.conversation.lock().await;
        if let Some(task) = conversation.as_ref() {
            return Ok(task.clone());
        }
        let workspace = crate::permissions::Workspace::with_roots(&root_specs(base.workspace()))
            .map_err(|e| format!("cannot open the workspace: {e}"))?;
        let task = base.new_task(crate::TaskConfig {
            workspace,
            // A call's questions and events go to its request's own link.
            ui: Box::new(McpUi::new(ClientLink::default())),
            approval: base.approval_mode(),
        });
        *conversation = Some(task.clone());
        Ok(task)
    }

    /// A receiver that rings when the tools change.
    pub fn tool_changes(&self) -> broadcast::Receiver<()> {
        self.tool_changes.subscribe()
    }
}
