//! Questions to a 2026-07-28 client as `InputRequiredResult`s (SEP-2322): a call that asks is
//! parked where it stands, its question goes back as the result's `inputRequests` with a
//! `requestState`, and the client's retry of the same `tools/call` brings the answer to the
//! waiting call, which goes on (and may ask again).
//!
//! A tool may also return such a result itself ([`tool_api::sdk::mcp_result::InputRequired`]):
//! it goes to the client with the tool's own state sealed the same way ([`Parked::relay`]), and
//! the retry calls the tool again with the answers and that state.
//!
//! The state is a handle of the parked call, sealed with a key of this process
//! ([`RequestStateCodec`]: HMAC), bound to the call (the tool's name and its arguments) and
//! valid for `[limits] ask_timeout_secs`. A state that was changed, made by another process,
//! replayed on another call, or is older than that is refused with an error; so is one already
//! used (a handle is taken out when its call resumes). The call keeps its own checks: the path
//! verdicts it was approved with travel with it, and a path swapped while the question waited
//! is found when the tool touches it, checked again and asked about again
//! ([`crate::call`]'s recheck).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::model::{
    InputRequest, InputRequiredResult, InputResponses, RequestStateCodec, SealOptions,
};
use rmcp::ErrorData;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Digest;

use super::ask::{Answers, Question};
use super::running::RunningCall;

/// The parked calls of one `toolhost mcp` process.
pub struct Parked {
    calls: Mutex<HashMap<String, ParkedCall>>,
    codec: RequestStateCodec,
    /// How long a question waits for the client's retry.
    lifetime: Duration,
}

/// A call waiting for the answer to `question`.
struct ParkedCall {
    call: RunningCall,
    question: Question,
    parked: Instant,
}

/// What a `requestState` holds.
#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Sealed {
    /// The handle of a parked call.
    Parked { handle: String },
    /// The state a tool (or a prompt's plugin) returned with input requests of its own.
    Own { state: Option<String> },
}

/// What a retry with a `requestState` goes on with.
pub enum Resumed {
    /// Its parked call, given its answer: wait for it again.
    Answered(RunningCall),
    /// Its parked call; the retry brought no answer: ask again.
    Unanswered(RunningCall, Question),
    /// The answers to a tool's own input requests: call it again with them and the state it
    /// returned with the requests.
    Again(Option<String>),
}

