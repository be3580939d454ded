//! What an isolated plugin's worker may reach: the intersection of what the plugin declares
//! and what the user (or a bundle) grants, and a refusal that says which. The fixture
//! (tests/fixtures/access) declares `access:fs=workspace-write` and nothing else; its tools
//! write a workspace file, start /bin/true and connect to the loopback, plainly, so that only
//! the sandbox stands in their way.

use toolhost_tests::{in_home, library, run, toolhost_as_installed, workdir, Home, Run};

const PLUGIN: &str = "fixture_access";

/// A user with the fixture in a plugin directory of their own (so it runs isolated).
fn user(settings: &str) -> Home {
    Home::new(settings, &[PLUGIN])
}

/// `toolhost` as installed (plugins outside its own directory run isolated), as `home`'s user.
fn toolhost(home: &Home) -> std::process::Command {
    in_home(
        toolhost_as_installed(),
        home.plugins.path(),
        &home.settings,
        &home.home,
        &home.tmp,
    )
}

fn call(home: &Home, tool: &str, params: &str) -> Run {
    let cwd = home.ws.display().to_string();
    run(toolhost(home).args(["call", tool, params, "--cwd", &cwd]))
}

fn write_note(home: &Home) -> Run {
    call(
        home,
        "access_write",
        r#"{"path":"note.txt","text":"hello"}"#,
    )
}

#[test]
fn a_declared_and_granted_write_is_made() {
    let home = user("[plugins.fixture_access]\nfs = \"workspace-write\"\n");
    let wrote = write_note(&home);
    assert_eq!(wrote.code, 0, "{wrote:?}");
    assert_eq!(
        std::fs::read_to_string(home.ws.join("note.txt")).unwrap(),
        "hello"
    );
}

#[test]
fn a_declared_write_not_granted_is_refused_with_the_setting_that_grants_it() {
    let home = user("");
    let refused = write_note(&home);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(!home.ws.join("note.txt").exists());
    assert!(
        refused.stdout.contains(
            "toolhost's sandbox refused plugin \"fixture_access\": it declares \
             fs=workspace-write, but is granted only fs=workspace-read"
        ),
        "{refused:?}"
    );
    assert!(
        refused.stdout.contains(
            "set fs = \"workspace-write\" in the settings file, under [plugins.fixture_access]"
        ),
        "{refused:?}"
    );
}

