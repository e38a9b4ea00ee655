//! Results and notifications as serde types: `tools/call`, `prompts/get`, `resources/read`,
//! list pages, tasks, progress, elicitation and sampling.
//!
//! Each type reads leniently ([`super::lenient`]): a field of the wrong JSON type reads as
//! absent, as ferry's hand-written readers always did, and what ferry does not know stays in
//! `extra`. Types ferry also builds serialise their fields in the order ferry always wrote them.

use super::content::{Content, ResourceContents};
use super::lenient;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A `tools/call` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CallToolResult {
    #[serde(default, deserialize_with = "lenient::or_default")]
    pub content: Vec<Content>,
    #[serde(
        rename = "structuredContent",
        default,
        deserialize_with = "lenient::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub structured_content: Option<Value>,
    #[serde(
        rename = "isError",
        default,
        deserialize_with = "lenient::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub is_error: Option<bool>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CallToolResult {
    /// Reads a result; whatever is not an object reads as an empty result.
    pub fn read(value: &Value) -> CallToolResult {
        lenient::view(value)
    }

    /// A result of these blocks.
    pub fn of(content: Vec<Content>) -> CallToolResult {
        CallToolResult {
            content,
            ..CallToolResult::default()
        }
    }

    /// A tool error: one text block and `isError`.
    pub fn error(text: impl Into<String>) -> CallToolResult {
        CallToolResult {
            content: vec![Content::text(text)],
            is_error: Some(true),
            ..CallToolResult::default()
        }
    }

    /// Whether the tool said it failed.
    pub fn failed(&self) -> bool {
        self.is_error == Some(true)
    }

    /// Whether a result says the tool failed, read without copying the result.
    pub fn says_failed(result: &Value) -> bool {
        ResultView::new(result).is_error()
    }

    /// As JSON, exactly as it is sent.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// A borrowed view of a `tools/call` result, for code that passes the result on as it came
/// (the proxy) and must not rewrite it: its parts by name, `None` when absent or of another
/// type.
#[derive(Debug, Clone, Copy)]
pub struct ResultView<'a> {
    obj: Option<&'a Map<String, Value>>,
}

impl<'a> ResultView<'a> {
    pub fn new(result: &'a Value) -> ResultView<'a> {
        ResultView {
            obj: result.as_object(),
        }
    }

    fn field(&self, name: &str) -> Option<&'a Value> {
        self.obj.and_then(|o| o.get(name))
    }

    /// `content`, when a list.
    pub fn content(&self) -> Option<&'a [Value]> {
        self.field("content")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
    }

    /// `content`, whatever its type.
    pub fn content_field(&self) -> Option<&'a Value> {
        self.field("content")
    }

    /// `structuredContent`, whatever its type (`null` too).
    pub fn structured_content(&self) -> Option<&'a Value> {
        self.field("structuredContent")
    }

    /// Whether `isError` is `true`.
    pub fn is_error(&self) -> bool {
        self.field("isError").and_then(Value::as_bool) == Some(true)
    }
}

/// A borrowed view of a list result (`tools/list`, `resources/list`...) or of one of its
/// entries: the list under a key, `nextCursor`, and an entry's `name`, `uri`, `uriTemplate`,
/// `description` and `instructions`, each `None` when absent or not of its type.
#[derive(Debug, Clone, Copy)]
pub struct ListView<'a> {
    obj: Option<&'a Map<String, Value>>,
}

impl<'a> ListView<'a> {
    pub fn new(value: &'a Value) -> ListView<'a> {
        ListView {
            obj: value.as_object(),
        }
    }

    fn field(&self, name: &str) -> Option<&'a Value> {
        self.obj.and_then(|o| o.get(name))
    }

