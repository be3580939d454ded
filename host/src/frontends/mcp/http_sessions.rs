//! The sessions of `toolhost mcp --http`: rmcp's [`LocalSessionManager`], at most `[limits]
//! max_sessions` of them at once. Opening one more ends the session idle the longest (the
//! least recently used among those with no request being answered), whose next request is then
//! `404` as for any ended session; when every session has a request being answered, the new
//! one is refused. rmcp's trait gives a session manager no request, so the cap is per server;
//! the server has one bearer token, so it is the token's cap.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Instant;

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};
use rmcp::transport::WorkerTransport;

/// [`LocalSessionManager`] with a cap on the sessions open at once.
pub struct CappedSessions {
    inner: LocalSessionManager,
    cap: usize,
    activity: Arc<Mutex<HashMap<SessionId, Activity>>>,
    /// Held while a session is made, so that two at once cannot both fill the last place.
    opening: tokio::sync::Mutex<()>,
}

/// When a session was last used, and how many of its requests are being answered.
#[derive(Clone, Copy)]
struct Activity {
    last: Instant,
    busy: usize,
}

/// A session refused, or rmcp's own error.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// Every session has a request being answered.
    #[error(
        "toolhost mcp refused a new session: all {0} sessions have a request being answered \
         ([limits] max_sessions allows more)"
    )]
    Full(usize),
    /// rmcp's session manager failed.
    #[error(transparent)]
    Inner(#[from] LocalSessionManagerError),
}

impl CappedSessions {
    /// `inner` holding at most `cap` sessions (at least 1).
    pub fn new(inner: LocalSessionManager, cap: usize) -> Self {
        Self {
            inner,
            cap: cap.max(1),
            activity: Arc::default(),
            opening: tokio::sync::Mutex::new(()),
        }
    }

    /// How many sessions may be open at once.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Whether a new session would be refused now (every place taken by a busy session).
    pub fn is_full(&self) -> bool {
        let activity = self.activity.lock().unwrap_or_else(PoisonError::into_inner);
        activity.len() >= self.cap && activity.values().all(|a| a.busy > 0)
    }

    fn touch(&self, id: &SessionId) {
        let mut activity = self.activity.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = activity.get_mut(id) {
            entry.last = Instant::now();
        }
    }

    /// The session to end for a new one: the least recently used with nothing being answered.
    fn idlest(&self) -> Result<Option<SessionId>, SessionError> {
        let activity = self.activity.lock().unwrap_or_else(PoisonError::into_inner);
        if activity.len() < self.cap {
            return Ok(None);
        }
        activity
            .iter()
            .filter(|(_, a)| a.busy == 0)
            .min_by_key(|(_, a)| a.last)
            .map(|(id, _)| Some(id.clone()))
            .ok_or(SessionError::Full(self.cap))
    }
}

/// A request's answer stream; its session counts as busy until the stream is dropped.
pub struct Answering<S> {
    stream: S,
    _busy: Busy,
}

impl<S: Stream + Unpin> Stream for Answering<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        Pin::new(&mut self.stream).poll_next(cx)
    }
}

/// One request of a session being answered.
struct Busy {
    id: SessionId,
    activity: Arc<Mutex<HashMap<SessionId, Activity>>>,
}

impl Busy {
    fn new(id: &SessionId, activity: &Arc<Mutex<HashMap<SessionId, Activity>>>) -> Self {
        if let Some(entry) = activity
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(id)
        {
            entry.busy += 1;
            entry.last = Instant::now();
        }
        Self {
            id: id.clone(),
            activity: activity.clone(),
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut activity = self.activity.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = activity.get_mut(&self.id) {
            entry.busy = entry.busy.saturating_sub(1);
            entry.last = Instant::now();
        }
    }
}

impl SessionManager for CappedSessions {
    type Error = SessionError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let _opening = self.opening.lock().await;
        if let Some(victim) = self.idlest()? {
            tracing::info!(target: "toolhost::mcp", "session {victim} ended: {} sessions are open ([limits] max_sessions) and it was idle the longest", self.cap);
            self.close_session(&victim).await?;
        }
        let (id, transport) = self.inner.create_session().await?;
        self.activity
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                id.clone(),
                Activity {
                    last: Instant::now(),
                    busy: 0,
                },
            );
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.touch(id);
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.activity
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        // Counted before the request reaches the session, so that it cannot be chosen to end
        // while its answer is on the way.
        let busy = Busy::new(id, &self.activity);
        let stream = self.inner.create_stream(id, message).await?;
        Ok(Answering {
            stream: Box::pin(stream),
            _busy: busy,
        })
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}
