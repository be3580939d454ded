//! The supervisor's newer edges through its small binary: what a command makes of git
//! repositories is set aside, the temporary directories are its own, its environment loses
//! what the policy removes, and memory is limited.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::path::Path;
use std::process::Command;

use common::Scene;

#[test]
fn what_a_command_makes_of_repositories_is_set_aside() {
    let scene = Scene::new();
    std::fs::create_dir_all(scene.ws.join("vendor/dep")).unwrap();
    let (code, text) = scene.run(
        &scene.policy(true),
        "git init -q vendor/dep && echo init-done; echo '*.txt filter=x' > .git/info/attributes; \
         mkdir -p .git/modules/x && echo '[core] fsmonitor = touch x' > .git/modules/x/config; \
         echo /tmp/evil > .git/commondir; mkdir -p new/tree && \
         echo 'gitdir: /tmp/evil' > new/tree/.git; echo data > .git/objects/kept; echo end",
    );
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("init-done") && text.contains("end"), "{text}");
    // `info/` exists in a new repository: it is read-only.
    assert!(!scene.ws.join(".git/info/attributes").exists(), "{text}");
    for made in [
        "vendor/dep/.git",
        ".git/modules",
        ".git/commondir",
        "new/tree/.git",
    ] {
        assert!(!scene.ws.join(made).exists(), "{made}: {text}");
        let aside = format!("{made}.toolhost-set-aside");
        assert!(scene.ws.join(&aside).exists(), "{aside}: {text}");
        assert!(
            text.contains(&format!("set aside {}", scene.ws.join(made).display())),
            "{text}"
        );
    }
    // The rest of `.git` stays writable.
    assert!(scene.ws.join(".git/objects/kept").exists(), "{text}");
    // An existing nested repository's configuration and hooks are read-only, as the root's.
    let git = Command::new("git")
        .args(["init", "-q", "vendor/lib"])
        .current_dir(&scene.ws)
        .status()
        .unwrap();
    assert!(git.success());
    let config = std::fs::read_to_string(scene.ws.join("vendor/lib/.git/config")).unwrap();
    let (_, text) = scene.run(
        &scene.policy(true),
        "echo '[core] fsmonitor = touch x' >> vendor/lib/.git/config; \
         echo 'touch x' > vendor/lib/.git/hooks/post-checkout; mv vendor/lib/.git vendor/lib/.g; \
         echo end",
    );
    assert!(text.contains("end"), "{text}");
    assert_eq!(
        std::fs::read_to_string(scene.ws.join("vendor/lib/.git/config")).unwrap(),
        config
    );
    assert!(!scene
        .ws
        .join("vendor/lib/.git/hooks/post-checkout")
        .exists());
}

#[test]
fn temporary_directories_are_the_commands_own() {
    let scene = Scene::new();
    let mut policy = scene.policy(true);
    let tmp = std::env::temp_dir();
    policy.private_tmp = vec![tmp.clone(), "/dev/shm".into()];
    policy.limits.max_tmp_bytes = Some(8 << 20);
    policy.keep_visible = vec![scene.home.clone()];
    let name = format!("sandbox-private-{}", std::process::id());
    std::fs::write(tmp.join(&name), "the host's").unwrap();
    let script = format!(
        "cat {tmp}/{name}; echo mine > {tmp}/{name}-made && cat {tmp}/{name}-made; \
         echo shm > /dev/shm/{name} && cat /dev/shm/{name}; cat readme.txt; echo ws > made.txt; \
         head -c 16000000 /dev/zero > {tmp}/{name}-big; echo x > \"$HOME/planted\"; echo end",
        tmp = tmp.display()
    );
    let (code, text) = scene.run(&policy, &script);
    assert_eq!(code, 0, "{text}");
    assert!(!text.contains("the host's"), "{text}");
    assert!(text.contains("mine\nshm\nhello\n"), "{text}");
    assert!(text.contains("No space left on device"), "{text}");
    assert!(!tmp.join(format!("{name}-made")).exists());
    // The home directory, mounted back into the private one, is not writable through it.
    assert!(text.contains("planted: Read-only file system"), "{text}");
    assert!(!scene.home.join("planted").exists());
    assert!(!tmp.join(format!("{name}-big")).exists());
    assert!(!Path::new("/dev/shm").join(&name).exists());
    // The workspace, which lives in the temporary directory here, is the real one.
    assert_eq!(
        std::fs::read_to_string(scene.ws.join("made.txt")).unwrap(),
        "ws\n"
    );
    std::fs::remove_file(tmp.join(&name)).unwrap();
}

#[test]
fn the_environment_loses_what_the_policy_removes() {
    let scene = Scene::new();
    let mut policy = scene.policy(true);
    policy.env_remove = vec![
        "SANDBOX_TEST_SECRET_*".into(),
        "SANDBOX_TEST_ONE".into(),
        "*_test_token".into(),
    ];
    policy.env_keep = vec!["SANDBOX_KEPT_TEST_TOKEN".into()];
    let output = scene
        .command(&policy, "env; echo end")
        .env("SANDBOX_TEST_SECRET_TOKEN", "hunter2")
        .env("SANDBOX_TEST_ONE", "hunter2")
        .env("SANDBOX_OTHER_TEST_TOKEN", "hunter2")
        .env("SANDBOX_TEST_KEPT", "kept-value")
        .env("SANDBOX_KEPT_TEST_TOKEN", "kept-token")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("SANDBOX_TEST_KEPT=kept-value"), "{text}");
    assert!(
        text.contains("SANDBOX_KEPT_TEST_TOKEN=kept-token"),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "{text}");
}

#[test]
fn memory_beyond_the_limit_is_refused() {
    let scene = Scene::new();
    let mut policy = scene.policy(true);
    policy.limits.max_memory_bytes = Some(256 << 20);
    let (_, text) = scene.run(
        &policy,
        "python3 -c 'b = bytearray(1 << 30); b[::4096] = b\"x\" * len(b[::4096]); print(\"ALLOC\" + \"ATED\")'; \
         python3 -c 'print(len(bytearray(64 << 20)))'; echo end",
    );
    assert!(!text.contains("ALLOCATED"), "{text}");
    assert!(text.contains(&(64u64 << 20).to_string()), "{text}");
    assert!(
        text.contains("MemoryError") || text.contains("the memory limit was reached"),
        "{text}"
    );
}

#[test]
fn without_a_cgroup_each_process_is_limited() {
    let scene = Scene::new();
    let mut policy = scene.policy(true);
    policy.limits.max_memory_bytes = Some(256 << 20);
    let output = scene
        .command(
            &policy,
            "python3 -c 'b = bytearray(1 << 30); print(\"ALLOC\" + \"ATED\")'; echo end",
        )
        .env("TOOLHOST_SANDBOX_UNAVAILABLE", "memory-cgroup")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        text.contains("MemoryError") && text.contains("end"),
        "{text}"
    );
    assert!(!text.contains("ALLOCATED"), "{text}");
}
