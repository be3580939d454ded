//! A process confining itself (`apply_to_current_process`, through the crate's small
//! executable in `--confine` mode): reads limited to named roots, programs refused.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::Command;

use toolhost_sandbox::{FilesystemMode, SandboxPolicy};

const EXEC: &str = env!("CARGO_BIN_EXE_toolhost-sandbox-exec");

#[test]
fn a_confined_process_reads_only_its_roots_and_can_be_kept_from_starting_programs() {
    let dir = tempfile::tempdir().unwrap();
    let (ws, outside) = (dir.path().join("ws"), dir.path().join("outside"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("private.txt"), "private-value").unwrap();
    std::fs::write(ws.join("open.txt"), "open-value").unwrap();
    let mut readable: Vec<PathBuf> = ["/usr", "/lib", "/lib64", "/bin", "/etc", "/dev/null"]
        .iter()
        .map(PathBuf::from)
        .collect();
    readable.push(ws.clone());
    let mut policy = SandboxPolicy {
        filesystem: FilesystemMode::ReadOnly,
        readable_roots: Some(readable),
        ..SandboxPolicy::default()
    };
    let confined = |policy: &SandboxPolicy, script: &str| {
        let output = Command::new(EXEC)
            .arg("--confine")
            .arg("--policy")
            .arg(policy.to_json())
            .args(["--", "/bin/bash", "-c", script])
            .current_dir(&ws)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        (output.status.success(), text)
    };
    let script = format!(
        "cat open.txt; cat {}/private.txt; echo end",
        outside.display()
    );
    let (_, text) = confined(&policy, &script);
    assert!(
        text.contains("open-value") && text.contains("end"),
        "{text}"
    );
    assert!(!text.contains("private-value"), "{text}");

    policy.spawn = false;
    let (ran, text) = confined(&policy, "echo started");
    assert!(!ran && !text.contains("started"), "{text}");
    assert!(text.contains("not permitted"), "{text}");
}
