//! The forms `toolhost mcp` asks its client's user with (`elicitation/create`): an approval
//! (an `approve` switch, on unless the user turns it off, and optional `feedback`),
//! ask_followup_question's question (its options as the choices of `answer`), the egress
//! proxy's question (`allow`: for this task, always, no), and a free-text `response` for
//! anything else, its message a question that reads as one (a completed task's result, a
//! plan, a proposal); and each form's answer as Cline's reply.

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

/// An approval: approve, or deny with optional feedback. Accepting the form as it comes
/// approves (its switch is on by default, and a client that sends no content for it
/// accepted); declining, cancelling or turning the switch off denies.
fn approval(elicit: &Elicit<'_>, text: &str) -> Option<AskReply> {
    let schema = json!({
        "type": "object",
        "properties": {
            "approve": {"type": "boolean", "title": "Approve", "description": "Let the tool go ahead (turn off to deny).", "default": true},
            "feedback": {"type": "string", "title": "Feedback", "description": "Optional: tell the model why, or what to do instead."},
        },
    });
    let (action, content) = elicit(&approval_message(text), schema)?;
    let feedback = content["feedback"]
        .as_str()
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(str::to_string);
    let approved = action == ElicitationAction::Accept && content["approve"] != false;
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

/// Lines of a file's content shown in an approval, at most.
const SHOWN_LINES: usize = 20;

/// An approval's message as a person reads it: Cline's `ClineSayTool` JSON (what file tools
/// ask with) in words, with the start of the content; any other message as it is.
fn approval_message(text: &str) -> String {
    let Ok(Value::Object(said)) = serde_json::from_str::<Value>(text) else {
        return text.to_string();
    };
    let field = |name: &str| said.get(name).and_then(Value::as_str).unwrap_or_default();
    let path = field("path");
    let action = match field("tool") {
        "newFileCreated" => format!("Create {path}"),
        "editedExistingFile" => format!("Edit {path}"),
        "fileDeleted" => format!("Delete {path}"),
        "readFile" => format!("Read {path}"),
        "listFilesTopLevel" | "listFilesRecursive" => format!("List the files of {path}"),
        "listCodeDefinitionNames" => format!("List the definitions in {path}"),
        "searchFiles" => format!("Search {path} for /{}/", field("regex")),
        "" => return text.to_string(),
        other if path.is_empty() => format!("Use {other}"),
        other => format!("Use {other} on {path}"),
    };
    let mut message = action;
    if said.get("operationIsLocatedInWorkspace") == Some(&Value::Bool(false)) {
        message.push_str(" (outside the workspace)");
    }
    message.push('?');
    let content = field("content");
    if !content.is_empty() {
        let lines: Vec<&str> = content.lines().collect();
        message.push_str("\n\n");
        message.push_str(&lines[..lines.len().min(SHOWN_LINES)].join("\n"));
        if lines.len() > SHOWN_LINES {
            message.push_str(&format!("\n… {} more lines", lines.len() - SHOWN_LINES));
        }
    }
    message
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

/// Any other question (a completed task, a plan, a proposal): a free-text reply; an empty
/// one is a plain "yes".
fn free_text(elicit: &Elicit<'_>, kind: &str, text: &str) -> Option<AskReply> {
    let schema = json!({
        "type": "object",
        "properties": {"response": {"type": "string", "title": "Reply"}},
    });
    let (action, content) = elicit(&question(kind, text), schema)?;
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

/// What a free-text question says: Cline's ask type in words
/// ([`crate::known_tools::FREE_TEXT_QUESTIONS`]), what the tool sent below (a plan's text and
/// its suggested replies).
fn question(kind: &str, text: &str) -> String {
    let asked = crate::known_tools::FREE_TEXT_QUESTIONS
        .iter()
        .find(|(ask, _)| *ask == kind)
        .map_or("The tool asks for a reply.", |(_, question)| question);
    let what = if kind == crate::known_tools::PLAN_ASK {
        let plan: Value = serde_json::from_str(text).unwrap_or_else(|_| json!({"response": text}));
        let mut what = plan["response"].as_str().unwrap_or(text).to_string();
        let options: Vec<&str> = plan["options"]
            .as_array()
            .map(|o| o.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if !options.is_empty() {
            what.push_str("\n\nSuggested replies: ");
            what.push_str(&options.join(" | "));
        }
        what
    } else {
        text.to_string()
    };
    if what.trim().is_empty() {
        asked.to_string()
    } else {
        format!("{asked}\n\n{what}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers every form with `action` and `content`, and keeps the message asked.
    fn answering(
        action: ElicitationAction,
        content: Value,
        asked: &std::cell::RefCell<Vec<(String, Value)>>,
    ) -> impl Fn(&str, Value) -> Option<(ElicitationAction, Value)> + '_ {
        move |message, schema| {
            asked.borrow_mut().push((message.to_string(), schema));
            Some((action.clone(), content.clone()))
        }
    }

    #[test]
    fn accepting_an_approval_as_it_comes_approves() {
        let asked = std::cell::RefCell::default();
        let yes = AskReply {
            response: AskResponse::Yes,
            text: None,
        };
        // The form's own default, and a client that sends nothing for the switch.
        for content in [json!({"approve": true}), json!({}), Value::Null] {
            let elicit = answering(ElicitationAction::Accept, content, &asked);
            assert_eq!(ask(&elicit, "tool", "write a.txt"), Some(yes.clone()));
        }
        let (_, schema) = asked.borrow()[0].clone();
        assert_eq!(schema["properties"]["approve"]["default"], true);
        let off = answering(ElicitationAction::Accept, json!({"approve": false}), &asked);
        assert_eq!(
            ask(&off, "tool", "x").map(|r| r.response),
            Some(AskResponse::No)
        );
        let declined = answering(ElicitationAction::Decline, json!({}), &asked);
        assert_eq!(
            ask(&declined, "tool", "x").map(|r| r.response),
            Some(AskResponse::No)
        );
    }

    #[test]
    fn a_file_tools_approval_reads_as_a_question() {
        let asked = std::cell::RefCell::default();
        let elicit = answering(ElicitationAction::Accept, json!({}), &asked);
        let content: String = (1..=25).map(|n| format!("line {n}\n")).collect();
        let edit = json!({"tool": "editedExistingFile", "path": "../b.txt", "content": content,
                          "operationIsLocatedInWorkspace": false});
        ask(&elicit, "tool", &edit.to_string());
        ask(&elicit, "tool", "echo plain text");
        let messages: Vec<String> = asked.borrow().iter().map(|(m, _)| m.clone()).collect();
        let shown: String = (1..=20).map(|n| format!("\nline {n}")).collect();
        assert_eq!(
            messages,
            [
                format!("Edit ../b.txt (outside the workspace)?\n{shown}\n… 5 more lines"),
                "echo plain text".to_string(),
            ]
        );
    }

    #[test]
    fn free_text_questions_read_as_questions() {
        let asked = std::cell::RefCell::default();
        let elicit = answering(ElicitationAction::Accept, json!({}), &asked);
        ask(&elicit, "completion_result", "Fixed the bug in a.rs.");
        ask(
            &elicit,
            "plan_mode_respond",
            r#"{"response": "First read a.rs.", "options": ["Go", "Wait"]}"#,
        );
        let messages: Vec<String> = asked.borrow().iter().map(|(m, _)| m.clone()).collect();
        assert_eq!(
            messages,
            [
                "The model says the task is complete. Leave the reply empty to accept the \
                 result, or tell the model what to change.\n\nFixed the bug in a.rs.",
                "The model's plan (plan mode). Reply to it, or leave the reply empty to let the \
                 model go ahead.\n\nFirst read a.rs.\n\nSuggested replies: Go | Wait",
            ]
        );
    }
}
