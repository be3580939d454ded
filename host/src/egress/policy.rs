//! The egress policy of `[egress]` ([`Policy`]): deny rules first, then the allow rules (the
//! settings', the hosts answered "always", the package registries), then a question, or a
//! refusal when asking is off. Decided on the name as given, before anything resolves it.

use std::net::IpAddr;
use std::path::PathBuf;

use super::error::EgressError;
use super::rules::{parse_lines, Rule, Target};
use crate::settings::EgressSettings;

/// The registries allowed by default, as data.
const REGISTRIES: &str = include_str!("registries.txt");

/// Where a rule comes from, as messages name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `egress.allow`.
    Allow,
    /// `egress.deny`.
    Deny,
    /// The file of hosts answered "always".
    AllowedFile(PathBuf),
    /// The package registries (`egress.registries`).
    Registries,
    /// An answer "allow for this task".
    Answer,
    /// An endpoint the user configured for the tool (an MCP server's URL, a model's base
    /// URL, a declared HTTP tool's URL).
    Configured,
}

impl Source {
    /// The setting or answer, in words.
    pub fn describe(&self) -> String {
        match self {
            Self::Allow => "the setting egress.allow".to_string(),
            Self::Deny => "the setting egress.deny".to_string(),
            Self::AllowedFile(path) => {
                format!("the hosts answered \"always\" ({})", path.display())
            }
            Self::Registries => "the package registries (egress.registries)".to_string(),
            Self::Answer => "the user's answer for this task".to_string(),
            Self::Configured => "the tool's configured endpoint".to_string(),
        }
    }
}

/// What the rules say of a host, before it is resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// A rule allows it: the rule and where it comes from.
    Allowed(String),
    /// A rule refuses it, or nobody is to be asked: why.
    Denied(String),
    /// No rule names it: the user is asked.
    Ask,
}

/// The egress policy of one settings file.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    deny: Vec<Rule>,
    allow: Vec<(Rule, Source)>,
    ask: bool,
    /// Where "always" answers are written.
    pub allowed_file: Option<PathBuf>,
    /// Where connection logs are kept.
    pub log_dir: Option<PathBuf>,
}

fn expand(key: &'static str, value: &str) -> Result<PathBuf, EgressError> {
    tool_api::sdk::paths::expand(value).map_err(|reason| EgressError::Path { key, reason })
}

fn rules(key: &'static str, lines: &[String]) -> Result<Vec<Rule>, EgressError> {
    lines
        .iter()
        .map(|line| Rule::parse(line).map_err(|source| EgressError::Rule { key, source }))
        .collect()
}

/// The default place of the hosts answered "always": the configuration directory's
/// `egress-allowed.txt`.
pub fn default_allowed_file() -> Option<PathBuf> {
    crate::settings::config_dir().map(|dir| dir.join("egress-allowed.txt"))
}

/// The host and port of an `http`/`https` (or `ws`/`wss`) URL.
fn target_of_url(url: &str) -> Option<Target> {
    let uri: http::Uri = url.trim().parse().ok()?;
    let port = uri.port_u16().or(match uri.scheme_str()? {
        "https" | "wss" => Some(443),
        "http" | "ws" => Some(80),
        _ => None,
    })?;
    Some(Target::new(uri.host()?, port))
}

/// The registry rules allowed by default.
pub fn registries() -> Vec<Rule> {
    parse_lines(REGISTRIES).unwrap_or_default()
}

