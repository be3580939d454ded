//! The `web_search` tool: a numbered list of result titles and URLs.
//!
//! Two backends, chosen by `web.search.backend` in the settings file:
//! - `searxng`: a SearXNG instance's JSON API ([`searxng`]), the domain filters applied to the
//!   results' hosts here;
//! - `cline`: Cline's hosted endpoint or a compatible proxy (`web_support::cline`), the domain
//!   filters sent along.
//!
//! The result is Cline's list ([`results::format_results`]). As in Cline, giving both
//! `allowed_domains` and `blocked_domains` is a tool error and a mistake, a failed request is the
//! plain result `Error performing web search: {message}`, and the lists are parsed leniently
//! ([`domains::parse_partial_array`]). A missing or wrong setting is reported as unavailable.
//! The host asks for approval in the `web` category (`[auto_approve] use_web`).
//!
//! Known differences from Cline, all deliberate:
//! - No gate on the provider or a feature flag: SearXNG needs no Cline account.
//! - The approval comes before the domain lists are checked (the host approves, then the tool
//!   runs), so a denied call never reports the conflict.
//! - A domain list that is valid JSON but not a list (an object, a number) is an error rather
//!   than being sent on.

pub mod backend;
pub mod domains;
pub mod results;
pub mod searxng;

use serde_json::{json, Value};
use tool_api::sdk::prelude::*;
use web_support::cline::{self, ClineEndpoint};
use web_support::{
    block_on_cancellable, build_client, egress::explained_message, strip_partial_closing_tag,
    tool_message, NetSettings,
};

use crate::backend::Backend;
use crate::domains::{parse_partial_array, DomainFilter};
use crate::results::{format_results, Hit};

/// The prefix of every failed request's result (Cline's text).
pub const ERROR_PREFIX: &str = "Error performing web search: ";

const DESCRIPTION: &str = "Search the web. Returns a numbered list of result titles and URLs; \
read a promising one with web_fetch. Use it for current documentation, release notes, error \
messages and anything that may have changed since your training. To search only some sites, \
give `allowed_domains`; to leave sites out, give `blocked_domains`. Use at most one of the two, \
each a JSON array such as [\"docs.rs\", \"github.com\"].";

/// The web_search tool.
#[derive(Debug, Default)]
pub struct WebSearch;

impl Tool for WebSearch {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec::simple(
            "web_search",
            DESCRIPTION,
            &[
                ("query", "What to search for.", true),
                (
                    "allowed_domains",
                    "Optional JSON array of domains: only results from these sites (and their \
                     subdomains) are returned.",
                    false,
                ),
                (
                    "blocked_domains",
                    "Optional JSON array of domains whose results are left out.",
                    false,
                ),
            ],
        )
        .approval(ApprovalCategory::Web)
        .with_partial()
        .read_only()
        .title("Search the web")
        .idempotent()
        .open_world()]
    }

    fn describe(&self, call: &Call) -> String {
        format!(
            "[web_search for '{}']",
            call.params.string_or_empty("query")
        )
    }

    fn handle_partial(&self, call: &Call, ctx: &Ctx<'_>) -> Result<(), ToolError> {
        let raw = call.params.string_or_empty("query");
        let query = strip_partial_closing_tag(&raw, "query");
        ctx.ask_partial("tool", &search_message(query));
        Ok(())
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let query = call.params.required("query")?;
        let allowed = domain_list(call, "allowed_domains")?;
        let blocked = domain_list(call, "blocked_domains")?;
        let filter = DomainFilter::new(allowed, blocked)
            .map_err(|message| ToolError::new(ToolErrorKind::INVALID_PARAMS, message))?;
        let backend = Backend::read(ctx)?;
        let mut net = NetSettings::read(ctx)?;
        let configured = match &backend {
            Backend::Searxng(instance) => instance.base_url.as_str(),
            Backend::Cline(endpoint) => endpoint.base_url.as_str(),
        };
        let route = net.route(ctx, &[configured])?;
        let client = build_client(&net, None)?;
        ctx.say("tool", &search_message(&query));
        let outcome = match backend {
            Backend::Searxng(instance) => block_on_cancellable(
                ctx,
                searxng::search(&client, &instance, &query, &filter, net.timeout),
            )?,
            Backend::Cline(endpoint) => {
                search_through_cline(ctx, call, &client, &endpoint, &query, &filter, &net)?
            }
        }
        .map_err(|message| explained_message(route.as_ref(), ctx, message));
        Ok(ToolContent::text(match outcome {
            Ok(hits) => format_results(&hits),
            Err(message) => format!("{ERROR_PREFIX}{message}"),
        }))
    }
}

