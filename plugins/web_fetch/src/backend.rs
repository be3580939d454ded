//! Which backend serves web_fetch, from `[web.fetch]`.

use web_support::cline::ClineEndpoint;
use web_support::limits::SizeLimits;
use web_support::settings::{nonblank_string, ConfigError, SettingSource};

pub use web_support::limits::{byte_cap_note, DEFAULT_MAX_BYTES, DEFAULT_MAX_CHARS};

/// The direct backend's `User-Agent` when `web.fetch.user_agent` is not set.
pub const DEFAULT_USER_AGENT: &str = concat!(
    "Mozilla/5.0 (compatible; toolhost-web_fetch/",
    env!("CARGO_PKG_VERSION"),
    ")"
);

/// The direct backend's limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectOptions {
    /// At most this many bytes of a page are downloaded (`web.fetch.max_bytes`).
    pub max_bytes: u64,
    /// At most this many characters of content are returned (`web.fetch.max_chars`).
    pub max_chars: usize,
    /// The `User-Agent` header (`web.fetch.user_agent`).
    pub user_agent: String,
}

/// Where pages come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// This machine fetches the page and converts it (`web.fetch.backend = "direct"`, the default).
    Direct(DirectOptions),
    /// Cline's hosted endpoint or a compatible proxy (`web.fetch.backend = "cline"`).
    Cline(ClineEndpoint),
}

impl Backend {
    /// Reads `web.fetch.*` (and `web.cline.*` for the Cline backend).
    pub fn read(source: &dyn SettingSource) -> Result<Self, ConfigError> {
        let name = nonblank_string(source, "web.fetch.backend")?;
        match name.as_deref().map(str::trim) {
            None | Some("direct") => {
                let SizeLimits {
                    max_bytes,
                    max_chars,
                } = SizeLimits::read(source)?;
                let user_agent = nonblank_string(source, "web.fetch.user_agent")?
                    .unwrap_or_else(|| DEFAULT_USER_AGENT.to_string());
                Ok(Self::Direct(DirectOptions {
                    max_bytes,
                    max_chars,
                    user_agent,
                }))
            }
            Some("cline") => Ok(Self::Cline(ClineEndpoint::read(source, "web_fetch")?)),
            Some(other) => Err(ConfigError(format!(
                "The setting web.fetch.backend is \"{other}\"; use \"direct\" (fetch pages from this machine) or \"cline\" (Cline's hosted endpoint or a compatible proxy, configured under [web.cline])."
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn direct_is_the_default() {
        assert_eq!(
            Backend::read(&json!({})),
            Ok(Backend::Direct(DirectOptions {
                max_bytes: 5 * 1024 * 1024,
                max_chars: 100_000,
                user_agent: DEFAULT_USER_AGENT.to_string(),
            }))
        );
    }

    #[test]
    fn limits_and_agent_come_from_the_settings() {
        let settings = json!({"web": {"fetch": {
            "backend": "direct", "max_bytes": 1000, "max_chars": 50, "user_agent": "me/1"
        }}});
        assert_eq!(
            Backend::read(&settings),
            Ok(Backend::Direct(DirectOptions {
                max_bytes: 1000,
                max_chars: 50,
                user_agent: "me/1".to_string(),
            }))
        );
    }

    #[test]
    fn the_cline_backend_reads_its_endpoint() {
        let settings = json!({"web": {
            "fetch": {"backend": "cline"},
            "cline": {"base_url": "http://127.0.0.1:8080", "token_env": "MY_TOKEN"},
        }});
        assert_eq!(
            Backend::read(&settings),
            Ok(Backend::Cline(ClineEndpoint {
                base_url: "http://127.0.0.1:8080".to_string(),
                token_env: "MY_TOKEN".to_string(),
            }))
        );
    }

    #[test]
    fn an_unknown_backend_is_named() {
        assert_eq!(
            Backend::read(&json!({"web": {"fetch": {"backend": "curl"}}})),
            Err(ConfigError("The setting web.fetch.backend is \"curl\"; use \"direct\" (fetch pages from this machine) or \"cline\" (Cline's hosted endpoint or a compatible proxy, configured under [web.cline]).".to_string()))
        );
    }

    #[test]
    fn the_byte_cap_note_gives_the_size() {
        assert_eq!(
            byte_cap_note(5 * 1024 * 1024),
            "[Content truncated: only the first 5.0 MB of the page were downloaded.]"
        );
    }
}
