//! The plan preset's rule on Cline's SDK examples.

use super::*;

fn shell(command: &str) -> Option<String> {
    file_editing(Entry::Shell(command))
}

#[test]
fn commands_that_modify_files_are_named() {
    assert_eq!(shell("rm -rf x").as_deref(), Some("`rm`"));
    assert_eq!(
        shell("echo hi > out.txt").as_deref(),
        Some("output redirection (`> out.txt`)")
    );
    assert_eq!(shell("git stash").as_deref(), Some("`git stash`"));
    assert_eq!(
        shell("sudo apt-get install foo").as_deref(),
        Some("`apt-get install`")
    );
    assert_eq!(
        shell("sed -i s/a/b/ f").as_deref(),
        Some("`sed -i` (in-place edit)")
    );
    assert_eq!(shell("find . -exec rm {} \\;").as_deref(), Some("`rm`"));
    assert_eq!(
        shell("cat <<EOF > f\nrm x\nEOF").as_deref(),
        Some("output redirection (`> f`)")
    );
    assert_eq!(shell("FOO=1 timeout 30 mv a b").as_deref(), Some("`mv`"));
    assert_eq!(
        shell("python -m pip install x").as_deref(),
        Some("`pip install`")
    );
    assert_eq!(
        shell("curl -o f http://x").as_deref(),
        Some("`curl -o` (writes a file)")
    );
    assert_eq!(
        shell("wget http://x").as_deref(),
        Some("`wget` (downloads files)")
    );
    assert_eq!(shell("yarn").as_deref(), Some("`yarn` (install)"));
    let args = vec!["x".to_string()];
    assert_eq!(
        file_editing(Entry::Argv("rm", &args)).as_deref(),
        Some("`rm`")
    );
}

#[test]
fn reading_commands_pass() {
    for command in [
        "echo hi > /tmp/x",
        "ls 2>&1 | tee /tmp/log",
        "ls >> /dev/null",
        "git status",
        "git stash list",
        "npm test",
        "echo 'rm -rf /'",
        "cargo build",
        "grep -rn foo . | head",
    ] {
        assert_eq!(shell(command), None, "{command}");
    }
    let args = vec![">".to_string(), "f".to_string()];
    assert_eq!(file_editing(Entry::Argv("echo", &args)), None);
}

#[test]
fn the_refusal_is_clines() {
    assert!(refusal("`rm`").starts_with(
        "Command not executed: `rm` can modify files, and file modifications are blocked in plan mode. You are in PLAN MODE — explore"
    ));
}

/// Every case recorded from Cline's SDK guard (`tests/conformance/sdk_plan_guard.jsonl`):
/// the same part named, or none.
#[test]
fn the_recorded_cases_of_clines_guard() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/conformance/sdk_plan_guard.jsonl"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut failed = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
        let command = case["input"]["command"].as_str().unwrap_or_default();
        let args: Option<Vec<String>> = case["input"]["args"].as_array().map(|items| {
            items
                .iter()
                .filter_map(|a| a.as_str().map(str::to_string))
                .collect()
        });
        let entry = match &args {
            Some(args) => Entry::Argv(command, args),
            None => Entry::Shell(command),
        };
        let ours = file_editing(entry);
        let cline = case["expect"]["blocked_by"].as_str().map(str::to_string);
        if ours != cline {
            failed.push(format!("{}: ours {ours:?}, Cline {cline:?}", case["id"]));
        }
        if let (Some(message), Some(reason)) = (case["expect"]["message"].as_str(), &cline) {
            if refusal(reason) != message {
                failed.push(format!("{}: the refusal text differs", case["id"]));
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
