//! The host and the flow of one tool call.
//!
//! The caller finds the handler; then the call runs on a thread of its own ([`pending`]):
//! prepare the parameters ([`prepare`]), check the plugin, the required parameters and the
//! path parameters ([`checks`]), ask for approval ([`crate::permissions::approval`]), close the
//! sessions other tools close ([`sessions`]), run the PreToolUse hooks, run the handler
//! ([`run`]) while the caller keeps its timeout, run the PostToolUse hooks, and turn whatever
//! happened into a result the model can read ([`outcome`]). A failure of any kind (error,
//! panic, timeout, bad input) becomes a tool error; it never reaches the host's own control
//! flow.

pub(crate) mod arguments;
mod checks;
mod flow;
pub(crate) mod hooks;
mod hot_swap;
pub mod outcome;
mod pending;
mod prepare;
mod recheck;
mod run;
mod services;
mod sessions;
pub mod task;
mod task_host;
pub(crate) mod workers;

use std::path::PathBuf;
use std::sync::{Arc, PoisonError, Weak};

use serde_json::{json, Map, Value};
use tool_api::abi::{ToolError, ToolErrorKind};
use tool_api::model::{
    ApprovalDecision, ApprovalRequest, Mode, TaskContext, ToolContent, TASK_ENDED_METHOD,
};
use tool_api::texts;

use crate::call::hooks::{HookInput, Hooks};
use crate::permissions::{approval, ApprovalMode, CommandPermissions, Workspace};
use crate::plugins::isolation::Placement;
use crate::plugins::{runtime_tools, CallData, RegisteredTool, Registry};
use crate::settings::Settings;
use crate::ui::Ui;

pub use outcome::{CallOutcome, TaskCancelled};
pub use pending::PendingCall;
pub use task::TaskState;
pub use task_host::{CallOptions, CallScope, TaskConfig};
pub use workers::Workers;

use prepare::{ContextKey, Contexts, PreparedCall};
use sessions::Sessions;

/// How deep tools may call tools through `invoke_tool`.
const MAX_NESTING: u32 = 8;

/// Everything needed to build a [`Host`].
pub struct HostConfig {
    /// Plugin directories, in priority order.
    pub plugin_dirs: Vec<PathBuf>,
    /// The workspace: one root ([`Workspace::new`]) or several named ones
    /// ([`Workspace::with_roots`] of [`crate::RootSpec`]s, the first the primary).
    pub workspace: Workspace,
    /// The settings.
    pub settings: Settings,
    /// How approvals are decided.
    pub approval: ApprovalMode,
    /// The command permissions execute_command is checked against
    /// (`CommandPermissions::from_env()` reads `CLINE_COMMAND_PERMISSIONS`).
    pub command_permissions: CommandPermissions,
    /// The user interface.
    pub ui: Box<dyn Ui>,
    /// The task's id.
    pub task_id: String,
    /// Where plugins run (the `[plugins]` section of `settings` and the workspace roots are
    /// added to it).
    pub placement: Placement,
}

/// A running host: loaded plugins, one workspace, one task.
pub struct Host {
    /// Shared with the other tasks over the same plugins ([`Host::new_task`]).
    registry: Arc<task_host::RegistrySlot>,
    workspace: Workspace,
    /// Shared with the other tasks: a host's settings do not change while it runs.
    settings: Arc<Settings>,
    approval: ApprovalMode,
    command_permissions: CommandPermissions,
    ui: Box<dyn Ui>,
    task: TaskState,
    task_id: String,
    hooks: Hooks,
    /// What every hook input of this task starts with (the task and the roots do not change).
    hook_input: HookInput,
    sessions: Sessions,
    contexts: Contexts,
    workers: Workers,
    placement: Placement,
    me: Weak<Host>,
}

impl Host {
    /// Loads the plugins and builds the host.
    pub fn new(mut config: HostConfig) -> Arc<Self> {
        Self::complete_placement(&mut config);
        let registry = Registry::load(&config.plugin_dirs, &config.placement);
        Self::with_registry(config, registry)
    }

    /// Like [`Host::new`], but loads private copies of the libraries, so that their files may
    /// be replaced while the host runs ([`Host::reload_library`], [`Host::watch`]).
    pub fn new_for_hot_swap(mut config: HostConfig) -> Arc<Self> {
        Self::complete_placement(&mut config);
        let registry = Registry::load_copies(&config.plugin_dirs, &config.placement);
        Self::with_registry(config, registry)
    }

    /// Adds the `[plugins]` settings and the workspace roots to the config's placement.
    pub fn complete_placement(config: &mut HostConfig) {
        config.placement.settings = config.settings.plugins.clone();
        config.placement.workspace_roots = config
            .workspace
            .roots()
            .into_iter()
            .map(|r| PathBuf::from(r.path))
            .collect();
    }

