//! Remote servers: the HTTP client both remote transports use, rmcp's streamable HTTP
//! transport over it, and errors worded with their causes.

use std::collections::BTreeMap;
use std::error::Error;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use rmcp::service::{ClientInitializeError, ServiceError};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, InsufficientScopeError, StreamableHttpClient,
    StreamableHttpClientTransportConfig, StreamableHttpError,
};
use rmcp::transport::StreamableHttpClientTransport;
use tool_api::model::EgressRoute;

/// An HTTP client for the server at `url` that sends the entry's `headers` with every
/// request, through the host's egress proxy when there is a `route` (the server's URL is
/// named as the configured endpoint it is, so the policy allows it exactly; anything else it
/// is sent to, a redirect's target, is decided as any connection).
///
/// They are the client's default headers rather than rmcp's `custom_headers`: that way the SSE
/// transport's GET and POSTs carry them too, and a header the transport sets itself (`Accept`,
/// `Mcp-Session-Id`) takes precedence instead of failing every request as a reserved name.
pub fn client(
    url: &str,
    headers: &BTreeMap<String, String>,
    route: Option<&EgressRoute>,
) -> Result<reqwest::Client, String> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("\"{name}\" is not a valid HTTP header name"))?;
        let value = HeaderValue::from_str(value).map_err(|_| {
            format!("the value of header \"{name}\" is not a valid HTTP header value")
        })?;
        map.insert(header, value);
    }
    let mut builder = reqwest::Client::builder().default_headers(map);
    if let Some(route) = route {
        let unusable = |e: &dyn Error| {
            format!(
                "the host's egress proxy ({}) cannot be used: {}",
                route.url,
                chain(e)
            )
        };
        let authorization =
            HeaderValue::from_str(&route.authorization_for(url)).map_err(|e| unusable(&e))?;
        let proxy = reqwest::Proxy::all(route.url.as_str()).map_err(|e| unusable(&e))?;
        builder = builder.proxy(proxy.custom_http_auth(authorization));
    }
    builder.build().map_err(|e| chain(&e))
}

/// rmcp's streamable HTTP transport to `url` over `client` (a [`client`], or one carrying the
/// user's sign-in).
///
/// Cline wraps the TypeScript SDK's fetch to turn a 404 answer to the optional GET stream into
/// 405, because that SDK fails the connection on anything but 405. rmcp needs no such rewrite:
/// a GET stream that cannot be opened (for any status) leaves the session working without it.
pub fn streamable_http<C: StreamableHttpClient>(
    url: &str,
    client: C,
) -> StreamableHttpClientTransport<C> {
    StreamableHttpClientTransport::with_client(
        client,
        StreamableHttpClientTransportConfig::with_uri(url),
    )
}

/// The server's refusal for want of authorization (a 401 or a 403 `insufficient_scope`) that
/// made a request or a handshake fail, if that is why.
pub fn refusal<'a>(error: &ServiceOrHandshake<'a>) -> Option<Refusal<'a>> {
    let transport = match error {
        ServiceOrHandshake::Service(ServiceError::TransportSend(e)) => e.error.as_ref(),
        ServiceOrHandshake::Handshake(ClientInitializeError::TransportError { error, .. }) => {
            error.error.as_ref()
        }
        _ => return None,
    };
    let mut source: Option<&(dyn Error + 'static)> = Some(transport);
    while let Some(current) = source {
        if current.downcast_ref::<AuthRequiredError>().is_some() {
            return Some(Refusal::SignIn);
        }
        if let Some(refused) = current.downcast_ref::<InsufficientScopeError>() {
            return Some(Refusal::Scope {
                scope: refused.get_required_scope(),
            });
        }
        source = current.source();
    }
    None
}

/// A server's refusal of a request for want of authorization.
pub enum Refusal<'a> {
    /// 401: no token, or one it no longer takes.
    SignIn,
    /// 403 `insufficient_scope`: the token lacks `scope`.
    Scope { scope: Option<&'a str> },
}

/// An error of a request or of the handshake.
pub enum ServiceOrHandshake<'a> {
    /// A request's.
    Service(&'a ServiceError),
    /// The handshake's.
    Handshake(&'a ClientInitializeError),
}

/// Why the MCP handshake failed, in words a user can act on: the transport's own error (the
/// HTTP status, the refused connection...) rather than rmcp's wrapping of it, which names Rust
/// types.
pub fn handshake_error(error: &ClientInitializeError) -> String {
    match error {
        ClientInitializeError::TransportError { error, .. } => {
            let error = error.error.as_ref();
            match error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
                // rmcp's wrapper does not expose reqwest's error as its source.
                Some(StreamableHttpError::Client(e)) => chain(e),
                _ => chain(error),
            }
        }
        other => chain(other),
    }
}

/// `error`'s message followed by its causes (reqwest's top-level message alone says only
/// "error sending request").
pub fn chain(error: &dyn Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        // Some wrappers repeat their cause in their own message.
        if !message.contains(&cause_text) {
            message.push_str(": ");
            message.push_str(&cause_text);
        }
        source = cause.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_must_be_valid_http() {
        let headers = |name: &str, value: &str| BTreeMap::from([(name.into(), value.into())]);
        let client = |headers| client("http://127.0.0.1:1/mcp", &headers, None);
        assert!(client(headers("Authorization", "Bearer x")).is_ok());
        assert_eq!(
            client(headers("Bad Name", "x")).err(),
            Some("\"Bad Name\" is not a valid HTTP header name".to_string())
        );
        assert_eq!(
            client(headers("X-Key", "line\nbreak")).err(),
            Some("the value of header \"X-Key\" is not a valid HTTP header value".to_string())
        );
    }

    #[test]
    fn causes_follow_the_message() {
        let inner = std::io::Error::other("Connection refused");
        let outer = std::io::Error::other(Wrapper(inner));
        assert_eq!(chain(&outer), "tcp connect error: Connection refused");
    }

    #[derive(Debug)]
    struct Wrapper(std::io::Error);

    impl std::fmt::Display for Wrapper {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("tcp connect error")
        }
    }

    impl Error for Wrapper {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(&self.0)
        }
    }
}
