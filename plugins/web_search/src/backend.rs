//! Which backend serves web_search, from `[web.search]`.

use web_support::cline::ClineEndpoint;
use web_support::settings::{nonblank_string, positive_int, ConfigError, SettingSource};

/// Results kept from a SearXNG answer when `web.search.max_results` is not set.
pub const DEFAULT_MAX_RESULTS: usize = 10;

/// A SearXNG instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Searxng {
    /// The instance's base URL, without a trailing slash (`web.search.searxng_url`).
    pub base_url: String,
    /// At most this many results are listed (`web.search.max_results`).
    pub max_results: usize,
}

/// Where results come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// A SearXNG instance's JSON API (`web.search.backend = "searxng"`).
    Searxng(Searxng),
    /// Cline's hosted endpoint or a compatible proxy (`web.search.backend = "cline"`).
    Cline(ClineEndpoint),
}

/// What to write when nothing is configured.
pub const NOT_CONFIGURED: &str = "web_search has no search backend configured. In the settings file, set [web.search] backend = \"searxng\" with searxng_url = \"http://…\" (a SearXNG instance with the JSON format enabled), or backend = \"cline\" with base_url and token_env under [web.cline].";

impl Backend {
    /// Reads `web.search.*` (and `web.cline.*` for the Cline backend). Without a backend name a
    /// configured `searxng_url` selects SearXNG; nothing at all is an error, since no search
    /// service is usable without one.
    pub fn read(source: &dyn SettingSource) -> Result<Self, ConfigError> {
        let name = nonblank_string(source, "web.search.backend")?;
        let searxng_url = nonblank_string(source, "web.search.searxng_url")?;
        match (name.as_deref().map(str::trim), searxng_url) {
            (Some("searxng") | None, Some(url)) => {
                let base_url = url.trim().trim_end_matches('/').to_string();
                match reqwest::Url::parse(&base_url) {
                    Ok(parsed) if matches!(parsed.scheme(), "http" | "https") => {}
                    _ => {
                        return Err(ConfigError(format!(
                            "The setting web.search.searxng_url ({url}) is not an http:// or https:// URL."
                        )))
                    }
                }
                let max_results = positive_int(source, "web.search.max_results")?
                    .map_or(DEFAULT_MAX_RESULTS, |n| usize::try_from(n).unwrap_or(usize::MAX));
                Ok(Self::Searxng(Searxng {
                    base_url,
                    max_results,
                }))
            }
            (Some("searxng"), None) => Err(ConfigError(
                "web.search.backend is \"searxng\", but web.search.searxng_url does not give the instance's URL."
                    .to_string(),
            )),
            (Some("cline"), _) => Ok(Self::Cline(ClineEndpoint::read(source, "web_search")?)),
            (None, None) => Err(ConfigError(NOT_CONFIGURED.to_string())),
            (Some(other), _) => Err(ConfigError(format!(
                "The setting web.search.backend is \"{other}\"; use \"searxng\" (a SearXNG instance, web.search.searxng_url) or \"cline\" (Cline's hosted endpoint or a compatible proxy, configured under [web.cline])."
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn nothing_configured_is_an_error() {
        assert_eq!(
            Backend::read(&json!({})),
            Err(ConfigError(NOT_CONFIGURED.to_string()))
        );
        assert_eq!(
            Backend::read(&json!({"web": {"search": {"backend": "searxng"}}})),
            Err(ConfigError("web.search.backend is \"searxng\", but web.search.searxng_url does not give the instance's URL.".to_string()))
        );
    }

    #[test]
    fn a_searxng_url_selects_searxng() {
        assert_eq!(
            Backend::read(&json!({"web": {"search": {"searxng_url": "http://127.0.0.1:8888/"}}})),
            Ok(Backend::Searxng(Searxng {
                base_url: "http://127.0.0.1:8888".to_string(),
                max_results: 10,
            }))
        );
        assert_eq!(
            Backend::read(&json!({"web": {"search": {
                "backend": "searxng", "searxng_url": "https://search.example/searx", "max_results": 3
            }}})),
            Ok(Backend::Searxng(Searxng {
                base_url: "https://search.example/searx".to_string(),
                max_results: 3,
            }))
        );
    }

    #[test]
    fn the_searxng_url_must_be_http() {
        assert_eq!(
            Backend::read(&json!({"web": {"search": {"searxng_url": "localhost:8888"}}})),
            Err(ConfigError("The setting web.search.searxng_url (localhost:8888) is not an http:// or https:// URL.".to_string()))
        );
    }

    #[test]
    fn the_cline_backend_reads_its_endpoint() {
        assert_eq!(
            Backend::read(&json!({"web": {
                "search": {"backend": "cline", "searxng_url": "http://unused"},
                "cline": {"token_env": "TOKEN"},
            }})),
            Ok(Backend::Cline(ClineEndpoint {
                base_url: "https://api.cline.bot".to_string(),
                token_env: "TOKEN".to_string(),
            }))
        );
    }

    #[test]
    fn an_unknown_backend_is_named() {
        assert_eq!(
            Backend::read(&json!({"web": {"search": {"backend": "google"}}})),
            Err(ConfigError("The setting web.search.backend is \"google\"; use \"searxng\" (a SearXNG instance, web.search.searxng_url) or \"cline\" (Cline's hosted endpoint or a compatible proxy, configured under [web.cline]).".to_string()))
        );
    }
}
