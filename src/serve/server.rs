//! The server side of MCP, whatever the transport: both protocol eras on one endpoint,
//! decided per request as the 2026-07-28 revision says. A request carrying the stateless
//! `_meta` (or `server/discover`) is answered statelessly after the validation ladder (envelope,
//! headers, version); `initialize` opens a handshake-era session. Unknown methods are -32601.
//! Calls run at most `concurrency` at once; the rest wait.

use super::provider::{CallContext, Listed, Notifier, Provider, LOG_LEVELS};
use super::slots::Slots;
use crate::protocol::messages::CallToolResult;
use crate::protocol::params::Params;
use crate::protocol::tools::Tool;
use crate::protocol::{
    self, Era, RpcError, HANDSHAKE_VERSION, HANDSHAKE_VERSIONS, META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION, STATELESS_VERSION,
};
use serde_json::{json, Map, Value};
use std::sync::{Arc, Mutex};

/// How long lists and discovery may be cached by clients (the served set is fixed while
/// serving); reads are never cached (a command's output may change).
const LIST_TTL_MS: u64 = 300_000;

/// How often a subscribed file is looked at for changes.
const WATCH_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

/// A handshake-era session: one stdio process, or one HTTP `Mcp-Session-Id`.
#[derive(Default)]
pub struct Session {
    /// The version agreed by `initialize`; `None` until then.
    pub version: Option<String>,
    /// The level `logging/setLevel` asked for.
    pub log_level: Option<usize>,
    /// Where messages outside any request go (stdout, or the HTTP GET stream).
    pub outside: Option<Notifier>,
    /// Resource subscriptions: a watcher per URI.
    pub watching: std::collections::HashMap<String, tokio::task::AbortHandle>,
    /// What the client declared it can do at `initialize` (elicitation, sampling, roots).
    pub client_capabilities: Value,
    /// Requests sent to the client (a command's questions), waiting for its answers.
    pub outgoing: Arc<super::ask::Outgoing>,
}

impl Drop for Session {
    fn drop(&mut self) {
        for (_, watcher) in self.watching.drain() {
            watcher.abort();
        }
    }
}

/// A file's identity for change detection: its modification time and length.
fn stamp(path: &std::path::Path) -> Option<(std::time::SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// The HTTP headers the stateless era checks against the body (none over stdio).
#[derive(Debug, Default, Clone)]
pub struct Headers {
    pub protocol_version: Option<String>,
    pub method: Option<String>,
    pub name: Option<String>,
    /// Every `Mcp-Param-NAME` header: NAME lower-cased, and the value (`None` when it is not
    /// visible ASCII).
    pub params: Vec<(String, Option<String>)>,
}

/// Why a `tools/call`'s `Mcp-Param-*` headers do not agree with its body, for a tool whose
/// schema declares `x-mcp-header` parameters: a value in the body needs its header, a header
/// needs its value, and a header (after Base64 decoding) must equal its value (numbers
/// compared as numbers). Headers the tool does not declare are ignored, as any unknown
/// header is.
fn param_header_problem(
    schema: &Value,
    arguments: &Value,
    sent: &[(String, Option<String>)],
) -> Option<String> {
    let expected = crate::protocol::tools::param_headers(schema, arguments);
    for declared in crate::protocol::tools::header_names(schema) {
        let name = format!("Mcp-Param-{declared}");
        let wanted = expected
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(&name))
            .map(|(_, v)| v);
        let got = sent
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(&declared))
            .map(|(_, v)| v);
        match (wanted, got) {
            (None, None) => {}
            (Some(_), None) => {
                return Some(format!(
                    "the body has a value for {declared:?} but there is no {name} header"
                ))
            }
            (None, Some(_)) => {
                return Some(format!("{name} is sent but the body has no value for it"))
            }
            (Some(_), Some(None)) => {
                return Some(format!(
                    "{name} holds characters a header may not; send it as =?base64?...?="
                ))
            }
            (Some(body), Some(Some(raw))) => {
                let Some(header) = decode_header(raw) else {
                    return Some(format!("{name} is not valid =?base64?...?= text"));
                };
                let numeric = || matches!((header.parse::<f64>(), body.parse::<f64>()), (Ok(a), Ok(b)) if a == b);
                if header != *body && !numeric() {
                    return Some(format!("{name} does not match the body's value"));
                }
            }
        }
    }
    None
}