#[test]
fn a_grant_beyond_the_declaration_is_not_given() {
    // The user grants the network and programs; the plugin declares neither.
    let home =
        user("[plugins.fixture_access]\nfs = \"workspace-write\"\nnetwork = true\nspawn = true\n");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = call(&home, "access_connect", &format!(r#"{{"port":"{port}"}}"#));
    assert_ne!(connect.code, 0, "{connect:?}");
    let spawn = call(&home, "access_spawn", "{}");
    assert_ne!(spawn.code, 0, "{spawn:?}");
    for refused in [&connect, &spawn] {
        assert!(
            refused.stdout.contains(
                "toolhost's sandbox may have refused plugin \"fixture_access\" something it does not \
                 declare: it declares fs=workspace-write"
            ),
            "{refused:?}"
        );
    }
}

#[test]
fn plugin_show_lists_what_it_declares_is_granted_and_lacks() {
    let home = user("");
    let shown = run(toolhost(&home).args(["plugin", "show", PLUGIN]));
    assert_eq!(shown.code, 0, "{shown:?}");
    for line in [
        "declares: fs=workspace-write",
        "granted:  fs=workspace-read, memory_mb=4096",
        "gets:     fs=workspace-read, memory_mb=4096",
        "missing:  fs=workspace-write: set fs = \"workspace-write\" under [plugins.fixture_access]",
    ] {
        assert!(shown.stdout.contains(line), "{line}\n{shown:?}");
    }
    let tools = run(toolhost(&home).args(["tools"]));
    assert!(
        tools
            .stdout
            .contains("fixture_access: declares fs=workspace-write; granted fs=workspace-read, memory_mb=4096; lacks fs=workspace-write"),
        "{tools:?}"
    );
}

#[test]
fn a_bundle_manifest_grants_what_the_plugin_declares() {
    let root = workdir();
    let bundle = root.path().join("bundle");
    std::fs::create_dir(&bundle).unwrap();
    let source = library(PLUGIN);
    let file = source.file_name().unwrap().to_string_lossy().into_owned();
    std::fs::copy(&source, bundle.join(&file)).unwrap();
    let home = user("");
    let toolhost = || toolhost(&home);
    let keygen = run(toolhost()
        .args(["bundle", "keygen", "--out"])
        .arg(root.path().join("org")));
    assert_eq!(keygen.code, 0, "{keygen:?}");
    let manifest = format!(
        "[bundle]\nname = \"acme\"\nversion = \"1.0.0\"\n\n\
         [[plugins]]\nlibrary = \"{file}\"\nversion = \"*\"\nsha256 = \"{}\"\n\
         grants = {{ fs = \"workspace-write\" }}\n",
        toolhost::sha256_file(&bundle.join(&file)).unwrap()
    );
    std::fs::write(bundle.join("bundle.toml"), manifest).unwrap();
    let signed = run(toolhost()
        .args(["bundle", "sign"])
        .arg(&bundle)
        .arg("--key")
        .arg(root.path().join("org.key")));
    assert_eq!(signed.code, 0, "{signed:?}");
    let mut bundled = toolhost_as_installed();
    bundled
        .arg("--settings")
        .arg(&home.settings)
        .arg("--bundle")
        .arg(&bundle)
        .arg("--trusted-key")
        .arg(root.path().join("org.pub"))
        .env("HOME", &home.home)
        .env("TMPDIR", &home.tmp);
    let wrote = run(bundled.args([
        "call",
        "access_write",
        r#"{"path":"note.txt","text":"from the bundle"}"#,
        "--cwd",
        &home.ws.display().to_string(),
    ]));
    assert_eq!(wrote.code, 0, "{wrote:?}");
    assert_eq!(
        std::fs::read_to_string(home.ws.join("note.txt")).unwrap(),
        "from the bundle"
    );
}

#[test]
fn a_grant_to_one_build_lets_it_do_what_it_declares_until_revoked_or_rebuilt() {
    let home = user("");
    assert_ne!(write_note(&home).code, 0, "not granted yet");
    let refused = write_note(&home);
    assert!(
        refused
            .stdout
            .contains("or run `toolhost plugin grant fixture_access`"),
        "{refused:?}"
    );
    let unasked = run(toolhost(&home).args(["plugin", "grant", PLUGIN]));
    assert_ne!(
        unasked.code, 0,
        "with nobody to ask, nothing is granted: {unasked:?}"
    );
    let granted = run(toolhost(&home).args(["plugin", "grant", PLUGIN, "--yes"]));
    assert_eq!(granted.code, 0, "{granted:?}");
    assert!(
        granted
            .stdout
            .contains("what it declares (fs=workspace-write), for this build"),
        "{granted:?}"
    );
    let wrote = write_note(&home);
    assert_eq!(wrote.code, 0, "{wrote:?}");
    assert_eq!(
        std::fs::read_to_string(home.ws.join("note.txt")).unwrap(),
        "hello"
    );
    std::fs::remove_file(home.ws.join("note.txt")).unwrap();

    // Another build of the plugin (other bytes) has no grant.
    let library = home.plugins.path().join("libfixture_access.so");
    let mut bytes = std::fs::read(&library).unwrap();
    bytes.extend_from_slice(b"another build");
    // The directory holds a link to the build's own file: replace the link, not that file.
    std::fs::remove_file(&library).unwrap();
    std::fs::write(&library, bytes).unwrap();
    assert_ne!(write_note(&home).code, 0, "a new build needs a new grant");
    let granted = run(toolhost(&home).args(["plugin", "grant", PLUGIN, "--yes"]));
    assert_eq!(granted.code, 0, "{granted:?}");
    assert_eq!(write_note(&home).code, 0);
    std::fs::remove_file(home.ws.join("note.txt")).unwrap();

    let revoked = run(toolhost(&home).args(["plugin", "revoke", PLUGIN]));
    assert!(revoked.stdout.contains("Revoked"), "{revoked:?}");
    assert_ne!(write_note(&home).code, 0, "revoked");
}
