//! Each MCP tool under a name of its own, so that it is listed and called like any plugin tool
//! (Cline's native tool-call mapping): `{server key}0mcp0{tool name}`.
//!
//! Cline's server key is random per session (`c` and five characters); here it is stable, so
//! that schemas, hooks and approval rules can name a tool across runs: the server's name itself
//! when it is a plain identifier (Cline's parser maps an unknown key back as the server name, so
//! such names read the same there), else `c` and five base-36 digits of a hash of the name.
//! A name longer than 64 characters is skipped, as in Cline, and so is one with characters the
//! model APIs refuse in function names (Cline would offer it and have the API reject the request).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Map, Value};
use tool_api::model::{DynamicToolsQuery, ToolSpec};

use crate::settings::ServerConfig;
use crate::{hub, settings};

/// What separates the server key from the tool name.
pub const SEPARATOR: &str = "0mcp0";

/// The longest name a model API accepts for a function.
pub const MAX_NAME_LEN: usize = 64;

/// The longest server name used as its own key; longer ones are hashed, leaving room for the
/// tool's name.
const MAX_PLAIN_KEY_LEN: usize = 24;

/// The key standing for `server` in tool names.
pub fn server_key(server: &str) -> String {
    let plain = server.len() <= MAX_PLAIN_KEY_LEN
        && server.starts_with(|c: char| c.is_ascii_alphabetic())
        && server.chars().all(is_name_char)
        && !server.contains(SEPARATOR);
    if plain {
        server.to_string()
    } else {
        hashed_key(server)
    }
}