/// A response and the HTTP status it goes with.
#[derive(Debug)]
pub struct Reply {
    pub message: Value,
    pub status: u16,
}

/// The HTTP status for a JSON-RPC error code (2026-07-28: -32601 is 404, request errors 400).
pub fn status_for(code: i64) -> u16 {
    match code {
        protocol::METHOD_NOT_FOUND => 404,
        protocol::PARSE_ERROR
        | protocol::INVALID_REQUEST
        | protocol::INVALID_PARAMS
        | protocol::HEADER_MISMATCH
        | protocol::MISSING_CAPABILITY
        | protocol::UNSUPPORTED_PROTOCOL_VERSION => 400,
        _ => 200,
    }
}

/// Whether a request is of the stateless era: its `_meta` names a protocol version (the key
/// alone is the signal; a half-built envelope is then refused as such).
pub fn is_modern(method: &str, params: &Value) -> bool {
    method == "server/discover"
        || Params::new(params)
            .meta()
            .is_some_and(|m| m.has(META_PROTOCOL_VERSION))
}

/// Decodes a header value sent in the `=?base64?...?=` form.
fn decode_header(value: &str) -> Option<String> {
    use base64::Engine;
    match value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        Some(encoded) => base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok()),
        None => Some(value.to_string()),
    }
}

fn error(code: i64, message: impl Into<String>, data: Option<Value>) -> RpcError {
    RpcError {
        code,
        message: message.into(),
        data,
    }
}

/// The `name` and `arguments` of a `tools/call` or `prompts/get`; absent arguments are none.
fn name_and_arguments<'a>(
    params: &'a Value,
    method: &str,
) -> std::result::Result<(&'a str, Map<String, Value>), RpcError> {
    let params = Params::new(params);
    let name = params.name().ok_or_else(|| {
        error(
            protocol::INVALID_PARAMS,
            format!("{method} needs a \"name\""),
            None,
        )
    })?;
    let arguments = match params.arguments() {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(_) => {
            return Err(error(
                protocol::INVALID_PARAMS,
                "\"arguments\" must be an object",
                None,
            ))
        }
    };
    Ok((name, arguments))
}

/// The server: a provider, the limit on calls running at once, and the calls of the
/// 2026-07-28 era waiting for their client's answers.
pub struct Server {
    provider: Arc<dyn Provider>,
    slots: Arc<Slots>,
    concurrency: usize,
    rounds: super::rounds::Rounds,
    tasks: Arc<super::tasks::Tasks>,
}

impl Server {
    pub fn new(provider: Arc<dyn Provider>, concurrency: usize) -> Server {
        Server {
            provider,
            slots: Arc::new(Slots::new(concurrency, concurrency)),
            concurrency,
            rounds: super::rounds::Rounds::default(),
            tasks: Arc::default(),
        }
    }

    /// The server as one instance among several behind a load balancer: its task ids start
    /// with `instance`, and its request states are signed with `state_key` (shared among the
    /// instances, so each accepts the others'), or with a key of its own.
    pub fn instance(mut self, instance: &str, state_key: Option<&[u8]>) -> Server {
        self.rounds = match state_key {
            Some(key) => super::rounds::Rounds::with_key(key, instance),
            None => super::rounds::Rounds::default().named(instance),
        };
        self.tasks = Arc::new(super::tasks::Tasks::named(instance));
        self
    }

    /// The server as one of many clients' (HTTP): each client may hold half the slots at
    /// once, so no client can take them all.
    pub fn shared(mut self) -> Server {
        self.slots = Arc::new(Slots::new(self.concurrency, Slots::half(self.concurrency)));
        self
    }

    /// How many tasks are still running.
    pub fn tasks_running(&self) -> usize {
        self.tasks.running()
    }

    /// The provider served.
    pub fn provider(&self) -> &Arc<dyn Provider> {
        &self.provider
    }

