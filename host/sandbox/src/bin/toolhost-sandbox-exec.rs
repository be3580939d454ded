//! `toolhost-sandbox-exec --policy <json> -- <argv...>`: the sandbox supervisor alone, for the
//! crate's tests (the product runs it as `toolhost __sandbox-exec`).

fn main() {
    let code = toolhost_sandbox::exec_main(std::env::args_os().skip(1));
    std::process::exit(code);
}
