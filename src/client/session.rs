//! A session with one server, in either protocol era.
//!
//! The first time ferry meets a server it probes `server/discover`: a 2026-07-28 server
//! answers and every later request is one stateless round trip; anything else (an error, no
//! prompt answer, even a crash) falls back to the `initialize` handshake. The caller stores the
//! era with the cached tools so later sessions skip the probe.

use super::config::{ServerSpec, Target};
use crate::protocol::{
    self, Incoming, RpcError, HANDSHAKE_VERSION, HANDSHAKE_VERSIONS, STATELESS_VERSION,
};
use crate::transport::{http::HttpConnection, stdio::StdioChild, Event, Transport};
use crate::{Error, ErrorKind, Result};
use serde_json::{json, Map, Value};
use std::io::{BufRead, IsTerminal, Write};
use std::time::Duration;
use tokio::time::Instant;

/// How long the probe waits before also trying the handshake.
const PROBE_WAIT: Duration = Duration::from_secs(2);
/// Multi-round-trip requests give up after this many rounds.
const MAX_INPUT_ROUNDS: usize = 10;
/// JSON-RPC errors after which a request was surely not processed and the remembered era may be
/// wrong: not initialized, invalid request, method not found, header mismatch, missing
/// capability, unsupported protocol version.
const ERA_MISMATCH: [i64; 6] = [-32002, -32600, -32601, -32020, -32021, -32022];
/// Pagination gives up after this many pages (a server repeating cursors).
const MAX_PAGES: usize = 1000;

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
        let version = value.get("version")?.as_str()?.to_string();
        match value.get("era")?.as_str()? {
            "stateless" => Some(Era::Stateless(version)),
            "handshake" => Some(Era::Handshake(version)),
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
}

/// How to open a session.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// How long any one request may take.
    pub timeout: Duration,
    /// The era remembered from an earlier session, which skips the probe.
    pub known_era: Option<Era>,
}

/// An open session.
pub struct Session {
    transport: Transport,
    spec: ServerSpec,
    pub era: Era,
    pub server_info: Value,
    pub capabilities: Value,
    pub instructions: Option<String>,
    /// Set when the server said its tools changed during this session.
    pub tools_changed: bool,
    /// The stateless era was taken from the cache and no request has confirmed it yet.
    era_assumed: bool,
    next_id: i64,
    timeout: Duration,
    client_capabilities: Value,
}

/// Why waiting for a response ended without one.
enum WaitFailure {
    Closed(String),
    TimedOut,
}

fn connect(spec: &ServerSpec) -> Result<Transport> {
    match &spec.target {
        Target::Stdio { .. } => {
            let child = spec.child_spec()?;
            let log = crate::paths::log_dir().join(format!("{}.log", spec.name));
            Ok(Transport::Stdio(StdioChild::spawn(&child, &log)?))
        }
        Target::Http { .. } => {
            let (url, headers) = spec.http_target()?;
            Ok(Transport::Http(HttpConnection::new(&url, headers)?))
        }
    }
}

/// ferry answers elicitation only when a person is at the terminal to answer it.
fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

impl Session {
    /// Starts or connects to the server and agrees on a protocol era.
    pub async fn open(spec: &ServerSpec, options: SessionOptions) -> Result<Session> {
        let client_capabilities = if interactive() {
            json!({"elicitation": {"form": {}}})
        } else {
            json!({})
        };
        let mut session = Session {
            transport: connect(spec)?,
            spec: spec.clone(),
            era: Era::Handshake(HANDSHAKE_VERSION.into()),
            server_info: Value::Null,
            capabilities: Value::Null,
            instructions: None,
            tools_changed: false,
            era_assumed: false,
            next_id: 0,
            timeout: options.timeout,
            client_capabilities,
        };
        match options.known_era {
            Some(Era::Stateless(version)) => {
                session.adopt_stateless(version);
                session.era_assumed = true;
            }
            Some(Era::Handshake(_)) => {
                // A server replaced by a stateless-only one refuses `initialize`: find out anew.
                if session.try_handshake(None).await?.is_err() {
                    session.probe().await?;
                }
            }
            None => session.probe().await?,
        }
        Ok(session)
    }

