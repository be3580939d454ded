//! spawn_agent (Cline's SDK tool set) through `toolhost --tools cline-sdk call`, against a
//! scripted OpenAI-compatible model endpoint on 127.0.0.1 (tiny_http).
//!
//! The endpoint answers by the task it was given: it asks for one tool call, then answers
//! with a text quoting what the tool returned, which ends the run. The tools are the real SDK
//! plugins, called through the host as a subagent's calls: what they may and may not do is
//! the host's to decide, and what the sub-agent is refused never reaches the model.

use serde_json::{json, Value};

use crate::scripted_model::{offered_tools, text_reply, texts_of, tool_call_reply, ScriptedModel};
use toolhost_tests::{run, Home, Run};

const LIBRARIES: &[&str] = &[
    "spawn_agent",
    "read_files",
    "editor",
    "run_commands",
    "ask_question",
    "read_file",
];

/// The texts of the file outside the workspace and of the `.clineignore`d one.
const OUTSIDE_TEXT: &str = "outside-text-4f1c";
const IGNORED_TEXT: &str = "ignored-text-9b2e";

/// The model's next answer: the task's tool call first, then a text with the tool's result.
fn script(body: &Value, outside: &str) -> Value {
    let task = texts_of(body, "user")
        .into_iter()
        .next()
        .unwrap_or_default();
    let results = texts_of(body, "tool");
    let call = match task.as_str() {
        "read the notes" => ("read_files", json!({"files": [{"path": "notes.txt"}]})),
        "read outside" => (
            "read_files",
            json!({"files": [{"path": outside}, {"path": "secret.txt"}]}),
        ),
        "write a file" => ("editor", json!({"path": "made.txt", "new_text": "made\n"})),
        "run a writing command" => (
            "run_commands",
            json!({"commands": ["echo made > made.txt"]}),
        ),
        "use a legacy tool" => ("read_file", json!({"path": "notes.txt"})),
        "spawn another" => (
            "spawn_agent",
            json!({"systemPrompt": "p", "task": "read the notes"}),
        ),
        "ask the user" => (
            "ask_question",
            json!({"question": "Which one?", "options": ["first", "second"]}),
        ),
        "never stop" => ("read_files", json!({"files": [{"path": "notes.txt"}]})),
        other => return text_reply(&format!("no script for {other:?}")),
    };
    if results.is_empty() || task == "never stop" {
        let (name, arguments) = call;
        return tool_call_reply(&format!("call_{}", results.len()), name, &arguments);
    }
    text_reply(&format!("The tool said: {}", results.join(" | ")))
}

/// A user with a workspace (`notes.txt`, a `.clineignore`d `secret.txt`), a file outside it,
/// the scripted model, and `extra` settings.
fn user(extra: &str) -> (Home, ScriptedModel) {
    // The settings name the model's address, which exists once it runs.
    let home = Home::new("", LIBRARIES);
    let outside = home.base.join("outside.txt").display().to_string();
    let model = ScriptedModel::start(move |body| script(body, &outside));
    let settings = format!("{}\n{extra}", model.settings());
    std::fs::write(&home.settings, settings).unwrap();
    std::fs::write(home.ws.join("notes.txt"), "inside\n").unwrap();
    std::fs::write(home.ws.join(".clineignore"), "secret.txt\n").unwrap();
    std::fs::write(home.ws.join("secret.txt"), IGNORED_TEXT).unwrap();
    std::fs::write(home.base.join("outside.txt"), OUTSIDE_TEXT).unwrap();
    (home, model)
}

fn spawn(home: &Home, set: &str, task: &str, extra_args: &[&str]) -> Run {
    let params = json!({"systemPrompt": "  You check notes.  ", "task": task}).to_string();
    let cwd = home.ws.display().to_string();
    let mut args = vec![
        "--tools",
        set,
        "call",
        "spawn_agent",
        &params,
        "--cwd",
        &cwd,
    ];
    args.extend(extra_args);
    run(home.toolhost().args(&args))
}