    fn str(&self, name: &str) -> Option<&'a str> {
        self.field(name).and_then(Value::as_str)
    }

    /// The items under `key` (`tools`, `resources`...), when a list.
    pub fn items(&self, key: &str) -> Option<&'a Vec<Value>> {
        self.field(key).and_then(Value::as_array)
    }

    /// `nextCursor`, whatever its type (`null` too).
    pub fn next_cursor(&self) -> Option<&'a Value> {
        self.field("nextCursor")
    }

    /// A JSON-RPC envelope's `result`, whatever its type.
    pub fn result(&self) -> Option<&'a Value> {
        self.field("result")
    }

    pub fn name(&self) -> Option<&'a str> {
        self.str("name")
    }

    pub fn uri(&self) -> Option<&'a str> {
        self.str("uri")
    }

    pub fn uri_template(&self) -> Option<&'a str> {
        self.str("uriTemplate")
    }

    pub fn description(&self) -> Option<&'a str> {
        self.str("description")
    }

    pub fn instructions(&self) -> Option<&'a str> {
        self.str("instructions")
    }

    /// A tool definition's `inputSchema`, whatever its type.
    pub fn input_schema(&self) -> Option<&'a Value> {
        self.field("inputSchema")
    }

    /// A tool definition's `annotations`, whatever their type.
    pub fn annotations(&self) -> Option<&'a Value> {
        self.field("annotations")
    }
}

/// A `prompts/get` result's message: a role and one content block (or, from some servers,
/// a list of them).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct PromptMessage {
    #[serde(default, deserialize_with = "lenient::opt")]
    pub role: Option<String>,
    #[serde(default, deserialize_with = "lenient::any")]
    pub content: Option<Value>,
}

impl PromptMessage {
    /// The message's blocks, one or several.
    pub fn blocks(&self) -> Vec<Content> {
        match &self.content {
            Some(Value::Array(blocks)) => blocks.iter().map(Content::read).collect(),
            Some(block) => vec![Content::read(block)],
            None => Vec::new(),
        }
    }
}

/// The parts of a `prompts/get` or `resources/read` result ferry renders.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ReadResult {
    #[serde(default, deserialize_with = "lenient::opt")]
    pub messages: Option<Vec<Value>>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub contents: Option<Vec<Value>>,
}

impl ReadResult {
    pub fn read(value: &Value) -> ReadResult {
        lenient::view(value)
    }

    /// `prompts/get`'s messages.
    pub fn messages(&self) -> Vec<PromptMessage> {
        self.messages
            .iter()
            .flatten()
            .map(|m| lenient::view(m))
            .collect()
    }

    /// `resources/read`'s contents.
    pub fn contents(&self) -> Vec<ResourceContents> {
        self.contents
            .iter()
            .flatten()
            .map(ResourceContents::read)
            .collect()
    }
}

/// `notifications/progress` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    #[serde(
        rename = "progressToken",
        default,
        deserialize_with = "lenient::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub token: Option<Value>,
    #[serde(default, deserialize_with = "lenient::any")]
    pub progress: Option<Value>,
    #[serde(
        default,
        deserialize_with = "lenient::any",
        skip_serializing_if = "Option::is_none"
    )]
    pub total: Option<Value>,
    #[serde(
        default,
        deserialize_with = "lenient::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub message: Option<String>,
}

impl Progress {
    pub fn read(params: &Value) -> Progress {
        lenient::view(params)
    }
}

/// A task description (`Task`, either era), with what a stateless `tasks/get` carries beside
/// the status.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct TaskView {
    #[serde(rename = "taskId", default, deserialize_with = "lenient::opt")]
    pub task_id: Option<String>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub status: Option<String>,
    #[serde(rename = "statusMessage", default, deserialize_with = "lenient::opt")]
    pub status_message: Option<String>,
    #[serde(rename = "pollIntervalMs", default, deserialize_with = "lenient::any")]
    pub poll_interval_ms: Option<Value>,
    /// 2025-11-25's name for `pollIntervalMs`.
    #[serde(rename = "pollInterval", default, deserialize_with = "lenient::any")]
    pub poll_interval: Option<Value>,
    #[serde(rename = "ttlMs", default, deserialize_with = "lenient::any")]
    pub ttl_ms: Option<Value>,
    /// 2025-11-25's name for `ttlMs`.
    #[serde(default, deserialize_with = "lenient::any")]
    pub ttl: Option<Value>,
    #[serde(default, deserialize_with = "lenient::present")]
    pub result: Option<Value>,
    #[serde(default, deserialize_with = "lenient::present")]
    pub error: Option<Value>,
    #[serde(rename = "inputRequests", default, deserialize_with = "lenient::opt")]
    pub input_requests: Option<Map<String, Value>>,
}

