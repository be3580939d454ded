//! The `fetch_web_content` tool of Cline's SDK tool set (`cline-sdk`): several URLs in one
//! call, each answered with its text (HTML made text, JSON pretty-printed) under a short
//! header, and the prompt it was asked with; an array of operation results in the order given.
//! The prompt goes to no model: it is echoed for the model that asked.
//!
//! The requests go through the host's egress policy (the web tools' `[web]` settings: timeout,
//! proxy, `web.egress`), and the call is approved in the `web` category, as web_fetch's.
//!
//! Deliberate differences from Cline's SDK executor: the requests are made one after another,
//! and a request the egress policy refused says why.

mod text;

use std::time::Duration;

use serde_json::{json, Value};
use tool_api::sdk::operation::{invalid_param as invalid, OperationResult};
use tool_api::sdk::prelude::*;
use web_support::egress::explained_message;
use web_support::limits::read_capped;
use web_support::{block_on_cancellable, build_client, describe_error, NetSettings};

pub use text::{html_to_text, pretty_json};

/// The most bytes read of a response (Cline's `maxResponseBytes`).
const MAX_BYTES: u64 = 5_000_000;

/// The most characters of a page's text answered.
const MAX_CHARS: usize = 50_000;

/// The user agent of the requests (Cline's).
const USER_AGENT: &str = "Mozilla/5.0 (compatible; AgentBot/1.0)";

const ACCEPT: &str =
    "text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,*/*;q=0.7";

const DESCRIPTION: &str = "Fetch content from URLs and analyze them using the provided prompts. Use for retrieving documentation, API references, or any web content. Each request includes a URL and a prompt describing what information to extract. Fetch independent URLs together in one call, and call this tool in the same response as other independent tool calls.";

/// The tool's input schema, as Cline's SDK shows it to the model.
fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "requests": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "url": {"type": "string", "description": "The URL to fetch"},
                        "prompt": {"type": "string", "minLength": 2, "description": "Analysis prompt for the fetched content"}
                    },
                    "required": ["url", "prompt"],
                    "additionalProperties": false
                },
                "description": "Array of the URLs for the web fetch requests"
            }
        },
        "required": ["requests"],
        "additionalProperties": false
    })
}

/// One request: a URL and the prompt it is fetched for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The URL.
    pub url: String,
    /// What the model wants from it.
    pub prompt: String,
}

/// The requests of a call, checked as Cline's schema checks them (no looser shapes).
pub fn requests(params: &Params) -> Result<Vec<Request>, ToolError> {
    let Some(Value::Array(items)) = params.as_map().get("requests") else {
        return Err(invalid(
            "Invalid input: expected array, received undefined",
            "requests",
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let field = |name: &str| item.get(name).and_then(Value::as_str).map(str::to_string);
            let url = field("url").ok_or_else(|| {
                invalid(
                    "Invalid input: expected string, received undefined",
                    &format!("requests[{i}].url"),
                )
            })?;
            let prompt = field("prompt").ok_or_else(|| {
                invalid(
                    "Invalid input: expected string, received undefined",
                    &format!("requests[{i}].prompt"),
                )
            })?;
            if prompt.chars().count() < 2 {
                return Err(invalid(
                    "Too small: expected string to have >=2 characters",
                    &format!("requests[{i}].prompt"),
                ));
            }
            Ok(Request { url, prompt })
        })
        .collect()
}

/// The fetch_web_content tool.
#[derive(Debug, Default)]
pub struct FetchWebContent;

impl Tool for FetchWebContent {
    fn specs(&self) -> Vec<ToolSpec> {
        let mut spec = ToolSpec::simple("fetch_web_content", DESCRIPTION, &[])
            .approval(ApprovalCategory::Web)
            .read_only()
            .open_world()
            .title("Fetch web content")
            .checks_own_params();
        spec.input_schema = input_schema();
        vec![spec]
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let asked = requests(&call.params)?;
        let mut net = NetSettings::read(ctx)?;
        let route = net.route(ctx, &[])?;
        let client = build_client(&net, Some(USER_AGENT))?;
        let timeout = net.timeout;
        let results: Vec<OperationResult> = asked
            .iter()
            .map(|request| {
                let fetched = match reqwest::Url::parse(&request.url) {
                    Err(_) => Err(format!("Invalid URL: {}", request.url)),
                    Ok(url) if !matches!(url.scheme(), "http" | "https") => Err(format!(
                        "Invalid protocol: {}:. Only http and https are supported.",
                        url.scheme()
                    )),
                    Ok(url) => block_on_cancellable(ctx, fetch(&client, url, timeout))
                        .map_err(|e| e.message.to_string())
                        .and_then(|fetched| fetched)
                        .map_err(|message| explained_message(route.as_ref(), ctx, message)),
                };
                match fetched {
                    Ok(page) => OperationResult::success(&request.url, page.answer(request)),
                    Err(why) => OperationResult::failure(
                        &request.url,
                        format!("Error fetching web content: {why}"),
                    ),
                }
            })
            .collect();
        Ok(ToolContent::text(OperationResult::to_json(&results)))
    }
}

/// A fetched page.
struct Page {
    content_type: String,
    bytes: usize,
    content: String,
}

impl Page {
    /// The answer for `request`: the header, the text (cut at [`MAX_CHARS`]), the prompt.
    fn answer(&self, request: &Request) -> String {
        let length = self.content.chars().count();
        let mut lines = vec![
            format!("URL: {}", request.url),
            format!("Content-Type: {}", self.content_type),
            format!("Size: {} bytes", self.bytes),
            String::new(),
            "--- Content ---".to_string(),
            self.content.chars().take(MAX_CHARS).collect(),
        ];
        if length > MAX_CHARS {
            lines.push(format!(
                "\n[Content truncated: showing first {MAX_CHARS} of {length} characters]"
            ));
        }
        lines.extend([
            String::new(),
            "--- Analysis Request ---".to_string(),
            format!("Prompt: {}", request.prompt),
        ]);
        lines.join("\n")
    }
}

/// One GET, its body read up to [`MAX_BYTES`] and made text by its content type.
async fn fetch(
    client: &reqwest::Client,
    url: reqwest::Url,
    timeout: Duration,
) -> Result<Page, String> {
    let response = client
        .get(url)
        .header(reqwest::header::ACCEPT, ACCEPT)
        .header(reqwest::header::ACCEPT_LANGUAGE, "en-US,en;q=0.9")
        .send()
        .await
        .map_err(|e| describe_error(&e, timeout))?;
    // Cline's SDK words a status outside 2xx as fetch's `HTTP <code>: <statusText>`.
    let status = response.status();
    if !status.is_success() {
        return Err(format!(
            "HTTP {}: {}",
            status.as_u16(),
            status.canonical_reason().unwrap_or_default()
        ));
    }
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let (body, cut) = read_capped(response, MAX_BYTES, timeout).await?;
    if cut {
        return Err(format!("Response too large: exceeded {MAX_BYTES} bytes"));
    }
    let text = String::from_utf8_lossy(&body);
    let content =
        if content_type.contains("text/html") || content_type.contains("application/xhtml") {
            html_to_text(&text)
        } else if content_type.contains("application/json") {
            pretty_json(&text)
        } else {
            text.into_owned()
        };
    Ok(Page {
        content_type,
        bytes: body.len(),
        content,
    })
}

tool_api::submit_tool!(FetchWebContent);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_NONE,
        tool_api::model::access::NETWORK_ANY,
        "toolset:cline-sdk@act",
        "toolset:cline-sdk@plan",
        "toolset:cline-sdk@default",
    ]
);
