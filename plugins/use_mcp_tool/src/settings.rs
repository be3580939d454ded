//! Cline's `cline_mcp_settings.json`, read unchanged: `mcpServers` entries with their transport,
//! `disabled`, `autoApprove`, `timeout`, and `${env:NAME}` expanded in every string.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::texts;

/// The default `tools/call` timeout, in seconds (Cline's).
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking MCP on stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Its working directory, when set.
        cwd: Option<String>,
        /// Variables added to the inherited environment.
        env: BTreeMap<String, String>,
    },
    /// A server reached over HTTP.
    Remote {
        /// Which HTTP transport.
        kind: RemoteKind,
        /// The server's URL (a valid absolute URL).
        url: String,
        /// Headers sent with every request (`headers`, with `${env:..}` expanded).
        headers: BTreeMap<String, String>,
    },
}

/// The HTTP transports of MCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteKind {
    /// `sse`: the legacy (2024-11-05) HTTP+SSE transport.
    Sse,
    /// `streamableHttp`: the streamable HTTP transport.
    StreamableHttp,
}

impl RemoteKind {
    /// The `type` that names it in the settings file.
    pub fn name(self) -> &'static str {
        match self {
            RemoteKind::Sse => "sse",
            RemoteKind::StreamableHttp => "streamableHttp",
        }
    }
}

impl std::fmt::Display for RemoteKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Cline's message for a `type` that is none of the three transports.
pub const TYPE_MISMATCH: &str = "Server type must be one of: 'stdio', 'sse', or 'streamableHttp'";

/// One `mcpServers` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// The transport.
    pub transport: Transport,
    /// Disabled servers are known but never started.
    pub disabled: bool,
    /// MCP tool names that need no approval.
    pub auto_approve: Vec<String>,
    /// The `tools/call` timeout (also used to start the server).
    pub timeout: Duration,
    /// How to sign in to a remote server that needs it (`oauth`, toolhost's own field).
    pub sign_in: SignInConfig,
}

/// A remote server's `oauth` entry: the client toolhost signs in as. Without one, toolhost
/// registers itself with the authorization server (dynamic client registration).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SignInConfig {
    /// A client registered with the authorization server beforehand (`clientId`).
    pub client_id: Option<String>,
    /// That client's secret (`clientSecret`, `${env:NAME}` expanded).
    pub client_secret: Option<String>,
    /// The HTTPS URL of a client ID metadata document naming toolhost (`clientMetadataUrl`),
    /// used where the authorization server accepts one.
    pub client_metadata_url: Option<String>,
    /// The scopes to ask for (`scopes`); none: those the server's challenge or metadata name.
    pub scopes: Vec<String>,
    /// The loopback port of the redirect (`redirectPort`, for a client registered with a
    /// fixed redirect URI); none: any free port.
    pub redirect_port: Option<u16>,
}

/// Reads the settings file: the servers by name. A missing or empty file has no servers.
pub fn load(path: &Path) -> Result<BTreeMap<String, ServerConfig>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    parse(&text)
}

/// Parses the settings text (see [`load`]).
pub fn parse(text: &str) -> Result<BTreeMap<String, ServerConfig>, String> {
    if text.trim().is_empty() {
        return Ok(BTreeMap::new());
    }
    let mut value: Value =
        serde_json::from_str(text).map_err(|_| texts::INVALID_SETTINGS_FORMAT.to_string())?;
    expand_env(&mut value);
    let schema_error = || texts::INVALID_SETTINGS_SCHEMA.to_string();
    let Some(root) = value.as_object() else {
        return Err(schema_error());
    };
    let Some(servers) = root.get("mcpServers") else {
        // Cline treats `{}` as "no servers".
        return if root.is_empty() {
            Ok(BTreeMap::new())
        } else {
            Err(schema_error())
        };
    };
    let servers = servers.as_object().ok_or_else(schema_error)?;
    servers
        .iter()
        .map(|(name, entry)| {
            let entry = entry.as_object().ok_or_else(schema_error)?;
            match server(entry) {
                Ok(config) => Ok((name.clone(), config)),
                Err(Invalid::Schema) => Err(schema_error()),
                Err(Invalid::Type) => Err(format!(
                    "{} mcpServers.{name}.type: {TYPE_MISMATCH}",
                    texts::INVALID_SETTINGS_SCHEMA
                )),
            }
        })
        .collect()
}