    /// Answers one request. `session` is the handshake-era state of the connection (stdio)
    /// or HTTP session, if any; `headers` are the HTTP headers (none over stdio); `client`
    /// names who asks (a session, a connection), for its share of slots, rounds and tasks.
    #[allow(clippy::too_many_arguments)]
    pub async fn answer(
        &self,
        client: &str,
        id: Value,
        method: &str,
        params: Value,
        session: Option<&Mutex<Session>>,
        headers: Option<&Headers>,
        notify: Notifier,
    ) -> Reply {
        let modern = is_modern(method, &params);
        let outcome = if modern {
            self.answer_modern(client, method, params, headers, notify)
                .await
        } else {
            self.answer_legacy(client, method, params, session, notify)
                .await
        };
        match outcome {
            Ok(result) => Reply {
                message: protocol::response(id, result),
                status: 200,
            },
            Err(e) => {
                let status = if modern { status_for(e.code) } else { 200 };
                let mut message = protocol::error_response(id, e.code, &e.message);
                if let Some(data) = e.data {
                    message["error"]["data"] = data;
                }
                Reply { message, status }
            }
        }
    }

    /// The 2026-07-28 validation ladder, then the method.
    async fn answer_modern(
        &self,
        client: &str,
        method: &str,
        params: Value,
        headers: Option<&Headers>,
        notify: Notifier,
    ) -> Result<Value, RpcError> {
        let view = Params::new(&params);
        let meta = view.meta();
        let missing: Vec<&str> = [META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES]
            .into_iter()
            .filter(|k| !meta.is_some_and(|m| m.has(k)))
            .collect();
        if !missing.is_empty() {
            return Err(error(
                protocol::INVALID_PARAMS,
                format!(
                    "params._meta is missing the required key(s): {}",
                    missing.join(", ")
                ),
                None,
            ));
        }
        let version = meta.and_then(|m| m.protocol_version());
        if let Some(headers) = headers {
            let body_version = version.and_then(Value::as_str).unwrap_or("");
            if headers.protocol_version.as_deref() != Some(body_version) {
                return Err(error(
                    protocol::HEADER_MISMATCH,
                    format!(
                        "Header mismatch: MCP-Protocol-Version header {:?} does not match the body's {body_version:?}",
                        headers.protocol_version.as_deref().unwrap_or("")
                    ),
                    None,
                ));
            }
            if headers.method.as_deref() != Some(method) {
                return Err(error(
                    protocol::HEADER_MISMATCH,
                    format!("Header mismatch: Mcp-Method header does not match the body's method {method:?}"),
                    None,
                ));
            }
            let named = match method {
                "tools/call" | "prompts/get" => view.name_field(),
                "resources/read" => view.uri_field(),
                "tasks/get" | "tasks/update" | "tasks/cancel" => view.task_id_field(),
                _ => None,
            };
            if let Some(named) = named.and_then(Value::as_str) {
                let header = headers.name.as_deref().and_then(decode_header);
                if header.as_deref() != Some(named) {
                    return Err(error(
                        protocol::HEADER_MISMATCH,
                        format!(
                            "Header mismatch: Mcp-Name header does not match the body's {named:?}"
                        ),
                        None,
                    ));
                }
            }
            if method == "tools/call" {
                let name = view.name().unwrap_or("");
                if let Some(schema) = self.provider.input_schema(name) {
                    let arguments = view.arguments().unwrap_or(&Value::Null);
                    if let Some(problem) = param_header_problem(&schema, arguments, &headers.params)
                    {
                        return Err(error(
                            protocol::HEADER_MISMATCH,
                            format!("Header mismatch: {problem}"),
                            None,
                        ));
                    }
                }
            }
        }
        let Some(version) = version.and_then(Value::as_str) else {
            return Err(error(
                protocol::INVALID_PARAMS,
                "the protocol version must be a string",
                None,
            ));
        };
        if version != STATELESS_VERSION {
            return Err(error(
                protocol::UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
                Some(json!({"supported": [STATELESS_VERSION], "requested": version})),
            ));
        }
        let log_level = meta.and_then(|m| m.log_level());
        let log_level = match log_level {
            None => None,
            Some(level) => match LOG_LEVELS.iter().position(|l| *l == level) {
                Some(rank) => Some(rank),
                None => {
                    return Err(error(
                        protocol::INVALID_PARAMS,
                        format!("unknown log level {level:?}"),
                        None,
                    ))
                }
            },
        };
        let capabilities = meta
            .and_then(|m| m.client_capabilities())
            .cloned()
            .unwrap_or(Value::Null);
        let version = meta
            .and_then(|m| m.protocol_version())
            .and_then(Value::as_str)
            .unwrap_or(STATELESS_VERSION);
        let ctx = CallContext {
            notify: notify.clone(),
            progress_token: meta.and_then(|m| m.progress_token()).cloned(),
            log_level,
            era: Era::Stateless(version.to_string()),
            asker: Arc::new(super::ask::Nobody),
            client_capabilities: capabilities.clone(),
            slots: Some((self.slots.clone(), Arc::from(client))),
        };
        let description = self.provider.description();
        let mut result = match method {
            "server/discover" => {
                let mut result = description.discover_result();
                result["supportedVersions"] = json!([STATELESS_VERSION]);
                result["ttlMs"] = json!(LIST_TTL_MS);
                result["cacheScope"] = json!("public");
                return Ok(result);
            }
            // What may ask the client mid-way runs in rounds: it may answer input_required
            // and resume on the client's retry.
            "tasks/get" | "tasks/update" | "tasks/cancel" => {
                if !super::tasks::client_has_tasks(&capabilities) {
                    return Err(super::tasks::missing_extension(method));
                }
                match method {
                    "tasks/get" => self.tasks.get(&params)?,
                    "tasks/update" => self.tasks.update(&params)?,
                    _ => self.tasks.cancel(&params)?,
                }
            }
            "tools/call" | "prompts/get" | "resources/read" => {
                // A tool that runs as a task: refused to a client without the extension when
                // it must be one; handed to the tasks when it outlives its request.
                let mut tasks = None;
                if method == "tools/call" {
                    let name = view.name().unwrap_or("");
                    let support = self.provider.task_support(name);
                    let declared = super::tasks::client_has_tasks(&capabilities);
                    if support == crate::manifest::TaskSupport::Required && !declared {
                        return Err(super::tasks::missing_extension(&format!("tool {name}")));
                    }
                    if support != crate::manifest::TaskSupport::Never && declared {
                        tasks = Some(self.tasks.clone());
                    }
                }
                let provider = self.provider.clone();
                let (owned_method, owned_params) = (method.to_string(), params.clone());
                let start = move |asker, notify| {
                    let ctx = CallContext {
                        asker,
                        notify,
                        ..ctx
                    };
                    tokio::spawn(async move {
                        dispatch(&provider, &owned_method, &owned_params, ctx).await
                    })
                };
                self.rounds
                    .run(client, method, &params, capabilities, notify, tasks, start)
                    .await?
            }
            _ => dispatch(&self.provider, method, &params, ctx).await?,
        };
        if let Value::Object(map) = &mut result {
            if !map.contains_key("resultType") {
                map.insert("resultType".into(), json!("complete"));
            }
            let meta = map.entry("_meta").or_insert_with(|| json!({}));
            if let Value::Object(meta) = meta {
                meta.insert(
                    protocol::describe::META_SERVER_INFO.into(),
                    description.server_info.clone(),
                );
            }
            let cacheable = matches!(
                method,
                "tools/list"
                    | "prompts/list"
                    | "resources/list"
                    | "resources/templates/list"
                    | "resources/read"
            );
            if cacheable {
                let ttl = if method == "resources/read" {
                    0
                } else {
                    LIST_TTL_MS
                };
                map.insert("ttlMs".into(), json!(ttl));
                map.insert("cacheScope".into(), json!("public"));
            }
        }
        Ok(result)
    }

