//! `bench sandbox`: what the command sandbox adds to an execute_command call. Two `toolhost
//! serve` processes run side by side over the same workspace (a git repository with a
//! `.clineignore`), one with `[execute_command] sandbox = "off"`, one with the default
//! `workspace-write` profile, whose network is the egress proxy (timed also with the network
//! direct, which shows what the proxy's link and forwarder add; the strict `read-only`,
//! network off, is timed too); calls of
//! `true`, `ls` and `git status` alternate between them, and each call is timed from the
//! request line written to the result line read. The median of each is reported, and the
//! difference is the sandbox's cost: the policy (the `.clineignore` walk), the supervisor's
//! fork and exec, namespaces, mounts, Landlock and seccomp, the memory cgroup, and the
//! clean-up. `workspace-write` is timed a second time with the memory limit per process
//! (as where no cgroup can be made), which shows what moving a command into its cgroup costs.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::bench::mcp_client::percentile;
use crate::bench::startup::{ms, tempfile_dir};
use crate::build;

/// Timed calls per command and profile; the median is reported.
const RUNS: usize = 101;

/// The most the sandbox should add to one command, in milliseconds.
const TARGET_MS: f64 = 5.0;

/// The profiles timed: a name, the `[execute_command]` keys, and the sandbox features the
/// server is to take as missing (`TOOLHOST_SANDBOX_UNAVAILABLE`).
const PROFILES: [(&str, &str, &str); 5] = [
    ("off", "sandbox = \"off\"", ""),
    ("workspace-write", "sandbox = \"workspace-write\"", ""),
    (
        "  network direct",
        "sandbox = \"workspace-write\"\nnetwork = \"direct\"",
        "",
    ),
    (
        "  without memory cgroup",
        "sandbox = \"workspace-write\"",
        "memory-cgroup",
    ),
    (
        "read-only, no network",
        "sandbox = \"read-only\"\nnetwork = false",
        "",
    ),
];

const COMMANDS: [&str; 3] = ["true", "ls", "git status"];

pub(super) struct Server {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next: u64,
}

impl Server {
    pub(super) fn start(
        host: &Path,
        plugins: &Path,
        workspace: &Path,
        settings: &Path,
        unavailable: &str,
    ) -> Result<Self, String> {
        let mut child = Command::new(host)
            .arg("--plugins")
            .arg(plugins)
            .arg("--settings")
            .arg(settings)
            .args(["serve", "--cwd"])
            .arg(workspace)
            .env(
                "TOOLHOST_PLUGIN_INDEX",
                workspace.join("../plugin-index.json"),
            )
            .env("TOOLHOST_SANDBOX_UNAVAILABLE", unavailable)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start toolhost serve: {e}"))?;
        let input = child.stdin.take().ok_or("no stdin")?;
        let output = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        Ok(Self {
            child,
            input,
            output,
            next: 0,
        })
    }

