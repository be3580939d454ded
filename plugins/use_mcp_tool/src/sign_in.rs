//! Signing in to remote servers that need it, with rmcp's OAuth 2.1 support: discovery of the
//! authorization server from the resource's metadata (and the 2025-03-26 fallbacks), a client
//! registered beforehand, named by a metadata document or registered on the spot, PKCE, the
//! scopes of the server's challenge, `iss` checked, tokens refreshed.
//!
//! The user signs in with `toolhost mcp-servers login NAME`: [`begin`] listens on a loopback
//! port and answers the page to open; the host opens it in the browser (or prints it), and
//! [`finish`] takes the redirect and exchanges its code. Connections then carry the token
//! ([`authorized`]). A call the server refuses says what to do ([`refused`]): sign in, or sign
//! in again for the scope the server asks for; after [`MAX_SCOPE_SIGN_INS`] sign-ins that asked
//! for it, it says that signing in again will not help.
//!
//! The sign-in's own requests (metadata, registration, token) go straight to the servers the
//! user configured and signed in to, not through the egress proxy: they are the user's act at
//! the terminal, and their hosts come from the server's metadata, never from the model. rmcp
//! refuses metadata naming a private or loopback host unless the server itself is one.

mod store;

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rmcp::transport::auth::{AuthClient, AuthorizationManager, AuthorizationRequest, OAuthState};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::remote::Refusal;
use crate::settings::{ServerConfig, SignInConfig, Transport};

/// How many sign-ins may ask for a scope a server still refuses before toolhost stops
/// suggesting another (the spec asks clients to limit step-up retries).
pub const MAX_SCOPE_SIGN_INS: usize = 2;

/// How long [`finish`] waits for the browser's redirect.
const SIGN_IN_WAIT: Duration = Duration::from_secs(300);

/// The client name toolhost registers under.
const CLIENT_NAME: &str = "toolhost";

/// A sign-in waiting for its redirect, by server URL.
struct Pending {
    state: OAuthState,
    listener: TcpListener,
    redirect_uri: String,
    /// The scopes the sign-in asks for, kept once it completes.
    asked: Vec<String>,
}

static PENDING: Mutex<BTreeMap<String, Pending>> = Mutex::new(BTreeMap::new());

/// The URL of a server that can sign in (a remote one).
fn remote_url<'a>(name: &str, config: &'a ServerConfig) -> Result<&'a str, String> {
    match &config.transport {
        Transport::Remote { url, .. } => Ok(url),
        Transport::Stdio { .. } => Err(format!(
            "MCP server \"{name}\" is a local command: only remote servers sign in"
        )),
    }
}

/// Begins signing in to `name`: discovers its authorization server, registers toolhost where
/// needed and listens for the redirect. Answers `{"authorization_url", "redirect_uri"}`.
pub async fn begin(name: &str, config: &ServerConfig) -> Result<Value, String> {
    let url = remote_url(name, config)?;
    let failed = |why: String| format!("cannot sign in to MCP server \"{name}\": {why}");
    let port = config.sign_in.redirect_port.unwrap_or(0);
    let listener = TcpListener::bind(("127.0.0.1", port)).await.map_err(|e| {
        failed(format!(
            "cannot listen on 127.0.0.1:{port} for the redirect: {e}"
        ))
    })?;
    let port = listener
        .local_addr()
        .map_err(|e| failed(e.to_string()))?
        .port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");
    let kept = store::entry(url).map_err(&failed)?;
    let scopes = scopes_to_ask(&config.sign_in, &kept);
    let mut request = AuthorizationRequest::new(&redirect_uri)
        .with_client_name(CLIENT_NAME)
        .with_application_type("native")
        .with_scopes(scopes);
    if let Some(id) = &config.sign_in.client_id {
        request = request.with_preregistered_client(id);
        if let Some(secret) = &config.sign_in.client_secret {
            request = request.with_client_secret(secret);
        }
    }
    if let Some(document) = &config.sign_in.client_metadata_url {
        request = request.with_client_metadata_url(document);
    }
    if let Some(challenge) = challenge(url, config).await {
        request = request.with_challenge(challenge);
    }
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| failed(e.to_string()))?;
    manager.set_credential_store(store::FileStore {
        url: url.to_string(),
    });
    let mut state = OAuthState::Unauthorized(manager);
    state
        .start_authorization(request)
        .await
        .map_err(|e| failed(e.to_string()))?;
    let authorization_url = state
        .get_authorization_url()
        .await
        .map_err(|e| failed(e.to_string()))?;
    let asked = asked_scopes(&authorization_url);
    PENDING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(
            url.to_string(),
            Pending {
                state,
                listener,
                redirect_uri: redirect_uri.clone(),
                asked,
            },
        );
    Ok(json!({"authorization_url": authorization_url, "redirect_uri": redirect_uri}))
}

