//! Signing in to an OAuth-protected MCP server: the fixture server (tests/fixtures/
//! mcp_http_server.py `--oauth`) is the MCP Python SDK's server behind its own bearer-token
//! middleware and authorization server, on 127.0.0.1. The user signs in with
//! `toolhost mcp-servers login`, the browser being tests/conformance/mcp-client-runner
//! `--browse` (it follows the authorization server's redirect back, as a consenting user's
//! browser does); then calls carry the token, through `toolhost call` and `toolhost mcp`.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use toolhost_tests::{run, workspace_root, Home, Run};

use crate::mcp_remote::{HttpServer, Kind};
use crate::sdk_client::call_tools_in;

/// A user whose MCP settings name the fixture server as `secured`.
fn user(server: &HttpServer) -> Home {
    let home = Home::new("", &["use_mcp_tool", "execute_command"]);
    let mcp = home.base.join("cline_mcp_settings.json");
    let servers = json!({"mcpServers": {"secured": {"type": "streamableHttp", "url": server.url}}});
    std::fs::write(&mcp, servers.to_string()).unwrap();
    std::fs::write(
        &home.settings,
        format!(
            "[auto_approve]\nuse_mcp = true\n[mcp]\nsettings_file = {:?}\n",
            mcp.display().to_string()
        ),
    )
    .unwrap();
    home
}

/// The browser: a consenting user's, following the authorization page's redirect.
fn browser() -> String {
    let runner = workspace_root().join("tests/conformance/mcp-client-runner");
    format!("python3 {} --browse", runner.display())
}

fn whoami(home: &Home) -> Run {
    run(home.toolhost().args([
        "call",
        "use_mcp_tool",
        r#"{"server_name":"secured","tool_name":"whoami","arguments":"{}"}"#,
    ]))
}

fn sign_in_file(home: &Home) -> PathBuf {
    home.home.join(".config/toolhost/mcp-sign-ins.json")
}

/// The access token the sign-in file keeps for the server.
fn kept_token(home: &Home) -> Option<String> {
    let text = std::fs::read_to_string(sign_in_file(home)).ok()?;
    let kept: Value = serde_json::from_str(&text).ok()?;
    let servers = kept["servers"].as_object()?;
    let entry = servers.values().next()?;
    Some(
        entry["credentials"]["token_response"]["access_token"]
            .as_str()?
            .to_string(),
    )
}

fn login(home: &Home) -> Run {
    run(home
        .toolhost()
        .env("BROWSER", browser())
        .args(["mcp-servers", "login", "secured"]))
}

#[test]
fn a_user_signs_in_and_the_calls_carry_the_token_until_signing_out() {
    let server = HttpServer::start(Kind::StreamableHttp, &["--oauth", "mcp:tools"]);
    let home = user(&server);

    let before = whoami(&home);
    assert!(
        before
            .stdout
            .contains("it needs you to sign in. Run `toolhost mcp-servers login secured`"),
        "{before:?}"
    );

    let signed_in = login(&home);
    let origin = server.url.trim_end_matches("/mcp");
    assert!(
        signed_in.stdout.contains(&format!(
            "Signed in to MCP server \"secured\" at {origin} (scopes: mcp:tools)."
        )),
        "{signed_in:?}"
    );
    assert!(signed_in.stderr.contains("/authorize?"), "{signed_in:?}");
    let token = kept_token(&home).expect("the sign-in keeps a token");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(sign_in_file(&home))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "the sign-in file is the user's alone");
    }

    let after = whoami(&home);
    assert!(
        after.stdout.contains(&format!("Bearer {token}")),
        "{after:?}"
    );

    let listed = run(home.toolhost().arg("mcp-servers"));
    assert!(
        listed
            .stdout
            .contains(&format!("signed in at {origin} (scopes: mcp:tools)")),
        "{listed:?}"
    );

    // An MCP client in front of `toolhost mcp` reaches the server as the signed-in user.
    let settings = home.settings.display().to_string();
    let answers = call_tools_in(
        home.plugins.path(),
        &home.ws,
        &["--settings", &settings],
        &[("secured0mcp0whoami".to_string(), json!({}))],
        Some(&home.home.join(".config")),
    );
    assert_eq!(answers[0]["text"], format!("Bearer {token}"), "{answers:?}");

    let out = run(home.toolhost().args(["mcp-servers", "logout", "secured"]));
    assert!(
        out.stdout.contains("Signed out of MCP server \"secured\"."),
        "{out:?}"
    );
    assert_eq!(kept_token(&home), None, "signing out forgets the token");
    let signed_out = whoami(&home);
    assert!(
        signed_out.stdout.contains("mcp-servers login secured"),
        "{signed_out:?}"
    );
}

