//! Running a request until it ends or the host cancels the call.
//!
//! Each call gets a current-thread tokio runtime of its own, driven by the calling thread, rather
//! than the SDK's shared plugin runtime (`tool_api::sdk::runtime`). That runtime is one per
//! library image and is shut down when any host that loaded the library drops it; with several
//! hosts in one process (the in-process tests, an embedding application) a call still running on
//! it then panics inside tokio ("A Tokio 1.x context was found, but it is being shutdown"), and
//! the host disables the plugin. A runtime per call costs well under a millisecond and leaves no
//! thread behind.

use std::future::Future;
use std::time::Duration;

use tool_api::abi::{ToolError, ToolErrorKind};
use tool_api::sdk::Ctx;

/// How often a running request looks at the call's cancellation flag.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// Runs `future` to completion on a runtime of this call's own (the calling thread drives it, so
/// the future may borrow `ctx`); a cancelled call ends with a `CANCELLED` error and drops the
/// request.
pub fn block_on_cancellable<F: Future>(ctx: &Ctx<'_>, future: F) -> Result<F::Output, ToolError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            ToolError::new(
                ToolErrorKind::INTERNAL,
                format!("cannot start an async runtime for the request: {e}"),
            )
        })?;
    let cancelled = async {
        while !ctx.is_cancelled() {
            tokio::time::sleep(CANCEL_POLL).await;
        }
    };
    let outcome = runtime.block_on(async {
        tokio::select! {
            output = future => Some(output),
            () = cancelled => None,
        }
    });
    // Not a plain drop: that would wait for a name lookup still running on the blocking pool
    // (a cancelled or timed-out request can leave one behind).
    runtime.shutdown_background();
    outcome
        .ok_or_else(|| ToolError::new(ToolErrorKind::CANCELLED, "The web request was cancelled."))
}
