//! The policies the host applies to every call: the workspace boundary, `.clineignore`,
//! approval, and the command permissions of `CLINE_COMMAND_PERMISSIONS`.

pub mod approval;
pub mod clineignore;
pub mod commands;
pub mod workspace;

pub use approval::{auto_approves, ApprovalMode};
pub use clineignore::ClineIgnore;
pub use commands::{check_command, CommandCheck, CommandPermissions, CommandVerdict};
pub use workspace::Workspace;
