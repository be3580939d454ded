//! The HTTP client both tools use, built from [`NetSettings`] for each call (settings can differ
//! between hosts in one process, and a call is rare enough that a fresh client costs nothing
//! noticeable).

use reqwest::redirect::{Attempt, Policy};
use reqwest::{Certificate, Client, NoProxy, Proxy};

use crate::settings::{ConfigError, NetSettings, ProxySetting};

/// Redirects followed before a request fails (the common browser and HTTP client limit).
pub const MAX_REDIRECTS: usize = 10;

/// A client with the settings' timeout, proxy and extra roots; `user_agent` when given.
///
/// Redirects are followed up to [`MAX_REDIRECTS`] and only to http and https URLs.
pub fn build_client(net: &NetSettings, user_agent: Option<&str>) -> Result<Client, ConfigError> {
    let mut builder = Client::builder()
        .timeout(net.timeout)
        .redirect(Policy::custom(redirect_rule));
    if let Some(agent) = user_agent {
        builder = builder.user_agent(agent);
    }
    builder = match &net.proxy {
        // reqwest reads HTTPS_PROXY / HTTP_PROXY / ALL_PROXY / NO_PROXY itself.
        ProxySetting::FromEnvironment => builder,
        ProxySetting::Off => builder.no_proxy(),
        ProxySetting::Url { url, no_proxy } => {
            let proxy = Proxy::all(url.as_str()).map_err(|e| {
                ConfigError(format!(
                    "The setting web.proxy is not a usable proxy URL ({url}): {e}."
                ))
            })?;
            let exceptions = match no_proxy {
                Some(list) => NoProxy::from_string(list),
                None => NoProxy::from_env(),
            };
            builder.proxy(proxy.no_proxy(exceptions))
        }
        ProxySetting::Egress(route) => {
            let failed = |e: &dyn std::fmt::Display| {
                ConfigError(format!(
                    "The host's egress proxy ({}) cannot be used: {e}.",
                    route.url
                ))
            };
            let value = reqwest::header::HeaderValue::from_str(&route.authorization)
                .map_err(|e| failed(&e))?;
            let proxy = Proxy::all(route.url.as_str()).map_err(|e| failed(&e))?;
            builder.proxy(proxy.custom_http_auth(value))
        }
    };
    if let Some(path) = &net.ca_file {
        let pem = std::fs::read(path).map_err(|e| {
            ConfigError(format!(
                "Cannot read the CA file {} (setting web.ca_file): {e}.",
                path.display()
            ))
        })?;
        let certificates = Certificate::from_pem_bundle(&pem)
            .ok()
            .filter(|certs| !certs.is_empty())
            .ok_or_else(|| {
                ConfigError(format!(
                    "The CA file {} (setting web.ca_file) holds no PEM certificate.",
                    path.display()
                ))
            })?;
        builder = builder.tls_certs_merge(certificates);
    }
    builder
        .build()
        .map_err(|e| ConfigError(format!("Cannot set up the HTTP client: {e}.")))
}

/// Follows a redirect unless it is one too many or leaves http/https.
fn redirect_rule(attempt: Attempt<'_>) -> reqwest::redirect::Action {
    let scheme = attempt.url().scheme();
    if scheme != "http" && scheme != "https" {
        let message = format!(
            "the server redirected to {}, which is not an http or https URL",
            attempt.url()
        );
        return attempt.error(message);
    }
    if attempt.previous().len() > MAX_REDIRECTS {
        let message = format!("too many redirects (more than {MAX_REDIRECTS})");
        return attempt.error(message);
    }
    attempt.follow()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use super::*;

    fn net(proxy: ProxySetting, ca_file: Option<&str>) -> NetSettings {
        NetSettings {
            timeout: Duration::from_secs(1),
            proxy,
            ca_file: ca_file.map(Into::into),
            egress: true,
        }
    }

    #[test]
    fn a_missing_ca_file_is_a_configuration_error() {
        let error = build_client(&net(ProxySetting::Off, Some("/nonexistent/ca.pem")), None).err();
        assert_eq!(
            error,
            Some(ConfigError(
                "Cannot read the CA file /nonexistent/ca.pem (setting web.ca_file): No such file or directory (os error 2).".to_string()
            ))
        );
    }

    #[test]
    fn a_ca_file_without_certificates_is_a_configuration_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("empty.pem");
        std::fs::write(&file, "not a certificate\n").unwrap();
        let error = build_client(&net(ProxySetting::Off, file.to_str()), None).err();
        assert_eq!(
            error,
            Some(ConfigError(format!(
                "The CA file {} (setting web.ca_file) holds no PEM certificate.",
                file.display()
            )))
        );
    }

    #[test]
    fn a_bad_proxy_url_is_a_configuration_error() {
        let proxy = ProxySetting::Url {
            url: "http://[::1".to_string(),
            no_proxy: None,
        };
        let error = build_client(&net(proxy, None), None).err().map(|e| e.0);
        assert!(
            error.as_deref().is_some_and(|m| m
                .starts_with("The setting web.proxy is not a usable proxy URL (http://[::1): ")),
            "{error:?}"
        );
    }

    #[test]
    fn valid_settings_build_a_client() {
        let proxy = ProxySetting::Url {
            url: "http://127.0.0.1:3128".to_string(),
            no_proxy: Some("localhost".to_string()),
        };
        assert!(build_client(&net(proxy, None), Some("agent/1")).is_ok());
        assert!(build_client(&net(ProxySetting::FromEnvironment, None), None).is_ok());
    }
}
