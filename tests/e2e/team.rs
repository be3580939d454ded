//! The team tools (Cline's SDK tool set) through `toolhost --tools cline-sdk call`, each call a
//! host of its own, so that the team lives only in its state file, as across a user's calls.
//!
//! The vectors recorded from Cline's SDK (`tests/conformance/sdk_team.jsonl`) replay step by
//! step; their teammate answered every run with "done: " and the text it was given, which is
//! what the scripted model here answers too. Then a teammate at work, as itself, and the
//! attacks: a teammate acting as the lead, a sub-agent reaching for the team, a command
//! rewriting the board, and teammates without the sub-agent gate.

use serde_json::{json, Value};
use toolhost_tests::{run, Case, Home, Run};

use crate::scripted_model::{offered_tools, text_reply, texts_of, tool_call_reply, ScriptedModel};

/// The last user message of a chat completions request.
fn last_user_text(body: &Value) -> String {
    texts_of(body, "user").pop().unwrap_or_default()
}

/// The recorded teammate: "done: " and its task, in one request of one token each way.
fn echo(body: &Value) -> Value {
    let mut reply = text_reply(&format!("done: {}", last_user_text(body)));
    reply["usage"] = json!({"prompt_tokens": 1, "completion_tokens": 1});
    reply
}

/// A user of team "crew" (kept in `base/teams`), with the team plugin and `libraries`.
fn team_user(model: &ScriptedModel, extra: &str, libraries: &[&str]) -> Home {
    let mut all = vec!["team"];
    all.extend(libraries);
    let home = Home::new("", &all);
    let settings = format!(
        "{}\n[team]\nname = \"crew\"\ndir = \"{}\"\n{extra}",
        model.settings(),
        home.base.join("teams").display()
    );
    std::fs::write(&home.settings, settings).unwrap();
    home
}

/// A call as a user at a terminal would make it, but that `--yes` approves what asks.
fn call(home: &Home, tool: &str, params: &Value) -> Run {
    call_with(home, tool, params, &["--yes"])
}

fn call_with(home: &Home, tool: &str, params: &Value, extra: &[&str]) -> Run {
    let cwd = home.ws.display().to_string();
    let params = params.to_string();
    let mut args = vec!["--tools", "cline-sdk", "call"];
    args.extend(extra);
    args.extend([tool, &params, "--cwd", &cwd]);
    run(home.toolhost().args(&args))
}

