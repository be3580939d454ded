//! The client side of MCP's legacy HTTP+SSE transport (protocol 2024-11-05), Cline's `sse`
//! servers: a GET opens an event stream whose first `endpoint` event names the URL (usually
//! relative, with a session id) to POST JSON-RPC messages to; `message` events carry the
//! server's messages.
//!
//! Written here because rmcp 3 dropped its SSE client (it keeps the streamable HTTP one), and
//! Cline's settings still default untyped `url` entries to this transport. The parts that exist
//! as crates are used: reqwest for HTTP, `sse-stream` (rmcp's own event parser) for the stream,
//! and rmcp's [`Worker`] plumbing, so the result is served like any other rmcp transport.

use std::pin::Pin;

use futures_util::stream::{FuturesUnordered, Stream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::Url;
use rmcp::model::ServerJsonRpcMessage;
use rmcp::service::RoleClient;
use rmcp::transport::worker::{Worker, WorkerContext, WorkerQuitReason, WorkerSendRequest};
use sse_stream::{Sse, SseStream};

use crate::remote;

/// The parsed event stream.
type Events = Pin<Box<dyn Stream<Item = Result<Sse, sse_stream::Error>> + Send>>;

/// An open SSE session: the event stream and the URL messages are posted to. Served as an rmcp
/// transport (`ClientConfig::serve(worker)`).
pub struct SseWorker {
    client: reqwest::Client,
    endpoint: Url,
    events: Events,
}

/// What went wrong on the SSE transport, worded for the user.
#[derive(Debug)]
pub struct SseError(String);

impl std::fmt::Display for SseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SseError {}

/// Opens the event stream at `url` and waits for the server's `endpoint` event.
pub async fn connect(client: reqwest::Client, url: &str) -> Result<SseWorker, String> {
    let url = Url::parse(url).map_err(|e| format!("invalid URL {url}: {e}"))?;
    let response = client
        .get(url.clone())
        .header(ACCEPT, "text/event-stream")
        .send()
        .await
        .map_err(|e| remote::chain(&e))?;
    let status = response.status();
    if !status.is_success() {
        let body = response.text().await.unwrap_or_default();
        return Err(http_error(status, &body));
    }
    let mut events: Events = Box::pin(SseStream::from_bytes_stream(response.bytes_stream()));
    loop {
        match events.next().await {
            Some(Ok(event)) if event.event.as_deref() == Some("endpoint") => {
                let data = event.data.unwrap_or_default();
                let endpoint = url
                    .join(data.trim())
                    .map_err(|e| format!("the server's endpoint \"{data}\" is not a URL: {e}"))?;
                // As the TypeScript SDK does: the headers (credentials) go to the same origin only.
                if endpoint.origin() != url.origin() {
                    return Err(format!(
                        "the server's endpoint {endpoint} is not on the origin of {url}"
                    ));
                }
                return Ok(SseWorker {
                    client,
                    endpoint,
                    events,
                });
            }
            // Nothing can be addressed to this client before it knows where to post.
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(format!("invalid event stream: {e}")),
            None => return Err("the event stream ended before the endpoint event".to_string()),
        }
    }
}

impl Worker for SseWorker {
    type Error = SseError;
    type Role = RoleClient;

    fn err_closed() -> Self::Error {
        SseError("the SSE connection is closed".to_string())
    }

    fn err_join(e: tokio::task::JoinError) -> Self::Error {
        SseError(e.to_string())
    }

    async fn run(
        self,
        mut context: WorkerContext<Self>,
    ) -> Result<(), WorkerQuitReason<Self::Error>> {
        let SseWorker {
            client,
            endpoint,
            mut events,
        } = self;
        // Posts run side by side with the stream: a server may answer a POST only after the
        // client has read what it wrote on the stream.
        let mut posts = FuturesUnordered::new();
        let cancelled = context.cancellation_token.clone();
        loop {
            tokio::select! {
                () = cancelled.cancelled() => return Err(WorkerQuitReason::Cancelled),
                event = events.next() => match event {
                    Some(Ok(event)) => {
                        if let Some(message) = server_message(&event) {
                            context.send_to_handler(message).await?;
                        }
                    }
                    Some(Err(e)) => {
                        return Err(WorkerQuitReason::fatal(
                            SseError(format!("invalid event stream: {e}")),
                            "reading the event stream",
                        ))
                    }
                    // The session lives as long as the stream: once it ends, the connection
                    // is closed (and the hub opens a new one on the next call).
                    None => return Err(WorkerQuitReason::TransportClosed),
                },
                request = context.recv_from_handler() => {
                    posts.push(post(client.clone(), endpoint.clone(), request?));
                }
                Some(()) = posts.next(), if !posts.is_empty() => {}
            }
        }
    }
}

/// The JSON-RPC message of a `message` event (the default event type); other events, and
/// messages that are not JSON-RPC, are skipped as the TypeScript SDK does.
fn server_message(event: &Sse) -> Option<ServerJsonRpcMessage> {
    match event.event.as_deref() {
        None | Some("message") => serde_json::from_str(event.data.as_deref()?).ok(),
        Some(_) => None,
    }
}

/// Posts one client message; its outcome answers the sender.
async fn post(client: reqwest::Client, endpoint: Url, request: WorkerSendRequest<SseWorker>) {
    let WorkerSendRequest {
        message, responder, ..
    } = request;
    let result = async {
        let body = serde_json::to_vec(&message).map_err(|e| SseError(e.to_string()))?;
        let response = client
            .post(endpoint)
            .header(CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| SseError(remote::chain(&e)))?;
        let status = response.status();
        if status.is_success() {
            Ok(())
        } else {
            let body = response.text().await.unwrap_or_default();
            Err(SseError(http_error(status, &body)))
        }
    }
    .await;
    let _ = responder.send(result);
}

/// A failed HTTP reply, with the start of its body.
fn http_error(status: reqwest::StatusCode, body: &str) -> String {
    let body: String = body.trim().chars().take(200).collect();
    if body.is_empty() {
        format!("HTTP {status}")
    } else {
        format!("HTTP {status}: {body}")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn event(kind: Option<&str>, data: &str) -> Sse {
        Sse {
            event: kind.map(str::to_string),
            data: Some(data.to_string()),
            id: None,
            retry: None,
        }
    }

    #[test]
    fn message_events_carry_json_rpc_and_others_are_skipped() {
        let response = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        let expected: ServerJsonRpcMessage = serde_json::from_str(response).unwrap();
        let parsed = |e: &Sse| server_message(e).map(|m| serde_json::to_value(m).unwrap());
        let expected = Some(serde_json::to_value(expected).unwrap());
        assert_eq!(parsed(&event(Some("message"), response)), expected);
        assert_eq!(parsed(&event(None, response)), expected);
        assert_eq!(parsed(&event(Some("endpoint"), "/messages/?s=1")), None);
        assert_eq!(parsed(&event(Some("message"), "not json")), None);
        assert_eq!(parsed(&event(Some("message"), r#"{"hello":1}"#)), None);
    }

    #[test]
    fn failed_replies_show_their_status_and_the_start_of_their_body() {
        assert_eq!(
            http_error(reqwest::StatusCode::NOT_FOUND, "  "),
            "HTTP 404 Not Found"
        );
        assert_eq!(
            http_error(reqwest::StatusCode::BAD_REQUEST, &"x".repeat(500)),
            format!("HTTP 400 Bad Request: {}", "x".repeat(200))
        );
    }
}
