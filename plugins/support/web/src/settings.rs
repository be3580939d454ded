//! The `[web]` settings both tools read, and typed accessors that name the key in every error.
//!
//! `Ctx::setting::<T>` cannot tell an absent key from one of the wrong type (both are `None`), so
//! values are read as JSON and checked here: a mistyped setting is reported, never ignored.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use tool_api::abi::{ToolError, ToolErrorKind};
use tool_api::sdk::Ctx;

/// Per-request timeout when `web.timeout_ms` is not set (Cline's 15 000 ms).
pub const DEFAULT_TIMEOUT_MS: u64 = 15_000;

/// Where settings come from.
pub trait SettingSource {
    /// The value at a dotted key (`web.fetch.backend`), if set.
    fn value(&self, key: &str) -> Option<Value>;
}

impl SettingSource for Ctx<'_> {
    fn value(&self, key: &str) -> Option<Value> {
        self.setting::<Value>(key)
    }
}

/// A JSON document holding the settings (the whole file, as the host keeps it).
impl SettingSource for Value {
    fn value(&self, key: &str) -> Option<Value> {
        key.split('.')
            .try_fold(self, |value, part| value.get(part))
            .cloned()
    }
}

/// A setting that is missing or wrong. The message is written for the user who fixes the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// Configuration problems are not the model's mistake: they are reported as unavailable.
impl From<ConfigError> for ToolError {
    fn from(e: ConfigError) -> Self {
        ToolError::new(ToolErrorKind::UNAVAILABLE, e.0)
    }
}

/// A string setting; `None` when unset, an error when it is not a string.
pub fn string(source: &dyn SettingSource, key: &str) -> Result<Option<String>, ConfigError> {
    match source.value(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(ConfigError(format!(
            "The setting {key} must be a string (found {other})."
        ))),
    }
}

/// A string setting that, when set, must not be blank.
pub fn nonblank_string(
    source: &dyn SettingSource,
    key: &str,
) -> Result<Option<String>, ConfigError> {
    match string(source, key)? {
        Some(s) if s.trim().is_empty() => Err(ConfigError(format!(
            "The setting {key} is empty; remove it or give it a value."
        ))),
        other => Ok(other),
    }
}

/// A path (a file to read, say): blank is an error as for [`nonblank_string`]; `~` and
/// `${env:NAME}` are expanded as in every path setting ([`tool_api::sdk::paths`]).
pub fn path(source: &dyn SettingSource, key: &str) -> Result<Option<PathBuf>, ConfigError> {
    let Some(text) = nonblank_string(source, key)? else {
        return Ok(None);
    };
    tool_api::sdk::paths::setting_path(key, Some(&Value::String(text))).map_err(ConfigError)
}

/// A whole number greater than zero; `None` when unset.
pub fn positive_int(source: &dyn SettingSource, key: &str) -> Result<Option<u64>, ConfigError> {
    match source.value(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.as_u64().is_some_and(|v| v > 0) => Ok(n.as_u64()),
        Some(other) => Err(ConfigError(format!(
            "The setting {key} must be a whole number greater than 0 (found {other})."
        ))),
    }
}

/// How requests reach the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProxySetting {
    /// `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY` from the environment (the default).
    FromEnvironment,
    /// No proxy at all, whatever the environment says (`web.proxy = "none"`).
    Off,
    /// Every request through this proxy, except the hosts in `no_proxy`.
    Url {
        /// The proxy's URL.
        url: String,
        /// Hosts that bypass it, in `NO_PROXY` syntax (`web.no_proxy`, else `$NO_PROXY`).
        no_proxy: Option<String>,
    },
    /// Every request, loopback included, through the host's egress proxy
    /// ([`crate::egress`]), naming the call's grant.
    Egress(tool_api::model::EgressRoute),
}

