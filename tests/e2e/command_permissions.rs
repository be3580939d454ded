//! CLINE_COMMAND_PERMISSIONS and the .clineignore command check: every conformance case through
//! the real `toolhost policy check-command`, the refusals through the real execute_command plugin
//! (proving the command never starts), and a corpus of attempts to get around a deny rule.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};
use toolhost_tests::{cases, run, toolhost, workdir, PluginDir, Run};

/// A case where the port deliberately refuses what Cline allowed, and the verdict it gives.
struct Deviation {
    id: &'static str,
    why: &'static str,
    reason: &'static str,
    failed_segment: Option<&'static str>,
    detected_operator: Option<&'static str>,
}

const DEVIATIONS: &[Deviation] = &[
    Deviation {
        id: "double-semicolon",
        why: "`;;` outside `case` is a syntax error bash refuses; Cline merged the words into one \
              segment. The port fails closed on commands it cannot parse.",
        reason: "shell_operator_detected",
        failed_segment: None,
        detected_operator: Some("parse_error"),
    },
    Deviation {
        id: "subshell-unbalanced",
        why: "an unclosed `$(` does not parse (bash refuses it too): fail closed",
        reason: "shell_operator_detected",
        failed_segment: None,
        detected_operator: Some("parse_error"),
    },
    Deviation {
        id: "subshell-close-only",
        why: "a stray `)` does not parse (bash refuses it too): fail closed",
        reason: "shell_operator_detected",
        failed_segment: None,
        detected_operator: Some("parse_error"),
    },
    Deviation {
        id: "unterminated-quote",
        why: "an unterminated quote does not parse (bash refuses it too): fail closed",
        reason: "shell_operator_detected",
        failed_segment: None,
        detected_operator: Some("parse_error"),
    },
    Deviation {
        id: "redirect-allowed-process-subst",
        why: "the commands inside `<( )` run too, and `ls` is not on the allow list; Cline only \
              looked at the merged text `diff ls ls`",
        reason: "segment_no_match",
        failed_segment: Some("ls"),
        detected_operator: None,
    },
];

/// `toolhost policy check-command` with CLINE_COMMAND_PERMISSIONS set to `env` (unset for None).
pub fn check_command(env: Option<&str>, command: &str, cwd: &Path) -> Value {
    let mut cmd = toolhost();
    permissions_env(&mut cmd, env);
    let result = run(cmd
        .args(["policy", "check-command", "--cwd"])
        .arg(cwd)
        .arg("--")
        .arg(command));
    assert_eq!(result.code, 0, "{command:?}: {}", result.stderr);
    result.json()
}

fn permissions_env(cmd: &mut Command, env: Option<&str>) {
    match env {
        Some(value) => cmd.env("CLINE_COMMAND_PERMISSIONS", value),
        None => cmd.env_remove("CLINE_COMMAND_PERMISSIONS"),
    };
}

fn plugins() -> PluginDir {
    let dir = PluginDir::empty();
    dir.add_library("execute_command");
    dir
}

/// Runs `command` through the real plugin, approved (`--yes`), with `BASH_ENV` pointing at a
/// script that leaves a marker: if any bash starts, the marker appears.
fn call_marked(plugins: &Path, ws: &Path, env: Option<&str>, command: &str) -> (Run, Value, bool) {
    let marker = ws.join("bash-started");
    let script = ws.join("bash-env.sh");
    std::fs::write(&script, format!("touch '{}'\n", marker.display())).unwrap();
    let mut cmd = toolhost();
    permissions_env(&mut cmd, env);
    cmd.env("BASH_ENV", &script).env("SHELL", "/bin/bash");
    let params = json!({"command": command, "requires_approval": "false"});
    let result = run(cmd
        .arg("--plugins")
        .arg(plugins)
        .args([
            "call",
            "execute_command",
            &params.to_string(),
            "--json",
            "--yes",
            "--cwd",
        ])
        .arg(ws));
    let json = result.json();
    let started = marker.exists();
    (result, json, started)
}

