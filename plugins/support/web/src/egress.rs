//! The host's egress proxy for the web tools' own requests: the `egress.route` service points
//! a call's HTTP client at it, so that where the requests go is decided by the same `[egress]`
//! policy, questions and log as commands' connections. The endpoints the user configured for
//! the tool (a SearXNG instance, a declared HTTP tool's URL, a model's base URL, Cline's
//! endpoint) count as allowed.
//!
//! Applies unless the settings name a proxy of their own (`web.proxy = URL`: the requests go
//! there, the policy does not see them) or `web.egress = false`; the environment's proxy
//! variables are not read then. A host without the service leaves the requests as they were.

use tool_api::sdk::prelude::*;

use crate::settings::{NetSettings, ProxySetting};

/// A call's requests go through the egress proxy under this grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route(EgressRoute);

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
        let Some(route) = ctx.egress_route(configured)? else {
            return Ok(None);
        };
        self.proxy = ProxySetting::Egress(route.clone());
        Ok(Some(Route(route)))
    }
}

/// `message` (a failed request's) with the reasons the egress policy refused the call's
/// connections added, when there is a route.
pub fn explained_message(route: Option<&Route>, ctx: &Ctx<'_>, message: String) -> String {
    let refusals = route
        .map(|Route(route)| ctx.egress_refusals(route))
        .unwrap_or_default();
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
