//! A session with one server, in either protocol era, that many requests can share.
//!
//! The first time ferry meets a server it probes `server/discover`: a 2026-07-28 server
//! answers and every later request is one stateless round trip; anything else (an error, no
//! prompt answer, even a crash) falls back to the `initialize` handshake. The caller stores the
//! era with the cached tools so later sessions skip the probe.
//!
//! One reader task owns the incoming messages and routes each response to the request waiting
//! for it by id, so concurrent requests (the daemon's callers, the proxy's) share one
//! connection. What the server asks meanwhile (roots, elicitation, sampling) goes to the
//! [`ClientHandler`] of the request that is in flight, and its progress to that request too.

use super::config::ServerSpec;
use super::handler::{ClientHandler, ClientRequestError};
use crate::protocol::messages::{ListPage, Progress, ResultKind, Versions};
use crate::protocol::params::Params;
use crate::protocol::MessageView;
use crate::protocol::{
    self, Incoming, RpcError, ServerDescription, HANDSHAKE_VERSION, HANDSHAKE_VERSIONS,
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION, STATELESS_VERSION,
};
use crate::transport::{Connection, Event, Transport};
use crate::{Error, ErrorKind, Result};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// How long the probe waits before also trying the handshake, unless the server is busy (a
/// stdio server still starting uses CPU; one that will never answer sleeps).
const PROBE_WAIT: Duration = Duration::from_secs(2);
/// How often a silent stdio server is looked at for signs of work past [`PROBE_WAIT`].
const BUSY_LOOK: Duration = Duration::from_millis(500);
/// The same over HTTP, where every request gets an answer (an error at least), so only a slow
/// server is waited for: a busy 2026-07-28 server is not sent an `initialize` it refuses.
const PROBE_WAIT_HTTP: Duration = Duration::from_secs(10);
/// Multi-round-trip requests give up after this many rounds.
const MAX_INPUT_ROUNDS: usize = 10;
/// JSON-RPC errors after which a request was surely not processed and the remembered era may be
/// wrong: not initialized, invalid request, method not found, header mismatch, missing
/// capability, unsupported protocol version.
const ERA_MISMATCH: [i64; 6] = [-32002, -32600, -32601, -32020, -32021, -32022];
/// The stateless version ferry speaks among those a version refusal lists as supported.
fn supported_stateless(error: &RpcError) -> Option<String> {
    Versions::of_refusal(error.data.as_ref())
        .supported()?
        .into_iter()
        .find(|v| *v == STATELESS_VERSION)
        .map(str::to_string)
}

/// Pagination gives up after this many pages (a server repeating cursors).
const MAX_PAGES: usize = 1000;

/// ferry's `clientInfo`.
pub fn client_info() -> Value {
    json!({"name": "ferry", "version": env!("CARGO_PKG_VERSION")})
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

pub use crate::protocol::Era;

/// Answers the questions of an `input_required` round (a request's or a task's), each through
/// the caller's handler, by its key; a refusal is answered as `{"error": ...}`. Only the keys
/// `fresh` admits are answered (a task's questions already answered are not asked again).
pub async fn answer_input_requests(
    context: &RequestContext,
    requests: &Map<String, Value>,
    mut fresh: impl FnMut(&str) -> bool,
) -> Map<String, Value> {
    let mut responses = Map::new();
    for (key, request) in requests {
        if !fresh(key) {
            continue;
        }
        let request = MessageView::new(request);
        let method = request.method().unwrap_or_default();
        let params = request.params().cloned().unwrap_or(Value::Null);
        let answer = context
            .handler
            .answer(method, &params)
            .await
            .unwrap_or_else(|e| json!({"error": e.message}));
        responses.insert(key.clone(), answer);
    }
    responses
}

/// How to open a session.
#[derive(Clone)]
pub struct SessionOptions {
    /// How long any one request may take unless it says otherwise.
    pub timeout: Duration,
    /// The era remembered from an earlier session, which skips the probe.
    pub known_era: Option<Era>,
    /// Answers server requests made outside any call (and during negotiation).
    pub handler: Arc<dyn ClientHandler>,
    /// Starts the server again when negotiation needs a fresh process; `None`: from the
    /// spec (the daemon passes the transport its caller resolved).
    pub reconnect: Option<Arc<dyn Fn() -> Result<Transport> + Send + Sync>>,
}

/// Who a request is for: its handler, its time limit, whether it wants progress.
#[derive(Clone)]
pub struct RequestContext {
    pub handler: Arc<dyn ClientHandler>,
    pub timeout: Duration,
    /// Ask the server for progress notifications (they reach `handler.progress`).
    pub progress: bool,
    /// Headers the request carries over HTTP (`Mcp-Param-*` for a tool's declared
    /// parameters).
    pub headers: Vec<(String, String)>,
    /// Declare the tasks extension on this request (2026-07-28): its caller takes a task for
    /// an answer (`client::tasks`).
    pub tasks: bool,
}

/// How a request ended, as the reader saw it.
enum Reply {
    Outcome(std::result::Result<Value, RpcError>),
    /// A response with neither `result` nor `error`.
    Malformed,
    /// A message that could not be read arrived while this request waited.
    Unreadable(String),
    /// The server can send nothing more: the whole message, and the stderr tail.
    Closed(String, String),
}

struct Pending {
    reply: oneshot::Sender<Reply>,
    handler: Arc<dyn ClientHandler>,
    progress_token: Option<Value>,
    /// Where the requester's diagnostics go (the daemon shows each caller its own traffic).
    diagnostics: tracing::Dispatch,
}

/// What the session's requests and its reader share.
struct Shared {
    name: String,
    pending: Mutex<HashMap<i64, Pending>>,
    /// Set once the server can send nothing more: the message and stderr tail to report.
    closed: Mutex<Option<(String, String)>>,
    tools_changed: AtomicBool,
    /// Whether the server has asked its client anything (roots, elicitation...).
    asked: AtomicBool,
    /// `tools/list_changed` notifications since the session opened.
    tools_changes: AtomicUsize,
    next_id: AtomicI64,
    default_handler: Arc<dyn ClientHandler>,
}

/// The negotiated state.
struct Agreed {
    era: Era,
    description: ServerDescription,
    /// The stateless era was taken from the cache and no request has confirmed it yet.
    era_assumed: bool,
}

/// An open session.
pub struct Session {
    spec: ServerSpec,
    connection: Arc<Connection>,
    shared: Arc<Shared>,
    agreed: Mutex<Agreed>,
    /// Held while the era is being (re)negotiated, so concurrent requests do it once.
    negotiating: tokio::sync::Mutex<()>,
    reader: tokio::task::JoinHandle<()>,
    timeout: Mutex<Duration>,
    client_capabilities: Value,
}

/// Why waiting for a response ended without one.
enum WaitFailure {
    TimedOut,
}

/// Removes a request from the pending table when its future ends early (a timeout, a caller
/// that went away), and tells the server to stop working on it.
struct PendingGuard {
    shared: Arc<Shared>,
    connection: Arc<Connection>,
    id: i64,
    done: bool,
}

impl Drop for PendingGuard {
    fn drop(&mut self) {
        let was_pending = self
            .shared
            .pending
            .lock()
            .map(|mut p| p.remove(&self.id).is_some())
            .unwrap_or(false);
        if !self.done && was_pending {
            let note = protocol::notification(
                "notifications/cancelled",
                Some(json!({"requestId": self.id, "reason": "the caller stopped waiting"})),
            );
            let connection = self.connection.clone();
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    let _ = connection.send(&note).await;
                });
            }
        }
    }
}