impl Policy {
    /// The policy of `settings`, with the allowed file read (a missing file holds nothing).
    pub fn from_settings(settings: &EgressSettings) -> Result<Self, EgressError> {
        let allowed_file = match &settings.allowed_file {
            Some(path) => Some(expand("egress.allowed_file", path)?),
            None => default_allowed_file(),
        };
        let log_dir = match &settings.log_dir {
            Some(path) => Some(expand("egress.log_dir", path)?),
            None => super::log::default_dir(),
        };
        let mut allow: Vec<(Rule, Source)> = rules("egress.allow", &settings.allow)?
            .into_iter()
            .map(|rule| (rule, Source::Allow))
            .collect();
        if let Some(path) = &allowed_file {
            match std::fs::read_to_string(path) {
                Ok(text) => {
                    let answered = parse_lines(&text).map_err(|source| EgressError::Rule {
                        key: "egress.allowed_file",
                        source,
                    })?;
                    let source = Source::AllowedFile(path.clone());
                    allow.extend(answered.into_iter().map(|rule| (rule, source.clone())));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(EgressError::Read {
                        path: path.clone(),
                        source,
                    })
                }
            }
        }
        if settings.registries {
            allow.extend(
                registries()
                    .into_iter()
                    .map(|rule| (rule, Source::Registries)),
            );
        }
        Ok(Self {
            deny: rules("egress.deny", &settings.deny)?,
            allow,
            ask: settings.ask,
            allowed_file,
            log_dir,
        })
    }

