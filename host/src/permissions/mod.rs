//! The policies the host applies to every call: the workspace boundary, `.clineignore`,
//! approval, and the command permissions of `CLINE_COMMAND_PERMISSIONS`.

pub mod approval;
pub(crate) mod clineignore;
pub mod commands;
pub mod workspace;

pub use approval::ApprovalMode;
pub use commands::{check_command, CommandPermissions};
pub use workspace::Workspace;