    /// The handshake era: `initialize`, then requests in the session.
    async fn answer_legacy(
        &self,
        client: &str,
        method: &str,
        params: Value,
        session: Option<&Mutex<Session>>,
        notify: Notifier,
    ) -> Result<Value, RpcError> {
        let lock = |s: &Mutex<Session>| s.lock().unwrap_or_else(|e| e.into_inner()).version.clone();
        match method {
            "initialize" => {
                let asked = Params::new(&params)
                    .protocol_version()
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let version = if HANDSHAKE_VERSIONS.contains(&asked) {
                    asked
                } else {
                    HANDSHAKE_VERSION
                };
                if let Some(session) = session {
                    let mut state = session.lock().unwrap_or_else(|e| e.into_inner());
                    state.version = Some(version.to_string());
                    state.client_capabilities = Params::new(&params)
                        .capabilities()
                        .cloned()
                        .unwrap_or(Value::Null);
                }
                let mut description = self.provider.description();
                // File resources report changes to subscribers in this era.
                if description.has_capability("resources") {
                    description.capabilities["resources"] = json!({"subscribe": true});
                }
                return Ok(description.initialize_result(version));
            }
            "ping" => return Ok(json!({})),
            _ => {}
        }
        let version = session.and_then(lock);
        if version.is_none() {
            return Err(error(
                protocol::NOT_INITIALIZED,
                format!("{method} before initialize: send initialize first, or use the 2026-07-28 per-request _meta"),
                None,
            ));
        }
        if method == "logging/setLevel" {
            let level = Params::new(&params).level().unwrap_or("");
            let rank = LOG_LEVELS.iter().position(|l| *l == level).ok_or_else(|| {
                error(
                    protocol::INVALID_PARAMS,
                    format!("unknown log level {level:?}"),
                    None,
                )
            })?;
            if let Some(session) = session {
                session.lock().unwrap_or_else(|e| e.into_inner()).log_level = Some(rank);
            }
            return Ok(json!({}));
        }
        if method == "resources/subscribe" || method == "resources/unsubscribe" {
            let uri = Params::new(&params).uri().ok_or_else(|| {
                error(
                    protocol::INVALID_PARAMS,
                    format!("{method} needs a \"uri\""),
                    None,
                )
            })?;
            let Some(session) = session else {
                return Err(error(
                    protocol::INVALID_REQUEST,
                    "subscriptions need a session",
                    None,
                ));
            };
            let mut state = session.lock().unwrap_or_else(|e| e.into_inner());
            if method == "resources/unsubscribe" {
                if let Some(watcher) = state.watching.remove(uri) {
                    watcher.abort();
                }
                return Ok(json!({}));
            }
            let Some(path) = self.provider.watched_file(uri) else {
                return Err(error(
                    protocol::INVALID_PARAMS,
                    format!("{uri} cannot be watched: only file resources report changes"),
                    Some(json!({"uri": uri})),
                ));
            };
            let outside = state.outside.clone();
            let owned = uri.to_string();
            let watcher = tokio::spawn(async move {
                let mut last = stamp(&path);
                loop {
                    tokio::time::sleep(WATCH_EVERY).await;
                    let now = stamp(&path);
                    if now != last {
                        last = now;
                        if let Some(outside) = &outside {
                            outside(protocol::notification(
                                "notifications/resources/updated",
                                Some(json!({"uri": owned})),
                            ));
                        }
                    }
                }
            });
            if let Some(old) = state
                .watching
                .insert(uri.to_string(), watcher.abort_handle())
            {
                old.abort();
            }
            return Ok(json!({}));
        }
        let (log_level, asker, capabilities, version): (_, Arc<dyn super::ask::Asker>, _, _) =
            match session {
                Some(session) => {
                    let state = session.lock().unwrap_or_else(|e| e.into_inner());
                    let asker = super::ask::SessionAsker {
                        outgoing: state.outgoing.clone(),
                        send: notify.clone(),
                        capabilities: state.client_capabilities.clone(),
                    };
                    (
                        state.log_level,
                        Arc::new(asker),
                        state.client_capabilities.clone(),
                        state.version.clone(),
                    )
                }
                None => (None, Arc::new(super::ask::Nobody), Value::Null, None),
            };
        let ctx = CallContext {
            notify,
            progress_token: params.pointer("/_meta/progressToken").cloned(),
            log_level,
            era: Era::Handshake(version.unwrap_or_else(|| HANDSHAKE_VERSION.to_string())),
            asker,
            client_capabilities: capabilities,
            slots: Some((self.slots.clone(), Arc::from(client))),
        };
        dispatch(&self.provider, method, &params, ctx).await
    }
}