/// The scopes a sign-in asks for: the configured ones; after a server asked for more, those
/// of the last sign-in and the granted ones with the new ones (each sign-in keeps what the
/// earlier ones had). None: rmcp picks them from the server's challenge or metadata.
fn scopes_to_ask(config: &SignInConfig, kept: &store::Entry) -> Vec<String> {
    let mut scopes = config.scopes.clone();
    if !kept.wanted_scopes.is_empty() {
        let granted = kept
            .credentials
            .iter()
            .flat_map(|c| c.granted_scopes.iter());
        let last = kept.sign_ins.last().into_iter().flatten();
        scopes.extend(last.chain(granted).chain(&kept.wanted_scopes).cloned());
    }
    let mut seen = std::collections::BTreeSet::new();
    scopes.retain(|scope| seen.insert(scope.clone()));
    scopes
}

/// The scopes an authorization URL asks for.
fn asked_scopes(authorization_url: &str) -> Vec<String> {
    url::Url::parse(authorization_url)
        .ok()
        .and_then(|url| {
            url.query_pairs()
                .find(|(key, _)| key == "scope")
                .map(|(_, scope)| scope.split_whitespace().map(str::to_string).collect())
        })
        .unwrap_or_default()
}

/// The server's `WWW-Authenticate` challenge to a client without a token, if it makes one:
/// it names the resource's metadata and the scopes it wants. A server may let `initialize`
/// through and challenge the requests after it, so a `tools/list` follows.
async fn challenge(url: &str, config: &ServerConfig) -> Option<String> {
    let Transport::Remote { headers, .. } = &config.transport else {
        return None;
    };
    let client = crate::remote::client(url, headers, None).ok()?;
    let version = "2025-11-25";
    let post = |body: Value, session: Option<&str>| {
        let mut request = client
            .post(url)
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", version)
            .json(&body);
        if let Some(session) = session {
            request = request.header("Mcp-Session-Id", session);
        }
        request.send()
    };
    let challenged = |response: &reqwest::Response| {
        (response.status() == reqwest::StatusCode::UNAUTHORIZED)
            .then(|| response.headers().get("www-authenticate")?.to_str().ok())
            .flatten()
            .map(str::to_string)
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")}}});
    let response = post(initialize, None).await.ok()?;
    if let Some(challenge) = challenged(&response) {
        return Some(challenge);
    }
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let _ = post(initialized, session.as_deref()).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let response = post(list, session.as_deref()).await;
    if let Some(session) = &session {
        // The probe's session ends here.
        let _ = client
            .delete(url)
            .header("Mcp-Session-Id", session)
            .send()
            .await;
    }
    challenged(&response.ok()?)
}

/// Waits for the redirect of the sign-in [`begin`] started for `name` and exchanges its code:
/// `{"server", "issuer", "scopes"}`.
pub async fn finish(name: &str, config: &ServerConfig) -> Result<Value, String> {
    let url = remote_url(name, config)?;
    let failed = |why: String| format!("cannot sign in to MCP server \"{name}\": {why}");
    let pending = PENDING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(url)
        .ok_or_else(|| failed("no sign-in was begun".to_string()))?;
    let Pending {
        mut state,
        listener,
        redirect_uri,
        asked,
    } = pending;
    let callback = tokio::time::timeout(SIGN_IN_WAIT, redirect(&listener, &redirect_uri))
        .await
        .map_err(|_| {
            failed(format!(
                "the browser did not come back within {} s",
                SIGN_IN_WAIT.as_secs()
            ))
        })?
        .map_err(&failed)?;
    if let Some(error) = query_value(&callback, "error") {
        let description = query_value(&callback, "error_description")
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        return Err(failed(format!(
            "the authorization server refused: {error}{description}"
        )));
    }
    state
        .handle_callback_url(&callback)
        .await
        .map_err(|e| failed(e.to_string()))?;
    // Only a completed sign-in counts toward the limit of sign-ins for a scope.
    store::update(url, |entry| {
        entry.wanted_scopes.clear();
        entry.sign_ins.push(asked);
    })
    .map_err(&failed)?;
    let credentials = store::entry(url)
        .map_err(&failed)?
        .credentials
        .ok_or_else(|| failed("the tokens were not kept".to_string()))?;
    Ok(json!({
        "server": name,
        "issuer": credentials.issuer,
        "scopes": credentials.granted_scopes,
    }))
}

/// The full redirect URL of the first request for the redirect's path, answered with a page
/// telling the user to go back to the terminal; other requests (a favicon) get 404.
///
/// One request line from the user's own browser on the loopback is read by hand: an HTTP
/// server crate would be this plugin's only use of one.
async fn redirect(listener: &TcpListener, redirect_uri: &str) -> Result<String, String> {
    let path = url::Url::parse(redirect_uri)
        .map_err(|e| e.to_string())?
        .path()
        .to_string();
    let base = redirect_uri.trim_end_matches(&path);
    loop {
        let (mut stream, _) = listener.accept().await.map_err(|e| e.to_string())?;
        let mut head = Vec::new();
        let mut chunk = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&chunk[..n]),
            }
        }
        let head = String::from_utf8_lossy(&head);
        let target = head
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("GET "))
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or("");
        if target.split('?').next() == Some(path.as_str()) {
            let page = "<!doctype html><title>toolhost</title>\
                        <p>Sign-in received. You can close this page and go back to toolhost.</p>";
            let _ = stream.write_all(response("200 OK", page).as_bytes()).await;
            return Ok(format!("{base}{target}"));
        }
        let _ = stream
            .write_all(response("404 Not Found", "").as_bytes())
            .await;
    }
}

