//! The UI of `toolhost mcp`: what a user should see, and the questions only a user can answer.
//!
//! - Errors and notifications go to the client as `notifications/message` (logging), at the
//!   level the client chose with `logging/setLevel` (by default every one).
//! - Questions become `elicitation/create` when the client declared elicitation, as the forms
//!   of [`super::questions`] (an approval's denial feedback reaches the model as Cline's
//!   denial-with-feedback text). A
//!   declined or cancelled form answers "no" to an approval and nothing to a question (the
//!   tool then behaves as with nobody to answer). Without elicitation nobody can be asked.
//!   A question is withdrawn (`notifications/cancelled` for it) once its call is cancelled or
//!   given up, or its time (`[limits] ask_timeout_secs`) has passed.
//! - A call made with a `progressToken` has a UI of its own ([`CallUi`]): its events (command
//!   output, browser steps, a subagent's progress) become `notifications/progress` messages.
//!
//! rmcp marks MCP logging deprecated (SEP-2577, proposed for removal); it is still the
//! protocol's way for a server to tell its client's user something outside a result.
#![allow(deprecated)]

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CancelledNotificationParam, ClientResult, CreateMessageRequest, CreateMessageRequestParams,
    ElicitRequest, ElicitRequestParams, ElicitationAction, ElicitationSchema, LoggingLevel,
    LoggingMessageNotificationParam, ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, ServiceError};
use rmcp::RoleServer;
use serde_json::Value;
use tool_api::model::AskReply;

use super::questions;
use crate::plugins::handler::Cancellation;
use crate::ui::{Ui, ERROR_EVENT, NOTIFICATION_EVENT};

/// The client of one MCP session, once the session is up: where [`McpUi`] sends events.
#[derive(Clone, Default)]
pub struct ClientLink {
    inner: Arc<Mutex<Link>>,
}

#[derive(Default)]
struct Link {
    peer: Option<(Peer<RoleServer>, tokio::runtime::Handle)>,
    /// The least severe level the client wants (`None`: all).
    level: Option<LoggingLevel>,
    /// How long an elicitation waits for the user (`None`: the settings' default).
    ask_timeout: Option<Duration>,
    /// No log message goes out (a 2026-07-28 request that asked for none).
    silent: bool,
}

impl ClientLink {
    /// The link of one 2026-07-28 request, which carries what a session would: its events go
    /// to `peer` (the request's own stream), its log messages only at or above `level` (its
    /// `_meta`'s `logLevel`) and none without one, questions wait `ask_timeout`. The host's own
    /// log reaches it only from the request's call.
    pub fn for_request(
        peer: Peer<RoleServer>,
        handle: tokio::runtime::Handle,
        level: Option<LoggingLevel>,
        ask_timeout: Duration,
    ) -> Self {
        let link = Link {
            peer: Some((peer, handle)),
            level,
            ask_timeout: Some(ask_timeout),
            silent: level.is_none(),
        };
        Self {
            inner: Arc::new(Mutex::new(link)),
        }
    }

    /// Sends no log message any more (a request's link whose request was answered).
    pub fn silence(&self) {
        self.lock().silent = true;
    }

    /// The session is up: events go to `peer`, on the runtime of `handle`. Whether it is the
    /// link's first connection (the host's own log then goes to it too: [`super::log::connect`]).
    pub fn connect(&self, peer: Peer<RoleServer>, handle: tokio::runtime::Handle) -> bool {
        self.lock().peer.replace((peer, handle)).is_none()
    }

    /// [`ClientLink::connect`] unless already connected; whether it connected.
    pub fn connect_once(&self, peer: Peer<RoleServer>, handle: tokio::runtime::Handle) -> bool {
        self.lock().peer.is_none() && self.connect(peer, handle)
    }

    /// Whether the session is up and its transport still open.
    pub fn is_open(&self) -> bool {
        self.lock()
            .peer
            .as_ref()
            .is_some_and(|(peer, _)| !peer.is_transport_closed())
    }

    /// How long an elicitation waits for the user's answer (`[limits] ask_timeout_secs`).
    pub fn set_ask_timeout(&self, timeout: Duration) {
        self.lock().ask_timeout = Some(timeout);
    }

    /// How long a question waits for the user's answer.
    pub fn ask_timeout(&self) -> Duration {
        self.lock()
            .ask_timeout
            .unwrap_or_else(|| crate::settings::Limits::default().ask_timeout())
    }