/// The UI payload of a search (Cline's `webSearch` tool message).
pub fn search_message(query: &str) -> String {
    tool_message("webSearch", query, &format!("Searching for: {query}"))
}

/// A domain list parameter; absent or empty is an empty list, as in Cline (`raw || "[]"`).
fn domain_list(call: &Call, name: &str) -> Result<Vec<String>, ToolError> {
    let raw = call.params.string(name).unwrap_or_default();
    let raw = if raw.is_empty() { "[]" } else { raw.as_str() };
    parse_partial_array(raw).map_err(|reason| {
        ToolError::new(
            ToolErrorKind::INVALID_PARAMS,
            format!("{name} must be a JSON array of domains such as [\"docs.rs\"] ({reason})."),
        )
    })
}

/// Asks Cline's endpoint (or a compatible proxy); the inner error is the request's failure,
/// Cline's signed-out text included.
fn search_through_cline(
    ctx: &Ctx<'_>,
    call: &Call,
    client: &reqwest::Client,
    endpoint: &ClineEndpoint,
    query: &str,
    filter: &DomainFilter,
    net: &NetSettings,
) -> Result<Result<Vec<Hit>, String>, ToolError> {
    let Some(token) = endpoint.token() else {
        ctx.say(
            "error",
            &format!(
                "web_search: the environment variable {} (setting web.cline.token_env) is not set or empty, so the Cline-compatible endpoint cannot be used.",
                endpoint.token_env
            ),
        );
        return Ok(Err(cline::UNAUTHORIZED.to_string()));
    };
    let mut body = json!({"query": query});
    match filter {
        DomainFilter::Allow(domains) => body["allowed_domains"] = json!(domains),
        DomainFilter::Block(domains) => body["blocked_domains"] = json!(domains),
        DomainFilter::None => {}
    }
    let answer = block_on_cancellable(
        ctx,
        cline::post(
            client,
            endpoint,
            &token,
            cline::SEARCH_PATH,
            &call.task,
            &body,
            net.timeout,
        ),
    )?;
    Ok(answer.map(|data| {
        data.get("results")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(Hit::from_json)
            .collect()
    }))
}

tool_api::submit_tool!(WebSearch);
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
        tool_api::sdk::testing::TestHost::call_of("web_search", json)
    }

    /// Name, required parameters, approval, partial handler, read-only, no path parameters.
    #[test]
    fn the_spec_declares_what_the_host_enforces() {
        let specs = WebSearch.specs();
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
                "web_search",
                vec!["query"],
                Some(ApprovalCategory::Web),
                true,
                true,
                true,
            )
        );
    }

    #[test]
    fn the_description_names_the_query() {
        assert_eq!(
            WebSearch.describe(&call(r#"{"query":"tokio select"}"#)),
            "[web_search for 'tokio select']"
        );
    }

    #[test]
    fn domain_lists_default_to_empty() {
        let c = call(r#"{"query":"q","allowed_domains":"","blocked_domains":["a.com"]}"#);
        let list = |name| domain_list(&c, name).map_err(|e| e.message.to_string());
        assert_eq!(list("allowed_domains"), Ok(vec![]));
        assert_eq!(list("blocked_domains"), Ok(vec!["a.com".to_string()]));
        assert_eq!(list("missing"), Ok(vec![]));
        assert_eq!(
            domain_list(&call(r#"{"allowed_domains":"{\"a\":1}"}"#), "allowed_domains")
                .map_err(|e| e.message.to_string()),
            Err("allowed_domains must be a JSON array of domains such as [\"docs.rs\"] (not a list of domains: {\"a\":1}).".to_string())
        );
    }

    #[test]
    fn the_ui_payload_is_clines() {
        assert_eq!(
            search_message("tokio"),
            r#"{"tool":"webSearch","path":"tokio","content":"Searching for: tokio","operationIsLocatedInWorkspace":false}"#
        );
    }
}
