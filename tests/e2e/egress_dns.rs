//! A name the egress policy refuses never reaches a resolver. The host runs in a network
//! namespace of the test's own whose `/etc/resolv.conf` names a DNS server that writes down
//! every name it is asked about (tests/fixtures/dns_watch.py on that namespace's 127.0.0.1:53);
//! a command asks the proxy for a denied name, a name nobody allowed (with nobody to ask) and
//! an allowed one. Only the allowed one is looked up: the resolver is watched, and the
//! others were decided before anything resolved them.

use std::process::Command;

use serde_json::json;
use toolhost_tests::{run, workspace_root, Home};

/// Brings the namespace's loopback up, puts the watched resolver in place and starts it,
/// runs the toolhost command given as arguments, and stops the resolver.
const IN_NAMESPACE: &str = r#"
set -e
ip link set lo up
mount --bind "$RESOLV_CONF" /etc/resolv.conf
python3 "$DNS_WATCH" "$QUERIES" > "$QUERIES.ready" 2>&1 &
watcher=$!
while [ ! -s "$QUERIES.ready" ]; do sleep 0.05; done
status=0
"$@" || status=$?
kill $watcher
exit $status
"#;

#[test]
fn a_refused_name_is_never_looked_up() {
    let home = Home::new(
        "[auto_approve]\nexecute_safe_commands = true\n\
         [egress]\ndeny = [\"denied.test\"]\nallow = [\"allowed.test\"]\nask = false\n",
        &["execute_command"],
    );
    let resolv_conf = home.base.join("resolv.conf");
    std::fs::write(
        &resolv_conf,
        "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n",
    )
    .unwrap();
    let queries = home.base.join("queries.txt");
    let script = "for name in denied.test nobody.test allowed.test; do \
                  curl -sS -o /dev/null http://$name/ 2>&1 | head -c 300; echo; done";
    let params = json!({"command": script, "requires_approval": "false"});
    let toolhost = home.toolhost();
    let mut command = Command::new("unshare");
    command
        .args(["--user", "--map-root-user", "--net", "--mount", "sh", "-c"])
        .arg(IN_NAMESPACE)
        .arg("sh")
        .arg(toolhost.get_program())
        .args(toolhost.get_args())
        .args(["call", "execute_command", &params.to_string(), "--cwd"])
        .arg(&home.ws)
        .env("RESOLV_CONF", &resolv_conf)
        .env(
            "DNS_WATCH",
            workspace_root().join("tests/fixtures/dns_watch.py"),
        )
        .env("QUERIES", &queries)
        .env("XDG_STATE_HOME", home.home.join(".local/state"));
    for (name, value) in toolhost.get_envs() {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    let result = run(&mut command);
    let output = format!("{}{}", result.stdout, result.stderr);
    assert!(
        output.contains("may not connect to denied.test:80")
            && output.contains("may not connect to nobody.test:80")
            && output.contains("allowed.test:80 cannot be resolved"),
        "{output}"
    );
    let asked = std::fs::read_to_string(&queries).unwrap_or_default();
    assert!(
        asked.lines().any(|name| name == "allowed.test"),
        "the watched resolver saw no query for the allowed name: {asked:?}\n{output}"
    );
    for refused in ["denied.test", "nobody.test"] {
        assert!(
            !asked.lines().any(|name| name.starts_with(refused)),
            "{refused} reached the resolver: {asked:?}"
        );
    }
}