/// A request to send when dropped, unless disarmed: see [`Session::send_on_drop`].
pub struct SendOnDrop {
    message: Option<Value>,
    connection: Arc<Connection>,
}

impl SendOnDrop {
    /// The request is no longer owed.
    pub fn disarm(&mut self) {
        self.message = None;
    }
}

impl Drop for SendOnDrop {
    fn drop(&mut self) {
        let Some(message) = self.message.take() else {
            return;
        };
        let connection = self.connection.clone();
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            tracing::debug!("-> {}", crate::client::trace_text(&message));
            crate::signals::farewell(handle.spawn(async move {
                let _ = connection.send(&message).await;
            }));
        }
    }
}

/// Opens the transport a spec describes.
pub fn connect(spec: &ServerSpec) -> Result<Transport> {
    spec.connect()
}

impl Session {
    /// Starts or connects to the server and agrees on a protocol era.
    pub async fn open(spec: &ServerSpec, options: SessionOptions) -> Result<Session> {
        Session::open_on(spec, spec.connect()?, options).await
    }

    /// As `open`, over a transport the caller made (tests use an in-memory one). A session
    /// that cannot agree on an era is closed, its server stopped, before the error returns.
    pub async fn open_on(
        spec: &ServerSpec,
        transport: Transport,
        options: SessionOptions,
    ) -> Result<Session> {
        let is_stdio = matches!(transport.connection, Connection::Stdio(_));
        let session = Session::start(spec, transport, &options);
        let agreed = match options.known_era.clone() {
            Some(Era::Stateless(version)) => {
                session.adopt_stateless(version);
                session.agreed().era_assumed = true;
                Ok(())
            }
            Some(Era::Handshake(_)) => {
                // A server replaced by a stateless-only one refuses `initialize`: find out anew.
                match session.try_handshake(None).await {
                    Ok(Ok(())) => Ok(()),
                    Ok(Err(_)) => match session.probe().await {
                        Ok(()) => Ok(()),
                        Err(ProbeFailure::Closed) => Err(session.closed_error()),
                        Err(ProbeFailure::Error(e)) => Err(e),
                    },
                    Err(e) => Err(e),
                }
            }
            None => match session.probe().await {
                Err(ProbeFailure::Closed) if is_stdio => {
                    // Some old servers exit on a request before initialize: start again and
                    // shake hands.
                    tracing::debug!(server = %spec.name, "the server ended on server/discover; starting it again for the handshake");
                    session.close().await;
                    let retry = SessionOptions {
                        known_era: Some(Era::Handshake(HANDSHAKE_VERSION.into())),
                        ..options
                    };
                    let transport = match &retry.reconnect {
                        Some(reconnect) => reconnect()?,
                        None => spec.connect()?,
                    };
                    let session = Session::start(spec, transport, &retry);
                    return match session.handshake(None).await {
                        Ok(()) => Ok(session),
                        Err(e) => {
                            session.close().await;
                            Err(e)
                        }
                    };
                }
                Err(ProbeFailure::Closed) => Err(session.closed_error()),
                Err(ProbeFailure::Error(e)) => Err(e),
                Ok(()) => Ok(()),
            },
        };
        match agreed {
            Ok(()) => Ok(session),
            Err(e) => {
                session.close().await;
                Err(e)
            }
        }
    }

