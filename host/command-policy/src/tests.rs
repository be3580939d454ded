use super::*;

const RULES: &str = r#"{"allow":["npm *","git status","cd *","echo *","ls","ls *","cat *"],"deny":["npm publish*","rm -rf *"]}"#;

fn check(command: &str) -> CommandVerdict {
    CommandPermissions::from_value(Some(RULES)).check(command)
}

#[test]
fn configuration_follows_cline() {
    assert!(!CommandPermissions::from_value(None).is_configured());
    assert!(!CommandPermissions::from_value(Some("")).is_configured());
    assert!(!CommandPermissions::from_value(Some("null")).is_configured());
    let empty = CommandPermissions::from_value(Some("{}"));
    assert_eq!(empty.rules(), Some(&Rules::default()));
    assert_eq!(
        CommandPermissions::from_value(None)
            .check("rm -rf /")
            .reason,
        Reason::NoConfig
    );
}

// Deliberate change: Cline ignores a malformed value (no restriction at all); the port
// refuses every command and names the problem. This test replaces the part of
// `configuration_follows_cline` that asserted Cline's behaviour.
#[test]
fn malformed_configuration_refuses_everything() {
    for (value, problem) in [
        (
            "{allow: [x]}",
            "CLINE_COMMAND_PERMISSIONS is not valid JSON (key must be a string at line 1 column 2)",
        ),
        (
            "[]",
            "CLINE_COMMAND_PERMISSIONS is not a JSON object (it is an array)",
        ),
        (
            "5",
            "CLINE_COMMAND_PERMISSIONS is not a JSON object (it is a number)",
        ),
        (
            "\"x\"",
            "CLINE_COMMAND_PERMISSIONS is not a JSON object (it is a string)",
        ),
        (
            r#"{"allow":"git *"}"#,
            "`allow` in CLINE_COMMAND_PERMISSIONS is not an array of strings (it is a string)",
        ),
        (
            r#"{"deny":["rm *",5]}"#,
            "`deny` in CLINE_COMMAND_PERMISSIONS is not an array of strings (entry 2 is a number)",
        ),
        (
            r#"{"allow":null}"#,
            "`allow` in CLINE_COMMAND_PERMISSIONS is not an array of strings (it is null)",
        ),
        (
            r#"{"allowRedirects":"yes"}"#,
            "`allowRedirects` in CLINE_COMMAND_PERMISSIONS is not a boolean (it is a string)",
        ),
    ] {
        let permissions = CommandPermissions::from_value(Some(value));
        assert!(permissions.is_configured(), "{value}");
        assert_eq!(permissions.rules(), None, "{value}");
        let v = permissions.check("ls");
        assert_eq!(
            (v.allowed, v.reason),
            (false, Reason::InvalidConfig),
            "{value}"
        );
        assert!(v.stricter_than_cline);
        assert_eq!(
            v.denial_message.as_deref(),
            Some(
                format!(
                    "Command \"ls\" was denied by CLINE_COMMAND_PERMISSIONS. Reason: \
                     invalid_config: {problem}; every command is refused until it is fixed"
                )
                .as_str()
            ),
            "{value}"
        );
    }
}

#[test]
fn cline_verdicts_are_kept() {
    let v = check("cd /tmp && rm -rf x");
    assert_eq!(
        (
            v.reason,
            v.matched_pattern.as_deref(),
            v.failed_segment.as_deref()
        ),
        (Reason::SegmentDenied, Some("rm -rf *"), Some("rm -rf x"))
    );
    assert_eq!(
        v.denial_message.as_deref(),
        Some("Command \"cd /tmp && rm -rf x\" was denied by CLINE_COMMAND_PERMISSIONS. Segment \"rm -rf x\" segment_denied.")
    );
    assert!(!v.stricter_than_cline);
    let v = check("npm publish");
    assert_eq!(
        v.denial_message.as_deref(),
        Some("Command \"npm publish\" was denied by CLINE_COMMAND_PERMISSIONS. Reason: denied (matched pattern: npm publish*)")
    );
    assert_eq!(check("echo `id`").detected_operator.as_deref(), Some("`"));
    assert!(check("echo $(ls)").allowed);
    assert!(check("cat ~/.ssh/id_rsa").allowed);
}