    /// One call; its wall time and result.
    pub(super) fn call(&mut self, command: &str) -> Result<(Duration, Value), String> {
        self.next += 1;
        let line = json!({"id": self.next, "tool": "execute_command",
                          "params": {"command": command, "requires_approval": "false"}});
        let start = Instant::now();
        writeln!(self.input, "{line}").map_err(|e| e.to_string())?;
        let mut answer = String::new();
        self.output
            .read_line(&mut answer)
            .map_err(|e| e.to_string())?;
        let elapsed = start.elapsed();
        let value: Value = serde_json::from_str(&answer).map_err(|e| format!("{e}: {answer}"))?;
        if value["is_error"] == json!(true) {
            return Err(format!("{command} failed: {}", value["text"]));
        }
        Ok((elapsed, value))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The median of one command's times and the range most of them fall in, in milliseconds.
struct Spread {
    median: f64,
    p10: f64,
    p90: f64,
}

impl Spread {
    fn of(times: Vec<Duration>) -> Self {
        Self {
            median: ms(percentile(&times, 50)),
            p10: ms(percentile(&times, 10)),
            p90: ms(percentile(&times, 90)),
        }
    }
}

/// Runs the benchmark and returns its JSON record.
pub fn sandbox() -> Result<Value, String> {
    let dist = build::dist()?;
    let host = dist.join("bin/toolhost");
    let plugins = dist.join("plugins");
    let base = tempfile_dir("toolhost-bench-sandbox")?;
    let workspace = base.join("ws");
    std::fs::create_dir_all(workspace.join("src")).map_err(|e| e.to_string())?;
    for i in 0..50 {
        std::fs::write(workspace.join(format!("src/file{i}.rs")), "fn f() {}\n")
            .map_err(|e| e.to_string())?;
    }
    std::fs::write(workspace.join(".env"), "TOKEN=x\n").map_err(|e| e.to_string())?;
    std::fs::write(workspace.join(".clineignore"), ".env\n").map_err(|e| e.to_string())?;
    let git = Command::new("git")
        .args(["init", "-q", "."])
        .current_dir(&workspace)
        .status()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !git.success() {
        return Err("git init failed".into());
    }
    let mut servers = Vec::new();
    for (i, (_, keys, unavailable)) in PROFILES.iter().enumerate() {
        let settings = base.join(format!("settings-{i}.toml"));
        std::fs::write(
            &settings,
            format!("[auto_approve]\nexecute_safe_commands = true\n[execute_command]\n{keys}\n"),
        )
        .map_err(|e| e.to_string())?;
        servers.push(Server::start(
            &host,
            &plugins,
            &workspace,
            &settings,
            unavailable,
        )?);
    }
    // Warm up: first calls load the plugin and probe the kernel.
    for server in &mut servers {
        for command in COMMANDS {
            server.call(command)?;
        }
    }
    let mut times = vec![vec![Vec::with_capacity(RUNS); COMMANDS.len()]; PROFILES.len()];
    for _ in 0..RUNS {
        for (c, command) in COMMANDS.iter().enumerate() {
            for (p, server) in servers.iter_mut().enumerate() {
                times[p][c].push(server.call(command)?.0);
            }
        }
    }
    let spreads: Vec<Vec<Spread>> = times
        .into_iter()
        .map(|per_command| per_command.into_iter().map(Spread::of).collect())
        .collect();
    let medians: Vec<Vec<f64>> = spreads
        .iter()
        .map(|per_command| per_command.iter().map(|s| s.median).collect())
        .collect();
    println!(
        "sandbox: one execute_command call through `toolhost serve`, release build, median of {RUNS} (interleaved)"
    );
    print!("  {:<24}", "profile");
    for command in COMMANDS {
        print!(" {command:>18}");
    }
    println!();
    let mut rows = Vec::new();
    for (p, (name, _, _)) in PROFILES.iter().enumerate() {
        print!("  {name:<24}");
        let mut entries = Vec::new();
        for (c, command) in COMMANDS.iter().enumerate() {
            let value = medians[p][c];
            let added = value - medians[0][c];
            if p == 0 {
                print!(" {value:>10.2} ms       ");
            } else {
                print!(" {value:>7.2} (+{added:.2}) ms");
            }
            let spread = &spreads[p][c];
            entries.push(json!({
                "command": command,
                "median_ms": value,
                "p10_ms": spread.p10,
                "p90_ms": spread.p90,
                "added_ms": added,
            }));
        }
        println!();
        rows.push(json!({"profile": name, "commands": entries}));
    }
    let worst = (1..PROFILES.len())
        .flat_map(|p| (0..COMMANDS.len()).map(move |c| (p, c)))
        .map(|(p, c)| medians[p][c] - medians[0][c])
        .fold(f64::MIN, f64::max);
    println!("  most added: {worst:.2} ms (target: at most {TARGET_MS} ms)");
    println!("  spread of each median (10th to 90th percentile, ms):");
    for (p, (name, _, _)) in PROFILES.iter().enumerate() {
        print!("  {name:<24}");
        for spread in &spreads[p] {
            print!("  {:>6.2} to {:<6.2}", spread.p10, spread.p90);
        }
        println!();
    }
    Ok(json!({
        "bench": "sandbox",
        "runs": RUNS,
        "profiles": rows,
        "most_added_ms": worst,
        "target_ms": TARGET_MS,
    }))
}
