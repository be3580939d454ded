//! `toolhost schema` over every real plugin: each tool's title and four MCP hints, OpenAI's
//! strict mode (checked structurally, tool by tool) and the Responses API's shape, the
//! descriptions within each format's limit, and a call shaped by strict mode.

use std::path::Path;

use serde_json::{json, Value};
use toolhost_tests::{run, toolhost, workdir, PluginDir, Run};

/// The names that reach the web, a browser or another MCP server.
const OPEN_WORLD: [&str; 5] = [
    "web_fetch",
    "web_search",
    "browser_action",
    "use_mcp_tool",
    "access_mcp_resource",
];

/// The hints MCP defines, each a boolean on every tool.
const HINTS: [&str; 4] = [
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];

/// Keywords OpenAI's strict mode refuses.
const NOT_STRICT: [&str; 15] = [
    "minLength",
    "maxLength",
    "patternProperties",
    "unevaluatedProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
    "allOf",
    "oneOf",
    "not",
];

fn schema(plugins: &Path, settings: Option<&Path>, args: &[&str]) -> Run {
    let mut command = toolhost();
    command.arg("--plugins").arg(plugins);
    if let Some(settings) = settings {
        command.arg("--settings").arg(settings);
    }
    run(command.arg("schema").args(args))
}

fn entries(run: &Run) -> Vec<Value> {
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json().as_array().cloned().unwrap()
}

/// Every registered tool of the real plugins, as `schema --format mcp` lists it.
fn mcp_entries(plugins: &PluginDir) -> Vec<Value> {
    entries(&schema(plugins.path(), None, &["--format", "mcp"]))
}

#[test]
fn every_tool_has_a_title_and_all_four_hints() {
    let plugins = PluginDir::real();
    let tools = mcp_entries(&plugins);
    assert!(tools.len() >= 27, "{} tools", tools.len());
    for tool in &tools {
        let name = tool["name"].as_str().unwrap();
        let title = tool["title"].as_str().unwrap_or_default();
        assert!(!title.trim().is_empty(), "{name} has no title");
        assert_ne!(title, name, "{name}'s title is its name");
        let annotations = &tool["annotations"];
        assert_eq!(annotations["title"], tool["title"], "{name}");
        for hint in HINTS {
            assert!(annotations[hint].is_boolean(), "{name} lacks {hint}");
        }
        let open_world = annotations["openWorldHint"] == true;
        assert_eq!(
            open_world,
            OPEN_WORLD.contains(&name)
                || ["execute_command", "generate_explanation", "use_subagents"].contains(&name),
            "{name}'s openWorldHint"
        );
        if annotations["readOnlyHint"] == true {
            assert_eq!(annotations["destructiveHint"], false, "{name}");
        }
    }
    let hints = |name: &str| {
        let tool = tools.iter().find(|t| t["name"] == name).unwrap();
        HINTS.map(|hint| tool["annotations"][hint].as_bool().unwrap())
    };
    assert_eq!(hints("read_file"), [true, false, true, false]);
    assert_eq!(hints("write_to_file"), [false, true, true, false]);
    assert_eq!(hints("replace_in_file"), [false, true, false, false]);
    assert_eq!(hints("execute_command"), [false, true, false, true]);
    assert_eq!(hints("web_fetch"), [true, false, true, true]);
    assert_eq!(hints("browser_action"), [false, false, false, true]);
}

/// A native MCP tool of a real server: its title and hints come from the server, and it is
/// open-world whatever the server says.
#[test]
fn an_mcp_servers_tools_are_open_world_with_its_titles() {
    let setup = crate::mcp_results::Setup::new();
    let tools = entries(&schema(
        setup.plugins.path(),
        Some(&setup.settings),
        &["--format", "mcp"],
    ));
    let linked = tools
        .iter()
        .find(|t| t["name"] == "rich0mcp0linked")
        .unwrap_or_else(|| panic!("no native tool of the server: {tools:?}"));
    assert_eq!(linked["title"], "Links and embeds");
    assert_eq!(
        linked["annotations"],
        json!({"title": "Links and embeds", "readOnlyHint": true, "destructiveHint": false,
               "idempotentHint": true, "openWorldHint": true})
    );
    // Without annotations: the MCP specification's defaults, and open-world.
    let fails = tools
        .iter()
        .find(|t| t["name"] == "rich0mcp0fails")
        .unwrap();
    assert_eq!(
        fails["annotations"],
        json!({"title": "Rich0mcp0fails", "readOnlyHint": false, "destructiveHint": true,
               "idempotentHint": false, "openWorldHint": true})
    );
}

