//! The frames of the isolated-plugin worker channel (`host/src/plugins/worker/protocol.rs`):
//! any bytes, read as the worker reads the host's messages or as the host reads a (possibly
//! hostile) worker's, never panic and never allocate beyond what arrived; every message read
//! is written and read back as the same message.
//!
//! Input: one byte choosing the side, then the bytes on the socket.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolhost::fuzzing::{worker_frames, WorkerSide};

fuzz_target!(|data: &[u8]| {
    let Some((&side, stream)) = data.split_first() else {
        return;
    };
    let side = if side % 2 == 0 {
        WorkerSide::Worker
    } else {
        WorkerSide::Host
    };
    let (read, again) = worker_frames(side, stream);
    assert_eq!(read, again, "a message changed on its way round");
});
