//! End-to-end tests: the real host binary and the real plugin libraries, built by cargo.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod abi_compatibility;
mod apply_patch;
mod browser_action;
mod bundles;
mod cli;
mod clineignore;
mod command_permissions;
mod escape;
mod execute_command;
mod hooks;
mod in_process;
mod list_code_definition_names;
mod list_files;
mod loading;
mod mcp_client;
mod mcp_server;
mod meta_tools;
mod parser;
mod read_file;
mod replace_in_file;
mod replay;
mod search_files;
mod subagents;
mod third_party;
mod web_tools;
