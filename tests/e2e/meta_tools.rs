//! The meta tools through their real plugins: plan_mode_respond, act_mode_respond, new_task,
//! condense, summarize_task, report_bug, generate_explanation, use_skill and focus_chain; and the
//! listing of Cline's 27 tool names over every real plugin.
//!
//! Three ways in: `host.call` with the recording UI (nobody answers), a host whose UI answers
//! with a scripted reply, and, for PLAN MODE and yolo (the host always calls in ACT MODE, not
//! yolo), the handler called through the ABI with a task context of the test's choosing and the
//! host's own services.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tool_api::model::{AskReply, AskResponse, Mode, ToolContent};
use tool_api::texts::{missing_param_error, tool_error, TOOL_DENIED};
use toolhost::Settings;
use toolhost::Ui;
use toolhost::CLINE_TOOL_NAMES;
use toolhost::{ApprovalMode, Workspace};
use toolhost::{CallError, ErrorKind};
use toolhost::{Host, HostConfig};
use toolhost_tests::{real_plugins, tools_json, workdir, PluginDir};

use crate::in_process::{self, Said};

/// The tools this module covers, each its own plugin crate.
const META_TOOLS: [&str; 9] = [
    "plan_mode_respond",
    "act_mode_respond",
    "new_task",
    "condense",
    "summarize_task",
    "report_bug",
    "generate_explanation",
    "use_skill",
    "focus_chain",
];

fn plugins(crates: &[&str]) -> PluginDir {
    let dir = PluginDir::empty();
    for name in crates {
        dir.add_library(name);
    }
    dir
}

fn settings(toml: &str) -> Settings {
    Settings::from_toml(toml).unwrap()
}

/// A UI that records events and questions and answers every question with one reply.
#[derive(Clone)]
struct ScriptedUi {
    said: Arc<Mutex<Vec<Said>>>,
    asked: Arc<Mutex<Vec<(String, String)>>>,
    reply: AskReply,
}

impl ScriptedUi {
    fn of_kind(&self, kind: &str) -> Vec<String> {
        let said = self.said.lock().unwrap();
        said.iter()
            .filter(|s| s.kind == kind && !s.partial)
            .map(|s| s.text.clone())
            .collect()
    }

    fn asked(&self) -> Vec<(String, String)> {
        self.asked.lock().unwrap().clone()
    }
}

impl Ui for ScriptedUi {
    fn say(&self, kind: &str, text: &str, partial: bool) {
        self.said.lock().unwrap().push(Said {
            kind: kind.to_string(),
            text: text.to_string(),
            partial,
        });
    }

    fn ask(&self, kind: &str, text: &str) -> Option<AskReply> {
        self.asked
            .lock()
            .unwrap()
            .push((kind.to_string(), text.to_string()));
        Some(self.reply.clone())
    }
}

fn answering(
    plugins: &Path,
    cwd: &Path,
    settings: Settings,
    reply: AskReply,
) -> (Arc<Host>, ScriptedUi) {
    let ui = ScriptedUi {
        said: Arc::default(),
        asked: Arc::default(),
        reply,
    };
    let host = Host::new(HostConfig {
        plugin_dirs: vec![plugins.to_path_buf()],
        workspace: Workspace::new(cwd).unwrap(),
        settings,
        approval: ApprovalMode::DenyUnlessAuto,
        command_permissions: toolhost::CommandPermissions::from_env(),
        ui: Box::new(ui.clone()),
        task_id: "test-task".to_string(),
        placement: toolhost::Placement {
            default: Some(toolhost::Isolation::InProcess),
            ..toolhost::Placement::default()
        },
    });
    (host, ui)
}

fn yes() -> AskReply {
    AskReply {
        response: AskResponse::Yes,
        text: None,
    }
}

fn no() -> AskReply {
    AskReply {
        response: AskResponse::No,
        text: None,
    }
}

fn message(text: &str) -> AskReply {
    AskReply {
        response: AskResponse::Message,
        text: Some(text.to_string()),
    }
}

/// The mode and interactivity a call runs in.
#[derive(Debug, Clone, Copy)]
struct Context {
    mode: Mode,
    yolo: bool,
}

fn context(_host: &Host, mode: Mode, yolo: bool) -> Context {
    Context { mode, yolo }
}

/// Runs a tool through the host with the task switched to the given mode.
fn call_with(host: &Arc<Host>, name: &str, params: &Value, task: &Context) -> Plain {
    host.task().set_mode(task.mode);
    host.task().set_yolo(task.yolo);
    plain(host.call(name, &params.to_string()).result)
}

/// A result with the error reduced to what the model and the mistake counter see.
type Plain = Result<ToolContent, (ErrorKind, String)>;

fn plain(result: Result<ToolContent, CallError>) -> Plain {
    result.map_err(|e| (e.kind, e.message.to_string()))
}

