//! What the plugins that reach the network share: web_fetch, web_search, http_tools,
//! use_subagents and generate_explanation. A library, not a plugin.
//!
//! - [`settings`]: the `[web]` keys of the settings file, read through a [`SettingSource`] (the
//!   call's [`Ctx`](tool_api::sdk::Ctx), or a JSON value in tests), with errors that name the key.
//! - [`build_client`]: a `reqwest` client from [`NetSettings`] (timeout, proxy, extra CA roots,
//!   redirects limited to http/https).
//! - [`egress`]: a call's requests through the host's egress proxy, and the refusals that
//!   explain a failed one.
//! - [`describe_error`]: one line for a failed request, with the texts Cline's HTTP client
//!   produced where Cline pins them (`timeout of 15000ms exceeded`,
//!   `Request failed with status code 404`).
//! - [`llm`]: the `[llm]` section (a model endpoint), read once for every plugin that calls a
//!   model.
//! - [`limits`]: the size rules (a download cap in bytes, a text cap in characters).
//! - [`cline`]: requests to Cline's hosted web endpoints (or a compatible proxy): headers, bearer
//!   token, envelope.
//! - [`block_on_cancellable`]: runs a request on a runtime of the call's own and gives up when
//!   the host cancels the call.
//! - [`strip_partial_closing_tag`] and [`tool_message`]: the streaming preview and the UI payload.
//!
//! ```no_run
//! use serde_json::json;
//! use web_support::{build_client, NetSettings};
//!
//! let settings = json!({"web": {"timeout_ms": 2000, "proxy": "none"}});
//! let net = NetSettings::read(&settings)?;
//! let client = build_client(&net, Some("example/1.0"))?;
//! # Ok::<(), web_support::ConfigError>(())
//! ```

mod client;
pub mod cline;
pub mod egress;
mod errors;
pub mod limits;
pub mod llm;
mod partial;
mod run;
pub mod settings;

pub use client::{build_client, MAX_REDIRECTS};
pub use errors::{describe_error, status_error};
pub use partial::{strip_partial_closing_tag, tool_message};
pub use run::block_on_cancellable;
pub use settings::{ConfigError, NetSettings, ProxySetting, SettingSource};
