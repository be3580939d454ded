//! Egress rules: what one line of `egress.allow`, `egress.deny`, the allowed file or the
//! registry list names, and whether a host and port match it.

use std::net::IpAddr;

/// What a rule names besides the port.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pattern {
    /// One host name, lower case, without a trailing dot.
    Name(String),
    /// Every subdomain of a domain (`*.example.com`: `a.example.com`, not `example.com`).
    Subdomains(String),
    /// One address.
    Address(IpAddr),
}

/// One rule: a host name, a domain's subdomains or an address, and optionally a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pattern: Pattern,
    port: Option<u16>,
    /// The rule as written, for messages.
    text: String,
}

/// A rule that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not an egress rule: {reason} (rules look like example.com, *.example.com, example.com:443, 10.0.0.5 or [::1]:8080)")]
pub struct BadRule {
    /// The rule as written.
    pub text: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// A host a connection asks for: its name or address as given, normalized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Lower case, without a trailing dot or an IPv6 address's brackets.
    pub host: String,
    /// The port.
    pub port: u16,
    /// The host when it is an address literal.
    pub address: Option<IpAddr>,
}

impl Target {
    /// The target `host` (a name, an IPv4 address, an IPv6 address with or without brackets)
    /// on `port`.
    pub fn new(host: &str, port: u16) -> Self {
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .trim_end_matches('.')
            .to_ascii_lowercase();
        let address = host.parse().ok();
        Self {
            host,
            port,
            address,
        }
    }

    /// `host:port`, with brackets around an IPv6 address (as rules and CONNECT write it).
    pub fn authority(&self) -> String {
        match self.address {
            Some(IpAddr::V6(_)) => format!("[{}]:{}", self.host, self.port),
            _ => format!("{}:{}", self.host, self.port),
        }
    }
}

impl Rule {
    /// Reads one rule; `text` is trimmed.
    pub fn parse(text: &str) -> Result<Self, BadRule> {
        let text = text.trim();
        let bad = |reason| BadRule {
            text: text.to_string(),
            reason,
        };
        let (host, port) = split_port(text).map_err(bad)?;
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if host.is_empty() {
            return Err(bad("it names no host"));
        }
        let pattern = if let Ok(address) = host.parse::<IpAddr>() {
            Pattern::Address(address)
        } else if let Some(domain) = host.strip_prefix("*.") {
            check_name(domain).map_err(bad)?;
            Pattern::Subdomains(domain.to_string())
        } else {
            check_name(&host).map_err(bad)?;
            Pattern::Name(host)
        };
        Ok(Self {
            pattern,
            port,
            text: text.to_string(),
        })
    }

    /// The rule as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The rule that allows exactly `target` (what an answer "allow" grants).
    pub fn exactly(target: &Target) -> Self {
        let pattern = match target.address {
            Some(address) => Pattern::Address(address),
            None => Pattern::Name(target.host.clone()),
        };
        Self {
            pattern,
            port: Some(target.port),
            text: target.authority(),
        }
    }

    fn port_matches(&self, port: u16) -> bool {
        self.port.is_none_or(|p| p == port)
    }

    /// Whether the rule names `target` (its name, or its address when it is a literal).
    pub fn matches(&self, target: &Target) -> bool {
        if !self.port_matches(target.port) {
            return false;
        }
        match (&self.pattern, target.address) {
            (Pattern::Address(address), Some(given)) => *address == given,
            (Pattern::Name(name), None) => *name == target.host,
            (Pattern::Subdomains(domain), None) => target
                .host
                .strip_suffix(domain.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
            _ => false,
        }
    }

    /// Whether the rule names exactly the address `address` on `port` (the only way an
    /// internal address is reached).
    pub fn names_address(&self, address: IpAddr, port: u16) -> bool {
        self.port_matches(port) && self.pattern == Pattern::Address(address)
    }
}

/// Splits `host:port`, `[v6]:port`, `[v6]`, a bare IPv6 address or a bare host.
fn split_port(text: &str) -> Result<(&str, Option<u16>), &'static str> {
    let port = |p: &str| {
        p.parse::<u16>()
            .map_err(|_| "its port is not a number up to 65535")
    };
    if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or("a `[` has no `]`")?;
        return match after {
            "" => Ok((host, None)),
            _ => Ok((
                host,
                Some(port(after.strip_prefix(':').ok_or("junk after `]`")?)?),
            )),
        };
    }
    if text.parse::<IpAddr>().is_ok() {
        return Ok((text, None));
    }
    match text.rsplit_once(':') {
        Some((host, p)) => Ok((host, Some(port(p)?))),
        None => Ok((text, None)),
    }
}

fn check_name(name: &str) -> Result<(), &'static str> {
    let fine = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_';
    if name.is_empty() || !name.chars().all(fine) || name.starts_with('.') || name.contains("..") {
        return Err("a host name has letters, digits, `-`, `_` and dots between them");
    }
    Ok(())
}

/// Reads a list of rules: one a line, `#` starting a comment, blank lines skipped.
pub fn parse_lines(text: &str) -> Result<Vec<Rule>, BadRule> {
    text.lines()
        .map(|line| line.split('#').next().unwrap_or("").trim())
        .filter(|line| !line.is_empty())
        .map(Rule::parse)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(host: &str, port: u16) -> Target {
        Target::new(host, port)
    }

    type Outcome = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn names_subdomains_addresses_and_ports() -> Outcome {
        let rule = Rule::parse("crates.io")?;
        assert!(rule.matches(&target("crates.io", 443)));
        assert!(rule.matches(&target("Crates.IO.", 80)));
        assert!(!rule.matches(&target("static.crates.io", 443)));
        assert!(!rule.matches(&target("evilcrates.io", 443)));

        let rule = Rule::parse("*.npmjs.org")?;
        assert!(rule.matches(&target("registry.npmjs.org", 443)));
        assert!(!rule.matches(&target("npmjs.org", 443)));
        assert!(!rule.matches(&target("evilnpmjs.org", 443)));

        let rule = Rule::parse("example.com:443")?;
        assert!(rule.matches(&target("example.com", 443)));
        assert!(!rule.matches(&target("example.com", 22)));

        let rule = Rule::parse("[::1]:8080")?;
        assert!(rule.matches(&target("[::1]", 8080)));
        assert!(rule.names_address("::1".parse()?, 8080));
        assert!(!rule.names_address("::1".parse()?, 8081));

        let rule = Rule::parse("127.0.0.1")?;
        assert!(rule.names_address("127.0.0.1".parse()?, 1));
        assert!(
            !rule.matches(&target("localhost", 1)),
            "a name is not its address"
        );
        assert!(!Rule::parse("localhost")?.names_address("127.0.0.1".parse()?, 1));
        assert!(Rule::parse("::1").is_ok());
        Ok(())
    }

    #[test]
    fn bad_rules_say_why() -> Outcome {
        for bad in [
            "",
            "exa mple.com",
            "a:99999",
            "[::1",
            "*.",
            "http://x",
            "a..b",
        ] {
            let error = Rule::parse(bad)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(error.contains("is not an egress rule"), "{bad}: {error}");
        }
        let rules = parse_lines("# registries\ncrates.io # Cargo\n\n*.pypi.org\n")?;
        assert_eq!(rules.len(), 2);
        Ok(())
    }
}