#[test]
fn what_cline_let_through_is_refused() {
    for (command, reason, segment) in [
        ("npm test & rm -rf /", Reason::SegmentDenied, "rm -rf /"),
        ("echo \"$(rm -rf x)\"", Reason::SegmentDenied, "rm -rf x"),
        ("ls a#b; whoami", Reason::SegmentNoMatch, "whoami"),
        (
            "echo \"$(sudo rm -rf /)\"",
            Reason::SegmentNoMatch,
            "sudo rm -rf /",
        ),
        (
            "ls \"$(bash -c 'rm -rf /')\"",
            Reason::SegmentNoMatch,
            "bash -c rm -rf /",
        ),
        ("$CMD", Reason::NoMatchDenyDefault, ""),
    ] {
        let v = check(command);
        assert_eq!(v.reason, reason, "{command}");
        if !segment.is_empty() {
            assert_eq!(v.failed_segment.as_deref(), Some(segment), "{command}");
        }
    }
    let deny_only = CommandPermissions::from_value(Some(r#"{"deny":["rm *"]}"#));
    for command in [
        "FOO=1 rm -rf x",
        "/bin/rm -rf x",
        "sudo -u root rm -rf x",
        "bash -c 'rm -rf x'",
        "eval 'rm -rf x'",
        "echo x | xargs rm",
        "find . -exec rm {} \\;",
        "rm$IFS-rf x",
        "command rm -rf x",
        "f() { rm -rf x; }; f",
    ] {
        let v = deny_only.check(command);
        assert!(!v.allowed, "{command} was allowed");
        assert!(v.stricter_than_cline, "{command}: {v:?}");
    }
    assert_eq!(deny_only.check("$CMD -rf x").reason, Reason::DynamicCommand);
    assert!(deny_only.check("ls -la && echo done").allowed);
}

#[test]
fn unparsable_commands_are_refused() {
    for command in ["echo $(ls", "ls )", "echo 'abc", "ls ;; ls", "echo ${"] {
        let v = check(command);
        assert_eq!(
            (v.reason, v.detected_operator.as_deref()),
            (Reason::ShellOperatorDetected, Some("parse_error")),
            "{command}"
        );
    }
    let deep = format!("echo {}x{}", "$(".repeat(600), ")".repeat(600));
    assert!(!check(&deep).allowed);
    // Deliberate change: `((…ls…))` is an arithmetic command to bash (it evaluates the
    // variable `ls`), now refused as unsafe_expansion; nesting within the limit is still
    // checked, with subshells that do not start with `((` (the parser also reads
    // `( ( ls ) )` as arithmetic, which is refused too).
    let nested = format!("{}ls{}", "(ls;".repeat(450), ")".repeat(450));
    assert!(check(&nested).allowed);
    assert_eq!(check("( ( ls ) )").reason, Reason::UnsafeExpansion);
    // More than 12 `(` in a row are refused before the parser, whose time doubles with each.
    let arithmetic = format!("{}ls{}", "(".repeat(450), ")".repeat(450));
    assert_eq!(
        check(&arithmetic).detected_operator.as_deref(),
        Some("parse_error")
    );
    // Cline's tokenizer gives up on `${` cut by a space; the parser reads it.
    assert!(check("echo ${X:-a b}").allowed);
    assert_eq!(
        check("echo ${X:-$(rm -rf x)}").reason,
        Reason::SegmentDenied
    );
}

/// A verdict's reason and failed segment under `rules`.
pub(super) fn verdict(
    rules: &str,
    command: &str,
) -> (bool, Reason, Option<String>, Option<String>) {
    let v = CommandPermissions::from_value(Some(rules)).check(command);
    (v.allowed, v.reason, v.failed_segment, v.detected_operator)
}

pub(super) const DENY_RM: &str = r#"{"deny":["rm *"],"allowRedirects":true}"#;