/// Checks that `schema` is one strict mode accepts; `path` names where in the tool it is.
fn assert_strict(schema: &Value, path: &str) {
    let Some(map) = schema.as_object() else {
        return;
    };
    for keyword in NOT_STRICT {
        assert!(!map.contains_key(keyword), "{path} has {keyword}: {schema}");
    }
    let is_object = map.contains_key("properties")
        || map.get("type") == Some(&json!("object"))
        || map
            .get("type")
            .and_then(Value::as_array)
            .is_some_and(|types| types.contains(&json!("object")));
    if is_object {
        assert_eq!(
            map.get("additionalProperties"),
            Some(&json!(false)),
            "{path}: {schema}"
        );
        let properties = map["properties"].as_object().unwrap();
        let mut names: Vec<&str> = properties.keys().map(String::as_str).collect();
        let mut required: Vec<&str> = map["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        names.sort_unstable();
        required.sort_unstable();
        assert_eq!(names, required, "{path}: every property is required");
        for (name, property) in properties {
            assert_strict(property, &format!("{path}.{name}"));
        }
    }
    for key in ["items", "additionalItems"] {
        if let Some(items) = map.get(key) {
            assert_strict(items, &format!("{path}[]"));
        }
    }
    if let Some(branches) = map.get("anyOf").and_then(Value::as_array) {
        for (i, branch) in branches.iter().enumerate() {
            assert_strict(branch, &format!("{path}|{i}"));
        }
    }
}

/// Whether a property accepts `null`.
fn nullable(property: &Value) -> bool {
    match &property["type"] {
        Value::Array(types) => types.contains(&json!("null")),
        Value::String(t) => t == "null",
        _ => property["anyOf"]
            .as_array()
            .is_some_and(|branches| branches.iter().any(|b| b["type"] == "null")),
    }
}

#[test]
fn strict_openai_schemas_are_valid_for_every_tool() {
    let plugins = PluginDir::real();
    let plain = mcp_entries(&plugins);
    let strict_run = schema(plugins.path(), None, &["--format", "openai", "--strict"]);
    let strict = entries(&strict_run);
    assert!(
        !strict_run.stderr.contains("was cut"),
        "{}",
        strict_run.stderr
    );
    assert_eq!(strict.len(), plain.len());
    for (tool, original) in strict.iter().zip(&plain) {
        let function = &tool["function"];
        let name = function["name"].as_str().unwrap();
        assert_eq!(name, original["name"]);
        assert_eq!(tool["type"], "function");
        assert_eq!(function["strict"], true, "{name}");
        let parameters = &function["parameters"];
        assert_eq!(parameters["type"], "object", "{name}");
        assert_strict(parameters, name);
        // What was optional may now be null; what was required may not.
        let required: Vec<&Value> = original["inputSchema"]["required"]
            .as_array()
            .map(|r| r.iter().collect())
            .unwrap_or_default();
        for (param, property) in parameters["properties"].as_object().unwrap() {
            let was_required = required.contains(&&json!(param));
            assert_eq!(
                nullable(property),
                !was_required,
                "{name}.{param}: {property}"
            );
        }
        let description = function["description"].as_str().unwrap();
        assert!(description.chars().count() <= 1024, "{name}");
        // The shipped descriptions fit whole.
        assert_eq!(description, original["description"], "{name}");
    }
    // The constraint strict mode cannot say stays in the description: content may be empty.
    let write = strict
        .iter()
        .find(|t| t["function"]["name"] == "write_to_file")
        .unwrap();
    assert!(write["function"]["parameters"]["properties"]["content"]
        .get("minLength")
        .is_none());
}

#[test]
fn the_responses_api_shape_with_and_without_strict_mode() {
    let plugins = PluginDir::empty();
    plugins.add_library("read_file").add_library("list_files");
    let plain = entries(&schema(
        plugins.path(),
        None,
        &["--format", "openai-responses"],
    ));
    let strict = entries(&schema(
        plugins.path(),
        None,
        &["--format", "openai-responses", "--strict"],
    ));
    let mcp = mcp_entries(&plugins);
    for ((tool, strict_tool), original) in plain.iter().zip(&strict).zip(&mcp) {
        let mut keys: Vec<&str> = tool
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["description", "name", "parameters", "strict", "type"]
        );
        assert_eq!(tool["type"], "function");
        assert_eq!(tool["name"], original["name"]);
        // Left out, `strict` means true to the Responses API: a plain schema says false.
        assert_eq!(tool["strict"], false);
        assert_eq!(tool["parameters"], original["inputSchema"]);
        assert_eq!(strict_tool["strict"], true);
        assert_strict(&strict_tool["parameters"], tool["name"].as_str().unwrap());
    }
    let read_file = strict.iter().find(|t| t["name"] == "read_file").unwrap();
    assert_eq!(
        read_file["parameters"]["properties"]["start_line"]["type"],
        json!(["string", "null"])
    );
    assert_eq!(
        read_file["parameters"]["required"],
        json!(["path", "start_line", "end_line"])
    );
}

