//! One call as the host hands it to a handler ([`HandlerCall`]), and what running it came to
//! ([`Ran`]).
//!
//! The parameters and the task context stay typed until a handler needs their JSON: the ABI
//! adapter and a worker's channel write each once ([`Json::text`]), and the text is kept, so
//! that describing and running a call write nothing twice and a context shared by many calls is
//! written once for all of them.

use std::sync::OnceLock;

use serde::Serialize;
use serde_json::{Map, Value};
use tool_api::model::{TaskContext, ToolContent};

use crate::error::CallError;

/// A value a handler reads, and its JSON text, written the first time it is asked for.
#[derive(Debug)]
pub struct Json<T> {
    /// The value; `None` for one received as text (in a worker process, which only passes the
    /// text on to its library).
    value: Option<T>,
    text: OnceLock<String>,
}

impl<T: Serialize> Json<T> {
    /// `value`, its text not written yet.
    pub fn of(value: T) -> Self {
        Self {
            value: Some(value),
            text: OnceLock::new(),
        }
    }

    /// A value known only as its JSON `text`.
    pub fn from_text(text: String) -> Self {
        Self {
            value: None,
            text: OnceLock::from(text),
        }
    }

    /// The value; `None` when it was received as text.
    pub fn value(&self) -> Option<&T> {
        self.value.as_ref()
    }

    /// The JSON text, written once.
    pub fn text(&self) -> &str {
        self.text.get_or_init(|| {
            // A value without its text is one made by `of`.
            self.value
                .as_ref()
                .and_then(|value| serde_json::to_string(value).ok())
                .unwrap_or_default()
        })
    }
}

/// A call's parameters, a JSON object.
pub type Params = Json<Map<String, Value>>;

/// The task context a call runs in.
pub type Context = Json<TaskContext>;

/// One call, as a handler reads it.
#[derive(Debug, Clone, Copy)]
pub struct HandlerCall<'a> {
    /// The name the tool was called by.
    pub tool_name: &'a str,
    /// The parameters.
    pub params: &'a Params,
    /// The task context (with the host's verdicts on the call's paths).
    pub context: &'a Context,
}

/// Marks when a handler in this process starts and returns, for a caller keeping its timeout.
pub trait Watch {
    /// The handler of the call `description` describes starts now.
    fn started(&self, description: &str);
    /// The handler returned; `false` when the caller had given the call up.
    fn returned(&self) -> bool;
}

/// A watch nobody reads: the call's caller waits for it whatever it takes (a worker process
/// serving the host, whose own deadline stops it).
pub struct Unwatched;

impl Watch for Unwatched {
    fn started(&self, _description: &str) {}

    fn returned(&self) -> bool {
        true
    }
}

/// What running a call came to.
#[derive(Debug)]
pub enum Ran {
    /// It ended: its result, and its description when the handler gave one.
    Ended(Result<ToolContent, CallError>, Option<String>),
    /// It ran past its timeout and was stopped (a handler in another process).
    TimedOut,
    /// Its caller gave it up before it returned (a handler in this process); nothing more is
    /// to be done with it.
    GivenUp,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_written_once_and_its_text_kept() {
        let params = Params::of(Map::from_iter([("path".to_string(), Value::from("a.txt"))]));
        let first: *const str = params.text();
        assert_eq!(params.text(), r#"{"path":"a.txt"}"#);
        assert!(std::ptr::eq(first, params.text()), "written once");
        let received = Params::from_text(r#"{"path":"b.txt"}"#.to_string());
        assert_eq!(received.text(), r#"{"path":"b.txt"}"#);
        assert!(received.value().is_none());
    }
}
