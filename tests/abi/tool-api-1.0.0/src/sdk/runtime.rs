//! A tokio runtime owned by the plugin, started on first use.
//!
//! tokio's context is per library image: a plugin cannot use the host's runtime. Tools that need
//! async run their futures here with [`block_on`]; the export macro's `shutdown` stops it.

use std::future::Future;
use std::sync::{Mutex, PoisonError};

use tokio::runtime::{Builder, Handle, Runtime};

static RUNTIME: Mutex<Option<Runtime>> = Mutex::new(None);

/// A handle to the plugin's runtime, starting it if needed.
pub fn handle() -> std::io::Result<Handle> {
    let mut slot = RUNTIME.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(rt) = slot.as_ref() {
        return Ok(rt.handle().clone());
    }
    let rt = Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("plugin-rt")
        .enable_all()
        .build()?;
    let handle = rt.handle().clone();
    *slot = Some(rt);
    Ok(handle)
}

/// Runs a future to completion on the plugin's runtime (from a non-async host thread).
pub fn block_on<F: Future>(future: F) -> std::io::Result<F::Output> {
    Ok(handle()?.block_on(future))
}

/// Stops the runtime, if it was started. Called by the plugin's `shutdown`.
pub fn shutdown() {
    let taken = RUNTIME
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    if let Some(rt) = taken {
        rt.shutdown_background();
    }
}