impl TaskView {
    pub fn read(body: &Value) -> TaskView {
        lenient::view(body)
    }

    /// The poll interval the server suggests, in ms, under either era's name.
    pub fn poll_ms(&self) -> Option<u64> {
        self.poll_interval_ms
            .as_ref()
            .or(self.poll_interval.as_ref())
            .and_then(Value::as_u64)
    }

    /// How long the server keeps the task, in ms, under either era's name.
    pub fn ttl_ms(&self) -> Option<u64> {
        self.ttl_ms
            .as_ref()
            .or(self.ttl.as_ref())
            .and_then(Value::as_u64)
    }
}

/// What a `tools/call` answer says about tasks: `resultType` (2026-07-28), the task of a
/// 2025-11-25 `CreateTaskResult`, and whether it carries `content`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ResultKind {
    #[serde(rename = "resultType", default, deserialize_with = "lenient::opt")]
    pub result_type: Option<String>,
    #[serde(default, deserialize_with = "lenient::any")]
    pub task: Option<Value>,
    #[serde(default, deserialize_with = "lenient::any")]
    pub content: Option<Value>,
    #[serde(rename = "inputRequests", default, deserialize_with = "lenient::opt")]
    pub input_requests: Option<Map<String, Value>>,
    #[serde(rename = "requestState", default, deserialize_with = "lenient::any")]
    pub request_state: Option<Value>,
}

impl ResultKind {
    pub fn read(result: &Value) -> ResultKind {
        lenient::view(result)
    }
}

/// One page of a list result.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ListPage {
    #[serde(rename = "nextCursor", default)]
    pub next_cursor: Option<Value>,
    #[serde(rename = "ttlMs", default, deserialize_with = "lenient::opt")]
    pub ttl_ms: Option<u64>,
}

impl ListPage {
    pub fn read(page: &Value) -> ListPage {
        lenient::view(page)
    }
}

/// `elicitation/create` params: a form (`requestedSchema`) or a URL to open.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Elicitation {
    #[serde(default, deserialize_with = "lenient::opt")]
    pub message: Option<String>,
    #[serde(rename = "requestedSchema", default)]
    pub requested_schema: Option<Value>,
    #[serde(default, deserialize_with = "lenient::any")]
    pub url: Option<Value>,
}

impl Elicitation {
    pub fn read(params: &Value) -> Elicitation {
        lenient::view(params)
    }

    /// The URL of a URL-mode request.
    pub fn url(&self) -> Option<&str> {
        self.url.as_ref().and_then(Value::as_str)
    }
}

/// `sampling/createMessage` params, the parts ferry reads.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Sampling {
    #[serde(default, deserialize_with = "lenient::opt")]
    pub messages: Option<Vec<Value>>,
    #[serde(rename = "systemPrompt", default, deserialize_with = "lenient::opt")]
    pub system_prompt: Option<String>,
    #[serde(rename = "maxTokens", default, deserialize_with = "lenient::opt")]
    pub max_tokens: Option<u64>,
}

impl Sampling {
    pub fn read(params: &Value) -> Sampling {
        lenient::view(params)
    }
}

/// A JSON-RPC error object as it is read: every field lenient.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ErrorObject {
    #[serde(default, deserialize_with = "lenient::opt")]
    pub code: Option<i64>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub message: Option<String>,
    #[serde(default, deserialize_with = "lenient::any")]
    pub data: Option<Value>,
}

impl ErrorObject {
    pub fn read(error: &Value) -> ErrorObject {
        lenient::view(error)
    }
}

