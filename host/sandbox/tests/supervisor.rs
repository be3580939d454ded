//! The supervisor through its small binary, with real processes: escapes of the file system,
//! the masks and the network fail; normal commands work; nothing outlives the command or a
//! killed supervisor; a fork bomb stops at the process limit; missing features refuse.
//!
//! Every path written (or tried) is inside a temporary directory; the network is a listener
//! on 127.0.0.1 made by the test.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::io::Read;
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use toolhost_sandbox::{FilesystemMode, SandboxPolicy};

use common::{marker, wait_gone, with_marker, Scene, EXEC};

#[test]
fn writes_outside_the_writable_roots_are_denied() {
    let scene = Scene::new();
    let policy = scene.policy(true);
    let script = format!(
        "echo a > {home}/planted; echo b > {outside}/planted; echo c > out-link/planted; \
         echo d > {ws}/../planted; mkdir {outside}/dir; echo inside > made.txt && cat made.txt",
        home = scene.home.display(),
        outside = scene.outside.display(),
        ws = scene.ws.display()
    );
    let (code, text) = scene.run(&policy, &script);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("inside"), "{text}");
    assert_eq!(text.matches("Permission denied").count(), 5, "{text}");
    assert!(!scene.home.join("planted").exists());
    assert!(!scene.outside.join("planted").exists());
    assert!(!scene.outside.join("dir").exists());
    assert!(!scene.ws.parent().unwrap().join("planted").exists());
    assert_eq!(
        std::fs::read_to_string(scene.ws.join("made.txt")).unwrap(),
        "inside\n"
    );
}

#[test]
fn read_only_mode_writes_nothing() {
    let scene = Scene::new();
    let mut policy = scene.policy(true);
    policy.filesystem = FilesystemMode::ReadOnly;
    let (code, text) = scene.run(
        &policy,
        "echo x > made.txt; cat readme.txt; echo ok > /dev/null",
    );
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("Permission denied") && text.contains("hello"),
        "{text}"
    );
    assert!(!scene.ws.join("made.txt").exists());
}

#[test]
fn git_hooks_and_config_stay_as_they_are() {
    let scene = Scene::new();
    let config_before = std::fs::read(scene.ws.join(".git/config")).unwrap();
    let (_, text) = scene.run(
        &scene.policy(true),
        "echo 'touch pwned' > .git/hooks/pre-commit; echo '[core] fsmonitor = touch' >> .git/config; \
         rm -rf .git/hooks; mv .git .git-old; rm -rf .git; git status --short; echo end",
    );
    assert!(!scene.ws.join(".git/hooks/pre-commit").exists(), "{text}");
    assert_eq!(
        std::fs::read(scene.ws.join(".git/config")).unwrap(),
        config_before
    );
    assert!(!scene.ws.join(".git-old").exists(), "{text}");
    assert!(text.contains("Read-only file system"), "{text}");
    assert!(text.contains("Device or resource busy"), "{text}");
    assert!(text.contains("end"), "{text}");
}

