//! The browser settings (Cline's `browserSettings`), read from the host's settings file.
//!
//! Keys, all optional, under `[browser]`:
//! - `viewport`: `"900x600"` or `{ width = 900, height = 600 }` (default 900×600);
//! - `remote_endpoint`: a running Chrome's DevTools endpoint, `host:port`, `http://host:port`
//!   or a `ws://…/devtools/browser/…` URL; when set it is tried first, with a fallback to a
//!   local launch (Cline's `remoteBrowserEnabled` + `remoteBrowserHost`);
//! - `chrome_executable_path`: the browser to launch (default `/usr/bin/chromium`);
//! - `custom_args`: extra command-line arguments, split like Cline's `customArgs`;
//! - `profile_root`: where each session's fresh user-data directory is created (default: the
//!   system temp directory).
//!
//! `model.id` decides the screenshot format: WebP unless the model is known to reject it.

use std::path::PathBuf;

use serde::Deserialize;
use tool_api::abi::{ToolError, ToolErrorKind};
use tool_api::sdk::Ctx;

/// The browser launched when no executable is configured: Debian's `chromium` package.
pub const DEFAULT_EXECUTABLE: &str = "/usr/bin/chromium";

/// A viewport size in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewportSize {
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

impl Default for ViewportSize {
    /// Cline's default, 900×600.
    fn default() -> Self {
        Self {
            width: 900,
            height: 600,
        }
    }
}

/// The effective browser settings of one call.
#[derive(Debug, Clone, PartialEq)]
pub struct BrowserSettings {
    /// The page's viewport (and the screenshot's size).
    pub viewport: ViewportSize,
    /// A DevTools endpoint to connect to before launching a local browser.
    pub remote_endpoint: Option<String>,
    /// The browser executable for local launches.
    pub executable: PathBuf,
    /// Extra arguments for local launches, as written (`--flag=value`).
    pub custom_args: Vec<String>,
    /// Where per-session user-data directories are created.
    pub profile_root: PathBuf,
    /// Screenshots as WebP (else PNG).
    pub use_webp: bool,
    /// The host's egress proxy for a local browser's every request, loopback included
    /// ([`BrowserSettings::route_through_egress`]); `None`: straight to the network.
    pub egress_proxy: Option<String>,
}

impl Default for BrowserSettings {
    fn default() -> Self {
        Self {
            viewport: ViewportSize::default(),
            remote_endpoint: None,
            executable: PathBuf::from(DEFAULT_EXECUTABLE),
            custom_args: Vec::new(),
            profile_root: std::env::temp_dir(),
            use_webp: true,
            egress_proxy: None,
        }
    }
}

/// The two ways a viewport may be written.
#[derive(Deserialize)]
#[serde(untagged)]
enum ViewportSetting {
    Text(String),
    Table { width: u32, height: u32 },
}

