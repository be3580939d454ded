//! What a request of protocol 2026-07-28 or later is: one without a session, whose `_meta`
//! carries what a session would (the client's capabilities, its log level).

use rmcp::service::RequestContext;
use rmcp::RoleServer;

/// The `_meta` key of a 2026-07-28 request's log level.
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";

/// Whether a request speaks 2026-07-28 or later: no session, everything in its `_meta`.
pub fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| !version.has_initialize())
}

/// Whether a 2026-07-28 request's client declared form elicitation (`{}` means form).
pub fn can_elicit(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .and_then(|capabilities| capabilities.elicitation)
        .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none())
}
