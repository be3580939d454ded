//! What the tests need beyond cargo, installed when missing (Debian packages, npm packages).
//!
//! The tests of the tools built so far need nothing beyond the Rust toolchain; tools that drive
//! a browser or an MCP server add their requirements here.

/// Installs every missing requirement.
pub fn install_missing() -> Result<(), String> {
    Ok(())
}
