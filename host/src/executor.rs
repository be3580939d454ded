//! The host and the flow of one tool call.
//!
//! For every call: find the handler, parse the parameters, check the required ones, apply the
//! workspace policies to the path parameters, ask for approval, run the handler on its own
//! thread under a timeout, and turn whatever happened into a result the model can read. A
//! failure of any kind (error, panic, timeout, bad input) becomes a tool error; it never
//! reaches the host's own control flow.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError, RwLock, Weak};
use std::time::Duration;

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RErr, ROk, RStr};
use serde_json::{json, Map, Value};
use tool_api::abi::{HostServices_TO, ToolCall, ToolError, ToolErrorKind};
use tool_api::model::{
    ApprovalDecision, ApprovalRequest, AskResponse, ContentBlock, Mode, PathVerdict, TaskContext,
    ToolContent,
};
use tool_api::texts;

use crate::hooks::trust::Consent;
use crate::hooks::{HookInput, HookName, HookOutcome, Hooks, PRE_TOOL_USE_EXEMPT};
use crate::outcome::CallOutcome;
use crate::parser::{coerce_to_schema, parse_arguments};
use crate::plugins::{dynamic, RegisteredTool, Registry};
use crate::policy::{auto_approves, ApprovalMode, Workspace};
use crate::services::{CallServices, Cancellation};
use crate::settings::Settings;
use crate::task::TaskState;
use crate::ui::Ui;
use crate::workers::Workers;

/// How deep tools may call tools through `invoke_tool`.
const MAX_NESTING: u32 = 8;

/// Everything needed to build a [`Host`].
pub struct HostConfig {
    /// Plugin directories, in priority order.
    pub plugin_dirs: Vec<PathBuf>,
    /// The workspace.
    pub workspace: Workspace,
    /// The settings.
    pub settings: Settings,
    /// How approvals are decided.
    pub approval: ApprovalMode,
    /// The user interface.
    pub ui: Box<dyn Ui>,
    /// The task's id.
    pub task_id: String,
}

/// A running host: loaded plugins, one workspace, one task.
pub struct Host {
    /// The current snapshot; hot swap replaces it while calls in flight keep theirs.
    registry: RwLock<Arc<Registry>>,
    workspace: Workspace,
    settings: Settings,
    approval: ApprovalMode,
    ui: Box<dyn Ui>,
    task: TaskState,
    task_id: String,
    hooks: Hooks,
    /// What every hook input of this task starts with (the task and the roots do not change).
    hook_input: HookInput,
    /// Whether browser_action ran since the task's browser was last closed: only then can
    /// another tool have a browser to close.
    browser_used: AtomicBool,
    /// The task context as handlers read it, by what may differ between calls (at most 8).
    contexts: Mutex<Vec<(ContextKey, Arc<str>)>>,
    workers: Workers,
    me: Weak<Host>,
}

impl Host {
    /// Loads the plugins and builds the host.
    pub fn new(config: HostConfig) -> Arc<Self> {
        let registry = Registry::load(&config.plugin_dirs);
        Self::with_registry(config, registry)
    }

    /// Like [`Host::new`], but loads private copies of the libraries, so that their files may
    /// be replaced while the host runs ([`Host::reload_library`], [`Host::watch`]).
    pub fn new_for_hot_swap(config: HostConfig) -> Arc<Self> {
        let registry = Registry::load_copies(&config.plugin_dirs);
        Self::with_registry(config, registry)
    }

