//! What the fuzz targets (`fuzz/`, `cargo xtask fuzz`) drive inside the host, behind the
//! `fuzzing` feature: the lenient argument parser, Cline's `.clineignore` heuristic for
//! commands, and the frames of `serve`, `mcp` and the plugin worker channel. Not an API: it
//! exists so that the targets reach the code the frontends run, not a copy of it.

use std::sync::Arc;

use serde_json::Value;

pub use crate::call::arguments::{coerce_to_schema, parse_arguments};
pub use crate::permissions::clineignore::blocked_command_arg;

use crate::plugins::worker::protocol::{read_frame, write_frame, FromWorker, ToWorker};
use crate::{
    ApprovalMode, CommandPermissions, HeadlessUi, Host, HostConfig, Placement, Settings, Workspace,
};

/// A host over an empty plugin directory and an empty workspace (a temporary directory kept
/// for the life of the process), denying what is not auto-approved: nothing an input names can
/// run.
pub fn empty_host() -> Arc<Host> {
    let dir = tempfile::tempdir()
        .unwrap_or_else(|e| panic!("temporary directory: {e}"))
        .keep();
    let plugins = dir.join("plugins");
    let workspace = dir.join("ws");
    for d in [&plugins, &workspace] {
        std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("create: {e}"));
    }
    Host::new(HostConfig {
        plugin_dirs: vec![plugins],
        workspace: Workspace::new(&workspace).unwrap_or_else(|e| panic!("workspace: {e}")),
        settings: Settings::default(),
        approval: ApprovalMode::DenyUnlessAuto,
        command_permissions: CommandPermissions::from_value(None),
        ui: Box::new(HeadlessUi),
        task_id: "fuzz".into(),
        placement: Placement::default(),
    })
}

/// `serve`'s answers to the lines of `input` (its loop: blank lines skipped, one answer line
/// per request line); returns what it would write.
pub fn serve_lines(host: &Arc<Host>, input: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut output = Vec::new();
    for line in input.split(|&b| b == b'\n') {
        if line.trim_ascii().is_empty() {
            continue;
        }
        if let Some(answer) = crate::frontends::serve::answer(host, line) {
            output.extend_from_slice(answer.to_string().as_bytes());
            output.push(b'\n');
        }
    }
    Ok(output)
}

/// Why [`serve_mcp`] ended before its client closed the stream.
#[derive(Debug, thiserror::Error)]
pub enum McpServeError {
    /// The client's initialization was refused or broke off (boxed: the error is large).
    #[error(transparent)]
    Initialize(Box<rmcp::service::ServerInitializeError>),
    /// The service's task failed (it panicked or was cancelled).
    #[error(transparent)]
    Service(#[from] tokio::task::JoinError),
}

/// The MCP server of `mcp` over `transport` until the client side closes; `Err` is the
/// protocol's error (initialization refused, the service failed).
pub async fn serve_mcp<T>(host: Arc<Host>, transport: T) -> Result<(), McpServeError>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + 'static,
{
    use rmcp::ServiceExt;
    let running = crate::frontends::mcp::McpServer::new(host)
        .serve(transport)
        .await
        .map_err(|e| McpServeError::Initialize(Box::new(e)))?;
    running.waiting().await?;
    Ok(())
}

/// Which side of the worker channel a stream of frames is read as.
#[derive(Debug, Clone, Copy)]
pub enum WorkerSide {
    /// What the worker reads (the host's messages).
    Worker,
    /// What the host reads (a worker's messages: a hostile plugin's side).
    Host,
}

/// Reads frames from `input` as `side` reads them until the end or the first error; each
/// message read is written again and read back. Returns the JSON of the messages read, and
/// the JSON of the same messages after the round trip.
pub fn worker_frames(side: WorkerSide, mut input: &[u8]) -> (Vec<Value>, Vec<Value>) {
    fn round_trip<T>(input: &mut &[u8]) -> Option<(Value, Value)>
    where
        T: serde::Serialize + for<'de> serde::Deserialize<'de>,
    {
        let message: T = read_frame(input).ok()??;
        let first = serde_json::to_value(&message).ok()?;
        let mut frame = Vec::new();
        write_frame(&mut frame, &message).ok()?;
        let again: T = read_frame(&mut frame.as_slice()).ok()??;
        Some((first, serde_json::to_value(&again).ok()?))
    }
    let mut read = Vec::new();
    let mut again = Vec::new();
    while let Some((first, second)) = match side {
        WorkerSide::Worker => round_trip::<ToWorker>(&mut input),
        WorkerSide::Host => round_trip::<FromWorker>(&mut input),
    } {
        read.push(first);
        again.push(second);
    }
    (read, again)
}