    /// The client's `logging/setLevel`.
    pub fn set_level(&self, level: LoggingLevel) {
        self.lock().level = Some(level);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Link> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn peer(&self) -> Option<(Peer<RoleServer>, tokio::runtime::Handle)> {
        self.lock().peer.clone()
    }

    /// Runs `work` with the peer on the session's runtime and waits for its answer, from a
    /// call's thread (calls never run on the runtime's own thread). `None` before the session
    /// is up or when the session ended first.
    fn run<T: Send + 'static, F>(&self, work: impl FnOnce(Peer<RoleServer>) -> F) -> Option<T>
    where
        F: Future<Output = T> + Send + 'static,
    {
        let (peer, handle) = self.peer()?;
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        let future = work(peer);
        handle.spawn(async move {
            let _ = sender.send(future.await);
        });
        receiver.recv().ok()
    }

    /// Sends one `notifications/message` and waits until it is written, so that it reaches
    /// the client before the call's result.
    fn log(&self, level: LoggingLevel, text: &str) {
        let link = self.lock();
        if link.silent || link.level.is_some_and(|least| rank(level) < rank(least)) {
            return;
        }
        drop(link);
        let message = log_message(level, text);
        self.run(|peer| async move {
            if let Err(e) = peer.notify_logging_message(message).await {
                tracing::debug!(target: "toolhost::mcp", "notification not sent: {e}");
            }
        });
    }

    /// Whether a host log message at `level` is wanted: at or above the client's level, by
    /// default warnings and errors.
    fn wants_host_log(&self, level: LoggingLevel) -> bool {
        let link = self.lock();
        let least = link.level.unwrap_or(LoggingLevel::Warning);
        !link.silent && rank(level) >= rank(least)
    }

    /// A host log message ([`super::log`]) from a call's thread: sent before the call's
    /// result.
    pub(super) fn log_host(&self, level: LoggingLevel, text: &str) {
        if self.wants_host_log(level) {
            self.log(level, text);
        }
    }

    /// A host log message from any thread, the runtime's included: sent without waiting.
    pub(super) fn log_later(&self, level: LoggingLevel, text: &str) {
        if !self.wants_host_log(level) {
            return;
        }
        let Some((peer, handle)) = self.peer() else {
            return;
        };
        let message = log_message(level, text);
        handle.spawn(async move {
            if let Err(e) = peer.notify_logging_message(message).await {
                tracing::debug!(target: "toolhost::mcp", "notification not sent: {e}");
            }
        });
    }

    /// Whether the client declared elicitation (`url`: of the URL mode; else forms).
    fn can_elicit(&self, url: bool) -> bool {
        self.peer().is_some_and(|(peer, _)| {
            peer.peer_info().is_some_and(|info| {
                info.capabilities.elicitation.as_ref().is_some_and(|e| {
                    if url {
                        e.url.is_some()
                    } else {
                        e.form.is_some() || e.url.is_none()
                    }
                })
            })
        })
    }

    /// Whether the client declared sampling.
    fn can_sample(&self) -> bool {
        self.peer().is_some_and(|(peer, _)| {
            peer.peer_info()
                .is_some_and(|info| info.capabilities.sampling.is_some())
        })
    }

    /// Asks the user with a form; `None` when the client cannot be asked, the request failed
    /// or `cancellation` (the call's) came first. Otherwise the action and the form's content.
    fn elicit(
        &self,
        message: &str,
        schema: Value,
        cancellation: Option<&Arc<Cancellation>>,
    ) -> Option<(ElicitationAction, Value)> {
        let schema: ElicitationSchema = serde_json::from_value(schema)
            .map_err(|e| tracing::error!(target: "toolhost::mcp", "elicitation schema: {e}"))
            .ok()?;
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.to_string(),
            requested_schema: schema,
        };
        self.elicit_with(params, cancellation)
    }

    /// Elicits `params` (a form, or a URL to visit) of the client's user; as [`Self::elicit`].
    pub(super) fn elicit_with(
        &self,
        params: ElicitRequestParams,
        cancellation: Option<&Arc<Cancellation>>,
    ) -> Option<(ElicitationAction, Value)> {
        let url = matches!(params, ElicitRequestParams::UrlElicitationParams { .. });
        if !self.can_elicit(url) {
            return None;
        }
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
        match self.request(request, cancellation)? {
            ClientResult::ElicitResult(result) => {
                Some((result.action, result.content.unwrap_or(Value::Null)))
            }
            _ => {
                tracing::warn!(target: "toolhost::elicitation", "the client answered an elicitation with something else");
                None
            }
        }
    }

