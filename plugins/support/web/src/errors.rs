//! One line for a failed request.
//!
//! Cline's HTTP client (axios) wrote `timeout of 15000ms exceeded` and
//! `Request failed with status code 404`; the model has seen those, so they are kept. Other
//! failures name what went wrong in words of their own.

use std::time::Duration;

/// The text for an answer outside 2xx (axios's wording).
pub fn status_error(status: reqwest::StatusCode) -> String {
    format!("Request failed with status code {}", status.as_u16())
}

/// Describes a failed request; `timeout` is the limit it ran under.
pub fn describe_error(error: &reqwest::Error, timeout: Duration) -> String {
    if error.is_timeout() {
        return format!("timeout of {}ms exceeded", timeout.as_millis());
    }
    if let Some(status) = error.status() {
        return status_error(status);
    }
    let cause = innermost_cause(error);
    if error.is_redirect() {
        return cause;
    }
    if error.is_connect() {
        return match error.url().and_then(host_and_port) {
            Some(target) => format!("could not connect to {target}: {cause}"),
            None => format!("could not connect: {cause}"),
        };
    }
    if error.is_body() || error.is_decode() {
        return format!("the connection failed while reading the response: {cause}");
    }
    cause
}

/// The last error in the source chain: the one that says what actually happened
/// ("Connection refused (os error 111)") rather than where ("error sending request").
fn innermost_cause(error: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

fn host_and_port(url: &reqwest::Url) -> Option<String> {
    let host = url.host_str()?;
    Some(match url.port_or_known_default() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_errors_use_axios_wording() {
        assert_eq!(
            status_error(reqwest::StatusCode::UNAUTHORIZED),
            "Request failed with status code 401"
        );
    }
}