#[test]
fn masked_files_show_nothing() {
    let scene = Scene::new();
    let (code, text) = scene.run(
        &scene.policy(true),
        "cat .env; cat env-link; cat innocent.txt; grep -r secret-value . ; \
         python3 -c \"print(repr(open('.env').read()))\"; wc -c < .env; echo x >> .env; echo end",
    );
    assert_eq!(code, 0, "{text}");
    assert!(!text.contains("secret-value"), "{text}");
    assert!(text.contains("''"), "{text}");
    // The mask is read-only (and its mode 0444 refuses first).
    assert!(
        text.contains("Read-only file system") || text.contains(".env: Permission denied"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(scene.ws.join(".env")).unwrap(),
        "TOKEN=secret-value\n"
    );
    // Without the mask, the same script sees the secret (the test would otherwise prove
    // nothing).
    let mut unmasked = scene.policy(true);
    unmasked.masked_paths.clear();
    let (_, text) = scene.run(&unmasked, "cat innocent.txt");
    assert!(text.contains("secret-value"), "{text}");
}

#[test]
fn the_network_is_cut_off() {
    let scene = Scene::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let script = format!(
        "exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected; \
         python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2)\" \
         && echo py-connected; echo end"
    );
    let (_, text) = scene.run(&scene.policy(false), &script);
    assert!(!text.contains("connected"), "{text}");
    assert!(text.contains("Operation not permitted"), "{text}");
    assert!(
        listener.accept().is_err(),
        "nothing may have reached the listener"
    );
    // With the network on, the same script connects.
    let (_, text) = scene.run(&scene.policy(true), &script);
    assert!(text.contains("py-connected"), "{text}");
}

#[test]
fn normal_commands_work() {
    let scene = Scene::new();
    let policy = scene.policy(false);
    let (code, text) = scene.run(
        &policy,
        "ls readme.txt && git status --short && cargo --version && echo built > target.txt \
         && mkdir -p sub/dir && mv target.txt sub/dir/ && cat sub/dir/target.txt \
         && git add readme.txt && git -c user.name=t -c user.email=t@t commit -qm first \
         && git log --oneline | wc -l",
    );
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("readme.txt") && text.contains("cargo "),
        "{text}"
    );
    assert!(text.contains("built"), "{text}");
    assert!(text.trim_end().ends_with('1'), "{text}");
}

#[test]
fn exit_codes_and_signals_pass_through() {
    let scene = Scene::new();
    let policy = scene.policy(true);
    assert_eq!(scene.run(&policy, "exit 7").0, 7);
    let status = scene.command(&policy, "kill -TERM $$").status().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(15), "{status:?}");
    assert_eq!(scene.run(&policy, "/no/such/program").0, 127);
}

#[test]
fn daemons_do_not_outlive_the_command() {
    let scene = Scene::new();
    for (seed, policy) in [
        (1, scene.policy(true)),
        (2, SandboxPolicy::containment_only()),
    ] {
        let m = marker(seed);
        let script = format!(
            "setsid -f sleep {m}; (sleep {m} &) ; \
             python3 -c \"import os, subprocess; os.setpgid(0, 0); subprocess.Popen(['sleep', '{m}'])\"; \
             nohup sleep {m} >/dev/null 2>&1 & disown; sleep 0.2; echo started"
        );
        let (code, text) = scene.run(&policy, &script);
        assert_eq!(code, 0, "{text}");
        assert!(text.contains("started"), "{text}");
        assert_eq!(wait_gone(&m, Duration::from_secs(3)), Vec::<String>::new());
    }
}

#[test]
fn daemons_do_not_outlive_a_killed_supervisor() {
    let scene = Scene::new();
    let m = marker(3);
    let policy = scene.policy(true);
    let mut child = scene
        .command(
            &policy,
            &format!("setsid -f sleep {m}; (sleep {m} &); echo ready; sleep {m}"),
        )
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut buffer = [0u8; 6];
    stdout.read_exact(&mut buffer).unwrap();
    assert!(with_marker(&m).len() >= 3, "{:?}", with_marker(&m));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(wait_gone(&m, Duration::from_secs(3)), Vec::<String>::new());
}

#[test]
fn a_supervisor_whose_parent_dies_takes_everything_with_it() {
    // A shell starts the supervisor in the background and is killed: the supervisor's death
    // signal ends the sandbox.
    let scene = Scene::new();
    let m = marker(4);
    let policy = scene.policy(true);
    let inner = format!("setsid -f sleep {m}; sleep {m}");
    let quoted_policy = policy.to_json().replace('\'', "'\\''");
    let outer = format!(
        "'{EXEC}' --policy '{quoted_policy}' -- /bin/bash -c '{inner}' & sleep 0.5; kill -KILL $$"
    );
    let status = Command::new("/bin/bash")
        .args(["-c", &outer])
        .current_dir(&scene.ws)
        .status()
        .unwrap();
    assert!(!status.success());
    assert_eq!(wait_gone(&m, Duration::from_secs(3)), Vec::<String>::new());
}