    /// Builds the host around an already loaded registry (a curated bundle's: see
    /// [`crate::bundle`]); `config.plugin_dirs` is then not searched.
    pub fn with_registry(config: HostConfig, registry: Registry) -> Arc<Self> {
        let task = TaskState::default();
        if config.settings.lookup("agent.mode").and_then(Value::as_str) == Some("plan") {
            task.set_mode(tool_api::model::Mode::Plan);
        }
        task.set_yolo(
            config
                .settings
                .lookup("agent.yolo")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        );
        let hooks = Hooks::discover(&config.settings.hooks, config.workspace.cwd());
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
            registry: RwLock::new(Arc::new(registry)),
            workspace: config.workspace,
            settings: config.settings,
            approval: config.approval,
            ui: config.ui,
            task,
            task_id: config.task_id,
            hooks,
            hook_input,
            browser_used: AtomicBool::new(false),
            contexts: Mutex::default(),
            workers: Workers::default(),
            me: me.clone(),
        })
    }

    /// The current registry of tools.
    pub fn registry(&self) -> Arc<Registry> {
        self.registry
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Loads a new build of the library `file` beside the running one and switches new calls
    /// to it; calls in flight finish on the old generation, which is shut down after them. A
    /// build that fails to load, or an older version without `allow_downgrade`, leaves the
    /// running version in place. Returns what was loaded.
    pub fn reload_library(&self, file: &Path, allow_downgrade: bool) -> Result<String, String> {
        let info = crate::plugins::loader::load_copy(file)
            .map_err(|e| format!("{}: {e}; the running version stays", file.display()))?;
        let mut slot = self
            .registry
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(running) = slot.plugin(&info.name) {
            if info.version < running.version && !allow_downgrade {
                return Err(format!(
                    "{}: plugin '{}' {} is older than the running {}; it was not loaded (allow downgrades to load it)",
                    file.display(),
                    info.name,
                    info.version,
                    running.version
                ));
            }
        }
        let loaded = format!("{} {}", info.name, info.version);
        let next = slot.with_replaced(file, info);
        for warning in next.warnings() {
            tracing::warn!(target: "toolhost::plugins", "{warning}");
        }
        *slot = Arc::new(next);
        Ok(loaded)
    }

    /// Watches the plugin directories and reloads each library that changes, on a thread of
    /// its own, for as long as the host lives.
    pub fn watch(self: &Arc<Self>, dirs: &[PathBuf], allow_downgrade: bool) -> std::io::Result<()> {
        let mut watcher =
            crate::plugins::watch::LibraryWatcher::new(dirs).map_err(std::io::Error::other)?;
        let host = Arc::downgrade(self);
        std::thread::Builder::new().name("plugin-watcher".to_string()).spawn(move || {
            while let Some(changed) = watcher.next_changes() {
                let Some(host) = host.upgrade() else { break };
                for file in changed {
                    match host.reload_library(&file, allow_downgrade) {
                        Ok(loaded) => tracing::info!(target: "toolhost::plugins", "hot swap: {} now serves {loaded}", file.display()),
                        Err(message) => tracing::warn!(target: "toolhost::plugins", "hot swap: {message}"),
                    }
                }
            }
        })?;
        Ok(())
    }

    /// The workspace.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
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
    /// them (an MCP server's, an HTTP tool's: see [`crate::plugins::dynamic`]).
    pub fn lookup(&self, name: &str) -> Option<Arc<RegisteredTool>> {
        let registry = self.registry();
        if let Some(tool) = registry.get(name) {
            return Some(tool.clone());
        }
        if registry.dynamic_handlers().is_empty() {
            return None;
        }
        dynamic::find(&registry, self.settings.document(), Some(name))
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
                dynamic::find(&registry, self.settings.document(), None)
                    .into_iter()
                    .map(|tool| (tool.spec.name.clone(), tool)),
            );
            tools.sort_by(|a, b| a.0.cmp(&b.0));
        }
        tools
    }

    /// Runs one tool call from the model.
    pub fn call(&self, name: &str, params_json: &str) -> CallOutcome {
        self.call_nested(name, params_json, 0, false)
    }

    /// Runs a tool call at a nesting depth (0 for calls from the model).
    /// `subagent` marks calls a subagent makes: they carry the subagent flag in their context
    /// and never ask the user (what is not auto-approved is denied).
    pub fn call_nested(
        &self,
        name: &str,
        params_json: &str,
        depth: u32,
        subagent: bool,
    ) -> CallOutcome {
        let Some(tool) = self.lookup(name) else {
            return CallOutcome::unknown_tool(name);
        };
        let mut params = match parse_params(params_json) {
            Ok(params) => params,
            Err(e) => return self.finish(name, format!("[{name}]"), Err(e)),
        };
        coerce_to_schema(&mut params, &tool.spec.input_schema);
        canonicalize(name, &mut params);
        let mut call = PreparedCall::new(&params, self.context_json(false));
        let result = if depth > MAX_NESTING {
            Err(ToolError::new(
                ToolErrorKind::FAILED,
                format!("Tool calls nested more than {MAX_NESTING} deep; {name} was not run."),
            ))
        } else {
            self.checked_run(&tool, name, &params, &mut call, depth, subagent)
        };
        // Asked while the handler ran; otherwise (the call stopped before) now.
        let description = call
            .description
            .take()
            .unwrap_or_else(|| describe(&tool, name, &call));
        self.finish(name, description, result)
    }

    /// The short description of a call that prefixes its result (`[read_file for 'a.txt']`).
    pub fn describe(&self, name: &str, params: &Map<String, Value>) -> String {
        match self.lookup(name) {
            Some(tool) => describe(
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
        let services = CallServices {
            host: self.me.clone(),
            tool: name.to_string(),
            cancellation: Arc::new(Cancellation::default()),
            depth: 0,
            subagent: false,
            verdicts: Vec::new(),
        };
        let params_json = serde_json::to_string(params).unwrap_or_default();
        let context_json = self.context_json(false);
        let host = HostServices_TO::from_ptr(&services, TD_Opaque);
        if let RErr(e) = tool
            .handler
            .handler
            .handle_partial(tool_call(name, &params_json, &context_json), host)
        {
            if e.kind == ToolErrorKind::PANIC {
                tool.handler.plugin.mark_failed(&e.message);
            }
            tracing::debug!(target: "toolhost::executor", "partial handler of {name}: {e}");
        }
    }

    /// Policies, approval and execution.
    fn checked_run(
        &self,
        tool: &RegisteredTool,
        name: &str,
        params: &Map<String, Value>,
        call: &mut PreparedCall,
        depth: u32,
        subagent: bool,
    ) -> Result<ToolContent, ToolError> {
        if let Some(reason) = tool.handler.plugin.failure() {
            return Err(ToolError::new(
                ToolErrorKind::FAILED,
                format!(
                    "The plugin '{}' that provides {name} was disabled after an earlier failure ({reason}). Use another tool.",
                    tool.handler.plugin.name
                ),
            ));
        }
        self.check_required(tool, name, params)?;
        let paths: Vec<String> = tool
            .spec
            .path_params
            .iter()
            .filter_map(|p| params.get(p).and_then(value_as_string))
            .filter(|p| !p.is_empty())
            .collect();
        // Each path is resolved once per call: the boundary check follows symlinks on disk.
        let verdicts: Vec<PathVerdict> = paths.iter().map(|p| self.workspace.verdict(p)).collect();
        call.verdicts = paths
            .iter()
            .cloned()
            .zip(verdicts.iter().cloned())
            .collect();
        if let Some(refused) = verdicts.iter().find(|v| v.refused) {
            return Err(tool_api::workspace::FsError::Refused {
                path: refused.path.clone(),
            }
            .into());
        }
        if let Some(blocked) = verdicts.iter().find(|v| v.ignored) {
            return Err(ToolError::new(
                ToolErrorKind::BLOCKED,
                texts::clineignore_error(&blocked.path),
            ));
        }
        if let Some(category) = tool.spec.approval {
            let inside = verdicts.iter().all(|v| v.inside_workspace);
            let message = match verdicts.first() {
                Some(v) if v.inside_workspace => format!("{name} wants to use {}", v.display),
                Some(v) => format!("{name} wants to use {} (outside the workspace)", v.display),
                None => format!("{name} wants to run"),
            };
            let request = ApprovalRequest {
                tool: name.to_string(),
                category,
                path: paths.first().cloned(),
                message,
            };
            let decision = self.decide_approval_for(&request, inside, subagent);
            if !decision.approved {
                return Err(denied(decision.feedback));
            }
        }
        let browser = name == "browser_action";
        if browser {
            self.browser_used.store(true, Ordering::SeqCst);
        } else if self.browser_used.swap(false, Ordering::SeqCst) {
            // Cline closes the task's browser whenever another tool runs.
            self.notify_handler("browser_action", "close_session");
        }
        let pre = if PRE_TOOL_USE_EXEMPT.contains(&name) {
            HookOutcome::default()
        } else {
            self.run_hook(
                HookName::PreToolUse,
                || json!({"toolName": name, "parameters": params}),
                subagent,
            )
        };
        if pre.cancel {
            return Err(denied(None));
        }
        let started = std::time::Instant::now();
        let result = self.run(tool, name, call, depth, subagent);
        if browser {
            // Again: another tool may have closed the browser while this call opened one.
            self.browser_used.store(true, Ordering::SeqCst);
        }
        let mut content = result?;
        if let Some(context) = pre.context {
            content
                .content
                .insert(0, ContentBlock::Text { text: context });
        }
        if name != "attempt_completion" {
            let elapsed = started.elapsed();
            let post = self.run_hook(
                HookName::PostToolUse,
                || {
                    json!({
                        "toolName": name,
                        "parameters": params,
                        "result": content.joined_text(),
                        "success": true,
                        "executionTimeMs": u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
                    })
                },
                subagent,
            );
            if post.cancel {
                let message = post
                    .error_message
                    .as_deref()
                    .unwrap_or("Hook requested task cancellation");
                self.ui.say("error", message, false);
            }
            if let Some(context) = post.context {
                content.content.push(ContentBlock::Text { text: context });
            }
        }
        Ok(content)
    }

    /// Sends a task notification to the handler of `tool` (if loaded); answers are ignored.
    /// A handler whose library was never opened has nothing to hear.
    fn notify_handler(&self, tool: &str, event: &str) {
        if let Some(entry) = self
            .registry()
            .get(tool)
            .filter(|e| e.handler.handler.is_open())
        {
            let _ = entry
                .handler
                .handler
                .request(event, &json!({"task_id": self.task_id}));
        }
    }

    /// Runs a hook's scripts. An untrusted workspace script runs with `--yes`; otherwise the
    /// user is asked on the terminal, except during a subagent's call (subagents never ask).
    fn run_hook(
        &self,
        hook: HookName,
        payload: impl FnOnce() -> Value,
        subagent: bool,
    ) -> HookOutcome {
        let consent = match self.approval {
            ApprovalMode::ApproveAll => Consent::All,
            ApprovalMode::Ask if !subagent => Consent::Ask(self.ui.as_ref()),
            ApprovalMode::Ask | ApprovalMode::DenyUnlessAuto => Consent::Nobody,
        };
        self.hooks.run(
            hook,
            &self.hook_input,
            payload,
            self.workspace.cwd(),
            consent,
        )
    }

    fn check_required(
        &self,
        tool: &RegisteredTool,
        name: &str,
        params: &Map<String, Value>,
    ) -> Result<(), ToolError> {
        for required in tool.spec.required_params() {
            let allows_empty = tool.spec.input_schema["properties"][required]["minLength"] == 0;
            let missing = match params.get(required).and_then(value_as_string) {
                None => true,
                Some(value) => value.is_empty() && !allows_empty,
            };
            if missing {
                let rel_path = params.get("path").and_then(value_as_string);
                self.ui.say(
                    "error",
                    &texts::missing_param_notice(name, required, rel_path.as_deref()),
                    false,
                );
                return Err(tool_api::sdk::missing(required));
            }
        }
        Ok(())
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
        let inside = request
            .path
            .as_deref()
            .is_none_or(|p| self.workspace.verdict(p).inside_workspace);
        self.decide_approval_for(request, inside, subagent)
    }

    /// [`Host::decide_approval`] when it is already known whether the operation stays inside
    /// the workspace.
    fn decide_approval_for(
        &self,
        request: &ApprovalRequest,
        inside: bool,
        subagent: bool,
    ) -> ApprovalDecision {
        let (decision, how) = self.approval_decision(request, inside, subagent);
        let verdict = if decision.approved {
            "approved"
        } else {
            "denied"
        };
        self.ui.say(
            "approval",
            &format!("{}: {verdict} ({how})", request.message),
            false,
        );
        decision
    }

    fn approval_decision(
        &self,
        request: &ApprovalRequest,
        inside: bool,
        subagent: bool,
    ) -> (ApprovalDecision, &'static str) {
        let approved = ApprovalDecision {
            approved: true,
            feedback: None,
        };
        if self.approval == ApprovalMode::ApproveAll {
            return (approved, "--yes");
        }
        if auto_approves(&self.settings.auto_approve, request.category, inside) {
            return (approved, "auto-approved by the settings");
        }
        let refused = |feedback| ApprovalDecision {
            approved: false,
            feedback,
        };
        if subagent {
            return (
                refused(None),
                "not auto-approved, and subagents do not ask the user",
            );
        }
        match self.approval {
            ApprovalMode::Ask => match self.ui.ask("tool", &request.message) {
                Some(reply) if reply.response == AskResponse::Yes => (approved, "by the user"),
                Some(reply) => (refused(reply.text.filter(|t| !t.is_empty())), "by the user"),
                None => (refused(None), "nobody to ask"),
            },
            ApprovalMode::ApproveAll | ApprovalMode::DenyUnlessAuto => {
                (refused(None), "not auto-approved and no terminal to ask")
            }
        }
    }

    /// The task context for a call, as the handler reads it. Written once for each mode, yolo
    /// flag and subagent flag: the rest of it stays as it was for the host's life.
    fn context_json(&self, is_subagent: bool) -> Arc<str> {
        let key = ContextKey {
            mode: self.task.mode(),
            yolo: self.task.yolo(),
            is_subagent,
        };
        let mut contexts = self.contexts.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, json)) = contexts.iter().find(|(k, _)| *k == key) {
            return json.clone();
        }
        let json: Arc<str> = serde_json::to_string(&self.context(key))
            .unwrap_or_default()
            .into();
        contexts.push((key, json.clone()));
        json
    }

    /// The task context for a call.
    fn context(&self, key: ContextKey) -> TaskContext {
        TaskContext {
            task_id: self.task_id.clone(),
            cwd: self.workspace.cwd().to_string_lossy().into_owned(),
            workspace_roots: self.workspace.roots(),
            mode: key.mode,
            is_subagent: key.is_subagent,
            yolo: key.yolo,
            parallel_tool_calling: true,
        }
    }

    /// Runs the handler on its own thread; gives up on it after the call timeout. Meanwhile
    /// this thread asks the handler for the call's description.
    fn run(
        &self,
        tool: &RegisteredTool,
        name: &str,
        call: &mut PreparedCall,
        depth: u32,
        subagent: bool,
    ) -> Result<ToolContent, ToolError> {
        let cancellation = Arc::new(Cancellation::default());
        let services = CallServices {
            host: self.me.clone(),
            tool: name.to_string(),
            cancellation: cancellation.clone(),
            depth,
            subagent,
            verdicts: std::mem::take(&mut call.verdicts),
        };
        let handler = tool.handler.clone();
        let params_json = call.params.clone();
        // `describe` sees the context of a call from the model; a subagent's call says so.
        let context_json = if subagent {
            self.context_json(true)
        } else {
            call.context.clone()
        };
        // One result, never waiting for room: a call abandoned by its timeout still finishes.
        let (sender, receiver) = mpsc::sync_channel(1);
        let job = move || {
            let host = HostServices_TO::from_ptr(&services, TD_Opaque);
            let abi_call = tool_call(&services.tool, &params_json, &context_json);
            match handler.handler.execute(abi_call, host) {
                ROk(output) => serde_json::from_str::<ToolContent>(output.content_json.as_str())
                    .map_err(|e| {
                        ToolError::new(
                            ToolErrorKind::INTERNAL,
                            format!("the tool returned malformed content: {e}"),
                        )
                    }),
                RErr(e) => Err(e),
            }
        };
        let spawned = self.workers.run(job, sender);
        if let Err(e) = spawned {
            return Err(ToolError::new(
                ToolErrorKind::INTERNAL,
                format!("cannot start a thread for the call: {e}"),
            ));
        }
        // `describe` is a pure function of the call (it gets no host services), so it may run
        // beside `execute`; this hides its cost behind the handler's.
        call.description = Some(describe(tool, name, call));
        let timeout = Duration::from_secs(self.settings.limits.call_timeout_secs.max(1));
        let result = match self.workers.wait_for(&receiver, timeout) {
            Ok(result) => result,
            Err(RecvTimeoutError::Timeout) => {
                cancellation.cancel();
                Err(ToolError::new(
                    ToolErrorKind::TIMEOUT,
                    format!(
                        "The tool did not finish within {} seconds and was cancelled.",
                        timeout.as_secs()
                    ),
                ))
            }
            Err(RecvTimeoutError::Disconnected) => Err(ToolError::new(
                ToolErrorKind::INTERNAL,
                "The tool's thread ended without a result.",
            )),
        };
        if let Err(e) = &result {
            if e.kind == ToolErrorKind::PANIC {
                tool.handler.plugin.mark_failed(&e.message);
                tracing::error!(target: "toolhost::executor", "plugin '{}' panicked in {name}: {}", tool.handler.plugin.name, e.message);
            }
        }
        result
    }

    /// Updates the task state for a result and wraps it.
    fn finish(
        &self,
        name: &str,
        description: String,
        result: Result<ToolContent, ToolError>,
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
        }
    }
}

