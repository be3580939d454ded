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
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RErr, RNone, ROk, ROption, RResult, RStr, RString};
use serde_json::Value;

use crate::abi::{HostServices, HostServices_TO, ToolError, ToolErrorKind, ToolOutput};
use crate::model::{ApprovalDecision, PathVerdict, TaskContext, WorkspaceRoot};

use super::{Call, Ctx, Params, Tool, ToolResult};

/// In-memory host services: every approval is granted, nothing is ignored, UI events are
/// recorded, nobody answers questions, and settings come from a JSON object.
pub struct TestHost {
    cwd: PathBuf,
    settings: Value,
    said: Mutex<Vec<(String, String)>>,
    reads: Mutex<HashMap<String, (u64, u32)>>,
}

impl TestHost {
    /// A host whose workspace is `cwd`.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            settings: Value::Object(Default::default()),
            said: Mutex::default(),
            reads: Mutex::default(),
        }
    }

    /// The same host with these settings (a JSON object, looked up by dotted keys).
    pub fn with_settings(mut self, settings: Value) -> Self {
        self.settings = settings;
        self
    }

    /// Calls `tool` under `name` with `params`.
    pub fn call(&self, tool: &impl Tool, name: &str, params: Value) -> ToolResult {
        let params = match params {
            Value::Object(map) => Params::from_map(map),
            _ => Params::default(),
        };
        let cwd = self.cwd.to_string_lossy().into_owned();
        let task = TaskContext {
            task_id: "test".to_string(),
            cwd: cwd.clone(),
            workspace_roots: vec![WorkspaceRoot {
                name: "test".to_string(),
                path: cwd,
            }],
            ..TaskContext::default()
        };
        let call = Call {
            name: name.to_string(),
            call_id: String::new(),
            params,
            task,
        };
        let ctx = Ctx::new(HostServices_TO::from_ptr(self, TD_Opaque), &call.task);
        super::guard(|| tool.execute(&call, &ctx))
    }

    /// The UI events so far, as `(kind, text)`.
    pub fn said(&self) -> Vec<(String, String)> {
        self.said
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn absolute(&self, path: &str) -> PathBuf {
        let path = Path::new(path);
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.cwd.join(path)
        }
    }
}

impl HostServices for TestHost {
    fn say(&self, kind: RStr<'_>, text: RStr<'_>, partial: bool) {
        if !partial {
            self.said
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((kind.to_string(), text.to_string()));
        }
    }

    fn ask(&self, _kind: RStr<'_>, _text: RStr<'_>, _partial: bool) -> RResult<RString, ToolError> {
        RErr(ToolError::new(
            ToolErrorKind::UNAVAILABLE,
            "No user is available to answer.",
        ))
    }

    fn request_approval(&self, _request_json: RStr<'_>) -> RResult<RString, ToolError> {
        let decision = ApprovalDecision {
            approved: true,
            feedback: None,
        };
        ROk(RString::from(
            serde_json::to_string(&decision).unwrap_or_default(),
        ))
    }

    fn check_path(&self, path: RStr<'_>) -> RString {
        let absolute = self.absolute(path.as_str());
        let inside = absolute.starts_with(&self.cwd);
        let verdict = PathVerdict {
            path: path.to_string(),
            absolute: absolute.to_string_lossy().into_owned(),
            resolved: absolute.to_string_lossy().into_owned(),
            inside_workspace: inside,
            ignored: false,
            display: absolute
                .strip_prefix(&self.cwd)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|_| absolute.to_string_lossy().into_owned()),
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