#[test]
fn strict_needs_a_format_that_has_it() {
    let plugins = PluginDir::empty();
    plugins.add_library("read_file");
    for format in ["mcp", "anthropic", "xml-prompt"] {
        let run = schema(plugins.path(), None, &["--format", format, "--strict"]);
        assert_ne!(run.code, 0, "{format}");
        assert!(run.stdout.is_empty());
        assert!(
            run.stderr.contains("--strict needs --format openai"),
            "{}",
            run.stderr
        );
    }
}

/// A strict-mode call sends `null` for every optional parameter: the same as leaving it out.
#[test]
fn a_call_shaped_by_strict_mode_reads_nulls_as_absent() {
    let plugins = PluginDir::empty();
    plugins.add_library("read_file");
    let workspace = workdir();
    std::fs::write(workspace.path().join("a.txt"), "one\ntwo\n").unwrap();
    let call = |params: Value| {
        toolhost_tests::call_json(plugins.path(), workspace.path(), "read_file", &params, &[]).1
    };
    let plain = call(json!({"path": "a.txt"}));
    let nulls =
        call(json!({"path": "a.txt", "start_line": null, "end_line": null, "task_progress": null}));
    assert_eq!(plain["is_error"], false, "{plain}");
    assert_eq!(nulls, plain);
    // A required parameter sent as null is missing, as before.
    let missing = call(json!({"path": null}));
    assert_eq!(missing["error_kind"], "invalid_params", "{missing}");
}

/// A tool of someone else's with a description over OpenAI's limit: cut after the last
/// sentence that fits, with a warning naming it; the MCP and Anthropic formats keep it whole.
#[test]
fn a_description_over_the_limit_is_cut_at_a_sentence_with_a_warning() {
    let plugins = PluginDir::empty();
    plugins.add_library("http_tools");
    let config = workdir();
    let sentence = "This sentence is part of a very long description of a declared tool. ";
    let description = sentence.repeat(20);
    let settings = config.path().join("settings.toml");
    std::fs::write(
        &settings,
        format!(
            "[http_tools.long_tool]\nurl = \"http://127.0.0.1:9/x\"\ndescription = {:?}\n",
            description.trim_end()
        ),
    )
    .unwrap();
    let openai = schema(plugins.path(), Some(&settings), &["--format", "openai"]);
    let tools = entries(&openai);
    let cut = tools[0]["function"]["description"].as_str().unwrap();
    assert!(cut.chars().count() <= 1024);
    assert!(cut.ends_with("declared tool."), "{cut}");
    assert_eq!(
        cut.matches(sentence.trim_end()).count(),
        1024 / sentence.len()
    );
    assert!(
        openai.stderr.contains(
            "the description of long_tool has 1379 characters, over the format's limit of 1024"
        ),
        "{}",
        openai.stderr
    );
    let mcp = entries(&schema(
        plugins.path(),
        Some(&settings),
        &["--format", "mcp"],
    ));
    assert_eq!(mcp[0]["description"], description.trim_end());
    assert_eq!(mcp[0]["annotations"]["openWorldHint"], true);
}

/// The reference MCP server's tools, whose schemas are a third party's (defaults, bounds,
/// enums, nested objects): strict mode holds for each of them too.
#[test]
fn strict_schemas_hold_for_a_third_party_servers_tools() {
    let script = crate::mcp_client::server_everything();
    let config = workdir();
    let servers = config.path().join("cline_mcp_settings.json");
    std::fs::write(
        &servers,
        json!({"mcpServers": {"everything": {"command": "node", "args": [script, "stdio"]}}})
            .to_string(),
    )
    .unwrap();
    let settings = config.path().join("settings.toml");
    std::fs::write(
        &settings,
        format!(
            "[mcp]\nsettings_file = {:?}\n",
            servers.display().to_string()
        ),
    )
    .unwrap();
    let plugins = PluginDir::empty();
    plugins.add_library("use_mcp_tool");
    let plain = entries(&schema(
        plugins.path(),
        Some(&settings),
        &["--format", "mcp"],
    ));
    let strict = entries(&schema(
        plugins.path(),
        Some(&settings),
        &["--format", "openai-responses", "--strict"],
    ));
    let native: Vec<&Value> = strict
        .iter()
        .filter(|t| t["name"].as_str().unwrap().starts_with("everything0mcp0"))
        .collect();
    assert!(native.len() >= 5, "{} tools of the server", native.len());
    for tool in &native {
        let name = tool["name"].as_str().unwrap();
        assert_strict(&tool["parameters"], name);
        let original = plain.iter().find(|t| t["name"] == name).unwrap();
        assert_eq!(
            original["annotations"]["openWorldHint"], true,
            "{name} is open-world"
        );
    }
}
