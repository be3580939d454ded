//! The hidden supervisor mode of the `toolhost` binary (`toolhost __sandbox-exec --policy
//! <json> -- <argv...>`, see [`toolhost_sandbox::run_sandboxed`]), and where the `toolhost`
//! binary is for a process that embeds the host library.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{CallError, ErrorKind};

/// The hidden mode of the binary.
pub const SUPERVISOR_MODE: &str = "__sandbox-exec";

/// Names the `toolhost` binary for a process that embeds the host library.
pub const BINARY_ENV: &str = "TOOLHOST_BINARY";

static IN_TOOLHOST_BINARY: AtomicBool = AtomicBool::new(false);

/// Called first by the `toolhost` binary's `main`: in the supervisor mode this runs the
/// supervisor and exits; otherwise it notes that this process is the `toolhost` binary (so
/// that it can be its own supervisor) and returns.
pub fn run_supervisor_if_asked() {
    IN_TOOLHOST_BINARY.store(true, Ordering::Relaxed);
    let mut args = std::env::args_os();
    if args.nth(1).is_some_and(|mode| mode == SUPERVISOR_MODE) {
        let code = toolhost_sandbox::exec_main(args);
        std::process::exit(code);
    }
}

/// The `toolhost` binary, which runs the supervisor and plugin workers: this process's own
/// executable when it is that binary; a process that embeds the host library (tests, other
/// frontends) uses `$TOOLHOST_BINARY`, else a `toolhost` next to its executable or one
/// directory up (as plugin directories are found).
pub fn toolhost_program() -> Result<PathBuf, CallError> {
    let exe = std::env::current_exe().map_err(|e| {
        CallError::new(
            ErrorKind::Internal,
            format!("cannot find the toolhost executable: {e}"),
        )
    })?;
    if IN_TOOLHOST_BINARY.load(Ordering::Relaxed) {
        return Ok(exe);
    }
    if let Some(path) = std::env::var_os(BINARY_ENV) {
        return Ok(PathBuf::from(path));
    }
    let dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    for candidate in [dir.join("toolhost"), dir.join("..").join("toolhost")] {
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    Err(CallError::new(
        ErrorKind::Internal,
        "no toolhost executable to run the sandbox's supervisor (set TOOLHOST_BINARY)",
    ))
}