    /// The policy with the endpoints the user configured for a tool allowed, each by its
    /// exact host and port (an internal address too: configuring it names it exactly; and
    /// `localhost`, which always means this machine's loopback, names the loopback
    /// addresses on that port). URLs that name no host are skipped.
    pub fn with_configured<'a>(mut self, urls: impl IntoIterator<Item = &'a str>) -> Self {
        for url in urls {
            let Some(target) = target_of_url(url) else {
                continue;
            };
            if target.host == "localhost" || target.host.ends_with(".localhost") {
                for loopback in [
                    IpAddr::from([127, 0, 0, 1]),
                    IpAddr::from([0u16, 0, 0, 0, 0, 0, 0, 1]),
                ] {
                    let address = Target::new(&loopback.to_string(), target.port);
                    self.allow
                        .insert(0, (Rule::exactly(&address), Source::Configured));
                }
            }
            self.allow
                .insert(0, (Rule::exactly(&target), Source::Configured));
        }
        self
    }

    /// The rules' decision on `target`, with the rules the user's answers for this task
    /// added (`answered`).
    pub fn decide(&self, target: &Target, answered: &[Rule]) -> Decision {
        if let Some(rule) = self.deny.iter().find(|rule| rule.matches(target)) {
            return Decision::Denied(format!(
                "the rule \"{}\" of {} refuses it (deny rules come before every allow rule: \
                 only taking it out of egress.deny allows it)",
                rule.text(),
                Source::Deny.describe()
            ));
        }
        let allowed = self
            .allow
            .iter()
            .map(|(rule, source)| (rule, source.clone()))
            .chain(answered.iter().map(|rule| (rule, Source::Answer)))
            .find(|(rule, _)| rule.matches(target));
        if let Some((rule, source)) = allowed {
            return Decision::Allowed(format!("\"{}\" of {}", rule.text(), source.describe()));
        }
        if self.ask {
            Decision::Ask
        } else {
            Decision::Denied(format!(
                "no rule allows it, and egress.ask = false refuses what no rule names; \
                 egress.allow = [\"{}\"] in the settings allows it",
                target.authority()
            ))
        }
    }

    /// The rule of the settings that names `address` on `port` exactly, if any (only such a
    /// rule lets a connection reach an internal address; no answer does, `--yes` included).
    pub fn address_rule(&self, address: IpAddr, port: u16) -> Option<String> {
        self.allow
            .iter()
            .map(|(rule, _)| rule)
            .find(|rule| rule.names_address(address, port))
            .map(|rule| rule.text().to_string())
    }

    /// The rules as `toolhost policy egress` lists them: (rule, where it comes from).
    pub fn listed(&self) -> Vec<(String, String)> {
        self.deny
            .iter()
            .map(|rule| (format!("deny {}", rule.text()), Source::Deny.describe()))
            .chain(
                self.allow
                    .iter()
                    .map(|(rule, source)| (format!("allow {}", rule.text()), source.describe())),
            )
            .collect()
    }

    /// Whether hosts no rule names are asked about.
    pub fn asks(&self) -> bool {
        self.ask
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Outcome = Result<(), Box<dyn std::error::Error>>;

    fn policy(allow: &[&str], deny: &[&str], ask: bool) -> Result<Policy, EgressError> {
        let settings = EgressSettings {
            allow: allow.iter().map(|s| s.to_string()).collect(),
            deny: deny.iter().map(|s| s.to_string()).collect(),
            ask,
            allowed_file: Some("/nonexistent/egress-allowed.txt".into()),
            log_dir: Some("/nonexistent/log".into()),
            ..EgressSettings::default()
        };
        Policy::from_settings(&settings)
    }

    #[test]
    fn deny_then_allow_then_registries_then_ask() -> Outcome {
        let p = policy(
            &["example.com", "*.example.com"],
            &["bad.example.com"],
            true,
        )?;
        let t = |host: &str| Target::new(host, 443);
        assert!(matches!(
            p.decide(&t("bad.example.com"), &[]),
            Decision::Denied(_)
        ));
        assert!(matches!(
            p.decide(&t("a.example.com"), &[]),
            Decision::Allowed(_)
        ));
        match p.decide(&t("index.crates.io"), &[]) {
            Decision::Allowed(why) => assert!(why.contains("egress.registries"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(p.decide(&t("elsewhere.net"), &[]), Decision::Ask);
        let answered = [Rule::exactly(&t("elsewhere.net"))];
        assert!(matches!(
            p.decide(&t("elsewhere.net"), &answered),
            Decision::Allowed(_)
        ));
        let quiet = policy(&[], &[], false)?;
        match quiet.decide(&t("elsewhere.net"), &[]) {
            Decision::Denied(why) => assert!(why.contains("egress.ask"), "{why}"),
            other => panic!("{other:?}"),
        }
        Ok(())
    }

    #[test]
    fn internal_addresses_need_their_exact_rule() -> Outcome {
        let p = policy(&["localhost", "127.0.0.1:8080"], &[], true)?;
        let loopback: IpAddr = "127.0.0.1".parse()?;
        assert!(p.address_rule(loopback, 8080).is_some());
        assert!(p.address_rule(loopback, 8081).is_none());
        assert!(
            p.address_rule(loopback, 9).is_none(),
            "a name is not its address"
        );
        Ok(())
    }

    #[test]
    fn configured_endpoints_are_allowed_exactly() -> Outcome {
        let p = policy(&[], &[], false)?.with_configured([
            "http://127.0.0.1:8931/mcp",
            "https://api.example.com/v1",
            "not a url",
        ]);
        let loopback: IpAddr = "127.0.0.1".parse()?;
        assert!(p.address_rule(loopback, 8931).is_some());
        assert!(p.address_rule(loopback, 8932).is_none());
        assert!(matches!(
            p.decide(&Target::new("api.example.com", 443), &[]),
            Decision::Allowed(why) if why.contains("configured endpoint")
        ));
        assert!(matches!(
            p.decide(&Target::new("api.example.com", 80), &[]),
            Decision::Denied(_)
        ));
        Ok(())
    }

    #[test]
    fn a_configured_localhost_names_the_loopback_on_its_port_only() -> Outcome {
        let p = policy(&[], &[], false)?.with_configured(["http://localhost:3000/mcp"]);
        assert!(matches!(
            p.decide(&Target::new("localhost", 3000), &[]),
            Decision::Allowed(_)
        ));
        assert!(p.address_rule("127.0.0.1".parse()?, 3000).is_some());
        assert!(p.address_rule("::1".parse()?, 3000).is_some());
        assert!(p.address_rule("127.0.0.1".parse()?, 3001).is_none());
        let elsewhere = policy(&[], &[], false)?.with_configured(["http://mcp.example.com:3000"]);
        assert!(
            elsewhere.address_rule("127.0.0.1".parse()?, 3000).is_none(),
            "only localhost names the loopback"
        );
        Ok(())
    }

    #[test]
    fn bad_rules_name_their_setting() {
        let settings = EgressSettings {
            allow: vec!["exa mple".into()],
            ..EgressSettings::default()
        };
        let error = Policy::from_settings(&settings)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(error.contains("egress.allow"), "{error}");
        assert!(!registries().is_empty());
    }
}
