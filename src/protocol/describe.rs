//! What a server says about itself, read and written in one place: `serverInfo`,
//! `capabilities` and `instructions`, from an `initialize` result (handshake era) or a
//! `server/discover` result (2026-07-28), and the same results built for `ferry serve`.

use super::lenient;
use super::messages::ListView;
use super::{HANDSHAKE_VERSIONS, STATELESS_VERSION};
use serde::{Deserialize, Serialize};
use serde_json::Value;

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

/// The parts of an `initialize` or `server/discover` result that describe the server, read
/// leniently.
#[derive(Debug, Default, Deserialize)]
struct Described {
    #[serde(rename = "serverInfo", default, deserialize_with = "lenient::any")]
    server_info: Option<Value>,
    #[serde(default, deserialize_with = "lenient::any")]
    capabilities: Option<Value>,
    #[serde(default, deserialize_with = "lenient::opt")]
    instructions: Option<String>,
    #[serde(rename = "_meta", default, deserialize_with = "lenient::opt")]
    meta: Option<DiscoverMeta>,
}

#[derive(Debug, Default, Deserialize)]
struct DiscoverMeta {
    #[serde(
        rename = "io.modelcontextprotocol/serverInfo",
        default,
        deserialize_with = "lenient::any"
    )]
    server_info: Option<Value>,
}

/// An `initialize` result, as a server sends it.
#[derive(Serialize)]
struct InitializeResult<'a> {
    #[serde(rename = "protocolVersion")]
    protocol_version: &'a str,
    capabilities: &'a Value,
    #[serde(rename = "serverInfo")]
    server_info: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
}

/// A `server/discover` result, as a server sends it.
#[derive(Serialize)]
struct DiscoverResult<'a> {
    #[serde(rename = "resultType")]
    result_type: &'a str,
    #[serde(rename = "supportedVersions")]
    supported_versions: Vec<&'a str>,
    capabilities: &'a Value,
    #[serde(rename = "_meta")]
    meta: DiscoverMetaOut<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
}

#[derive(Serialize)]
struct DiscoverMetaOut<'a> {
    #[serde(rename = "io.modelcontextprotocol/serverInfo")]
    server_info: &'a Value,
}

impl ServerDescription {
    /// Reads an `initialize` result.
    pub fn from_initialize(result: &Value) -> ServerDescription {
        let described: Described = lenient::view(result);
        ServerDescription {
            server_info: described.server_info.unwrap_or(Value::Null),
            capabilities: described.capabilities.unwrap_or(Value::Null),
            instructions: described.instructions,
        }
    }

    /// Reads a `server/discover` result (`serverInfo` sits in its `_meta`; older drafts put it
    /// beside the capabilities).
    pub fn from_discover(result: &Value) -> ServerDescription {
        let described: Described = lenient::view(result);
        ServerDescription {
            server_info: described
                .meta
                .and_then(|m| m.server_info)
                .or(described.server_info)
                .unwrap_or(Value::Null),
            capabilities: described.capabilities.unwrap_or(Value::Null),
            instructions: described.instructions,
        }
    }

    /// The server's name, if it gave one.
    pub fn name(&self) -> Option<&str> {
        ListView::new(&self.server_info).name()
    }

    /// Whether the server declared a capability (`tools`, `resources`, `prompts`...).
    pub fn has_capability(&self, name: &str) -> bool {
        self.capabilities.get(name).is_some_and(|c| !c.is_null())
    }

    /// The `initialize` result a server sends, at the version agreed.
    pub fn initialize_result(&self, version: &str) -> Value {
        serde_json::to_value(InitializeResult {
            protocol_version: version,
            capabilities: &self.capabilities,
            server_info: &self.server_info,
            instructions: self.instructions.as_deref(),
        })
        .unwrap_or(Value::Null)
    }

    /// The `server/discover` result a server sends.
    pub fn discover_result(&self) -> Value {
        let mut supported = vec![STATELESS_VERSION];
        supported.extend(HANDSHAKE_VERSIONS);
        serde_json::to_value(DiscoverResult {
            result_type: "complete",
            supported_versions: supported,
            capabilities: &self.capabilities,
            meta: DiscoverMetaOut {
                server_info: &self.server_info,
            },
            instructions: self.instructions.as_deref(),
        })
        .unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