/// Why an entry does not fit the schema.
enum Invalid {
    /// A `type` other than the three transports.
    Type,
    /// Anything else.
    Schema,
}

impl From<Mismatch> for Invalid {
    fn from(_: Mismatch) -> Self {
        Invalid::Schema
    }
}

/// A field of the wrong type (or a required one missing).
struct Mismatch;

/// One entry. Cline's schema is a union tried in order (stdio, sse, streamableHttp), each
/// variant accepting the others' fields: an entry with a `command` and no `type` is stdio
/// whatever its legacy `transportType` says, and one with only a `url` is SSE.
fn server(entry: &Map<String, Value>) -> Result<ServerConfig, Invalid> {
    let kind = match entry.get("type") {
        None => match entry.get("transportType").and_then(Value::as_str) {
            _ if entry.contains_key("command") => "stdio",
            // The legacy name of streamable HTTP. (Cline's union tries SSE before streamable
            // HTTP and its SSE variant accepts any `transportType`, so such an entry ends up as
            // SSE there; the legacy field is honoured here, as its transform intends.)
            Some("http") => "streamableHttp",
            _ => "sse",
        },
        Some(Value::String(kind)) => kind.as_str(),
        Some(_) => return Err(Invalid::Type),
    };
    if let Some(legacy) = entry.get("transportType") {
        legacy.as_str().ok_or(Mismatch)?;
    }
    // Every variant tolerates the other variants' fields, but checks their types.
    let command = optional(entry, "command", string)?;
    let args = optional(entry, "args", strings)?.unwrap_or_default();
    let env = optional(entry, "env", record)?.unwrap_or_default();
    let url = optional(entry, "url", string)?;
    let headers = optional(entry, "headers", record)?.unwrap_or_default();
    let transport = match kind {
        "stdio" => Transport::Stdio {
            command: command.ok_or(Mismatch)?,
            args,
            cwd: optional(entry, "cwd", string)?,
            env,
        },
        "sse" | "streamableHttp" => {
            let url = url.ok_or(Mismatch)?;
            // Cline's `z.string().url()`: an absolute URL.
            reqwest::Url::parse(&url).map_err(|_| Mismatch)?;
            Transport::Remote {
                kind: if kind == "sse" {
                    RemoteKind::Sse
                } else {
                    RemoteKind::StreamableHttp
                },
                url,
                headers,
            }
        }
        _ => return Err(Invalid::Type),
    };
    let auto_approve = optional(entry, "autoApprove", strings)?.unwrap_or_default();
    let timeout = match entry.get("timeout") {
        None => DEFAULT_TIMEOUT_SECS as f64,
        Some(t) => t.as_f64().filter(|t| *t >= 1.0).ok_or(Mismatch)?,
    };
    let sign_in = match entry.get("oauth") {
        None => SignInConfig::default(),
        Some(oauth) => sign_in(oauth.as_object().ok_or(Mismatch)?)?,
    };
    Ok(ServerConfig {
        transport,
        disabled: entry.get("disabled").and_then(Value::as_bool) == Some(true),
        auto_approve,
        timeout: Duration::from_secs_f64(timeout),
        sign_in,
    })
}

/// A remote entry's `oauth` object.
fn sign_in(oauth: &Map<String, Value>) -> Result<SignInConfig, Mismatch> {
    let redirect_port = match oauth.get("redirectPort") {
        None => None,
        Some(port) => Some(
            port.as_u64()
                .and_then(|p| u16::try_from(p).ok())
                .ok_or(Mismatch)?,
        ),
    };
    Ok(SignInConfig {
        client_id: optional(oauth, "clientId", string)?,
        client_secret: optional(oauth, "clientSecret", string)?,
        client_metadata_url: optional(oauth, "clientMetadataUrl", string)?,
        scopes: optional(oauth, "scopes", strings)?.unwrap_or_default(),
        redirect_port,
    })
}

/// The field `key` read by `read`, `None` when absent.
fn optional<T>(
    entry: &Map<String, Value>,
    key: &str,
    read: fn(&Value) -> Option<T>,
) -> Result<Option<T>, Mismatch> {
    entry.get(key).map(|v| read(v).ok_or(Mismatch)).transpose()
}

