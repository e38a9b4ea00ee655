//! Views over a request's `params`: each field ferry reads, by name, of the JSON type the
//! specification gives it (`None` when absent or of another type), so the field names are
//! written here once. `params` stays a `Value`: nothing a client sends is lost.

use super::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
use serde_json::{Map, Value};

/// The `_meta` key of the log level a stateless request asks for.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// A request's `params` (or a notification's).
#[derive(Debug, Clone, Copy)]
pub struct Params<'a> {
    obj: Option<&'a Map<String, Value>>,
}

impl<'a> Params<'a> {
    pub fn new(params: &'a Value) -> Params<'a> {
        Params {
            obj: params.as_object(),
        }
    }

    /// A field, whatever its type.
    pub fn field(&self, name: &str) -> Option<&'a Value> {
        self.obj.and_then(|o| o.get(name))
    }

    fn str(&self, name: &str) -> Option<&'a str> {
        self.field(name).and_then(Value::as_str)
    }

    /// `name` (`tools/call`, `prompts/get`), when a string.
    pub fn name(&self) -> Option<&'a str> {
        self.str("name")
    }

    /// `name`, whatever its type.
    pub fn name_field(&self) -> Option<&'a Value> {
        self.field("name")
    }

    /// `uri` (`resources/read`, subscriptions), when a string.
    pub fn uri(&self) -> Option<&'a str> {
        self.str("uri")
    }

    /// `uri`, whatever its type.
    pub fn uri_field(&self) -> Option<&'a Value> {
        self.field("uri")
    }

    /// `taskId`, whatever its type.
    pub fn task_id_field(&self) -> Option<&'a Value> {
        self.field("taskId")
    }

    /// `taskId`, when a string.
    pub fn task_id(&self) -> Option<&'a str> {
        self.str("taskId")
    }

    /// `arguments`, whatever its type.
    pub fn arguments(&self) -> Option<&'a Value> {
        self.field("arguments")
    }

    /// `level` (`logging/setLevel`), when a string.
    pub fn level(&self) -> Option<&'a str> {
        self.str("level")
    }

    /// `protocolVersion` (`initialize`), whatever its type.
    pub fn protocol_version(&self) -> Option<&'a Value> {
        self.field("protocolVersion")
    }

    /// `capabilities` (`initialize`), whatever its type.
    pub fn capabilities(&self) -> Option<&'a Value> {
        self.field("capabilities")
    }

    /// `ref` (`completion/complete`), whatever its type.
    pub fn reference(&self) -> Option<&'a Value> {
        self.field("ref")
    }

    /// `argument` (`completion/complete`), whatever its type.
    pub fn argument(&self) -> Option<&'a Value> {
        self.field("argument")
    }

    /// `requestState` (a stateless retry), whatever its type.
    pub fn request_state(&self) -> Option<&'a Value> {
        self.field("requestState")
    }

    /// `inputResponses` (a stateless retry, `tasks/update`), when an object.
    pub fn input_responses(&self) -> Option<&'a Map<String, Value>> {
        self.field("inputResponses").and_then(Value::as_object)
    }

    /// `requestId` (`notifications/cancelled`), whatever its type.
    pub fn request_id(&self) -> Option<&'a Value> {
        self.field("requestId")
    }

    /// `inputResponses`, whatever its type.
    pub fn input_responses_field(&self) -> Option<&'a Value> {
        self.field("inputResponses")
    }

    /// `_meta`, when an object.
    pub fn meta(&self) -> Option<Meta<'a>> {
        self.field("_meta")
            .and_then(Value::as_object)
            .map(|obj| Meta { obj })
    }

    /// `_meta.progressToken`.
    pub fn progress_token(&self) -> Option<&'a Value> {
        self.meta().and_then(|m| m.progress_token())
    }
}

/// A request's `_meta`.
#[derive(Debug, Clone, Copy)]
pub struct Meta<'a> {
    obj: &'a Map<String, Value>,
}

impl<'a> Meta<'a> {
    /// Whether a key is there (whatever its value, `null` too).
    pub fn has(&self, key: &str) -> bool {
        self.obj.contains_key(key)
    }

    /// A key's value.
    pub fn field(&self, key: &str) -> Option<&'a Value> {
        self.obj.get(key)
    }

    /// The protocol version a stateless request declares, whatever its type.
    pub fn protocol_version(&self) -> Option<&'a Value> {
        self.field(META_PROTOCOL_VERSION)
    }

    /// The client capabilities a stateless request declares.
    pub fn client_capabilities(&self) -> Option<&'a Value> {
        self.field(META_CLIENT_CAPABILITIES)
    }

    /// The log level a stateless request asks for, when a string.
    pub fn log_level(&self) -> Option<&'a str> {
        self.field(META_LOG_LEVEL).and_then(Value::as_str)
    }

    pub fn progress_token(&self) -> Option<&'a Value> {
        self.field("progressToken")
    }
}

/// A completion's `ref`: a prompt by name or a resource template by URI.
#[derive(Debug, Clone, Copy)]
pub struct Reference<'a> {
    obj: Option<&'a Map<String, Value>>,
}

impl<'a> Reference<'a> {
    pub fn new(reference: &'a Value) -> Reference<'a> {
        Reference {
            obj: reference.as_object(),
        }
    }

    fn str(&self, name: &str) -> Option<&'a str> {
        self.obj.and_then(|o| o.get(name)).and_then(Value::as_str)
    }

    /// `ref/prompt` or `ref/resource`.
    pub fn kind(&self) -> Option<&'a str> {
        self.str("type")
    }

    pub fn name(&self) -> Option<&'a str> {
        self.str("name")
    }

    pub fn uri(&self) -> Option<&'a str> {
        self.str("uri")
    }
}
