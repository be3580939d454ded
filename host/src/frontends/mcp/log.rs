//! The host's warnings as MCP log messages: under `toolhost mcp`, stderr stays quiet unless
//! asked (`-v`, `$TOOLHOST_LOG`) and what the host logs at `info` or above reaches the client
//! as `notifications/message`, at the level the client chose (default: warnings and errors).
//!
//! A [`tracing_subscriber::Layer`] routes each event:
//! - on the thread of a call ([`in_session`]), to that call's session only, sent before the
//!   call's result;
//! - anywhere else (a hot swap, a worker's stderr, start-up), to every connected session;
//!   before any session is up, the first [`BACKLOG`] events wait for the first one.
//!
//! Not forwarded: the MCP frontend's own diagnostics (target `toolhost::mcp`) and rmcp's, which
//! are about the stream the messages would travel on, and the UI's events (`toolhost::ui`),
//! which reach the client as progress already.
//!
//! rmcp marks MCP logging deprecated (SEP-2577); see [`super::ui`].
#![allow(deprecated)]

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::{Mutex, PoisonError};

use rmcp::model::LoggingLevel;
use rmcp::service::Peer;
use rmcp::RoleServer;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::Context;

use super::ui::ClientLink;

/// Events kept for the first session while none is connected.
pub const BACKLOG: usize = 64;

/// Every session connected, and the events waiting for the first.
static SESSIONS: Mutex<Sessions> = Mutex::new(Sessions {
    links: Vec::new(),
    waiting: VecDeque::new(),
});

struct Sessions {
    links: Vec<ClientLink>,
    waiting: VecDeque<(LoggingLevel, String)>,
}

thread_local! {
    /// The session of the call running on this thread.
    static CALL_SESSION: RefCell<Option<ClientLink>> = const { RefCell::new(None) };
}

/// The layer that forwards the host's log events to the MCP sessions (installed with its
/// filter by [`layer`]).
struct ClientLogLayer;

/// Connects `link` to its session's `peer` ([`ClientLink::connect`]); the first time, host-wide
/// events start going to it too.
pub(super) fn connect(link: &ClientLink, peer: Peer<RoleServer>, handle: tokio::runtime::Handle) {
    if link.connect(peer, handle) {
        connected(link);
    }
}

/// [`connect`] unless `link` is connected already.
pub(super) fn connect_once(
    link: &ClientLink,
    peer: Peer<RoleServer>,
    handle: tokio::runtime::Handle,
) {
    if link.connect_once(peer, handle) {
        connected(link);
    }
}

/// Adds `link` to the sessions host-wide events go to, and hands it the events that waited.
fn connected(link: &ClientLink) {
    let mut sessions = SESSIONS.lock().unwrap_or_else(PoisonError::into_inner);
    sessions.links.retain(ClientLink::is_open);
    let waiting: Vec<_> = sessions.waiting.drain(..).collect();
    sessions.links.push(link.clone());
    drop(sessions);
    for (level, text) in waiting {
        link.log_later(level, &text);
    }
}

/// Runs `call` with the events of its thread going to `link`'s session.
pub(super) fn in_session<T>(link: &ClientLink, call: impl FnOnce() -> T) -> T {
    /// Puts the thread's session back, also when `call` panics (the thread is reused).
    struct Restore(Option<ClientLink>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let before = self.0.take();
            CALL_SESSION.with(|session| *session.borrow_mut() = before);
        }
    }
    let _restore = Restore(CALL_SESSION.with(|session| session.replace(Some(link.clone()))));
    call()
}

/// The layer with what it forwards: the host's events (`toolhost…`) at `info` and above, but
/// not the frontend's own (`toolhost::mcp`) or the UI's (`toolhost::ui`). Nothing else passes,
/// so neither rmcp's events nor its spans (one per request) cost anything.
pub fn layer<S>() -> impl tracing_subscriber::Layer<S>
where
    S: Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::Layer as _;
    ClientLogLayer.with_filter(
        Targets::new()
            .with_target("toolhost", Level::INFO)
            .with_target("toolhost::mcp", LevelFilter::OFF)
            .with_target("toolhost::ui", LevelFilter::OFF),
    )
}

impl<S: Subscriber> tracing_subscriber::Layer<S> for ClientLogLayer {
    fn on_event(&self, event: &Event<'_>, _context: Context<'_, S>) {
        let Some(level) = mcp_level(*event.metadata().level()) else {
            return;
        };
        let mut text = Text::default();
        event.record(&mut text);
        let text = text.0;
        if let Some(link) = CALL_SESSION.with(|session| session.borrow().clone()) {
            // A call's thread is never the runtime's: it may wait until the message is out.
            link.log_host(level, &text);
            return;
        }
        let mut sessions = SESSIONS.lock().unwrap_or_else(PoisonError::into_inner);
        sessions.links.retain(ClientLink::is_open);
        if sessions.links.is_empty() {
            if sessions.waiting.len() == BACKLOG {
                sessions.waiting.pop_front();
            }
            sessions.waiting.push_back((level, text));
            return;
        }
        for link in &sessions.links {
            link.log_later(level, &text);
        }
    }
}

/// The MCP level of a tracing level; `None` below `info` (never forwarded).
fn mcp_level(level: Level) -> Option<LoggingLevel> {
    match level {
        Level::ERROR => Some(LoggingLevel::Error),
        Level::WARN => Some(LoggingLevel::Warning),
        Level::INFO => Some(LoggingLevel::Info),
        _ => None,
    }
}

/// An event's message, then its other fields as `name=value`.
#[derive(Default)]
struct Text(String);

impl Visit for Text {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let message = format!("{value:?}");
            self.0.insert_str(0, &message);
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.insert_str(0, value);
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }
}