#[test]
fn conformance_cases() {
    let ws = workdir();
    let mut deviations_seen = 0;
    for case in cases("command_permissions") {
        let env = case.input["env"].as_str();
        let command = case.input["command"].as_str().unwrap();
        let got = check_command(env, command, ws.path());
        let expect = &case.expect;
        if let Some(deviation) = DEVIATIONS.iter().find(|d| d.id == case.id) {
            // Intended deviation: Cline allowed it, the port refuses it (see `why`).
            let why = deviation.why;
            assert_eq!(expect["allowed"], true, "case {} ({why})", case.id);
            assert_eq!(got["allowed"], false, "case {} ({why})", case.id);
            assert_eq!(got["reason"], deviation.reason, "case {}", case.id);
            assert_eq!(
                got["failed_segment"].as_str(),
                deviation.failed_segment,
                "case {}",
                case.id
            );
            assert_eq!(
                got["detected_operator"].as_str(),
                deviation.detected_operator,
                "case {}",
                case.id
            );
            assert_eq!(got["stricter_than_cline"], true, "case {}", case.id);
            deviations_seen += 1;
            continue;
        }
        let field = |name: &str| expect.get(name).cloned().unwrap_or(Value::Null);
        assert_eq!(
            (
                &got["allowed"],
                &got["reason"],
                &got["matched_pattern"],
                &got["detected_operator"],
                &got["failed_segment"],
                &got["denial_message"],
            ),
            (
                &expect["allowed"],
                &expect["reason"],
                &field("matched_pattern"),
                &field("detected_operator"),
                &field("failed_segment"),
                &field("denial_message"),
            ),
            "case {} ({command:?})",
            case.id
        );
        assert_eq!(got["stricter_than_cline"], false, "case {}", case.id);
    }
    assert_eq!(deviations_seen, DEVIATIONS.len());
}

