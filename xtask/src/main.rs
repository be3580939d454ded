//! `cargo xtask <task>`: all automation of the workspace, in Rust.
//!
//! - `build`: debug build of everything, plugins staged in `target/debug/plugins/`.
//! - `run -- ARGS`: `build`, then the host with ARGS against those plugins.
//! - `dist`: release build into `target/dist/` (`bin/toolhost`, `plugins/*.so`).
//! - `install [--prefix DIR]`: release build installed as `DIR/bin/toolhost` and
//!   `DIR/lib/toolhost/plugins/*.so` (default `~/.local`).
//! - `test`: the checks (`cargo fmt --check`, clippy with warnings as errors, `tidy`), then
//!   installs what the tests need, builds, runs every test, a short soak and a fuzz smoke.
//! - `tidy`: the checks of the code's shape (see [`tidy`]).
//! - `bench [NAME]`: benchmarks, printed as ratios against a baseline run side by side.
//! - `fuzz [--time SECONDS] [--runs N] [TARGET...]`: every fuzz target of `fuzz/` (see
//!   [`fuzz`]).
//! - `soak [--calls N] [--debug] [--only mcp|serve] [--prebuilt]`: mixed calls over `toolhost mcp` and `serve`, resources sampled (see
//!   [`soak`]).
//! - `bundle --manifest FILE [--out DIR] [--key KEY]`: a curated bundle from the release build.

mod bench;
mod build;
mod bundle;
mod fuzz;
mod install;
mod requirements;
mod soak;
mod tidy;
mod util;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("build") => build::stage(build::Profile::Dev).map(|_| ()),
        Some("run") => run(&args[1..]),
        Some("dist") => build::dist().map(|dir| println!("{}", dir.display())),
        Some("install") => install::run(&args[1..]).map(|prefix| {
            println!(
                "installed {} and {}",
                prefix.join("bin/toolhost").display(),
                prefix.join("lib/toolhost/plugins").display()
            );
        }),
        Some("test") => test(),
        Some("tidy") => tidy::run(),
        Some("bench") => bench::run(args.get(1).map(String::as_str)),
        Some("fuzz") => fuzz::run(&args[1..]),
        Some("soak") => soak::run(&args[1..]),
        Some("bundle") => bundle::run(&args[1..]).map(|dir| println!("{}", dir.display())),
        _ => {
            eprintln!("usage: cargo xtask <build | run -- ARGS | dist | install [--prefix DIR] | test | tidy | bench [NAME] | fuzz [--time SECONDS] [--runs N] [TARGET...] | soak [--calls N] [--debug] [--only mcp|serve] [--prebuilt] | bundle --manifest FILE [--out DIR] [--key KEY]>");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Builds what is needed and runs the host with `args` against the freshly built plugins.
fn run(args: &[String]) -> Result<(), String> {
    let args = match args.first().map(String::as_str) {
        Some("--") => &args[1..],
        _ => args,
    };
    let profile_dir = build::stage(build::Profile::Dev)?;
    let status = std::process::Command::new(profile_dir.join("toolhost"))
        .args(args)
        .status()
        .map_err(|e| format!("cannot start toolhost: {e}"))?;
    std::process::exit(status.code().unwrap_or(1));
}

/// Checks formatting, lints and the code's shape; installs missing test requirements, builds
/// everything, runs every test, then a short soak and a few seconds of each fuzz target.
fn test() -> Result<(), String> {
    util::cargo(&["fmt", "--all", "--check"], &[])?;
    util::cargo(
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
        &[],
    )?;
    tidy::run()?;
    requirements::install_missing()?;
    build::stage(build::Profile::Dev)?;
    util::cargo(
        &["test", "--workspace", "--locked"],
        &[("TOOLHOST_TESTS_PREBUILT", "1")],
    )?;
    soak::short()?;
    fuzz::smoke()
}
