//! The worker's end of the channel ([`Link`]) and the host services of a call as the plugin
//! in the worker reaches them ([`RemoteServices`]): each a request to the host over the
//! channel, except cancellation, which the worker answers itself, and settings, which it asks
//! for once.

use std::collections::HashMap;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::error::{CallError, ErrorKind};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tool_api::model::{ApprovalDecision, ApprovalRequest, AskReply, PathVerdict, ToolContent};

use super::protocol::{write_frame, FromWorker, ServiceRequest, SettingAnswer};
use crate::plugins::handler::{refused_verdict, Cancellation};
use crate::plugins::CallServices;

/// The worker's end of the channel: frames out, answers to service requests in.
pub(super) struct Link {
    /// `None` when the socket could not be cloned for writing: every send then fails.
    writer: Mutex<Option<UnixStream>>,
    /// Who waits for the answer to each service request.
    pub(super) replies: Mutex<HashMap<u64, SyncSender<Value>>>,
    calls: Mutex<HashMap<u64, Arc<Cancellation>>>,
    next_request: AtomicU64,
    /// The settings asked for so far. A host's settings do not change while it runs (they are
    /// read once at its start, and every task it serves shares them), so each is asked once.
    settings: Mutex<HashMap<String, Option<Value>>>,
}

impl Link {
    /// A link writing to `writer`.
    pub(super) fn new(writer: Option<UnixStream>) -> Self {
        Self {
            writer: Mutex::new(writer),
            replies: Mutex::default(),
            calls: Mutex::default(),
            next_request: AtomicU64::new(1),
            settings: Mutex::default(),
        }
    }

    /// The cancellations of the calls running, by call id.
    pub(super) fn calls(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Cancellation>>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends one frame; whether it went out.
    pub(super) fn send(&self, message: &FromWorker) -> bool {
        let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        writer
            .as_mut()
            .is_some_and(|out| write_frame(out, message).is_ok())
    }

    /// Sends a service request of call `call`; its answer, when it expects one (`None` when the
    /// host did not answer).
    fn request(&self, call: u64, request: ServiceRequest) -> Option<Value> {
        if !request.expects_answer() {
            self.send(&FromWorker::Service {
                id: 0,
                call,
                request,
            });
            return None;
        }
        let id = self.next_request.fetch_add(1, Ordering::Relaxed);
        let (answer, receiver) = mpsc::sync_channel(1);
        self.replies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, answer);
        if !self.send(&FromWorker::Service { id, call, request }) {
            return None;
        }
        receiver.recv().ok()
    }
}

/// The host services of one call, reached over the channel.
pub(super) struct RemoteServices {
    /// The channel.
    pub(super) link: Arc<Link>,
    /// The call's id.
    pub(super) call: u64,
    /// The call's cancellation (the host's `Cancel` sets it).
    pub(super) cancellation: Arc<Cancellation>,
}

fn host_unreachable() -> CallError {
    CallError::new(
        ErrorKind::Unavailable,
        "the host did not answer the plugin's request",
    )
}

impl RemoteServices {
    /// A request whose answer is a `Result` on the wire.
    fn fallible<T: DeserializeOwned>(&self, request: ServiceRequest) -> Result<T, CallError> {
        let answer = self
            .link
            .request(self.call, request)
            .ok_or_else(host_unreachable)?;
        let answer: Result<T, super::protocol::WireError> =
            serde_json::from_value(answer).map_err(|_| host_unreachable())?;
        answer.map_err(Into::into)
    }

    /// A request whose answer is a plain value.
    fn plain<T: DeserializeOwned>(&self, request: ServiceRequest) -> Option<T> {
        serde_json::from_value(self.link.request(self.call, request)?).ok()
    }
}

impl CallServices for RemoteServices {
    fn say(&self, kind: &str, text: &str, partial: bool) {
        self.link.request(
            self.call,
            ServiceRequest::Say {
                kind: kind.to_string(),
                text: text.to_string(),
                partial,
            },
        );
    }

    fn ask(&self, kind: &str, text: &str, partial: bool) -> Result<AskReply, CallError> {
        self.fallible(ServiceRequest::Ask {
            kind: kind.to_string(),
            text: text.to_string(),
            partial,
        })
    }

    fn request_approval(&self, request: &ApprovalRequest) -> Result<ApprovalDecision, CallError> {
        self.fallible(ServiceRequest::Approval {
            request: request.clone(),
        })
    }

