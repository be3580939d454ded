//! `cargo xtask bench [NAME]`: measurements against a baseline run side by side.
//!
//! Only ratios are meaningful on a shared machine; absolute times are context. Results are
//! printed as a table and written to `target/bench/latest.json`. Timings never go into tests.

mod dispatch;
mod egress;
mod hotswap;
mod isolation;
mod list;
mod mcp;
mod mcp_client;
mod mcp_http;
mod memory;
mod paths;
mod sandbox;
mod search;
mod startup;
mod stream;
mod tree;

use serde_json::json;

use crate::util::target_dir;

/// Runs the named benchmark, or all of them.
pub fn run(name: Option<&str>) -> Result<(), String> {
    let results = match name {
        None => vec![
            startup::startup()?,
            search::search()?,
            mcp::mcp()?,
            hotswap::hotswap()?,
            list::list()?,
            dispatch::dispatch()?,
            memory::memory()?,
            paths::paths()?,
            sandbox::sandbox()?,
            egress::egress()?,
            stream::stream()?,
        ],
        Some("startup") => vec![startup::startup()?],
        Some("search") => vec![search::search()?],
        Some("mcp") => vec![mcp::mcp()?],
        Some("hotswap") => vec![hotswap::hotswap()?],
        Some("list") => vec![list::list()?],
        Some("dispatch") => vec![dispatch::dispatch()?],
        Some("memory") => vec![memory::memory()?],
        Some("paths") => vec![paths::paths()?],
        Some("sandbox") => vec![sandbox::sandbox()?],
        Some("egress") => vec![egress::egress()?],
        Some("stream") => vec![stream::stream()?],
        Some(other) => {
            return Err(format!(
                "unknown benchmark '{other}' (known: startup, search, mcp, hotswap, list, dispatch, memory, paths, sandbox, egress, stream)"
            ))
        }
    };
    let out = target_dir().join("bench");
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    let path = out.join("latest.json");
    let text = serde_json::to_string_pretty(&json!({ "results": results })).unwrap_or_default();
    std::fs::write(&path, text).map_err(|e| e.to_string())?;
    println!("\nwritten to {}", path.display());
    Ok(())
}