    fn adopt_stateless(&mut self, version: String) {
        self.transport.set_protocol_version(&version);
        self.era = Era::Stateless(version);
    }

    fn take_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// `server/discover`; falls back to the handshake on anything but a usable answer.
    async fn probe(&mut self) -> Result<()> {
        let id = self.take_id();
        let params =
            protocol::with_stateless_meta(None, STATELESS_VERSION, &self.client_capabilities);
        let message = protocol::request(id, "server/discover", Some(params));
        self.transport.set_protocol_version(STATELESS_VERSION);
        let deadline = Instant::now() + PROBE_WAIT.min(self.timeout);
        if let Err(e) = self.send_by(&message, deadline, "server/discover").await {
            if e.kind == ErrorKind::Auth
                || e.kind == ErrorKind::Usage
                || matches!(self.transport, Transport::Stdio(_))
            {
                return Err(e);
            }
            // An HTTP server of the handshake era may reject the request outright, or sit on it.
            return self.handshake(None).await;
        }
        match self.wait_for(&[id], deadline).await {
            Ok((_, Ok(result))) => {
                if self.discovered(&result) {
                    return Ok(());
                }
                self.handshake(None).await
            }
            Ok((_, Err(error))) => {
                if error.code == -32022 {
                    let supported = error
                        .data
                        .as_ref()
                        .and_then(|d| d.get("supported"))
                        .cloned()
                        .unwrap_or(Value::Null);
                    let legacy = supported.as_array().is_some_and(|v| {
                        v.iter()
                            .any(|v| v.as_str().is_some_and(|v| HANDSHAKE_VERSIONS.contains(&v)))
                    });
                    if !legacy {
                        return Err(Error::server(format!(
                            "{} speaks only protocol versions {supported} , which ferry {} does not support",
                            self.spec.name,
                            env!("CARGO_PKG_VERSION")
                        ))
                        .with_hint("upgrade ferry"));
                    }
                }
                self.handshake(None).await
            }
            Err(WaitFailure::TimedOut) => self.handshake(Some(id)).await,
            Err(WaitFailure::Closed(_)) if matches!(self.spec.target, Target::Stdio { .. }) => {
                // Some old servers exit on a request before initialize: start again and shake hands.
                let old = std::mem::replace(&mut self.transport, connect(&self.spec)?);
                old.shutdown().await;
                self.handshake(None).await
            }
            Err(WaitFailure::Closed(reason)) => Err(self.closed_error(&reason).await),
        }
    }

