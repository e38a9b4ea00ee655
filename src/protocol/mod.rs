//! JSON-RPC 2.0 messages and the MCP shapes ferry reads and writes, over `serde_json::Value`,
//! for either direction: a client (the CLI, the daemon) and a server (`ferry serve`) build and
//! classify the same messages.
//!
//! Messages stay `Value`s so that whatever ferry does not understand (new fields, new content
//! types, `_meta`) passes through untouched; the typed views (`tools`, `describe`) read only
//! what ferry uses. Nothing here depends on the rest of ferry.

pub mod content;
pub mod describe;
pub mod era;
pub mod json_schema;
pub mod lenient;
pub mod messages;
pub mod params;
pub mod question;
pub mod task_status;
pub mod tool_text;
pub mod tools;

pub use describe::ServerDescription;
pub use era::Era;
pub use task_status::TaskStatus;

use serde_json::{json, Value};
use std::future::Future;
use std::pin::Pin;

/// A boxed future, so the handlers of either side (a client's answers to server requests, a
/// server's tool provider) can be trait objects.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Sends a notification to the client for the request being served (progress, log
/// messages); it goes where the transport routes that request's messages.
pub type Notifier = std::sync::Arc<dyn Fn(Value) + Send + Sync>;

/// The stateless protocol revision: no handshake, `server/discover`, per-request `_meta`.
pub const STATELESS_VERSION: &str = "2026-07-28";
/// The handshake revision ferry offers in `initialize`.
pub const HANDSHAKE_VERSION: &str = "2025-11-25";
/// Handshake revisions ferry accepts when a server answers with an older one.
pub const HANDSHAKE_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// `_meta` keys every stateless request carries.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// JSON-RPC error codes ferry produces or recognises.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// A handshake-era request before `initialize`.
pub const NOT_INITIALIZED: i64 = -32002;
/// Resource not found (2025-11-25).
pub const RESOURCE_NOT_FOUND: i64 = -32002;
/// The request's protocol version is not one the server speaks (2026-07-28); `data.supported`
/// lists those it does.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// A header (`Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version`) disagrees with the body (2026-07-28).
pub const HEADER_MISMATCH: i64 = -32020;
/// A request needs a client capability the client did not declare (2026-07-28).
pub const MISSING_CAPABILITY: i64 = -32021;

/// What kind of JSON a value is, in words for messages: "a string", "a list"...
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A request object.
pub fn request(id: i64, method: &str, params: Option<Value>) -> Value {
    let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if let Some(params) = params {
        msg["params"] = params;
    }
    msg
}

/// A notification object (no id, no answer expected).
pub fn notification(method: &str, params: Option<Value>) -> Value {
    let mut msg = json!({"jsonrpc": "2.0", "method": method});
    if let Some(params) = params {
        msg["params"] = params;
    }
    msg
}

/// A successful response.
pub fn response(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error response.
pub fn error_response(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// What an incoming message is, by shape.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    /// An answer to one of our requests; `Err` holds the JSON-RPC error object.
    Response {
        id: Value,
        outcome: Result<Value, RpcError>,
    },
    /// The server asks us something and waits for an answer.
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// The server tells us something.
    Notification { method: String, params: Value },
    /// A response to `id` with neither `result` nor `error`.
    BadResponse { id: Value },
    /// Not a JSON-RPC 2.0 message.
    Invalid,
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl std::fmt::Display for RpcError {
    /// The message and its code, once: the TypeScript SDK's `MCP error -32602: ` prefix is
    /// dropped, and a message that already names its code is not given it again.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let code = self.code.to_string();
        let message = self
            .message
            .strip_prefix("MCP error ")
            .and_then(|rest| rest.strip_prefix(code.as_str()))
            .and_then(|rest| rest.strip_prefix(": "))
            .unwrap_or(&self.message);
        if message.contains(code.as_str()) {
            f.write_str(message)
        } else {
            write!(f, "{message} (code {code})")
        }
    }
}

impl RpcError {
    /// Reads a JSON-RPC error object, whatever it lacks.
    pub fn from_value(error: &Value) -> RpcError {
        let error = messages::ErrorObject::read(error);
        RpcError {
            code: error.code.unwrap_or(0),
            message: error
                .message
                .unwrap_or_else(|| "unspecified error".to_string()),
            data: error.data,
        }
    }
}

/// A borrowed view of one JSON-RPC message's envelope: `method`, `id`, `params`, `result`,
/// `error`, each `None` when absent (or, for `method`, not a string).
#[derive(Debug, Clone, Copy)]
pub struct MessageView<'a> {
    obj: Option<&'a serde_json::Map<String, Value>>,
}

