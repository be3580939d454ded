//! The `toolhost` binary: see [`toolhost::cli`].

fn main() -> std::process::ExitCode {
    toolhost::sandbox_service::run_supervisor_if_asked();
    toolhost::cli::main()
}
