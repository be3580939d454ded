//! Unit tests of the refusals stricter than Cline: expansions, risky options, wrappers.

use super::*;
use crate::tests::{verdict, DENY_RM};

#[test]
fn expansions_whose_effect_cannot_be_computed_are_refused() {
    // The attacker's two commands: both really delete `victim` in bash.
    let attacker = r#"{"allow":["git *","ls *"],"deny":["rm *"]}"#;
    let v = CommandPermissions::from_value(Some(attacker)).check(r"ls ${x:=\$(rm\ victim)} ${x@P}");
    assert_eq!((v.allowed, v.reason), (false, Reason::UnsafeExpansion));
    assert_eq!(
        v.denial_message.as_deref(),
        Some(
            r#"Command "ls ${x:=\$(rm\ victim)} ${x@P}" was denied by CLINE_COMMAND_PERMISSIONS. Segment "${x:=\$(rm\ victim)}" unsafe_expansion."#
        )
    );
    assert!(v.stricter_than_cline);
    assert_eq!(
        verdict(attacker, r"ls ${y:=a[\$(rm\ victim)]} $((y))").1,
        Reason::UnsafeExpansion
    );
    for (command, construct, operator) in [
        (r"ls ${x@P}", "${x@P}", "@P"),
        (r"ls ${x@E}", "${x@E}", "@E"),
        (r"ls ${x@A}", "${x@A}", "@A"),
        (r"ls ${x@Q}", "${x@Q}", "@Q"),
        (r"ls ${x@K}", "${x@K}", "@K"),
        (r"ls ${x@a}", "${x@a}", "@a"),
        (r"ls ${x@U}", "${x@U}", "@U"),
        (r"ls ${x@u}", "${x@u}", "@u"),
        (r"ls ${x@L}", "${x@L}", "@L"),
        (r"ls ${x@k}", "${x@k}", "@k"),
        (r"ls ${!name}", "${!name}", "!"),
        (r"ls ${x:=\$y}", r"${x:=\$y}", ":="),
        (r"ls ${x=\`id\`}", r"${x=\`id\`}", "="),
        (r"ls ${x:=a[1]}", "${x:=a[1]}", ":="),
        (r"ls ${x:=a\b}", r"${x:=a\b}", ":="),
        ("ls $((y))", "$((y))", "$(("),
        ("ls $((i + 1))", "$((i + 1))", "$(("),
        ("ls $[y]", "$[y]", "$["),
        ("ls ${a[i]}", "${a[i]}", "["),
        ("ls ${x:off:2}", "${x:off:2}", ":"),
        ("ls ${x:1:len}", "${x:1:len}", ":"),
        ("((y))", "((y))", "(("),
        (
            "for ((i=0; i<n; i++)); do ls; done",
            "for ((i=0))",
            "for ((",
        ),
        ("let y", "let y", "let"),
        ("a[i]=1", "a[i]=1", "["),
        ("a=([k]=1)", "a=([k]=1)", "["),
        ("[[ $x -eq 1 ]]", "[[ $x -eq 1 ]]", "-eq"),
        ("[[ 1 -lt y ]]", "[[ 1 -lt y ]]", "-lt"),
        ("[[ -v a[i] ]]", "a[i]", "["),
        ("declare -i x=1", "declare -i x=1", "declare -i"),
        ("local -i x", "local -i x", "local -i"),
        ("typeset -i x=y", "typeset -i x=y", "typeset -i"),
        ("declare -n r=x", "declare -n r=x", "declare -n"),
        (
            "declare \"$y=1\"",
            "declare \"$y=1\"",
            "name only known at run time",
        ),
        ("read a[i] <<< x", "a[i]", "["),
        ("printf -v a[i] x", "a[i]", "["),
        ("test -v a[i]", "a[i]", "["),
        (r"PS4=\$\(id\) bash -xc ls", r"PS4=\$\(id\)", "PS4="),
        (r"env PS4=\$x bash -xc ls", r"PS4=\$x", "PS4="),
        ("read PS4 <<< x", "PS4", "PS4="),
        (r"sudo -u root PS4=\$x bash -x", r"PS4=\$x", "PS4="),
        ("for PS4 in x; do ls; done", "for PS4 in", "PS4="),
        ("bash -c 'ls $((y))'", "$((y))", "$(("),
        ("echo \"$(ls $((y)))\"", "$((y))", "$(("),
        ("( ( ls ) )", "((ls))", "(("),
    ] {
        assert_eq!(
            verdict(DENY_RM, command),
            (
                false,
                Reason::UnsafeExpansion,
                Some(construct.to_string()),
                Some(operator.to_string())
            ),
            "{command}"
        );
    }
    for command in [
        "echo $((1024*1024)) $((0x10 + 2#101))",
        "echo $(( $# + 1 )) $((${#HOME} * 2))",
        "echo $[1+2]",
        "echo ${a[0]} ${a[@]} ${a[*]} ${!a[@]} ${!PATH*} ${arr[-1]}",
        "echo ${x:-$HOME} ${x:=plain} ${#x} ${x//a/b} ${x^^} ${x,} ${x%.rs}",
        "echo ${x:1:2}",
        "a[2]=1; a=([0]=x [1]=y)",
        "((1 + 2))",
        "let 1+2",
        "[[ 1 -eq 1 && $x == y ]]",
        "declare x=1; local y; export PATH=/bin; declare -a list",
        "read -r line <<< x; printf -v x %s y; test -v x",
        "export PS4='+ '",
        "echo '${x@P} $((y))'",
    ] {
        assert!(
            CommandPermissions::from_value(Some(DENY_RM))
                .check(command)
                .allowed,
            "{command}"
        );
    }
    // Refused whenever the variable is set, even without rules.
    assert_eq!(verdict("{}", "ls ${x@P}").1, Reason::UnsafeExpansion);
}