    /// Adopts a `server/discover` result that offers our stateless version.
    fn discovered(&mut self, result: &Value) -> bool {
        let offers = result
            .get("supportedVersions")
            .and_then(Value::as_array)
            .is_some_and(|v| v.iter().any(|v| v.as_str() == Some(STATELESS_VERSION)));
        if !offers {
            return false;
        }
        self.capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
        self.instructions = result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_string);
        self.server_info = result
            .get("_meta")
            .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"))
            .or_else(|| result.get("serverInfo"))
            .cloned()
            .unwrap_or(Value::Null);
        self.adopt_stateless(STATELESS_VERSION.into());
        true
    }

    /// `initialize` + `notifications/initialized`. A probe still pending may win the race.
    async fn handshake(&mut self, pending_probe: Option<i64>) -> Result<()> {
        match self.try_handshake(pending_probe).await? {
            Ok(()) => Ok(()),
            Err(refusal) => Err(self.rpc_error("initialize", refusal)),
        }
    }

    /// The handshake, with the server's refusal of `initialize` kept apart from other failures.
    async fn try_handshake(&mut self, pending_probe: Option<i64>) -> Result<Result<(), RpcError>> {
        let id = self.take_id();
        let params = json!({
            "protocolVersion": HANDSHAKE_VERSION,
            "capabilities": self.client_capabilities,
            "clientInfo": protocol::client_info(),
        });
        self.transport.set_protocol_version(HANDSHAKE_VERSION);
        let deadline = Instant::now() + self.timeout;
        self.send_by(
            &protocol::request(id, "initialize", Some(params)),
            deadline,
            "initialize",
        )
        .await?;
        let ids: Vec<i64> = std::iter::once(id).chain(pending_probe).collect();
        loop {
            let (answered, outcome) = match self.wait_for(&ids, deadline).await {
                Ok(answer) => answer,
                Err(WaitFailure::TimedOut) => {
                    return Err(self.timeout_error("initialize"));
                }
                Err(WaitFailure::Closed(reason)) => return Err(self.closed_error(&reason).await),
            };
            if answered != id {
                if let Ok(result) = outcome {
                    if self.discovered(&result) {
                        return Ok(Ok(()));
                    }
                }
                continue;
            }
            let result = match outcome {
                Ok(result) => result,
                Err(refusal) => return Ok(Err(refusal)),
            };
            let version = result
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            if !HANDSHAKE_VERSIONS.contains(&version.as_str()) {
                return Err(Error::server(format!(
                    "{} answered with protocol version {version:?}, which ferry does not support",
                    self.spec.name
                ))
                .with_hint("upgrade ferry or the server"));
            }
            self.server_info = result.get("serverInfo").cloned().unwrap_or(Value::Null);
            self.capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
            self.instructions = result
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_string);
            self.transport.set_protocol_version(&version);
            self.era = Era::Handshake(version);
            self.send(&protocol::notification("notifications/initialized", None))
                .await?;
            // Sessions of this era may push messages outside any request (list_changed).
            self.transport.listen();
            return Ok(Ok(()));
        }
    }

    /// Sends a request and returns its result, answering whatever the server asks meanwhile and
    /// following `input_required` rounds of the stateless era.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let mut params = params;
        for _ in 0..MAX_INPUT_ROUNDS {
            let id = self.take_id();
            let wire_params = match &self.era {
                Era::Stateless(version) => protocol::with_stateless_meta(
                    Some(params.clone()),
                    version,
                    &self.client_capabilities,
                ),
                Era::Handshake(_) => params.clone(),
            };
            // The limit covers sending too: an HTTP server may hold the POST until it is done.
            let deadline = Instant::now() + self.timeout;
            self.send_by(
                &protocol::request(id, method, Some(wire_params)),
                deadline,
                method,
            )
            .await?;
            let result = match self.wait_for(&[id], deadline).await {
                Ok((_, Ok(result))) => {
                    self.era_assumed = false;
                    result
                }
                Ok((_, Err(error))) => {
                    // Errors that mean "not processed, wrong era" (the server was replaced by
                    // one of the handshake era): probe once and send again.
                    if self.era_assumed && ERA_MISMATCH.contains(&error.code) {
                        self.era_assumed = false;
                        self.probe().await?;
                        continue;
                    }
                    return Err(self.rpc_error(method, error));
                }
                Err(WaitFailure::TimedOut) => {
                    // Tell the server to stop working on it before the process goes away.
                    let note = json!({"requestId": id, "reason": "timeout"});
                    let _ = self
                        .send(&protocol::notification(
                            "notifications/cancelled",
                            Some(note),
                        ))
                        .await;
                    return Err(self.timeout_error(method));
                }
                Err(WaitFailure::Closed(reason)) => return Err(self.closed_error(&reason).await),
            };
            if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
                return Ok(result);
            }
            let responses = match result.get("inputRequests").and_then(Value::as_object) {
                Some(requests) => {
                    let mut responses = Map::new();
                    for (key, request) in requests {
                        let method = request
                            .get("method")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        let params = request.get("params").cloned().unwrap_or(Value::Null);
                        let answer = answer_server_request(method, &params)
                            .await
                            .unwrap_or_else(|e| json!({"error": e.message}));
                        responses.insert(key.clone(), answer);
                    }
                    Some(responses)
                }
                None => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    None
                }
            };
            if let Value::Object(map) = &mut params {
                match responses {
                    Some(responses) => {
                        map.insert("inputResponses".into(), Value::Object(responses))
                    }
                    None => map.remove("inputResponses"),
                };
                match result.get("requestState") {
                    Some(state) => map.insert("requestState".into(), state.clone()),
                    None => map.remove("requestState"),
                };
            }
        }
        Err(Error::server(format!(
            "{} kept asking for more input to {method}; gave up after {MAX_INPUT_ROUNDS} rounds",
            self.spec.name
        )))
    }

    /// Fetches every page of a list method (`tools/list`...), returning the items and `ttlMs`.
    pub async fn list_all(&mut self, method: &str, key: &str) -> Result<(Vec<Value>, Option<u64>)> {
        let mut items = Vec::new();
        let mut cursor: Option<Value> = None;
        let mut ttl = None;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let page = self.request(method, params).await?;
            if let Some(page_items) = page.get(key).and_then(Value::as_array) {
                items.extend(page_items.iter().cloned());
            } else if page.get(key).is_some() {
                return Err(Error::server(format!(
                    "{} sent a {method} result whose {key:?} is not a list",
                    self.spec.name
                )));
            }
            ttl = page.get("ttlMs").and_then(Value::as_u64).or(ttl);
            match page.get("nextCursor") {
                Some(next) if !next.is_null() && next.as_str() != Some("") => {
                    if !seen.insert(next.to_string()) {
                        break;
                    }
                    cursor = Some(next.clone());
                }
                _ => return Ok((items, ttl)),
            }
        }
        Ok((items, ttl))
    }

    /// Ends the session and stops the server.
    pub async fn close(self) {
        self.transport.shutdown().await;
    }

    /// Waits for the response to one of `ids`, serving server requests and notifications.
    async fn wait_for(
        &mut self,
        ids: &[i64],
        deadline: Instant,
    ) -> Result<(i64, Result<Value, RpcError>), WaitFailure> {
        loop {
            let event = match tokio::time::timeout_at(deadline, self.transport.recv()).await {
                Ok(event) => event,
                Err(_) => return Err(WaitFailure::TimedOut),
            };
            let message = match event {
                Event::Message(message) => message,
                Event::Closed(reason) => return Err(WaitFailure::Closed(reason)),
            };
            match protocol::classify(message) {
                Incoming::Response { id, outcome } => {
                    if let Some(ours) = ids.iter().find(|ours| protocol::id_matches(&id, **ours)) {
                        return Ok((*ours, outcome));
                    }
                    // An error the server could not tie to a request (`"id": null`, for a
                    // request it could not read) answers the one we are waiting for.
                    if let ([only], true, Err(_)) = (ids, id.is_null(), &outcome) {
                        return Ok((*only, outcome));
                    }
                }
                Incoming::Request { id, method, params } => {
                    let reply = match method.as_str() {
                        "ping" => protocol::response(id, json!({})),
                        _ => match answer_server_request(&method, &params).await {
                            Ok(result) => protocol::response(id, result),
                            Err(e) => protocol::error_response(id, e.code, &e.message),
                        },
                    };
                    if self.send(&reply).await.is_err() {
                        return Err(WaitFailure::Closed("the server went away".into()));
                    }
                }
                Incoming::Notification { method, .. } => {
                    if method == "notifications/tools/list_changed" {
                        self.tools_changed = true;
                    }
                }
                Incoming::Invalid => {}
            }
        }
    }

    /// Sends one message within `deadline`.
    async fn send_by(&mut self, message: &Value, deadline: Instant, method: &str) -> Result<()> {
        match tokio::time::timeout_at(deadline, self.send(message)).await {
            Ok(sent) => sent,
            Err(_) => Err(self.timeout_error(method)),
        }
    }

    /// Sets the limit for each request from now on.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// Sends one message; a stdio server that stopped reading is reported with how it ended.
    async fn send(&mut self, message: &Value) -> Result<()> {
        match self.transport.send(message).await {
            Err(e)
                if matches!(self.transport, Transport::Stdio(_)) && e.kind == ErrorKind::Server =>
            {
                Err(self.closed_error("it stopped reading its input").await)
            }
            outcome => outcome,
        }
    }

    fn timeout_error(&self, method: &str) -> Error {
        Error::timeout(format!(
            "{} did not answer {method} within {}s",
            self.spec.name,
            self.timeout.as_secs_f64()
        ))
        .with_hint("raise the limit with --timeout SECONDS or \"timeout\" in the server's config")
        .with_detail(self.transport.stderr_tail())
    }

    async fn closed_error(&mut self, reason: &str) -> Error {
        let status = match &mut self.transport {
            Transport::Stdio(child) => child.exit_description().await,
            Transport::Http(_) => None,
        };
        let message = match status {
            Some(status) => format!("{} stopped: {reason} ({status})", self.spec.name),
            None => format!("{} stopped: {reason}", self.spec.name),
        };
        let mut error = Error::server(message).with_detail(self.transport.stderr_tail());
        if let Some(log) = self.transport.log_path() {
            error = error.with_hint(format!("its stderr is in {}", log.display()));
        }
        error
    }

    fn rpc_error(&self, method: &str, error: RpcError) -> Error {
        Error::server(format!(
            "{} answered {method} with an error: {error}",
            self.spec.name
        ))
    }
}