    fn start(spec: &ServerSpec, transport: Transport, options: &SessionOptions) -> Session {
        let connection = Arc::new(transport.connection);
        let shared = Arc::new(Shared {
            name: spec.name.clone(),
            pending: Mutex::new(HashMap::new()),
            closed: Mutex::new(None),
            tools_changed: AtomicBool::new(false),
            asked: AtomicBool::new(false),
            tools_changes: AtomicUsize::new(0),
            next_id: AtomicI64::new(1),
            default_handler: options.handler.clone(),
        });
        let reader = tokio::spawn(read_events(
            transport.incoming,
            shared.clone(),
            connection.clone(),
        ));
        Session {
            spec: spec.clone(),
            connection,
            shared,
            agreed: Mutex::new(Agreed {
                era: Era::Handshake(HANDSHAKE_VERSION.into()),
                description: ServerDescription::default(),
                era_assumed: false,
            }),
            negotiating: tokio::sync::Mutex::new(()),
            reader,
            timeout: Mutex::new(options.timeout),
            client_capabilities: options.handler.capabilities(),
        }
    }

    fn agreed(&self) -> std::sync::MutexGuard<'_, Agreed> {
        self.agreed.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The server's name, for messages.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The era agreed with the server.
    pub fn era(&self) -> Era {
        self.agreed().era.clone()
    }

    /// What the server said about itself (`Null` fields when a stateless session skipped
    /// discovery).
    pub fn description(&self) -> ServerDescription {
        self.agreed().description.clone()
    }

    /// How many times the server said its tools changed since the session opened.
    pub fn tools_changes(&self) -> usize {
        self.shared.tools_changes.load(Ordering::SeqCst)
    }

    /// Whether the server said its tools changed since the last call of this; clears it.
    pub fn take_tools_changed(&self) -> bool {
        self.shared.tools_changed.swap(false, Ordering::SeqCst)
    }

    /// Whether the server has asked its client anything (roots, elicitation...) in this
    /// session: such a server's calls from several callers should take turns.
    pub fn asks_client(&self) -> bool {
        self.shared.asked.load(Ordering::SeqCst)
    }

    /// The capabilities this session declares, as a key of the tools cache: what it is
    /// listed depends on them.
    pub fn view(&self) -> super::cache::View {
        super::cache::View::of(&self.client_capabilities)
    }

    /// Whether the last request found the server unreachable or without the session, and
    /// nothing has been answered since: a call that ends so was no use of the server.
    pub fn is_failing(&self) -> bool {
        self.connection.unreachable() || self.connection.session_lost()
    }

    /// Whether the server can still answer: its output is open and its process runs.
    pub fn is_alive(&self) -> bool {
        let open = self
            .shared
            .closed
            .lock()
            .map(|c| c.is_none())
            .unwrap_or(false);
        open && !self.connection.has_exited()
    }

    /// The server process's id (stdio).
    pub fn pid(&self) -> Option<u32> {
        self.connection.pid()
    }

    /// The default limit for each request from now on.
    pub fn set_timeout(&self, timeout: Duration) {
        if let Ok(mut t) = self.timeout.lock() {
            *t = timeout;
        }
    }

    fn timeout(&self) -> Duration {
        self.timeout
            .lock()
            .map(|t| *t)
            .unwrap_or(Duration::from_secs(60))
    }

    fn adopt_stateless(&self, version: String) {
        self.connection.set_protocol_version(&version);
        self.agreed().era = Era::Stateless(version);
    }

    fn take_id(&self) -> i64 {
        self.shared.next_id.fetch_add(1, Ordering::SeqCst)
    }

    /// The client capabilities a request declares (the stateless era's are per request).
    fn capabilities_for(&self, context: &RequestContext) -> Value {
        let mut capabilities = self.client_capabilities.clone();
        if context.tasks {
            if let Value::Object(map) = &mut capabilities {
                let extensions = map
                    .entry("extensions")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(extensions) = extensions {
                    extensions.insert(crate::protocol::task_status::EXTENSION.into(), json!({}));
                }
            }
        }
        capabilities
    }

    /// A request sent when the returned guard is dropped armed, with no one waiting for its
    /// answer: what a caller that stops waiting owes the server (`tasks/cancel` for the task
    /// it abandons). A cold ferry gives it a moment before exiting (`signals::farewell`).
    pub fn send_on_drop(
        &self,
        method: &str,
        params: Value,
        context: &RequestContext,
    ) -> SendOnDrop {
        let params = match self.era() {
            Era::Stateless(version) => {
                with_stateless_meta(Some(params), &version, &self.capabilities_for(context))
            }
            Era::Handshake(_) => params,
        };
        SendOnDrop {
            message: Some(protocol::request(self.take_id(), method, Some(params))),
            connection: self.connection.clone(),
        }
    }

    /// Whether the server is a child process on stdio.
    pub fn is_stdio(&self) -> bool {
        matches!(*self.connection, Connection::Stdio(_))
    }

    /// Registers a request and sends it; the receiver gets its reply.
    async fn send_request(
        &self,
        id: i64,
        method: &str,
        params: Value,
        handler: &Arc<dyn ClientHandler>,
        deadline: Instant,
        headers: &[(String, String)],
    ) -> Result<(oneshot::Receiver<Reply>, PendingGuard)> {
        let (reply, receiver) = oneshot::channel();
        let progress_token = Params::new(&params).progress_token().cloned();
        if let Some((message, tail)) = self.shared.closed.lock().ok().and_then(|c| c.clone()) {
            return Err(self.closed_error_from(message, tail));
        }
        if let Ok(mut pending) = self.shared.pending.lock() {
            pending.insert(
                id,
                Pending {
                    reply,
                    handler: handler.clone(),
                    progress_token,
                    diagnostics: tracing::dispatcher::get_default(tracing::Dispatch::clone),
                },
            );
        }
        let mut guard = PendingGuard {
            shared: self.shared.clone(),
            connection: self.connection.clone(),
            id,
            done: false,
        };
        let message = protocol::request(id, method, Some(params));
        tracing::debug!(server = %self.spec.name, "-> {}", crate::client::trace_text(&message));
        let sent =
            match tokio::time::timeout_at(deadline, self.connection.send_with(&message, headers))
                .await
            {
                Ok(sent) => sent,
                Err(_) => Err(self.timeout_error(method)),
            };
        match sent {
            Ok(()) => Ok((receiver, guard)),
            Err(e) if e.kind == ErrorKind::Server && self.is_stdio() => {
                // The server stopped reading: report how it ended.
                guard.done = true;
                drop(guard);
                self.wait_closed().await;
                Err(self.closed_error())
            }
            Err(e) => {
                guard.done = true;
                Err(e)
            }
        }
    }