impl<'a> MessageView<'a> {
    pub fn new(msg: &'a Value) -> MessageView<'a> {
        MessageView {
            obj: msg.as_object(),
        }
    }

    fn field(&self, name: &str) -> Option<&'a Value> {
        self.obj.and_then(|o| o.get(name))
    }

    /// `method`, when a string.
    pub fn method(&self) -> Option<&'a str> {
        self.field("method").and_then(Value::as_str)
    }

    /// Whether there is a `method` at all (of whatever type).
    pub fn has_method(&self) -> bool {
        self.field("method").is_some()
    }

    pub fn id(&self) -> Option<&'a Value> {
        self.field("id")
    }

    pub fn params(&self) -> Option<&'a Value> {
        self.field("params")
    }

    pub fn result(&self) -> Option<&'a Value> {
        self.field("result")
    }

    pub fn error(&self) -> Option<&'a Value> {
        self.field("error")
    }

    /// Whether it has any of the members a JSON-RPC message has (`jsonrpc`, `result`, `error`).
    pub fn looks_like_jsonrpc(&self) -> bool {
        self.field("jsonrpc").is_some() || self.result().is_some() || self.error().is_some()
    }
}

/// A JSON value with every object's keys in order, so that two values alike but for key
/// order print alike (a digest, a cache key).
pub fn sorted_keys(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted_keys(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted_keys).collect()),
        other => other.clone(),
    }
}

/// Classifies one decoded message.
pub fn classify(msg: Value) -> Incoming {
    let Value::Object(mut obj) = msg else {
        return Incoming::Invalid;
    };
    let method = obj
        .remove("method")
        .and_then(|m| m.as_str().map(str::to_string));
    let id = obj.remove("id");
    match (method, id) {
        (Some(method), Some(id)) if !id.is_null() => Incoming::Request {
            id,
            method,
            params: obj.remove("params").unwrap_or(Value::Null),
        },
        (Some(method), _) => Incoming::Notification {
            method,
            params: obj.remove("params").unwrap_or(Value::Null),
        },
        (None, Some(id)) => {
            if let Some(error) = obj.remove("error") {
                Incoming::Response {
                    id,
                    outcome: Err(RpcError::from_value(&error)),
                }
            } else if let Some(result) = obj.remove("result") {
                Incoming::Response {
                    id,
                    outcome: Ok(result),
                }
            } else {
                Incoming::BadResponse { id }
            }
        }
        (None, None) => Incoming::Invalid,
    }
}

/// True when an id in a response is the numeric id we sent (servers may echo it as a string).
pub fn id_matches(id: &Value, ours: i64) -> bool {
    match id {
        Value::Number(n) => n.as_i64() == Some(ours),
        Value::String(s) => s.parse::<i64>().ok() == Some(ours),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_error_says_its_code_once() {
        let error = |code, message: &str| RpcError {
            code,
            message: message.into(),
            data: None,
        };
        assert_eq!(
            error(-32602, "MCP error -32602: Task not found").to_string(),
            "Task not found (code -32602)"
        );
        assert_eq!(
            error(-32601, "Method not found").to_string(),
            "Method not found (code -32601)"
        );
        assert_eq!(
            error(-32000, "failed (-32000)").to_string(),
            "failed (-32000)"
        );
    }

    use super::*;

    #[test]
    fn classifies_each_shape() {
        let resp = classify(json!({"jsonrpc":"2.0","id":1,"result":{"ok":true}}));
        assert_eq!(
            resp,
            Incoming::Response {
                id: json!(1),
                outcome: Ok(json!({"ok":true}))
            }
        );
        let err =
            classify(json!({"jsonrpc":"2.0","id":"2","error":{"code":-32601,"message":"nope"}}));
        assert!(matches!(
            err,
            Incoming::Response {
                outcome: Err(RpcError { code: -32601, .. }),
                ..
            }
        ));
        let req = classify(json!({"jsonrpc":"2.0","id":9,"method":"ping"}));
        assert!(matches!(req, Incoming::Request { ref method, .. } if method == "ping"));
        let note = classify(json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"}));
        assert!(matches!(note, Incoming::Notification { .. }));
        assert_eq!(classify(json!([1, 2])), Incoming::Invalid);
        assert_eq!(
            classify(json!({"jsonrpc":"2.0","id":3})),
            Incoming::BadResponse { id: json!(3) }
        );
    }

    #[test]
    fn ids_match_numbers_and_numeric_strings() {
        assert!(id_matches(&json!(4), 4));
        assert!(id_matches(&json!("4"), 4));
        assert!(!id_matches(&json!(5), 4));
    }
}
