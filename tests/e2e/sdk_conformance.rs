//! The vectors recorded from Cline's SDK tools (`tests/conformance/sdk_*.jsonl`, v4.1.12),
//! replayed through `toolhost --tools cline-sdk call` in a workspace of their own: each case's
//! files are written, the tool is called with the case's parameters, and the answer (with the
//! workspace's path written `{ws}`) and the files afterwards must be Cline's. The cases where
//! toolhost deliberately differs are listed with the reason, and are checked to differ. The
//! fetch vectors' pages are served on 127.0.0.1 as the recorder served them.

use std::path::Path;

use serde_json::Value;
use toolhost_tests::{cases, run, Case, Home};

/// Cases toolhost answers differently on purpose, by area and id, with why.
const DEVIATIONS: &[(&str, &str, &str)] = &[
    // toolhost's parameters are always a JSON object (Cline's runtime also takes a string or
    // an array as the whole input).
    (
        "sdk_read_files",
        "loose-string",
        "parameters are a JSON object",
    ),
    (
        "sdk_read_files",
        "loose-array-of-strings",
        "parameters are a JSON object",
    ),
    (
        "sdk_read_files",
        "loose-array-of-objects",
        "parameters are a JSON object",
    ),
    (
        "sdk_read_files",
        "loose-top-level-json-string",
        "parameters are a JSON object",
    ),
    (
        "sdk_read_files",
        "loose-filePath-in-array",
        "parameters are a JSON object",
    ),
    (
        "sdk_read_files",
        "orphan-range-after-string",
        "parameters are a JSON object",
    ),
    (
        "sdk_run_commands",
        "loose-top-level-string",
        "parameters are a JSON object",
    ),
    (
        "sdk_run_commands",
        "loose-top-level-array",
        "parameters are a JSON object",
    ),
    (
        "sdk_run_commands",
        "loose-top-level-structured-array",
        "parameters are a JSON object",
    ),
    (
        "sdk_run_commands",
        "loose-top-level-json-string",
        "parameters are a JSON object",
    ),
    // A path outside the workspace is asked about (and approved here) rather than refused.
    (
        "sdk_editor",
        "path-escapes-cwd",
        "outside the workspace: approval, not refusal",
    ),
    // The regex engine's own words for an invalid pattern (Rust's regex, not JavaScript's).
    (
        "sdk_search_codebase",
        "invalid-regex",
        "the regex engine's error text",
    ),
    // A hunk that does not fit fails the patch in both; toolhost's message names the lines it
    // did not find, Cline's SDK the best similarity it found.
    (
        "sdk_apply_patch",
        "hunk-does-not-match",
        "the mismatch is worded as the legacy tool's",
    ),
    (
        "sdk_apply_patch",
        "one-of-two-hunks-fails",
        "the mismatch is worded as the legacy tool's",
    ),
    (
        "sdk_apply_patch",
        "invalid-line",
        "the mismatch is worded as the legacy tool's",
    ),
    (
        "sdk_apply_patch",
        "unit-hunk-context-does-not-match",
        "the mismatch is worded as the legacy tool's",
    ),
    // A patch never overwrites a file it did not read (Cline's SDK does).
    (
        "sdk_apply_patch",
        "add-existing-file",
        "no overwrite by *** Add File",
    ),
    (
        "sdk_apply_patch",
        "move-onto-existing",
        "no overwrite by *** Move to",
    ),
    (
        "sdk_apply_patch",
        "path-escapes-cwd",
        "outside the workspace: approval, not refusal",
    ),
    // A patch with no file section says what a patch looks like.
    (
        "sdk_apply_patch",
        "empty-patch",
        "the error shows a valid patch",
    ),
    // The host coerces a value to the type its schema declares (a number where a string is
    // expected becomes that string), as it does for every tool's arguments.
    (
        "sdk_team",
        "task-number-title",
        "a number for a string field is coerced",
    ),
    // Node's spawn error text.
    (
        "sdk_run_commands",
        "structured-not-found",
        "a missing program's error is the OS's",
    ),
    (
        "sdk_run_commands",
        "unit-object-form-with-empty-args-is-direct-exec",
        "a missing program's error is the OS's",
    ),
];

fn deviation(area: &str, id: &str) -> bool {
    DEVIATIONS.iter().any(|(a, i, _)| *a == area && *i == id)
}

/// The files under `dir`, by path relative to it.
fn files_in(dir: &Path, base: &Path, out: &mut serde_json::Map<String, Value>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_in(&path, base, out);
        } else {
            let name = path.strip_prefix(base).unwrap().display().to_string();
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            out.insert(name, Value::String(text));
        }
    }
}

/// One tool's vectors: the area, the plugin library serving the tool, and the tool.
struct Area {
    name: &'static str,
    library: &'static str,
    tool: &'static str,
    /// What the settings say of the model (Cline's SDK routes by it).
    model: &'static str,
}

impl Area {
    /// An area whose library is named after its tool, for any model.
    const fn of(name: &'static str, tool: &'static str) -> Self {
        Self {
            name,
            library: tool,
            tool,
            model: "",
        }
    }
}