impl BrowserSettings {
    /// Reads the settings through the host, with Cline's defaults for what is unset or invalid;
    /// a path with `~` or `${env:NAME}` that cannot be expanded is an error naming its key.
    pub fn from_host(ctx: &Ctx<'_>) -> Result<Self, tool_api::abi::ToolError> {
        let defaults = Self::default();
        let non_empty = |key: &str| {
            ctx.setting::<String>(key)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let executable = ctx.setting_path("browser.chrome_executable_path")?;
        let profile_root = ctx.setting_path("browser.profile_root")?;
        Ok(Self {
            viewport: ctx
                .setting::<ViewportSetting>("browser.viewport")
                .and_then(parse_viewport)
                .unwrap_or(defaults.viewport),
            remote_endpoint: non_empty("browser.remote_endpoint"),
            executable: executable.unwrap_or(defaults.executable),
            custom_args: ctx
                .setting::<String>("browser.custom_args")
                .map(|args| split_custom_args(&args))
                .unwrap_or_default(),
            profile_root: profile_root.unwrap_or(defaults.profile_root),
            use_webp: ctx
                .setting::<String>("model.id")
                .is_none_or(|id| model_accepts_webp(&id)),
            egress_proxy: None,
        })
    }

    /// Sends a local browser's requests through the host's egress proxy (the `egress.route`
    /// service, a port of the browser's own: Chromium sends no token), so that its page loads
    /// are decided by the same `[egress]` policy as commands'. Not with `web.egress = false`,
    /// nor when the host has no egress proxy.
    pub fn route_through_egress(&mut self, ctx: &Ctx<'_>) -> Result<(), ToolError> {
        if ctx.setting::<bool>("web.egress") == Some(false) {
            return Ok(());
        }
        let payload = serde_json::json!({"dedicated": true});
        match ctx.call_service("egress", "route", &payload) {
            Ok(answer) => {
                self.egress_proxy = answer["url"].as_str().map(str::to_string);
                Ok(())
            }
            Err(e) if e.kind == ToolErrorKind::UNAVAILABLE => Ok(()),
            Err(e) => Err(e),
        }
    }
}

fn parse_viewport(setting: ViewportSetting) -> Option<ViewportSize> {
    let (width, height) = match setting {
        ViewportSetting::Table { width, height } => (width, height),
        ViewportSetting::Text(text) => {
            let (w, h) = text.trim().split_once(['x', 'X', '×'])?;
            (w.trim().parse().ok()?, h.trim().parse().ok()?)
        }
    };
    // Chromium refuses a zero-sized viewport; absurdly large ones would exhaust memory.
    let valid = |v: u32| (1..=8192).contains(&v);
    (valid(width) && valid(height)).then_some(ViewportSize { width, height })
}

/// Cline sends PNG instead of WebP to models whose APIs reject WebP images: Grok, and the GLM
/// and Devstral families.
pub fn model_accepts_webp(model_id: &str) -> bool {
    let id = model_id.to_ascii_lowercase();
    !(id.contains("grok") || id.contains("glm") || id.contains("devstral"))
}

/// Splits Cline's `customArgs`: on whitespace, except inside double quotes, which are removed
/// (`--a=1 --title="x y"` gives `--a=1` and `--title=x y`).
pub fn split_custom_args(text: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut in_quotes = false;
    let mut has_token = false;
    for c in text.chars() {
        match c {
            '"' => {
                in_quotes = !in_quotes;
                has_token = true;
            }
            c if c.is_whitespace() && !in_quotes => {
                if has_token {
                    args.push(std::mem::take(&mut current));
                    has_token = false;
                }
            }
            c => {
                current.push(c);
                has_token = true;
            }
        }
    }
    if has_token {
        args.push(current);
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_args_split_on_whitespace_and_keep_quoted_chunks() {
        assert_eq!(
            split_custom_args(r#"  --a=1   --title="x y" --lang=de "#),
            vec!["--a=1", "--title=x y", "--lang=de"]
        );
        assert_eq!(split_custom_args(""), Vec::<String>::new());
        assert_eq!(split_custom_args(r#"--empty="""#), vec!["--empty="]);
    }

    #[test]
    fn viewports_are_read_from_text_or_tables_and_checked() {
        let text = |t: &str| parse_viewport(ViewportSetting::Text(t.to_string()));
        assert_eq!(
            text("1280x800"),
            Some(ViewportSize {
                width: 1280,
                height: 800
            })
        );
        assert_eq!(
            text(" 360 x 640 "),
            Some(ViewportSize {
                width: 360,
                height: 640
            })
        );
        assert_eq!(text("wide"), None);
        assert_eq!(text("0x600"), None);
        assert_eq!(
            parse_viewport(ViewportSetting::Table {
                width: 768,
                height: 1024
            }),
            Some(ViewportSize {
                width: 768,
                height: 1024
            })
        );
    }

    #[test]
    fn webp_is_avoided_for_the_models_that_reject_it() {
        assert!(model_accepts_webp("claude-sonnet-4-5"));
        assert!(!model_accepts_webp("x-ai/grok-4"));
        assert!(!model_accepts_webp("zai/GLM-4.6"));
        assert!(!model_accepts_webp("mistralai/devstral-medium"));
    }
}
