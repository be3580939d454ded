//! Where the connections the proxy serves come from ([`Session`]): a command's link, a port
//! dedicated to one client, or the host clients' port, whose requests name their grant by
//! token.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::grant::Grant;
use super::tokens;

/// Where the connections served come from.
pub struct Session {
    /// A command's link (its grant, and the supervisor to tell of refusals); `None` for the
    /// host's own clients, whose every request names its grant by token
    /// (`Proxy-Authorization: Toolhost TOKEN`).
    pub link: Option<(Arc<Grant>, UnixStream)>,
    /// The grant of every connection of a port dedicated to one client (a browser, which
    /// cannot send a token), when the session is such a port's.
    pub dedicated: Option<Arc<Grant>>,
    /// Cancelled when the supervisor is gone: every connection of the command ends.
    pub closed: CancellationToken,
}

/// The scheme of the `Proxy-Authorization` header a host client sends its token in.
pub const TOKEN_SCHEME: &str = "Toolhost";

/// What a host client's `Proxy-Authorization` says: `Toolhost TOKEN`, or `Toolhost TOKEN
/// ENDPOINT` for a client whose every request goes to one endpoint the user configured for
/// the tool (an MCP server's URL), which then counts as allowed exactly. The plugin vouches
/// for that endpoint as it does for the `configured` URLs of its route: it read them from
/// the user's configuration, and only the plugin holds the token.
pub fn client_credentials(authorization: &str) -> Option<(&str, Option<&str>)> {
    let mut words = authorization.strip_prefix(TOKEN_SCHEME)?.split_whitespace();
    let token = words.next()?;
    let endpoint = words.next();
    match words.next() {
        None => Some((token, endpoint)),
        Some(_) => None,
    }
}

impl Session {
    /// The grant a connection is decided under, and the configured endpoint its client
    /// named: the link's or the dedicated port's, else the one of the token in
    /// `authorization` (a host client's `Proxy-Authorization`).
    pub fn grant(&self, authorization: Option<&str>) -> Option<(Arc<Grant>, Option<String>)> {
        if let Some((grant, _)) = &self.link {
            return Some((grant.clone(), None));
        }
        if let Some(grant) = &self.dedicated {
            return Some((grant.clone(), None));
        }
        let (token, endpoint) = client_credentials(authorization?)?;
        Some((tokens::client(token)?, endpoint.map(str::to_string)))
    }

    /// Keeps why a connection was refused for the grant's tool, and tells a command's
    /// standard error (through its supervisor).
    pub fn tell(&self, grant: &Grant, line: &str) {
        grant.refused(line);
        if let Some((_, control)) = &self.link {
            let _ = (&*control).write_all(format!("{}\n", line.replace('\n', " ")).as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::client_credentials;

    #[test]
    fn a_clients_authorization_is_its_token_and_perhaps_one_endpoint() {
        assert_eq!(client_credentials("Toolhost abc"), Some(("abc", None)));
        assert_eq!(
            client_credentials("Toolhost abc http://127.0.0.1:8/mcp"),
            Some(("abc", Some("http://127.0.0.1:8/mcp")))
        );
        assert_eq!(client_credentials("Toolhost abc one two"), None);
        assert_eq!(client_credentials("Basic abc"), None);
        assert_eq!(client_credentials("Toolhost"), None);
    }
}