fn ok(text: impl Into<String>) -> Plain {
    Ok(ToolContent::text(text))
}

fn failed(kind: ErrorKind, message: &str) -> Plain {
    Err((kind, message.to_string()))
}

/// A missing required parameter the host reports: Cline's error, its UI notice, one mistake.
fn assert_missing(tool: &str, params: Value, param: &str) {
    let ws = workdir();
    let dir = plugins(&[tool]);
    let (host, ui) = in_process::host(dir.path(), ws.path());
    let outcome = host.call(tool, &params.to_string());
    assert_eq!(
        outcome.model_text(),
        tool_error(&missing_param_error(param))
    );
    assert_eq!(
        ui.of_kind("error"),
        [format!(
            "Cline tried to use {tool} without value for required parameter '{param}'. Retrying..."
        )]
    );
    assert_eq!(host.task().mistakes(), 1);
}

// ---------------------------------------------------------------------------------------------
// plan_mode_respond

const GO_AHEAD: &str = "[Go ahead and execute.]";

#[test]
fn plan_mode_respond_needs_a_response() {
    assert_missing("plan_mode_respond", json!({"options": "[]"}), "response");
}

#[test]
fn plan_mode_respond_without_a_user() {
    let ws = workdir();
    let dir = plugins(&["plan_mode_respond"]);
    let (host, _ui) = in_process::host(dir.path(), ws.path());
    // ACT MODE (the host's mode): nobody reviews, so the model goes ahead, as in Cline's yolo mode.
    let outcome = host.call("plan_mode_respond", r#"{"response":"The plan."}"#);
    assert_eq!(plain(outcome.result), ok(GO_AHEAD));
    assert_eq!(outcome.description, "[plan_mode_respond]");
    // PLAN MODE: only the host could switch to ACT MODE.
    let plan = context(&host, Mode::Plan, false);
    assert_eq!(
        call_with(&host, "plan_mode_respond", &json!({"response": "The plan."}), &plan),
        failed(
            ErrorKind::Unavailable,
            "No user is available to respond to the plan, and this host cannot switch from PLAN MODE to ACT MODE by itself. Continue with the tools available in PLAN MODE, or present the plan as your final result with attempt_completion."
        )
    );
}

#[test]
fn plan_mode_respond_exploration_and_yolo_need_no_answer() {
    let ws = workdir();
    let dir = plugins(&["plan_mode_respond"]);
    let (host, ui) = answering(
        dir.path(),
        ws.path(),
        Settings::default(),
        message("unused"),
    );
    let more = json!({"response": "Reading more first.", "needs_more_exploration": "true"});
    assert_eq!(
        call_with(&host, "plan_mode_respond", &more, &context(&host, Mode::Plan, false)),
        ok("[You have indicated that you need more exploration. Proceed with calling tools to continue the planning process.]")
    );
    let yolo_act = context(&host, Mode::Act, true);
    assert_eq!(
        call_with(
            &host,
            "plan_mode_respond",
            &json!({"response": "Plan."}),
            &yolo_act
        ),
        ok(GO_AHEAD)
    );
    assert_eq!(ui.asked(), []);
    // Only the exact string "true" counts, as in Cline: "True" asks the user.
    let not_exact = json!({"response": "Plan.", "needs_more_exploration": "True"});
    assert_eq!(
        call_with(
            &host,
            "plan_mode_respond",
            &not_exact,
            &context(&host, Mode::Plan, false)
        ),
        ok("<user_message>\nunused\n</user_message>")
    );
}

#[test]
fn plan_mode_respond_returns_the_users_reply() {
    let ws = workdir();
    let dir = plugins(&["plan_mode_respond"]);
    let (host, ui) = answering(
        dir.path(),
        ws.path(),
        Settings::default(),
        message("Use the second approach."),
    );
    let params = json!({"response": "Two ways: A or B?", "options": "[\"A\", \"B\"]"});
    let plan = context(&host, Mode::Plan, false);
    assert_eq!(
        call_with(&host, "plan_mode_respond", &params, &plan),
        ok("<user_message>\nUse the second approach.\n</user_message>")
    );
    assert_eq!(
        ui.asked(),
        [(
            "plan_mode_respond".to_string(),
            r#"{"response":"Two ways: A or B?","options":["A","B"]}"#.to_string()
        )]
    );
    assert_eq!(ui.of_kind("user_feedback"), ["Use the second approach."]);

    // A picked option is an answer, not feedback.
    let (host, ui) = answering(dir.path(), ws.path(), Settings::default(), message("B"));
    assert_eq!(
        call_with(
            &host,
            "plan_mode_respond",
            &params,
            &context(&host, Mode::Plan, false)
        ),
        ok("<user_message>\nB\n</user_message>")
    );
    assert_eq!(ui.of_kind("user_feedback"), Vec::<String>::new());

    // Toggling to ACT MODE answers with Cline's marker.
    let (host, _ui) = answering(
        dir.path(),
        ws.path(),
        Settings::default(),
        message("PLAN_MODE_TOGGLE_RESPONSE"),
    );
    assert_eq!(
        call_with(
            &host,
            "plan_mode_respond",
            &params,
            &context(&host, Mode::Plan, false)
        ),
        ok("[The user has switched to ACT MODE, so you may now proceed with the task.]")
    );
}

#[test]
fn plan_mode_respond_streams_its_question() {
    let ws = workdir();
    let dir = plugins(&["plan_mode_respond"]);
    let (host, ui) = in_process::host(dir.path(), ws.path());
    let params = json!({"response": "Draft", "options": "[\"A\", \"B"});
    host.call_partial("plan_mode_respond", params.as_object().unwrap());
    assert_eq!(
        *ui.said.lock().unwrap(),
        [Said {
            kind: "plan_mode_respond".into(),
            text: r#"{"response":"Draft","options":["A","B"]}"#.into(),
            partial: true
        }]
    );
}

// ---------------------------------------------------------------------------------------------
// act_mode_respond

const DISPLAYED: &str = "[Message displayed. Now proceed with your next tool call - it must be a different tool (read_file, replace_in_file, execute_command, etc.), not act_mode_respond again.]";

#[test]
fn act_mode_respond_needs_a_response() {
    assert_missing("act_mode_respond", json!({}), "response");
}

#[test]
fn act_mode_respond_shows_the_message_in_act_mode_only() {
    let ws = workdir();
    let dir = plugins(&["act_mode_respond"]);
    let (host, ui) = in_process::host(dir.path(), ws.path());
    let outcome = host.call(
        "act_mode_respond",
        r#"{"response":"Tests pass; now the docs."}"#,
    );
    assert_eq!(plain(outcome.result), ok(DISPLAYED));
    assert_eq!(ui.of_kind("text"), ["Tests pass; now the docs."]);

    let plan = context(&host, Mode::Plan, false);
    assert_eq!(
        call_with(&host, "act_mode_respond", &json!({"response": "x"}), &plan),
        failed(
            ErrorKind::Failed,
            "The act_mode_respond tool is only available in ACT MODE. You are currently in PLAN MODE. Please use the appropriate tool for your current mode."
        )
    );
    assert!(ErrorKind::Failed.is_mistake());
    assert_eq!(ui.of_kind("text").len(), 1, "nothing shown in PLAN MODE");

    host.call_partial(
        "act_mode_respond",
        json!({"response": "Tests pa"}).as_object().unwrap(),
    );
    assert_eq!(
        ui.said.lock().unwrap().last(),
        Some(&Said {
            kind: "text".into(),
            text: "Tests pa".into(),
            partial: true
        })
    );
}

#[test]
fn act_mode_respond_passes_task_progress_to_focus_chain() {
    let ws = workdir();
    let lists = workdir();
    let dir = plugins(&["act_mode_respond", "focus_chain"]);
    let toml = format!("[focus_chain]\ndir = {:?}\n", lists.path());
    let (host, ui) = in_process::host_with(dir.path(), ws.path(), settings(&toml));
    let params = json!({"response": "Step one done.", "task_progress": "- [x] one\n- [ ] two"});
    let outcome = host.call("act_mode_respond", &params.to_string());
    assert_eq!(plain(outcome.result), ok(DISPLAYED));
    assert_eq!(ui.of_kind("task_progress"), ["- [x] one\n- [ ] two"]);
    assert!(lists
        .path()
        .join(format!("focus_chain_taskid_{}.md", host.task_id()))
        .is_file());
}

// ---------------------------------------------------------------------------------------------
// new_task

#[test]
fn new_task_needs_context() {
    assert_missing("new_task", json!({"context": ""}), "context");
}

#[test]
fn new_task_without_a_user_creates_nothing() {
    let ws = workdir();
    let dir = plugins(&["new_task"]);
    let (host, _ui) = in_process::host(dir.path(), ws.path());
    let outcome = host.call("new_task", r#"{"context":"Carry on with the parser."}"#);
    assert_eq!(outcome.description, "[new_task for creating a new task]");
    assert_eq!(
        plain(outcome.result),
        failed(
            ErrorKind::Unavailable,
            "No user is available to start a new task in this non-interactive session, so no new task was created. Continue with the current task."
        )
    );
    assert_eq!(host.task().mistakes(), 0);
}

#[test]
fn new_task_answers() {
    let ws = workdir();
    let dir = plugins(&["new_task"]);
    let params = r#"{"context":"Carry on with the parser."}"#;
    let (host, ui) = answering(dir.path(), ws.path(), Settings::default(), yes());
    assert_eq!(
        host.call("new_task", params).model_text(),
        "The user has created a new task with the provided context."
    );
    assert_eq!(
        ui.asked(),
        [(
            "new_task".to_string(),
            "Carry on with the parser.".to_string()
        )]
    );

    let (host, ui) = answering(
        dir.path(),
        ws.path(),
        Settings::default(),
        message("Not yet."),
    );
    assert_eq!(
        host.call("new_task", params).model_text(),
        "The user provided feedback instead of creating a new task:\n<feedback>\nNot yet.\n</feedback>"
    );
    assert_eq!(ui.of_kind("user_feedback"), ["Not yet."]);

    let (host, _ui) = answering(dir.path(), ws.path(), Settings::default(), no());
    assert_eq!(host.call("new_task", params).model_text(), TOOL_DENIED);

    let (host, ui) = in_process::host(dir.path(), ws.path());
    host.call_partial(
        "new_task",
        json!({"context": "Carry on"}).as_object().unwrap(),
    );
    assert_eq!(
        *ui.said.lock().unwrap(),
        [Said {
            kind: "new_task".into(),
            text: "Carry on".into(),
            partial: true
        }]
    );
}

// ---------------------------------------------------------------------------------------------
// condense

const CONDENSED: &str = "The user has accepted the condensed conversation summary you generated. This summary covers important details of the historical conversation with the user which has been truncated.\n<explicit_instructions type=\"condense_response\">It's crucial that you respond by ONLY asking the user what you should work on next. You should NOT take any initiative or make any assumptions about continuing with work. For example you should NOT suggest file changes or attempt to read any files.\nWhen asking the user what you should work on next, you can reference information in the summary which was just generated. However, you should NOT reference information outside of what's contained in the summary for this response. Keep this response CONCISE.</explicit_instructions>";

#[test]
fn condense_reports_a_missing_context_in_clines_words() {
    let ws = workdir();
    let dir = plugins(&["condense"]);
    let (host, ui) = in_process::host(dir.path(), ws.path());
    for params in [json!({}), json!({"context": ""})] {
        let outcome = host.call("condense", &params.to_string());
        assert_eq!(
            plain(outcome.result),
            ok("Missing required parameter: context")
        );
    }
    assert_eq!(ui.of_kind("error"), Vec::<String>::new());
}

#[test]
fn condense_needs_no_llm_but_a_user() {
    let ws = workdir();
    let dir = plugins(&["condense"]);
    let params = r#"{"context":"We fixed the parser; the docs are left."}"#;
    let (host, _ui) = in_process::host(dir.path(), ws.path());
    assert_eq!(
        plain(host.call("condense", params).result),
        failed(
            ErrorKind::Unavailable,
            "No user is available to accept the summary in this non-interactive session, so the conversation was not condensed. Continue with the task."
        )
    );

    let (host, ui) = answering(dir.path(), ws.path(), Settings::default(), yes());
    assert_eq!(host.call("condense", params).model_text(), CONDENSED);
    assert_eq!(
        ui.asked(),
        [(
            "condense".to_string(),
            "We fixed the parser; the docs are left.".to_string()
        )]
    );

    let (host, ui) = answering(
        dir.path(),
        ws.path(),
        Settings::default(),
        message("Mention the tests."),
    );
    assert_eq!(
        host.call("condense", params).model_text(),
        "The user provided feedback on the condensed conversation summary:\n<feedback>\nMention the tests.\n</feedback>"
    );
    assert_eq!(ui.of_kind("user_feedback"), ["Mention the tests."]);

    let (host, _ui) = answering(dir.path(), ws.path(), Settings::default(), no());
    assert_eq!(host.call("condense", params).model_text(), TOOL_DENIED);
}

// ---------------------------------------------------------------------------------------------
// summarize_task

fn continuation(summary: &str) -> String {
    format!("\nThis session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\n{summary}.\n\nPlease continue the conversation from where we left it off without asking the user any further questions. Continue with the last task that you were asked to work on. Pay special attention to the most recent user message when responding rather than the initial task message, if applicable.\nIf the most recent user's message starts with \"/newtask\", \"/smol\", \"/compact\", \"/newrule\", or \"/reportbug\", you should indicate to the user that they will need to run this command again.\n")
}

#[test]
fn summarize_task_needs_context() {
    assert_missing("summarize_task", json!({}), "context");
}

#[test]
fn summarize_task_continues_from_the_summary_without_an_llm() {
    let ws = workdir();
    let dir = plugins(&["summarize_task"]);
    let (host, ui) = in_process::host(dir.path(), ws.path());
    let summary = "1. Primary Request and Intent:\n   Fix the parser.";
    let outcome = host.call("summarize_task", &json!({"context": summary}).to_string());
    assert_eq!(outcome.description, "[summarize_task]");
    assert_eq!(plain(outcome.result), ok(continuation(summary)));
    assert_eq!(
        ui.of_kind("tool"),
        [json!({"tool": "summarizeTask", "content": summary}).to_string()]
    );
}

#[test]
fn summarize_task_attaches_the_required_files_it_may_read() {
    let ws = workdir();
    let outside = workdir();
    std::fs::write(ws.path().join("a.txt"), "alpha").unwrap();
    std::fs::create_dir(ws.path().join("sub")).unwrap();
    std::fs::write(ws.path().join("sub/b.txt"), "beta\n").unwrap();
    std::fs::write(ws.path().join("secret.txt"), "hidden").unwrap();
    std::fs::write(ws.path().join(".clineignore"), "secret.txt\n").unwrap();
    std::fs::write(
        ws.path().join("image.png"),
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
    )
    .unwrap();
    let far = outside.path().join("far.txt");
    std::fs::write(&far, "far away").unwrap();
    let summary = format!(
        "1. Primary Request and Intent:\n   Fix it.\n9. Required Files:\n  - a.txt\n  - A.TXT\n  - secret.txt\n  - image.png\n  - {}\n  - missing.txt\n  - sub/b.txt\n",
        far.display()
    );
    let dir = plugins(&["summarize_task"]);
    let (host, _ui) = in_process::host(dir.path(), ws.path());
    let outcome = host.call("summarize_task", &json!({"context": summary}).to_string());
    let attached = "\n\nThe following files were automatically read based on the files listed in the Required Files section: 'a.txt', 'sub/b.txt' (see below for file content). These are the latest versions of these files - you should reference them directly and not re-read them:\n\n<file_content path=\"a.txt\">\nalpha\n</file_content>\n\n<file_content path=\"sub/b.txt\">\nbeta\n\n</file_content>";
    assert_eq!(plain(outcome.result), ok(continuation(&summary) + attached));

    // Reading outside the workspace when the settings allow it; none at all when reads need asking.
    let (host, _ui) = in_process::host_with(
        dir.path(),
        ws.path(),
        settings("[auto_approve]\nread_files_externally = true\n"),
    );
    let text = host
        .call("summarize_task", &json!({"context": summary}).to_string())
        .model_text();
    assert!(
        text.contains(&format!("'a.txt', '{}', 'sub/b.txt'", far.display())),
        "{text}"
    );
    let (host, _ui) = in_process::host_with(
        dir.path(),
        ws.path(),
        settings("[auto_approve]\nread_files = false\n"),
    );
    assert_eq!(
        plain(
            host.call("summarize_task", &json!({"context": summary}).to_string())
                .result
        ),
        ok(continuation(&summary))
    );
}

// ---------------------------------------------------------------------------------------------
// report_bug

fn bug() -> Value {
    json!({
        "title": "Edits fail on CRLF files",
        "what_happened": "replace_in_file reported no match.",
        "steps_to_reproduce": "1. Open a CRLF file\n2. Edit it",
        "api_request_output": "N/A",
        "additional_context": "Windows line endings & a BOM",
    })
}

#[test]
fn report_bug_reports_each_missing_field_in_clines_words() {
    let ws = workdir();
    let dir = plugins(&["report_bug"]);
    let (host, _ui) = in_process::host(dir.path(), ws.path());
    let fields = [
        "title",
        "what_happened",
        "steps_to_reproduce",
        "api_request_output",
        "additional_context",
    ];
    for field in fields {
        let mut params = bug();
        params[field] = json!("");
        assert_eq!(
            plain(host.call("report_bug", &params.to_string()).result),
            ok(format!("Missing required parameter: {field}"))
        );
    }
    assert_eq!(
        host.call("report_bug", "{}").model_text(),
        "Missing required parameter: title"
    );
}

#[test]
fn report_bug_without_a_user_files_nothing() {
    let ws = workdir();
    let dir = plugins(&["report_bug"]);
    let (host, ui) = in_process::host(dir.path(), ws.path());
    assert_eq!(
        plain(host.call("report_bug", &bug().to_string()).result),
        failed(
            ErrorKind::Unavailable,
            "No user is available to review and submit the bug report in this non-interactive session, so no issue was created."
        )
    );
    assert_eq!(ui.of_kind("info"), Vec::<String>::new());
}

#[test]
fn report_bug_answers() {
    let ws = workdir();
    let dir = plugins(&["report_bug"]);
    let (host, ui) = answering(dir.path(), ws.path(), Settings::default(), yes());
    assert_eq!(
        host.call("report_bug", &bug().to_string()).model_text(),
        "The user accepted the creation of the Github issue."
    );
    let asked = ui.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].0, "report_bug");
    let draft: Value = serde_json::from_str(&asked[0].1).unwrap();
    let keys: Vec<&str> = draft
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "title",
            "what_happened",
            "steps_to_reproduce",
            "api_request_output",
            "additional_context",
            "provider_and_model",
            "operating_system",
            "system_info",
            "cline_version"
        ]
    );
    assert_eq!(draft["title"], bug()["title"]);
    assert_eq!(draft["provider_and_model"], "unknown / unknown");
    let info = ui.of_kind("info");
    assert_eq!(info.len(), 1);
    assert!(
        info[0].starts_with(
            "File the bug report here: https://github.com/cline/cline/issues/new?title=Edits+fail+on+CRLF+files&operating-system="
        ),
        "{info:?}"
    );
    assert!(
        info[0].ends_with("&logs=N%2FA&template=bug_report.yml"),
        "{info:?}"
    );

    let (host, ui) = answering(
        dir.path(),
        ws.path(),
        settings("[report_bug]\nrepository = \"acme/agent\"\n[llm]\nprovider = \"openai\"\nmodel = \"m1\"\n"),
        yes(),
    );
    host.call("report_bug", &bug().to_string());
    assert!(ui.of_kind("info")[0]
        .starts_with("File the bug report here: https://github.com/acme/agent/issues/new?"));
    let draft: Value = serde_json::from_str(&ui.asked()[0].1).unwrap();
    assert_eq!(draft["provider_and_model"], "openai / m1");

    let (host, ui) = answering(
        dir.path(),
        ws.path(),
        Settings::default(),
        message("Add the file name."),
    );
    assert_eq!(
        host.call("report_bug", &bug().to_string()).model_text(),
        "The user did not submit the bug, and provided feedback on the Github issue generated instead:\n<feedback>\nAdd the file name.\n</feedback>"
    );
    assert_eq!(ui.of_kind("user_feedback"), ["Add the file name."]);
    assert_eq!(ui.of_kind("info"), Vec::<String>::new());

    let (host, _ui) = answering(dir.path(), ws.path(), Settings::default(), no());
    assert_eq!(
        host.call("report_bug", &bug().to_string()).model_text(),
        TOOL_DENIED
    );
}

