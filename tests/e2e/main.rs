//! End-to-end tests: the real host binary and the real plugin libraries, built by cargo.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cli;
mod clineignore;
mod escape;
mod in_process;
mod list_files;
mod loading;
mod read_file;
mod replace_in_file;
