//! The domain filters: Cline's lenient array parsing and the host matching applied to results.

use serde_json::Value;

/// The two filters cannot be combined (Cline's text).
pub const BOTH_FILTERS: &str = "Cannot specify both allowed_domains and blocked_domains";

/// Cline's `parsePartialArrayString`, for a list that may still be streaming or slightly
/// malformed: valid JSON is taken as it is; otherwise text starting with `["` is cut at `", "`
/// (quote, comma, space, quote), with the closing `"]` optional; anything else is an empty list.
///
/// Cline returns any JSON value unchecked; here a JSON array gives its items (strings as they
/// are, other values as their JSON text), a JSON string gives itself, and any other JSON value is
/// an error, since sending it on would make no sense.
pub fn parse_partial_array(raw: &str) -> Result<Vec<String>, String> {
    if let Ok(value) = serde_json::from_str::<Value>(raw) {
        let items = match value {
            Value::Array(items) => items
                .into_iter()
                .map(|item| match item {
                    Value::String(s) => s,
                    other => other.to_string(),
                })
                .collect(),
            Value::String(s) => vec![s],
            other => return Err(format!("not a list of domains: {other}")),
        };
        return Ok(items
            .into_iter()
            .map(|item| item.trim().to_string())
            .filter(|item| !item.is_empty())
            .collect());
    }
    let Some(rest) = raw.trim().strip_prefix("[\"") else {
        return Ok(Vec::new());
    };
    let rest = rest.strip_suffix("\"]").unwrap_or(rest);
    Ok(rest
        .split("\", \"")
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_string)
        .collect())
}

/// A domain as written by the model, reduced to a host name: `https://www.Docs.rs/x` → `docs.rs`.
pub fn normalize(domain: &str) -> String {
    let domain = domain.trim().to_ascii_lowercase();
    let domain = domain
        .split_once("://")
        .map_or(domain.as_str(), |(_, rest)| rest);
    let domain = domain.split(['/', '?', '#']).next().unwrap_or_default();
    let domain = domain.rsplit_once('@').map_or(domain, |(_, host)| host);
    let domain = domain.split(':').next().unwrap_or_default();
    let domain = domain.trim_start_matches("*.").trim_matches('.');
    domain.strip_prefix("www.").unwrap_or(domain).to_string()
}

/// Whether a host belongs to a domain: the domain itself or any subdomain of it.
pub fn host_in(host: &str, domain: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let domain = normalize(domain);
    !domain.is_empty()
        && (host == domain
            || host
                .strip_suffix(domain.as_str())
                .is_some_and(|prefix| prefix.ends_with('.')))
}

/// Which results to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DomainFilter {
    /// All of them.
    None,
    /// Only those on these domains.
    Allow(Vec<String>),
    /// All but those on these domains.
    Block(Vec<String>),
}

impl DomainFilter {
    /// The filter for the two parameters, or Cline's error when both are given.
    pub fn new(allowed: Vec<String>, blocked: Vec<String>) -> Result<Self, &'static str> {
        match (allowed.is_empty(), blocked.is_empty()) {
            (false, false) => Err(BOTH_FILTERS),
            (false, true) => Ok(Self::Allow(allowed)),
            (true, false) => Ok(Self::Block(blocked)),
            (true, true) => Ok(Self::None),
        }
    }

    /// Whether a result URL passes. A URL without a host passes only when nothing is allowed
    /// explicitly.
    pub fn keeps(&self, url: &str) -> bool {
        let host = reqwest::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string));
        match (self, host) {
            (Self::None, _) => true,
            (Self::Allow(domains), Some(host)) => domains.iter().any(|d| host_in(&host, d)),
            (Self::Allow(_), None) => false,
            (Self::Block(domains), Some(host)) => !domains.iter().any(|d| host_in(&host, d)),
            (Self::Block(_), None) => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(raw: &str) -> Result<Vec<String>, String> {
        parse_partial_array(raw)
    }

    fn list(items: &[&str]) -> Result<Vec<String>, String> {
        Ok(items.iter().map(|s| s.to_string()).collect())
    }

    /// The examples of Cline's `parsePartialArrayString`.
    #[test]
    fn partial_arrays_parse_like_cline() {
        assert_eq!(parsed(r#"["a.com", "b.org"]"#), list(&["a.com", "b.org"]));
        assert_eq!(parsed(r#"["a.com", "b.o"#), list(&["a.com", "b.o"]));
        assert_eq!(parsed(r#"["a.com","b.org""#), list(&[r#"a.com","b.org""#]));
        assert_eq!(parsed("a.com, b.org"), list(&[]));
        assert_eq!(parsed("[]"), list(&[]));
        assert_eq!(parsed(r#"[""#), list(&[]));
        assert_eq!(parsed(r#"["a.com""#), list(&[r#"a.com""#]));
        assert_eq!(
            parsed(r#"  ["a.com", "b.org"]  "#),
            list(&["a.com", "b.org"])
        );
    }

    #[test]
    fn json_values_are_coerced() {
        assert_eq!(parsed(r#"["a.com", " ", 7]"#), list(&["a.com", "7"]));
        assert_eq!(parsed(r#""a.com""#), list(&["a.com"]));
        assert_eq!(
            parsed(r#"{"a": 1}"#),
            Err(r#"not a list of domains: {"a":1}"#.to_string())
        );
    }

    #[test]
    fn domains_match_hosts_and_subdomains() {
        assert!(host_in("docs.rs", "docs.rs"));
        assert!(host_in("www.docs.rs", "https://www.docs.rs/tokio"));
        assert!(host_in("blog.rust-lang.org", "rust-lang.org"));
        assert!(host_in("Blog.Rust-Lang.org", "*.rust-lang.org"));
        assert!(!host_in("notrust-lang.org", "rust-lang.org"));
        assert!(!host_in("rust-lang.org", "blog.rust-lang.org"));
        assert!(!host_in("example.com", ""));
        assert_eq!(
            normalize(" HTTPS://user@WWW.Example.com:8080/path?q#f "),
            "example.com"
        );
    }

    #[test]
    fn the_filters_are_exclusive_and_applied_to_urls() {
        assert_eq!(
            DomainFilter::new(vec!["a.com".into()], vec!["b.com".into()]),
            Err(BOTH_FILTERS)
        );
        let allow = DomainFilter::new(vec!["a.com".into()], vec![]).unwrap_or(DomainFilter::None);
        assert!(allow.keeps("https://x.a.com/p"));
        assert!(!allow.keeps("https://b.com/p"));
        assert!(!allow.keeps("not a url"));
        let block = DomainFilter::new(vec![], vec!["a.com".into()]).unwrap_or(DomainFilter::None);
        assert!(!block.keeps("https://a.com/"));
        assert!(block.keeps("https://b.com/"));
        assert!(DomainFilter::None.keeps("https://a.com/"));
    }
}
