//! JSON-RPC 2.0 framing and the MCP message shapes ferry reads, over `serde_json::Value`.
//!
//! Messages stay `Value`s so that whatever ferry does not understand (new fields, new content
//! types, `_meta`) passes through untouched; the typed views in `tools` read only what ferry
//! uses. Nothing here depends on the rest of ferry.

pub mod tools;

use serde_json::{json, Map, Value};

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
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;

/// ferry's `clientInfo`.
pub fn client_info() -> Value {
    json!({"name": "ferry", "version": env!("CARGO_PKG_VERSION")})
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

/// A successful response to a server-to-client request.
pub fn response(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error response to a server-to-client request.
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
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl RpcError {
    fn from_value(error: &Value) -> RpcError {
        RpcError {
            code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("unspecified error")
                .to_string(),
            data: error.get("data").cloned(),
        }
    }
}

/// Classifies one decoded message.
pub fn classify(msg: Value) -> Incoming {
    let Value::Object(mut obj) = msg else {
        return Incoming::Invalid;
    };
    let method = obj
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
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
            if let Some(error) = obj.get("error") {
                Incoming::Response {
                    id,
                    outcome: Err(RpcError::from_value(error)),
                }
            } else if let Some(result) = obj.remove("result") {
                Incoming::Response {
                    id,
                    outcome: Ok(result),
                }
            } else {
                Incoming::Invalid
            }
        }
        (None, None) => Incoming::Invalid,
    }
}

/// Adds the stateless-era `_meta` keys to a request's params.
pub fn with_stateless_meta(params: Option<Value>, version: &str, capabilities: &Value) -> Value {
    let mut params = match params {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        meta.insert(META_PROTOCOL_VERSION.into(), Value::String(version.into()));
        meta.insert(META_CLIENT_CAPABILITIES.into(), capabilities.clone());
        meta.insert(META_CLIENT_INFO.into(), client_info());
    }
    Value::Object(params)
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
        assert_eq!(classify(json!({"jsonrpc":"2.0","id":3})), Incoming::Invalid);
    }

    #[test]
    fn stateless_meta_keeps_existing_params() {
        let params =
            with_stateless_meta(Some(json!({"name":"echo"})), STATELESS_VERSION, &json!({}));
        assert_eq!(params["name"], "echo");
        assert_eq!(params["_meta"][META_PROTOCOL_VERSION], STATELESS_VERSION);
        assert_eq!(params["_meta"][META_CLIENT_INFO]["name"], "ferry");
    }

    #[test]
    fn ids_match_numbers_and_numeric_strings() {
        assert!(id_matches(&json!(4), 4));
        assert!(id_matches(&json!("4"), 4));
        assert!(!id_matches(&json!(5), 4));
    }
}
