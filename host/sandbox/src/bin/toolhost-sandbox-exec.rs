//! `toolhost-sandbox-exec --policy <json> -- <argv...>`: the sandbox supervisor alone, for the
//! crate's tests (the product runs it as `toolhost __sandbox-exec`).
//!
//! `toolhost-sandbox-exec --confine --policy <json> -- <argv...>` instead confines itself with
//! `apply_to_current_process` and then runs the command in its place (exec, no supervisor);
//! `toolhost-sandbox-exec --probe` prints what `probe` finds, as JSON.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;

fn main() {
    let mut args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if args.first().is_some_and(|a| a == "--probe") {
        println!(
            "{}",
            serde_json::to_string(&toolhost_sandbox::probe()).unwrap_or_default()
        );
        return;
    }
    if args.first().is_some_and(|a| a == "--confine") {
        args.remove(0);
        let (policy, argv) = match toolhost_sandbox::parse_exec_args(args) {
            Ok(parsed) => parsed,
            Err(e) => {
                eprintln!("{}{e}", toolhost_sandbox::MESSAGE_PREFIX);
                std::process::exit(toolhost_sandbox::SETUP_FAILED);
            }
        };
        if let Err(e) = toolhost_sandbox::apply_to_current_process(&policy) {
            eprintln!("{}{e}", toolhost_sandbox::MESSAGE_PREFIX);
            std::process::exit(toolhost_sandbox::SETUP_FAILED);
        }
        let error = std::process::Command::new(&argv[0]).args(&argv[1..]).exec();
        eprintln!(
            "{}cannot run the command: {error}",
            toolhost_sandbox::MESSAGE_PREFIX
        );
        std::process::exit(127);
    }
    let code = toolhost_sandbox::exec_main(args);
    std::process::exit(code);
}
