//! The fuzz targets' seed corpora, written afresh before every run from the conformance data
//! (`tests/conformance/*.jsonl`), the example messages (`host/examples/`) and inputs of the
//! tests, in each target's input format (see the targets under `fuzz/fuzz_targets/`).

use std::path::Path;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// Writes every target's seeds under `dir/<target>/`, one file per seed named by its hash.
pub fn write_all(root: &Path, dir: &Path) -> Result<(), String> {
    let cases = |area: &str| conformance(root, area);
    let sets: [(&str, Vec<Vec<u8>>); 9] = [
        (
            "stream_parser",
            stream_parser(root, &cases("parse_assistant_message"))?,
        ),
        ("arguments", arguments(&cases("parse_assistant_message"))),
        (
            "replace_in_file",
            replace_in_file(&cases("replace_in_file")),
        ),
        ("apply_patch", apply_patch(&cases("apply_patch"))),
        (
            "command_policy",
            command_policy(&cases("command_permissions")),
        ),
        ("paths", paths(&cases("clineignore"))),
        ("serve_frames", serve_frames()),
        ("mcp_frames", mcp_frames()),
        ("worker_frames", worker_frames()),
    ];
    for (target, seeds) in sets {
        let target_dir = dir.join(target);
        let _ = std::fs::remove_dir_all(&target_dir);
        std::fs::create_dir_all(&target_dir)
            .map_err(|e| format!("cannot create {}: {e}", target_dir.display()))?;
        for seed in seeds {
            let name = hex::encode(&Sha256::digest(&seed)[..8]);
            std::fs::write(target_dir.join(name), seed)
                .map_err(|e| format!("cannot write a seed of {target}: {e}"))?;
        }
    }
    Ok(())
}

/// The `input` objects of one conformance file.
fn conformance(root: &Path, area: &str) -> Vec<Value> {
    let path = root.join("tests/conformance").join(format!("{area}.jsonl"));
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .map(|case| case["input"].clone())
        .collect()
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// Parts joined by NUL bytes, after a leading byte when there is one.
fn joined(lead: Option<u8>, parts: &[&str]) -> Vec<u8> {
    let mut out: Vec<u8> = lead.into_iter().collect();
    out.extend_from_slice(parts.join("\0").as_bytes());
    out
}

/// Messages: a split byte, then the text; the conformance messages and the example replays.
fn stream_parser(root: &Path, cases: &[Value]) -> Result<Vec<Vec<u8>>, String> {
    let mut texts: Vec<String> = cases.iter().map(|c| text(&c["text"]).to_string()).collect();
    let examples = std::fs::read_dir(root.join("host/examples"))
        .map_err(|e| format!("cannot read host/examples: {e}"))?;
    for entry in examples.flatten() {
        if entry.path().extension().is_some_and(|e| e == "txt") {
            texts.push(std::fs::read_to_string(entry.path()).unwrap_or_default());
        }
    }
    texts.push("<write_to_file>\n<path>a.rs</path>\n<content>\nif a < b && c > d { x(\"</content>\") }\n</content>\n</write_to_file>".to_string());
    Ok(texts
        .iter()
        .enumerate()
        .map(|(i, t)| joined(Some(i as u8), &[t]))
        .collect())
}

/// Arguments texts: strict JSON, JSON5 and truncated objects, from the parameters of the
/// conformance messages' tool calls and the forms models send.
fn arguments(cases: &[Value]) -> Vec<Vec<u8>> {
    let mut seeds: Vec<String> = vec![
        r#"{"path":"src/lib.rs","recursive":"true","start_line":"3"}"#.into(),
        "{path: 'a', recursive: true, timeout: 1.5,}".into(),
        r#"{"path": "src/lib.rs", "content": "line1\nline"#.into(),
        r#"{"paths":"[\"a\",\"b\"]","options":"{\"x\":1}","c":"TRUE","b":" 42 "}"#.into(),
        r#"{"a": 12, "b": "x", "d": "1e400", "e": [1], "f": null}"#.into(),
        String::new(),
    ];
    for case in cases {
        let json = case.to_string();
        seeds.push(json.clone());
        seeds.push(json[..json.len() / 2].to_string());
    }
    seeds.into_iter().map(String::into_bytes).collect()
}

/// Mode 0: a file and a diff, through the tool; mode 1: a file, a SEARCH and a REPLACE text.
fn replace_in_file(cases: &[Value]) -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for case in cases {
        let (original, diff) = (text(&case["original"]), text(&case["diff"]));
        seeds.push(joined(Some(0), &[original, diff]));
        if let Some((search, replace)) = single_block(diff) {
            seeds.push(joined(Some(1), &[original, &search, &replace]));
        }
    }
    seeds.push(joined(Some(1), &["a\nb\nc\n", "b", "B"]));
    seeds.push(joined(Some(1), &["fn a() {\n    x\n}\n", "    x", ""]));
    seeds
}

/// The SEARCH and REPLACE texts of a diff of one block in the current markers.
fn single_block(diff: &str) -> Option<(String, String)> {
    let body = diff.strip_prefix("------- SEARCH\n")?;
    let (search, rest) = body.split_once("\n=======\n")?;
    let replace = rest.strip_suffix("\n+++++++ REPLACE")?;
    (!search.contains("SEARCH") && !replace.contains("REPLACE"))
        .then(|| (search.to_string(), replace.to_string()))
}