    /// Waits a moment for the reader to see the end of a server that stopped reading.
    async fn wait_closed(&self) {
        for _ in 0..50 {
            if !self.is_alive() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    async fn wait(
        receiver: oneshot::Receiver<Reply>,
        deadline: Instant,
    ) -> std::result::Result<Reply, WaitFailure> {
        match tokio::time::timeout_at(deadline, receiver).await {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(_)) => Ok(Reply::Closed("the session ended".into(), String::new())),
            Err(_) => Err(WaitFailure::TimedOut),
        }
    }

    /// Waits for the probe's reply until `deadline`, and past it for as long as a stdio
    /// server keeps using CPU (it is still starting: an interpreter loading its libraries on a
    /// busy machine), up to the session's timeout. A server that sits idle without answering
    /// is not waited for.
    async fn wait_while_busy(
        &self,
        mut receiver: oneshot::Receiver<Reply>,
        deadline: Instant,
    ) -> std::result::Result<Reply, WaitFailure> {
        let group = self.pid().filter(|_| self.is_stdio()).map(|pid| pid as i32);
        let last = Instant::now() + self.timeout();
        let mut until = deadline;
        let mut ticks = group.map(crate::procfs::group_cpu_ticks);
        loop {
            match tokio::time::timeout_at(until, &mut receiver).await {
                Ok(Ok(reply)) => return Ok(reply),
                Ok(Err(_)) => return Ok(Reply::Closed("the session ended".into(), String::new())),
                Err(_) => {}
            }
            let (Some(group), Some(before)) = (group, ticks) else {
                return Err(WaitFailure::TimedOut);
            };
            let now = crate::procfs::group_cpu_ticks(group);
            if now <= before || Instant::now() >= last {
                return Err(WaitFailure::TimedOut);
            }
            tracing::debug!(server = %self.spec.name, "no answer to server/discover yet, but the server is busy starting; waiting");
            ticks = Some(now);
            until = (Instant::now() + BUSY_LOOK).min(last);
        }
    }

    /// `server/discover`; falls back to the handshake on anything but a usable answer.
    async fn probe(&self) -> std::result::Result<(), ProbeFailure> {
        let id = self.take_id();
        let params = with_stateless_meta(None, STATELESS_VERSION, &self.client_capabilities);
        self.connection.set_protocol_version(STATELESS_VERSION);
        let wait = if self.is_stdio() {
            PROBE_WAIT
        } else {
            PROBE_WAIT_HTTP
        };
        let deadline = Instant::now() + wait.min(self.timeout());
        let handler = self.shared.default_handler.clone();
        let (receiver, mut guard) = match self
            .send_request(id, "server/discover", params, &handler, deadline, &[])
            .await
        {
            Ok(sent) => sent,
            Err(e) => {
                if e.kind == ErrorKind::Auth || e.kind == ErrorKind::Usage {
                    return Err(ProbeFailure::Error(e));
                }
                if self.is_stdio() {
                    return Err(ProbeFailure::Closed);
                }
                // An HTTP server of the handshake era may reject the request outright, or sit on it.
                tracing::debug!(server = %self.spec.name, "server/discover refused ({}); trying initialize", e.message);
                let refused = match self.handshake(None).await {
                    Ok(()) => return Ok(()),
                    Err(refused) => refused,
                };
                // A server that only took long (a busy machine) and refuses the handshake is
                // asked once more, with the whole time a request has.
                if e.kind == ErrorKind::Timeout {
                    match self.probe_patiently().await {
                        Ok(true) => return Ok(()),
                        Err(e) if e.kind == ErrorKind::Auth => return Err(ProbeFailure::Error(e)),
                        _ => {}
                    }
                }
                return Err(ProbeFailure::Error(refused));
            }
        };
        let reply = match self.wait_while_busy(receiver, deadline).await {
            Ok(reply) => reply,
            Err(WaitFailure::TimedOut) => {
                tracing::debug!(server = %self.spec.name, "no answer to server/discover within {wait:?}; trying initialize");
                // The probe may still win the race: keep waiting for it beside the handshake.
                let (reply, receiver) = oneshot::channel();
                if let Ok(mut pending) = self.shared.pending.lock() {
                    if let Some(entry) = pending.get_mut(&id) {
                        entry.reply = reply;
                    }
                }
                let outcome = self.handshake(Some(receiver)).await;
                guard.done = true;
                drop(guard);
                return outcome.map_err(ProbeFailure::Error);
            }
        };
        guard.done = true;
        drop(guard);
        match reply {
            Reply::Outcome(Ok(result)) => {
                if self.discovered(&result) {
                    return Ok(());
                }
                self.handshake(None).await.map_err(ProbeFailure::Error)
            }
            Reply::Outcome(Err(error)) => {
                if error.code == protocol::UNSUPPORTED_PROTOCOL_VERSION {
                    // A refusal that names a stateless version ferry speaks: that era it is
                    // (the requests that follow carry the version, and retry once if refused).
                    if let Some(version) = supported_stateless(&error) {
                        tracing::debug!(server = %self.spec.name, "server/discover refused; the server names {version}, which ferry speaks");
                        self.adopt_stateless(version);
                        self.agreed().era_assumed = true;
                        return Ok(());
                    }
                    let versions = Versions::of_refusal(error.data.as_ref());
                    let legacy = versions
                        .supported()
                        .is_some_and(|v| v.iter().any(|v| HANDSHAKE_VERSIONS.contains(v)));
                    let supported = versions.supported.map_or(Value::Null, Value::Array);
                    if !legacy {
                        return Err(ProbeFailure::Error(Error::server(format!(
                            "{} speaks only protocol versions {supported}, which ferry {} does not support",
                            self.spec.name,
                            env!("CARGO_PKG_VERSION")
                        ))
                        .with_hint("upgrade ferry")));
                    }
                }
                tracing::debug!(server = %self.spec.name, "server/discover answered with an error ({error}); trying initialize");
                self.handshake(None).await.map_err(ProbeFailure::Error)
            }
            Reply::Malformed | Reply::Unreadable(_) => {
                self.handshake(None).await.map_err(ProbeFailure::Error)
            }
            Reply::Closed(..) => Err(ProbeFailure::Closed),
        }
    }

    /// `server/discover` once more, waiting as long as any request may: whether it was
    /// answered with our stateless version (now adopted), or why it could not be sent.
    async fn probe_patiently(&self) -> Result<bool> {
        let id = self.take_id();
        let params = with_stateless_meta(None, STATELESS_VERSION, &self.client_capabilities);
        self.connection.set_protocol_version(STATELESS_VERSION);
        let deadline = Instant::now() + self.timeout();
        let handler = self.shared.default_handler.clone();
        let (receiver, mut guard) = self
            .send_request(id, "server/discover", params, &handler, deadline, &[])
            .await?;
        let reply = Session::wait(receiver, deadline).await;
        guard.done = true;
        drop(guard);
        Ok(match reply {
            Ok(Reply::Outcome(Ok(result))) => self.discovered(&result),
            _ => false,
        })
    }

    /// Adopts a `server/discover` result that offers our stateless version.
    fn discovered(&self, result: &Value) -> bool {
        let offers = Versions::read(result).offers(STATELESS_VERSION);
        if !offers {
            return false;
        }
        self.agreed().description = ServerDescription::from_discover(result);
        self.adopt_stateless(STATELESS_VERSION.into());
        tracing::debug!(server = %self.spec.name, "era: stateless {STATELESS_VERSION}");
        true
    }

    /// `initialize` + `notifications/initialized`. A probe still pending may win the race.
    async fn handshake(&self, pending_probe: Option<oneshot::Receiver<Reply>>) -> Result<()> {
        match self.try_handshake(pending_probe).await? {
            Ok(()) => Ok(()),
            Err(refusal) => Err(self.rpc_error("initialize", refusal)),
        }
    }

    /// The handshake, with the server's refusal of `initialize` kept apart from other failures.
    /// A refusal that names the versions the server does speak is retried once with one of
    /// ours among them.
    async fn try_handshake(
        &self,
        mut pending_probe: Option<oneshot::Receiver<Reply>>,
    ) -> Result<std::result::Result<(), RpcError>> {
        let mut offer = HANDSHAKE_VERSION.to_string();
        for attempt in 0..2 {
            let id = self.take_id();
            let params = json!({
                "protocolVersion": offer,
                "capabilities": self.client_capabilities,
                "clientInfo": client_info(),
            });
            self.connection.set_protocol_version(&offer);
            let deadline = Instant::now() + self.timeout();
            let handler = self.shared.default_handler.clone();
            let (receiver, _guard) = self
                .send_request(id, "initialize", params, &handler, deadline, &[])
                .await?;
            let reply = match pending_probe.take() {
                Some(mut probe) => {
                    let mut receiver = receiver;
                    tokio::select! {
                        reply = &mut receiver => {
                            let reply = reply.unwrap_or(Reply::Closed("the session ended".into(), String::new()));
                            // Refused while the probe is still out: a slow server of the
                            // stateless era answers the probe yet.
                            if let Reply::Outcome(Err(_)) = &reply {
                                if let Ok(Ok(Reply::Outcome(Ok(result)))) =
                                    tokio::time::timeout_at(deadline, &mut probe).await
                                {
                                    if self.discovered(&result) {
                                        return Ok(Ok(()));
                                    }
                                }
                            }
                            reply
                        }
                        probe_reply = &mut probe => {
                            if let Ok(Reply::Outcome(Ok(result))) = probe_reply {
                                if self.discovered(&result) {
                                    return Ok(Ok(()));
                                }
                            }
                            // The probe lost: wait for initialize alone.
                            match Session::wait(receiver, deadline).await {
                                Ok(reply) => reply,
                                Err(WaitFailure::TimedOut) => return Err(self.timeout_error("initialize")),
                            }
                        }
                        _ = tokio::time::sleep_until(deadline) => return Err(self.timeout_error("initialize")),
                    }
                }
                None => match Session::wait(receiver, deadline).await {
                    Ok(reply) => reply,
                    Err(WaitFailure::TimedOut) => return Err(self.timeout_error("initialize")),
                },
            };
            let result = match reply {
                Reply::Outcome(Ok(result)) => result,
                Reply::Outcome(Err(refusal)) => {
                    let retry = Versions::of_refusal(refusal.data.as_ref())
                        .supported()
                        .and_then(|supported| {
                            HANDSHAKE_VERSIONS
                                .iter()
                                .find(|v| **v != offer && supported.contains(*v))
                        });
                    match retry {
                        Some(version) if attempt == 0 => {
                            tracing::debug!(server = %self.spec.name, "initialize refused {offer}; retrying with {version}");
                            offer = version.to_string();
                            continue;
                        }
                        _ => return Ok(Err(refusal)),
                    }
                }
                Reply::Malformed => {
                    return Err(self.malformed_error("initialize"));
                }
                Reply::Unreadable(why) => return Err(self.unreadable_error("initialize", &why)),
                Reply::Closed(message, tail) => return Err(self.closed_error_from(message, tail)),
            };
            let version = Versions::read(&result).protocol_version.unwrap_or_default();
            if !HANDSHAKE_VERSIONS.contains(&version.as_str()) {
                return Err(Error::server(format!(
                    "{} answered with protocol version {:?}, which ferry does not support",
                    self.spec.name,
                    crate::render::text::escape_line(&version)
                ))
                .with_hint("upgrade ferry or the server"));
            }
            {
                let mut agreed = self.agreed();
                agreed.description = ServerDescription::from_initialize(&result);
                agreed.era = Era::Handshake(version.clone());
            }
            tracing::debug!(server = %self.spec.name, "era: handshake {version}");
            self.connection.set_protocol_version(&version);
            self.notify("notifications/initialized", None).await?;
            // Sessions of this era may push messages outside any request (list_changed).
            self.connection.listen().await;
            return Ok(Ok(()));
        }
        Err(Error::server(format!(
            "{} refused every protocol version ferry offered",
            self.spec.name
        )))
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<()> {
        let message = protocol::notification(method, params);
        tracing::debug!(server = %self.spec.name, "-> {}", crate::client::trace_text(&message));
        self.connection.send(&message).await
    }

    /// Sends a request with the session's own handler and limit.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value> {
        let context = RequestContext {
            handler: self.shared.default_handler.clone(),
            timeout: self.timeout(),
            progress: false,
            headers: Vec::new(),
            tasks: false,
        };
        self.request_with(method, params, &context).await
    }

    /// Sends a request and returns its result, answering whatever the server asks meanwhile
    /// through the caller's handler, and following `input_required` rounds of the stateless era.
    pub async fn request_with(
        &self,
        method: &str,
        params: Value,
        context: &RequestContext,
    ) -> Result<Value> {
        let mut params = params;
        if context.progress {
            let token = format!("ferry-{}", self.shared.next_id.load(Ordering::SeqCst));
            if let Value::Object(map) = &mut params {
                let meta = map
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(meta) = meta {
                    meta.insert("progressToken".into(), json!(token));
                }
            }
        }
        let started = std::time::Instant::now();
        let mut version_retried = false;
        let mut session_renewed = false;
        for _ in 0..MAX_INPUT_ROUNDS {
            // A handshake session the server no longer knows (it restarted): shake hands anew,
            // once per request, before sending; a request it refused was never processed.
            if self.connection.session_lost() && !session_renewed {
                session_renewed = true;
                let _lock = self.negotiating.lock().await;
                if self.connection.session_lost() {
                    tracing::debug!(server = %self.spec.name, "the server lost the session; initializing again");
                    self.handshake(None).await?;
                }
            }
            let id = self.take_id();
            let era = self.era();
            let wire_params = match &era {
                Era::Stateless(version) => with_stateless_meta(
                    Some(params.clone()),
                    version,
                    &self.capabilities_for(context),
                ),
                Era::Handshake(_) => params.clone(),
            };
            // The limit covers sending too: an HTTP server may hold the POST until it is done.
            let deadline = Instant::now() + context.timeout;
            let sent = self
                .send_request(
                    id,
                    method,
                    wire_params,
                    &context.handler,
                    deadline,
                    &context.headers,
                )
                .await;
            let (receiver, mut guard) = match sent {
                // Renewed at the top of the next round.
                Err(e) if !session_renewed && self.connection.session_lost() => {
                    tracing::debug!(server = %self.spec.name, "{e}");
                    continue;
                }
                sent => sent?,
            };
            let reply = match Session::wait(receiver, deadline).await {
                Ok(reply) => reply,
                Err(WaitFailure::TimedOut) => {
                    // The guard tells the server to stop working on it.
                    drop(guard);
                    return Err(self.timeout_error_for(method, context.timeout));
                }
            };
            guard.done = true;
            drop(guard);
            let result = match reply {
                Reply::Outcome(Ok(result)) => {
                    self.agreed().era_assumed = false;
                    result
                }
                Reply::Outcome(Err(error)) => {
                    // A stateless server that refuses the version offered names those it
                    // supports: take one ferry speaks and send again, once.
                    if error.code == protocol::UNSUPPORTED_PROTOCOL_VERSION && !version_retried {
                        if let Some(version) = supported_stateless(&error) {
                            version_retried = true;
                            tracing::debug!(server = %self.spec.name, "version refused; retrying with {version}");
                            self.adopt_stateless(version);
                            continue;
                        }
                    }
                    // Errors that mean "not processed, wrong era" (the server was replaced by
                    // one of the handshake era): probe once and send again.
                    let assumed = std::mem::take(&mut self.agreed().era_assumed);
                    if assumed && ERA_MISMATCH.contains(&error.code) {
                        tracing::debug!(server = %self.spec.name, "the remembered era was refused ({error}); probing again");
                        let _lock = self.negotiating.lock().await;
                        match self.probe().await {
                            Ok(()) => continue,
                            Err(ProbeFailure::Error(e)) => return Err(e),
                            Err(ProbeFailure::Closed) => return Err(self.closed_error()),
                        }
                    }
                    return Err(self.rpc_error(method, error));
                }
                Reply::Malformed => return Err(self.malformed_error(method)),
                Reply::Unreadable(why) => return Err(self.unreadable_error(method, &why)),
                Reply::Closed(message, tail) => return Err(self.closed_error_from(message, tail)),
            };
            let kind = ResultKind::read(&result);
            if kind.result_type.as_deref() != Some("input_required") {
                tracing::debug!(server = %self.spec.name, "{method} answered in {:?}", started.elapsed());
                return Ok(result);
            }
            let responses = match &kind.input_requests {
                Some(requests) => Some(answer_input_requests(context, requests, |_| true).await),
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
                match kind.request_state {
                    Some(state) => map.insert("requestState".into(), state),
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
    pub async fn list_all(&self, method: &str, key: &str) -> Result<(Vec<Value>, Option<u64>)> {
        let mut items = Vec::new();
        let mut cursor: Option<Value> = None;
        let mut ttl = None;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let mut page = self.request(method, params).await?;
            match page.get_mut(key).map(Value::take) {
                Some(Value::Array(page_items)) => items.extend(page_items),
                Some(Value::Null) | None => {}
                Some(_) => {
                    return Err(Error::server(format!(
                        "{} sent a {method} result whose {key:?} is not a list",
                        self.spec.name
                    )))
                }
            }
            let page = ListPage::read(&page);
            ttl = page.ttl_ms.or(ttl);
            match page.next_cursor {
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
        self.shutdown().await;
    }

    /// As `close`, for a session shared by several callers (the daemon's).
    pub async fn shutdown(&self) {
        self.connection.shutdown().await;
        self.reader.abort();
    }

    fn timeout_error(&self, method: &str) -> Error {
        self.timeout_error_for(method, self.timeout())
    }

    fn timeout_error_for(&self, method: &str, timeout: Duration) -> Error {
        Error::timeout(format!(
            "{} did not answer {method} within {}s",
            self.spec.name,
            timeout.as_secs_f64()
        ))
        .with_hint("raise the limit with --timeout SECONDS or \"timeout\" in the server's config")
        .with_detail(self.connection.stderr_tail())
    }

    fn closed_error(&self) -> Error {
        let (message, tail) = self
            .shared
            .closed
            .lock()
            .ok()
            .and_then(|c| c.clone())
            .unwrap_or_else(|| {
                (
                    format!("{} stopped", self.spec.name),
                    self.connection.stderr_tail(),
                )
            });
        self.closed_error_from(message, tail)
    }

    fn closed_error_from(&self, message: String, tail: String) -> Error {
        let mut error = Error::server(message).with_detail(tail);
        if let Some(log) = self.connection.log_path() {
            error = error.with_hint(format!("its stderr is in {}", log.display()));
        }
        error
    }

    fn malformed_error(&self, method: &str) -> Error {
        Error::server(format!(
            "{} answered {method} with neither a result nor an error",
            self.spec.name
        ))
        .with_hint("the server broke the protocol; report it to its authors")
    }

    fn unreadable_error(&self, method: &str, why: &str) -> Error {
        Error::server(format!(
            "{}'s answer to {method} could not be read: {why}",
            self.spec.name
        ))
        .with_hint(format!(
            "if the answer is legitimately this large, raise \"maxMessageMB\" in {}'s config",
            self.spec.name
        ))
    }

    fn rpc_error(&self, method: &str, error: RpcError) -> Error {
        let said = crate::render::text::escape_line(&error.to_string()).into_owned();
        let name = &self.spec.name;
        // Invalid params (an unknown URI, task or argument the server refused) and a resource
        // not found are the caller's mistake, not the server failing.
        let callers = error.code == protocol::INVALID_PARAMS
            || (error.code == protocol::RESOURCE_NOT_FOUND && method == "resources/read");
        if !callers {
            return Error::server(format!("{name} answered {method} with an error: {said}"));
        }
        let error = Error::usage(format!("{name} refused {method}: {said}"));
        match method {
            "resources/read" => error.with_hint(format!(
                "`ferry {name} --resources` lists what it offers, templates included"
            )),
            "prompts/get" => error.with_hint(format!("`ferry {name} --prompts` lists its prompts")),
            "tools/call" => error.with_hint(format!(
                "`ferry {name} TOOL --help` shows what the tool takes"
            )),
            // The caller knows what a task ID it does not have means.
            m if m.starts_with("tasks/") => error,
            _ => error.with_hint(format!("`ferry {name} --help` shows what it takes")),
        }
    }
}

/// Why a probe ended without an era.
enum ProbeFailure {
    /// The server went away (a stdio server may be started again for the handshake).
    Closed,
    Error(Error),
}

/// The reader: routes every incoming message until the server can send nothing more.
async fn read_events(
    mut incoming: mpsc::UnboundedReceiver<Event>,
    shared: Arc<Shared>,
    connection: Arc<Connection>,
) {
    let reason = loop {
        let Some(event) = incoming.recv().await else {
            break "the connection closed".to_string();
        };
        match event {
            Event::Message(message) => route(message, &shared, &connection),
            Event::Unreadable(why) => {
                tracing::debug!(server = %shared.name, "unreadable message: {why}");
                // It was most likely an answer: fail what waits rather than let it time out.
                fail_all(&shared, || Reply::Unreadable(why.clone()));
            }
            Event::Closed(reason) => break reason,
        }
    };
    let status = connection.exit_description().await;
    let message = match status {
        Some(status) => format!("{} stopped: {reason} ({status})", shared.name),
        None => format!("{} stopped: {reason}", shared.name),
    };
    tracing::debug!(server = %shared.name, "{message}");
    let tail = connection.stderr_tail();
    if let Ok(mut closed) = shared.closed.lock() {
        *closed = Some((message.clone(), tail.clone()));
    }
    fail_all(&shared, || Reply::Closed(message.clone(), tail.clone()));
}

/// Ends every request still waiting with the same reply.
fn fail_all(shared: &Shared, reply: impl Fn() -> Reply) {
    let waiting: Vec<Pending> = shared
        .pending
        .lock()
        .map(|mut p| p.drain().map(|(_, v)| v).collect())
        .unwrap_or_default();
    for pending in waiting {
        let _ = pending.reply.send(reply());
    }
}

/// Who answers a server's request: the one caller with requests in flight (requests made
/// with the session's own handler aside), the session's own handler when none waits, or
/// `None` when several callers wait and the request could be any one's.
fn asked_for(shared: &Shared) -> Option<Arc<dyn ClientHandler>> {
    let pending = shared.pending.lock().ok()?;
    let mut callers = pending
        .values()
        .map(|p| &p.handler)
        .filter(|h| !Arc::ptr_eq(h, &shared.default_handler));
    let Some(first) = callers.next() else {
        return Some(shared.default_handler.clone());
    };
    callers
        .all(|h| Arc::ptr_eq(h, first))
        .then(|| first.clone())
}

/// The id a response names, as one of ours.
fn our_id(id: &Value) -> Option<i64> {
    match id {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// Shows an incoming message in the diagnostics of `to` (the requester a response answers,
/// else this task's).
fn trace_incoming(shared: &Shared, message: &Value, to: Option<&tracing::Dispatch>) {
    let show = || {
        if tracing::enabled!(tracing::Level::DEBUG) {
            tracing::debug!(server = %shared.name, "<- {}", crate::client::trace_text(message));
        }
    };
    match to {
        Some(dispatch) => tracing::dispatcher::with_default(dispatch, show),
        None => show(),
    }
}

fn route(message: Value, shared: &Arc<Shared>, connection: &Arc<Connection>) {
    let view = MessageView::new(&message);
    let requester = (!view.has_method())
        .then(|| view.id().and_then(our_id))
        .flatten()
        .and_then(|id| {
            let pending = shared.pending.lock().ok()?;
            Some(pending.get(&id)?.diagnostics.clone())
        });
    trace_incoming(shared, &message, requester.as_ref());
    match protocol::classify(message) {
        Incoming::Response { id, outcome } => {
            let mut pending = match shared.pending.lock() {
                Ok(p) => p,
                Err(_) => return,
            };
            let entry = match our_id(&id).and_then(|id| pending.remove(&id)) {
                Some(entry) => Some(entry),
                // An error the server could not tie to a request (`"id": null`, for a request
                // it could not read) answers the one we are waiting for, if only one waits.
                None if id.is_null() && outcome.is_err() && pending.len() == 1 => {
                    let key = *pending.keys().next().unwrap_or(&0);
                    pending.remove(&key)
                }
                None => None,
            };
            if let Some(entry) = entry {
                let _ = entry.reply.send(Reply::Outcome(outcome));
            }
        }
        Incoming::BadResponse { id } => {
            let entry = shared
                .pending
                .lock()
                .ok()
                .and_then(|mut p| our_id(&id).and_then(|id| p.remove(&id)));
            if let Some(entry) = entry {
                let _ = entry.reply.send(Reply::Malformed);
            }
        }
        Incoming::Request { id, method, params } => {
            if method == "ping" {
                let connection = connection.clone();
                tokio::spawn(async move {
                    let _ = connection.send(&protocol::response(id, json!({}))).await;
                });
                return;
            }
            shared.asked.store(true, Ordering::SeqCst);
            let connection = connection.clone();
            let Some(handler) = asked_for(shared) else {
                // The server's question could be any waiting caller's (a directory, a
                // terminal): answering for one of them could answer for the wrong one.
                tracing::debug!(server = %shared.name, "{method}: several callers wait; refused");
                let refusal = protocol::error_response(
                    id,
                    protocol::INTERNAL_ERROR,
                    &format!("ferry cannot tell which of its calls in flight this {method} is for, so it answers for none"),
                );
                tokio::spawn(async move {
                    let _ = connection.send(&refusal).await;
                });
                return;
            };
            tokio::spawn(async move {
                let reply = match handler.answer(&method, &params).await {
                    Ok(result) => protocol::response(id, result),
                    Err(ClientRequestError { code, message }) => {
                        protocol::error_response(id, code, &message)
                    }
                };
                let _ = connection.send(&reply).await;
            });
        }
        Incoming::Notification { method, params } => match method.as_str() {
            "notifications/tools/list_changed" => {
                shared.tools_changes.fetch_add(1, Ordering::SeqCst);
                shared.tools_changed.store(true, Ordering::SeqCst);
            }
            "notifications/progress" => {
                let token = Progress::read(&params).token;
                let token = token.as_ref();
                let handler = shared.pending.lock().ok().and_then(|p| {
                    p.values()
                        .find(|e| e.progress_token.is_some() && e.progress_token.as_ref() == token)
                        .map(|e| e.handler.clone())
                });
                if let Some(handler) = handler {
                    handler.progress(&params);
                }
            }
            _ => {}
        },
        Incoming::Invalid => {}
    }
}

#[cfg(test)]
mod tests;
