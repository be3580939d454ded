//! `.clineignore` access checks: every `access` case of the conformance data, through
//! `toolhost policy check-path` (the same check the host applies before every file tool).

use toolhost_tests::{cases, run, toolhost};

#[test]
fn access_conformance_cases() {
    let mut checked = 0;
    for case in cases("clineignore") {
        if case.input["kind"] != "access" {
            // The `command` cases belong to execute_command's permission check.
            continue;
        }
        let ws = tempfile::tempdir().unwrap();
        if let Some(text) = case.input["clineignore"].as_str() {
            std::fs::write(ws.path().join(".clineignore"), text).unwrap();
        }
        if let Some(files) = case.input["include_files"].as_object() {
            for (name, content) in files {
                std::fs::write(ws.path().join(name), content.as_str().unwrap()).unwrap();
            }
        }
        let path = case.input["path"]
            .as_str()
            .unwrap()
            .replace("$CWD", &ws.path().display().to_string());
        let result = run(toolhost()
            .args(["policy", "check-path", &path, "--cwd"])
            .arg(ws.path()));
        assert_eq!(result.code, 0, "case {}: {}", case.id, result.stderr);
        let allowed = case.expect["allowed"].as_bool().unwrap();
        assert_eq!(
            result.json()["ignored"],
            !allowed,
            "case {} ({path})",
            case.id
        );
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} access cases");
}
