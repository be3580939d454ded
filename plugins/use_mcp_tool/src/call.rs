//! The three tools' flows: validation, approval, the hub call, the result.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::mpsc::UnboundedReceiver;
use tool_api::sdk::{missing, prelude::*};

use crate::notices::{self, Notice};
use crate::{format, hub, texts};

/// How long a finished request waits for notifications still on their way.
const STRAGGLERS: Duration = Duration::from_millis(2);

/// How often a running request looks at the call's cancellation flag.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// The settings file: `mcp.settings_file`, else the first of Cline's own that exists
/// ([`crate::locations`]). A configured file that does not exist is an error.
pub fn settings_file(ctx: &Ctx<'_>) -> Result<PathBuf, ToolError> {
    let setting = ctx.setting::<Value>(crate::locations::KEY);
    crate::locations::settings_file(setting.as_ref())
        .map_err(|message| ToolError::new(ToolErrorKind::UNAVAILABLE, message))
}

fn home() -> PathBuf {
    std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from)
}

/// A required parameter, with Cline's UI notice when it is missing or empty.
fn required(call: &Call, ctx: &Ctx<'_>, name: &str) -> Result<String, ToolError> {
    match call.params.string(name) {
        Some(value) if !value.is_empty() => Ok(value),
        _ => {
            ctx.say(
                "error",
                &tool_api::texts::missing_param_notice(&call.name, name, None),
            );
            Err(missing(name))
        }
    }
}

/// Asks for approval in the MCP category; a denial is the tool's result.
fn approve(ctx: &Ctx<'_>, tool: &str, payload: &Value) -> Result<(), ToolError> {
    ctx.approve(
        &ApprovalRequest {
            tool: tool.to_string(),
            category: ApprovalCategory::Mcp,
            path: None,
            message: payload.to_string(),
        },
        tool_api::texts::TOOL_DENIED,
    )
}

/// A call's access to the host's egress proxy: a new remote connection's route is asked for
/// as the call's (the user asked about what no rule names, logged under the call's task), and
/// a failure is explained with the proxy's refusals.
struct CallEgress<'a, 'b>(&'a Ctx<'b>);

impl hub::Egress for CallEgress<'_, '_> {
    fn route(&self) -> Result<Option<EgressRoute>, String> {
        self.0.egress_route(&[]).map_err(|e| e.message.to_string())
    }

    fn refusals(&self, route: &EgressRoute) -> Vec<String> {
        self.0.egress_refusals(route)
    }
}

/// Runs `future` on the plugin's runtime until it ends or the call is cancelled.
fn run<T>(ctx: &Ctx<'_>, future: impl Future<Output = T>) -> Result<T, ToolError> {
    run_listening(ctx, future, None)
}

/// [`run`], showing what the server says meanwhile ([`notices`]) as `mcp_notification`s and
/// asking its requests of the call's user ([`crate::upstream`]).
fn run_listening<T>(
    ctx: &Ctx<'_>,
    future: impl Future<Output = T>,
    mut notices: Option<&mut UnboundedReceiver<Notice>>,
) -> Result<T, ToolError> {
    let cancelled = async {
        while !ctx.is_cancelled() {
            tokio::time::sleep(CANCEL_POLL).await;
        }
    };
    // The future runs on this thread (`block_on`), so it may use `ctx`.
    let outcome = tool_api::sdk::runtime::block_on(async {
        tokio::pin!(future, cancelled);
        let output = loop {
            let notice = async {
                match notices.as_mut() {
                    Some(notices) => notices.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                output = &mut future => break Some(output),
                () = &mut cancelled => break None,
                Some(notice) = notice => heard(ctx, notice),
            }
        };
        // What came just before the answer is shown before it: rmcp hands each notification
        // to a task of its own, which may run after the answer arrived.
        if let Some(notices) = notices.as_mut().filter(|_| output.is_some()) {
            while let Ok(Some(notice)) = tokio::time::timeout(STRAGGLERS, notices.recv()).await {
                heard(ctx, notice);
            }
        }
        output
    })
    .map_err(|e| {
        ToolError::new(
            ToolErrorKind::INTERNAL,
            format!("cannot start the async runtime: {e}"),
        )
    })?;
    outcome
        .ok_or_else(|| ToolError::new(ToolErrorKind::CANCELLED, "The MCP request was cancelled."))
}

/// Shows what a server said, or answers what it asked, on the call's thread.
fn heard(ctx: &Ctx<'_>, notice: Notice) {
    match notice {
        Notice::Said(text) => ctx.say("mcp_notification", &text),
        Notice::Asked(question) => {
            let answer = crate::upstream::answer(ctx, &question.method, &question.params);
            let _ = question.reply.send(answer);
        }
    }
}

/// `use_mcp_tool`.
pub fn use_mcp_tool(call: &Call, ctx: &Ctx<'_>) -> ToolResult {
    let server = required(call, ctx, "server_name")?;
    let tool = required(call, ctx, "tool_name")?;
    let raw_arguments = call.params.string("arguments").filter(|a| !a.is_empty());
    let arguments = match &raw_arguments {
        None => None,
        // Only an object can be a tool's input; anything else fails as invalid JSON would.
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Some(map),
            _ => {
                ctx.say("error", &texts::invalid_arguments_notice(&tool));
                return Err(ToolError::new(
                    ToolErrorKind::INVALID_PARAMS,
                    texts::invalid_arguments(&server, &tool),
                ));
            }
        },
    };
    run_tool(ctx, &call.name, &server, &tool, raw_arguments, arguments)
}