/// The methods both eras share. Providers take a slot (`CallContext::slot`) when their work
/// is about to run.
async fn dispatch(
    provider: &Arc<dyn Provider>,
    method: &str,
    params: &Value,
    ctx: CallContext,
) -> Result<Value, RpcError> {
    let description = provider.description();
    let capable = |name: &str| description.has_capability(name);
    let no_method = || {
        error(
            protocol::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
            Some(json!(method)),
        )
    };
    match method {
        "tools/list" => Ok(json!({"tools": provider.tools()})),
        "tools/call" => {
            let (name, arguments) = name_and_arguments(params, method)?;
            call_tool(provider, name, arguments, params, ctx).await
        }
        "resources/list" if capable("resources") => {
            Ok(json!({"resources": provider.list(Listed::Resources).await}))
        }
        "resources/templates/list" if capable("resources") => {
            Ok(json!({"resourceTemplates": provider.list(Listed::ResourceTemplates).await}))
        }
        "resources/read" if capable("resources") => {
            let uri = Params::new(params).uri().ok_or_else(|| {
                error(
                    protocol::INVALID_PARAMS,
                    "resources/read needs a \"uri\"",
                    None,
                )
            })?;
            let modern = ctx.era.is_stateless();
            provider.read(uri, ctx).await.map_err(|mut e| {
                // 2026-07-28 names an unknown resource invalid params; earlier revisions -32002.
                if modern && e.code == protocol::RESOURCE_NOT_FOUND {
                    e.code = protocol::INVALID_PARAMS;
                }
                e
            })
        }
        "prompts/list" if capable("prompts") => {
            Ok(json!({"prompts": provider.list(Listed::Prompts).await}))
        }
        "prompts/get" if capable("prompts") => {
            let (name, arguments) = name_and_arguments(params, method)?;
            provider.get_prompt(name, arguments, ctx).await
        }
        "completion/complete" if capable("completions") => provider.complete(params),
        _ => Err(no_method()),
    }
}