    /// Builds the host around an already loaded registry (a curated bundle's: see
    /// [`crate::plugins::bundle`]); `config.plugin_dirs` is then not searched.
    pub fn with_registry(config: HostConfig, registry: Registry) -> Arc<Self> {
        let task = TaskState::default();
        if config.settings.lookup("agent.mode").and_then(Value::as_str) == Some("plan") {
            task.set_mode(Mode::Plan);
        }
        task.set_yolo(
            config
                .settings
                .lookup("agent.yolo")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        );
        let roots: Vec<PathBuf> = config
            .workspace
            .roots()
            .into_iter()
            .map(|r| PathBuf::from(r.path))
            .collect();
        let hooks = Hooks::discover(&config.settings.hooks, &roots);
        let hook_input = HookInput {
            task_id: config.task_id.clone(),
            workspace_roots: config
                .workspace
                .roots()
                .into_iter()
                .map(|r| r.path)
                .collect(),
        };
        Arc::new_cyclic(|me| Self {
            registry: Arc::new(task_host::RegistrySlot::new(registry)),
            workspace: config.workspace,
            settings: Arc::new(config.settings),
            approval: config.approval,
            command_permissions: config.command_permissions,
            ui: config.ui,
            task,
            task_id: config.task_id,
            hooks,
            hook_input,
            sessions: Sessions::default(),
            contexts: Contexts::default(),
            workers: Workers::default(),
            placement: config.placement,
            me: me.clone(),
        })
    }

