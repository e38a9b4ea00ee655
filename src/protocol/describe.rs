//! What a server says about itself, read and written in one place: `serverInfo`,
//! `capabilities` and `instructions`, from an `initialize` result (handshake era) or a
//! `server/discover` result (2026-07-28), and the same results built for `ferry serve`.

use super::{HANDSHAKE_VERSIONS, STATELESS_VERSION};
use serde_json::{json, Value};

/// The `_meta` key of a discover result that carries `serverInfo`.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// A server's self-description.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerDescription {
    /// `{name, version, ...}` as the server sent it (`Null` when unknown).
    pub server_info: Value,
    pub capabilities: Value,
    pub instructions: Option<String>,
}

impl ServerDescription {
    /// Reads an `initialize` result.
    pub fn from_initialize(result: &Value) -> ServerDescription {
        ServerDescription {
            server_info: result.get("serverInfo").cloned().unwrap_or(Value::Null),
            capabilities: result.get("capabilities").cloned().unwrap_or(Value::Null),
            instructions: instructions(result),
        }
    }

    /// Reads a `server/discover` result (`serverInfo` sits in its `_meta`; older drafts put it
    /// beside the capabilities).
    pub fn from_discover(result: &Value) -> ServerDescription {
        ServerDescription {
            server_info: result
                .get("_meta")
                .and_then(|m| m.get(META_SERVER_INFO))
                .or_else(|| result.get("serverInfo"))
                .cloned()
                .unwrap_or(Value::Null),
            capabilities: result.get("capabilities").cloned().unwrap_or(Value::Null),
            instructions: instructions(result),
        }
    }

    /// The server's name, if it gave one.
    pub fn name(&self) -> Option<&str> {
        self.server_info.get("name").and_then(Value::as_str)
    }

    /// Whether the server declared a capability (`tools`, `resources`, `prompts`...).
    pub fn has_capability(&self, name: &str) -> bool {
        self.capabilities.get(name).is_some_and(|c| !c.is_null())
    }

    /// The `initialize` result a server sends, at the version agreed.
    pub fn initialize_result(&self, version: &str) -> Value {
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": self.capabilities,
            "serverInfo": self.server_info,
        });
        if let Some(text) = &self.instructions {
            result["instructions"] = json!(text);
        }
        result
    }

    /// The `server/discover` result a server sends.
    pub fn discover_result(&self) -> Value {
        let mut supported = vec![STATELESS_VERSION];
        supported.extend(HANDSHAKE_VERSIONS);
        let mut result = json!({
            "resultType": "complete",
            "supportedVersions": supported,
            "capabilities": self.capabilities,
            "_meta": {META_SERVER_INFO: self.server_info},
        });
        if let Some(text) = &self.instructions {
            result["instructions"] = json!(text);
        }
        result
    }
}

fn instructions(result: &Value) -> Option<String> {
    result
        .get("instructions")
        .and_then(Value::as_str)
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_results_read_back_the_same() {
        let description = ServerDescription {
            server_info: json!({"name": "repo", "version": "1"}),
            capabilities: json!({"tools": {}}),
            instructions: Some("Read-only tools.".into()),
        };
        let init = description.initialize_result("2025-11-25");
        assert_eq!(init["protocolVersion"], "2025-11-25");
        assert_eq!(ServerDescription::from_initialize(&init), description);
        let discover = description.discover_result();
        assert_eq!(discover["supportedVersions"][0], STATELESS_VERSION);
        assert_eq!(ServerDescription::from_discover(&discover), description);
        assert_eq!(description.name(), Some("repo"));
        assert!(description.has_capability("tools"));
        assert!(!description.has_capability("prompts"));
    }
}
