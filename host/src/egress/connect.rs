//! One connection the proxy makes for a grant, whatever the client spoke (HTTP or SOCKS5):
//! decided by the policy on the name as given, asked about when no rule names it, resolved,
//! checked against the internal addresses, connected; a refusal logged and told
//! ([`connect`]).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::net::TcpStream;

use super::addresses;
use super::answers::{answered, answers, remember};
use super::grant::{Answer, Grant};
use super::log::{self, Entry};
use super::policy::{Decision, Policy};
use super::rules::{Rule, Target};
use super::session::Session;

/// One at a time, so that parallel connections to one host ask once.
static ASKING: Mutex<()> = Mutex::new(());

/// Connects to `target` for `grant`, decided under `policy` (the grant's, with the client's
/// configured endpoint): the connection and its log entry (written when the connection
/// ends), or the refusal, already logged and told (to the tool, and to a command's standard
/// error).
pub async fn connect(
    session: &Session,
    grant: &Arc<Grant>,
    policy: &Policy,
    target: &Target,
) -> Result<(Opened, Entry), Refusal> {
    let mut entry = Entry {
        time_ms: log::now_ms(),
        task: grant.task.clone(),
        tool: grant.tool.clone(),
        target: target.authority(),
        verdict: "denied".into(),
        why: String::new(),
        address: None,
        sent: 0,
        received: 0,
    };
    match open(target, grant, policy).await {
        Ok(opened) => {
            entry.verdict = "allowed".into();
            entry.why = opened.why.clone();
            entry.address = Some(opened.address.to_string());
            Ok((opened, entry))
        }
        Err(refusal) => {
            let (verdict, message) = match &refusal {
                Refusal::Denied(message) => ("denied", message),
                Refusal::Failed(message) => ("failed", message),
            };
            entry.verdict = verdict.into();
            entry.why = message.clone();
            write_log(grant, &entry);
            session.tell(grant, &format!("egress: {message}"));
            Err(refusal)
        }
    }
}

/// Why a connection was not made: who refused, and what would allow it.
pub enum Refusal {
    /// A rule, the user, nobody to ask or the address check refused it.
    Denied(String),
    /// It was allowed, and could not be made (no address, nobody listening).
    Failed(String),
}

/// A connection made, and the rule or answer that allowed it.
pub struct Opened {
    /// The connection.
    pub stream: TcpStream,
    /// The address it reached.
    pub address: SocketAddr,
    /// The rule or answer that allowed it.
    pub why: String,
}

pub fn write_log(grant: &Grant, entry: &Entry) {
    if let Some(dir) = &grant.policy.log_dir {
        log::record(dir, entry);
    }
}

/// Decides on `target` under `policy` (the grant's, with the client's configured endpoint),
/// asking when the rules say so, then resolves it and connects to the first address that
/// may be reached.
async fn open(target: &Target, grant: &Arc<Grant>, policy: &Policy) -> Result<Opened, Refusal> {
    let tool = &grant.tool;
    let authority = target.authority();
    let why = match policy.decide(target, &answers(&grant.task)) {
        Decision::Allowed(why) => why,
        Decision::Denied(why) => {
            return Err(Refusal::Denied(format!(
                "{tool} may not connect to {authority}: {why}"
            )))
        }
        Decision::Ask => {
            let grant = grant.clone();
            let asked = target.clone();
            tokio::task::spawn_blocking(move || ask(&grant, &asked))
                .await
                .map_err(|e| Refusal::Denied(format!("asking about {authority} failed: {e}")))??
        }
    };
    let candidates: Vec<SocketAddr> = match target.address {
        Some(address) => vec![SocketAddr::new(address, target.port)],
        None => tokio::net::lookup_host((target.host.as_str(), target.port))
            .await
            .map_err(|e| Refusal::Failed(format!("{authority} cannot be resolved: {e}")))?
            .collect(),
    };
    let mut refused = None;
    let mut failed = None;
    for address in candidates {
        if let Some(kind) = addresses::internal(address.ip()) {
            if policy.address_rule(address.ip(), address.port()).is_none() {
                refused.get_or_insert((address, kind));
                continue;
            }
        }
        match TcpStream::connect(address).await {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                return Ok(Opened {
                    stream,
                    address,
                    why,
                });
            }
            Err(e) if target.address.is_some() => {
                failed = Some(format!("{authority} cannot be reached: {e}"));
            }
            Err(e) => failed = Some(format!("{authority} ({address}) cannot be reached: {e}")),
        }
    }
    if let Some(message) = failed {
        return Err(Refusal::Failed(message));
    }
    let (address, kind) =
        refused.ok_or_else(|| Refusal::Failed(format!("{authority} has no address")))?;
    let exact = SocketAddr::new(address.ip(), target.port);
    Err(Refusal::Denied(format!(
        "{tool} may not connect to {authority}: it leads to {address}, a {kind} address, \
         which only a rule naming that exact address reaches (egress.allow = [\"{exact}\"])"
    )))
}

/// Asks the user about `target` (one question at a time; an answer given meanwhile counts).
fn ask(grant: &Grant, target: &Target) -> Result<String, Refusal> {
    let _one_at_a_time = ASKING.lock().unwrap_or_else(PoisonError::into_inner);
    if let Decision::Allowed(why) = grant.policy.decide(target, &answers(&grant.task)) {
        return Ok(why);
    }
    let authority = target.authority();
    let file = grant
        .policy
        .allowed_file
        .as_ref()
        .map_or("the allowed file".to_string(), |f| f.display().to_string());
    let question = format!(
        "{} wants to connect to {authority}, which no egress rule names. Allow it? \
         (yes: for this task; always: from now on, written to {file}; no: refuse)",
        grant.tool
    );
    let rule = Rule::exactly(target);
    match grant.asker.ask(&question) {
        Answer::ThisTask(by) => {
            answered(&grant.task, rule);
            Ok(format!("allowed for this task {by}"))
        }
        Answer::Always => {
            if let Some(file) = &grant.policy.allowed_file {
                remember(file, &rule).map_err(|e| Refusal::Denied(e.to_string()))?;
            }
            answered(&grant.task, rule);
            Ok("the user's answer \"always\"".to_string())
        }
        Answer::Refused(by) => Err(Refusal::Denied(format!(
            "{} may not connect to {authority}: no rule names it, and it was refused {by}; \
             egress.allow = [\"{authority}\"] in the settings allows it",
            grant.tool
        ))),
    }
}
