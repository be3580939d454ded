//! The host's answers to a worker's service requests: each request served with the call's
//! own `CallServices`, the answer as the JSON the worker decodes.

use crate::error::CallError;
use serde_json::Value;

use super::protocol::{ServiceRequest, SettingAnswer, WireError};
use crate::plugins::CallServices;

/// Serves one service request with the call's services; the answer as JSON.
pub fn answer(services: Option<&dyn CallServices>, request: ServiceRequest) -> Value {
    let Some(services) = services else {
        return Value::Null;
    };
    let json = |value: Result<Value, serde_json::Error>| value.unwrap_or(Value::Null);
    let wire = |e: CallError| WireError::from(&e);
    match request {
        ServiceRequest::Say {
            kind,
            text,
            partial,
        } => {
            services.say(&kind, &text, partial);
            Value::Null
        }
        ServiceRequest::Ask {
            kind,
            text,
            partial,
        } => json(serde_json::to_value(
            services.ask(&kind, &text, partial).map_err(wire),
        )),
        ServiceRequest::Approval { request } => json(serde_json::to_value(
            services.request_approval(&request).map_err(wire),
        )),
        ServiceRequest::CheckPath { path } => {
            json(serde_json::to_value(services.check_path(&path)))
        }
        ServiceRequest::RecordFileRead {
            absolute_path,
            mtime_ms,
        } => Value::from(services.record_file_read(&absolute_path, mtime_ms)),
        ServiceRequest::ForgetFileReads { absolute_path } => {
            services.forget_file_reads(&absolute_path);
            Value::Null
        }
        ServiceRequest::MistakeCount => Value::from(services.mistake_count()),
        ServiceRequest::Setting { key } => json(serde_json::to_value(SettingAnswer {
            value: services.setting(&key),
        })),
        ServiceRequest::Log {
            level,
            target,
            message,
        } => {
            services.log(level, &target, &message);
            Value::Null
        }
        ServiceRequest::InvokeTool { name, params_json } => json(serde_json::to_value(
            services.invoke_tool(&name, &params_json).map_err(wire),
        )),
        ServiceRequest::CallService {
            service,
            method,
            payload,
        } => json(serde_json::to_value(
            services
                .call_service(&service, &method, &payload)
                .map_err(wire),
        )),
    }
}
