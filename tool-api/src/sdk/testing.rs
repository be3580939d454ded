//! Testing a tool without a host: [`TestHost`] provides the host services in memory, so a
//! plugin's own `cargo test` can call its tools directly.
//!
//! ```
//! use tool_api::sdk::prelude::*;
//! use tool_api::sdk::testing::TestHost;
//!
//! struct Echo;
//! impl Tool for Echo {
//!     fn specs(&self) -> Vec<ToolSpec> {
//!         vec![ToolSpec::simple("echo", "Echoes `text`.", &[("text", "The text.", true)])]
//!     }
//!     fn execute(&self, call: &Call, _ctx: &Ctx<'_>) -> ToolResult {
//!         Ok(ToolContent::text(call.params.required("text")?))
//!     }
//! }
//!
//! let host = TestHost::new(std::env::temp_dir());
//! let result = host.call(&Echo, "echo", serde_json::json!({"text": "hi"}));
//! assert_eq!(result.map(|c| c.joined_text()).ok().as_deref(), Some("hi"));
//! ```

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock, PoisonError};

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RErr, RNone, ROk, ROption, RResult, RStr, RString};
use serde_json::Value;

use crate::abi::{HostServices, HostServices_TO, ToolError, ToolErrorKind, ToolOutput};
use crate::model::{ApprovalDecision, PathVerdict, TaskContext, WorkspaceRoot};

use super::{Call, Ctx, Params, Tool, ToolResult};
use crate::workspace::Workspace;

/// The parameters of a test call: a JSON object, or JSON text of one (anything else is no
/// parameter at all).
pub struct CallParams(Params);

impl From<Value> for CallParams {
    fn from(value: Value) -> Self {
        match value {
            Value::Object(map) => Self(Params::from_map(map)),
            _ => Self(Params::default()),
        }
    }
}

impl From<&str> for CallParams {
    fn from(json: &str) -> Self {
        Self(Params::from_json(json).unwrap_or_default())
    }
}

/// In-memory host services: every approval is granted, paths get the host's own verdicts
/// (the workspace boundary and the directory's `.clineignore`), UI events are recorded
/// (complete ones by [`TestHost::said`], streaming previews by [`TestHost::previews`]), nobody
/// answers questions, and settings come from a JSON object.
pub struct TestHost {
    cwd: PathBuf,
    workspace: OnceLock<Option<Workspace>>,
    settings: Value,
    subagent: bool,
    said: Mutex<Vec<(String, String)>>,
    previews: Mutex<Vec<Preview>>,
    reads: Mutex<HashMap<String, (u64, u32)>>,
}

/// A streaming preview a partial handler sent: a partial `say` or a partial `ask`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preview {
    /// `Ctx::say_partial(kind, text)`.
    Say(String, String),
    /// `Ctx::ask_partial(kind, text)`.
    Ask(String, String),
}

