//! The command policy: Cline's check and the shell-parser analysis never panic, the whole
//! check never allows what Cline's own stage denies, and Cline's `.clineignore` heuristic for
//! file-reading commands never panics.
//!
//! Input: the `CLINE_COMMAND_PERMISSIONS` value, a NUL, the command (both lossy UTF-8).
#![no_main]

use std::sync::OnceLock;

use command_policy::fuzzing::cline_stage_denies;
use command_policy::CommandPermissions;
use libfuzzer_sys::fuzz_target;
use tool_api::workspace::Workspace;
use toolhost::fuzzing::blocked_command_arg;

/// A workspace whose `.clineignore` blocks a few names (its directory lives as long as the
/// process).
fn workspace() -> &'static Workspace {
    static WORKSPACE: OnceLock<Workspace> = OnceLock::new();
    WORKSPACE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temporary directory").keep();
        std::fs::write(
            dir.join(".clineignore"),
            ".env\nsecrets/\n*.pem\n!keep.pem\n",
        )
        .expect("write .clineignore");
        Workspace::new(&dir).expect("open the workspace")
    })
}

fuzz_target!(|data: &[u8]| {
    let (env, command) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (&[][..], data),
    };
    let env = String::from_utf8_lossy(env);
    let command = String::from_utf8_lossy(command);
    let permissions = CommandPermissions::from_value(Some(&env));
    let verdict = permissions.check(&command);
    if let Some(rules) = permissions.rules() {
        if cline_stage_denies(rules, &command) {
            assert!(
                !verdict.allowed,
                "allowed what Cline's stage denies: {command:?}"
            );
        }
    }
    let (explained, _trace) = permissions.explain(&command);
    assert_eq!(
        explained.allowed, verdict.allowed,
        "explain and check disagree"
    );
    let _ = blocked_command_arg(workspace(), 0, &command);
});