/// A call of an MCP tool by its own name (`{server key}0mcp0{tool}`, see [`crate::native`]): the
/// parameters are the tool's arguments, and the rest is `use_mcp_tool`'s flow, approval included.
pub fn native_tool(call: &Call, ctx: &Ctx<'_>, key: &str, tool: &str) -> ToolResult {
    let file = settings_file(ctx)?;
    let servers = crate::settings::load(&file).unwrap_or_default();
    let server = crate::native::server_for_key(&servers, key);
    let arguments = call.params.as_map().clone();
    let raw = Value::Object(arguments.clone()).to_string();
    run_tool(ctx, &call.name, &server, tool, Some(raw), Some(arguments))
}

/// Approval, the `tools/call` request and the result, for both ways of calling an MCP tool.
fn run_tool(
    ctx: &Ctx<'_>,
    called_as: &str,
    server: &str,
    tool: &str,
    raw_arguments: Option<String>,
    arguments: Option<serde_json::Map<String, Value>>,
) -> ToolResult {
    let file = settings_file(ctx)?;
    let mut payload = json!({"type": "use_mcp_tool", "serverName": server, "toolName": tool});
    if let Some(raw) = &raw_arguments {
        payload["arguments"] = Value::String(raw.clone());
    }
    if hub::auto_approved(&file, server, tool) {
        ctx.say("use_mcp_server", &payload.to_string());
    } else {
        approve(ctx, called_as, &payload)?;
    }
    ctx.say("mcp_server_request_started", "");
    let (listener, mut notices) = notices::listen(server);
    let egress = CallEgress(ctx);
    let call = hub::call_tool(&file, server, tool, arguments, &listener, &egress);
    let outcome = run_listening(ctx, call, Some(&mut notices))?;
    let result = outcome.map_err(|message| {
        ToolError::new(ToolErrorKind::FAILED, texts::tool_call_failed(&message))
    })?;
    let formatted = format::tool_result(&result);
    let mut shown = if formatted.is_error {
        format!("Error:\n{}", formatted.text)
    } else {
        formatted.text.clone()
    };
    for image in &formatted.images {
        if let ContentBlock::Image { media_type, data } = image {
            shown.push_str(&format!("\n\ndata:{media_type};base64,{data}"));
        }
    }
    ctx.say("mcp_server_response", &shown);
    let supports_images = ctx.setting::<bool>("model.supports_images").unwrap_or(true);
    let mut text = formatted.text;
    if !formatted.images.is_empty() && !supports_images {
        text.push_str(&texts::images_not_viewable(formatted.images.len()));
    }
    let mut blocks = vec![ContentBlock::Text {
        text: format::truncate(text),
    }];
    if supports_images {
        blocks.extend(formatted.images);
    }
    // The server's error is the call's failure (Cline passes it on as a success starting with
    // "Error:"); the MCP structures travel along for `toolhost mcp`.
    let mut content = ToolContent::blocks(blocks);
    content.is_error = formatted.is_error;
    content.mcp_result = format::relayed(&result);
    Ok(content)
}

/// `access_mcp_resource`.
pub fn access_mcp_resource(call: &Call, ctx: &Ctx<'_>) -> ToolResult {
    let server = required(call, ctx, "server_name")?;
    let uri = required(call, ctx, "uri")?;
    let file = settings_file(ctx)?;
    let payload = json!({"type": "access_mcp_resource", "serverName": server, "uri": uri});
    approve(ctx, &call.name, &payload)?;
    ctx.say("mcp_server_request_started", "");
    let egress = CallEgress(ctx);
    let read = hub::read_resource(&file, &server, &uri, &egress);
    let contents = run(ctx, read)?.map_err(|message| {
        ToolError::new(ToolErrorKind::FAILED, texts::resource_failed(&message))
    })?;
    let text = format::resource_result(&contents);
    ctx.say("mcp_server_response", &text);
    Ok(ToolContent::text(format::truncate(text)))
}

/// `load_mcp_documentation`.
pub fn load_mcp_documentation(ctx: &Ctx<'_>) -> ToolResult {
    ctx.say("load_mcp_documentation", "");
    let servers_dir = ctx
        .setting_path("mcp.servers_dir")?
        .unwrap_or_else(|| home().join("Documents/Cline/MCP"));
    // As in Cline: the path is named even when it cannot be created.
    let _ = std::fs::create_dir_all(&servers_dir);
    let file = settings_file(ctx)?;
    let connected = hub::connected(&file);
    let connected = if connected.is_empty() {
        texts::NONE_RUNNING.to_string()
    } else {
        connected.join(", ")
    };
    Ok(ToolContent::text(texts::documentation(
        &servers_dir.display().to_string(),
        &file.display().to_string(),
        &connected,
    )))
}