/// Cline's executor accepts `response` for attempt_completion's `result`.
fn canonicalize(name: &str, params: &mut Map<String, Value>) {
    if name == "attempt_completion" && !params.contains_key("result") {
        if let Some(response @ Value::String(_)) = params.get("response").cloned() {
            params.insert("result".to_string(), response);
        }
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
                let _ = tool.handler.handler.request("task_ended", &payload);
            }
        }
    }
}

/// Parses the parameters leniently, as models write them: strict JSON, else JSON5, else what
/// can be salvaged from a truncated object. Nothing usable is an invalid-parameters error.
fn parse_params(json: &str) -> Result<Map<String, Value>, ToolError> {
    parse_arguments(json).ok_or_else(|| {
        ToolError::new(
            ToolErrorKind::INVALID_PARAMS,
            "The tool parameters are not a JSON object (nor anything that could be read as one).",
        )
    })
}

/// A parameter as Cline sees it: strings as they are, other JSON as text, null as absent.
fn value_as_string(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// One call as the handler reads it, written once for `describe` and `execute`, and its
/// description once the handler gave it.
struct PreparedCall {
    /// The parameters, as JSON.
    params: Arc<str>,
    /// The task context of a call from the model, as JSON.
    context: Arc<str>,
    description: Option<String>,
    /// The verdicts on the path parameters, by path: the tool's own `check_path` of the same
    /// path gets them instead of resolving the path again.
    verdicts: Vec<(String, PathVerdict)>,
}

impl PreparedCall {
    fn new(params: &Map<String, Value>, context: Arc<str>) -> Self {
        Self {
            params: serde_json::to_string(params).unwrap_or_default().into(),
            context,
            description: None,
            verdicts: Vec::new(),
        }
    }
}

/// What may differ between the task contexts of two calls of one host.
#[derive(Clone, Copy, PartialEq, Eq)]
struct ContextKey {
    mode: Mode,
    yolo: bool,
    is_subagent: bool,
}

fn describe(tool: &RegisteredTool, name: &str, call: &PreparedCall) -> String {
    tool.handler
        .handler
        .describe(tool_call(name, &call.params, &call.context))
        .into_string()
}

/// The ABI form of a call; the strings stay borrowed.
fn tool_call<'a>(name: &'a str, params_json: &'a str, context_json: &'a str) -> ToolCall<'a> {
    ToolCall {
        tool_name: RStr::from(name),
        call_id: RStr::from(""),
        params_json: RStr::from(params_json),
        context_json: RStr::from(context_json),
    }
}

fn denied(feedback: Option<String>) -> ToolError {
    ToolError::new(
        ToolErrorKind::DENIED,
        texts::denied_with_feedback(texts::TOOL_DENIED, feedback.as_deref()),
    )
}
