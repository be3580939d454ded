//! The UI of `toolhost mcp`: the events a user should see (errors, notifications) go to the
//! client as MCP `notifications/message` (logging), at the level the client chose with
//! `logging/setLevel` (by default every one); nobody can be asked.
//!
//! rmcp marks MCP logging deprecated (SEP-2577, proposed for removal); it is still the
//! protocol's way for a server to tell its client's user something outside a result.
#![allow(deprecated)]

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::Peer;
use rmcp::RoleServer;
use serde_json::Value;
use tool_api::model::AskReply;

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
}

impl ClientLink {
    /// The session is up: events go to `peer`, on the runtime of `handle`.
    pub fn connect(&self, peer: Peer<RoleServer>, handle: tokio::runtime::Handle) {
        self.lock().peer = Some((peer, handle));
    }

    /// The client's `logging/setLevel`.
    pub fn set_level(&self, level: LoggingLevel) {
        self.lock().level = Some(level);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Link> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends one `notifications/message`. From a call's thread it waits until the message is
    /// written, so that it reaches the client before the call's result.
    fn send(&self, level: LoggingLevel, text: &str) {
        let (peer, handle) = {
            let link = self.lock();
            if link.level.is_some_and(|least| rank(level) < rank(least)) {
                return;
            }
            match &link.peer {
                Some((peer, handle)) => (peer.clone(), handle.clone()),
                None => return,
            }
        };
        let mut message = LoggingMessageNotificationParam::new(level, Value::from(text));
        message.logger = Some("toolhost".to_string());
        let notify = async move {
            if let Err(e) = peer.notify_logging_message(message).await {
                tracing::debug!(target: "toolhost::mcp", "notification not sent: {e}");
            }
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            handle.spawn(notify);
        } else {
            handle.block_on(notify);
        }
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
        if partial {
            return;
        }
        match kind {
            ERROR_EVENT => self.link.send(LoggingLevel::Error, text),
            NOTIFICATION_EVENT => self.link.send(LoggingLevel::Notice, text),
            _ => tracing::info!(target: "toolhost::ui", "{kind}: {text}"),
        }
    }

    fn ask(&self, _kind: &str, _text: &str) -> Option<AskReply> {
        None
    }
}
