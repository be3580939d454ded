//! The `web_fetch` tool: a web page's content for the model.
//!
//! Two backends, chosen by `web.fetch.backend` in the settings file:
//! - `direct` (the default, no account needed): this machine fetches the page ([`direct`]) and
//!   turns it into text ([`page`]): HTML into Markdown of its main content, text and JSON as they
//!   are, binary content refused. The result starts with the prompt and the URL; no model applies
//!   the prompt, the calling model does.
//! - `cline`: Cline's hosted endpoint or a compatible proxy (`web_support::cline`), which answers
//!   the prompt itself; its `result` text is returned verbatim.
//!
//! As in Cline, a failed request is not a tool error but a plain result
//! `Error fetching web content: {message}`; a URL the model got wrong (not http/https, not a URL)
//! is a tool error and counts as a mistake, and a missing or wrong setting is reported as
//! unavailable. The host asks for approval in the `web` category (`[auto_approve] use_web`).
//!
//! Known differences from Cline, all deliberate:
//! - No gate on the provider or a feature flag: the tool works without a Cline account.
//! - The direct backend fetches `http://` URLs as they are (Cline's server upgraded them to
//!   https), so local documentation servers can be read.
//! - The approval comes before the URL is checked (the host approves, then the tool runs).

pub mod backend;
pub mod direct;
pub mod page;

use serde_json::json;
use tool_api::sdk::prelude::*;
use web_support::cline::{self, ClineEndpoint};
use web_support::{
    block_on_cancellable, build_client, egress::explained_message, strip_partial_closing_tag,
    tool_message, NetSettings,
};

use crate::backend::{Backend, DirectOptions};

/// The prefix of every failed request's result (Cline's text).
pub const ERROR_PREFIX: &str = "Error fetching web content: ";

const DESCRIPTION: &str = "Read a web page. HTML pages come back as Markdown of their main \
content with links kept; plain text and JSON come back as they are. Give the complete address \
in `url` (starting with https:// or http://) and say in `prompt` what you are looking for on the \
page: depending on the setup the prompt is answered for you, or it is returned above the page's \
content for you to apply. Long pages are cut off with a note. Use it for documentation, \
references and pages the user points you to; it does not run scripts and cannot log in.";

/// The web_fetch tool.
#[derive(Debug, Default)]
pub struct WebFetch;

impl Tool for WebFetch {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec::simple(
            "web_fetch",
            DESCRIPTION,
            &[
                (
                    "url",
                    "The page's complete URL, for example https://docs.rs/tokio/latest/tokio/.",
                    true,
                ),
                (
                    "prompt",
                    "What you want to learn from the page, as a short instruction or question.",
                    true,
                ),
            ],
        )
        .approval(ApprovalCategory::Web)
        .with_partial()
        .read_only()
        .title("Fetch web page")
        .idempotent()
        .open_world()
        .runs_long()]
    }

    fn describe(&self, call: &Call) -> String {
        format!("[web_fetch for '{}']", call.params.string_or_empty("url"))
    }

    fn handle_partial(&self, call: &Call, ctx: &Ctx<'_>) -> Result<(), ToolError> {
        let raw = call.params.string_or_empty("url");
        let url = strip_partial_closing_tag(&raw, "url");
        ctx.ask_partial("tool", &fetch_message(url));
        Ok(())
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let url = call.params.required("url")?;
        let prompt = call.params.required("prompt")?;
        let backend = Backend::read(ctx)?;
        let mut net = NetSettings::read(ctx)?;
        let outcome = match backend {
            Backend::Direct(options) => {
                let target = direct::parse_url(&url)
                    .map_err(|message| ToolError::new(ToolErrorKind::INVALID_PARAMS, message))?;
                let route = net.route(ctx, &[])?;
                let client = build_client(&net, Some(&options.user_agent))?;
                ctx.say("tool", &fetch_message(&url));
                fetch_direct(ctx, &client, target, &prompt, &options, &net)
                    .map(|outcome| outcome.map_err(|m| explained_message(route.as_ref(), ctx, m)))?
            }
            Backend::Cline(endpoint) => {
                let route = net.route(ctx, &[endpoint.base_url.as_str()])?;
                let client = build_client(&net, None)?;
                ctx.say("tool", &fetch_message(&url));
                fetch_through_cline(ctx, call, &client, &endpoint, &url, &prompt, &net)
                    .map(|outcome| outcome.map_err(|m| explained_message(route.as_ref(), ctx, m)))?
            }
        };
        Ok(ToolContent::text(match outcome {
            Ok(text) => text,
            Err(message) => format!("{ERROR_PREFIX}{message}"),
        }))
    }
}

