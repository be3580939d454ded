//! The host services handed to a plugin for one call (the ABI's `HostServices`).
//!
//! Every method catches panics: these functions are called from plugin code through the ABI,
//! and a panic unwinding out of them would end the process.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use abi_stable::std_types::{RNone, ROption, RResult, RSome, RStr, RString};
use tool_api::abi::{HostServices, ToolError, ToolErrorKind, ToolOutput};
use tool_api::model::{ApprovalRequest, PathVerdict};

use crate::executor::Host;

/// A cancellation flag a tool can poll or wait on.
#[derive(Debug, Default)]
pub struct Cancellation {
    cancelled: Mutex<bool>,
    changed: Condvar,
}

impl Cancellation {
    /// Cancels; wakes every waiter.
    pub fn cancel(&self) {
        *self
            .cancelled
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = true;
        self.changed.notify_all();
    }

    /// Whether it was cancelled.
    pub fn is_cancelled(&self) -> bool {
        *self
            .cancelled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits up to `timeout`; returns whether it was cancelled.
    pub fn wait(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut cancelled = self
            .cancelled
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        while !*cancelled {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            cancelled = self
                .changed
                .wait_timeout(cancelled, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        *cancelled
    }
}

/// The services of one call.
pub struct CallServices {
    /// Weak, so that a call abandoned after a timeout does not keep the host alive.
    pub host: Weak<Host>,
    /// The tool being called.
    pub tool: String,
    /// The call's cancellation.
    pub cancellation: Arc<Cancellation>,
    /// How deep in nested `invoke_tool` calls this call is.
    pub depth: u32,
    /// Whether a subagent made this call (its nested calls are subagent calls too).
    pub subagent: bool,
    /// The host's verdicts on this call's path parameters, by path, made just before the call.
    pub verdicts: Vec<(String, PathVerdict)>,
}

fn contained<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

fn internal(message: &str) -> ToolError {
    ToolError::new(ToolErrorKind::INTERNAL, message)
}

fn host_gone() -> ToolError {
    ToolError::new(ToolErrorKind::CANCELLED, "the host is shutting down")
}

impl HostServices for CallServices {
    fn say(&self, kind: RStr<'_>, text: RStr<'_>, partial: bool) {
        contained((), || {
            if let Some(host) = self.host.upgrade() {
                host.ui().say(kind.as_str(), text.as_str(), partial);
            }
        })
    }

    fn ask(&self, kind: RStr<'_>, text: RStr<'_>, partial: bool) -> RResult<RString, ToolError> {
        let result = contained(Err(internal("the host failed while asking")), || {
            let host = self.host.upgrade().ok_or_else(host_gone)?;
            if partial {
                host.ui().say(kind.as_str(), text.as_str(), true);
                return Ok(RString::from("{\"response\":\"noButtonClicked\"}"));
            }
            let reply = host.ui().ask(kind.as_str(), text.as_str()).ok_or_else(|| {
                ToolError::new(
                    ToolErrorKind::UNAVAILABLE,
                    "No user is available to answer.",
                )
            })?;
            serde_json::to_string(&reply)
                .map(RString::from)
                .map_err(|e| internal(&e.to_string()))
        });
        result.into()
    }

    fn request_approval(&self, request_json: RStr<'_>) -> RResult<RString, ToolError> {
        let result = contained(Err(internal("the host failed while approving")), || {
            let host = self.host.upgrade().ok_or_else(host_gone)?;
            let request: ApprovalRequest =
                serde_json::from_str(request_json.as_str()).map_err(|e| {
                    ToolError::new(
                        ToolErrorKind::INVALID_PARAMS,
                        format!("invalid approval request: {e}"),
                    )
                })?;
            let decision = host.decide_approval_as(&request, self.subagent);
            serde_json::to_string(&decision)
                .map(RString::from)
                .map_err(|e| internal(&e.to_string()))
        });
        result.into()
    }

    fn check_path(&self, path: RStr<'_>) -> RString {
        contained(RString::new(), || match self.host.upgrade() {
            Some(host) => {
                let known = self.verdicts.iter().find(|(p, _)| p == path.as_str());
                let verdict = match known {
                    Some((_, verdict)) => verdict.clone(),
                    None => host.workspace().verdict(path.as_str()),
                };
                RString::from(serde_json::to_string(&verdict).unwrap_or_default())
            }
            None => RString::new(),
        })
    }

    fn record_file_read(&self, absolute_path: RStr<'_>, mtime_ms: u64) -> u32 {
        contained(1, || {
            self.host.upgrade().map_or(1, |host| {
                host.task()
                    .record_file_read(absolute_path.as_str(), mtime_ms)
            })
        })
    }

    fn forget_file_reads(&self, absolute_path: RStr<'_>) {
        contained((), || {
            if let Some(host) = self.host.upgrade() {
                host.task().forget_file_reads(absolute_path.as_str());
            }
        })
    }

    fn mistake_count(&self) -> u32 {
        contained(0, || {
            self.host.upgrade().map_or(0, |host| host.task().mistakes())
        })
    }

    fn setting(&self, key: RStr<'_>) -> ROption<RString> {
        contained(RNone, || {
            let Some(host) = self.host.upgrade() else {
                return RNone;
            };
            match host.settings().lookup(key.as_str()) {
                Some(value) => RSome(RString::from(value.to_string())),
                None => RNone,
            }
        })
    }

    fn log(&self, level: u8, target: RStr<'_>, message: RStr<'_>) {
        contained((), || {
            let (tool, target, message) = (self.tool.as_str(), target.as_str(), message.as_str());
            match level {
                0 | 1 => {
                    tracing::error!(target: "toolhost::plugin", tool, task = target, "{message}")
                }
                2 => tracing::warn!(target: "toolhost::plugin", tool, task = target, "{message}"),
                3 => tracing::info!(target: "toolhost::plugin", tool, task = target, "{message}"),
                4 => tracing::debug!(target: "toolhost::plugin", tool, task = target, "{message}"),
                _ => tracing::trace!(target: "toolhost::plugin", tool, task = target, "{message}"),
            }
        })
    }

    fn is_cancelled(&self) -> bool {
        contained(true, || self.cancellation.is_cancelled())
    }

    fn wait_cancelled(&self, timeout_ms: u64) -> bool {
        contained(true, || {
            self.cancellation.wait(Duration::from_millis(timeout_ms))
        })
    }

    fn invoke_tool(&self, name: RStr<'_>, params_json: RStr<'_>) -> RResult<ToolOutput, ToolError> {
        let result = contained(
            Err(internal("the host failed while invoking a tool")),
            || {
                let host = self.host.upgrade().ok_or_else(host_gone)?;
                // The subagent tools call tools on a subagent's behalf.
                let subagent = self.subagent || self.tool.starts_with("use_subagent");
                let outcome = host.call_nested(
                    name.as_str(),
                    params_json.as_str(),
                    self.depth + 1,
                    subagent,
                );
                let content = outcome.result?;
                serde_json::to_string(&content)
                    .map(|json| ToolOutput {
                        content_json: RString::from(json),
                    })
                    .map_err(|e| internal(&e.to_string()))
            },
        );
        result.into()
    }

    /// Services beyond v1. `policy.check_command` (`{"command": "..."}`) answers with the
    /// [`crate::policy::CommandCheck`] of the command; `sandbox.wrap_command` with the prefix
    /// that runs a command in the sandbox ([`crate::sandbox_service`]); anything else is
    /// `UNAVAILABLE`.
    fn call_service(
        &self,
        service: RStr<'_>,
        method: RStr<'_>,
        payload_json: RStr<'_>,
    ) -> RResult<RString, ToolError> {
        let result = contained(Err(internal("the host failed in a service")), || {
            match (service.as_str(), method.as_str()) {
                ("policy", "check_command") => {
                    let host = self.host.upgrade().ok_or_else(host_gone)?;
                    let payload: serde_json::Value = serde_json::from_str(payload_json.as_str())
                        .map_err(|e| {
                            ToolError::new(
                                ToolErrorKind::INVALID_PARAMS,
                                format!("invalid check_command request: {e}"),
                            )
                        })?;
                    let command = payload["command"].as_str().ok_or_else(|| {
                        ToolError::new(
                            ToolErrorKind::INVALID_PARAMS,
                            "check_command needs a string `command`",
                        )
                    })?;
                    let check = crate::policy::check_command(
                        host.workspace(),
                        crate::policy::CommandPermissions::global(),
                        command,
                    );
                    serde_json::to_string(&check)
                        .map(RString::from)
                        .map_err(|e| internal(&e.to_string()))
                }
                ("sandbox", "wrap_command") => crate::sandbox_service::wrap_command(
                    &*self.host.upgrade().ok_or_else(host_gone)?,
                    payload_json.as_str(),
                )
                .map(RString::from),
                (service, method) => Err(ToolError::new(
                    ToolErrorKind::UNAVAILABLE,
                    format!("this host offers no service '{service}.{method}'"),
                )),
            }
        });
        result.into()
    }
}