/// `text` with what differs between runs written as the vectors write it: times `{time}`,
/// the team's id `{teamId}`, run durations 0.
fn normalized(text: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let rest: String = chars[i..chars.len().min(i + 24)].iter().collect();
        if is_time(&rest) {
            out.push_str("{time}");
            i += 24;
        } else if rest.starts_with("t_")
            && rest.len() >= 12
            && rest[2..12]
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            && i > 0
            && chars[i - 1] == '"'
        {
            out.push_str("{teamId}");
            i += 12;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    let mut cut = out.split("\"durationMs\":");
    let mut joined = cut.next().unwrap_or_default().to_string();
    for part in cut {
        let digits = part.chars().take_while(char::is_ascii_digit).count();
        joined.push_str("\"durationMs\":0");
        joined.push_str(&part[digits..]);
    }
    joined
}

/// Whether `s` is a JavaScript ISO time (`2026-12-05T15:00:00.000Z`).
fn is_time(s: &str) -> bool {
    let shape = "dddd-dd-ddTdd:dd:dd.dddZ";
    s.len() == shape.len()
        && s.chars().zip(shape.chars()).all(|(c, p)| match p {
            'd' => c.is_ascii_digit(),
            p => c == p,
        })
}

fn replay(case: &Case) -> Result<(), String> {
    let model = ScriptedModel::start(echo);
    let home = team_user(&model, "", &[]);
    let steps = case.input["steps"].as_array().unwrap();
    let expected = case.expect["steps"].as_array().unwrap();
    for (index, (step, expect)) in steps.iter().zip(expected).enumerate() {
        let tool = step["tool"].as_str().unwrap();
        let ran = call(&home, tool, &step["params"]);
        let ours = normalized(&ran.stdout);
        let at = format!("step {index} ({tool} {})", step["params"]);
        if let Some(output) = expect["output"].as_str() {
            if ours != output || ran.code != 0 {
                return Err(format!("{at}\n  ours:  {ours} {ran:?}\n  Cline: {output}"));
            }
        }
        if let Some(error) = expect["error"].as_str() {
            if !ours.contains(error) || ran.code == 0 {
                return Err(format!("{at}\n  ours:  {ours}\n  Cline: {error}"));
            }
        }
    }
    Ok(())
}

#[test]
fn the_team_tools_answer_as_clines_sdk() {
    crate::sdk_conformance::check_area("sdk_team", replay);
}

/// The working teammate: it claims the task, reads the notes, and answers with both results.
fn worker(body: &Value) -> Value {
    let results = texts_of(body, "tool");
    let task = body["messages"][1]["content"].as_str().unwrap_or_default();
    let calls = match task {
        "claim and read" => vec![
            (
                "team_task",
                json!({"action": "claim", "taskId": "task_0001"}),
            ),
            (
                "read_files",
                json!({"files": [{"path": "notes.txt"}, {"path": "secret.txt"}]}),
            ),
        ],
        "act as the lead" => vec![
            ("team_cleanup", json!({})),
            (
                "team_spawn_teammate",
                json!({"agentId": "eve", "rolePrompt": "r"}),
            ),
        ],
        "await the team" => vec![("team_await_runs", json!({}))],
        "ask bob" => vec![(
            "team_run_task",
            json!({"agentId": "bob", "task": "await the team"}),
        )],
        "cancel my run" => vec![
            (
                "team_cancel_run",
                json!({"runId": "run_00001", "reason": "enough"}),
            ),
            ("read_files", json!({"files": [{"path": "notes.txt"}]})),
        ],
        "write a file" => vec![("editor", json!({"path": "made.txt", "new_text": "made\n"}))],
        other => return text_reply(&format!("no script for {other:?}")),
    };
    match calls.get(results.len()) {
        Some((name, arguments)) => {
            tool_call_reply(&format!("call_{}", results.len()), name, arguments)
        }
        None => text_reply(&format!("The tools said: {}", results.join(" | "))),
    }
}

fn spawn_ana(home: &Home) {
    let spawned = call(
        home,
        "team_spawn_teammate",
        &json!({"agentId": "ana", "rolePrompt": "  You read notes.  "}),
    );
    assert_eq!(
        spawned.stdout, r#"{"agentId":"ana","status":"spawned"}"#,
        "{spawned:?}"
    );
}

fn run_ana(home: &Home, task: &str) -> Value {
    let ran = call(
        home,
        "team_run_task",
        &json!({"agentId": "ana", "task": task}),
    );
    assert_eq!(ran.code, 0, "{ran:?}");
    serde_json::from_str(&ran.stdout).unwrap()
}

#[test]
fn a_teammate_works_on_the_board_and_with_the_host_s_tools_as_itself() {
    let model = ScriptedModel::start(worker);
    let home = team_user(&model, "", &["read_files", "spawn_agent"]);
    std::fs::write(home.ws.join("notes.txt"), "inside\n").unwrap();
    std::fs::write(home.ws.join(".clineignore"), "secret.txt\n").unwrap();
    std::fs::write(home.ws.join("secret.txt"), "ignored-text-51c0\n").unwrap();
    let created = call(
        &home,
        "team_task",
        &json!({"action": "create", "title": "Notes", "description": "Read them"}),
    );
    assert_eq!(created.code, 0, "{created:?}");
    spawn_ana(&home);
    let answer = run_ana(&home, "claim and read");
    let said = answer["text"].as_str().unwrap();
    assert!(
        said.contains("\"status\":\"in_progress\"") && said.contains("inside"),
        "{said}"
    );
    assert!(
        !said.contains("ignored-text-51c0"),
        "a teammate's reads meet .clineignore: {said}"
    );
    assert_eq!(answer["iterations"], 3);

    // The teammate claimed the task as itself.
    let listed = call(&home, "team_task", &json!({"action": "list"}));
    let listed: Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(listed["tasks"][0]["assignee"], "ana", "{listed}");

    // Its system prompt is its role; it is offered the host's tools and the team's, but
    // neither spawning a teammate nor spawn_agent.
    let first = &model.seen()[0];
    assert_eq!(
        first["messages"][0],
        json!({"role": "system", "content": "You read notes."})
    );
    let offered = offered_tools(first);
    assert!(
        offered.contains(&"read_files") && offered.contains(&"team_task"),
        "{offered:?}"
    );
    assert!(
        !offered.contains(&"team_spawn_teammate") && !offered.contains(&"spawn_agent"),
        "{offered:?}"
    );
}

#[test]
fn a_teammate_cannot_act_as_the_lead() {
    let model = ScriptedModel::start(worker);
    let home = team_user(&model, "", &[]);
    spawn_ana(&home);
    let answer = run_ana(&home, "act as the lead");
    let said = answer["text"].as_str().unwrap();
    assert!(
        said.contains("Only the lead agent can run cleanup."),
        "{said}"
    );
    assert!(
        said.contains("Tool 'team_spawn_teammate' is not available."),
        "{said}"
    );
    let status = call(&home, "team_status", &json!({}));
    assert!(
        status.stdout.contains("\"agentId\":\"ana\""),
        "ana is still there: {status:?}"
    );
    assert!(!status.stdout.contains("eve"), "{status:?}");
}

#[test]
fn a_teammate_asks_nobody_in_a_sync_run_or_an_awaited_one() {
    let model = ScriptedModel::start(worker);
    let home = team_user(&model, "", &["editor"]);
    spawn_ana(&home);
    let ran = call_with(
        &home,
        "team_run_task",
        &json!({"agentId": "ana", "task": "write a file"}),
        &[],
    );
    assert!(
        ran.stdout.contains("subagents do not ask the user"),
        "{ran:?}"
    );
    let queued = call_with(
        &home,
        "team_run_task",
        &json!({"agentId": "ana", "task": "write a file", "runMode": "async"}),
        &[],
    );
    assert!(queued.stdout.contains("run_00001"), "{queued:?}");
    let awaited = call_with(&home, "team_await_runs", &json!({}), &[]);
    assert!(
        awaited.stdout.contains("subagents do not ask the user"),
        "{awaited:?}"
    );
    assert!(
        !home.ws.join("made.txt").exists(),
        "a refused edit writes nothing"
    );
}

#[test]
fn a_teammate_awaiting_the_team_from_its_own_run_does_not_wait_for_itself() {
    let model = ScriptedModel::start(worker);
    // Were it to wait for itself, the call would end only at the host's call timeout.
    let home = team_user(&model, "[limits]\ncall_timeout_secs = 20\n", &[]);
    spawn_ana(&home);
    let queued = call(
        &home,
        "team_run_task",
        &json!({"agentId": "ana", "task": "await the team", "runMode": "async"}),
    );
    assert!(queued.stdout.contains("run_00001"), "{queued:?}");
    let awaited = call(&home, "team_await_runs", &json!({"runId": "run_00001"}));
    assert!(
        awaited.stdout.contains("\"status\":\"completed\""),
        "{awaited:?}"
    );
    let said = texts_of(&model.seen()[1], "tool").join(" ");
    assert!(
        said.contains("\"id\":\"run_00001\"") && said.contains("\"status\":\"running\""),
        "{said}"
    );
}

#[test]
fn an_await_inside_work_routed_from_a_run_does_not_wait_for_that_run() {
    let model = ScriptedModel::start(worker);
    // Were bob to wait for ana's run, which waits for bob, only the call timeout would end it.
    let home = team_user(&model, "[limits]\ncall_timeout_secs = 20\n", &[]);
    spawn_ana(&home);
    let bob = call(
        &home,
        "team_spawn_teammate",
        &json!({"agentId": "bob", "rolePrompt": "You wait."}),
    );
    assert_eq!(bob.code, 0, "{bob:?}");
    let queued = call(
        &home,
        "team_run_task",
        &json!({"agentId": "ana", "task": "ask bob", "runMode": "async"}),
    );
    assert!(queued.stdout.contains("run_00001"), "{queued:?}");
    let awaited = call(&home, "team_await_runs", &json!({}));
    assert!(
        awaited.stdout.contains("\"status\":\"completed\""),
        "{awaited:?}"
    );
}

#[test]
fn a_run_cancelled_while_it_runs_stops_before_its_next_step() {
    let model = ScriptedModel::start(worker);
    let home = team_user(&model, "", &["read_files"]);
    std::fs::write(home.ws.join("notes.txt"), "inside\n").unwrap();
    spawn_ana(&home);
    let queued = call(
        &home,
        "team_run_task",
        &json!({"agentId": "ana", "task": "cancel my run", "runMode": "async"}),
    );
    assert!(queued.stdout.contains("run_00001"), "{queued:?}");
    let awaited = call(&home, "team_await_runs", &json!({"runId": "run_00001"}));
    assert!(
        awaited
            .stdout
            .contains("Run \"run_00001\" was cancelled: enough"),
        "{awaited:?}"
    );
    assert_eq!(model.seen().len(), 1, "no request after the cancel");
    let status = call(&home, "team_status", &json!({}));
    assert!(status.stdout.contains("\"status\":\"idle\""), "{status:?}");
}

#[test]
fn a_shut_down_teammate_runs_nothing_until_spawned_again() {
    let model = ScriptedModel::start(echo);
    let home = team_user(&model, "", &[]);
    spawn_ana(&home);
    let stopped = call(
        &home,
        "team_shutdown_teammate",
        &json!({"agentId": "ana", "reason": "done"}),
    );
    assert_eq!(stopped.code, 0, "{stopped:?}");
    let refused = call(
        &home,
        "team_run_task",
        &json!({"agentId": "ana", "task": "More"}),
    );
    assert!(refused.stdout.contains("was shut down"), "{refused:?}");
    assert!(model.seen().is_empty());
    spawn_ana(&home);
    assert_eq!(run_ana(&home, "More")["text"], "done: More");
}

#[test]
fn a_sub_agent_has_no_team_tools() {
    let model = ScriptedModel::start(|body| {
        let asked = body["messages"]
            .as_array()
            .map_or(0, |m| m.iter().filter(|m| m["role"] == "tool").count());
        match asked {
            0 => tool_call_reply("call_0", "team_cleanup", &json!({})),
            _ => text_reply(&texts_of(body, "tool").pop().unwrap_or_default()),
        }
    });
    let home = team_user(&model, "", &["spawn_agent"]);
    let ran = call(
        &home,
        "spawn_agent",
        &json!({"systemPrompt": "p", "task": "clean up"}),
    );
    assert_eq!(ran.code, 0, "{ran:?}");
    assert!(
        ran.stdout.contains("a sub-agent has none"),
        "spawn_agent's sub-agent is refused the team: {ran:?}"
    );
}

#[test]
fn a_sandboxed_command_cannot_rewrite_the_board() {
    let model = ScriptedModel::start(echo);
    let home = team_user(&model, "", &["run_commands"]);
    let created = call(
        &home,
        "team_task",
        &json!({"action": "create", "title": "Keep", "description": "me"}),
    );
    assert_eq!(created.code, 0, "{created:?}");
    let state = home.base.join("teams/crew/state.json");
    let before = std::fs::read_to_string(&state).unwrap();
    let forged = format!(
        "printf '{{}}' > {0} ; printf x > {0}.new ; mv {0}.new {0} ; echo done > inside.txt",
        state.display()
    );
    let ran = call(&home, "run_commands", &json!({"commands": [forged]}));
    assert!(
        home.ws.join("inside.txt").exists(),
        "the command ran: {ran:?}"
    );
    assert_eq!(std::fs::read_to_string(&state).unwrap(), before, "{ran:?}");
    let listed = call(&home, "team_task", &json!({"action": "list"}));
    assert!(listed.stdout.contains("\"title\":\"Keep\""), "{listed:?}");
}

#[test]
fn teammates_need_the_sub_agent_gate() {
    let model = ScriptedModel::start(echo);
    let home = team_user(&model, "", &[]);
    let settings = std::fs::read_to_string(&home.settings)
        .unwrap()
        .replace("enabled = true", "enabled = false");
    std::fs::write(&home.settings, settings).unwrap();
    let refused = call(
        &home,
        "team_spawn_teammate",
        &json!({"agentId": "ana", "rolePrompt": "r"}),
    );
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        refused.stdout.contains("Set subagents.enabled = true"),
        "{refused:?}"
    );
    // The board itself needs no model.
    let created = call(
        &home,
        "team_task",
        &json!({"action": "create", "title": "A", "description": "B"}),
    );
    assert_eq!(created.code, 0, "{created:?}");
    assert!(model.seen().is_empty());
}

#[test]
fn a_run_left_by_a_process_that_is_gone_runs_again_when_awaited() {
    let model = ScriptedModel::start(echo);
    let home = team_user(&model, "", &[]);
    spawn_ana(&home);
    let queued = call(
        &home,
        "team_run_task",
        &json!({"agentId": "ana", "task": "Index the notes", "runMode": "async"}),
    );
    assert!(
        queued.stdout.contains("\"runId\":\"run_00001\""),
        "{queued:?}"
    );
    // A host that started the run and died: its process is gone.
    let state = home.base.join("teams/crew/state.json");
    let mut saved: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    saved["teamState"]["runs"][0]["status"] = json!("running");
    saved["teamState"]["runs"][0]["leaseOwner"] = json!("toolhost-999999999");
    std::fs::write(&state, saved.to_string()).unwrap();
    let awaited = call(&home, "team_await_runs", &json!({"runId": "run_00001"}));
    assert!(
        awaited.stdout.contains("\"status\":\"completed\""),
        "{awaited:?}"
    );
    let told = last_user_text(&model.seen()[0]);
    assert!(
        told.starts_with("This is an automatic recovery of interrupted team run run_00001.")
            && told.ends_with("\n\nIndex the notes"),
        "{told}"
    );
}
