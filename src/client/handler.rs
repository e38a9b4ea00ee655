//! Who answers what a server asks of its client: roots, elicitation and sampling, and who
//! hears its progress. The session never answers these itself; the caller supplies a
//! [`ClientHandler`]: the CLI's answers with its own terminal and working directory, the
//! daemon's forwards each question to the CLI that made the call.

use crate::protocol::BoxFuture;
use crate::protocol::METHOD_NOT_FOUND;
use serde_json::{json, Value};

/// A server-to-client request that the handler refused.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClientRequestError {
    pub code: i64,
    pub message: String,
}

/// Answers a server's requests on behalf of the person or program that made the call.
pub trait ClientHandler: Send + Sync {
    /// The client capabilities to declare (`elicitation` only where someone can answer).
    fn capabilities(&self) -> Value {
        json!({})
    }

    /// Answers one server request (`roots/list`, `elicitation/create`,
    /// `sampling/createMessage`, ...). `ping` never reaches a handler.
    fn answer<'a>(
        &'a self,
        method: &'a str,
        params: &'a Value,
    ) -> BoxFuture<'a, Result<Value, ClientRequestError>> {
        let _ = params;
        Box::pin(async move { Err(not_supported(method)) })
    }

    /// A `notifications/progress` for a request of this caller.
    fn progress(&self, params: &Value) {
        let _ = params;
    }
}

/// The refusal for a request ferry does not handle.
pub fn not_supported(method: &str) -> ClientRequestError {
    ClientRequestError {
        code: METHOD_NOT_FOUND,
        message: format!("ferry does not support {method}"),
    }
}

/// The client capabilities ferry declares for a caller that can answer elicitation (a person
/// at a terminal) and sampling (a host behind the proxy). `roots` is never declared: servers
/// such as server-filesystem would replace the directories the user configured with it.
pub fn declared_capabilities(elicitation: bool, sampling: bool) -> Value {
    let mut capabilities = json!({});
    if elicitation {
        capabilities["elicitation"] = json!({"form": {}, "url": {}});
    }
    if sampling {
        capabilities["sampling"] = json!({});
    }
    capabilities
}

/// A handler for callers with nobody to ask: roots are a given directory (if any),
/// elicitation is declined, sampling refused.
#[derive(Debug, Clone, Default)]
pub struct Unattended {
    pub root: Option<std::path::PathBuf>,
}

impl ClientHandler for Unattended {
    fn answer<'a>(
        &'a self,
        method: &'a str,
        _params: &'a Value,
    ) -> BoxFuture<'a, Result<Value, ClientRequestError>> {
        Box::pin(async move {
            match method {
                "roots/list" => Ok(roots_of(self.root.as_deref())),
                "elicitation/create" => Ok(json!({"action": "decline"})),
                "sampling/createMessage" => Err(sampling_refused()),
                _ => Err(not_supported(method)),
            }
        })
    }
}

/// `roots/list`'s answer for one directory (none: an empty list).
pub fn roots_of(dir: Option<&std::path::Path>) -> Value {
    match dir {
        Some(dir) => json!({"roots": [{"uri": file_uri(dir), "name": "current directory"}]}),
        None => json!({"roots": []}),
    }
}

/// A `file://` URI for a local path, percent-encoding what a URI cannot hold.
pub fn file_uri(path: &std::path::Path) -> String {
    let mut uri = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        if byte.is_ascii_alphanumeric() || b"/-_.~".contains(&byte) {
            uri.push(byte as char);
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

/// The refusal of `sampling/createMessage`: ferry has no model to ask.
pub fn sampling_refused() -> ClientRequestError {
    ClientRequestError {
        code: -1,
        message: "ferry does not provide sampling (an LLM completion)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_are_encoded() {
        assert_eq!(
            file_uri(std::path::Path::new("/home/me/my project")),
            "file:///home/me/my%20project"
        );
    }
}