// ---------------------------------------------------------------------------------------------
// generate_explanation

const LLM: &str = "[llm]\nbase_url = \"http://127.0.0.1:9\"\nmodel = \"m\"\napi_key_env = \"TOOLHOST_TEST_KEY\"\n";

fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn generate_explanation_needs_title_and_from_ref() {
    assert_missing("generate_explanation", json!({"from_ref": "HEAD"}), "title");
    assert_missing("generate_explanation", json!({"title": "t"}), "from_ref");
}

#[test]
fn generate_explanation_without_an_llm_says_what_to_configure() {
    let ws = workdir();
    let dir = plugins(&["generate_explanation"]);
    let (host, ui) = in_process::host(dir.path(), ws.path());
    let outcome = host.call(
        "generate_explanation",
        r#"{"title":"Parser fix","from_ref":"HEAD~1"}"#,
    );
    assert_eq!(
        outcome.description,
        "[generate_explanation for 'Parser fix']"
    );
    let not_configured = "API configuration not available: no LLM endpoint is configured. generate_explanation needs a model to write the explanations. Add an [llm] section to the toolhost settings file with base_url (the API endpoint), model (the model id) and api_key_env (the name of the environment variable that holds the API key).";
    assert_eq!(
        plain(outcome.result),
        failed(ErrorKind::Unavailable, not_configured)
    );
    assert_eq!(
        *ui.said.lock().unwrap(),
        [
            Said {
                kind: "generate_explanation".into(),
                text: r#"{"title":"Parser fix","fromRef":"HEAD~1","toRef":"working directory","status":"generating"}"#.into(),
                partial: true
            },
            Said {
                kind: "generate_explanation".into(),
                text: json!({"title": "Parser fix", "fromRef": "HEAD~1", "toRef": "working directory", "status": "error", "error": not_configured}).to_string(),
                partial: false
            }
        ]
    );
    assert_eq!(host.task().mistakes(), 0);

    let (host, _ui) =
        in_process::host_with(dir.path(), ws.path(), settings("[llm]\nmodel = \"m\"\n"));
    assert_eq!(
        plain(host.call("generate_explanation", r#"{"title":"t","from_ref":"HEAD"}"#).result),
        failed(
            ErrorKind::Unavailable,
            "The [llm] section of the toolhost settings is incomplete: base_url, api_key_env missing. generate_explanation needs an LLM endpoint: set base_url (the API endpoint), model (the model id) and api_key_env (the name of the environment variable that holds the API key)."
        )
    );
    let (host, _ui) = in_process::host(dir.path(), ws.path());
    assert_eq!(
        host.describe(
            "generate_explanation",
            json!({"from_ref": "HEAD"}).as_object().unwrap()
        ),
        "[generate_explanation for 'code changes']"
    );
}

#[test]
fn generate_explanation_checks_the_repository_and_the_changes() {
    let ws = workdir();
    let dir = plugins(&["generate_explanation"]);
    let call = |params: Value| {
        let (host, _ui) = in_process::host_with(dir.path(), ws.path(), settings(LLM));
        plain(
            host.call("generate_explanation", &params.to_string())
                .result,
        )
    };
    let (host, _ui) = in_process::host(dir.path(), ws.path());
    let cwd = host.workspace().cwd().display().to_string();
    assert_eq!(
        call(json!({"title": "t", "from_ref": "HEAD"})),
        failed(
            ErrorKind::Unavailable,
            &format!("The current directory ({cwd}) is not a git repository. This tool requires git to compare changes.")
        )
    );

    git(ws.path(), &["init", "-q"]);
    std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
    git(ws.path(), &["add", "."]);
    git(ws.path(), &["commit", "-q", "-m", "one"]);
    assert_eq!(
        call(json!({"title": "t", "from_ref": "nope"})),
        failed(ErrorKind::Failed, "Invalid git reference 'nope'. Please provide a valid commit hash, branch name, tag, or relative reference (e.g., HEAD~1).")
    );
    assert_eq!(
        call(json!({"title": "t", "from_ref": "HEAD", "to_ref": "--output=x"})),
        failed(ErrorKind::Failed, "Invalid git reference '--output=x'. Please provide a valid commit hash, branch name, tag, or relative reference.")
    );
    assert_eq!(
        call(json!({"title": "t", "from_ref": "HEAD"})),
        ok("No changes found between 'HEAD' and 'working directory'.")
    );

    std::fs::write(ws.path().join("a.txt"), "two\n").unwrap();
    git(ws.path(), &["commit", "-q", "-am", "two"]);
    assert_eq!(
        call(json!({"title": "t", "from_ref": "HEAD~1", "to_ref": "HEAD"})),
        failed(
            ErrorKind::Unavailable,
            "Found 1 changed file between 'HEAD~1' and 'HEAD', but this toolhost has no LLM client yet to write the explanations with the configured model 'm' at http://127.0.0.1:9."
        )
    );

    std::fs::write(ws.path().join("blob.bin"), b"\0\x01\x02binary\0").unwrap();
    git(ws.path(), &["add", "."]);
    git(ws.path(), &["commit", "-q", "-m", "three"]);
    assert_eq!(
        call(json!({"title": "t", "from_ref": "HEAD~1", "to_ref": "HEAD"})),
        ok("All changed files between 'HEAD~1' and 'HEAD' are binary files that cannot be displayed.")
    );
}

// ---------------------------------------------------------------------------------------------
// use_skill

fn write_skill(root: &Path, dir: &str, front_name: &str, body: &str) {
    let skill = root.join(dir);
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        format!(
            "---\nname: {front_name}\ndescription: \"What it is: a test skill\"\n---\n\n{body}\n"
        ),
    )
    .unwrap();
}

fn skills_settings(global: &Path, extra: &str) -> Settings {
    settings(&format!("[skills]\nglobal_dirs = [{:?}]\n{extra}", global))
}

const SKILL_LOADED: &str = "IMPORTANT: The skill is now loaded. Do NOT call use_skill again for this task. Simply follow the instructions above to complete the user's request. You may access other files in the skill directory at: ";

#[test]
fn use_skill_without_a_name_or_without_skills() {
    let ws = workdir();
    let global = workdir();
    let dir = plugins(&["use_skill"]);
    let (host, _ui) =
        in_process::host_with(dir.path(), ws.path(), skills_settings(global.path(), ""));
    let outcome = host.call("use_skill", "{}");
    assert_eq!(outcome.description, "[use_skill]");
    assert_eq!(
        plain(outcome.result),
        ok("Error: Missing required parameter 'skill_name'. Please provide the name of the skill to activate.")
    );
    let outcome = host.call("use_skill", r#"{"skill_name":"deploy"}"#);
    assert_eq!(outcome.description, "[use_skill for \"deploy\"]");
    assert_eq!(
        plain(outcome.result),
        ok("Error: No skills are available. Skills may be disabled or not configured.")
    );
}

#[test]
fn use_skill_loads_skills_from_the_project_and_global_directories() {
    let ws = workdir();
    let global = workdir();
    let cwd = ws.path();
    write_skill(cwd, ".cline/skills/deploy", "deploy", "# Project deploy");
    write_skill(
        cwd,
        ".claude/skills/review",
        "review",
        "# Review\nLook closely.",
    );
    write_skill(cwd, ".agents/skills/wrong", "other", "# Misnamed");
    write_skill(global.path(), "deploy", "deploy", "# Global deploy");
    let dir = plugins(&["use_skill"]);
    let (host, ui) = in_process::host_with(dir.path(), cwd, skills_settings(global.path(), ""));
    let root = host.workspace().cwd().display().to_string();

    let outcome = host.call("use_skill", r#"{"skill_name":"review"}"#);
    assert_eq!(
        plain(outcome.result),
        ok(format!(
            "# Skill \"review\" is now active\n\n# Review\nLook closely.\n\n---\n{SKILL_LOADED}{root}/.claude/skills/review/"
        ))
    );
    assert_eq!(
        ui.of_kind("tool"),
        [r#"{"tool":"useSkill","path":"review"}"#]
    );

    // A global skill wins over a project skill of the same name.
    assert_eq!(
        plain(host.call("use_skill", r#"{"skill_name":"deploy"}"#).result),
        ok(format!(
            "# Skill \"deploy\" is now active\n\n# Global deploy\n\n---\n{SKILL_LOADED}{}/deploy/",
            global.path().display()
        ))
    );
    assert_eq!(
        plain(host.call("use_skill", r#"{"skill_name":"other"}"#).result),
        ok("Error: Skill \"other\" not found. Available skills: review, deploy")
    );

    let (host, _ui) = in_process::host_with(
        dir.path(),
        cwd,
        skills_settings(global.path(), "disabled = [\"review\"]\n"),
    );
    assert_eq!(
        plain(host.call("use_skill", r#"{"skill_name":"review"}"#).result),
        ok("Error: Skill \"review\" not found. Available skills: deploy")
    );
}

// ---------------------------------------------------------------------------------------------
// focus_chain

#[test]
fn focus_chain_keeps_the_task_progress_list() {
    let ws = workdir();
    let lists = workdir();
    let dir = plugins(&["focus_chain"]);
    let toml = format!("[focus_chain]\ndir = {:?}\n", lists.path());
    let (host, ui) = in_process::host_with(dir.path(), ws.path(), settings(&toml));
    assert_eq!(
        plain(host.call("focus_chain", "{}").result),
        ok("No task progress list exists for this task yet. Call focus_chain with task_progress set to a markdown checklist (\"- [ ] step\" / \"- [x] step\", one per line) to create one.")
    );

    let params = json!({"task_progress": "\n- [x] Read the parser\n- [ ] Fix it\n- [ ] Test it\n"});
    assert_eq!(
        plain(host.call("focus_chain", &params.to_string()).result),
        ok("Task progress list updated: 1 of 3 items completed.")
    );
    let task = host.task_id();
    let file = lists.path().join(format!("focus_chain_taskid_{task}.md"));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        format!("# Focus Chain List for Task {task}\n\n<!-- Edit this markdown file to update your focus chain list -->\n<!-- Use the format: - [ ] for incomplete items and - [x] for completed items -->\n\n- [x] Read the parser\n- [ ] Fix it\n- [ ] Test it\n\n<!-- Save this file and the focus chain list will be updated in the task -->")
    );
    assert_eq!(
        ui.of_kind("task_progress"),
        ["- [x] Read the parser\n- [ ] Fix it\n- [ ] Test it"]
    );

    // The user edits the file; reading the list back picks the edit up.
    let edited = std::fs::read_to_string(&file)
        .unwrap()
        .replace("- [ ] Fix it", "- [x] Fix it");
    std::fs::write(&file, edited).unwrap();
    assert_eq!(
        plain(host.call("focus_chain", "{}").result),
        ok("Current task progress (2 of 3 items completed):\n- [x] Read the parser\n- [x] Fix it\n- [ ] Test it")
    );

    let (host, _ui) = in_process::host_with(
        dir.path(),
        ws.path(),
        settings("[focus_chain]\nenabled = false\n"),
    );
    assert_eq!(
        plain(host.call("focus_chain", &params.to_string()).result),
        failed(
            ErrorKind::Unavailable,
            "The focus chain is turned off in the settings (focus_chain.enabled = false)."
        )
    );
}

// ---------------------------------------------------------------------------------------------
// The 27 names

fn listed_names(plugins: &Path) -> BTreeSet<String> {
    tools_json(plugins)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_cline_name_a_plugin_provides_is_listed() {
    let listed = listed_names(PluginDir::real().path());
    let missing: Vec<&str> = CLINE_TOOL_NAMES
        .iter()
        .copied()
        .filter(|n| !listed.contains(*n))
        .collect();
    for name in META_TOOLS {
        assert!(
            listed.contains(name),
            "{name} is not listed; Cline names not listed: {missing:?}"
        );
    }
    // What each plugin provides on its own must also be there when all are loaded together.
    let mut provided = BTreeSet::new();
    for crate_name in real_plugins() {
        provided.extend(listed_names(plugins(&[&crate_name]).path()));
    }
    for name in CLINE_TOOL_NAMES {
        if provided.contains(name) {
            assert!(listed.contains(name), "{name} is provided but not listed");
        }
    }
    // Names no plugin provides yet (web, browser, MCP, subagents, ...) are reported, not failed.
    let unprovided: Vec<&str> = CLINE_TOOL_NAMES
        .iter()
        .copied()
        .filter(|n| !provided.contains(*n))
        .collect();
    assert_eq!(
        missing, unprovided,
        "Cline names still missing from the plugins: {unprovided:?}"
    );
    if !missing.is_empty() {
        eprintln!("Cline tool names no plugin provides yet: {missing:?}");
    }
}