    /// Asks the client's model to write a message (`sampling/createMessage`); the result, or
    /// `None` as for [`Self::elicit`].
    pub(super) fn sample(
        &self,
        params: CreateMessageRequestParams,
        cancellation: Option<&Arc<Cancellation>>,
    ) -> Option<Value> {
        if !self.can_sample() {
            return None;
        }
        let request = ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params));
        match self.request(request, cancellation)? {
            ClientResult::CreateMessageResult(result) => serde_json::to_value(result).ok(),
            _ => {
                tracing::warn!(target: "toolhost::elicitation", "the client answered a sampling request with something else");
                None
            }
        }
    }

    /// Sends `request` to the client and waits for its answer; `None` when the request
    /// failed, no answer came within the ask limit, or `cancellation` (the call's) came
    /// first. The client is told when its request is void (`notifications/cancelled`), so
    /// that it stops showing it: rmcp tells it when the limit passes, and this when the call
    /// is cancelled first (by the client, or given up at its timeout).
    fn request(
        &self,
        request: ServerRequest,
        cancellation: Option<&Arc<Cancellation>>,
    ) -> Option<ClientResult> {
        let watched = cancellation.cloned();
        let limit = self.ask_timeout();
        let answer = self.run(|peer| async move {
            let asked = match peer
                .send_cancellable_request(request, PeerRequestOptions::with_timeout(limit))
                .await
            {
                Ok(asked) => asked,
                Err(e) => return Some(Err(e.to_string())),
            };
            let (id, peer) = (asked.id.clone(), asked.peer.clone());
            let ask = async move {
                match asked.await_response().await {
                    Ok(result) => Ok(result),
                    Err(ServiceError::Timeout { .. }) => Err(format!(
                        "no answer within {} s ([limits] ask_timeout_secs)",
                        limit.as_secs()
                    )),
                    Err(e) => Err(e.to_string()),
                }
            };
            match watched {
                Some(cancellation) => tokio::select! {
                    answer = ask => Some(answer),
                    () = wait_cancelled(cancellation) => {
                        let withdrawn = CancelledNotificationParam::new(
                            Some(id),
                            Some("the tool call was cancelled".to_string()),
                        );
                        if let Err(e) = peer.notify_cancelled(withdrawn).await {
                            tracing::debug!(target: "toolhost::mcp", "cancellation not sent: {e}");
                        }
                        None
                    }
                },
                None => Some(ask.await),
            }
        })??;
        answer
            .map_err(|e| tracing::warn!(target: "toolhost::elicitation", "a request to the client failed: {e}"))
            .ok()
    }

    /// A tool's log message (`notifications/message` at `level`, from `logger`), at or
    /// above the client's level (all of them until it sets one).
    pub(super) fn log_data(&self, level: LoggingLevel, logger: &str, data: &Value) {
        let link = self.lock();
        if link.silent || link.level.is_some_and(|least| rank(level) < rank(least)) {
            return;
        }
        drop(link);
        let mut message = LoggingMessageNotificationParam::new(level, data.clone());
        message.logger = (!logger.is_empty()).then(|| logger.to_string());
        self.run(|peer| async move {
            if let Err(e) = peer.notify_logging_message(message).await {
                tracing::debug!(target: "toolhost::mcp", "notification not sent: {e}");
            }
        });
    }
}

/// A `notifications/message` from toolhost.
fn log_message(level: LoggingLevel, text: &str) -> LoggingMessageNotificationParam {
    let mut message = LoggingMessageNotificationParam::new(level, Value::from(text));
    message.logger = Some("toolhost".to_string());
    message
}

/// Resolves once `cancellation` is cancelled (polled: it is a blocking flag).
async fn wait_cancelled(cancellation: Arc<Cancellation>) {
    while !cancellation.is_cancelled() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The severity order of MCP's levels.
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// The UI of an MCP session.
pub struct McpUi {
    link: ClientLink,
}

impl McpUi {
    /// A UI whose events go to the client of `link`.
    pub fn new(link: ClientLink) -> Self {
        Self { link }
    }
}

impl Ui for McpUi {
    fn say(&self, kind: &str, text: &str, partial: bool) {
        log_event(&self.link, kind, text, partial);
    }

    fn ask(&self, kind: &str, text: &str) -> Option<AskReply> {
        ask(&self.link, kind, text, None)
    }
}

/// Errors and notifications as log messages; other events are logged on stderr's tracing.
pub(super) fn log_event(link: &ClientLink, kind: &str, text: &str, partial: bool) {
    if partial {
        return;
    }
    match kind {
        ERROR_EVENT => link.log(LoggingLevel::Error, text),
        NOTIFICATION_EVENT => link.log(LoggingLevel::Notice, text),
        _ => tracing::info!(target: "toolhost::ui", "{kind}: {text}"),
    }
}

/// A question (Cline's `ask`) as an elicitation form of [`questions`], asked of `link`.
pub(super) fn ask(
    link: &ClientLink,
    kind: &str,
    text: &str,
    cancellation: Option<&Arc<Cancellation>>,
) -> Option<AskReply> {
    questions::ask(
        &|message: &str, schema: Value| link.elicit(message, schema, cancellation),
        kind,
        text,
    )
}
