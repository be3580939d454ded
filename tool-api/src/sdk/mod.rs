//! The plugin author's side: implement [`Tool`], register it with [`crate::submit_tool!`], and
//! export the library with [`crate::export_plugin!`].
//!
//! ```no_run
//! use tool_api::sdk::prelude::*;
//!
//! #[derive(Default)]
//! struct Echo;
//!
//! impl Tool for Echo {
//!     fn specs(&self) -> Vec<ToolSpec> {
//!         vec![ToolSpec::simple("echo", "Echoes `text`.", &[("text", "The text.", true)])]
//!     }
//!     fn execute(&self, call: &Call, _ctx: &Ctx<'_>) -> ToolResult {
//!         Ok(ToolContent::text(call.params.required("text")?))
//!     }
//! }
//!
//! tool_api::submit_tool!(Echo);
//! tool_api::export_plugin!();
//! ```

mod adapter;
mod context;
pub mod files;
mod guard;
pub mod mcp_result;
pub mod operation;
mod params;
pub mod paths;
pub mod private_dir;
#[cfg(feature = "runtime")]
pub mod runtime;
mod spec;
pub mod testing;
mod tool;

pub use crate::js;

pub use adapter::{handler_box, ToolAdapter};
pub use context::{auto_approves, Ctx, Elicited, Proposal};
pub use guard::{contain, drop_payload, guard, panic_message};
pub use params::{missing, parse_int_like_js, Params};
pub use tool::{Call, Tool, ToolRegistration, ToolResult};

/// Everything a plugin usually needs.
pub mod prelude {
    pub use super::{Call, Ctx, Params, Proposal, Tool, ToolResult};
    pub use crate::abi::{ToolError, ToolErrorKind};
    pub use crate::model::{
        ApprovalCategory, ApprovalDecision, ApprovalRequest, AskReply, AskResponse, ContentBlock,
        DynamicToolsQuery, EgressRoute, OfferRequest, PathVerdict, TaskContext, ToolContent,
        ToolSpec,
    };
    pub use crate::texts;
    pub use crate::workspace::{FsError, OpenedFile, Workspace};
}