/// Whether toolhost's answer to `case` (a call of `area`'s tool) is Cline's; the reason when
/// not.
fn replay(area: &Area, case: &Case) -> Result<(), String> {
    // Cline's SDK recorded these without a model that takes images.
    let settings = format!(
        "[auto_approve]\nread_files = true\n[model]\nsupports_images = false\n{}",
        area.model
    );
    let home = Home::new(&settings, &[area.library]);
    let tool = area.tool;
    for (name, content) in case.input["files"].as_object().into_iter().flatten() {
        let path = home.ws.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content.as_str().unwrap_or_default()).unwrap();
    }
    let params = case.input["params"].to_string();
    let cwd = home.ws.display().to_string();
    let ran = run(home.toolhost().args([
        "--tools",
        "cline-sdk",
        "call",
        "--yes",
        tool,
        &params,
        "--cwd",
        &cwd,
    ]));
    let ours = ran.stdout.replace(&cwd, "{ws}");
    if let Some(output) = case.expect["output"].as_str() {
        if ours != output {
            return Err(format!("answer\n  ours:  {ours}\n  Cline: {output}"));
        }
    }
    if let Some(error) = case.expect["error"].as_str() {
        if !ours.contains(error) {
            return Err(format!("error\n  ours:  {ours}\n  Cline: {error}"));
        }
    }
    if let Some(expected) = case.expect["files"].as_object() {
        let mut after = serde_json::Map::new();
        files_in(&home.ws, &home.ws, &mut after);
        if &after != expected {
            return Err(format!(
                "files\n  ours:  {}\n  Cline: {}",
                Value::Object(after),
                Value::Object(expected.clone())
            ));
        }
    }
    Ok(())
}

fn replay_area(spec: &Area) {
    check_area(spec.name, |case| replay(spec, case));
}

/// Replays every case of `area` with `replay`: each must answer as Cline does, but the listed
/// deviations, which must each be a case that differs.
pub(crate) fn check_area(area: &str, replay: impl Fn(&Case) -> Result<(), String>) {
    let mut failed = Vec::new();
    let mut deviations = 0;
    for case in cases(area) {
        let outcome = replay(&case);
        match (deviation(area, &case.id), outcome) {
            (false, Err(why)) => failed.push(format!("{}: {why}", case.id)),
            (true, Ok(())) => failed.push(format!(
                "{}: listed as a deviation but answered as Cline does",
                case.id
            )),
            (true, Err(_)) => deviations += 1,
            (false, Ok(())) => {}
        }
    }
    assert!(failed.is_empty(), "{area}:\n{}", failed.join("\n"));
    let listed = DEVIATIONS.iter().filter(|(a, _, _)| *a == area).count();
    assert_eq!(
        deviations, listed,
        "{area}: every listed deviation is a case"
    );
}

#[test]
fn read_files_answers_as_clines_sdk() {
    replay_area(&Area::of("sdk_read_files", "read_files"));
}

#[test]
fn editor_answers_and_edits_as_clines_sdk() {
    replay_area(&Area::of("sdk_editor", "editor"));
}

#[test]
fn run_commands_answers_as_clines_sdk() {
    replay_area(&Area::of("sdk_run_commands", "run_commands"));
}

#[test]
fn search_codebase_answers_as_clines_sdk() {
    replay_area(&Area::of("sdk_search_codebase", "search_codebase"));
}

#[test]
fn apply_patch_answers_and_patches_as_clines_sdk() {
    replay_area(&Area {
        name: "sdk_apply_patch",
        library: "sdk_apply_patch",
        tool: "apply_patch",
        model: "id = \"gpt-5-codex\"\n",
    });
}

/// The pages of the fetch vectors, served on 127.0.0.1 as Cline's recorder served them
/// (status, `Content-Type`, `Location`, body); the server's address.
fn serve_pages(pages: &serde_json::Map<String, Value>) -> String {
    let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let port = server.server_addr().to_ip().unwrap().port();
    let pages = pages.clone();
    std::thread::spawn(move || {
        for request in server.incoming_requests() {
            let page = &pages[request.url()];
            let status = page["status"].as_u64().unwrap_or(404);
            let mut response =
                tiny_http::Response::from_string(page["body"].as_str().unwrap_or(""))
                    .with_status_code(u16::try_from(status).unwrap_or(404));
            for (name, key) in [("Content-Type", "type"), ("Location", "location")] {
                if let Some(value) = page[key].as_str() {
                    let header = tiny_http::Header::from_bytes(name, value).unwrap();
                    response = response.with_header(header);
                }
            }
            let _ = request.respond(response);
        }
    });
    format!("http://127.0.0.1:{port}")
}

#[test]
fn fetch_web_content_answers_as_clines_sdk() {
    check_area("sdk_fetch_web_content", replay_fetch);
}

/// Whether toolhost's answer to a fetch `case`, against its pages served again, is Cline's;
/// the reason when not.
fn replay_fetch(case: &Case) -> Result<(), String> {
    let base = serve_pages(case.input["pages"].as_object().unwrap());
    let port = base.rsplit(':').next().unwrap();
    let settings = format!("[egress]\nallow = [\"127.0.0.1:{port}\"]\n");
    let home = Home::new(&settings, &["fetch_web_content"]);
    let params = case.input["params"].to_string().replace("{base}", &base);
    let ran = run(home.toolhost().args([
        "--tools",
        "cline-sdk",
        "call",
        "--yes",
        "fetch_web_content",
        &params,
    ]));
    let ours = ran.stdout.replace(&base, "{base}");
    let matches = match (
        case.expect["output"].as_str(),
        case.expect["error"].as_str(),
    ) {
        (Some(output), _) => ours == output,
        (None, Some(error)) => format!("{ours}{}", ran.stderr).contains(error),
        (None, None) => false,
    };
    if matches {
        return Ok(());
    }
    Err(format!(
        "answer\n  ours:  {ours} {}\n  Cline: {}",
        ran.stderr, case.expect
    ))
}
