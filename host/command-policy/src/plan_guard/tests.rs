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
