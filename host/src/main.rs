//! The `toolhost` binary: see [`toolhost::main`].

fn main() -> std::process::ExitCode {
    toolhost::main()
}