#[test]
fn risky_options_need_an_allow_pattern_that_names_them() {
    let wildcards = r#"{"allow":["git *","sed *","find *","tar *","rg *","awk *","sort *","curl *","wget *","tee *","dd *","rsync *","ssh *","zip *","man *","uniq *","ls *","echo *"],"deny":["rm *"]}"#;
    for (command, part, option) in [
        (
            "git -c alias.x='!touch victim' x",
            "git -c alias.x=!touch victim",
            "-c",
        ),
        ("git -calias.x=!id x", "git -calias.x=!id", "-c"),
        (
            "git --config-env=core.pager=P log",
            "git --config-env=core.pager=P",
            "--config-env",
        ),
        (
            "git --exec-path=/tmp log",
            "git --exec-path=/tmp",
            "--exec-path",
        ),
        ("git log --output=x", "git --output=x", "--output"),
        ("git format-patch -o dir HEAD~1", "git -o dir", "-o"),
        (
            "git clone --upload-pack=x url",
            "git --upload-pack=x",
            "--upload-pack",
        ),
        ("git clone 'ext::sh -c id' d", "git ext::sh -c id", "ext::"),
        (
            "git push --receive-pack=x origin",
            "git --receive-pack=x",
            "--receive-pack",
        ),
        ("git rebase --exec id main", "git --exec", "--exec"),
        ("git bisect run id", "git bisect run", "bisect run"),
        (
            "git submodule foreach id",
            "git submodule foreach",
            "submodule foreach",
        ),
        ("git difftool -x id", "git -x id", "-x"),
        ("git grep -Oid x", "git -Oid", "-O"),
        (
            "git filter-branch --tree-filter id",
            "git filter-branch",
            "filter-branch",
        ),
        ("git config core.pager id", "git config", "config (a write)"),
        ("git log $X", "git $X", "an argument only known at run time"),
        ("find . -exec ls {} ;", "find -exec", "-exec"),
        ("find . -delete", "find -delete", "-delete"),
        ("find . -fprint out", "find -fprint", "-fprint"),
        ("sed -i s/a/b/ f", "sed -i", "-i"),
        ("sed -f script f", "sed -f script", "-f"),
        (
            "sed 's/a/b/w out' f",
            "sed s/a/b/w out",
            "sed script (s///w)",
        ),
        ("sed '1e id' f", "sed 1e id", "sed script (e)"),
        (
            "tar --to-command=sh -xf a",
            "tar --to-command=sh",
            "--to-command",
        ),
        ("tar -I sh -xf a", "tar -I sh", "-I"),
        ("rg --pre sh x", "rg --pre sh", "--pre"),
        (
            "awk 'BEGIN{system(\"id\")}'",
            "awk BEGIN{system(\"id\")}",
            "awk program (system)",
        ),
        ("sort -o out in", "sort -o out", "-o"),
        ("curl -o out http://127.0.0.1/", "curl -o out", "-o"),
        ("wget -O out http://127.0.0.1/", "wget -O out", "-O"),
        ("echo x | tee out", "tee out", "a file tee writes"),
        ("dd if=a of=b", "dd of=b", "of="),
        ("rsync -e sh a b", "rsync -e sh", "-e"),
        (
            "ssh -o ProxyCommand=sh h",
            "ssh -o ProxyCommand=sh",
            "-o ProxyCommand",
        ),
        ("zip -TT sh a.zip f", "zip -TT", "-TT"),
        ("man -P sh ls", "man -P sh", "-P"),
        ("uniq in out", "uniq out", "the file uniq writes"),
    ] {
        assert_eq!(
            verdict(wildcards, command),
            (
                false,
                Reason::RiskyOption,
                Some(part.to_string()),
                Some(option.to_string())
            ),
            "{command}"
        );
    }
    for command in [
        "git status",
        "git log --oneline -n 5",
        "git push -u origin main",
        "git commit -m \"$(echo msg)\"",
        "git config user.name",
        "git config --get user.name",
        "find . -name '*.rs'",
        "sed -n 1,5p f",
        "tar -xzf a.tgz",
        "rg -n x src",
        "awk '{print $1}' f",
        "sort -u f",
        "curl -sS http://127.0.0.1/",
        "uniq -c f",
        "dd if=a bs=1",
        "ls -la",
    ] {
        let (allowed, reason, ..) = verdict(wildcards, command);
        assert!(allowed, "{command}: {reason:?}");
    }
    // Behind a wrapper too.
    assert_eq!(
        verdict(r#"{"allow":["sudo *","git *"]}"#, "sudo git -c x=y log"),
        (
            false,
            Reason::RiskyOption,
            Some("git -c x=y".to_string()),
            Some("-c".to_string())
        )
    );
    // A pattern that names the option allows it.
    for (rules, command) in [
        (r#"{"allow":["git -c *"]}"#, "git -c core.pager=cat log"),
        (r#"{"allow":["git * --output=*"]}"#, "git log --output=x"),
        (r#"{"allow":["sed -i *"]}"#, "sed -i s/a/b/ f"),
        (
            r#"{"allow":["find * -exec ls *","ls *"]}"#,
            "find . -exec ls {} ;",
        ),
        (r#"{"allow":["tee out.log"]}"#, "tee out.log"),
        (r#"{"allow":["dd * of=*"]}"#, "dd if=a of=b"),
        (r#"{"allow":["git config *"]}"#, "git config user.name x"),
    ] {
        let (allowed, reason, ..) = verdict(rules, command);
        assert!(allowed, "{rules} {command}: {reason:?}");
    }
    // Deny rules see the option as a command of its own, and the code it runs.
    assert_eq!(
        verdict(r#"{"deny":["git -c *"]}"#, "git -ccore.pager=x log"),
        (
            false,
            Reason::SegmentDenied,
            Some("git -ccore.pager=x".to_string()),
            None
        )
    );
    assert_eq!(
        verdict(
            r#"{"allow":["git -c *"],"deny":["rm *"]}"#,
            "git -c alias.x='!rm victim' x"
        ),
        (
            false,
            Reason::SegmentDenied,
            Some("rm victim".to_string()),
            None
        )
    );
    // `git *` alone does not allow a configured pager either.
    assert_eq!(
        verdict(r#"{"allow":["git *"]}"#, "git -c core.pager='id' log").1,
        Reason::RiskyOption
    );
}

#[test]
fn xargs_does_not_allow_what_it_runs() {
    let rules = r#"{"allow":["xargs *","echo *"]}"#;
    assert_eq!(
        verdict(rules, "echo x | xargs touch"),
        (
            false,
            Reason::SegmentNoMatch,
            Some("touch".to_string()),
            None
        )
    );
    assert_eq!(
        verdict(rules, "echo x | xargs -0 -n1 touch").1,
        Reason::SegmentNoMatch
    );
    assert_eq!(
        verdict(rules, "echo x | xargs sh -c 'touch y'").1,
        Reason::SegmentNoMatch
    );
    assert!(verdict(rules, "echo x | xargs echo").0);
    // With -I, the input becomes part of the code: unknown before it runs.
    assert_eq!(
        verdict(DENY_RM, "echo 'rm x' | xargs -I{} sh -c '{}'").1,
        Reason::DynamicCommand
    );
    assert_eq!(
        verdict(DENY_RM, "echo rm | xargs -I % % -rf x").1,
        Reason::DynamicCommand
    );
    // An option of the inner command counts too.
    assert_eq!(
        verdict(
            r#"{"allow":["echo *","xargs *","sed *"]}"#,
            "echo f | xargs sed -i s/a/b/"
        )
        .1,
        Reason::RiskyOption
    );
    // fd runs its -x command like find -exec.
    assert_eq!(
        verdict(DENY_RM, "fd x -x rm -rf {}").1,
        Reason::SegmentDenied
    );
}

#[test]
fn redirect_operands_are_matched_as_cline_joins_them() {
    let rules = r#"{"allow":["cat *","echo *","npm test *"],"allowRedirects":true}"#;
    for command in [
        "cat < input.txt",
        "echo hi > out.txt",
        "echo > out.txt",
        "echo \"$(cat < input.txt)\"",
    ] {
        let (allowed, reason, ..) = verdict(rules, command);
        assert!(allowed, "{command}: {reason:?}");
    }
    // The operand is not an argument: it cannot stand for the literal part of a pattern.
    assert_eq!(
        verdict(rules, "npm >test publish"),
        (
            false,
            Reason::SegmentNoMatch,
            Some("npm publish".to_string()),
            None
        )
    );
    assert_eq!(
        verdict(r#"{"allow":["cat"],"allowRedirects":true}"#, "cat < in").1,
        Reason::NoMatchDenyDefault
    );
    // Prefix assignments are part of the text, as in Cline, also where Cline does not look.
    assert_eq!(
        verdict(
            r#"{"allow":["ls *","git *"]}"#,
            "ls -l & GIT_PAGER=id git log"
        ),
        (
            false,
            Reason::SegmentNoMatch,
            Some("GIT_PAGER=id git log".to_string()),
            None
        )
    );
}

#[test]
fn env_and_sudo_assignments_are_read_as_they_read_them() {
    assert_eq!(
        verdict(DENY_RM, "env 'A%=1' rm -rf x").1,
        Reason::SegmentDenied
    );
    assert_eq!(
        verdict(DENY_RM, "env 'BASH_FUNC_ls%%=() { rm -rf x; }' bash -c ls"),
        (
            false,
            Reason::SegmentDenied,
            Some("rm -rf x".to_string()),
            None
        )
    );
    assert!(verdict(DENY_RM, "env A=1 B=2 ls").0);
}

#[test]
fn explanations_record_every_part() {
    let permissions =
        CommandPermissions::from_value(Some(r#"{"allow":["echo *","git *"],"deny":["rm *"]}"#));
    let (verdict, trace) = permissions.explain("echo \"$(git -c x=y log)\" && echo ok");
    assert_eq!(
        verdict,
        permissions.check("echo \"$(git -c x=y log)\" && echo ok")
    );
    assert_eq!(verdict.reason, Reason::RiskyOption);
    let commands: Vec<(&str, Option<&str>, Option<Reason>)> = trace
        .commands
        .iter()
        .map(|c| (c.command.as_str(), c.allowed_by.as_deref(), c.refused))
        .collect();
    assert_eq!(
        commands,
        [
            ("git -c x=y log", None, Some(Reason::RiskyOption)),
            ("echo \"$(git -c x=y log)\"", Some("echo *"), None),
            ("echo ok", Some("echo *"), None),
        ]
    );
    assert_eq!(trace.commands[0].risky_options, ["-c"]);
    assert_eq!(trace.segments[0].allowed_by.as_deref(), Some("echo *"));
    let (_, trace) = CommandPermissions::from_value(Some(DENY_RM)).explain("echo '$(rm x)'");
    assert_eq!(trace.commands[0].checked_with, "deny_only");
    assert_eq!(trace.commands[0].denied_by.as_deref(), Some("rm *"));
}

/// Found by the command-policy fuzz target: the shell parser unwraps a redirect's file
/// descriptor number as a `u32`, so a longer one panicked inside the check (the check's thread
/// caught it and refused the command, but a panic is not a verdict).
#[test]
fn a_redirect_number_beyond_u32_is_refused_without_a_panic() {
    let found = String::from_utf8_lossy(b"n\x00777777;77777777;777777777777000<>000000000\xd0\xcf\xcf\xcf00000326015004g\x81\x00\x00\x00\x00 \x00\x00\x00\x00ech(\xdf\x9b\x9f\x09");
    for command in [found.as_ref(), "77777777777<>x", "echo hi 99999999999>out"] {
        assert!(
            matches!(shell::analyze(command), Err(shell::Unparsable(m)) if m.contains("out of range")),
            "{command:?}"
        );
        let verdict =
            CommandPermissions::from_value(Some(r#"{"allowRedirects":true}"#)).check(command);
        assert_eq!(
            (verdict.allowed, verdict.detected_operator.as_deref()),
            (false, Some("parse_error")),
            "{command:?}"
        );
    }
    assert!(shell::analyze("echo 4294967295>x").is_ok());
}

/// Found by the command-policy fuzz target: the shell parser's time doubles with every open
/// parenthesis (it tries each `((` as arithmetic first), so this command kept the check busy
/// for minutes. Deep nesting is refused before the parser sees it.
#[test]
fn deeply_nested_parentheses_are_refused_before_parsing() {
    let found = String::from_utf8_lossy(b"(((((((\x00ho *\x22,\x22rtat5s\x22,\x22cd ~((((((((((((((((((((((((\x00ho *\x22,\x22l<<-#\xff%\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffcecho\xc3\xa9l \x00o\x9f\xf0\x8c\x8d");
    let permissions = CommandPermissions::from_value(Some(r#"{"allowRedirects":true}"#));
    for command in [
        found.into_owned(),
        format!("{}ls", "(".repeat(40)),
        format!("{}ls", "( ".repeat(40)),
    ] {
        let verdict = permissions.check(&command);
        assert_eq!(
            (verdict.allowed, verdict.detected_operator.as_deref()),
            (false, Some("parse_error")),
            "{command:?}"
        );
    }
    let nested = format!("{}ls{}", "(ls; ".repeat(40), ")".repeat(40));
    assert!(permissions.check(&nested).allowed);
}