/// A server-to-client request answered by ferry itself.
pub struct ClientRequestError {
    pub code: i64,
    pub message: String,
}

/// Answers `roots/list`, `elicitation/create` and `sampling/createMessage` (refused).
async fn answer_server_request(method: &str, params: &Value) -> Result<Value, ClientRequestError> {
    match method {
        "roots/list" => {
            let cwd = std::env::current_dir().unwrap_or_default();
            Ok(
                json!({"roots": [{"uri": format!("file://{}", cwd.display()), "name": "current directory"}]}),
            )
        }
        "elicitation/create" => {
            // The terminal is read off the runtime's thread, so Ctrl-C is still heard.
            let params = params.clone();
            Ok(tokio::task::spawn_blocking(move || elicit(&params))
                .await
                .unwrap_or_else(|_| json!({"action": "cancel"})))
        }
        "sampling/createMessage" => {
            eprintln!("ferry: the server asked for sampling (an LLM completion), which ferry does not provide; refused");
            Err(ClientRequestError {
                code: -1,
                message: "ferry does not provide sampling".into(),
            })
        }
        _ => Err(ClientRequestError {
            code: protocol::METHOD_NOT_FOUND,
            message: format!("ferry does not support {method}"),
        }),
    }
}

/// Asks the person at the terminal for the fields a server requests; declines without one.
fn elicit(params: &Value) -> Value {
    if !interactive() {
        return json!({"action": "decline"});
    }
    let message = params
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("The server asks for input.");
    let mut err = std::io::stderr();
    let _ = writeln!(err, "ferry: {message}");
    if let Some(url) = params.get("url").and_then(Value::as_str) {
        let _ = writeln!(err, "open: {url}");
        let _ = write!(err, "press Enter when done, or type 'no' to decline: ");
        let _ = err.flush();
        let answer = read_line();
        return if answer.as_deref().map(str::trim) == Some("no") {
            json!({"action": "decline"})
        } else {
            json!({"action": "accept"})
        };
    }
    let schema = crate::schema::ToolSchema::from_input_schema(
        params.get("requestedSchema").unwrap_or(&Value::Null),
    );
    let mut content = Map::new();
    for prop in &schema.props {
        let kind = crate::schema::render_type(&prop.shape);
        let _ = write!(
            err,
            "{}{} ({kind}): ",
            prop.name,
            if prop.required { "" } else { " [optional]" }
        );
        let _ = err.flush();
        let Some(answer) = read_line() else {
            return json!({"action": "cancel"});
        };
        let answer = answer.trim();
        if answer.is_empty() {
            if prop.required {
                return json!({"action": "decline"});
            }
            continue;
        }
        let value = match prop.shape.kind {
            crate::schema::Kind::Str | crate::schema::Kind::Enum(_) => {
                Value::String(answer.to_string())
            }
            _ => serde_json::from_str(answer).unwrap_or_else(|_| Value::String(answer.to_string())),
        };
        content.insert(prop.name.clone(), value);
    }
    json!({"action": "accept", "content": content})
}

fn read_line() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line),
    }
}