/// The network settings shared by every backend of both tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetSettings {
    /// The total time one request may take, body included (`web.timeout_ms`).
    pub timeout: Duration,
    /// The proxy (`web.proxy`, `web.no_proxy`).
    pub proxy: ProxySetting,
    /// A PEM file of extra root certificates to trust besides the system's (`web.ca_file`).
    pub ca_file: Option<PathBuf>,
    /// Whether requests go through the host's egress proxy when `web.proxy` is unset
    /// (`web.egress`, default true).
    pub egress: bool,
}

impl NetSettings {
    /// Reads `web.timeout_ms`, `web.proxy`, `web.no_proxy`, `web.ca_file` and `web.egress`.
    pub fn read(source: &dyn SettingSource) -> Result<Self, ConfigError> {
        let timeout_ms = positive_int(source, "web.timeout_ms")?.unwrap_or(DEFAULT_TIMEOUT_MS);
        let no_proxy = string(source, "web.no_proxy")?;
        let proxy = match string(source, "web.proxy")?.as_deref().map(str::trim) {
            None => ProxySetting::FromEnvironment,
            Some(p) if p.eq_ignore_ascii_case("none") => ProxySetting::Off,
            Some("") => return Err(ConfigError(
                "The setting web.proxy is empty: give a proxy URL, or \"none\" to use no proxy."
                    .to_string(),
            )),
            Some(url) => ProxySetting::Url {
                url: url.to_string(),
                no_proxy,
            },
        };
        let ca_file = path(source, "web.ca_file")?;
        let egress = match source.value("web.egress") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(on)) => on,
            Some(other) => {
                return Err(ConfigError(format!(
                    "The setting web.egress must be true or false (found {other})."
                )))
            }
        };
        Ok(Self {
            timeout: Duration::from_millis(timeout_ms),
            proxy,
            ca_file,
            egress,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn defaults_follow_cline_and_the_environment() {
        assert_eq!(
            NetSettings::read(&json!({})),
            Ok(NetSettings {
                timeout: Duration::from_millis(15_000),
                proxy: ProxySetting::FromEnvironment,
                ca_file: None,
                egress: true,
            })
        );
    }

    #[test]
    fn every_key_is_read() {
        let settings = json!({"web": {
            "timeout_ms": 250,
            "proxy": "http://127.0.0.1:3128",
            "no_proxy": "localhost,.corp",
            "ca_file": "/etc/ca.pem",
            "egress": false,
        }});
        assert_eq!(
            NetSettings::read(&settings),
            Ok(NetSettings {
                timeout: Duration::from_millis(250),
                proxy: ProxySetting::Url {
                    url: "http://127.0.0.1:3128".to_string(),
                    no_proxy: Some("localhost,.corp".to_string()),
                },
                ca_file: Some(PathBuf::from("/etc/ca.pem")),
                egress: false,
            })
        );
        let off = json!({"web": {"proxy": "None"}});
        assert_eq!(
            NetSettings::read(&off).map(|n| n.proxy),
            Ok(ProxySetting::Off)
        );
    }

    #[test]
    fn mistyped_settings_are_reported_with_their_key() {
        assert_eq!(
            NetSettings::read(&json!({"web": {"timeout_ms": "fast"}})),
            Err(ConfigError(
                "The setting web.timeout_ms must be a whole number greater than 0 (found \"fast\")."
                    .to_string()
            ))
        );
        assert_eq!(
            NetSettings::read(&json!({"web": {"timeout_ms": 0}})),
            Err(ConfigError(
                "The setting web.timeout_ms must be a whole number greater than 0 (found 0)."
                    .to_string()
            ))
        );
        assert_eq!(
            NetSettings::read(&json!({"web": {"proxy": 3128}})),
            Err(ConfigError(
                "The setting web.proxy must be a string (found 3128).".to_string()
            ))
        );
        assert_eq!(
            NetSettings::read(&json!({"web": {"proxy": " "}})),
            Err(ConfigError(
                "The setting web.proxy is empty: give a proxy URL, or \"none\" to use no proxy."
                    .to_string()
            ))
        );
    }
}
