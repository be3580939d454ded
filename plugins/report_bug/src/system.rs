//! The facts a bug report carries about where it was made.

use tool_api::sdk::Ctx;

/// What the report says about the system, in Cline's formats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// `<provider> / <model id>`.
    pub provider_and_model: String,
    /// `<platform> <release>`, with Node's platform names (`linux`, `darwin`, `win32`).
    pub operating_system: String,
    /// The host and the architecture (Node's names: `x64`, `arm64`).
    pub system_info: String,
    /// Always `Unknown`: this is not Cline (Cline's own fallback text).
    pub cline_version: String,
}

impl Facts {
    /// Gathers the facts from the settings and this process.
    pub fn gather(ctx: &Ctx<'_>) -> Self {
        let setting = |key: &str| {
            ctx.setting::<String>(key)
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| "unknown".to_string())
        };
        Self {
            provider_and_model: format!("{} / {}", setting("llm.provider"), setting("llm.model")),
            operating_system: format!("{} {}", node_platform(), os_release()),
            system_info: format!(
                "toolhost: tool-api {}, Architecture: {}",
                tool_api::ABI_VERSION,
                node_arch()
            ),
            cline_version: "Unknown".to_string(),
        }
    }
}

/// Node's `os.platform()` for this build's target.
fn node_platform() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    }
}

/// Node's `os.arch()` for this build's target.
fn node_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "x64",
        "x86" => "ia32",
        "aarch64" => "arm64",
        other => other,
    }
}

/// The kernel release (Node's `os.release()`), where the system tells it without running a
/// program; otherwise `unknown`.
fn os_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|r| r.trim().to_string())
        .ok()
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}
