//! What a server tells the calls it is serving: the progress of a request and its log
//! messages, shown as Cline shows a server's messages, `say("mcp_notification", "[server]
//! message")`, while the call runs (under `toolhost mcp`, the call's progress notifications).
//!
//! The client handler of every connection ([`HubClient`]) hands them to the calls listening
//! ([`listen`]): progress to the call whose request carries the token, log messages to every
//! call running on that server. Nothing listens between calls: what arrives then is dropped (Cline queues it
//! for the next task; a host may serve many).
//!
//! rmcp marks MCP logging deprecated (SEP-2577, proposed for removal); servers still send it.
#![allow(deprecated)]

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use rmcp::model::{
    ClientConfig, LoggingMessageNotificationParam, NumberOrString, ProgressNotificationParam,
    ProgressToken,
};
use rmcp::service::{NotificationContext, RoleClient};
use rmcp::ClientHandler;
use serde_json::Value;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

/// The calls listening, by progress token: their server and where their notices go.
static LISTENERS: Mutex<BTreeMap<String, (String, UnboundedSender<String>)>> =
    Mutex::new(BTreeMap::new());

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
        if let Some((server, sender)) = listeners.get(&token) {
            let _ = sender.send(progress_text(server, &params));
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
        for (server, sender) in listeners.values() {
            if *server == self.server {
                let _ = sender.send(text.clone());
            }
        }
    }
}

/// Where the notices of one call go: registered for its request's progress token once the
/// request is sent.
pub struct Listener {
    server: String,
    sender: UnboundedSender<String>,
}

/// A call's listener and the notices it will receive, as the text of `mcp_notification`s.
pub fn listen(server: &str) -> (Listener, UnboundedReceiver<String>) {
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
        LISTENERS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.clone(), (self.server.clone(), self.sender.clone()));
        Registered { key }
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
