//! What serves tools, resources and prompts: a [`Provider`]. The three `ferry serve` has
//! are a manifest (`manifest_provider`), quick mode (a manifest made from `--cli`), and
//! configured MCP servers (the lazy proxy). The server side of the protocol (`server`) asks a
//! provider and never knows which it is.

use crate::protocol::messages::{CallToolResult, Progress};
use crate::protocol::BoxFuture;
use crate::protocol::{RpcError, ServerDescription};
use serde_json::{Map, Value};
use std::sync::Arc;

pub use crate::protocol::Notifier;

/// Logging levels, lowest first (RFC 5424, as MCP names them).
pub const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// Who asked, and how to answer along the way.
#[derive(Clone)]
pub struct CallContext {
    pub notify: Notifier,
    /// The client's progress token, if it wants progress.
    pub progress_token: Option<Value>,
    /// The lowest level of log messages the client asked for (none: send none).
    pub log_level: Option<usize>,
    /// The era the request came in: stateless (2026-07-28) or a handshake session's.
    pub era: crate::protocol::Era,
    /// Who answers what the call's command asks (`ferry ask`, a tool's `confirm`).
    pub asker: Arc<dyn super::ask::Asker>,
    /// What the client declared it can do (its `capabilities`).
    pub client_capabilities: Value,
    /// Where the call takes its slot before work runs, and who the client is (`None`: no
    /// limit, for internal calls).
    pub slots: Option<(Arc<super::slots::Slots>, Arc<str>)>,
}

impl CallContext {
    /// A context that sends nothing (for tests and internal calls).
    pub fn quiet() -> CallContext {
        CallContext {
            notify: Arc::new(|_| {}),
            progress_token: None,
            log_level: None,
            era: crate::protocol::Era::Handshake(crate::protocol::HANDSHAKE_VERSION.to_string()),
            asker: Arc::new(super::ask::Nobody),
            client_capabilities: Value::Null,
            slots: None,
        }
    }

    /// A slot to run in, once this client's share and the server have one free: taken only
    /// when work is about to run, never while the call waits for its client.
    pub async fn slot(&self) -> Result<Option<super::slots::Slot>, RpcError> {
        match &self.slots {
            Some((slots, client)) => slots.take(client).await.map(Some),
            None => Ok(None),
        }
    }

    /// Reports progress, if the client asked for it.
    pub fn progress(&self, done: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(token) = &self.progress_token {
            let params = Progress {
                token: Some(token.clone()),
                progress: Some(Value::from(done)),
                total: total.map(Value::from),
                message: message.map(str::to_string),
            };
            (self.notify)(crate::protocol::notification(
                "notifications/progress",
                serde_json::to_value(params).ok(),
            ));
        }
    }

    /// Sends a log message at `level`, if the client asked for messages that low.
    pub fn log(&self, level: &str, logger: &str, data: Value) {
        let rank = LOG_LEVELS.iter().position(|l| *l == level).unwrap_or(1);
        if self.log_level.is_some_and(|min| rank >= min) {
            let params = serde_json::json!({"level": level, "logger": logger, "data": data});
            (self.notify)(crate::protocol::notification(
                "notifications/message",
                Some(params),
            ));
        }
    }
}

/// What a `resources/list`, `resources/templates/list` or `prompts/list` asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Listed {
    Resources,
    ResourceTemplates,
    Prompts,
}

/// A source of tools, resources and prompts.
pub trait Provider: Send + Sync {
    /// serverInfo, capabilities and instructions.
    fn description(&self) -> ServerDescription;

    /// Work begun when serving starts, inside the async runtime (the proxy lists the servers
    /// it never listed); serving starts when it returns.
    fn start(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// The tools, as `tools/list` shows them, always in the same order.
    fn tools(&self) -> Vec<Value>;

    /// Calls a tool: a `CallToolResult` (`isError` for the tool's own failures, invalid
    /// arguments included), or a protocol error (an unknown tool).
    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: Map<String, Value>,
        ctx: CallContext,
    ) -> BoxFuture<'a, Result<Value, RpcError>>;

    /// A tool's `inputSchema`, if it has one by that name (for the checks a call's HTTP
    /// headers get).
    fn input_schema(&self, name: &str) -> Option<Value> {
        self.tools()
            .into_iter()
            .find(|t| crate::protocol::tools::Tool::name_of(t) == Some(name))
            .and_then(|mut t| t.get_mut("inputSchema").map(Value::take))
    }

