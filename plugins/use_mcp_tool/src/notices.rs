//! What a server tells and asks the calls it is serving: the progress of a request and its
//! log messages, shown as Cline shows a server's messages, `say("mcp_notification", "[server]
//! message")`, while the call runs (under `toolhost mcp`, the call's progress notifications);
//! and its requests to the client (a form for the user, a message of the user's model, the
//! client's roots), asked of the call's user through the call ([`Notice::Asked`]).
//!
//! The client handler of every connection ([`HubClient`]) hands them to the calls listening
//! ([`listen`]): progress to the call whose request carries the token, log messages to every
//! call running on that server, a request to the call that started last on that server (a
//! server's request does not say which of its requests it belongs to). Nothing listens between
//! calls: what arrives then is dropped (Cline queues it for the next task; a host may serve
//! many), and a request then is declined.
//!
//! rmcp marks MCP logging and sampling deprecated (SEP-2577, proposed for removal); servers
//! still send them.
#![allow(deprecated)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use rmcp::model::{
    ClientConfig, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationAction, ListRootsResult, LoggingMessageNotificationParam,
    NumberOrString, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use serde_json::Value;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::sync::oneshot;

/// What a server tells or asks a call.
pub enum Notice {
    /// Text for an `mcp_notification`.
    Said(String),
    /// A request for the call's user or client, to be answered on the call's thread.
    Asked(Question),
}

/// A server's request to the client (`elicitation/create`, `sampling/createMessage`,
/// `roots/list`), and where its answer goes (`None`: nobody answered).
pub struct Question {
    /// The request's method.
    pub method: String,
    /// Its params.
    pub params: Value,
    /// Where the answer goes.
    pub reply: oneshot::Sender<Option<Value>>,
}

/// The order in which calls started listening.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// A call listening for one of its requests.
struct Listening {
    /// Its server.
    server: String,
    /// When it started listening ([`NEXT`]).
    order: u64,
    /// Where its notices go.
    sender: UnboundedSender<Notice>,
}

/// The calls listening, by progress token.
static LISTENERS: Mutex<BTreeMap<String, Listening>> = Mutex::new(BTreeMap::new());

/// The client side of one connection: Cline's client info, and the notices of `server`.
pub struct HubClient {
    /// What the client tells the server in `initialize`.
    pub info: ClientConfig,
    /// The server's name in the settings.
    pub server: String,
}

impl ClientHandler for HubClient {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let token = token_text(&params.progress_token);
        let listeners = LISTENERS.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(listening) = listeners.get(&token) {
            let text = progress_text(&listening.server, &params);
            let _ = listening.sender.send(Notice::Said(text));
        }
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let data = match &params.data {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let text = match &params.logger {
            Some(logger) => format!("[{}] {logger}: {data}", self.server),
            None => format!("[{}] {data}", self.server),
        };
        let listeners = LISTENERS.lock().unwrap_or_else(PoisonError::into_inner);
        for listening in listeners.values() {
            if listening.server == self.server {
                let _ = listening.sender.send(Notice::Said(text.clone()));
            }
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let params = serde_json::to_value(&request).unwrap_or_default();
        let answer = ask_latest(&self.server, "elicitation/create", params).await;
        Ok(answer
            .and_then(|answer| serde_json::from_value(answer).ok())
            .unwrap_or_else(|| ElicitResult::new(ElicitationAction::Decline)))
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let params = serde_json::to_value(&params).unwrap_or_default();
        let answer = ask_latest(&self.server, "sampling/createMessage", params).await;
        answer
            .and_then(|answer| serde_json::from_value(answer).ok())
            .ok_or_else(|| {
                ErrorData::internal_error("no model of the client can write this message", None)
            })
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let answer = ask_latest(&self.server, "roots/list", Value::Null).await;
        Ok(answer
            .and_then(|answer| serde_json::from_value(answer).ok())
            .unwrap_or_default())
    }
}

/// Asks the call that started listening last on `server`; `None` when none listens or it
/// does not answer.
async fn ask_latest(server: &str, method: &str, params: Value) -> Option<Value> {
    let sender = {
        let listeners = LISTENERS.lock().unwrap_or_else(PoisonError::into_inner);
        listeners
            .values()
            .filter(|listening| listening.server == server)
            .max_by_key(|listening| listening.order)
            .map(|listening| listening.sender.clone())?
    };
    ask(&sender, method, params).await
}

/// Sends a question to a call and waits for its answer.
async fn ask(sender: &UnboundedSender<Notice>, method: &str, params: Value) -> Option<Value> {
    let (reply, answered) = oneshot::channel();
    let question = Question {
        method: method.to_string(),
        params,
        reply,
    };
    sender.send(Notice::Asked(question)).ok()?;
    answered.await.ok().flatten()
}

/// Where the notices of one call go: registered for its request's progress token once the
/// request is sent.
pub struct Listener {
    server: String,
    sender: UnboundedSender<Notice>,
}

/// A call's listener and the notices it will receive.
pub fn listen(server: &str) -> (Listener, UnboundedReceiver<Notice>) {
    let (sender, notices) = unbounded_channel();
    let listener = Listener {
        server: server.to_string(),
        sender,
    };
    (listener, notices)
}

impl Listener {
    /// Listens for the request whose progress token is `token` (rmcp chooses it when it sends
    /// the request), until the returned guard is dropped.
    pub fn register(&self, token: &ProgressToken) -> Registered {
        let key = token_text(token);
        let order = NEXT.fetch_add(1, Ordering::Relaxed);
        LISTENERS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                key.clone(),
                Listening {
                    server: self.server.clone(),
                    order,
                    sender: self.sender.clone(),
                },
            );
        Registered { key }
    }

    /// Asks the call a server's request (the input a 2026-07-28 server's result needs).
    pub async fn ask(&self, method: &str, params: Value) -> Option<Value> {
        ask(&self.sender, method, params).await
    }
}

/// A registered [`Listener`]; dropping it stops the listening.
pub struct Registered {
    key: String,
}

impl Drop for Registered {
    fn drop(&mut self) {
        LISTENERS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.key);
    }
}

fn token_text(token: &ProgressToken) -> String {
    match &token.0 {
        NumberOrString::String(text) => text.to_string(),
        NumberOrString::Number(number) => number.to_string(),
    }
}

/// `[server] 3/10 message`: the progress, its total when known, and its message.
fn progress_text(server: &str, params: &ProgressNotificationParam) -> String {
    let mut text = format!("[{server}] {}", params.progress);
    if let Some(total) = params.total {
        text.push_str(&format!("/{total}"));
    }
    if let Some(message) = &params.message {
        text.push(' ');
        text.push_str(message);
    }
    text
}