#[test]
fn a_sandboxed_command_cannot_read_the_sign_ins() {
    let server = HttpServer::start(Kind::StreamableHttp, &["--oauth", "mcp:tools"]);
    let home = user(&server);
    let signed_in = login(&home);
    assert_eq!(signed_in.code, 0, "{signed_in:?}");
    let token = kept_token(&home).expect("the sign-in keeps a token");
    let file = sign_in_file(&home);
    let command = format!(
        "cat {0}; cat {1}/*; ls -la {1}",
        file.display(),
        file.parent().unwrap().display()
    );
    let params = json!({"command": command, "requires_approval": false}).to_string();
    let out = run(home
        .toolhost()
        .args(["call", "--yes", "execute_command", &params]));
    assert!(out.stdout.contains("Command executed"), "{out:?}");
    assert!(!out.stdout.contains(&token), "the token leaked: {out:?}");
    assert!(
        out.stdout
            .contains("mcp-sign-ins.json: No such file or directory"),
        "the directory is masked: {out:?}"
    );
    // Nor is it logged, however verbose.
    let verbose = run(home.toolhost().args([
        "-vvv",
        "call",
        "use_mcp_tool",
        r#"{"server_name":"secured","tool_name":"echo","arguments":"{\"text\":\"hi\"}"}"#,
    ]));
    assert!(verbose.stdout.contains("echo: hi"), "{verbose:?}");
    assert!(!verbose.stderr.contains(&token), "the token was logged");
}

#[test]
fn an_expired_token_is_refreshed_and_kept() {
    let server = HttpServer::start(
        Kind::StreamableHttp,
        &["--oauth", "mcp:tools", "--token-lifetime", "4"],
    );
    let home = user(&server);
    assert_eq!(login(&home).code, 0);
    let first = kept_token(&home).expect("the sign-in keeps a token");
    // Past half the token's life, where a client refreshes it (not a timing assertion).
    std::thread::sleep(std::time::Duration::from_secs(3));
    let after = whoami(&home);
    let second = kept_token(&home).expect("the refreshed token is kept");
    assert_ne!(first, second, "the token was refreshed");
    assert!(
        after.stdout.contains(&format!("Bearer {second}")),
        "{after:?}"
    );
}

#[test]
fn without_a_browser_the_page_is_printed_and_the_sign_in_waits_for_it() {
    let server = HttpServer::start(Kind::StreamableHttp, &["--oauth", "mcp:tools"]);
    let home = user(&server);
    let mut login = home
        .toolhost()
        .env_remove("BROWSER")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .args(["mcp-servers", "login", "secured"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let page = printed_page(&mut login);
    // The user opens the page themselves.
    let opened = Command::new("python3")
        .arg(workspace_root().join("tests/conformance/mcp-client-runner"))
        .args(["--browse", &page])
        .output()
        .unwrap();
    assert!(
        opened.status.success(),
        "{page}: {}",
        String::from_utf8_lossy(&opened.stderr)
    );
    let done = login.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&done.stdout);
    assert!(
        stdout.contains("Signed in to MCP server \"secured\""),
        "{stdout}"
    );
    assert!(kept_token(&home).is_some());
}

/// The authorization page a waiting `login` printed on stderr (the rest of which is drained, so
/// that its next lines find a reader).
fn printed_page(login: &mut std::process::Child) -> String {
    let stderr = BufReader::new(login.stderr.take().unwrap());
    let (page, printed) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            if line.contains("/authorize?") {
                let _ = page.send(line.trim().to_string());
            }
        }
    });
    printed.recv().expect("login printed no page")
}