impl Parked {
    /// No parked call; questions wait `lifetime` for the retry.
    pub fn new(lifetime: Duration) -> Self {
        let mut key = [0u8; 32];
        rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut key);
        // `try_new` refuses only a key under 32 bytes: 32 random ones are what `new` takes.
        #[allow(deprecated)]
        let codec = RequestStateCodec::new(key.to_vec());
        Self {
            calls: Mutex::default(),
            codec,
            lifetime,
        }
    }

    /// Parks `call` on `question` and returns the result that asks it, its state bound to
    /// `binding` ([`binding`]).
    pub fn park(
        &self,
        call: RunningCall,
        question: Question,
        binding: &str,
    ) -> Result<InputRequiredResult, ErrorData> {
        let requests = question
            .requests
            .iter()
            .map(|(key, request)| {
                serde_json::from_value::<InputRequest>(request.clone())
                    .map(|request| (key.clone(), request))
                    .map_err(|e| {
                        ErrorData::internal_error(format!("a call's request {key}: {e}"), None)
                    })
            })
            .collect::<Result<BTreeMap<_, _>, _>>()?;
        let handle = crate::egress::tokens::new_token();
        let state = self.seal(
            &Sealed::Parked {
                handle: handle.clone(),
            },
            binding,
        )?;
        let mut calls = self.lock();
        // Calls whose question outlived its lifetime: the question answers nothing (the call
        // goes on as with nobody to ask) and nobody waits for them any more.
        calls.retain(|_, parked| parked.parked.elapsed() < self.lifetime);
        calls.insert(
            handle,
            ParkedCall {
                call,
                question,
                parked: Instant::now(),
            },
        );
        Ok(InputRequiredResult::new(Some(requests), Some(state)))
    }

    /// `sealed` as a `requestState` bound to `binding`, valid for the questions' lifetime.
    fn seal(&self, sealed: &Sealed, binding: &str) -> Result<String, ErrorData> {
        let options = SealOptions::new()
            .associated_data(binding.as_bytes())
            .ttl(self.lifetime);
        self.codec
            .seal_json_with(sealed, &options)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    /// `answer`, a result that needs input a plugin returned (a tool's, a prompt's), as the
    /// client gets it: its state sealed as [`Parked::park`] seals a parked call's, bound to
    /// `binding`.
    pub fn relay(&self, answer: &Value, binding: &str) -> Result<InputRequiredResult, ErrorData> {
        let own = Sealed::Own {
            state: answer["requestState"].as_str().map(str::to_string),
        };
        let sealed = self.seal(&own, binding)?;
        let mut relayed = answer.clone();
        relayed["requestState"] = Value::String(sealed);
        serde_json::from_value(relayed).map_err(|e| {
            ErrorData::internal_error(
                format!("a plugin asked for input in a malformed result: {e}"),
                None,
            )
        })
    }

    /// What a retry with `state` and `responses` goes on with (its state bound to
    /// `binding`); an error when the state is not one this process made for this call now.
    pub fn resume(
        &self,
        state: &str,
        binding: &str,
        responses: Option<&InputResponses>,
    ) -> Result<Resumed, ErrorData> {
        let sealed: Sealed = self
            .codec
            .open_json_with(state, binding.as_bytes())
            .map_err(|_| {
                ErrorData::invalid_params(
                    "requestState is not valid for this call: it was changed, made for another \
                     call or by another server, or is older than [limits] ask_timeout_secs. \
                     Call the tool again without it.",
                    None,
                )
            })?;
        let handle = match sealed {
            Sealed::Parked { handle } => handle,
            Sealed::Own { state } => return Ok(Resumed::Again(state)),
        };
        let parked = self.lock().remove(&handle).ok_or_else(|| {
            ErrorData::invalid_params(
                "requestState was already used, or its call is over: each state answers once. \
                 Call the tool again without it.",
                None,
            )
        })?;
        // A retry without an answer to every request is asked again.
        let answers: Option<Answers> = parked
            .question
            .requests
            .keys()
            .map(|key| Some((key.clone(), responses?.get(key)?.clone())))
            .collect();
        let Some(answers) = answers else {
            return Ok(Resumed::Unanswered(parked.call, parked.question));
        };
        parked.question.answer(Some(answers));
        Ok(Resumed::Answered(parked.call))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, ParkedCall>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What a call's state is bound to: its tool and its arguments (keys in any order), hashed.
pub fn binding(tool: &str, arguments: Option<&Value>) -> String {
    let mut hasher = sha2::Sha256::new();
    hasher.update(tool.as_bytes());
    hasher.update([0]);
    hasher.update(canonical(arguments.unwrap_or(&Value::Null)).as_bytes());
    hex::encode(hasher.finalize())
}

/// `value` as JSON with every object's keys sorted.
fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, String> =
                map.iter().map(|(k, v)| (k, canonical(v))).collect();
            let fields: Vec<String> = sorted
                .into_iter()
                .map(|(k, v)| format!("{}:{v}", Value::String(k.clone())))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_tools_own_state_comes_back_only_unchanged_and_to_its_own_call() {
        let parked = Parked::new(Duration::from_secs(60));
        let answer = serde_json::json!({"resultType": "input_required", "requestState": "mine",
            "inputRequests": {"k": {"method": "roots/list", "params": {}}}});
        let relayed = parked.relay(&answer, "call-a").unwrap();
        let sealed = relayed.request_state.clone().unwrap();
        match parked.resume(&sealed, "call-a", None).unwrap() {
            Resumed::Again(state) => assert_eq!(state.as_deref(), Some("mine")),
            _ => panic!("not the tool's own state"),
        }
        assert!(parked.resume(&sealed, "call-b", None).is_err());
        let mut tampered = sealed.into_bytes();
        let last = tampered.len() - 2;
        tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(tampered).unwrap();
        assert!(parked.resume(&tampered, "call-a", None).is_err());
    }

    #[test]
    fn a_binding_is_the_tool_and_its_arguments_in_any_key_order() {
        let a = serde_json::json!({"path": "a.txt", "content": {"x": 1, "y": [1, 2]}});
        let b = serde_json::json!({"content": {"y": [1, 2], "x": 1}, "path": "a.txt"});
        assert_eq!(
            binding("write_to_file", Some(&a)),
            binding("write_to_file", Some(&b))
        );
        assert_ne!(
            binding("write_to_file", Some(&a)),
            binding("read_file", Some(&a))
        );
        let c = serde_json::json!({"path": "b.txt", "content": {"x": 1, "y": [1, 2]}});
        assert_ne!(
            binding("write_to_file", Some(&a)),
            binding("write_to_file", Some(&c))
        );
    }
}