    /// The current registry of tools.
    pub fn registry(&self) -> Arc<Registry> {
        self.registry
            .current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The workspace.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The command permissions.
    pub fn command_permissions(&self) -> &CommandPermissions {
        &self.command_permissions
    }

    /// The task state.
    pub fn task(&self) -> &TaskState {
        &self.task
    }

    /// The user interface.
    pub fn ui(&self) -> &dyn Ui {
        self.ui.as_ref()
    }

    /// The tool called `name`: a registered one, else a run-time tool of a plugin that serves
    /// them (an MCP server's, an HTTP tool's: see [`crate::plugins::runtime_tools`]).
    pub fn lookup(&self, name: &str) -> Option<Arc<RegisteredTool>> {
        let registry = self.registry();
        if let Some(tool) = registry.get(name) {
            return Some(tool.clone());
        }
        if registry.dynamic_handlers().is_empty() {
            return None;
        }
        runtime_tools::find(&registry, self.settings.document(), Some(name))
            .into_iter()
            .next()
            .map(Arc::new)
    }

    /// Every tool that can be called now, sorted by name: the registered ones and the run-time
    /// ones (listing those may start the MCP servers of the settings).
    pub fn tools(&self) -> Vec<(String, RegisteredTool)> {
        let registry = self.registry();
        let mut tools: Vec<(String, RegisteredTool)> = registry
            .tools()
            .map(|(name, tool)| (name.to_string(), tool.clone()))
            .collect();
        if !registry.dynamic_handlers().is_empty() {
            tools.extend(
                runtime_tools::find(&registry, self.settings.document(), None)
                    .into_iter()
                    .map(|tool| (tool.spec.name.clone(), tool)),
            );
            tools.sort_by(|a, b| a.0.cmp(&b.0));
        }
        tools
    }

    /// Runs one tool call from the model.
    pub fn call(&self, name: &str, params_json: &str) -> CallOutcome {
        self.call_with(name, params_json, &CallOptions::default())
    }

    /// Runs one tool call from the model with what its frontend gives it: a cancellation and
    /// a UI of its own.
    pub fn call_with(&self, name: &str, params_json: &str, options: &CallOptions) -> CallOutcome {
        self.call_nested_with(name, params_json, 0, false, options)
    }

    /// Runs one tool call from the model of a tool already looked up ([`Host::lookup`]).
    pub fn call_tool(&self, tool: &Arc<RegisteredTool>, params_json: &str) -> CallOutcome {
        self.call_and_wait(tool, params_json, 0, false, &CallOptions::default())
    }

    /// Runs a tool call at a nesting depth (0 for calls from the model). `subagent` marks
    /// calls a subagent makes: they carry the subagent flag in their context and never ask the
    /// user (what is not auto-approved is denied).
    pub fn call_nested(
        &self,
        name: &str,
        params_json: &str,
        depth: u32,
        subagent: bool,
    ) -> CallOutcome {
        self.call_nested_with(name, params_json, depth, subagent, &CallOptions::default())
    }

    /// [`Host::call_nested`] under the options of the calling call.
    pub(crate) fn call_nested_with(
        &self,
        name: &str,
        params_json: &str,
        depth: u32,
        subagent: bool,
        options: &CallOptions,
    ) -> CallOutcome {
        match self.lookup(name) {
            Some(tool) => self.call_and_wait(&tool, params_json, depth, subagent, options),
            None => CallOutcome::unknown_tool(name),
        }
    }

    /// The short description of a call that prefixes its result (`[read_file for 'a.txt']`).
    pub fn describe(&self, name: &str, params: &Map<String, Value>) -> String {
        match self.lookup(name) {
            Some(tool) => run::describe(
                &tool,
                name,
                &PreparedCall::new(params, self.context_json(false)),
            ),
            None => format!("[{name}]"),
        }
    }

    /// Routes a still-streaming call to the tool's partial handler: UI updates only, never a
    /// result. Unknown tools, tools without a partial handler and failures are ignored (a
    /// partial block is a preview; the complete block reports errors).
    pub fn call_partial(&self, name: &str, params: &Map<String, Value>) {
        let registry = self.registry();
        let Some(tool) = registry.get(name) else {
            return;
        };
        if !tool.spec.partial || tool.handler.plugin.failure().is_some() {
            return;
        }
        let services = self.services(tool, Arc::default(), 0, false, &CallOptions::default());
        let params_json = serde_json::to_string(params).unwrap_or_default();
        let context_json = self.context_json(false);
        let data = CallData {
            tool_name: name,
            call_id: "",
            params_json: &params_json,
            context_json: &context_json,
        };
        if let Err(e) = tool.handler.handler.partial(&data, &services) {
            if e.kind == ToolErrorKind::PANIC {
                tool.handler.plugin.mark_failed(&e.message);
            }
            tracing::debug!(target: "toolhost::call", "partial handler of {name}: {e}");
        }
    }

    /// Applies the approval policy: `--yes`, subagents and auto-approved categories go ahead;
    /// otherwise the user is asked, or, with nobody to ask, the request is denied.
    pub fn decide_approval(&self, request: &ApprovalRequest) -> ApprovalDecision {
        self.decide_approval_as(request, false)
    }

    /// [`Host::decide_approval`] for a call a subagent made (never asks the user) or not.
    pub fn decide_approval_as(
        &self,
        request: &ApprovalRequest,
        subagent: bool,
    ) -> ApprovalDecision {
        self.decide_approval_in(request, subagent, self.ui.as_ref())
    }

    /// [`Host::decide_approval_as`], asking `ui` (a call's own).
    pub(crate) fn decide_approval_in(
        &self,
        request: &ApprovalRequest,
        subagent: bool,
        ui: &dyn Ui,
    ) -> ApprovalDecision {
        let inside = request
            .path
            .as_deref()
            .is_none_or(|p| self.workspace.verdict(p).inside_workspace);
        self.decide_approval_for(request, inside, subagent, ui).0
    }

    /// [`Host::decide_approval`] when it is already known whether the operation stays inside
    /// the workspace, asking `ui`, and how it was decided ([`approval::decide`]). The decision
    /// is shown there as an `approval` event.
    fn decide_approval_for(
        &self,
        request: &ApprovalRequest,
        inside: bool,
        subagent: bool,
        ui: &dyn Ui,
    ) -> (ApprovalDecision, &'static str) {
        let asked = approval::Asked {
            mode: self.approval,
            auto_approve: &self.settings.auto_approve,
            inside,
            subagent,
            ui,
        };
        let (decision, how) = approval::decide(request, &asked);
        let verdict = if decision.approved {
            "approved"
        } else {
            "denied"
        };
        ui.say(
            "approval",
            &format!("{}: {verdict} ({how})", request.message),
            false,
        );
        (decision, how)
    }

    /// The task context for a call, as the handler reads it.
    fn context_json(&self, is_subagent: bool) -> Arc<str> {
        let key = ContextKey {
            mode: self.task.mode(),
            yolo: self.task.yolo(),
            is_subagent,
        };
        self.contexts.json(key, || TaskContext {
            task_id: self.task_id.clone(),
            cwd: self.workspace.cwd().to_string_lossy().into_owned(),
            workspace_roots: self.workspace.roots(),
            mode: key.mode,
            is_subagent: key.is_subagent,
            yolo: key.yolo,
            parallel_tool_calling: true,
            path_verdicts: Vec::new(),
        })
    }

    /// Updates the task state for a result and wraps it.
    fn finish(
        &self,
        name: &str,
        description: String,
        result: Result<ToolContent, ToolError>,
        task_cancelled: Option<outcome::TaskCancelled>,
    ) -> CallOutcome {
        match &result {
            Ok(_) => self.task.reset_mistakes(),
            Err(e) if e.kind.is_mistake() => self.task.add_mistake(),
            Err(_) => {}
        }
        CallOutcome {
            tool: name.to_string(),
            description,
            result,
            task_cancelled,
            failed_mcp_result: None,
        }
    }

    /// The outcome of a call of `name` that ended with `error` before its handler could say
    /// what it was (bad parameters, no thread, a lost thread).
    fn not_run(&self, name: &str, error: ToolError) -> CallOutcome {
        self.finish(name, format!("[{name}]"), Err(error), None)
    }
}

impl Drop for Host {
    /// The task is over: every handler hears `task_ended`, so what a plugin keeps per task
    /// (a browser, say) closes with it. Handlers whose library was never opened kept nothing.
    fn drop(&mut self) {
        let registry = self.registry();
        let payload = json!({"task_id": self.task_id});
        let mut notified = std::collections::HashSet::new();
        for (_, tool) in registry.tools() {
            if tool.handler.handler.is_open() && notified.insert(tool.handler.id.clone()) {
                let _ = tool.handler.handler.request(TASK_ENDED_METHOD, &payload);
            }
        }
    }
}

fn denied(feedback: Option<String>) -> ToolError {
    ToolError::new(
        ToolErrorKind::DENIED,
        texts::denied_with_feedback(texts::TOOL_DENIED, feedback.as_deref()),
    )
}
