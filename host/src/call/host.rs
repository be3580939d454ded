//! The [`Host`]: loaded plugins, one workspace, one task; what it is built from
//! ([`HostConfig`]), what it holds and how it decides an approval.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock, Weak};

use crate::error::CallError;
use serde_json::{json, Value};
use tool_api::model::{
    ApprovalDecision, ApprovalRequest, DynamicToolsQuery, EgressRoute, Mode, TaskContext,
    ToolContent, TASK_ENDED_METHOD,
};

use super::hooks::{HookInput, Hooks};
use super::options::CallOptions;
use super::outcome::{self, CallOutcome};
use super::prepare::{ContextKey, Contexts};
use super::sessions::Sessions;
use super::task::TaskState;
use super::workers::Workers;
use crate::permissions::{approval, ApprovalMode, CommandPermissions, Workspace};
use crate::plugins::isolation::Placement;
use crate::plugins::{runtime_tools, Context, RegisteredTool, Registry};
use crate::settings::Settings;
use crate::ui::Ui;

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
    pub(super) registry: Arc<RegistrySlot>,
    pub(super) workspace: Workspace,
    /// Shared with the other tasks: a host's settings do not change while it runs.
    pub(super) settings: Arc<Settings>,
    pub(super) approval: ApprovalMode,
    pub(super) command_permissions: CommandPermissions,
    pub(super) ui: Box<dyn Ui>,
    pub(super) task: TaskState,
    pub(super) task_id: String,
    pub(super) hooks: Hooks,
    /// What every hook input of this task starts with (the task and the roots do not change).
    pub(super) hook_input: HookInput,
    pub(super) sessions: Sessions,
    pub(super) contexts: Contexts,
    pub(super) workers: Workers,
    pub(super) placement: Placement,
    /// The egress route of the listings ([`Host::listing_route`]), made on first use and
    /// shared with the other tasks.
    pub(super) listing_route: Arc<OnceLock<Option<EgressRoute>>>,
    pub(super) me: Weak<Host>,
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

    /// Adds the `[plugins]` settings, the workspace roots and the tool set (`--tools`, else
    /// `[tools] set`, with the model of `model.id` and `model.provider`) to the config's
    /// placement.
    pub fn complete_placement(config: &mut HostConfig) {
        config.placement.settings = config.settings.plugins.clone();
        let mut tool_set = config.placement.tool_set.take().unwrap_or_else(|| {
            (config.settings.tools.set.as_deref())
                .and_then(|set| crate::settings::ToolSet::parse(set).ok())
                .unwrap_or_default()
        });
        // What a plugin's set entry may be routed by (Cline's model routing).
        let text = |key: &str| {
            (config.settings.lookup(key))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        tool_set.model = crate::settings::ModelFacts {
            id: text("model.id"),
            provider: text("model.provider"),
        };
        config.placement.tool_set = Some(tool_set);
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
            registry: Arc::new(RegistrySlot::new(registry)),
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
            listing_route: Arc::default(),
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
        runtime_tools::find(&registry, self.runtime_tools_query(Some(name)))
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
                runtime_tools::find(&registry, self.runtime_tools_query(None))
                    .into_iter()
                    .map(|tool| (tool.spec.name.clone(), tool)),
            );
            tools.sort_by(|a, b| a.0.cmp(&b.0));
        }
        tools
    }

    /// What the handlers serving run-time tools are asked: `name`, or every tool.
    fn runtime_tools_query(&self, name: Option<&str>) -> DynamicToolsQuery {
        DynamicToolsQuery {
            name: name.map(str::to_string),
            settings: self.settings.document().clone(),
            egress: self.listing_route(),
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
    pub(super) fn decide_approval_for(
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
        let operation = request.message.lines().next().unwrap_or_default();
        ui.say("approval", &format!("{operation} {verdict} ({how})"), false);
        (decision, how)
    }

    /// The task context for a call, as the handler reads it.
    pub(super) fn context(&self, is_subagent: bool) -> Arc<Context> {
        let key = ContextKey {
            mode: self.task.mode(),
            yolo: self.task.yolo(),
            is_subagent,
        };
        self.contexts.get(key, || TaskContext {
            task_id: self.task_id.clone(),
            cwd: self.workspace.cwd().to_string_lossy().into_owned(),
            workspace_roots: self.workspace.roots(),
            mode: key.mode,
            is_subagent: key.is_subagent,
            yolo: key.yolo,
            mcp: None,
            parallel_tool_calling: true,
            path_verdicts: Vec::new(),
        })
    }

    /// The task's context as a plugin reads it (its workspace, mode), for requests made
    /// outside a call (an MCP client's `resources/read` of a plugin's resource, say).
    pub fn task_context(&self) -> Value {
        let context = self.context(false);
        serde_json::from_str(context.text()).unwrap_or_default()
    }

    /// Updates the task state for a result and wraps it.
    pub(super) fn finish(
        &self,
        name: &str,
        description: String,
        result: Result<ToolContent, CallError>,
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
    pub(super) fn not_run(&self, name: &str, error: CallError) -> CallOutcome {
        self.finish(name, format!("[{name}]"), Err(error), None)
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

/// The registry shared by the hosts over the same plugins, and who wants to know when its
/// tools change.
pub(super) struct RegistrySlot {
    /// The current snapshot; hot swap replaces it while calls in flight keep theirs.
    pub(super) current: RwLock<Arc<Registry>>,
    pub(super) listeners: Mutex<Vec<Listener>>,
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
