//! Routes through the egress proxy for the host's own clients: a call's requests (the
//! `egress.route` service, asked as the call's user) and a host's listings (what a plugin
//! connects to outside any call to answer the host, such as an MCP server it starts to list
//! its tools; asked of nobody).

use std::sync::Arc;

use tool_api::model::EgressRoute;

use super::host::Host;
use crate::egress::{Answer, Asker, Grant, Policy};
use crate::error::{CallError, ErrorKind};

/// The tool a listing's connections are logged under.
const LISTING_TOOL: &str = "(tool listing)";

/// A listing's questions: nobody waits on a listing, so nothing is asked.
struct NobodyToAsk;

impl Asker for NobodyToAsk {
    fn ask(&self, _question: &str) -> Answer {
        Answer::Refused("with nobody to ask (a connection made to list tools asks nobody)".into())
    }
}

impl Host {
    /// The grant `tool`'s requests in this task are decided under: the settings' policy with
    /// `configured` (the tool's endpoints from the user's settings) allowed, asked of `asker`.
    pub(super) fn egress_grant(
        &self,
        tool: &str,
        configured: &[&str],
        asker: Arc<dyn Asker>,
    ) -> Result<Grant, CallError> {
        let policy = Policy::from_settings(&self.settings().egress)
            .map_err(unusable)?
            .with_configured(configured.iter().copied());
        Ok(Grant::new(
            self.task_id().to_string(),
            tool.to_string(),
            policy,
            asker,
        ))
    }

    /// The route of the listings ([`tool_api::model::DynamicToolsQuery::egress`]), made on
    /// first use under the task that first lists and shared with the host's other tasks;
    /// `None` when the proxy cannot be used (the reason is logged).
    pub fn listing_route(&self) -> Option<EgressRoute> {
        self.listing_route
            .get_or_init(|| {
                let route = self
                    .egress_grant(LISTING_TOOL, &[], Arc::new(NobodyToAsk))
                    .and_then(client_route);
                route
                    .inspect_err(|e| {
                        tracing::warn!(target: "toolhost::egress", "listings connect without the egress proxy: {e}");
                    })
                    .ok()
            })
            .clone()
    }
}

/// Registers `grant` with the egress proxy for a host client.
pub(super) fn client_route(grant: Grant) -> Result<EgressRoute, CallError> {
    crate::egress::client_route(grant, private_dir()?).map_err(unusable)
}

/// A dedicated port of the egress proxy for `grant` (a client that cannot send a token).
pub(super) fn dedicated_route(grant: Grant) -> Result<String, CallError> {
    crate::egress::dedicated_route(grant, private_dir()?).map_err(unusable)
}

fn private_dir() -> Result<&'static std::path::Path, CallError> {
    crate::plugins::private_dir::path()
        .map_err(|e| CallError::new(ErrorKind::Blocked, e.to_string()))
}

fn unusable(e: crate::egress::EgressError) -> CallError {
    CallError::new(
        ErrorKind::Blocked,
        format!("The egress proxy cannot be used: {e}."),
    )
}
