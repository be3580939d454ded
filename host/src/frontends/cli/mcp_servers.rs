//! `toolhost mcp-servers`: the MCP servers of the settings, their status and their tools, and
//! signing in to them (`login`, `logout`).
//!
//! The MCP client lives in the plugin declaring the `mcp_servers` capability; the host asks its
//! first handler with the extensions `mcp_servers`, `mcp_sign_in`, `mcp_sign_in_wait` and
//! `mcp_sign_out` and prints the answers. The terminal and the browser are the host's: the
//! plugin answers the page to open and listens for its redirect.

use std::process::ExitCode;

use serde_json::Value;

use super::args::SignInCommand;
use crate::frontends::FrontendError;
use crate::Host;

use tool_api::model::{
    DynamicToolsQuery, MCP_SERVERS_CAPABILITY, MCP_SERVERS_METHOD, MCP_SIGN_IN_METHOD,
    MCP_SIGN_IN_WAIT_METHOD, MCP_SIGN_OUT_METHOD,
};

/// The plugin's answer: `{"settings_file", "servers": [{name, key, transport, target, status,
/// error?, signed_in?, tools: [{name, native_name, description, auto_approve}]}]}`.
pub fn report(host: &Host) -> Result<Value, FrontendError> {
    ask(host, MCP_SERVERS_METHOD, None)
}

/// Asks the MCP client plugin `method` about `server` (all of them: `None`).
fn ask(host: &Host, method: &str, server: Option<&str>) -> Result<Value, FrontendError> {
    let handler = host
        .registry()
        .plugin_with(MCP_SERVERS_CAPABILITY)
        .ok_or(FrontendError::NoMcpClient)?;
    let query = DynamicToolsQuery {
        name: server.map(str::to_string),
        settings: host.settings().document().clone(),
        egress: host.listing_route(),
    };
    let payload = serde_json::to_value(query).unwrap_or_default();
    handler
        .request(method, &payload)
        .map_err(FrontendError::McpServers)
}

/// `login NAME` (the browser flow) or `logout NAME`.
pub fn sign_in(host: &Host, command: SignInCommand) -> Result<ExitCode, FrontendError> {
    match command {
        SignInCommand::Login { name, no_browser } => {
            let begun = ask(host, MCP_SIGN_IN_METHOD, Some(&name))?;
            let page = text(&begun["authorization_url"]);
            eprintln!("To sign in to MCP server \"{name}\", open this page:\n\n    {page}\n");
            if !no_browser {
                if let Err(why) = open_browser(page) {
                    eprintln!("(no browser was opened: {why})");
                }
            }
            eprintln!("Waiting for the sign-in to complete...");
            let done = ask(host, MCP_SIGN_IN_WAIT_METHOD, Some(&name))?;
            println!(
                "Signed in to MCP server \"{name}\" at {} (scopes: {}).",
                done["issuer"]
                    .as_str()
                    .unwrap_or("its authorization server"),
                scopes(&done["scopes"])
            );
        }
        SignInCommand::Logout { name } => {
            let done = ask(host, MCP_SIGN_OUT_METHOD, Some(&name))?;
            if done["signed_out"].as_bool() == Some(true) {
                println!("Signed out of MCP server \"{name}\".");
            } else {
                println!("Not signed in to MCP server \"{name}\".");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Opens `page` in the user's browser: `$BROWSER` (its first command; `%s` stands for the page,
/// else the page is its last argument), else `xdg-open` when there is a display. The browser
/// runs on its own; the sign-in waits for its redirect, not for it.
fn open_browser(page: &str) -> Result<(), String> {
    let browser = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty());
    let command_line = match browser {
        Some(browsers) => browsers.split(':').next().unwrap_or_default().to_string(),
        None if std::env::var_os("DISPLAY").is_some()
            || std::env::var_os("WAYLAND_DISPLAY").is_some() =>
        {
            "xdg-open".to_string()
        }
        None => return Err("no BROWSER and no display".to_string()),
    };
    let mut words: Vec<String> = command_line
        .split_whitespace()
        .map(str::to_string)
        .collect();
    if words.iter().any(|w| w.contains("%s")) {
        words.iter_mut().for_each(|w| *w = w.replace("%s", page));
    } else {
        words.push(page.to_string());
    }
    let (program, args) = words.split_first().ok_or("BROWSER is empty")?;
    std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .map(drop)
        .map_err(|e| format!("cannot run {program}: {e}"))
}

/// The report as text: one line per server, then one per tool.
pub fn render_text(report: &Value) -> String {
    let mut out = format!(
        "settings: {}\n",
        report["settings_file"].as_str().unwrap_or("?")
    );
    let servers = report["servers"].as_array().map_or(&[][..], Vec::as_slice);
    if servers.is_empty() {
        out.push_str("no MCP servers configured\n");
    }
    for server in servers {
        out.push_str(&format!(
            "{} [{}] {} ({})\n",
            text(&server["name"]),
            text(&server["status"]),
            text(&server["target"]),
            text(&server["transport"]),
        ));
        if let Some(signed_in) = server["signed_in"].as_object() {
            out.push_str(&format!(
                "    signed in at {} (scopes: {})\n",
                signed_in["issuer"].as_str().unwrap_or("?"),
                scopes(&signed_in["scopes"])
            ));
        }
        if let Some(error) = server["error"].as_str() {
            for line in error.lines() {
                out.push_str(&format!("    ! {line}\n"));
            }
        }
        for tool in server["tools"].as_array().map_or(&[][..], Vec::as_slice) {
            let native = tool["native_name"].as_str().unwrap_or("(no native name)");
            let approve = if tool["auto_approve"].as_bool() == Some(true) {
                " [auto-approved]"
            } else {
                ""
            };
            out.push_str(&format!(
                "    {:<24} {native}{approve}\n",
                text(&tool["name"])
            ));
        }
    }
    out
}

/// A list of scopes as words ("none named" for none).
fn scopes(list: &Value) -> String {
    let words: Vec<&str> = list
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .filter_map(Value::as_str)
        .collect();
    if words.is_empty() {
        "none named".to_string()
    } else {
        words.join(" ")
    }
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}