fn string(value: &Value) -> Option<String> {
    value.as_str().map(str::to_string)
}

fn strings(value: &Value) -> Option<Vec<String>> {
    value.as_array()?.iter().map(string).collect()
}

fn record(value: &Value) -> Option<BTreeMap<String, String>> {
    value
        .as_object()?
        .iter()
        .map(|(k, v)| Some((k.clone(), string(v)?)))
        .collect()
}

/// Replaces `${env:NAME}` in every string with the variable's value; unset variables stay.
fn expand_env(value: &mut Value) {
    match value {
        Value::String(s) => *s = expand_str(s),
        Value::Array(items) => items.iter_mut().for_each(expand_env),
        Value::Object(map) => map.values_mut().for_each(expand_env),
        _ => {}
    }
}

fn expand_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${env:") {
        let after = &rest[start + 6..];
        let Some(end) = after.find('}') else { break };
        out.push_str(&rest[..start]);
        match std::env::var(&after[..end]) {
            Ok(v) => out.push_str(&v),
            Err(_) => out.push_str(&rest[start..start + 6 + end + 1]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_stdio_entry_with_every_field() {
        std::env::set_var("MCP_SETTINGS_TEST_HOME", "/home/x");
        let servers = parse(
            r#"{"mcpServers":{"fs":{"command":"node","args":["a.js"],"env":{"ROOT":"${env:MCP_SETTINGS_TEST_HOME}/p ${env:MCP_UNSET_VAR_X}"},"autoApprove":["list"],"timeout":30,"disabled":true}}}"#,
        )
        .unwrap();
        assert_eq!(
            servers["fs"],
            ServerConfig {
                transport: Transport::Stdio {
                    command: "node".into(),
                    args: vec!["a.js".into()],
                    cwd: None,
                    env: BTreeMap::from([(
                        "ROOT".to_string(),
                        "/home/x/p ${env:MCP_UNSET_VAR_X}".to_string()
                    )]),
                },
                disabled: true,
                auto_approve: vec!["list".into()],
                timeout: Duration::from_secs(30),
                sign_in: SignInConfig::default(),
            }
        );
    }

    fn remote(kind: RemoteKind, url: &str, headers: &[(&str, &str)]) -> Transport {
        Transport::Remote {
            kind,
            url: url.to_string(),
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    fn transports(text: &str) -> BTreeMap<String, Transport> {
        parse(text)
            .unwrap()
            .into_iter()
            .map(|(name, config)| (name, config.transport))
            .collect()
    }

    #[test]
    fn remote_entries_with_their_headers() {
        std::env::set_var("MCP_SETTINGS_TEST_TOKEN", "s3cret");
        let servers = parse(
            r#"{"mcpServers":{"issues":{"type":"streamableHttp","url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer ${env:MCP_SETTINGS_TEST_TOKEN}"},"disabled":false,"timeout":5}}}"#,
        )
        .unwrap();
        assert_eq!(
            servers["issues"],
            ServerConfig {
                transport: remote(
                    RemoteKind::StreamableHttp,
                    "https://mcp.example.com/mcp",
                    &[("Authorization", "Bearer s3cret")]
                ),
                disabled: false,
                auto_approve: vec![],
                timeout: Duration::from_secs(5),
                sign_in: SignInConfig::default(),
            }
        );
    }

    #[test]
    fn a_remote_entry_names_the_client_it_signs_in_as() {
        std::env::set_var("MCP_SETTINGS_TEST_SECRET", "sh");
        let servers = parse(
            r#"{"mcpServers":{"docs":{"type":"streamableHttp","url":"https://mcp.example.com/mcp","oauth":{"clientId":"toolhost","clientSecret":"${env:MCP_SETTINGS_TEST_SECRET}","scopes":["read","write"],"redirectPort":8765}}}}"#,
        )
        .unwrap();
        assert_eq!(
            servers["docs"].sign_in,
            SignInConfig {
                client_id: Some("toolhost".into()),
                client_secret: Some("sh".into()),
                client_metadata_url: None,
                scopes: vec!["read".into(), "write".into()],
                redirect_port: Some(8765),
            }
        );
        let bad_port = r#"{"mcpServers":{"docs":{"type":"streamableHttp","url":"https://mcp.example.com/mcp","oauth":{"redirectPort":70000}}}}"#;
        assert_eq!(
            parse(bad_port).err(),
            Some(texts::INVALID_SETTINGS_SCHEMA.to_string())
        );
    }

    #[test]
    fn the_transport_follows_clines_union_order() {
        let url = "http://127.0.0.1:9/sse";
        assert_eq!(
            transports(&format!(
                r#"{{"mcpServers":{{
                    "untyped":{{"url":"{url}"}},
                    "sse":{{"type":"sse","url":"{url}","headers":{{"X-Key":"k"}}}},
                    "http":{{"type":"streamableHttp","url":"{url}"}},
                    "legacy-sse":{{"transportType":"sse","url":"{url}"}},
                    "legacy-http":{{"transportType":"http","url":"{url}"}},
                    "legacy-stdio-url":{{"transportType":"stdio","url":"{url}"}},
                    "command-wins":{{"transportType":"sse","command":"srv","url":"{url}","headers":{{"X":"y"}}}},
                    "typed-sse-with-command":{{"type":"sse","command":"srv","url":"{url}"}}
                }}}}"#
            )),
            BTreeMap::from([
                ("untyped".to_string(), remote(RemoteKind::Sse, url, &[])),
                (
                    "sse".to_string(),
                    remote(RemoteKind::Sse, url, &[("X-Key", "k")])
                ),
                (
                    "http".to_string(),
                    remote(RemoteKind::StreamableHttp, url, &[])
                ),
                ("legacy-sse".to_string(), remote(RemoteKind::Sse, url, &[])),
                (
                    "legacy-http".to_string(),
                    remote(RemoteKind::StreamableHttp, url, &[])
                ),
                (
                    "legacy-stdio-url".to_string(),
                    remote(RemoteKind::Sse, url, &[])
                ),
                (
                    "command-wins".to_string(),
                    Transport::Stdio {
                        command: "srv".into(),
                        args: vec![],
                        cwd: None,
                        env: BTreeMap::new(),
                    }
                ),
                (
                    "typed-sse-with-command".to_string(),
                    remote(RemoteKind::Sse, url, &[])
                ),
            ])
        );
    }

    #[test]
    fn empty_files_have_no_servers() {
        assert_eq!(parse("  ").unwrap(), BTreeMap::new());
        assert_eq!(parse("{}").unwrap(), BTreeMap::new());
        assert_eq!(parse(r#"{"mcpServers":{}}"#).unwrap(), BTreeMap::new());
    }

    #[test]
    fn bad_files_are_rejected_whole() {
        assert_eq!(parse("{nope").unwrap_err(), texts::INVALID_SETTINGS_FORMAT);
        for bad in [
            r#"{"mcpServers":{"a":{"command":"x","timeout":0}}}"#,
            r#"{"mcpServers":{"a":{"command":"x","headers":{"N":1}}}}"#,
            r#"{"mcpServers":{"a":{"type":"stdio","url":"http://x.io"}}}"#,
            r#"{"mcpServers":{"a":{"type":"sse","url":"not a url"}}}"#,
            r#"{"mcpServers":{"a":{"type":"streamableHttp"}}}"#,
            r#"{"mcpServers":{"a":{"url":"http://x.io","headers":["a"]}}}"#,
            r#"{"mcpServers":{"a":{"url":"http://x.io","transportType":3}}}"#,
            r#"{"mcpServers":{"a":{"args":["x"]}}}"#,
            r#"{"other":{}}"#,
        ] {
            assert_eq!(
                parse(bad).unwrap_err(),
                texts::INVALID_SETTINGS_SCHEMA,
                "{bad}"
            );
        }
    }

    #[test]
    fn an_unknown_type_names_the_three_transports() {
        assert_eq!(
            parse(r#"{"mcpServers":{"a":{"type":"ws","url":"ws://x.io"}}}"#).unwrap_err(),
            "Invalid MCP settings schema. mcpServers.a.type: Server type must be one of: 'stdio', 'sse', or 'streamableHttp'"
        );
    }
}
