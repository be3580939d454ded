//! The floor of `cargo xtask bench mcp`: an MCP server over stdio built from rmcp alone, as
//! `toolhost mcp` builds its own (a current-thread runtime, stdin and stdout read and written
//! as pipes on the reactor), that answers `tools/call` of `read_file` by reading the file named
//! by its `path` argument and numbering its lines (it lists no tools: the bench lists none).
//!
//! Nothing else runs: no path checks, no plugin, no approval or hooks, no call thread. Its time
//! beside toolhost's is what the protocol library costs; the rest is toolhost's.

use std::fmt::Write as _;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

/// The server: no state.
struct Floor;

impl ServerHandler for Floor {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(Vec::new()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let path = request
            .arguments
            .as_ref()
            .and_then(|arguments| arguments.get("path"))
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| ErrorData::invalid_params("path is missing", None))?;
        let text = std::fs::read_to_string(path)
            .map_err(|e| ErrorData::internal_error(format!("cannot read {path}: {e}"), None))?;
        let mut numbered = String::with_capacity(text.len() + text.len() / 8);
        for (index, line) in text.lines().enumerate() {
            let _ = writeln!(numbered, "{:>3} | {line}", index + 1);
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(numbered)]).into())
    }
}

fn main() -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let running = Floor.serve(stdio()?).await.map_err(|e| e.to_string())?;
        running.waiting().await.map_err(|e| e.to_string())?;
        Ok(())
    })
}

/// Private copies of stdin and stdout as pipes on the reactor (how `toolhost mcp` reads a pipe).
#[cfg(unix)]
fn stdio() -> Result<
    (
        tokio::net::unix::pipe::Receiver,
        tokio::net::unix::pipe::Sender,
    ),
    String,
> {
    use std::fs::File;
    use std::os::fd::AsFd;
    let copy = |fd: std::os::fd::BorrowedFd<'_>| {
        fd.try_clone_to_owned()
            .map(File::from)
            .map_err(|e| e.to_string())
    };
    let input = copy(std::io::stdin().as_fd())?;
    let output = copy(std::io::stdout().as_fd())?;
    let input = tokio::net::unix::pipe::Receiver::from_file(input)
        .map_err(|e| format!("stdin is not a pipe: {e}"))?;
    let output = tokio::net::unix::pipe::Sender::from_file(output)
        .map_err(|e| format!("stdout is not a pipe: {e}"))?;
    Ok((input, output))
}

/// Elsewhere rmcp's own stdio.
#[cfg(not(unix))]
fn stdio() -> Result<(tokio::io::Stdin, tokio::io::Stdout), String> {
    Ok(rmcp::transport::stdio())
}