    /// Whether a tool's calls may run as tasks.
    fn task_support(&self, name: &str) -> crate::manifest::TaskSupport {
        let _ = name;
        crate::manifest::TaskSupport::Never
    }

    /// Resources, templates or prompts as a `*/list` answers them; a provider whose lists
    /// are fixed gives them by [`Provider::resources`] and its kin.
    fn list(&self, what: Listed) -> BoxFuture<'_, Vec<Value>> {
        let listed = match what {
            Listed::Resources => self.resources(),
            Listed::ResourceTemplates => self.resource_templates(),
            Listed::Prompts => self.prompts(),
        };
        Box::pin(async move { listed })
    }

    fn resources(&self) -> Vec<Value> {
        Vec::new()
    }

    fn resource_templates(&self) -> Vec<Value> {
        Vec::new()
    }

    /// Reads a resource: a `ReadResourceResult`, or an error (`RESOURCE_NOT_FOUND` with
    /// `data.uri` for an unknown URI).
    fn read<'a>(
        &'a self,
        uri: &'a str,
        ctx: CallContext,
    ) -> BoxFuture<'a, Result<Value, RpcError>> {
        let _ = ctx;
        Box::pin(async move { Err(not_found(uri)) })
    }

    /// The file behind a resource, for subscriptions (changes are noticed by polling it).
    fn watched_file(&self, uri: &str) -> Option<std::path::PathBuf> {
        let _ = uri;
        None
    }

    fn prompts(&self) -> Vec<Value> {
        Vec::new()
    }

    fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        arguments: Map<String, Value>,
        ctx: CallContext,
    ) -> BoxFuture<'a, Result<Value, RpcError>> {
        let _ = (arguments, ctx);
        Box::pin(async move { Err(invalid(format!("unknown prompt {name:?}"))) })
    }

    /// `completion/complete`: values for a prompt's or a resource template's argument.
    fn complete(&self, params: &Value) -> Result<Value, RpcError> {
        let _ = params;
        Ok(serde_json::json!({"completion": {"values": [], "total": 0, "hasMore": false}}))
    }
}

/// An invalid-params error.
pub fn invalid(message: impl Into<String>) -> RpcError {
    RpcError {
        code: crate::protocol::INVALID_PARAMS,
        message: message.into(),
        data: None,
    }
}

/// The error for a resource that does not exist.
pub fn not_found(uri: &str) -> RpcError {
    RpcError {
        code: crate::protocol::RESOURCE_NOT_FOUND,
        message: format!("Resource not found: {uri}"),
        data: Some(serde_json::json!({"uri": uri})),
    }
}

/// A tool's result for its own failure: `isError` with one text block.
pub fn tool_error(text: impl Into<String>) -> Value {
    CallToolResult::error(text).to_value()
}

/// A slot kept for some work, and how many of its questions wait for the client.
pub type Held = Arc<std::sync::Mutex<(usize, Option<super::slots::Slot>)>>;

/// The asker of work that holds a slot (a command, a backend's call): while the work waits
/// for its client the slot is given back, and taken again once the answer is in.
pub struct Yielding {
    inner: Arc<dyn super::ask::Asker>,
    ctx: CallContext,
    held: Held,
}

impl Yielding {
    /// Takes the call's slot; returns what keeps it and the asker for the work.
    pub async fn hold(ctx: &CallContext) -> Result<(Held, Arc<dyn super::ask::Asker>), RpcError> {
        let held: Held = Arc::new(std::sync::Mutex::new((0, ctx.slot().await?)));
        let asker = Arc::new(Yielding {
            inner: ctx.asker.clone(),
            ctx: ctx.clone(),
            held: held.clone(),
        });
        Ok((held, asker))
    }
}

impl super::ask::Asker for Yielding {
    fn request(
        &self,
        request: super::ask::ClientRequest,
    ) -> crate::protocol::BoxFuture<'_, Result<serde_json::Value, super::ask::Unanswered>> {
        Box::pin(async move {
            let given_back = {
                let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
                held.0 += 1;
                held.1.take()
            };
            drop(given_back);
            let answer = self.inner.request(request).await;
            let last = {
                let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
                held.0 -= 1;
                held.0 == 0
            };
            if last {
                if let Ok(slot) = self.ctx.slot().await {
                    let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
                    if held.0 == 0 && held.1.is_none() {
                        held.1 = slot;
                    }
                }
            }
            answer
        })
    }

    fn watch(&self, asking: super::ask::Asking) {
        self.inner.watch(asking);
    }
}