#[test]
fn refused_commands_never_start() {
    let plugins = plugins();
    let mut checked = 0;
    for case in cases("command_permissions") {
        if case.expect["allowed"] == true {
            continue;
        }
        let ws = workdir();
        let env = case.input["env"].as_str();
        let command = case.input["command"].as_str().unwrap();
        let (result, json, started) = call_marked(plugins.path(), ws.path(), env, command);
        assert_eq!(
            json["text"], case.expect["tool_result"],
            "case {}: {}",
            case.id, result.stderr
        );
        assert_eq!(json["error_kind"], "blocked", "case {}", case.id);
        assert!(!started, "case {}: the command started", case.id);
        checked += 1;
    }
    assert!(checked >= 25, "only {checked} refused cases");

    // The marker check itself works: an allowed command does start bash.
    let ws = workdir();
    let (_, json, started) = call_marked(
        plugins.path(),
        ws.path(),
        Some(r#"{"deny":["rm *"]}"#),
        "echo ok",
    );
    assert_eq!(
        json["text"],
        "Command executed successfully (exit code 0).\nOutput:\nok"
    );
    assert!(started);
}

#[test]
fn refusals_name_the_hidden_command() {
    let plugins = plugins();
    let ws = workdir();
    let env = Some(r#"{"allow":["echo *","touch *"],"deny":["rm *"]}"#);
    for (command, message) in [
        (
            "touch made-1; echo \"$(rm -rf x)\"",
            "Segment \"rm -rf x\" segment_denied.",
        ),
        (
            "touch made-2 & rm -rf x",
            "Segment \"rm -rf x\" segment_denied.",
        ),
        (
            "echo \"$(touch made-3)\"; sudo rm -rf /",
            "Segment \"sudo rm -rf /\" segment_no_match.",
        ),
    ] {
        let (_, json, started) = call_marked(plugins.path(), ws.path(), env, command);
        assert_eq!(
            json["text"],
            format!(
                "The tool execution failed with the following error:\n<error>\nCommand execution \
                 blocked by CLINE_COMMAND_PERMISSIONS: Command \"{command}\" was denied by \
                 CLINE_COMMAND_PERMISSIONS. {message}. You must try a different approach or ask \
                 the user to update the permission settings.\n</error>"
            ),
            "{command}"
        );
        assert!(!started, "{command}");
    }
    for made in ["made-1", "made-2", "made-3"] {
        assert!(!ws.path().join(made).exists(), "{made} was created");
    }
}

#[test]
fn clineignore_command_cases() {
    let mut checked = 0;
    for case in cases("clineignore") {
        if case.input["kind"] != "command" {
            continue;
        }
        let ws = workdir();
        if let Some(text) = case.input["clineignore"].as_str() {
            std::fs::write(ws.path().join(".clineignore"), text).unwrap();
        }
        if let Some(files) = case.input["include_files"].as_object() {
            for (name, content) in files {
                std::fs::write(ws.path().join(name), content.as_str().unwrap()).unwrap();
            }
        }
        let command = case.input["command"]
            .as_str()
            .unwrap()
            .replace("$CWD", &ws.path().display().to_string());
        let got = check_command(None, &command, ws.path());
        assert_eq!(
            got["clineignore_path"], case.expect["blocked_path"],
            "case {} ({command})",
            case.id
        );
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} command cases");
}

#[test]
fn clineignore_blocks_before_anything_runs() {
    let plugins = plugins();
    let ws = workdir();
    std::fs::write(ws.path().join(".clineignore"), "secrets/\n").unwrap();
    let (_, json, started) = call_marked(plugins.path(), ws.path(), None, "cat secrets/key.txt");
    assert_eq!(
        json["text"],
        "The tool execution failed with the following error:\n<error>\nAccess to secrets/key.txt \
         is blocked by the .clineignore file settings. You must try to continue in the task \
         without using this file, or ask the user to update the .clineignore file.\n</error>"
    );
    assert!(!started);
}

/// Attempts to run `rm -rf x` past a deny rule on `rm *`.
const BYPASSES: &[&str] = &[
    "rm -rf x",
    "ls && rm -rf x",
    "ls || rm -rf x",
    "ls | rm -rf x",
    "ls; rm -rf x",
    "ls;rm -rf x",
    "ls & rm -rf x",
    "ls &rm -rf x",
    "ls ;; rm -rf x",
    "ls |& rm -rf x",
    "ls\nrm -rf x",
    "ls\r\nrm -rf x",
    "(rm -rf x)",
    "( ls; rm -rf x )",
    "{ rm -rf x; }",
    "echo $(rm -rf x)",
    "echo \"$(rm -rf x)\"",
    "echo \"a $(rm -rf x) b\"",
    "echo `rm -rf x`",
    "echo \"`rm -rf x`\"",
    "echo \"$(echo \"$(rm -rf x)\")\"",
    "cat <(rm -rf x)",
    "echo x > >(rm -rf x)",
    "diff <(ls) <(rm -rf x)",
    "cat <<EOF\n$(rm -rf x)\nEOF",
    "bash -c 'rm -rf x'",
    "sh -c \"rm -rf x\"",
    "zsh -c 'rm -rf x'",
    "bash -lc 'rm -rf x'",
    "bash -c 'ls; rm -rf x'",
    "bash -c \"bash -c 'rm -rf x'\"",
    "bash -c 'cat <<EOF\n$(rm -rf x)\nEOF'",
    "eval 'rm -rf x'",
    "eval rm -rf x",
    "eval \"$(echo rm -rf x)\"",
    "env rm -rf x",
    "env -i PATH=/bin rm -rf x",
    "command rm -rf x",
    "exec rm -rf x",
    "nice -n 10 rm -rf x",
    "nohup rm -rf x",
    "timeout 5 rm -rf x",
    "timeout -s KILL 5 rm -rf x",
    "echo x | xargs rm -rf",
    "ls | xargs -0 -n1 rm",
    "sudo rm -rf x",
    "sudo -u root rm -rf x",
    "sudo -s rm -rf x",
    "sudo env FOO=1 nice rm -rf x",
    "/bin/rm -rf x",
    "/usr/bin/rm -rf x",
    "\"rm\" -rf x",
    "r''m -rf x",
    "\\rm -rf x",
    "FOO=1 rm -rf x",
    "$'rm' -rf x",
    "$'\\x72m' -rf x",
    "CMD=rm; $CMD -rf x",
    "${CMD:-rm} -rf x",
    "$(echo rm) -rf x",
    "r{m,} -rf x",
    "/bin/r? -rf x",
    "/bin/r[m] -rf x",
    "rm$IFS-rf x",
    "f() { rm -rf x; }; f",
    "function g { rm -rf x; }; g",
    "if true; then rm -rf x; fi",
    "for i in 1; do rm -rf x; done",
    "while rm -rf x; do break; done",
    "case a in a) rm -rf x;; esac",
    "find . -exec rm -rf {} \\;",
    "find . -name y -execdir rm {} +",
    "echo 'rm -rf x' | bash",
    "echo 'rm -rf x' | sh -s",
    "bash <<< 'rm -rf x'",
    "bash <<< \"$(echo rm -rf x)\"",
    "trap 'rm -rf x' EXIT",
    "watch rm -rf x",
    "flock /tmp/l -c 'rm -rf x'",
    "su root -c 'rm -rf x'",
    "busybox rm -rf x",
    "x=$(rm -rf x)",
    "a[$(rm -rf x)]=1",
    "echo ${x:-$(rm -rf x)}",
    "echo $(( $(rm -rf x) + 1 ))",
    "(( a[$(rm -rf x)] ))",
    "[[ $(rm -rf x) ]]",
    "echo hi > $(rm -rf x)",
    "x='a[$(rm -rf x)]'; echo $((x))",
    "alias r='rm -rf'; r x",
    "ls a#b; rm -rf x",
    "{rm,'-rf'} x",
    "{rm,\"-rf\"} x",
    "hash -p /bin/rm ls; ls -rf x",
    "sh < <(echo rm -rf x)",
    "bash /dev/stdin <<< 'rm -rf x'",
    "source /dev/stdin <<< 'rm -rf x'",
    "source <(echo rm -rf x)",
    ". <(echo rm -rf x)",
    "time -p rm -rf x",
    "! rm -rf x",
    "coproc rm -rf x",
    "exec -a ls rm -rf x",
    "/usr/bin/../bin/rm -rf x",
    "ls | xargs sh -c 'rm -rf \"$1\"' _",
    "find . -exec sh -c 'rm -rf \"$1\"' _ {} \\;",
    "sh -c 'eval \"$1\"' _ 'rm -rf x'",
    "bash -c '$0 -rf x' rm",
    "set -- rm -rf x; \"$@\"",
    "ls() { rm \"$@\"; }; ls -rf x",
];

#[test]
fn a_deny_rule_cannot_be_escaped() {
    assert!(BYPASSES.len() >= 50);
    let ws = workdir();
    for env in [
        r#"{"deny":["rm *"]}"#,
        r#"{"deny":["rm *"],"allowRedirects":true}"#,
        r#"{"allow":["echo *","ls *","ls","cat *"],"deny":["rm *"],"allowRedirects":true}"#,
    ] {
        for command in BYPASSES {
            let got = check_command(Some(env), command, ws.path());
            assert_eq!(
                got["allowed"], false,
                "{env}: {command:?} was allowed: {got}"
            );
        }
    }
    // Without the rule the same commands are not all refused: the check is not just refusing
    // everything unusual.
    let got = check_command(
        Some(r#"{"deny":["mv *"]}"#),
        "sudo -u root rm -rf x",
        ws.path(),
    );
    assert_eq!(got["allowed"], true);
}

#[test]
fn escapes_never_start_through_the_plugin() {
    let plugins = plugins();
    let env = Some(r#"{"deny":["rm *"],"allowRedirects":true}"#);
    for command in BYPASSES {
        let ws = workdir();
        let (result, json, started) = call_marked(plugins.path(), ws.path(), env, command);
        assert_eq!(
            json["error_kind"], "blocked",
            "{command:?}: {}",
            result.stdout
        );
        assert!(!started, "{command:?} started");
    }
}

#[test]
fn ordinary_commands_stay_allowed() {
    let ws = workdir();
    let env = Some(
        r#"{"allow":["npm *","git *","cd *","echo *","ls","ls *","cat *","grep *"],"deny":["rm *","git push*"]}"#,
    );
    for command in [
        "npm test && git status",
        "cd src && npm run build -- --watch=false",
        "ls -la | grep foo",
        "echo \"hello $HOME\"",
        "cat ~/.bashrc",
        "ls *.txt",
        "git log --oneline | grep fix",
        "echo done # rm -rf /",
        "npm run test & ls",
        "echo ${X:-a b}",
        "echo \"$(ls)\"",
    ] {
        let got = check_command(env, command, ws.path());
        assert_eq!(got["allowed"], true, "{command:?}: {got}");
    }
    for (command, segment) in [
        ("git $SUB origin", "git $SUB origin"),
        ("ls && git push origin", "git push origin"),
    ] {
        let got = check_command(env, command, ws.path());
        assert_eq!(got["allowed"], false, "{command:?}");
        assert_eq!(got["failed_segment"], segment, "{command:?}");
    }
}