/// `c` and five base-36 digits of the 64-bit FNV-1a hash of `server`. Written out because the key
/// must not change between runs or Rust releases, which std's `DefaultHasher` does not promise,
/// and five lines do not justify a dependency.
fn hashed_key(server: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in server.bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    let mut key = String::from("c");
    for _ in 0..5 {
        let digit = u32::try_from(hash % 36).unwrap_or(0);
        key.push(char::from_digit(digit, 36).unwrap_or('0'));
        hash /= 36;
    }
    key
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// The name of `tool` of `server`, or `None` when it cannot be offered.
pub fn tool_name(server: &str, tool: &str) -> Option<String> {
    let name = format!("{}{SEPARATOR}{tool}", server_key(server));
    let usable = !tool.is_empty() && name.len() <= MAX_NAME_LEN && tool.chars().all(is_name_char);
    usable.then_some(name)
}

/// The server key and the tool name of a native name.
pub fn split(name: &str) -> Option<(&str, &str)> {
    name.split_once(SEPARATOR)
        .filter(|(key, tool)| !key.is_empty() && !tool.is_empty())
}

/// The server a key stands for; an unknown key is taken as the server's name (as Cline does).
pub fn server_for_key(servers: &BTreeMap<String, ServerConfig>, key: &str) -> String {
    servers
        .keys()
        .find(|server| server_key(server) == key)
        .cloned()
        .unwrap_or_else(|| key.to_string())
}

/// The spec of one MCP tool: the server's name before its description, its input schema as an
/// object schema, its title and hints (the MCP specification's defaults where the server gives
/// none). Every one is open-world: another process, outside the host's policies, answers it.
pub fn spec(server: &str, tool: &rmcp::model::Tool) -> Option<ToolSpec> {
    let name = tool_name(server, &tool.name)?;
    let summary = tool
        .description
        .as_deref()
        .filter(|d| !d.trim().is_empty())
        .unwrap_or(&tool.name);
    let mut schema: Map<String, Value> = (*tool.input_schema).clone();
    schema.insert("type".to_string(), json!("object"));
    schema.entry("properties").or_insert_with(|| json!({}));
    let hints = tool.annotations.as_ref();
    Some(ToolSpec {
        name,
        description: format!("{server}: {summary}"),
        input_schema: Value::Object(schema),
        partial: false,
        approval: None,
        path_params: Vec::new(),
        read_only: hints.and_then(|h| h.read_only_hint).unwrap_or(false),
        destructive: hints.and_then(|h| h.destructive_hint).unwrap_or(true),
        title: tool
            .title
            .clone()
            .or_else(|| hints.and_then(|h| h.title.clone())),
        idempotent: hints.and_then(|h| h.idempotent_hint).unwrap_or(false),
        open_world: true,
        handling: Default::default(),
        // The server's own, as it is: its results' `structuredContent` passes on unchanged.
        output_schema: tool
            .output_schema
            .as_ref()
            .map(|schema| Value::Object((**schema).clone())),
    })
}

/// The spec standing for `name` of a server that cannot be reached.
fn unreachable(server: &str, name: &str) -> Option<ToolSpec> {
    let (_, tool) = split(name)?;
    (tool_name(server, tool).as_deref() == Some(name)).then(|| ToolSpec {
        name: name.to_string(),
        description: format!("{server}: {tool} (the server cannot be reached now)"),
        input_schema: json!({"type": "object", "properties": {}}),
        partial: false,
        approval: None,
        path_params: Vec::new(),
        read_only: false,
        destructive: true,
        title: None,
        idempotent: false,
        open_world: true,
        handling: Default::default(),
        output_schema: None,
    })
}

/// The native tools of the enabled servers of `file` (only the server `query.name` names, when
/// it names one), remote servers reached through the query's egress route. A server that
/// cannot be reached offers nothing; `toolhost mcp-servers` shows why.
pub async fn specs(file: &Path, query: &DynamicToolsQuery) -> Vec<ToolSpec> {
    let egress = hub::ListingEgress(query.egress.clone());
    let Ok(servers) = settings::load(file) else {
        return Vec::new();
    };
    let wanted_server = match query.name.as_deref() {
        Some(name) => match split(name) {
            Some((key, _)) => Some(server_for_key(&servers, key)),
            None => return Vec::new(),
        },
        None => None,
    };
    let mut specs = Vec::new();
    for (server, config) in &servers {
        if config.disabled || wanted_server.as_ref().is_some_and(|w| w != server) {
            continue;
        }
        match hub::list_tools(file, server, &egress).await {
            Ok(tools) => specs.extend(
                tools
                    .iter()
                    .filter_map(|tool| spec(server, tool))
                    .filter(|spec| query.wants(&spec.name)),
            ),
            // A call of one of its tools is let through, so that it fails with the reason
            // (`could not be started: ...`) instead of an unknown tool.
            Err(_) => specs.extend(
                query
                    .name
                    .as_deref()
                    .and_then(|name| unreachable(server, name)),
            ),
        }
    }
    specs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_server_names_are_their_own_key() {
        assert_eq!(
            tool_name("weather", "get_forecast").as_deref(),
            Some("weather0mcp0get_forecast")
        );
        assert_eq!(
            split("weather0mcp0get_forecast"),
            Some(("weather", "get_forecast"))
        );
    }

    #[test]
    fn other_server_names_get_a_stable_hashed_key() {
        let key = server_key("my server");
        assert_eq!(key, server_key("my server"));
        assert_eq!(key.len(), 6);
        assert!(key.starts_with('c'));
        assert_ne!(key, server_key("my server 2"));
        assert!(server_key("a0mcp0b").starts_with('c'));
        assert!(server_key("1password").starts_with('c'));
    }

    #[test]
    fn unusable_names_are_not_offered() {
        assert_eq!(tool_name("s", "dotted.name"), None);
        assert_eq!(tool_name("s", &"x".repeat(60)), None);
        assert_eq!(tool_name("s", ""), None);
        assert_eq!(split("read_file"), None);
    }

    #[test]
    fn keys_map_back_to_their_server() {
        let servers: BTreeMap<String, ServerConfig> = settings::parse(
            r#"{"mcpServers": {"my server": {"command": "x"}, "plain": {"command": "y"}}}"#,
        )
        .unwrap_or_default();
        assert_eq!(
            server_for_key(&servers, &server_key("my server")),
            "my server"
        );
        assert_eq!(server_for_key(&servers, "plain"), "plain");
        assert_eq!(server_for_key(&servers, "unknown"), "unknown");
    }
}
