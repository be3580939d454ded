//! A tool's result that needs input first (`InputRequired`, SEP-2322's shape) for a frontend
//! whose client does not answer such results: the host answers each request (its user's
//! form, its client's sampled message, the workspace's roots) and calls the tool again with
//! the answers and the tool's state, round after round; with nobody to ask, the call fails
//! saying so; a tool that never stops asking is stopped. Over real plugins (the conformance
//! fixture's 2026-07-28 tools).

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tool_api::model::AskReply;
use toolhost::{ApprovalMode, ErrorKind, Settings, Ui};
use toolhost_tests::{workdir, PluginDir};

use crate::in_process;

/// A user who fills in every form with `answers` (by field) and a client model that always
/// says "Paris"; it remembers the messages of the forms.
#[derive(Clone, Default)]
struct FormFiller {
    answers: Value,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Ui for FormFiller {
    fn say(&self, _kind: &str, _text: &str, _partial: bool) {}

    fn ask(&self, _kind: &str, _text: &str) -> Option<AskReply> {
        None
    }

    fn elicit(&self, request: &Value) -> Option<Value> {
        let message = request["message"].as_str().unwrap_or_default().to_string();
        self.asked.lock().unwrap().push(message);
        let fields = request["requestedSchema"]["properties"].as_object()?;
        let content: serde_json::Map<String, Value> = fields
            .keys()
            .map(|field| (field.clone(), self.answers[field].clone()))
            .collect();
        Some(json!({"action": "accept", "content": content}))
    }

    fn sample(&self, _request: &Value) -> Option<Value> {
        Some(json!({"role": "assistant", "model": "m",
            "content": {"type": "text", "text": "Paris"}}))
    }
}

fn host_with_ui(ui: FormFiller) -> (Arc<toolhost::Host>, tempfile::TempDir, PluginDir) {
    let plugins = PluginDir::empty();
    plugins.add_library("fixture_mcp_everything");
    let ws = workdir();
    let host = in_process::host_asking(
        plugins.path(),
        ws.path(),
        Settings::default(),
        ApprovalMode::DenyUnlessAuto,
        Box::new(ui),
    );
    (host, ws, plugins)
}

#[test]
fn the_host_answers_round_after_round_for_a_client_that_cannot() {
    let filler = FormFiller {
        answers: json!({"name": "Ada", "color": "green", "ok": true}),
        ..FormFiller::default()
    };
    let (host, _ws, _plugins) = host_with_ui(filler.clone());
    let outcome = host.call("test_input_required_result_multi_round", "{}");
    assert_eq!(
        outcome.unattended_text(),
        "Multi-round complete for Ada who likes green"
    );
    assert_eq!(
        *filler.asked.lock().unwrap(),
        [
            "Step 1: What is your name?",
            "Step 2: What is your favorite color?"
        ]
    );
    // Three requests at once: a form, a sampled message and the workspace's roots.
    let outcome = host.call("test_input_required_result_multiple_inputs", "{}");
    assert_eq!(
        outcome.unattended_text(),
        "Name: Ada; Greeting: Paris; Roots: 1"
    );
    // The tool's own state comes back to it.
    let outcome = host.call("test_input_required_result_request_state", "{}");
    assert_eq!(
        outcome.unattended_text(),
        "state-ok: requestState validated"
    );
}

#[test]
fn with_nobody_to_ask_the_call_says_so_and_a_tool_that_never_stops_asking_is_stopped() {
    let plugins = PluginDir::empty();
    plugins.add_library("fixture_mcp_everything");
    let ws = workdir();
    let (host, _ui) = in_process::host(plugins.path(), ws.path());
    let outcome = host.call("test_input_required_result_elicitation", "{}");
    let error = outcome.result.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Unavailable);
    assert!(
        error.message.contains("No user is available"),
        "{}",
        error.message
    );
    // The roots need nobody: the host knows them.
    let outcome = host.call("test_input_required_result_list_roots", "{}");
    assert_eq!(outcome.unattended_text(), "Found 1 root(s)");

    // A user who never confirms: the tool asks again and again.
    let filler = FormFiller {
        answers: json!({"ok": false}),
        ..FormFiller::default()
    };
    let (host, _ws, _plugins) = host_with_ui(filler.clone());
    let outcome = host.call("test_input_required_result_request_state", "{}");
    let error = outcome.result.unwrap_err();
    assert!(
        error.message.contains("more than 8 times"),
        "{}",
        error.message
    );
    assert_eq!(filler.asked.lock().unwrap().len(), 8);
}
