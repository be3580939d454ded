//! The forms `toolhost mcp` asks its client's user with (`elicitation/create`): an approval
//! (an `approve` switch and optional `feedback`), ask_followup_question's question (its
//! options as the choices of `answer`), the egress proxy's question (`allow`: for this task,
//! always, no), and a free-text `response` for anything else; and each form's answer as
//! Cline's reply.

use rmcp::model::ElicitationAction;
use serde_json::{json, Value};
use tool_api::model::{AskReply, AskResponse};

/// Asks the client's user: a message and a form's schema in, the action and the form's
/// content out (`None`: nobody answered).
pub type Elicit<'a> = dyn Fn(&str, Value) -> Option<(ElicitationAction, Value)> + 'a;

/// A question (Cline's `ask`) as an elicitation form, and the form's answer as Cline's reply.
pub fn ask(elicit: &Elicit<'_>, kind: &str, text: &str) -> Option<AskReply> {
    match kind {
        "followup" => followup(elicit, text),
        "tool" | "hook" | "command" => approval(elicit, text),
        "egress" => egress(elicit, text),
        _ => free_text(elicit, kind, text),
    }
}

/// An approval: approve, or deny with optional feedback.
fn approval(elicit: &Elicit<'_>, text: &str) -> Option<AskReply> {
    let schema = json!({
        "type": "object",
        "properties": {
            "approve": {"type": "boolean", "title": "Approve", "description": "Let the tool go ahead.", "default": false},
            "feedback": {"type": "string", "title": "Feedback", "description": "Optional: tell the model why, or what to do instead."},
        },
        "required": ["approve"],
    });
    let (action, content) = elicit(text, schema)?;
    let feedback = content["feedback"]
        .as_str()
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(str::to_string);
    let approved = action == ElicitationAction::Accept && content["approve"] == true;
    Some(AskReply {
        response: if approved {
            AskResponse::Yes
        } else if feedback.is_some() {
            AskResponse::Message
        } else {
            AskResponse::No
        },
        text: if approved { None } else { feedback },
    })
}

/// The egress proxy's question: allow a host for this task, always, or not.
fn egress(elicit: &Elicit<'_>, text: &str) -> Option<AskReply> {
    let schema = json!({
        "type": "object",
        "properties": {
            "allow": {"type": "string", "title": "Allow the connection",
                      "enum": [EGRESS_THIS_TASK, EGRESS_ALWAYS, EGRESS_NO], "default": EGRESS_NO},
        },
        "required": ["allow"],
    });
    let (action, content) = elicit(text, schema)?;
    let choice = content["allow"]
        .as_str()
        .filter(|_| action == ElicitationAction::Accept);
    Some(match choice {
        Some(EGRESS_THIS_TASK) => AskReply {
            response: AskResponse::Yes,
            text: None,
        },
        Some(EGRESS_ALWAYS) => AskReply {
            response: AskResponse::Message,
            text: Some("always".to_string()),
        },
        _ => AskReply {
            response: AskResponse::No,
            text: None,
        },
    })
}

/// The egress question's choices.
const EGRESS_THIS_TASK: &str = "for this task";
const EGRESS_ALWAYS: &str = "always";
const EGRESS_NO: &str = "no";

/// ask_followup_question's `{"question", "options"}`: the options are the choices of
/// `answer`; a typed answer wins over a choice.
fn followup(elicit: &Elicit<'_>, text: &str) -> Option<AskReply> {
    let asked: Value = serde_json::from_str(text).unwrap_or_else(|_| json!({"question": text}));
    let question = asked["question"].as_str().unwrap_or(text);
    let options: Vec<&str> = asked["options"]
        .as_array()
        .map(|o| o.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut properties = serde_json::Map::new();
    if options.is_empty() {
        properties.insert(
            "answer".into(),
            json!({"type": "string", "title": "Answer"}),
        );
    } else {
        properties.insert(
            "answer".into(),
            json!({"type": "string", "title": "Answer", "enum": options}),
        );
        properties.insert(
            "other".into(),
            json!({"type": "string", "title": "Other answer", "description": "Optional: an answer of your own instead of a choice."}),
        );
    }
    let schema = json!({"type": "object", "properties": properties});
    let (action, content) = elicit(question, schema)?;
    if action != ElicitationAction::Accept {
        return None;
    }
    let typed = content["other"].as_str().map(str::trim).unwrap_or_default();
    let answer = if typed.is_empty() {
        content["answer"].as_str().unwrap_or_default()
    } else {
        typed
    };
    Some(AskReply {
        response: AskResponse::Message,
        text: Some(answer.to_string()),
    })
}

/// Any other question (plan_mode_respond, attempt_completion's feedback): a free-text reply;
/// an empty one is a plain "yes".
fn free_text(elicit: &Elicit<'_>, kind: &str, text: &str) -> Option<AskReply> {
    let message = if text.is_empty() {
        format!("{kind}: any reply?")
    } else {
        text.to_string()
    };
    let schema = json!({
        "type": "object",
        "properties": {"response": {"type": "string", "title": "Reply"}},
    });
    let (action, content) = elicit(&message, schema)?;
    if action != ElicitationAction::Accept {
        return None;
    }
    let reply = content["response"].as_str().map(str::trim).unwrap_or("");
    Some(if reply.is_empty() {
        AskReply {
            response: AskResponse::Yes,
            text: None,
        }
    } else {
        AskReply {
            response: AskResponse::Message,
            text: Some(reply.to_string()),
        }
    })
}