/// The sub-agent's output, as the model that spawned it reads it.
fn output(run: &Run) -> Value {
    assert_eq!(run.code, 0, "{run:?}");
    serde_json::from_str(run.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {run:?}"))
}

#[test]
fn a_sub_agent_works_with_the_served_tools_and_answers_with_cline_s_output() {
    let (home, model) = user("");
    let answer = output(&spawn(&home, "cline-sdk", "read the notes", &[]));
    assert_eq!(answer["finishReason"], "completed", "{answer}");
    assert_eq!(answer["iterations"], 2);
    assert_eq!(
        answer["usage"],
        json!({"inputTokens": 200, "outputTokens": 20})
    );
    let said = answer["text"].as_str().unwrap();
    assert!(
        said.starts_with("The tool said: ") && said.contains("inside"),
        "{said}"
    );
    let first = &model.seen()[0];
    // The system prompt is the model's, trimmed; the tools are the ones the host serves.
    assert_eq!(
        first["messages"][0],
        json!({"role": "system", "content": "You check notes."})
    );
    assert_eq!(first["model"], "scripted");
    let offered = offered_tools(first);
    assert_eq!(
        offered,
        ["ask_question", "editor", "read_files", "run_commands"],
        "the act preset's tools, not the legacy read_file beside them, nor spawn_agent"
    );
    // Within what the OpenAI API takes (Cline's run_commands says more).
    for tool in first["tools"].as_array().unwrap() {
        let description = tool["function"]["description"].as_str().unwrap();
        assert!(description.chars().count() <= 1024, "{tool}");
    }
}

#[test]
fn a_sub_agent_starts_no_sub_agent_and_asks_the_user_nothing() {
    let (home, model) = user("");
    let answer = output(&spawn(&home, "cline-sdk", "spawn another", &["--yes"]));
    let said = answer["text"].as_str().unwrap();
    assert!(
        said.contains("Tool 'spawn_agent' is not available."),
        "{said}"
    );
    assert_eq!(model.seen().len(), 2, "no request of a nested sub-agent");

    // Even with --yes, and a question that would otherwise get its first option.
    let answer = output(&spawn(&home, "cline-sdk", "ask the user", &["--yes"]));
    let said = answer["text"].as_str().unwrap();
    assert!(said.contains("subagents do not ask the user"), "{said}");
    assert!(!said.ends_with("first"), "{said}");
}

#[test]
fn a_tool_of_the_other_generation_is_not_available_to_the_sub_agent() {
    let (home, _model) = user("");
    let answer = output(&spawn(&home, "cline-sdk", "use a legacy tool", &[]));
    let said = answer["text"].as_str().unwrap();
    assert!(
        said.contains("Tool 'read_file' is not available."),
        "{said}"
    );
    assert!(!said.contains("inside"), "{said}");
}

#[test]
fn a_sub_agent_reads_nothing_outside_the_workspace_or_clineignored() {
    let (home, model) = user("");
    let answer = output(&spawn(&home, "cline-sdk", "read outside", &[]));
    assert_eq!(answer["finishReason"], "completed", "{answer}");
    // Neither file's text reached the model, whatever it was told instead.
    for request in model.seen() {
        let text = request.to_string();
        assert!(
            !text.contains(OUTSIDE_TEXT),
            "outside the workspace: {text}"
        );
        assert!(!text.contains(IGNORED_TEXT), ".clineignore: {text}");
    }
    let said = answer["text"].as_str().unwrap();
    assert!(said.contains("subagents do not ask the user"), "{said}");
    assert!(
        said.contains("secret.txt is blocked by the .clineignore"),
        "{said}"
    );

    // With --yes the user approved reads outside the workspace; .clineignore still holds.
    let (home, model) = user("");
    output(&spawn(&home, "cline-sdk", "read outside", &["--yes"]));
    let told = model.seen().last().unwrap().to_string();
    assert!(told.contains(OUTSIDE_TEXT), "{told}");
    assert!(!told.contains(IGNORED_TEXT), "{told}");
}

#[test]
fn a_sub_agent_never_asks_the_user_so_an_edit_needs_auto_approval() {
    let (home, _model) = user("");
    let answer = output(&spawn(&home, "cline-sdk", "write a file", &[]));
    let said = answer["text"].as_str().unwrap();
    assert!(said.contains("subagents do not ask the user"), "{said}");
    assert!(
        said.contains("edit_files = true"),
        "the setting that allows it: {said}"
    );
    assert!(
        !home.ws.join("made.txt").exists(),
        "a refused edit writes nothing"
    );

    let (home, _model) = user("[auto_approve]\nedit_files = true\n");
    let answer = output(&spawn(&home, "cline-sdk", "write a file", &[]));
    assert_eq!(answer["finishReason"], "completed", "{answer}");
    assert_eq!(
        std::fs::read_to_string(home.ws.join("made.txt")).unwrap(),
        "made\n"
    );
}

#[test]
fn the_plan_preset_holds_for_the_sub_agent_s_commands() {
    let (home, _model) = user("");
    let answer = output(&spawn(
        &home,
        "cline-sdk:plan",
        "run a writing command",
        &["--yes"],
    ));
    assert_eq!(answer["finishReason"], "completed", "{answer}");
    assert!(!home.ws.join("made.txt").exists(), "{answer}");
}

#[test]
fn the_turn_limit_ends_the_run_as_max_iterations() {
    let (home, model) = user("");
    let answer = output(&spawn(&home, "cline-sdk", "never stop", &[]));
    assert_eq!(answer["finishReason"], "max_iterations", "{answer}");
    assert_eq!(answer["iterations"], 3);
    assert_eq!(model.seen().len(), 3);
}

#[test]
fn off_or_without_an_endpoint_the_tool_says_what_to_set_and_yolo_has_no_spawn_agent() {
    let home = Home::new("", LIBRARIES);
    let cwd = home.ws.display().to_string();
    // What `toolhost call spawn_agent PARAMS` prints, both streams.
    let said = |params: &str| {
        let ran = run(home.toolhost().args([
            "--tools",
            "cline-sdk",
            "call",
            "spawn_agent",
            params,
            "--cwd",
            &cwd,
        ]));
        assert_ne!(ran.code, 0, "{ran:?}");
        format!("{}{}", ran.stdout, ran.stderr)
    };
    let params = json!({"systemPrompt": "p", "task": "t"}).to_string();
    let disabled = said(&params);
    assert!(
        disabled.contains("Set subagents.enabled = true"),
        "sub-agents are off unless enabled: {disabled}"
    );
    std::fs::write(&home.settings, "[subagents]\nenabled = true\n").unwrap();
    let refused = said(&params);
    assert!(
        refused
            .contains("spawn_agent has no LLM endpoint to run subagents against. Set llm.base_url"),
        "{refused}"
    );
    let missing = said(r#"{"task": "t"}"#);
    assert!(
        missing
            .contains("✖ Invalid input: expected string, received undefined\n  → at systemPrompt"),
        "{missing}"
    );
    let yolo = run(home.toolhost().args(["--tools", "cline-sdk:yolo", "tools"]));
    assert_eq!(yolo.code, 0, "{yolo:?}");
    assert!(!yolo.stdout.contains("spawn_agent"), "{yolo:?}");
    let act = run(home.toolhost().args(["--tools", "cline-sdk", "tools"]));
    assert!(act.stdout.contains("spawn_agent"), "{act:?}");
}