impl TestHost {
    /// A host whose workspace is `cwd`.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            workspace: OnceLock::new(),
            settings: Value::Object(Default::default()),
            subagent: false,
            said: Mutex::default(),
            previews: Mutex::default(),
            reads: Mutex::default(),
        }
    }

    /// The same host, running its calls as a subagent's (`TaskContext::is_subagent`).
    pub fn as_subagent(mut self) -> Self {
        self.subagent = true;
        self
    }

    /// The same host with these settings (a JSON object, looked up by dotted keys).
    pub fn with_settings(mut self, settings: Value) -> Self {
        self.settings = settings;
        self
    }

    /// Calls `tool` under `name` with `params`.
    pub fn call(&self, tool: &impl Tool, name: &str, params: Value) -> ToolResult {
        let call = self.task_call(name, params);
        let ctx = Ctx::new(HostServices_TO::from_ptr(self, TD_Opaque), &call.task);
        super::guard(|| tool.execute(&call, &ctx))
    }

    /// Hands `tool` a still-streaming call under `name` with the `params` so far
    /// (`Tool::handle_partial`); what it shows is in [`TestHost::previews`].
    pub fn partial(&self, tool: &impl Tool, name: &str, params: Value) -> Result<(), ToolError> {
        let call = self.task_call(name, params);
        let ctx = Ctx::new(HostServices_TO::from_ptr(self, TD_Opaque), &call.task);
        super::guard(|| tool.handle_partial(&call, &ctx))
    }

    /// The streaming previews so far, in order.
    pub fn previews(&self) -> Vec<Preview> {
        self.previews
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The call a tool receives.
    fn task_call(&self, name: &str, params: Value) -> Call {
        let params = match params {
            Value::Object(map) => Params::from_map(map),
            _ => Params::default(),
        };
        let cwd = self.cwd.to_string_lossy().into_owned();
        let workspace_roots = match self.workspace() {
            Some(workspace) => workspace.roots(),
            None => vec![WorkspaceRoot {
                name: "test".to_string(),
                path: cwd.clone(),
                clineignore: None,
            }],
        };
        let task = TaskContext {
            task_id: "test".to_string(),
            cwd,
            workspace_roots,
            is_subagent: self.subagent,
            ..TaskContext::default()
        };
        Call {
            name: name.to_string(),
            call_id: String::new(),
            params,
            task,
        }
    }

    /// A call of `name` with `params` (a JSON object, or JSON text of one) in a default task:
    /// for testing `describe` and the other pure functions of a call.
    pub fn call_of(name: &str, params: impl Into<CallParams>) -> Call {
        Call {
            name: name.to_string(),
            call_id: String::new(),
            params: params.into().0,
            task: TaskContext::default(),
        }
    }

    /// The UI events so far, as `(kind, text)`.
    pub fn said(&self) -> Vec<(String, String)> {
        self.said
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The workspace of `cwd`, when `cwd` is a directory.
    fn workspace(&self) -> Option<&Workspace> {
        self.workspace
            .get_or_init(|| Workspace::new(&self.cwd).ok())
            .as_ref()
    }
}

impl HostServices for TestHost {
    fn say(&self, kind: RStr<'_>, text: RStr<'_>, partial: bool) {
        if partial {
            self.previews
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(Preview::Say(kind.to_string(), text.to_string()));
        } else {
            self.said
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((kind.to_string(), text.to_string()));
        }
    }

    fn ask(&self, kind: RStr<'_>, text: RStr<'_>, partial: bool) -> RResult<RString, ToolError> {
        if partial {
            self.previews
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(Preview::Ask(kind.to_string(), text.to_string()));
        }
        RErr(ToolError::new(
            ToolErrorKind::UNAVAILABLE,
            "No user is available to answer.",
        ))
    }

    fn request_approval(&self, _request_json: RStr<'_>) -> RResult<RString, ToolError> {
        let decision = ApprovalDecision {
            approved: true,
            feedback: None,
            refusal: None,
        };
        ROk(RString::from(
            serde_json::to_string(&decision).unwrap_or_default(),
        ))
    }

    fn check_path(&self, path: RStr<'_>) -> RString {
        let verdict = match self.workspace() {
            Some(workspace) => workspace.verdict(path.as_str()),
            None => {
                let absolute = self.cwd.join(path.as_str()).to_string_lossy().into_owned();
                PathVerdict {
                    path: path.to_string(),
                    absolute: absolute.clone(),
                    resolved: absolute.clone(),
                    inside_workspace: false,
                    ignored: false,
                    display: absolute,
                    refused: false,
                    ignore_rule: None,
                    leads_to: None,
                    anchor: None,
                }
            }
        };
        RString::from(serde_json::to_string(&verdict).unwrap_or_default())
    }

    fn record_file_read(&self, absolute_path: RStr<'_>, mtime_ms: u64) -> u32 {
        let mut reads = self.reads.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = reads
            .entry(absolute_path.to_string())
            .or_insert((mtime_ms, 0));
        if entry.0 != mtime_ms {
            *entry = (mtime_ms, 0);
        }
        entry.1 += 1;
        entry.1
    }

    fn forget_file_reads(&self, absolute_path: RStr<'_>) {
        let mut reads = self.reads.lock().unwrap_or_else(PoisonError::into_inner);
        if absolute_path.is_empty() {
            reads.clear();
        } else {
            reads.remove(absolute_path.as_str());
        }
    }

    fn mistake_count(&self) -> u32 {
        0
    }

    fn setting(&self, key: RStr<'_>) -> ROption<RString> {
        match key
            .as_str()
            .split('.')
            .try_fold(&self.settings, |v, part| v.get(part))
        {
            Some(value) => ROption::RSome(RString::from(value.to_string())),
            None => RNone,
        }
    }

    fn log(&self, _level: u8, _target: RStr<'_>, _message: RStr<'_>) {}

    fn is_cancelled(&self) -> bool {
        false
    }

    fn wait_cancelled(&self, timeout_ms: u64) -> bool {
        std::thread::sleep(std::time::Duration::from_millis(timeout_ms));
        false
    }

    fn invoke_tool(
        &self,
        name: RStr<'_>,
        _params_json: RStr<'_>,
    ) -> RResult<ToolOutput, ToolError> {
        RErr(ToolError::new(
            ToolErrorKind::UNAVAILABLE,
            format!("the test host cannot call other tools ({name})"),
        ))
    }

    fn call_service(
        &self,
        service: RStr<'_>,
        method: RStr<'_>,
        _payload_json: RStr<'_>,
    ) -> RResult<RString, ToolError> {
        RErr(ToolError::new(
            ToolErrorKind::UNAVAILABLE,
            format!("the test host offers no service '{service}.{method}'"),
        ))
    }
}
