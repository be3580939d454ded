//! Cline's two tool generations served by one host: `cline-legacy` (the default) and
//! `cline-sdk` (with its `act` and `plan` presets), chosen with `--tools` or `[tools] set`.
//! The security promises are one suite run against both: each generation's way to read and
//! to write a file meets the same `.clineignore`, workspace boundary, symlink and approval
//! checks, and a refused write leaves the file as it was.

use serde_json::{json, Value};
use toolhost_tests::{run, Home, Run};

/// One generation's reading, writing and command tools.
struct Generation {
    /// The `--tools` value.
    set: &'static str,
    /// What its settings say besides (the model, which routes `cline-sdk` between tools).
    settings: &'static str,
    /// The tool and parameters that read `path`.
    read: fn(&str) -> (&'static str, Value),
    /// The tool and parameters that create `path` with `text`.
    write: fn(&str, &str) -> (&'static str, Value),
    /// The tool and parameters that run a shell command line.
    command: fn(&str) -> (&'static str, Value),
    /// The tool and parameters that search the workspace for a regex.
    search: fn(&str) -> (&'static str, Value),
}

const LEGACY: Generation = Generation {
    set: "cline-legacy",
    settings: "",
    read: |path| ("read_file", json!({ "path": path })),
    write: |path, text| ("write_to_file", json!({ "path": path, "content": text })),
    command: |line| {
        let params = json!({ "command": line, "requires_approval": false });
        ("execute_command", params)
    },
    search: |regex| ("search_files", json!({ "path": ".", "regex": regex })),
};

const SDK: Generation = Generation {
    set: "cline-sdk",
    settings: "",
    read: |path| ("read_files", json!({ "files": [{ "path": path }] })),
    write: |path, text| ("editor", json!({ "path": path, "new_text": text })),
    command: |line| ("run_commands", json!({ "commands": [line] })),
    search: |regex| ("search_codebase", json!({ "queries": [regex] })),
};

/// `cline-sdk` for a GPT or Codex model: Cline's routing serves apply_patch instead of editor.
const SDK_FOR_GPT: Generation = Generation {
    set: "cline-sdk",
    settings: "[model]\nid = \"gpt-5-codex\"\n",
    write: |path, text| {
        let patch = format!("*** Begin Patch\n*** Add File: {path}\n+{text}\n*** End Patch");
        ("apply_patch", json!({ "input": patch }))
    },
    ..SDK
};

/// Every generation, for the promises they all keep.
const GENERATIONS: [&Generation; 3] = [&LEGACY, &SDK, &SDK_FOR_GPT];

const LIBRARIES: &[&str] = &[
    "read_file",
    "write_to_file",
    "execute_command",
    "search_files",
    "read_files",
    "editor",
    "sdk_apply_patch",
    "run_commands",
    "search_codebase",
    "ask_question",
    "submit_and_exit",
];

fn user(settings: &str) -> Home {
    let home = Home::new(settings, LIBRARIES);
    std::fs::write(home.ws.join("notes.txt"), "inside\n").unwrap();
    std::fs::write(home.ws.join(".clineignore"), "secret.txt\n").unwrap();
    std::fs::write(home.ws.join("secret.txt"), "hidden\n").unwrap();
    std::fs::write(home.base.join("outside.txt"), "beyond\n").unwrap();
    std::os::unix::fs::symlink(home.base.join("outside.txt"), home.ws.join("link.txt")).unwrap();
    home
}

/// [`user`] with what `generation` adds to the settings.
fn user_of(generation: &Generation, settings: &str) -> Home {
    user(&format!("{}{settings}", generation.settings))
}

fn call(home: &Home, generation: &Generation, request: (&str, Value), yes: bool) -> Run {
    call_with(home.toolhost(), home, generation, request, yes)
}

/// [`call`] made by `toolhost` (a `home.toolhost()` with more set on it).
fn call_with(
    mut toolhost: std::process::Command,
    home: &Home,
    generation: &Generation,
    (tool, params): (&str, Value),
    yes: bool,
) -> Run {
    let cwd = home.ws.display().to_string();
    let mut args = vec!["--tools", generation.set, "call", tool];
    let params = params.to_string();
    args.push(&params);
    args.extend(["--cwd", &cwd]);
    if yes {
        args.push("--yes");
    }
    run(toolhost.args(&args))
}

#[test]
fn each_set_serves_its_own_tools() {
    let home = user("");
    let names = |args: &[&str]| -> Vec<String> {
        let listed = run(home.toolhost().args(args));
        assert_eq!(listed.code, 0, "{listed:?}");
        listed
            .stdout
            .lines()
            .filter_map(|line| line.split_whitespace().next().map(str::to_string))
            .collect()
    };
    assert_eq!(
        names(&["tools"]),
        [
            "execute_command",
            "new_rule",
            "read_file",
            "replace_in_file",
            "search_files",
            "write_to_file"
        ]
    );
    // Cline's presets: act (the default), plan (no editing), yolo (no questions, a submission).
    let act = [
        "ask_question",
        "editor",
        "read_files",
        "run_commands",
        "search_codebase",
    ];
    assert_eq!(names(&["--tools", "cline-sdk", "tools"]), act);
    assert_eq!(names(&["--tools", "cline-sdk:act", "tools"]), act);
    assert_eq!(
        names(&["--tools", "cline-sdk:plan", "tools"]),
        [
            "ask_question",
            "read_files",
            "run_commands",
            "search_codebase"
        ]
    );
    assert_eq!(
        names(&["--tools", "cline-sdk:yolo", "tools"]),
        ["editor", "read_files", "run_commands", "submit_and_exit"]
    );
    // Cline's model routing: a GPT or Codex model gets apply_patch instead of editor in act.
    std::fs::write(&home.settings, SDK_FOR_GPT.settings).unwrap();
    let routed = [
        "apply_patch",
        "ask_question",
        "read_files",
        "run_commands",
        "search_codebase",
    ];
    assert_eq!(names(&["--tools", "cline-sdk", "tools"]), routed);
    assert_eq!(
        names(&["--tools", "cline-sdk:yolo", "tools"]),
        ["editor", "read_files", "run_commands", "submit_and_exit"]
    );
    std::fs::write(&home.settings, "[model]\nprovider = \"openai-native\"\n").unwrap();
    assert_eq!(names(&["--tools", "cline-sdk", "tools"]), routed);
    std::fs::write(&home.settings, "[tools]\nset = \"cline-sdk\"\n").unwrap();
    assert_eq!(names(&["tools"]), act);
    let schema = run(home.toolhost().args(["schema", "--format", "openai"]));
    let tools: Value = serde_json::from_str(&schema.stdout).unwrap();
    let read_files = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "read_files")
        .expect("read_files in the schema");
    assert_eq!(
        read_files["function"]["parameters"]["required"],
        json!(["files"])
    );
    std::fs::write(&home.settings, "[tools]\nset = \"cline sdk\"\n").unwrap();
    let refused = run(home.toolhost().arg("tools"));
    assert_ne!(refused.code, 0);
    assert!(refused.stderr.contains("tools.set"), "{refused:?}");
}

/// Reads and writes inside the workspace work in both generations (with approval).
#[test]
fn both_generations_read_and_write_the_workspace() {
    for generation in GENERATIONS {
        let home = user_of(generation, "");
        let read = call(&home, generation, (generation.read)("notes.txt"), true);
        assert!(
            read.stdout.contains("inside"),
            "{}: {read:?}",
            generation.set
        );
        let wrote = call(
            &home,
            generation,
            (generation.write)("new.txt", "made"),
            true,
        );
        assert_eq!(wrote.code, 0, "{}: {wrote:?}", generation.set);
        assert_eq!(
            std::fs::read_to_string(home.ws.join("new.txt")).unwrap(),
            "made"
        );
    }
}

#[test]
fn clineignored_files_are_neither_read_nor_written() {
    for generation in GENERATIONS {
        let home = user_of(generation, "");
        let read = call(&home, generation, (generation.read)("secret.txt"), true);
        assert!(
            !read.stdout.contains("hidden"),
            "{}: {read:?}",
            generation.set
        );
        assert!(
            read.stdout
                .contains("blocked by the .clineignore file settings"),
            "{}: {read:?}",
            generation.set
        );
        let wrote = call(
            &home,
            generation,
            (generation.write)("secret.txt", "x"),
            true,
        );
        assert!(
            wrote
                .stdout
                .contains("blocked by the .clineignore file settings"),
            "{}: {wrote:?}",
            generation.set
        );
        assert_eq!(
            std::fs::read_to_string(home.ws.join("secret.txt")).unwrap(),
            "hidden\n"
        );
    }
}

#[test]
fn outside_the_workspace_nothing_happens_without_the_user() {
    for generation in GENERATIONS {
        // Reads inside the workspace are auto-approved; nothing outside is.
        let home = user_of(
            generation,
            "[auto_approve]\nread_files = true\nedit_files = true\n",
        );
        let outside = home.base.join("outside.txt").display().to_string();
        for path in [outside.as_str(), "link.txt", "../outside.txt"] {
            let read = call(&home, generation, (generation.read)(path), false);
            assert!(
                !read.stdout.contains("beyond"),
                "{} read {path}: {read:?}",
                generation.set
            );
            let wrote = call(
                &home,
                generation,
                (generation.write)(path, "overwritten"),
                false,
            );
            assert!(
                !wrote.stdout.contains("successfully")
                    && !wrote.stdout.contains("\"success\":true"),
                "{} wrote {path}: {wrote:?}",
                generation.set
            );
        }
        assert_eq!(
            std::fs::read_to_string(home.base.join("outside.txt")).unwrap(),
            "beyond\n",
            "{}",
            generation.set
        );
        let inside = call(&home, generation, (generation.read)("notes.txt"), false);
        assert!(
            inside.stdout.contains("inside"),
            "{}: {inside:?}",
            generation.set
        );
    }
}

#[test]
fn commands_meet_the_same_policies_in_both_generations() {
    for generation in GENERATIONS {
        let home = user_of(generation, "");
        let command = |line: &str, permissions: Option<&str>| {
            let mut toolhost = home.toolhost();
            if let Some(permissions) = permissions {
                toolhost.env("CLINE_COMMAND_PERMISSIONS", permissions);
            }
            call_with(
                toolhost,
                &home,
                generation,
                (generation.command)(line),
                true,
            )
        };
        let ran = command("cat notes.txt", None);
        assert!(ran.stdout.contains("inside"), "{}: {ran:?}", generation.set);
        let ignored = command("cat secret.txt", None);
        assert!(
            !ignored.stdout.contains("hidden"),
            "{}: {ignored:?}",
            generation.set
        );
        assert!(
            ignored
                .stdout
                .contains("blocked by the .clineignore file settings"),
            "{}: {ignored:?}",
            generation.set
        );
        let denied = command("rm notes.txt", Some(r#"{"deny":["rm *"]}"#));
        assert!(
            home.ws.join("notes.txt").exists(),
            "{}: {denied:?}",
            generation.set
        );
        let escaped = command("echo overwritten > ../outside.txt", None);
        assert_eq!(
            std::fs::read_to_string(home.base.join("outside.txt")).unwrap(),
            "beyond\n",
            "{}: {escaped:?}",
            generation.set
        );
    }
}

#[test]
fn the_plan_preset_runs_no_command_that_modifies_files() {
    let home = user("");
    let cwd = home.ws.display().to_string();
    let call = |set: &str, commands: Value| {
        let params = json!({ "commands": commands }).to_string();
        run(home.toolhost().args([
            "--tools",
            set,
            "call",
            "run_commands",
            &params,
            "--cwd",
            &cwd,
            "--yes",
        ]))
    };
    let refused = call("cline-sdk:plan", json!(["cat notes.txt", "rm notes.txt"]));
    assert!(
        refused.stdout.contains(
            "Command not executed: `rm` can modify files, and file modifications are blocked in plan mode."
        ),
        "{refused:?}"
    );
    assert!(
        !refused.stdout.contains("inside"),
        "no command of the call ran: {refused:?}"
    );
    assert!(home.ws.join("notes.txt").exists());
    let redirected = call("cline-sdk:plan", json!(["echo x > made.txt"]));
    assert!(
        redirected
            .stdout
            .contains("output redirection (`> made.txt`)"),
        "{redirected:?}"
    );
    assert!(!home.ws.join("made.txt").exists());
    // What the guard cannot see (a quoted script) meets the read-only sandbox of the preset.
    let hidden = call("cline-sdk:plan", json!(["bash -c \"echo x > sneaky.txt\""]));
    assert!(!home.ws.join("sneaky.txt").exists(), "{hidden:?}");
    let argv = call(
        "cline-sdk:plan",
        json!([{ "command": "rm", "args": ["notes.txt"] }]),
    );
    assert!(
        argv.stdout.contains("Command not executed: `rm`"),
        "{argv:?}"
    );
    let read = call(
        "cline-sdk:plan",
        json!(["cat notes.txt", "echo x > /tmp/plan-ok.txt"]),
    );
    assert!(read.stdout.contains("inside"), "{read:?}");
    let removed = call("cline-sdk:act", json!(["rm notes.txt"]));
    assert!(removed.stdout.contains("\"success\":true"), "{removed:?}");
    assert!(
        !home.ws.join("notes.txt").exists(),
        "the act preset runs it"
    );
}

#[test]
fn fetch_web_content_answers_pages_through_the_egress_policy() {
    const PAGE: &str = "<html><body><h1>Hello</h1><p>A &amp; B</p></body></html>";
    let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let port = server.server_addr().to_ip().unwrap().port();
    std::thread::spawn(move || {
        for request in server.incoming_requests() {
            let header = "Content-Type: text/html"
                .parse::<tiny_http::Header>()
                .unwrap();
            let _ = request.respond(tiny_http::Response::from_string(PAGE).with_header(header));
        }
    });
    let url = format!("http://127.0.0.1:{port}/page");
    let params = json!({"requests": [{"url": url, "prompt": "the title"}]}).to_string();
    let call = |settings: &str| {
        let home = Home::new(settings, &["fetch_web_content"]);
        run(home.toolhost().args([
            "--tools",
            "cline-sdk",
            "call",
            "--yes",
            "fetch_web_content",
            &params,
        ]))
    };
    let refused = call("");
    assert!(
        refused.stdout.contains("\"success\":false") && refused.stdout.contains("loopback address"),
        "the egress policy decides: {refused:?}"
    );
    let allowed = call(&format!("[egress]\nallow = [\"127.0.0.1:{port}\"]\n"));
    let text = format!(
        "URL: {url}\nContent-Type: text/html\nSize: {} bytes\n\n--- Content ---\nHello A & B\n\n\
         --- Analysis Request ---\nPrompt: the title",
        PAGE.len()
    );
    assert_eq!(
        allowed.stdout,
        json!([{"query": url, "result": text, "success": true}]).to_string()
    );
}

#[test]
fn searches_skip_clineignored_files_in_both_generations() {
    for generation in GENERATIONS {
        let home = user("");
        let found = call(
            &home,
            generation,
            (generation.search)("hidden|inside"),
            true,
        );
        assert!(
            found.stdout.contains("notes.txt"),
            "{}: {found:?}",
            generation.set
        );
        assert!(
            !found.stdout.contains("secret.txt"),
            "{}: {found:?}",
            generation.set
        );
    }
}

#[test]
fn skills_are_use_skills_answered_as_clines_sdk_answers() {
    let home = Home::new("", &["skills", "use_skill"]);
    let dir = home.ws.join(".clinerules/skills/pdf");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: pdf\ndescription: Work with PDFs\n---\nUse pdftotext.\n",
    )
    .unwrap();
    let cwd = home.ws.display().to_string();
    let call = |set: &str, tool: &str, params: Value| {
        let params = params.to_string();
        run(home
            .toolhost()
            .args(["--tools", set, "call", tool, &params, "--cwd", &cwd]))
    };
    let sdk = call(
        "cline-sdk",
        "skills",
        json!({"skill": "/PDF", "args": "a.pdf"}),
    );
    assert_eq!(
        sdk.stdout,
        "<command-name>pdf</command-name>\n<command-args>a.pdf</command-args>\n\
         <command-instructions>\nDescription: Work with PDFs\n\nUse pdftotext.\n\
         </command-instructions>"
    );
    let unknown = call("cline-sdk", "skills", json!({"skill": "zip"}));
    assert_eq!(
        unknown.stdout,
        "Skill \"zip\" not found. Available skills: pdf"
    );
    let legacy = call("cline-legacy", "use_skill", json!({"skill_name": "pdf"}));
    assert!(legacy.stdout.contains("Use pdftotext."), "{legacy:?}");
}

#[test]
fn the_question_and_the_submission_answer_as_clines_command_line() {
    let home = Home::new("", &["ask_question", "submit_and_exit"]);
    let call = |set: &str, tool: &str, params: Value| {
        let params = params.to_string();
        run(home
            .toolhost()
            .args(["--tools", set, "call", tool, &params]))
    };
    // With nobody to ask, the first option (Cline's command line without a terminal).
    let asked = call(
        "cline-sdk",
        "ask_question",
        json!({"question": "Which database?", "options": ["Postgres", "SQLite"]}),
    );
    assert_eq!(asked.stdout, "Postgres", "{asked:?}");
    let one_option = call(
        "cline-sdk",
        "ask_question",
        json!({"question": "Which?", "options": ["only"]}),
    );
    assert!(
        one_option
            .stdout
            .contains("✖ Too small: expected array to have >=2 items\n  → at options"),
        "{one_option:?}"
    );
    let submitted = call(
        "cline-sdk:yolo",
        "submit_and_exit",
        json!({"summary": "Fixed the parser; tests pass.", "verified": true}),
    );
    assert_eq!(
        submitted.stdout,
        "Submission recorded (verified): Fixed the parser; tests pass."
    );
    let not_in_act = call(
        "cline-sdk",
        "submit_and_exit",
        json!({"summary": "Fixed the parser; tests pass.", "verified": true}),
    );
    assert_ne!(not_in_act.code, 0, "yolo only: {not_in_act:?}");
}