    fn check_path(&self, path: &str) -> PathVerdict {
        self.plain(ServiceRequest::CheckPath {
            path: path.to_string(),
        })
        .unwrap_or_else(|| refused_verdict(path))
    }

    fn record_file_read(&self, absolute_path: &str, mtime_ms: u64) -> u32 {
        self.plain(ServiceRequest::RecordFileRead {
            absolute_path: absolute_path.to_string(),
            mtime_ms,
        })
        .unwrap_or(1)
    }

    fn forget_file_reads(&self, absolute_path: &str) {
        self.link.request(
            self.call,
            ServiceRequest::ForgetFileReads {
                absolute_path: absolute_path.to_string(),
            },
        );
    }

    fn mistake_count(&self) -> u32 {
        self.plain(ServiceRequest::MistakeCount).unwrap_or(0)
    }

    fn setting(&self, key: &str) -> Option<Value> {
        let known = (self.link.settings.lock())
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned();
        if let Some(value) = known {
            return value;
        }
        // No answer (the call is over) is not remembered; an absent setting is.
        let SettingAnswer { value } = self.plain(ServiceRequest::Setting {
            key: key.to_string(),
        })?;
        self.link
            .settings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.to_string(), value.clone());
        value
    }

    fn log(&self, level: u8, target: &str, message: &str) {
        self.link.request(
            self.call,
            ServiceRequest::Log {
                level,
                target: target.to_string(),
                message: message.to_string(),
            },
        );
    }

    fn is_cancelled(&self) -> bool {
        self.cancellation.is_cancelled()
    }

    fn wait_cancelled(&self, timeout_ms: u64) -> bool {
        self.cancellation.wait(Duration::from_millis(timeout_ms))
    }

    fn invoke_tool(&self, name: &str, params_json: &str) -> Result<ToolContent, CallError> {
        self.fallible(ServiceRequest::InvokeTool {
            name: name.to_string(),
            params_json: params_json.to_string(),
        })
    }

    fn call_service(
        &self,
        service: &str,
        method: &str,
        payload: &Value,
    ) -> Result<Value, CallError> {
        self.fallible(ServiceRequest::CallService {
            service: service.to_string(),
            method: method.to_string(),
            payload: payload.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::io::BufReader;
    use std::sync::atomic::AtomicUsize;

    use super::super::protocol::{read_frame, ToWorker};
    use super::*;

    #[test]
    fn each_setting_is_asked_of_the_host_once() {
        let (worker_end, host_end) = UnixStream::pair().unwrap();
        let link = Arc::new(Link::new(worker_end.try_clone().ok()));
        // The host answers each setting request with how many it has had (`null`: absent).
        let asked = Arc::new(AtomicUsize::new(0));
        let counted = asked.clone();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(host_end.try_clone().unwrap());
            let mut writer = host_end;
            while let Ok(Some(FromWorker::Service {
                id,
                request: ServiceRequest::Setting { key },
                ..
            })) = read_frame(&mut reader)
            {
                let count = counted.fetch_add(1, Ordering::SeqCst) + 1;
                let answer = match key.as_str() {
                    "absent" => serde_json::json!({"value": null}),
                    // No answer (the call is over): never remembered.
                    "unanswered" => Value::Null,
                    _ => serde_json::json!({"value": count}),
                };
                write_frame(&mut writer, &ToWorker::Reply { id, answer }).unwrap();
            }
        });
        // The worker's reader hands the replies to the waiting call.
        let routing = link.clone();
        let mut input = BufReader::new(worker_end);
        std::thread::spawn(move || {
            while let Ok(Some(ToWorker::Reply { id, answer })) = read_frame(&mut input) {
                if let Some(waiting) = routing.replies.lock().unwrap().remove(&id) {
                    let _ = waiting.send(answer);
                }
            }
        });
        let services = RemoteServices {
            link,
            call: 1,
            cancellation: Arc::default(),
        };
        assert_eq!(services.setting("model.a"), Some(Value::from(1)));
        assert_eq!(services.setting("model.a"), Some(Value::from(1)));
        assert_eq!(services.setting("absent"), None);
        assert_eq!(services.setting("absent"), None);
        assert_eq!(services.setting("unanswered"), None);
        assert_eq!(services.setting("unanswered"), None);
        assert_eq!(services.setting("model.b"), Some(Value::from(5)));
        assert_eq!(asked.load(Ordering::SeqCst), 5);
    }
}