/// The UI payload of a fetch (Cline's `webFetch` tool message).
pub fn fetch_message(url: &str) -> String {
    tool_message("webFetch", url, &format!("Fetching URL: {url}"))
}

/// Downloads and renders a page; the inner error is the request's failure.
fn fetch_direct(
    ctx: &Ctx<'_>,
    client: &reqwest::Client,
    target: reqwest::Url,
    prompt: &str,
    options: &DirectOptions,
    net: &NetSettings,
) -> Result<Result<String, String>, ToolError> {
    let downloaded = block_on_cancellable(
        ctx,
        direct::download(client, target.clone(), options.max_bytes, net.timeout),
    )?;
    Ok(downloaded.map(|download| {
        page::render(
            &download,
            &target,
            prompt,
            options.max_bytes,
            options.max_chars,
        )
    }))
}

/// Asks Cline's endpoint (or a compatible proxy) for the page; the inner error is the request's
/// failure, Cline's signed-out text included.
fn fetch_through_cline(
    ctx: &Ctx<'_>,
    call: &Call,
    client: &reqwest::Client,
    endpoint: &ClineEndpoint,
    url: &str,
    prompt: &str,
    net: &NetSettings,
) -> Result<Result<String, String>, ToolError> {
    let Some(token) = endpoint.token() else {
        ctx.say(
            "error",
            &format!(
                "web_fetch: the environment variable {} (setting web.cline.token_env) is not set or empty, so the Cline-compatible endpoint cannot be used.",
                endpoint.token_env
            ),
        );
        return Ok(Err(cline::UNAUTHORIZED.to_string()));
    };
    let body = json!({"Url": url, "Prompt": prompt});
    let answer = block_on_cancellable(
        ctx,
        cline::post(
            client,
            endpoint,
            &token,
            cline::FETCH_PATH,
            &call.task,
            &body,
            net.timeout,
        ),
    )?;
    Ok(answer.and_then(|data| match data.get("result") {
        Some(serde_json::Value::String(result)) => Ok(result.clone()),
        _ => Err(format!(
            "the answer from {} has no \"result\" text",
            cline::FETCH_PATH
        )),
    }))
}

tool_api::submit_tool!(WebFetch);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_NONE,
        tool_api::model::access::NETWORK_ANY,
        "toolset:cline-legacy",
    ]
);

#[cfg(test)]
mod tests {
    use super::*;

    fn call(json: &str) -> Call {
        tool_api::sdk::testing::TestHost::call_of("web_fetch", json)
    }

    /// Name, required parameters, approval, partial handler, read-only, no path parameters.
    #[test]
    fn the_spec_declares_what_the_host_enforces() {
        let specs = WebFetch.specs();
        assert_eq!(specs.len(), 1);
        let spec = &specs[0];
        assert_eq!(
            (
                spec.name.as_str(),
                spec.required_params(),
                spec.approval,
                spec.partial,
                spec.read_only,
                spec.path_params.is_empty(),
            ),
            (
                "web_fetch",
                vec!["url", "prompt"],
                Some(ApprovalCategory::Web),
                true,
                true,
                true,
            )
        );
    }

    #[test]
    fn the_description_names_the_url() {
        assert_eq!(
            WebFetch.describe(&call(r#"{"url":"https://x.io","prompt":"p"}"#)),
            "[web_fetch for 'https://x.io']"
        );
    }

    #[test]
    fn the_ui_payload_is_clines() {
        assert_eq!(
            fetch_message("https://x.io"),
            r#"{"tool":"webFetch","path":"https://x.io","content":"Fetching URL: https://x.io","operationIsLocatedInWorkspace":false}"#
        );
    }
}
