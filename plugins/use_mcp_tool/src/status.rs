//! Every configured server with its status and tools, as `toolhost mcp-servers` shows them.

use std::path::Path;

use serde_json::{json, Value};

use crate::settings::{self, Transport};
use crate::{hub, native, sign_in};

/// Every configured server of `file` with its status and tools (and a remote one's sign-in:
/// `signed_in`, `{"issuer", "scopes"}` or null), as `toolhost mcp-servers` shows them; the enabled ones are started (a remote one through `egress`).
pub async fn servers(file: &Path, egress: &dyn hub::Egress) -> Result<Vec<Value>, String> {
    let configs = settings::load(file)?;
    let mut statuses = Vec::new();
    for (name, config) in &configs {
        let (transport, target) = transport_summary(&config.transport);
        let mut status = json!({
            "name": name,
            "key": native::server_key(name),
            "transport": transport,
            "target": target,
            "status": "disabled",
            "tools": [],
        });
        if let Transport::Remote { url, .. } = &config.transport {
            status["signed_in"] = sign_in::status(url).unwrap_or(Value::Null);
        }
        if !config.disabled {
            match hub::list_tools(file, name, egress).await {
                Ok(tools) => {
                    status["status"] = "connected".into();
                    status["tools"] = tools
                        .iter()
                        .map(|tool| {
                            json!({
                                "name": tool.name,
                                "native_name": native::tool_name(name, &tool.name),
                                "description": tool.description.as_deref().unwrap_or(""),
                                "auto_approve": config.auto_approve.iter().any(|t| *t == tool.name),
                            })
                        })
                        .collect();
                }
                Err(e) => {
                    status["status"] = "failed".into();
                    status["error"] = e.into();
                }
            }
        }
        statuses.push(status);
    }
    Ok(statuses)
}

/// The transport's name and what it reaches (the command line, or the URL).
fn transport_summary(transport: &Transport) -> (String, String) {
    match transport {
        Transport::Stdio { command, args, .. } => {
            let mut line = command.clone();
            for arg in args {
                line.push(' ');
                line.push_str(arg);
            }
            ("stdio".to_string(), line)
        }
        Transport::Remote { kind, url, .. } => (kind.to_string(), url.clone()),
    }
}
