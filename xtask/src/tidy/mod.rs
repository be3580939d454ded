//! `cargo xtask tidy` (and the first step of `cargo xtask test`): the checks of the code's
//! shape that the compiler and clippy do not make, one module per rule.
//!
//! - **Small files** ([`sizes`]): a source file of the product (the host, the sandbox, the
//!   command policy, tool-api, the plugins, xtask) stays within 500 lines, except the tables
//!   it lists by name, each with what it holds.
//! - **The host names no tool** ([`tool_names`]): no string literal of `host/src` outside
//!   `known_tools.rs` and test code is a tool name.
//! - **Capabilities by constant** ([`capabilities`]): a capability string is a literal only
//!   where `tool_api::model` defines its constant.
//! - **One ABI adapter** ([`abi`]): only `tool-api` and the host's `plugins/abi/` mention
//!   abi_stable.
//! - **No circles** ([`circles`]): in every crate of the product, no module depends on itself
//!   through others, between files and between rooms (top-level modules); re-exports are a
//!   facade. Paths are read as Rust syntax ([`syntax`], [`resolve`]) in every form: `use`
//!   trees, `crate::`/`super::`/`self::` paths in code, macro arguments.
//! - **ARCHITECTURE.md is true** ([`architecture`]): every path it names exists.
//! - **Links resolve** ([`links`]): every relative link of README.md, docs/*.md and
//!   ARCHITECTURE.md leads to a file that exists and, with `#anchor`, to one of its headings.
//!
//! The rules that read Rust read whole files, leaving out test code only (an item under
//! `#[cfg(test)]`, a `#[test]` function, a module `tests` and its files).

mod abi;
mod architecture;
mod capabilities;
mod circles;
mod crates;
mod links;
mod resolve;
mod sizes;
mod syntax;
mod tool_names;
mod tree;

use crate::util::workspace_root;

/// Where the product's sources are, relative to the workspace root.
const PRODUCT_DIRS: [&str; 4] = ["host", "tool-api/src", "plugins", "xtask/src"];

/// Runs every rule; the error lists every problem found.
pub fn run() -> Result<(), String> {
    let root = workspace_root();
    let tree = tree::Tree::read(&root, &PRODUCT_DIRS);
    let crates: Vec<crates::Crate> = crates::roots(&tree)
        .iter()
        .map(|r| crates::Crate::load(&tree, r))
        .collect();
    let mut problems = tree.problems.clone();
    problems.extend(sizes::check(&tree));
    problems.extend(tool_names::check(&crates));
    problems.extend(capabilities::check(&crates));
    problems.extend(abi::check(&tree));
    for krate in &crates {
        problems.extend(krate.problems.iter().cloned());
        problems.extend(circles::check(krate));
    }
    let architecture = std::fs::read_to_string(root.join("ARCHITECTURE.md"))
        .map_err(|e| format!("cannot read ARCHITECTURE.md: {e}"))?;
    problems.extend(architecture::check(&architecture, |path| {
        root.join(path).exists()
    }));
    problems.extend(links::check(
        &links::documents(&root),
        |path| std::fs::read_to_string(root.join(path)).ok(),
        |path| root.join(path).exists(),
    ));
    if problems.is_empty() {
        println!(
            "tidy: ok ({} source files, {} crates)",
            tree.len(),
            crates.len()
        );
        Ok(())
    } else {
        Err(format!(
            "tidy found {} problems:\n  {}",
            problems.len(),
            problems.join("\n  ")
        ))
    }
}
