//! `bench memory`: resident memory of `toolhost mcp` (release, every plugin) against
//! `@modelcontextprotocol/server-filesystem` (node), both driven by the mcp bench's client.
//!
//! VmRSS from `/proc/<pid>/status` is read twice per server: after `initialize` has been
//! answered, and after [`CALLS`] reads of the mcp bench's 10 KB file (toolhost's `read_file`,
//! the reference's `read_text_file`). Linux only. The target: toolhost at most a third of the
//! reference's RSS after the calls.

use serde_json::{json, Value};

use crate::bench::mcp_client::{
    check_read, reference_server, ten_kb_text, Server, Session, NPM_PACKAGE,
};
use crate::bench::startup::{tempfile_dir, warm_plugin_index};
use crate::build;
use crate::util::plugin_crates;

/// Read calls before the second measurement.
const CALLS: usize = 2000;

/// toolhost's RSS over the reference's that should not be exceeded.
const TARGET_RATIO: f64 = 1.0 / 3.0;

/// RSS of one server: after startup and after the calls, in KiB.
struct Rss {
    startup_kib: u64,
    after_calls_kib: u64,
}

/// Runs the benchmark and returns its JSON record.
pub fn memory() -> Result<Value, String> {
    let dist = build::dist()?;
    let (reference_entry, reference_version) = reference_server()?;
    let workspace = tempfile_dir("toolhost-bench-memory")?
        .canonicalize()
        .map_err(|e| e.to_string())?;
    let file = workspace.join("ten_kb.txt");
    std::fs::write(&file, ten_kb_text()).map_err(|e| e.to_string())?;
    // As a user runs it: with the plugin index, made by an earlier run.
    let index = workspace.join("plugin-index.json");
    warm_plugin_index(&dist.join("bin/toolhost"), &dist.join("plugins"), &index)?;
    let toolhost = Server {
        name: "toolhost mcp",
        program: dist.join("bin/toolhost"),
        args: vec![
            "--plugins".into(),
            dist.join("plugins").display().to_string(),
            "mcp".into(),
            "--cwd".into(),
            workspace.display().to_string(),
        ],
        envs: vec![
            ("XDG_CONFIG_HOME", workspace.clone()),
            ("TOOLHOST_PLUGIN_INDEX", index.clone()),
        ],
        tool: "read_file",
        arguments: json!({"path": "ten_kb.txt"}),
    };
    let reference = Server {
        name: "server-filesystem",
        program: "node".into(),
        args: vec![
            reference_entry.display().to_string(),
            workspace.display().to_string(),
        ],
        envs: Vec::new(),
        tool: "read_text_file",
        arguments: json!({"path": file}),
    };
    let ours = measure(&toolhost)?;
    let theirs = measure(&reference)?;
    let startup_ratio = ours.startup_kib as f64 / theirs.startup_kib as f64;
    let ratio = ours.after_calls_kib as f64 / theirs.after_calls_kib as f64;
    let plugins = plugin_crates()?.len();
    println!(
        "memory: VmRSS of toolhost mcp ({plugins} plugins, release) vs {NPM_PACKAGE} {reference_version} (node)"
    );
    println!(
        "  {:<40} {:>12} {:>22}",
        "",
        "startup",
        format!("after {CALLS} reads")
    );
    for (server, rss) in [(&toolhost, &ours), (&reference, &theirs)] {
        println!(
            "  {:<40} {:>9.1} MB {:>19.1} MB",
            format!("{} ({})", server.name, server.tool),
            rss.startup_kib as f64 / 1024.0,
            rss.after_calls_kib as f64 / 1024.0
        );
    }
    println!("  ratio at startup {startup_ratio:.3}");
    println!(
        "  ratio after the reads {ratio:.3} (target <= 1/3 = {TARGET_RATIO:.3}: {})",
        if ratio <= TARGET_RATIO {
            "met"
        } else {
            "NOT met"
        }
    );
    Ok(json!({
        "bench": "memory",
        "reference": format!("{NPM_PACKAGE} {reference_version}"),
        "plugins": plugins,
        "calls": CALLS,
        "rss_kib": {
            "toolhost": {"startup": ours.startup_kib, "after_calls": ours.after_calls_kib},
            "reference": {"startup": theirs.startup_kib, "after_calls": theirs.after_calls_kib},
        },
        "startup_ratio": startup_ratio,
        "ratio": ratio,
        "target_ratio": TARGET_RATIO,
        "target_met": ratio <= TARGET_RATIO,
    }))
}

/// Starts `server`, reads its RSS after `initialize`, makes the calls, reads it again.
fn measure(server: &Server) -> Result<Rss, String> {
    let mut session = Session::spawn(server.command(), server.name)?;
    session.initialize()?;
    session.notify("notifications/initialized")?;
    let pid = session.child.id();
    let startup_kib = vm_rss_kib(pid)?;
    check_read(server, &session.call_tool(server.tool, &server.arguments)?)?;
    for _ in 1..CALLS {
        session.call_tool(server.tool, &server.arguments)?;
    }
    let after_calls_kib = vm_rss_kib(pid)?;
    session.close()?;
    Ok(Rss {
        startup_kib,
        after_calls_kib,
    })
}

/// `VmRSS` of process `pid`, in KiB, from `/proc/<pid>/status`.
fn vm_rss_kib(pid: u32) -> Result<u64, String> {
    let path = format!("/proc/{pid}/status");
    let status = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| format!("no VmRSS in {path}"))
}
