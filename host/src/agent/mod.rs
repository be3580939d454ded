//! The agent's side of a call: assistant text parsed into tool calls (`parser`), one
//! assistant message run as an agent would run it (`session`), and the tool specs rendered for
//! the model providers (`schema`).

pub mod parser;
pub mod schema;
pub mod session;
