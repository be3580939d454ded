//! The frames of `toolhost mcp`: any bytes from the client, after a valid `initialize` or in
//! its place, are read by the MCP server (rmcp over the host) without a panic, the session ends
//! when the client closes its side, and every line the server writes is one JSON-RPC message.
//!
//! Input: the bytes the client sends. The host has no plugins, so nothing the input names can
//! run.
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolhost::fuzzing::{empty_host, serve_mcp};
use toolhost::Host;

fn host() -> &'static Arc<Host> {
    static HOST: OnceLock<Arc<Host>> = OnceLock::new();
    HOST.get_or_init(empty_host)
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("runtime: {e}"))
    })
}

fuzz_target!(|data: &[u8]| {
    let input = data.to_vec();
    let output = runtime().block_on(async move {
        let (client, server) = tokio::io::duplex(1 << 20);
        let serving = tokio::spawn(serve_mcp(host().clone(), server));
        let (mut read, mut write) = tokio::io::split(client);
        let writing = async move {
            let _ = write.write_all(&input).await;
            let _ = write.shutdown().await;
        };
        let mut output = Vec::new();
        let reading = read.read_to_end(&mut output);
        let (_, read) = tokio::join!(writing, reading);
        let _ = read;
        // The protocol's own errors (initialization refused) are answers, not faults.
        let _ = serving
            .await
            .unwrap_or_else(|e| panic!("the server panicked: {e}"));
        output
    });
    for line in output.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let message: Value = serde_json::from_slice(line)
            .unwrap_or_else(|e| panic!("the server wrote a line that is not JSON ({e}): {line:?}"));
        assert_eq!(
            message["jsonrpc"], "2.0",
            "not a JSON-RPC message: {message}"
        );
    }
});
