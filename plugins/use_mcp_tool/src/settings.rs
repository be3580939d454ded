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
    /// A remote server (`sse` or `streamableHttp`): read, but not supported by this port yet.
    Remote {
        /// `sse` or `streamableHttp`.
        kind: String,
        /// The server's URL.
        url: String,
    },
}

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
            Ok((name.clone(), server(entry).ok_or_else(schema_error)?))
        })
        .collect()
}

/// One entry, or `None` when it does not fit the schema.
fn server(entry: &Map<String, Value>) -> Option<ServerConfig> {
    let string = |key: &str| entry.get(key).and_then(Value::as_str).map(str::to_string);
    let kind = match (string("type"), string("transportType")) {
        (Some(kind), _) => kind,
        (None, Some(legacy)) if legacy == "http" => "streamableHttp".to_string(),
        (None, Some(legacy)) => legacy,
        // Untyped entries: stdio when there is a command, else SSE (Cline's order).
        (None, None) if entry.contains_key("command") => "stdio".to_string(),
        (None, None) => "sse".to_string(),
    };
    let transport = match kind.as_str() {
        "stdio" => Transport::Stdio {
            command: string("command")?,
            args: match entry.get("args") {
                None => Vec::new(),
                Some(args) => args
                    .as_array()?
                    .iter()
                    .map(|a| a.as_str().map(str::to_string))
                    .collect::<Option<_>>()?,
            },
            cwd: string("cwd"),
            env: match entry.get("env") {
                None => BTreeMap::new(),
                Some(env) => env
                    .as_object()?
                    .iter()
                    .map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect::<Option<_>>()?,
            },
        },
        "sse" | "streamableHttp" => Transport::Remote {
            kind,
            url: string("url")?,
        },
        _ => return None,
    };
    let auto_approve = match entry.get("autoApprove") {
        None => Vec::new(),
        Some(list) => list
            .as_array()?
            .iter()
            .map(|a| a.as_str().map(str::to_string))
            .collect::<Option<_>>()?,
    };
    let timeout = match entry.get("timeout") {
        None => DEFAULT_TIMEOUT_SECS as f64,
        Some(t) => t.as_f64().filter(|t| *t >= 1.0)?,
    };
    Some(ServerConfig {
        transport,
        disabled: entry.get("disabled").and_then(Value::as_bool) == Some(true),
        auto_approve,
        timeout: Duration::from_secs_f64(timeout),
    })
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
            }
        );
    }

    #[test]
    fn untyped_url_entries_are_sse_and_empty_files_have_no_servers() {
        let servers = parse(r#"{"mcpServers":{"r":{"url":"https://x.io/mcp"}}}"#).unwrap();
        assert_eq!(
            servers["r"].transport,
            Transport::Remote {
                kind: "sse".into(),
                url: "https://x.io/mcp".into()
            }
        );
        assert_eq!(parse("  ").unwrap(), BTreeMap::new());
        assert_eq!(parse("{}").unwrap(), BTreeMap::new());
    }

    #[test]
    fn bad_files_are_rejected_whole() {
        assert_eq!(parse("{nope").unwrap_err(), texts::INVALID_SETTINGS_FORMAT);
        assert_eq!(
            parse(r#"{"mcpServers":{"a":{"command":"x","timeout":0}}}"#).unwrap_err(),
            texts::INVALID_SETTINGS_SCHEMA
        );
        assert_eq!(
            parse(r#"{"mcpServers":{"a":{"type":"ws","url":"x"}}}"#).unwrap_err(),
            texts::INVALID_SETTINGS_SCHEMA
        );
    }
}
