//! What the plugins that offer Cline's instruction files share: use_skill and the SDK's
//! `skills` (skills) and rules_and_workflows (rules, workflows). A library, not a plugin.
//!
//! - [`skills`]: the skills a workspace has, and one skill's instructions.
//!
//! - [`front_matter`]: a Markdown file's YAML front matter and body, parsed as Cline does.
//! - [`InstructionFile`]: one such file offered to MCP clients as a resource, and
//!   [`answer_resources`], the resources handler extensions over a list of them: only a
//!   listed file is readable, and a workspace file is read through the workspace's confined
//!   access (no symbolic link out of it, `.clineignore` obeyed).

pub mod front_matter;
mod resources;
pub mod skills;

pub use resources::{answer_resources, home, offerable, InstructionFile, Origin};