/// An entry of `resources/list`, `resources/templates/list` or `prompts/list`: the fields ferry
/// shows.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ListEntry {
    #[serde(default, deserialize_with = "lenient::opt")]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub uri: Option<String>,
    #[serde(rename = "uriTemplate", default, deserialize_with = "lenient::opt")]
    pub uri_template: Option<String>,
    #[serde(rename = "mimeType", default, deserialize_with = "lenient::opt")]
    pub mime_type: Option<String>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub description: Option<String>,
    /// A prompt's arguments (each read with [`PromptArgument::read`]).
    #[serde(default, deserialize_with = "lenient::opt")]
    pub arguments: Option<Vec<Value>>,
}

impl ListEntry {
    pub fn read(entry: &Value) -> ListEntry {
        lenient::view(entry)
    }

    /// A prompt's arguments.
    pub fn arguments(&self) -> Option<Vec<PromptArgument>> {
        self.arguments
            .as_ref()
            .map(|args| args.iter().map(PromptArgument::read).collect())
    }
}

/// One argument of a prompt.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct PromptArgument {
    #[serde(default, deserialize_with = "lenient::opt")]
    pub name: Option<String>,
    /// As sent (whatever its type), to pass on.
    #[serde(default, deserialize_with = "lenient::any")]
    pub description: Option<Value>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub required: Option<bool>,
}

impl PromptArgument {
    pub fn read(arg: &Value) -> PromptArgument {
        lenient::view(arg)
    }

    pub fn is_required(&self) -> bool {
        self.required == Some(true)
    }
}

/// The versions a server names: an `initialize` result's `protocolVersion`, a
/// `server/discover` result's `supportedVersions`, or the `supported` list in the `data` of a
/// refusal for an unsupported version.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Versions {
    #[serde(rename = "protocolVersion", default, deserialize_with = "lenient::opt")]
    pub protocol_version: Option<String>,
    #[serde(
        rename = "supportedVersions",
        default,
        deserialize_with = "lenient::opt"
    )]
    pub supported_versions: Option<Vec<Value>>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pub supported: Option<Vec<Value>>,
}

impl Versions {
    pub fn read(value: &Value) -> Versions {
        lenient::view(value)
    }

    /// A refusal's `data`, when it has one.
    pub fn of_refusal(data: Option<&Value>) -> Versions {
        data.map(Versions::read).unwrap_or_default()
    }

    /// The versions a refusal lists as supported, those that are strings.
    pub fn supported(&self) -> Option<Vec<&str>> {
        self.supported
            .as_ref()
            .map(|v| v.iter().filter_map(Value::as_str).collect())
    }

    /// Whether a discover result offers `version`.
    pub fn offers(&self, version: &str) -> bool {
        self.supported_versions
            .as_ref()
            .is_some_and(|v| v.iter().any(|v| v.as_str() == Some(version)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn results_write_the_bytes_ferry_always_sent() {
        let mut result = CallToolResult::of(vec![Content::text("x")]);
        result.structured_content = Some(json!({"a": 1}));
        assert_eq!(
            result.to_value().to_string(),
            json!({"content": [{"type": "text", "text": "x"}], "structuredContent": {"a": 1}})
                .to_string()
        );
        assert_eq!(
            CallToolResult::error("no").to_value().to_string(),
            json!({"content": [{"type": "text", "text": "no"}], "isError": true}).to_string()
        );
    }

    #[test]
    fn odd_results_read_leniently() {
        let odd = CallToolResult::read(
            &json!({"content": "x", "isError": "yes", "structuredContent": null, "n": 1}),
        );
        assert!(odd.content.is_empty());
        assert!(!odd.failed());
        assert_eq!(odd.structured_content, None);
        assert_eq!(odd.extra["n"], json!(1));
        assert_eq!(CallToolResult::read(&json!([1])), CallToolResult::default());
        let task = TaskView::read(&json!({"taskId": 5, "status": "working"}));
        assert_eq!(task.task_id, None);
        assert_eq!(task.status.as_deref(), Some("working"));
    }
}