/// A tool call, timed for the metrics and logged with the client's trace context.
async fn call_tool(
    provider: &Arc<dyn Provider>,
    name: &str,
    arguments: serde_json::Map<String, Value>,
    params: &Value,
    ctx: CallContext,
) -> Result<Value, RpcError> {
    use tracing::Instrument;
    // Only tools served become labels and log fields: made-up names must not grow the
    // metrics or fill the log.
    let served = provider
        .tools()
        .iter()
        .any(|t| Tool::name_of(t) == Some(name));
    let tool = match served {
        true => name,
        false => super::metrics::UNKNOWN_TOOL,
    };
    let traceparent = super::metrics::traceparent(params.pointer("/_meta/traceparent"));
    let span = match traceparent {
        Some(traceparent) => tracing::info_span!("call", tool, traceparent),
        None => tracing::info_span!("call", tool),
    };
    let timer = super::metrics::CallTimer::start(tool);
    // The provider takes its slot when its work runs (`CallContext::slot`).
    let outcome = provider
        .call(name, arguments, ctx)
        .instrument(span.clone())
        .await;
    let label = match &outcome {
        Ok(result) if CallToolResult::says_failed(result) => super::metrics::Outcome::Error,
        Ok(_) => super::metrics::Outcome::Ok,
        Err(_) => super::metrics::Outcome::Rejected,
    };
    let seconds = timer.finish(label);
    span.in_scope(|| tracing::info!(outcome = label.label(), seconds, "tool call"));
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_era_is_told_by_the_request() {
        assert!(is_modern("server/discover", &json!({})));
        assert!(is_modern(
            "tools/list",
            &json!({"_meta": {META_PROTOCOL_VERSION: "2026-07-28"}})
        ));
        assert!(!is_modern(
            "tools/list",
            &json!({"_meta": {"progressToken": 1}})
        ));
        assert!(!is_modern(
            "initialize",
            &json!({"protocolVersion": "2025-11-25"})
        ));
        assert_eq!(decode_header("=?base64?YWRk?="), Some("add".into()));
        assert_eq!(decode_header("plain"), Some("plain".into()));
        assert_eq!(status_for(-32601), 404);
        assert_eq!(status_for(-32022), 400);
    }
}
