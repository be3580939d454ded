//! Cline's files through `toolhost mcp`, as an MCP client (the official Python SDK's) sees
//! them: the workspace's and the user's workflows in its prompt picker (a prompt is the
//! message Cline sends for the workflow's slash command), their rules and skills in its
//! resource picker; and what a hostile workspace cannot get served (a rule linking to the
//! user's key, a rule `.clineignore` blocks, a file nobody listed).

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use toolhost_tests::{toolhost_bin, workdir, PluginDir};

/// The client: lists prompts and resources, gets a workflow with input, reads every listed
/// resource, then tries the URIs it is given that were not listed.
const CLIENT: &str = r#"
import asyncio, json, sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

config = json.loads(sys.argv[1])


async def main():
    server = StdioServerParameters(
        command=config["toolhost"], args=config["args"], env=config["env"],
    )
    out = {}
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            prompts = (await session.list_prompts()).prompts
            out["prompts"] = [p.model_dump(mode="json", by_alias=True, exclude_none=True) for p in prompts]
            got = await session.get_prompt("deploy", {"input": "to staging"})
            out["deploy"] = got.model_dump(mode="json", by_alias=True, exclude_none=True)
            resources = (await session.list_resources()).resources
            out["resources"] = [r.model_dump(mode="json", by_alias=True, exclude_none=True) for r in resources]
            out["read"] = {}
            for resource in resources:
                result = await session.read_resource(resource.uri)
                out["read"][resource.name] = result.contents[0].text
            out["refused"] = {}
            for name, uri in config["unlisted"].items():
                try:
                    await session.read_resource(uri)
                    out["refused"][name] = None
                except Exception as error:
                    out["refused"][name] = str(error)
    print(json.dumps(out))


asyncio.run(main())
"#;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn file_uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

#[test]
fn a_clients_pickers_list_the_workspaces_workflows_rules_and_skills() {
    let workspace = workdir();
    let home = workdir();
    let scratch = workdir();
    let ws = workspace.path();
    write(&ws.join("AGENTS.md"), "Run the tests before you finish.");
    write(
        &ws.join(".clinerules/style.md"),
        "---\ndescription: House style\n---\nUse tabs.",
    );
    write(
        &ws.join(".clinerules/old.md"),
        "---\ndisabled: true\n---\nUse spaces.",
    );
    write(
        &ws.join(".clinerules/internal.md"),
        "The staging password is hunter2.",
    );
    write(&ws.join(".clineignore"), ".clinerules/internal.md\n");
    write(
        &ws.join(".clinerules/workflows/deploy.md"),
        "---\ndescription: Ship it\n---\n1. Build.\n2. Upload.",
    );
    write(
        &ws.join(".clinerules/skills/review/SKILL.md"),
        "---\nname: review\ndescription: Reviews a change\n---\nRead the diff.",
    );
    let key = home.path().join(".ssh/id_ed25519");
    write(&key, "PRIVATE KEY");
    std::os::unix::fs::symlink(&key, ws.join(".clinerules/keys.md")).unwrap();
    write(
        &home
            .path()
            .join("Documents/Cline/Workflows/release-notes.md"),
        "Summarize the merged changes.",
    );
    // A global workflow of the same name as the workspace's: the workspace's wins.
    write(
        &home.path().join(".cline/workflows/deploy.md"),
        "Deploy from home.",
    );
    write(
        &home.path().join("Documents/Cline/Rules/global.md"),
        "Be brief.",
    );

    let plugins = PluginDir::empty();
    plugins.add_library("rules_and_workflows");
    plugins.add_library("use_skill");
    let config = json!({
        "toolhost": toolhost_bin(),
        "args": ["--plugins", plugins.path(), "--isolation", "in-process", "mcp", "--cwd", ws],
        "env": {
            "HOME": home.path(),
            "XDG_CONFIG_HOME": scratch.path(),
            "XDG_CACHE_HOME": scratch.path(),
        },
        "unlisted": {
            "link to the user's key": file_uri(&ws.join(".clinerules/keys.md")),
            "ignored rule": file_uri(&ws.join(".clinerules/internal.md")),
            "the key itself": file_uri(&key),
            "disabled rule": file_uri(&ws.join(".clinerules/old.md")),
        },
    });
    let script = scratch.path().join("client.py");
    std::fs::write(&script, CLIENT).unwrap();
    let output = Command::new("timeout")
        .args(["120", "python3"])
        .arg(&script)
        .arg(config.to_string())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the client failed: {stderr}");
    let seen: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("no JSON from the client ({e}): {stderr}"));

    let prompts: Vec<&str> = seen["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(prompts, ["deploy", "release-notes"]);
    assert_eq!(seen["prompts"][0]["description"], "Ship it");
    assert_eq!(
        seen["deploy"]["messages"][0]["content"]["text"],
        "<explicit_instructions type=\"deploy.md\">\n1. Build.\n2. Upload.\n</explicit_instructions>\nto staging"
    );

    let names: Vec<&str> = seen["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Workspace AGENTS.md", "style", "global", "review"]);
    let style = &seen["resources"][1];
    assert_eq!(style["uri"], file_uri(&ws.join(".clinerules/style.md")));
    assert_eq!(style["description"], "House style");
    assert_eq!(style["mimeType"], "text/markdown");
    assert_eq!(
        seen["read"]["style"],
        "---\ndescription: House style\n---\nUse tabs."
    );
    assert_eq!(seen["read"]["global"], "Be brief.");
    assert!(seen["read"]["review"]
        .as_str()
        .unwrap()
        .ends_with("Read the diff."));

    for (what, error) in seen["refused"].as_object().unwrap() {
        let error = error
            .as_str()
            .unwrap_or_else(|| panic!("{what} was served"));
        assert!(error.contains("Resource not found"), "{what}: {error}");
    }
}
