//! CLINE_COMMAND_PERMISSIONS and the .clineignore command check: every conformance case through
//! the real `toolhost policy check-command`, the refusals through the real execute_command plugin
//! (proving the command never starts), a corpus of attempts to get around a deny rule, and a
//! corpus of expansions and options that run code or write files, each refused with its marker
//! left untouched (and, run without permissions, shown to have its effect).

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
        id: "env-invalid-json",
        why: "a value that is not JSON refuses every command and names the problem; Cline \
              ignored it, silently dropping the rules someone meant to set",
        reason: "invalid_config",
        failed_segment: None,
        detected_operator: None,
    },
    Deviation {
        id: "env-json-array",
        why: "a JSON array is not a permissions object: every command is refused, as for any \
              malformed value (Cline took it for an empty configuration)",
        reason: "invalid_config",
        failed_segment: None,
        detected_operator: None,
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

/// `toolhost policy check-command --json` with CLINE_COMMAND_PERMISSIONS set to `env` (unset
/// for None). Its exit code is 0 when execute_command would run the command, 1 when it would
/// refuse it.
pub fn check_command(env: Option<&str>, command: &str, cwd: &Path) -> Value {
    let mut cmd = toolhost();
    permissions_env(&mut cmd, env);
    let result = run(cmd
        .args(["policy", "check-command", "--json", "--cwd"])
        .arg(cwd)
        .arg("--")
        .arg(command));
    let json = result.json();
    let runs = json["allowed"] == true && json["clineignore_path"].is_null();
    assert_eq!(
        result.code,
        if runs { 0 } else { 1 },
        "{command:?}: {}",
        result.stderr
    );
    json
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
    call_marked_with(plugins, ws, env, command, None)
}

/// [`call_marked`] with a settings file.
fn call_marked_with(
    plugins: &Path,
    ws: &Path,
    env: Option<&str>,
    command: &str,
    settings: Option<&Path>,
) -> (Run, Value, bool) {
    let marker = ws.join("bash-started");
    let script = ws.join("bash-env.sh");
    std::fs::write(&script, format!("touch '{}'\n", marker.display())).unwrap();
    let mut cmd = toolhost();
    permissions_env(&mut cmd, env);
    cmd.env("BASH_ENV", &script).env("SHELL", "/bin/bash");
    if let Some(settings) = settings {
        cmd.arg("--settings").arg(settings);
    }
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

/// What an attack does when it runs.
#[derive(Clone, Copy)]
enum Effect {
    /// It creates this file in the workspace.
    Creates(&'static str),
    /// It deletes this file of the workspace.
    Deletes(&'static str),
}

/// A command that does something the policy should refuse.
struct Attack {
    policy: &'static str,
    command: &'static str,
    /// The reason code of the refusal (None: any refusal).
    reason: Option<&'static str>,
    effect: Effect,
    /// A program the attack needs to do anything: when it is installed, the attack is also run
    /// without permissions, to show that it really has its effect.
    control: Option<&'static str>,
}

/// The attacker's policy of the reported bypass.
const ATTACKER: &str = r#"{"allow":["git *","ls *"],"deny":["rm *"]}"#;
const DENY_RM: &str = r#"{"deny":["rm *"],"allowRedirects":true}"#;
/// Programs allowed with a wildcard.
const WILDCARDS: &str = r#"{"allow":["git *","ls *","echo *","cat *","sed *","find *","xargs *","tar *","awk *","sort *","tee *","dd *","uniq *","curl *","wget *","zip *","ssh *","man *","rg *","rsync *"],"deny":["rm *"]}"#;

const fn attack(
    policy: &'static str,
    command: &'static str,
    reason: &'static str,
    effect: Effect,
    control: &'static str,
) -> Attack {
    Attack {
        policy,
        command,
        reason: if reason.is_empty() {
            None
        } else {
            Some(reason)
        },
        effect,
        control: if control.is_empty() {
            None
        } else {
            Some(control)
        },
    }
}

use Effect::{Creates, Deletes};

const UNSAFE: &str = "unsafe_expansion";
const RISKY: &str = "risky_option";

const ATTACKS: &[Attack] = &[
    // Constructs whose effect the check cannot compute.
    attack(
        ATTACKER,
        r"ls ${x:=\$(rm\ victim)} ${x@P}",
        UNSAFE,
        Deletes("victim"),
        "bash",
    ),
    attack(
        ATTACKER,
        r"ls ${y:=a[\$(rm\ victim)]} $((y))",
        UNSAFE,
        Deletes("victim"),
        "bash",
    ),
    attack(
        ATTACKER,
        r"ls ${y:=a[\$(rm\ victim)]} ${z[y]}",
        UNSAFE,
        Deletes("victim"),
        "bash",
    ),
    attack(
        ATTACKER,
        r"ls ${y:=a[\$(rm\ victim)]} ${PATH:y:1}",
        UNSAFE,
        Deletes("victim"),
        "bash",
    ),
    attack(
        ATTACKER,
        r"ls ${y:=a[\$(rm\ victim)]} $[y]",
        UNSAFE,
        Deletes("victim"),
        "bash",
    ),
    attack(
        DENY_RM,
        r"ls ${y:=a[\$(rm\ victim)]}; (( y ))",
        UNSAFE,
        Deletes("victim"),
        "bash",
    ),
    attack(
        DENY_RM,
        r"ls ${y:=a[\$(rm\ victim)]}; let y",
        UNSAFE,
        Deletes("victim"),
        "bash",
    ),
    attack(
        DENY_RM,
        r"ls ${y:=a[\$(rm\ victim)]}; [[ $y -eq 1 ]]",
        UNSAFE,
        Deletes("victim"),
        "bash",
    ),
    attack(
        DENY_RM,
        r"ls ${y:=a[\$(rm\ victim)]}; for ((;y;)); do break; done",
        UNSAFE,
        Deletes("victim"),
        "bash",
    ),
    attack(
        DENY_RM,
        r"ls ${y:=a[\$(rm\ victim)]}; declare -i z; z=y",
        UNSAFE,
        Deletes("victim"),
        "bash",
    ),
    attack(
        DENY_RM,
        r"ls ${y:=a[\$(rm\ victim)]}; declare -n r=$y; echo $r",
        UNSAFE,
        Deletes("victim"),
        "bash",
    ),
    attack(
        DENY_RM,
        r"ls ${y:=a[\$(rm\ victim)]}; echo ${!y}",
        UNSAFE,
        Deletes("victim"),
        "bash",
    ),
    attack(
        DENY_RM,
        r"read a[\$\(rm\ victim\)] <<< x",
        UNSAFE,
        Deletes("victim"),
        "bash",
    ),
    attack(
        DENY_RM,
        r"printf -v a[\$\(rm\ victim\)] x",
        UNSAFE,
        Deletes("victim"),
        "bash",
    ),
    attack(
        DENY_RM,
        r"test -v a[\$\(rm\ victim\)]",
        UNSAFE,
        Deletes("victim"),
        "bash",
    ),
    attack(
        DENY_RM,
        r"PS4=\$\(rm\ victim\); set -x; :",
        UNSAFE,
        Deletes("victim"),
        "bash",
    ),
    attack(
        DENY_RM,
        "env 'BASH_FUNC_ls%%=() { rm victim; }' bash -c ls",
        "segment_denied",
        Deletes("victim"),
        "bash",
    ),
    attack(
        DENY_RM,
        "env 'A%=1' rm victim",
        "segment_denied",
        Deletes("victim"),
        "bash",
    ),
    attack(
        DENY_RM,
        "echo 'rm victim' | xargs -I{} sh -c '{}'",
        "dynamic_command",
        Deletes("victim"),
        "xargs",
    ),
    attack(
        DENY_RM,
        "echo \"$( ( rm victim ) )\"",
        "",
        Deletes("victim"),
        "bash",
    ),
    attack(
        DENY_RM,
        r"read PS4 <<< $'\x24(rm victim)'; set -x; :",
        UNSAFE,
        Deletes("victim"),
        "bash",
    ),
    attack(
        DENY_RM,
        r"for PS4 in $'\x24(rm victim)'; do set -x; :; done",
        UNSAFE,
        Deletes("victim"),
        "bash",
    ),
    // Options that run code or write files, under wildcard allow rules.
    attack(
        WILDCARDS,
        "git -c alias.x='!touch made' x",
        RISKY,
        Creates("made"),
        "git",
    ),
    attack(
        WILDCARDS,
        "git -c alias.x='!rm victim' x",
        "segment_denied",
        Deletes("victim"),
        "git",
    ),
    attack(
        WILDCARDS,
        "git diff --no-index --output=made f f",
        RISKY,
        Creates("made"),
        "git",
    ),
    attack(
        WILDCARDS,
        "git config alias.x '!touch made' && git x",
        RISKY,
        Creates("made"),
        "git",
    ),
    attack(
        WILDCARDS,
        "git clone -q --upload-pack='touch made' . d",
        RISKY,
        Creates("made"),
        "git",
    ),
    attack(
        WILDCARDS,
        "git clone -q 'ext::sh -c touch% made' d",
        RISKY,
        Creates("made"),
        "",
    ),
    attack(
        WILDCARDS,
        "git rebase --exec 'touch made' HEAD",
        RISKY,
        Creates("made"),
        "",
    ),
    attack(
        WILDCARDS,
        "git bisect run touch made",
        RISKY,
        Creates("made"),
        "",
    ),
    attack(
        WILDCARDS,
        "git submodule foreach 'touch made'",
        RISKY,
        Creates("made"),
        "",
    ),
    attack(
        WILDCARDS,
        "git difftool -x 'touch made' HEAD",
        RISKY,
        Creates("made"),
        "",
    ),
    attack(
        WILDCARDS,
        "git grep -O'touch made' a",
        RISKY,
        Creates("made"),
        "",
    ),
    attack(
        WILDCARDS,
        "git filter-branch --tree-filter 'touch made' HEAD",
        RISKY,
        Creates("made"),
        "",
    ),
    attack(WILDCARDS, "git --exec-path=. x", RISKY, Creates("made"), ""),
    attack(WILDCARDS, "git log $OPT", RISKY, Creates("made"), ""),
    attack(
        WILDCARDS,
        "find . -name f -fprint made",
        RISKY,
        Creates("made"),
        "find",
    ),
    attack(
        WILDCARDS,
        "find . -name victim -delete",
        RISKY,
        Deletes("victim"),
        "find",
    ),
    attack(
        WILDCARDS,
        "find . -name f -exec touch made ';'",
        "",
        Creates("made"),
        "find",
    ),
    attack(
        WILDCARDS,
        "sed -n 'w made' f",
        RISKY,
        Creates("made"),
        "sed",
    ),
    attack(
        WILDCARDS,
        "sed 's/a/b/w made' f",
        RISKY,
        Creates("made"),
        "sed",
    ),
    attack(
        WILDCARDS,
        "sed -n '1e touch made' f",
        RISKY,
        Creates("made"),
        "sed",
    ),
    attack(
        WILDCARDS,
        "sed -i.bak s/a/b/ f",
        RISKY,
        Creates("f.bak"),
        "sed",
    ),
    attack(WILDCARDS, "sed -f script f", RISKY, Creates("made"), "sed"),
    attack(
        WILDCARDS,
        "tar -cf x.tar f && tar -xf x.tar --to-command='touch made'",
        RISKY,
        Creates("made"),
        "tar",
    ),
    attack(
        WILDCARDS,
        "tar -cf x.tar --checkpoint=1 --checkpoint-action=exec='touch made' f",
        RISKY,
        Creates("made"),
        "tar",
    ),
    attack(
        WILDCARDS,
        "tar -I 'touch made' -cf x.tar f",
        RISKY,
        Creates("made"),
        "tar",
    ),
    attack(
        WILDCARDS,
        "awk 'BEGIN{system(\"touch made\")}'",
        RISKY,
        Creates("made"),
        "awk",
    ),
    attack(
        WILDCARDS,
        "awk 'BEGIN{print 1 > \"made\"}'",
        RISKY,
        Creates("made"),
        "awk",
    ),
    attack(WILDCARDS, "sort -o made f", RISKY, Creates("made"), "sort"),
    attack(
        WILDCARDS,
        "echo x | tee made",
        RISKY,
        Creates("made"),
        "tee",
    ),
    attack(WILDCARDS, "dd if=f of=made", RISKY, Creates("made"), "dd"),
    attack(WILDCARDS, "uniq f made", RISKY, Creates("made"), "uniq"),
    attack(
        WILDCARDS,
        "curl -s -o made file:///etc/hostname",
        RISKY,
        Creates("made"),
        "curl",
    ),
    attack(
        WILDCARDS,
        "wget -q -O made http://127.0.0.1:9/",
        RISKY,
        Creates("made"),
        "wget",
    ),
    attack(
        WILDCARDS,
        "zip -q a.zip f -T -TT 'touch made'",
        RISKY,
        Creates("made"),
        "zip",
    ),
    attack(
        WILDCARDS,
        "ssh -o ProxyCommand='touch made' -o BatchMode=yes x",
        RISKY,
        Creates("made"),
        "ssh",
    ),
    attack(
        WILDCARDS,
        "man -P 'touch made' ls",
        RISKY,
        Creates("made"),
        "",
    ),
    attack(
        WILDCARDS,
        "rg --pre ./pre.sh x f",
        RISKY,
        Creates("made"),
        "",
    ),
    attack(
        WILDCARDS,
        "rsync -e 'touch made' f h:d",
        RISKY,
        Creates("made"),
        "",
    ),
    // xargs runs its command: `xargs *` does not allow what `touch` would do.
    attack(
        WILDCARDS,
        "echo made | xargs touch",
        "segment_no_match",
        Creates("made"),
        "xargs",
    ),
    attack(
        WILDCARDS,
        "echo made | xargs -I % touch %",
        "segment_no_match",
        Creates("made"),
        "xargs",
    ),
];

/// A workspace with what the attacks use: a git repository, `victim`, `f`, a sed script.
fn attack_workspace() -> tempfile::TempDir {
    let ws = workdir();
    let dir = ws.path();
    std::fs::write(dir.join("victim"), "keep me\n").unwrap();
    std::fs::write(dir.join("f"), "a\n").unwrap();
    std::fs::write(dir.join("script"), "w made\n").unwrap();
    if installed("git") {
        let git = Command::new("git")
            .args(["init", "-q"])
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(git.success());
    }
    ws
}

fn installed(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn happened(effect: Effect, ws: &Path) -> bool {
    match effect {
        Effect::Creates(file) => ws.join(file).exists(),
        Effect::Deletes(file) => !ws.join(file).exists(),
    }
}

#[test]
fn hardening_corpus_never_runs() {
    let plugins = plugins();
    let settings_dir = workdir();
    let unsandboxed = settings_dir.path().join("settings.toml");
    std::fs::write(&unsandboxed, "[execute_command]\nsandbox = \"off\"\n").unwrap();
    let mut controls = 0;
    for attack in ATTACKS {
        let ws = attack_workspace();
        let (result, json, started) = call_marked(
            plugins.path(),
            ws.path(),
            Some(attack.policy),
            attack.command,
        );
        assert_eq!(
            json["error_kind"], "blocked",
            "{:?} was not refused: {}",
            attack.command, result.stdout
        );
        if let Some(reason) = attack.reason {
            let text = json["text"].as_str().unwrap_or_default();
            assert!(
                text.contains(&format!(" {reason}")),
                "{:?}: not refused as {reason}: {text}",
                attack.command
            );
        }
        assert!(!started, "{:?} started a shell", attack.command);
        assert!(
            !happened(attack.effect, ws.path()),
            "{:?} had its effect",
            attack.command
        );
        // The control: without permissions, the same command does what the policy prevents.
        // It runs without the sandbox, which would stop some of them by itself (git's
        // configuration is read-only in it).
        if attack.control.is_some_and(installed) {
            let ws = attack_workspace();
            let (result, _, _) = call_marked_with(
                plugins.path(),
                ws.path(),
                None,
                attack.command,
                Some(&unsandboxed),
            );
            assert!(
                happened(attack.effect, ws.path()),
                "{:?} does nothing even without permissions: {}",
                attack.command,
                result.stdout
            );
            controls += 1;
        }
    }
    // bash and the core utilities are always there; most controls run.
    assert!(controls >= 30, "only {controls} controls ran");
}

#[test]
fn harmless_forms_stay_allowed() {
    let ws = workdir();
    for (policy, command) in [
        (DENY_RM, "echo $((1024*1024)) $((0x10 + 2#101))"),
        (
            DENY_RM,
            "echo ${a[0]} ${!a[@]} ${x:1:2} ${#x} ${x:-default}",
        ),
        (DENY_RM, "[[ 1 -eq 1 ]] && echo yes"),
        (WILDCARDS, "git status"),
        (WILDCARDS, "git push -u origin main"),
        (WILDCARDS, "git config --get user.name"),
        (WILDCARDS, "sed -n 1p f"),
        (WILDCARDS, "find . -name '*.rs'"),
        (WILDCARDS, "tar -xzf a.tgz"),
        (WILDCARDS, "awk '$1 > 2 {print $1}' f"),
        (WILDCARDS, "sort -u f"),
        (WILDCARDS, "echo x | xargs echo"),
        (r#"{"allow":["git -c *"]}"#, "git -c core.pager=cat log"),
        (r#"{"allow":["sed -i *"]}"#, "sed -i s/a/b/ f"),
    ] {
        let got = check_command(Some(policy), command, ws.path());
        assert_eq!(got["allowed"], true, "{policy} {command:?}: {got}");
    }
}

/// Deliberate change: Cline ignores a malformed CLINE_COMMAND_PERMISSIONS (no restriction);
/// toolhost refuses every command and says what is wrong.
#[test]
fn malformed_permissions_refuse_every_command() {
    let plugins = plugins();
    for (value, problem) in [
        (
            "{allow: [x]}",
            "CLINE_COMMAND_PERMISSIONS is not valid JSON (key must be a string at line 1 column 2)",
        ),
        (
            "not json",
            "CLINE_COMMAND_PERMISSIONS is not valid JSON (expected ident at line 1 column 2)",
        ),
        (
            "[]",
            "CLINE_COMMAND_PERMISSIONS is not a JSON object (it is an array)",
        ),
        (
            "true",
            "CLINE_COMMAND_PERMISSIONS is not a JSON object (it is a boolean)",
        ),
        (
            r#"{"allow":"echo *"}"#,
            "`allow` in CLINE_COMMAND_PERMISSIONS is not an array of strings (it is a string)",
        ),
        (
            r#"{"deny":["rm *", 3]}"#,
            "`deny` in CLINE_COMMAND_PERMISSIONS is not an array of strings (entry 2 is a number)",
        ),
        (
            r#"{"allowRedirects":"yes"}"#,
            "`allowRedirects` in CLINE_COMMAND_PERMISSIONS is not a boolean (it is a string)",
        ),
    ] {
        let ws = workdir();
        let (_, json, started) = call_marked(plugins.path(), ws.path(), Some(value), "touch made");
        assert_eq!(
            json["text"],
            format!(
                "The tool execution failed with the following error:\n<error>\nCommand execution \
                 blocked by CLINE_COMMAND_PERMISSIONS: Command \"touch made\" was denied by \
                 CLINE_COMMAND_PERMISSIONS. Reason: invalid_config: {problem}; every command is \
                 refused until it is fixed. You must try a different approach or ask the user to \
                 update the permission settings.\n</error>"
            ),
            "{value}"
        );
        assert!(!started && !ws.path().join("made").exists(), "{value}");
        let got = check_command(Some(value), "ls", ws.path());
        assert_eq!(got["reason"], "invalid_config", "{value}");
        assert_eq!(
            got["configuration_problem"],
            format!("{problem}; every command is refused until it is fixed"),
            "{value}"
        );
    }
    // Unset, empty and null restrict nothing: the same command runs.
    for value in [None, Some(""), Some("null")] {
        let ws = workdir();
        let (_, json, _) = call_marked(plugins.path(), ws.path(), value, "touch made");
        assert_eq!(json["error_kind"], Value::Null, "{value:?}: {json}");
        assert!(ws.path().join("made").exists(), "{value:?}");
    }
}

#[test]
fn redirect_operands_match_as_in_cline() {
    let plugins = plugins();
    let ws = workdir();
    std::fs::write(ws.path().join("input.txt"), "from the file\n").unwrap();
    let policy = Some(r#"{"allow":["cat *","echo *"],"allowRedirects":true}"#);
    let (_, json, _) = call_marked(plugins.path(), ws.path(), policy, "cat < input.txt");
    assert_eq!(
        json["text"],
        "Command executed successfully (exit code 0).\nOutput:\nfrom the file"
    );
    let (_, json, _) = call_marked(plugins.path(), ws.path(), policy, "echo > out.txt");
    assert_eq!(json["error_kind"], Value::Null, "{json}");
    assert!(ws.path().join("out.txt").exists());
    // The operand is not an argument: `npm test *` does not allow `npm >test publish`.
    let got = check_command(
        Some(r#"{"allow":["npm test *"],"allowRedirects":true}"#),
        "npm >test publish",
        ws.path(),
    );
    assert_eq!(got["reason"], "segment_no_match");
}

#[test]
fn check_command_reports_the_verdict_and_what_decided() {
    let ws = workdir();
    let policy = r#"{"allow":["echo *","git *"],"deny":["rm *"]}"#;
    let text = |command: &str| {
        let mut cmd = toolhost();
        permissions_env(&mut cmd, Some(policy));
        run(cmd
            .args(["policy", "check-command", "--cwd"])
            .arg(ws.path())
            .arg("--")
            .arg(command))
    };
    let refused = text("echo \"$(rm -rf x)\"");
    assert_eq!(refused.code, 1);
    for line in [
        "refused: segment_denied (stricter than Cline)\n",
        "  decided by: deny pattern \"rm *\" matches \"rm -rf x\"\n",
        "  rm -rf x  [allow and deny] refused: segment_denied (deny \"rm *\")\n",
        "  echo \"$(rm -rf x)\"  [allow and deny] allowed by \"echo *\"\n",
        ".clineignore: no argument is blocked\n",
    ] {
        assert!(
            refused.stdout.contains(line),
            "{line:?} not in:\n{}",
            refused.stdout
        );
    }
    let risky = text("git -c core.pager=id log");
    assert_eq!(risky.code, 1);
    assert!(risky.stdout.contains(
        "  decided by: -c in \"git -c core.pager=id\" runs code or writes files, and no allow \
         pattern names it\n"
    ));
    assert!(
        risky.stdout.contains("  id  [deny only] passed\n"),
        "{}",
        risky.stdout
    );
    let allowed = text("git status");
    assert_eq!(allowed.code, 0);
    assert!(allowed.stdout.starts_with("allowed: allowed\n"));
    assert!(allowed
        .stdout
        .contains("  git status  [allow and deny] allowed by \"git *\"\n"));
    let unsafe_expansion = text("echo ${x@P}");
    assert_eq!(unsafe_expansion.code, 1);
    assert!(unsafe_expansion
        .stdout
        .contains("Constructs whose effect cannot be computed:\n  ${x@P} (@P)\n"));

    let json = check_command(
        Some(policy),
        "git status && echo \"$(git -c a=b log)\"",
        ws.path(),
    );
    assert_eq!(json["reason"], "risky_option");
    assert_eq!(json["failed_segment"], "git -c a=b");
    assert_eq!(json["detected_operator"], "-c");
    let commands: Vec<(String, String, Value)> = json["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["command"].as_str().unwrap().to_string(),
                c["checked_with"].as_str().unwrap().to_string(),
                c["allowed_by"].clone(),
            )
        })
        .collect();
    assert_eq!(
        commands,
        [
            (
                "git status".to_string(),
                "allow_and_deny".to_string(),
                json!("git *")
            ),
            (
                "git -c a=b log".to_string(),
                "allow_and_deny".to_string(),
                Value::Null
            ),
            (
                "echo \"$(git -c a=b log)\"".to_string(),
                "allow_and_deny".to_string(),
                json!("echo *")
            ),
        ]
    );
    assert_eq!(json["commands"][1]["refused"], "risky_option");
    assert_eq!(json["commands"][1]["risky_options"], json!(["-c"]));

    // The .clineignore check counts: a blocked argument makes the exit code 1.
    std::fs::write(ws.path().join(".clineignore"), "secret.txt\n").unwrap();
    let mut cmd = toolhost();
    permissions_env(&mut cmd, None);
    let blocked = run(cmd
        .args(["policy", "check-command", "--cwd"])
        .arg(ws.path())
        .arg("--")
        .arg("cat secret.txt"));
    assert_eq!(blocked.code, 1);
    assert!(blocked.stdout.starts_with("allowed: no_config\n"));
    assert!(
        blocked
            .stdout
            .ends_with(".clineignore: blocks secret.txt\n"),
        "{}",
        blocked.stdout
    );
}
