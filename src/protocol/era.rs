//! The two eras of MCP: a session opened by `initialize` (up to 2025-11-25), or requests that
//! each carry their version and capabilities (2026-07-28 and later). Both directions speak of
//! them: the client remembers a server's, serve answers each request in its own.

use serde::Deserialize;
use serde_json::{json, Value};

/// Which protocol era a server speaks, with the agreed version.
#[derive(Debug, Clone, PartialEq)]
pub enum Era {
    /// 2026-07-28 and later: no handshake, `_meta` on every request.
    Stateless(String),
    /// `initialize` first, then requests within that session.
    Handshake(String),
}

impl Era {
    pub fn from_value(value: &Value) -> Option<Era> {
        #[derive(serde::Deserialize)]
        struct Record {
            era: String,
            version: String,
        }
        let record = Record::deserialize(value).ok()?;
        match record.era.as_str() {
            "stateless" => Some(Era::Stateless(record.version)),
            "handshake" => Some(Era::Handshake(record.version)),
            _ => None,
        }
    }

    pub fn to_value(&self) -> Value {
        match self {
            Era::Stateless(v) => json!({"era": "stateless", "version": v}),
            Era::Handshake(v) => json!({"era": "handshake", "version": v}),
        }
    }

    pub fn version(&self) -> &str {
        match self {
            Era::Stateless(v) | Era::Handshake(v) => v,
        }
    }

    /// Whether requests are answered without a session (2026-07-28 and later).
    pub fn is_stateless(&self) -> bool {
        matches!(self, Era::Stateless(_))
    }
}