#[test]
fn a_fork_bomb_stops_at_the_process_limit() {
    let scene = Scene::new();
    let m = marker(5);
    let mut policy = scene.policy(true);
    policy.limits.max_processes = Some(300);
    // Each child a `sleep`, started from Python so that a failed fork is counted, not fatal
    // (bash gives up on the whole script).
    let script = format!(
        "python3 -c \"\nimport os, subprocess\nok = failed = 0\nfor i in range(3000):\n    \
         try:\n        subprocess.Popen(['sleep', '{m}']); ok += 1\n    \
         except OSError:\n        failed += 1\n\
         print('started', ok, 'failed', failed)\n\
         print(len([p for p in os.listdir('/proc') if p.isdigit()]))\n\""
    );
    let started = Instant::now();
    let (code, text) = scene.run(&policy, &script);
    assert_eq!(code, 0, "{text}");
    let live: usize = text
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(usize::MAX);
    assert!(live <= 302, "{live} processes: {text}");
    let failed: usize = text
        .lines()
        .find_map(|l| l.split_once(" failed ").map(|(_, n)| n))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    assert!(failed > 2000, "{text}");
    assert!(started.elapsed() < Duration::from_secs(120));
    assert_eq!(wait_gone(&m, Duration::from_secs(5)), Vec::<String>::new());
}

#[test]
fn a_missing_feature_refuses_the_command() {
    let scene = Scene::new();
    let output = scene
        .command(&scene.policy(true), "echo ran")
        .env("TOOLHOST_SANDBOX_UNAVAILABLE", "landlock")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(toolhost_sandbox::SETUP_FAILED));
    assert!(stderr.contains("Landlock is not available"), "{stderr}");
    assert!(!String::from_utf8_lossy(&output.stdout).contains("ran"));
    // The probe agrees, and the adapted policy runs (without the file system part).
    let probe = Command::new(EXEC)
        .env("TOOLHOST_SANDBOX_UNAVAILABLE", "landlock")
        .arg("--probe")
        .output()
        .unwrap();
    let probed: toolhost_sandbox::Support = serde_json::from_slice(&probe.stdout).unwrap();
    assert_eq!(probed.landlock_abi, None);
    assert_eq!(probed.seccomp, toolhost_sandbox::probe().seccomp);
    let adapted = scene.policy(true).adapt(&probed);
    assert_eq!(adapted.policy.filesystem, FilesystemMode::Off);
    assert_eq!(adapted.missing.len(), 1, "{:?}", adapted.missing);
    let output = scene
        .command(&adapted.policy, "echo ran; cat .env")
        .env("TOOLHOST_SANDBOX_UNAVAILABLE", "landlock")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "ran\n");
}

#[test]
fn the_probe_finds_this_kernel() {
    let support = toolhost_sandbox::probe();
    // The development and CI machines have all of it; elsewhere this shows what is missing.
    println!("{support:?} missing {:?}", support.missing());
    assert!(support.seccomp);
}

#[test]
fn a_process_can_confine_itself() {
    let scene = Scene::new();
    let policy = scene.policy(false);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = format!(
        "cat .env; echo x > {outside}/planted; echo ok > made.txt && cat made.txt; \
         exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected; echo end",
        outside = scene.outside.display()
    );
    let output = Command::new(EXEC)
        .arg("--confine")
        .arg("--policy")
        .arg(policy.to_json())
        .args(["--", "/bin/bash", "-c", &script])
        .current_dir(&scene.ws)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!text.contains("secret-value"), "{text}");
    assert!(text.contains("ok") && text.contains("end"), "{text}");
    assert!(!text.contains("connected"), "{text}");
    assert!(!scene.outside.join("planted").exists(), "{text}");
}