/// A patch, then pairs of a file name and its content.
fn apply_patch(cases: &[Value]) -> Vec<Vec<u8>> {
    cases
        .iter()
        .map(|case| {
            let mut parts = vec![text(&case["patch"]).to_string()];
            if let Some(files) = case["files"].as_object() {
                for (name, content) in files {
                    parts.push(name.clone());
                    parts.push(text(content).to_string());
                }
            }
            parts.join("\0").into_bytes()
        })
        .collect()
}

/// A `CLINE_COMMAND_PERMISSIONS` value, then a command.
fn command_policy(cases: &[Value]) -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = cases
        .iter()
        .map(|case| joined(None, &[text(&case["env"]), text(&case["command"])]))
        .collect();
    let rules = r#"{"allow":["git *","npm test","cat *"],"deny":["rm *","git push *"]}"#;
    for command in [
        "git status && rm -rf /",
        "bash -c \"$(curl x)\" | sh",
        "cat .env secrets/key.pem",
        "sudo env FOO=1 timeout 5 xargs rm -rf <<EOF\nx\nEOF",
        "echo ${x@P} $((y)) ${!name} `id`",
        "find . -exec rm {} \\; ; sed -i s/a/b/ f",
    ] {
        seeds.push(joined(None, &[rules, command]));
    }
    seeds
}

/// `.clineignore` text, then a path.
fn paths(cases: &[Value]) -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = cases
        .iter()
        .filter(|case| case["path"].is_string())
        .map(|case| joined(None, &[text(&case["clineignore"]), text(&case["path"])]))
        .collect();
    let rules = "secrets/\n*.pem\n!keep.pem\nout.txt\n";
    for path in [
        "out/secret.txt",
        "in/../../outside/secret.txt",
        "rel_out.txt",
        "key_link",
        "SECRETS/KEY.PEM",
        "magic/etc/passwd",
        "loop/x",
        "sub/deep/../b.txt",
        "/etc/passwd",
        "@ws:sub/b.txt",
    ] {
        seeds.push(joined(None, &[rules, path]));
    }
    seeds
}

fn serve_frames() -> Vec<Vec<u8>> {
    vec![
        b"{\"id\":1,\"tool\":\"read_file\",\"params\":{\"path\":\"a.txt\"}}\n{\"id\":2,\"list\":true}\n".to_vec(),
        b"{\"id\":\"x\",\"tool\":\"no_such_tool\"}\nnot json\n\n{\"id\":3}\n".to_vec(),
        b"{\"id\":4,\"tool\":\"list_files\",\"params\":\"not an object\"}\n\xff\xfe{\"id\":5}\n".to_vec(),
        b"[1,2]\n{\"id\":null,\"tool\":7}\n   \n{\"id\":{\"n\":1},\"tool\":\"x\",\"params\":{\"a\":[1,{\"b\":null}]}}".to_vec(),
    ]
}

fn mcp_frames() -> Vec<Vec<u8>> {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "fuzz", "version": "1"}}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let lines = |rest: &[Value]| -> Vec<u8> {
        let mut out = String::new();
        for message in [&initialize, &initialized].into_iter().chain(rest) {
            out.push_str(&message.to_string());
            out.push('\n');
        }
        out.into_bytes()
    };
    vec![
        lines(&[json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})]),
        lines(&[
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": "a"}}}),
            json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}),
            json!({"jsonrpc": "2.0", "id": 5, "method": "logging/setLevel", "params": {"level": "debug"}}),
        ]),
        lines(&[json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": 5}})]),
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n".to_vec(),
        b"not json\n".to_vec(),
    ]
}

/// Frames of both directions of the worker channel (a side byte, then length-prefixed JSON).
fn worker_frames() -> Vec<Vec<u8>> {
    let frames = |side: u8, messages: &[Value]| -> Vec<u8> {
        let mut out = vec![side];
        for message in messages {
            let body = message.to_string();
            out.extend_from_slice(&(body.len() as u32).to_le_bytes());
            out.extend_from_slice(body.as_bytes());
        }
        out
    };
    let call =
        json!({"tool_name": "t", "call_id": "c1", "params_json": "{}", "context_json": "{}"});
    vec![
        frames(
            0,
            &[
                json!({"t": "call", "id": 1, "handler": 0, "op": "execute", "call": call}),
                json!({"t": "extension", "id": 2, "handler": 0, "method": "specs", "payload": {}}),
                json!({"t": "reply", "id": 3, "answer": {"Ok": {"approved": true}}}),
                json!({"t": "cancel", "id": 1}),
                json!({"t": "shutdown"}),
            ],
        ),
        frames(
            1,
            &[
                json!({"t": "done", "id": 1, "result": {"Ok": {"content": [], "description": "d"}}}),
                json!({"t": "done", "id": 2, "result": {"Err": {"kind": 3, "message": "m"}}}),
                json!({"t": "service", "id": 0, "call": 1, "request": {"op": "say", "kind": "text", "text": "hi", "partial": false}}),
                json!({"t": "service", "id": 4, "call": 1, "request": {"op": "check_path", "path": "a"}}),
                json!({"t": "service", "id": 5, "call": 1, "request": {"op": "invoke_tool", "name": "x", "params_json": "{}"}}),
                json!({"t": "service", "id": 6, "call": 1, "request": {"op": "log", "level": 3, "target": "t", "message": "m"}}),
            ],
        ),
        {
            let mut cut = frames(1, &[json!({"t": "done", "id": 1, "result": {"Ok": null}})]);
            cut.extend_from_slice(&(512u32 << 20).to_le_bytes());
            cut
        },
    ]
}