fn response(status: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
}

/// The value of `key` in a URL's query.
fn query_value(url: &str, key: &str) -> Option<String> {
    url::Url::parse(url)
        .ok()?
        .query_pairs()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
}

/// Forgets the user's sign-in to `name`: `{"server", "signed_out"}` (false when there was none).
pub fn sign_out(name: &str, config: &ServerConfig) -> Result<Value, String> {
    let url = remote_url(name, config)?;
    let had = store::entry(url)?.credentials.is_some();
    store::update(url, |entry| *entry = store::Entry::default())?;
    Ok(json!({"server": name, "signed_out": had}))
}

/// Who is signed in at `url`, for `toolhost mcp-servers`: `{"issuer", "scopes"}`.
pub fn status(url: &str) -> Option<Value> {
    let credentials = store::entry(url).ok()?.credentials?;
    credentials.token_response.as_ref()?;
    Some(json!({"issuer": credentials.issuer, "scopes": credentials.granted_scopes}))
}

/// `client` carrying the user's token for the server at `url` (refreshed when it expires),
/// when the user signed in to it; `None` otherwise.
pub async fn authorized(
    url: &str,
    client: reqwest::Client,
) -> Result<Option<AuthClient<reqwest::Client>>, String> {
    if status(url).is_none() {
        return Ok(None);
    }
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| e.to_string())?;
    manager.set_credential_store(store::FileStore {
        url: url.to_string(),
    });
    // False when the server moved to another authorization server: the old tokens are
    // dropped and the server's 401 asks for a new sign-in.
    let signed_in = manager
        .initialize_from_store()
        .await
        .map_err(|e| format!("cannot use the sign-in: {e}"))?;
    Ok(signed_in.then(|| AuthClient::new(client, manager)))
}

/// What to do about `refusal` by server `name` at `url`, worded to follow "MCP server NAME
/// refused the request: " or "... could not be started: ". A scope the server asks for is kept
/// for the next sign-in.
pub fn refused(name: &str, url: &str, refusal: &Refusal) -> String {
    let login = format!("toolhost mcp-servers login {name}");
    match refusal {
        Refusal::SignIn => {
            let again = if status(url).is_some() {
                "the sign-in has expired or was revoked"
            } else {
                "it needs you to sign in"
            };
            format!("{again}. Run `{login}`, then try again.")
        }
        Refusal::Scope { scope } => {
            let wanted: Vec<String> = scope
                .map(|s| s.split_whitespace().map(str::to_string).collect())
                .unwrap_or_default();
            let kept = store::entry(url).unwrap_or_default();
            let tries = kept
                .sign_ins
                .iter()
                .filter(|asked| !wanted.is_empty() && wanted.iter().all(|w| asked.contains(w)))
                .count();
            let named = scope.map(|s| format!(" \"{s}\"")).unwrap_or_default();
            if tries >= MAX_SCOPE_SIGN_INS {
                return format!(
                    "it still needs the scope{named} after {tries} sign-ins that asked for it: \
                     signing in again will not help (the account may not be allowed it)."
                );
            }
            let _ = store::update(url, |entry| {
                for scope in wanted {
                    if !entry.wanted_scopes.contains(&scope) {
                        entry.wanted_scopes.push(scope);
                    }
                }
            });
            format!(
                "it needs more access for this (the scope{named}). Run `{login}` to sign in \
                 again with it, then try again."
            )
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_step_up_keeps_the_earlier_scopes_and_adds_the_wanted_ones() {
        let config = SignInConfig::default();
        let mut kept = store::Entry::default();
        assert!(scopes_to_ask(&config, &kept).is_empty(), "rmcp picks");
        kept.sign_ins.push(vec!["mcp:read".into()]);
        kept.wanted_scopes.push("mcp:write".into());
        assert_eq!(scopes_to_ask(&config, &kept), vec!["mcp:read", "mcp:write"]);
    }

    #[test]
    fn the_scopes_asked_for_are_read_from_the_url() {
        assert_eq!(
            asked_scopes("https://as.example/authorize?client_id=x&scope=a%20b+c"),
            vec!["a", "b", "c"]
        );
        assert!(asked_scopes("https://as.example/authorize?client_id=x").is_empty());
    }
}
