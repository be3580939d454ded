//! The policies the host applies to every call: the workspace boundary, `.clineignore`, and
//! approval.

pub mod approval;
pub mod clineignore;
pub mod workspace;

pub use approval::{auto_approves, ApprovalMode};
pub use clineignore::ClineIgnore;
pub use workspace::Workspace;
