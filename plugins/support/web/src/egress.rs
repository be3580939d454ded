//! The host's egress proxy for the web tools' own requests: the `egress.route` service points
//! a call's HTTP client at it, so that where the requests go is decided by the same `[egress]`
//! policy, questions and log as commands' connections. The endpoints the user configured for
//! the tool (a SearXNG instance, a declared HTTP tool's URL, a model's base URL, Cline's
//! endpoint) count as allowed.
//!
//! Applies unless the settings name a proxy of their own (`web.proxy = URL`: the requests go
//! there, the policy does not see them) or `web.egress = false`; the environment's proxy
//! variables are not read then. A host without the service leaves the requests as they were.

use serde_json::json;
use tool_api::sdk::prelude::*;

use crate::settings::{NetSettings, ProxySetting};

/// A call's requests go through the egress proxy under this grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    authorization: String,
}

impl NetSettings {
    /// Sends this call's requests through the host's egress proxy, with `configured` (the
    /// tool's endpoints from the settings) allowed. `None` when the settings name a proxy of
    /// their own, `web.egress = false`, or the host has no egress proxy.
    pub fn route(
        &mut self,
        ctx: &Ctx<'_>,
        configured: &[&str],
    ) -> Result<Option<Route>, ToolError> {
        if !self.egress
            || !matches!(
                self.proxy,
                ProxySetting::FromEnvironment | ProxySetting::Off
            )
        {
            return Ok(None);
        }
        let answer = match ctx.call_service("egress", "route", &json!({"configured": configured})) {
            Ok(answer) => answer,
            Err(e) if e.kind == ToolErrorKind::UNAVAILABLE => return Ok(None),
            Err(e) => return Err(e),
        };
        let (Some(url), Some(authorization)) =
            (answer["url"].as_str(), answer["authorization"].as_str())
        else {
            return Err(ToolError::new(
                ToolErrorKind::INTERNAL,
                format!("invalid egress route from the host: {answer}"),
            ));
        };
        self.proxy = ProxySetting::Egress {
            url: url.to_string(),
            authorization: authorization.to_string(),
        };
        Ok(Some(Route {
            authorization: authorization.to_string(),
        }))
    }
}

impl Route {
    /// The refusals of this call's connections since the last time (a refused CONNECT
    /// reaches the client only as a failed tunnel).
    fn refusals(&self, ctx: &Ctx<'_>) -> Vec<String> {
        let answer = ctx
            .call_service(
                "egress",
                "refusals",
                &json!({"authorization": self.authorization}),
            )
            .ok();
        answer
            .as_ref()
            .and_then(|answer| answer["refusals"].as_array())
            .into_iter()
            .flatten()
            .filter_map(|line| line.as_str().map(str::to_string))
            .collect()
    }
}

/// `message` (a failed request's) with the reasons the egress policy refused the call's
/// connections added, when there is a route.
pub fn explained_message(route: Option<&Route>, ctx: &Ctx<'_>, message: String) -> String {
    let refusals = route.map(|route| route.refusals(ctx)).unwrap_or_default();
    if refusals.is_empty() {
        message
    } else {
        format!("{message}\n{}", refusals.join("\n"))
    }
}

/// [`explained_message`] for a tool error.
pub fn explained(route: Option<&Route>, ctx: &Ctx<'_>, mut error: ToolError) -> ToolError {
    error.message = explained_message(route, ctx, error.message.to_string()).into();
    error
}
