//! Serving Streamable HTTP at `/mcp`: POST (answered with JSON, or with an event stream once
//! a call sends progress or log messages or runs long), GET (a handshake-era session's event
//! stream), DELETE (ends a session). Bound to loopback unless a bearer token is configured;
//! Host and Origin are checked against DNS rebinding; request bodies are limited.
//!
//! Behind a load balancer: `--public-url` names what clients reach (its Host and Origin are
//! this server's too), `GET /healthz` says whether this instance takes requests, and a
//! draining instance ([`Drain`]) refuses new work with 503 while it finishes what it has.
//! `GET /readyz` and `GET /metrics` are answered from `metrics`.
//!
//! Both eras share the endpoint: a request with an `Mcp-Session-Id` belongs to its handshake
//! session, `initialize` opens one, and stateless requests need none. Closing a stateless
//! request's stream cancels it (its command's process group is killed).

use super::provider::Notifier;
use super::server::{self, Headers, Server, Session};
use crate::protocol::params::Params;
use crate::protocol::MessageView;
use crate::protocol::{self, Incoming, HANDSHAKE_VERSIONS};
use crate::transport::framing;
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming as IncomingBody};
use hyper::header::HeaderValue;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Connections served at once.
const MAX_CONNECTIONS: usize = 256;
/// How long a client may take to send its request headers, and then its body.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest request body accepted.
pub const MAX_BODY: usize = 4 * 1024 * 1024;
/// How long a request may run before its answer becomes an event stream (so a client that
/// goes away can be noticed, and the call cancelled).
const STREAM_AFTER: Duration = Duration::from_millis(300);
/// Comments sent on an idle event stream, so proxies keep it open and a departed client is
/// noticed.
const KEEPALIVE: Duration = Duration::from_secs(15);
/// Handshake-era sessions kept at most. When full, the least recently used one goes if it has
/// been idle for `EVICTABLE_AFTER`; otherwise a new session is refused (503).
const MAX_SESSIONS: usize = 1000;
const EVICTABLE_AFTER: Duration = Duration::from_secs(300);
/// A session never used after its `initialize` makes room sooner.
const UNUSED_EVICTABLE_AFTER: Duration = Duration::from_secs(10);
/// What a draining instance asks a client (or balancer) to wait before trying again, seconds.
const RETRY_AFTER: &str = "1";

/// Whether this instance is draining (stopping: no new work, what runs finishes), and how
/// many requests it is still answering.
#[derive(Default)]
pub struct Drain {
    draining: AtomicBool,
    answering: AtomicUsize,
}

impl Drain {
    /// From now on new work is refused.
    pub fn start(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// Requests still being answered.
    pub fn answering(&self) -> usize {
        self.answering.load(Ordering::SeqCst)
    }
}

/// Counts a request as being answered until dropped (answered, or cancelled).
struct Answering(Arc<Drain>);

impl Answering {
    fn new(drain: &Arc<Drain>) -> Answering {
        drain.answering.fetch_add(1, Ordering::SeqCst);
        Answering(drain.clone())
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.answering.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A response body: all at once, or an event stream fed by a channel. Dropping a stream
/// (the client went away) drops its guard, which cancels the request it carries.
pub enum OutBody {
    Full(Option<Bytes>),
    Stream(mpsc::UnboundedReceiver<Bytes>, Option<AbortOnDrop>),
    /// A request's stream, of bounded size: a client that reads slowly slows its call's
    /// messages, and loses progress lines rather than queue them without end.
    Bounded(mpsc::Receiver<Bytes>, Option<AbortOnDrop>),
}

/// Aborts a task when dropped, unless disarmed.
pub struct AbortOnDrop(pub Option<tokio::task::AbortHandle>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(handle) = self.0.take() {
            handle.abort();
        }
    }
}

impl Body for OutBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match self.get_mut() {
            OutBody::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            OutBody::Stream(receiver, guard) => stream_frame(receiver.poll_recv(cx), guard),
            OutBody::Bounded(receiver, guard) => stream_frame(receiver.poll_recv(cx), guard),
        }
    }
}

/// A stream's next frame; at its own end, nothing is left to cancel.
fn stream_frame(
    polled: Poll<Option<Bytes>>,
    guard: &mut Option<AbortOnDrop>,
) -> Poll<Option<Result<Frame<Bytes>, std::convert::Infallible>>> {
    match polled {
        Poll::Ready(Some(bytes)) => Poll::Ready(Some(Ok(Frame::data(bytes)))),
        Poll::Ready(None) => {
            if let Some(guard) = guard {
                guard.0 = None;
            }
            Poll::Ready(None)
        }
        Poll::Pending => Poll::Pending,
    }
}

/// How many messages a request's stream holds for a slow client before progress and log
/// lines are dropped.
const STREAM_KEPT: usize = 256;

/// How the endpoint is guarded.
#[derive(Debug, Clone)]
pub struct Guard {
    /// The address served (its port is part of the allowed Host and Origin).
    pub addr: SocketAddr,
    /// A bearer token every request must carry, when set.
    pub token: Option<String>,
    /// Browser origins admitted besides this server's own (`--allow-origin`), normalised by
    /// [`origin_of`]; a CORS preflight from one of them is answered.
    pub origins: Vec<String>,
    /// The URLs clients reach this server by (`--public-url`, behind a balancer): their
    /// origins are this server's own too.
    pub public: Vec<PublicUrl>,
}

/// A URL clients reach this server by: its origin, and the `Host` values that name it.
#[derive(Debug, Clone, PartialEq)]
pub struct PublicUrl {
    pub origin: String,
    hosts: Vec<String>,
}

impl PublicUrl {
    /// `http(s)://host[:port][/path]`; `None` for anything else (user info, a query).
    pub fn parse(text: &str) -> Option<PublicUrl> {
        let text = text.trim();
        let (scheme, rest) = text.split_once("://")?;
        let authority_end = rest.find('/').unwrap_or(rest.len());
        let (authority, path) = rest.split_at(authority_end);
        if path.contains(['?', '#']) {
            return None;
        }
        let origin = origin_of(&format!("{scheme}://{authority}"))?;
        let host = origin.split_once("://")?.1.to_string();
        let default_port = if origin.starts_with("https:") {
            443
        } else {
            80
        };
        // A Host names the default port or leaves it out: both are this URL.
        let hosts = if host.ends_with(']') || !host.contains(':') {
            vec![format!("{host}:{default_port}"), host]
        } else {
            vec![host]
        };
        Some(PublicUrl { origin, hosts })
    }
}

/// The headers a browser client may send (CORS), besides the simple ones.
const CORS_REQUEST_HEADERS: &str = "Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID";
/// The response headers a browser client may read.
const CORS_EXPOSED_HEADERS: &str = "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate";

/// An origin as `scheme://host[:port]`, lower case, without a default port or a trailing
/// slash; `None` when `text` is not an http(s) origin (a path, a query, user info).
pub fn origin_of(text: &str) -> Option<String> {
    let lower = text.trim().trim_end_matches('/').to_ascii_lowercase();
    let (scheme, rest) = lower.split_once("://")?;
    let default = match scheme {
        "http" => ":80",
        "https" => ":443",
        _ => return None,
    };
    if rest.is_empty() || rest.contains(['/', '?', '#', '@']) || rest.contains(char::is_whitespace)
    {
        return None;
    }
    let host = rest.strip_suffix(default).unwrap_or(rest);
    Some(format!("{scheme}://{host}"))
}

/// A handshake-era HTTP session.
struct HttpSession {
    id: String,
    state: Mutex<Session>,
    created: Instant,
    last_used: Mutex<Instant>,
    /// The GET stream's sender, while one is open.
    listener: Arc<Mutex<Option<mpsc::UnboundedSender<Bytes>>>>,
    /// Requests in flight, by id, for `notifications/cancelled`.
    in_flight: Mutex<HashMap<String, tokio::task::AbortHandle>>,
}

impl HttpSession {
    /// Stops the session's calls in flight (it ended, or was evicted).
    fn stop_calls(&self) {
        if let Ok(mut flights) = self.in_flight.lock() {
            for (_, handle) in flights.drain() {
                handle.abort();
            }
        }
    }
}

/// Everything a connection needs.
struct State {
    server: Arc<Server>,
    guard: Guard,
    sessions: Mutex<HashMap<String, Arc<HttpSession>>>,
    drain: Arc<Drain>,
}

/// Serves until the process is stopped; once `drain` starts, new work is refused.
pub async fn serve(
    server: Arc<Server>,
    listener: tokio::net::TcpListener,
    guard: Guard,
    drain: Arc<Drain>,
) {
    let state = Arc::new(State {
        server,
        guard,
        sessions: Mutex::new(HashMap::new()),
        drain,
    });
    // Connections are capped, so a flood of idle ones cannot take every descriptor; at the
    // cap, the connection idle longest goes (one that never made an authenticated request
    // first), and only when every one is at work does a new one wait.
    let conns = Arc::new(Conns::default());
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _peer)) => stream,
            Err(_) => {
                // Out of descriptors or similar: wait instead of spinning on the error.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let conn = loop {
            let freed = conns.freed.notified();
            match conns.admit() {
                Some(conn) => break conn,
                None => freed.await,
            }
        };
        let state = state.clone();
        let conns = conns.clone();
        tokio::spawn(async move {
            let _open = super::metrics::Connection::open();
            let io = hyper_util::rt::TokioIo::new(stream);
            let this = conn.clone();
            let service = hyper::service::service_fn(move |request| {
                let state = state.clone();
                let conn = this.clone();
                async move {
                    let _busy = Busy::new(&conn);
                    Ok::<_, std::convert::Infallible>(handle(request, state, &conn).await)
                }
            });
            // A client that never finishes its headers is dropped (slowloris).
            let serving = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .keep_alive(true)
                .serve_connection(io, service);
            tokio::pin!(serving);
            tokio::select! {
                _ = serving.as_mut() => {}
                _ = conn.close.notified() => {
                    // Asked to make room: what is being answered finishes, then it closes.
                    serving.as_mut().graceful_shutdown();
                    let _ = serving.await;
                }
            }
            conns.forget(conn.id);
        });
    }
}

/// A connection's standing, for choosing which goes when every place is taken.
struct Conn {
    id: u64,
    last_active: Mutex<Instant>,
    /// Whether it carried a request that passed the token check.
    authenticated: AtomicBool,
    /// Requests being answered on it.
    busy: AtomicUsize,
    close: tokio::sync::Notify,
}

impl Conn {
    /// Who asks, for a client's share of slots, rounds and tasks.
    fn client(&self) -> String {
        format!("connection-{}", self.id)
    }
}

/// Counts a request on its connection while it is answered.
struct Busy(Arc<Conn>);

impl Busy {
    fn new(conn: &Arc<Conn>) -> Busy {
        conn.busy.fetch_add(1, Ordering::SeqCst);
        Busy(conn.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
        *self.0.last_active.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }
}

/// The open connections.
#[derive(Default)]
struct Conns {
    table: Mutex<HashMap<u64, Arc<Conn>>>,
    next: std::sync::atomic::AtomicU64,
    /// Told when a connection has gone.
    freed: tokio::sync::Notify,
}

impl Conns {
    /// A place for a new connection: a free one, or one made by closing the connection idle
    /// longest (unauthenticated ones first, busy ones never); `None` while all are at work.
    fn admit(&self) -> Option<Arc<Conn>> {
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        if table.len() >= MAX_CONNECTIONS {
            let victim = table
                .values()
                .filter(|c| {
                    c.busy.load(Ordering::SeqCst) == 0 || !c.authenticated.load(Ordering::SeqCst)
                })
                .min_by_key(|c| {
                    (
                        c.authenticated.load(Ordering::SeqCst),
                        *c.last_active.lock().unwrap_or_else(|e| e.into_inner()),
                    )
                })
                .cloned()?;
            table.remove(&victim.id);
            victim.close.notify_one();
        }
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        let conn = Arc::new(Conn {
            id,
            last_active: Mutex::new(Instant::now()),
            authenticated: AtomicBool::new(false),
            busy: AtomicUsize::new(0),
            close: tokio::sync::Notify::new(),
        });
        table.insert(id, conn.clone());
        Some(conn)
    }

    fn forget(&self, id: u64) {
        self.table
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
        self.freed.notify_waiters();
    }
}

fn plain(status: StatusCode, text: &str) -> Response<OutBody> {
    let mut response = Response::new(OutBody::Full(Some(Bytes::from(format!("{text}\n")))));
    *response.status_mut() = status;
    response.headers_mut().insert(
        "content-type",
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn json_response(status: u16, message: &Value) -> Response<OutBody> {
    let mut response = Response::new(OutBody::Full(Some(Bytes::from(
        serde_json::to_vec(message).unwrap_or_default(),
    ))));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    response
        .headers_mut()
        .insert("content-type", HeaderValue::from_static("application/json"));
    response
}

fn rpc_error(status: u16, id: Value, code: i64, message: &str) -> Response<OutBody> {
    json_response(status, &protocol::error_response(id, code, message))
}

fn header<'a>(request: &'a Request<IncomingBody>, name: &str) -> Option<&'a str> {
    request.headers().get(name).and_then(|v| v.to_str().ok())
}

/// Whether a Host names this server: the address bound, or a public URL's host.
fn allowed_host(host: &str, guard: &Guard) -> bool {
    let lower = host.to_ascii_lowercase();
    names_bound(host, guard)
        || guard
            .public
            .iter()
            .any(|public| public.hosts.contains(&lower))
}

/// Whether a Host or Origin names this loopback server (`localhost`, `127.0.0.1`, `[::1]`,
/// with the port served), or the address bound when it is not loopback.
fn names_bound(host: &str, guard: &Guard) -> bool {
    let port = guard.addr.port();
    let bound = guard.addr.ip().to_string();
    let names: Vec<String> = if guard.addr.ip().is_loopback() {
        vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()]
    } else if guard.addr.ip().is_unspecified() {
        // Bound everywhere: the token is the guard; any Host may reach it.
        return true;
    } else if guard.addr.is_ipv6() {
        vec![format!("[{bound}]")]
    } else {
        vec![bound]
    };
    // Host names are case-insensitive (`LOCALHOST:8765` is this server too).
    let host = host.to_ascii_lowercase();
    names
        .iter()
        .any(|name| host == format!("{name}:{port}") || (port == 80 && host == *name))
}

/// DNS-rebinding protection: a Host that is not this server is refused (421).
fn check_host(request: &Request<IncomingBody>, guard: &Guard) -> Option<Response<OutBody>> {
    let host = header(request, "host")?;
    (!allowed_host(host, guard))
        .then(|| plain(StatusCode::MISDIRECTED_REQUEST, "Invalid Host header"))
}

/// The Origin (403 unless this server's own or admitted) and the token (401).
fn check_guard(request: &Request<IncomingBody>, guard: &Guard) -> Option<Response<OutBody>> {
    if let Some(origin) = header(request, "origin") {
        let host = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
            .unwrap_or("");
        // A public URL's origin matches whole, scheme and port included.
        let public =
            origin_of(origin).is_some_and(|origin| guard.public.iter().any(|p| p.origin == origin));
        if !names_bound(host, guard) && !public && admitted_origin(request, guard).is_none() {
            return Some(plain(StatusCode::FORBIDDEN, "Invalid Origin header"));
        }
    }
    if let Some(token) = &guard.token {
        let given = header(request, "authorization").and_then(|v| v.strip_prefix("Bearer "));
        let matches = given.is_some_and(|g| constant_time_eq(g.as_bytes(), token.as_bytes()));
        if !matches {
            let why = match given {
                Some(_) => "the bearer token is not the one this server was started with",
                None => "a bearer token is required",
            };
            let mut response = plain(StatusCode::UNAUTHORIZED, why);
            response
                .headers_mut()
                .insert("www-authenticate", HeaderValue::from_static("Bearer"));
            return Some(response);
        }
    }
    None
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The request's Origin, when `--allow-origin` admits it.
fn admitted_origin(request: &Request<IncomingBody>, guard: &Guard) -> Option<String> {
    let origin = origin_of(header(request, "origin")?)?;
    guard.origins.contains(&origin).then_some(origin)
}

/// A CORS preflight from an admitted origin: what it may send. Preflights carry no token, so
/// this is answered before the token is asked for; every other origin gets 403.
fn preflight(request: &Request<IncomingBody>, guard: &Guard) -> Response<OutBody> {
    let Some(origin) = admitted_origin(request, guard) else {
        return plain(StatusCode::FORBIDDEN, "Invalid Origin header");
    };
    let mut response = Response::new(OutBody::Full(None));
    *response.status_mut() = StatusCode::NO_CONTENT;
    let headers = response.headers_mut();
    headers.insert(
        "access-control-allow-methods",
        HeaderValue::from_static("GET, POST, DELETE"),
    );
    headers.insert(
        "access-control-allow-headers",
        HeaderValue::from_static(CORS_REQUEST_HEADERS),
    );
    headers.insert("access-control-max-age", HeaderValue::from_static("600"));
    allow_origin(&mut response, &origin);
    response
}

/// Lets the admitted `origin` read a response (and the headers a client needs).
fn allow_origin(response: &mut Response<OutBody>, origin: &str) {
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(origin) {
        headers.insert("access-control-allow-origin", value);
    }
    headers.insert(
        "access-control-expose-headers",
        HeaderValue::from_static(CORS_EXPOSED_HEADERS),
    );
    headers.insert("vary", HeaderValue::from_static("Origin"));
}

/// `GET /healthz` for a balancer: whether this instance takes new requests. It needs no
/// token and says nothing of what is served.
fn health(request: &Request<IncomingBody>, drain: &Drain) -> Response<OutBody> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, "use GET");
        response
            .headers_mut()
            .insert("allow", HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    if drain.is_draining() {
        return draining(plain(StatusCode::SERVICE_UNAVAILABLE, "draining"));
    }
    plain(StatusCode::OK, "ok")
}

/// `GET /readyz` (no token, as `/healthz`), `GET /metrics` (guarded as `/mcp` is), and 503
/// for `/mcp` until serving has started; `None` otherwise.
fn service_endpoint(request: &Request<IncomingBody>, state: &State) -> Option<Response<OutBody>> {
    let path = request.uri().path();
    if path == "/mcp" && !super::metrics::is_ready(false) {
        return Some(draining(plain(StatusCode::SERVICE_UNAVAILABLE, "starting")));
    }
    if path != "/readyz" && path != "/metrics" {
        return None;
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, "use GET");
        response
            .headers_mut()
            .insert("allow", HeaderValue::from_static("GET, HEAD"));
        return Some(response);
    }
    if path == "/readyz" {
        return Some(match super::metrics::is_ready(state.drain.is_draining()) {
            true => plain(StatusCode::OK, "ready"),
            false if state.drain.is_draining() => {
                draining(plain(StatusCode::SERVICE_UNAVAILABLE, "draining"))
            }
            false => plain(StatusCode::SERVICE_UNAVAILABLE, "starting"),
        });
    }
    if let Some(refusal) =
        check_host(request, &state.guard).or_else(|| check_guard(request, &state.guard))
    {
        return Some(refusal);
    }
    let gauges = super::metrics::Gauges {
        sessions: state.sessions.lock().map(|s| s.len()).unwrap_or(0),
        tasks: state.server.tasks_running(),
    };
    let mut response = Response::new(OutBody::Full(Some(Bytes::from(super::metrics::render(
        &gauges,
    )))));
    response.headers_mut().insert(
        "content-type",
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    Some(response)
}

/// Says "try again elsewhere, soon" on a draining instance's refusal.
fn draining(mut response: Response<OutBody>) -> Response<OutBody> {
    response
        .headers_mut()
        .insert("retry-after", HeaderValue::from_static(RETRY_AFTER));
    response
}

async fn handle(
    request: Request<IncomingBody>,
    state: Arc<State>,
    conn: &Conn,
) -> Response<OutBody> {
    let mut response = guarded(request, state, conn).await;
    // A connection that has made no authenticated request holds no place past its answer
    // (a balancer's /healthz, a client without the token).
    if !conn.authenticated.load(Ordering::SeqCst) {
        response
            .headers_mut()
            .insert("connection", HeaderValue::from_static("close"));
    }
    response
}

async fn guarded(
    request: Request<IncomingBody>,
    state: Arc<State>,
    conn: &Conn,
) -> Response<OutBody> {
    if request.uri().path() == "/healthz" {
        return health(&request, &state.drain);
    }
    if let Some(response) = service_endpoint(&request, &state) {
        return response;
    }
    if request.uri().path() != "/mcp" {
        return plain(StatusCode::NOT_FOUND, "the MCP endpoint is /mcp");
    }
    if let Some(refusal) = check_host(&request, &state.guard) {
        return refusal;
    }
    if request.method() == Method::OPTIONS {
        return preflight(&request, &state.guard);
    }
    let admitted = admitted_origin(&request, &state.guard);
    let mut response = match check_guard(&request, &state.guard) {
        Some(refusal) => refusal,
        None => {
            conn.authenticated.store(true, Ordering::SeqCst);
            match *request.method() {
                Method::POST => post(request, state, conn.client()).await,
                Method::GET => get(request, state),
                Method::DELETE => delete(request, state),
                _ => {
                    let mut response =
                        plain(StatusCode::METHOD_NOT_ALLOWED, "use POST, GET or DELETE");
                    response.headers_mut().insert(
                        "allow",
                        HeaderValue::from_static("GET, POST, DELETE, OPTIONS"),
                    );
                    response
                }
            }
        }
    };
    if let Some(origin) = admitted {
        allow_origin(&mut response, &origin);
    }
    response
}

/// The session a request names: none, a live one, or (`Err`) the 404 for an unknown one.
#[allow(clippy::result_large_err)]
fn session_of(
    request: &Request<IncomingBody>,
    state: &State,
) -> Result<Option<Arc<HttpSession>>, Response<OutBody>> {
    let Some(id) = header(request, "mcp-session-id") else {
        return Ok(None);
    };
    let sessions = state.sessions.lock().unwrap_or_else(|e| e.into_inner());
    match sessions.get(id) {
        Some(session) => {
            if let Ok(mut used) = session.last_used.lock() {
                *used = Instant::now();
            }
            Ok(Some(session.clone()))
        }
        None => Err(rpc_error(
            404,
            Value::Null,
            protocol::INVALID_REQUEST,
            "Session not found",
        )),
    }
}

/// A new session id from the system's random source (session ids must not be guessable);
/// `None` when it fails: never a predictable id.
fn new_session_id() -> Option<String> {
    let mut bytes = [0u8; 16];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn sse_headers(response: &mut Response<OutBody>) {
    let headers = response.headers_mut();
    headers.insert(
        "content-type",
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        "cache-control",
        HeaderValue::from_static("no-cache, no-transform"),
    );
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
}

async fn post(
    request: Request<IncomingBody>,
    state: Arc<State>,
    connection: String,
) -> Response<OutBody> {
    let session = match session_of(&request, &state) {
        Ok(session) => session,
        Err(response) => return response,
    };
    let headers = Headers {
        protocol_version: header(&request, "mcp-protocol-version").map(str::to_string),
        method: header(&request, "mcp-method").map(str::to_string),
        name: header(&request, "mcp-name").map(str::to_string),
        params: request
            .headers()
            .iter()
            .filter_map(|(name, value)| {
                let suffix = name.as_str().strip_prefix("mcp-param-")?;
                Some((suffix.to_string(), value.to_str().ok().map(str::to_string)))
            })
            .collect(),
    };
    if let Some(length) = header(&request, "content-length").and_then(|l| l.parse::<usize>().ok()) {
        if length > MAX_BODY {
            return plain(StatusCode::PAYLOAD_TOO_LARGE, "request body too large");
        }
    }
    let reading = http_body_util::Limited::new(request.into_body(), MAX_BODY).collect();
    let body = match tokio::time::timeout(BODY_TIMEOUT, reading).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(_)) => return plain(StatusCode::PAYLOAD_TOO_LARGE, "request body too large"),
        Err(_) => {
            return plain(
                StatusCode::REQUEST_TIMEOUT,
                "the request body did not arrive in time",
            )
        }
    };
    let message = match framing::decode(&body) {
        Ok(message) => message,
        Err(_) => return rpc_error(400, Value::Null, protocol::PARSE_ERROR, "Parse error"),
    };
    if message.is_array() {
        return rpc_error(
            400,
            Value::Null,
            protocol::INVALID_REQUEST,
            "batches are not supported",
        );
    }
    match protocol::classify(message) {
        Incoming::Request { id, method, params } => {
            let modern = server::is_modern(&method, &params)
                || headers
                    .protocol_version
                    .as_deref()
                    .is_some_and(|v| !HANDSHAKE_VERSIONS.contains(&v));
            // A draining instance finishes what it has: its sessions' requests, its tasks,
            // its calls' next rounds. New work goes to another instance.
            let finishing = session.is_some()
                || method.starts_with("tasks/")
                || Params::new(&params).request_state().is_some();
            if state.drain.is_draining() && !finishing {
                return draining(rpc_error(
                    503,
                    id,
                    protocol::INTERNAL_ERROR,
                    "this instance is shutting down: send the request again (to another instance)",
                ));
            }
            if modern {
                let call = Call {
                    client: connection,
                    session: None,
                    headers: Some(headers),
                };
                return request_response(state, id, method, params, call).await;
            }
            if method == "initialize" {
                let Some(id_text) = new_session_id() else {
                    return rpc_error(
                        500,
                        id,
                        protocol::INTERNAL_ERROR,
                        "no randomness for a session id: try again",
                    );
                };
                let now = Instant::now();
                let created = Arc::new(HttpSession {
                    id: id_text.clone(),
                    state: Mutex::new(Session::default()),
                    created: now,
                    last_used: Mutex::new(now),
                    listener: Arc::new(Mutex::new(None)),
                    in_flight: Mutex::new(HashMap::new()),
                });
                // Messages outside requests go to the session's GET stream, while one is open.
                let listener = created.listener.clone();
                created
                    .state
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .outside = Some(Arc::new(move |note| {
                    if let Some(stream) = listener.lock().ok().and_then(|l| l.clone()) {
                        let _ = stream.send(Bytes::from(framing::encode_event(None, &note)));
                    }
                }));
                {
                    let mut sessions = state.sessions.lock().unwrap_or_else(|e| e.into_inner());
                    if sessions.len() >= MAX_SESSIONS {
                        // Only a session left idle for a while, or one never used after its
                        // `initialize`, makes room: a flood of new sessions must not push out
                        // the clients that are working.
                        let oldest = sessions
                            .iter()
                            .map(|(k, s)| {
                                let used = *s.last_used.lock().unwrap_or_else(|e| e.into_inner());
                                (k, used, used == s.created)
                            })
                            .filter(|(_, used, unused)| {
                                used.elapsed() >= EVICTABLE_AFTER
                                    || (*unused && used.elapsed() >= UNUSED_EVICTABLE_AFTER)
                            })
                            .min_by_key(|(_, used, _)| *used)
                            .map(|(k, _, _)| k.clone());
                        match oldest {
                            Some(oldest) => {
                                if let Some(evicted) = sessions.remove(&oldest) {
                                    evicted.stop_calls();
                                }
                            }
                            None => {
                                let mut response = rpc_error(
                                    503,
                                    id,
                                    protocol::INTERNAL_ERROR,
                                    "too many open sessions: end finished ones with DELETE, or retry later",
                                );
                                response
                                    .headers_mut()
                                    .insert("retry-after", HeaderValue::from_static("60"));
                                return response;
                            }
                        }
                    }
                    sessions.insert(id_text.clone(), created.clone());
                }
                let call = Call {
                    client: format!("session-{id_text}"),
                    session: Some(created),
                    headers: None,
                };
                let mut response = request_response(state, id, method, params, call).await;
                // The id is hex digits, always a valid header value.
                if let Ok(value) = HeaderValue::from_str(&id_text) {
                    response.headers_mut().insert("mcp-session-id", value);
                }
                return response;
            }
            let Some(session) = session else {
                return rpc_error(400, id, protocol::INVALID_REQUEST, "Bad Request: missing Mcp-Session-Id (send initialize first, or use the 2026-07-28 per-request _meta)");
            };
            let call = Call {
                client: format!("session-{}", session.id),
                session: Some(session),
                headers: None,
            };
            request_response(state, id, method, params, call).await
        }
        Incoming::Notification { method, params } => {
            if method == "notifications/cancelled" {
                if let Some(session) = session {
                    let key = Params::new(&params).request_id().map(Value::to_string);
                    let handle = key
                        .and_then(|k| session.in_flight.lock().ok().and_then(|mut f| f.remove(&k)));
                    if let Some(handle) = handle {
                        handle.abort();
                    }
                }
            }
            accepted()
        }
        // The client's answers to what a command asked, in the session that asked.
        Incoming::Response { id, outcome } => {
            if let Some(session) = session {
                let outgoing = session
                    .state
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .outgoing
                    .clone();
                outgoing.resolve(&id, outcome);
            }
            accepted()
        }
        Incoming::BadResponse { .. } => accepted(),
        Incoming::Invalid => rpc_error(
            400,
            Value::Null,
            protocol::INVALID_REQUEST,
            "Invalid Request",
        ),
    }
}

fn accepted() -> Response<OutBody> {
    let mut response = Response::new(OutBody::Full(None));
    *response.status_mut() = StatusCode::ACCEPTED;
    response
}

/// Who makes a request, and in what: its client's name, its session (handshake era), its
/// headers (stateless era).
struct Call {
    client: String,
    session: Option<Arc<HttpSession>>,
    headers: Option<Headers>,
}

/// Runs one request: answered as JSON if it finishes soon without sending anything else,
/// else as an event stream that carries its notifications and then its response.
async fn request_response(
    state: Arc<State>,
    id: Value,
    method: String,
    params: Value,
    call: Call,
) -> Response<OutBody> {
    let Call {
        client,
        session,
        headers,
    } = call;
    let key = id.to_string();
    if let Some(session) = &session {
        // A request whose client left early may still be listed; once it has finished, its
        // id is free again.
        let duplicate = session
            .in_flight
            .lock()
            .map(|f| f.get(&key).is_some_and(|h| !h.is_finished()))
            .unwrap_or(false);
        if duplicate {
            // Its answer could not be told from the first's, nor could it be cancelled.
            return rpc_error(
                200,
                id,
                protocol::INVALID_REQUEST,
                "a request with this id is already in flight",
            );
        }
    }
    let (events, mut events_in) = mpsc::channel::<Value>(STREAM_KEPT);
    let (done, mut done_in) = tokio::sync::oneshot::channel();
    let server = state.server.clone();
    let task_session = session.clone();
    let answering = Answering::new(&state.drain);
    let task = tokio::spawn(async move {
        let _answering = answering;
        let notify: Notifier = Arc::new(move |note| {
            match events.try_send(note) {
                Ok(()) => {}
                // Progress and log lines are dropped for a client that reads too slowly; a
                // request to the client (a question, one of a few) waits for room.
                Err(mpsc::error::TrySendError::Full(note))
                    if MessageView::new(&note).id().is_some() =>
                {
                    let events = events.clone();
                    tokio::spawn(async move {
                        let _ = events.send(note).await;
                    });
                }
                Err(_) => {}
            }
        });
        let reply = server
            .answer(
                &client,
                id,
                &method,
                params,
                task_session.as_ref().map(|s| &s.state),
                headers.as_ref(),
                notify,
            )
            .await;
        let _ = done.send(reply);
    });
    if let Some(session) = &session {
        if let Ok(mut flights) = session.in_flight.lock() {
            flights.retain(|_, handle| !handle.is_finished());
            flights.insert(key.clone(), task.abort_handle());
        }
    }
    // A request ends when its client leaves, from the start: hyper drops this future when
    // the connection closes, and the guard with it. A session's call too: its questions go
    // on this stream, and nobody could answer them once it is gone.
    let guard = Some(AbortOnDrop(Some(task.abort_handle())));
    // A quick answer with nothing sent before it is plain JSON, with its HTTP status; an
    // answer with notifications before it, or a slow one, is an event stream.
    let mut notes: Vec<Value> = Vec::new();
    let mut reply: Option<server::Reply> = None;
    let deadline = tokio::time::sleep(STREAM_AFTER);
    tokio::pin!(deadline);
    let mut events_open = true;
    loop {
        tokio::select! {
            biased;
            answered = &mut done_in => {
                match answered {
                    Ok(answered) => reply = Some(answered),
                    Err(_) => {
                        forget(&session, &key);
                        return rpc_error(200, Value::Null, protocol::INTERNAL_ERROR, "the request was cancelled");
                    }
                }
                break;
            }
            note = events_in.recv(), if events_open => match note {
                Some(note) => {
                    notes.push(note);
                    break;
                }
                // The request's notifier is gone: only its answer is still to come.
                None => events_open = false,
            },
            _ = &mut deadline => break,
        }
    }
    // Whatever was sent before the answer arrived goes out before it.
    while let Ok(note) = events_in.try_recv() {
        notes.push(note);
    }
    if let (Some(answered), true) = (&reply, notes.is_empty()) {
        forget(&session, &key);
        return json_response(answered.status, &answered.message);
    }
    let (stream, body) = mpsc::channel::<Bytes>(STREAM_KEPT);
    // From here the request ends when its stream does.
    let mut response = Response::new(OutBody::Bounded(body, guard));
    sse_headers(&mut response);
    let session_for_task = session.clone();
    tokio::spawn(async move {
        let event = |message: &Value| Bytes::from(framing::encode_event(None, message));
        for note in &notes {
            let _ = stream.send(event(note)).await;
        }
        if let Some(answered) = reply {
            let _ = stream.send(event(&answered.message)).await;
            forget(&session_for_task, &key);
            return;
        }
        loop {
            tokio::select! {
                biased;
                note = events_in.recv(), if events_open => match note {
                    Some(note) => {
                        if stream.send(event(&note)).await.is_err() {
                            break;
                        }
                    }
                    None => events_open = false,
                },
                answered = &mut done_in => {
                    while let Ok(note) = events_in.try_recv() {
                        let _ = stream.send(event(&note)).await;
                    }
                    if let Ok(answered) = answered {
                        let _ = stream.send(event(&answered.message)).await;
                    }
                    break;
                }
                _ = tokio::time::sleep(KEEPALIVE) => {
                    if stream.send(Bytes::from_static(b": keepalive\n\n")).await.is_err() {
                        break;
                    }
                }
            }
        }
        forget(&session_for_task, &key);
    });
    response
}

fn forget(session: &Option<Arc<HttpSession>>, key: &str) {
    if let Some(session) = session {
        if let Ok(mut flights) = session.in_flight.lock() {
            flights.remove(key);
        }
    }
}

/// GET: a handshake-era session's event stream (one at a time).
fn get(request: Request<IncomingBody>, state: Arc<State>) -> Response<OutBody> {
    let session = match session_of(&request, &state) {
        Ok(Some(session)) => session,
        Ok(None) => {
            let mut response = plain(
                StatusCode::METHOD_NOT_ALLOWED,
                "GET needs an Mcp-Session-Id; stateless clients use POST only",
            );
            response
                .headers_mut()
                .insert("allow", HeaderValue::from_static("POST"));
            return response;
        }
        Err(response) => return response,
    };
    let accepts = header(&request, "accept")
        .is_some_and(|a| a.contains("text/event-stream") || a.contains("*/*"));
    if !accepts {
        return plain(
            StatusCode::NOT_ACCEPTABLE,
            "GET needs Accept: text/event-stream",
        );
    }
    let mut listener = session.listener.lock().unwrap_or_else(|e| e.into_inner());
    if listener.as_ref().is_some_and(|l| !l.is_closed()) {
        return plain(
            StatusCode::CONFLICT,
            "this session already has an event stream",
        );
    }
    let (stream, body) = mpsc::unbounded_channel::<Bytes>();
    let keepalive = stream.clone();
    *listener = Some(stream);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(KEEPALIVE).await;
            if keepalive
                .send(Bytes::from_static(b": keepalive\n\n"))
                .is_err()
            {
                break;
            }
        }
    });
    let mut response = Response::new(OutBody::Stream(body, None));
    sse_headers(&mut response);
    response
}

/// DELETE: ends a handshake-era session.
fn delete(request: Request<IncomingBody>, state: Arc<State>) -> Response<OutBody> {
    let Some(id) = header(&request, "mcp-session-id") else {
        let mut response = plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "DELETE needs an Mcp-Session-Id",
        );
        response
            .headers_mut()
            .insert("allow", HeaderValue::from_static("POST"));
        return response;
    };
    let removed = state
        .sessions
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(id);
    match removed {
        Some(session) => {
            session.stop_calls();
            plain(StatusCode::OK, "session ended")
        }
        None => rpc_error(
            404,
            Value::Null,
            protocol::INVALID_REQUEST,
            "Session not found",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_checked_against_the_address_served() {
        let guard = Guard {
            addr: "127.0.0.1:8765".parse().unwrap(),
            token: None,
            origins: Vec::new(),
            public: Vec::new(),
        };
        assert!(allowed_host("localhost:8765", &guard));
        assert!(allowed_host("127.0.0.1:8765", &guard));
        assert!(allowed_host("[::1]:8765", &guard));
        assert!(allowed_host("LocalHost:8765", &guard));
        assert!(!allowed_host("evil.example.com", &guard));
        assert!(!allowed_host("evil.example.com:8765", &guard));
        assert!(!allowed_host("localhost:9999", &guard));
        assert!(constant_time_eq(b"abc", b"abc"));
        assert_eq!(
            origin_of("HTTPS://App.Example.com:443/").as_deref(),
            Some("https://app.example.com")
        );
        assert_eq!(
            origin_of("http://localhost:6274").as_deref(),
            Some("http://localhost:6274")
        );
        for bad in [
            "file:///x",
            "https://a.example/path",
            "https://u@a.example",
            "a.example",
        ] {
            assert_eq!(origin_of(bad), None, "{bad}");
        }
        assert!(!constant_time_eq(b"abc", b"abd"));
    }

    #[test]
    fn a_public_url_names_its_hosts_and_origin() {
        let public = PublicUrl::parse("https://MCP.example.com/mcp").unwrap();
        assert_eq!(public.origin, "https://mcp.example.com");
        assert_eq!(public.hosts, ["mcp.example.com:443", "mcp.example.com"]);
        let public = PublicUrl::parse("http://localhost:8080/mcp").unwrap();
        assert_eq!(public.origin, "http://localhost:8080");
        assert_eq!(public.hosts, ["localhost:8080"]);
        let public = PublicUrl::parse("http://[::1]").unwrap();
        assert_eq!(public.hosts, ["[::1]:80", "[::1]"]);
        for bad in [
            "mcp.example.com",
            "ftp://mcp.example.com",
            "https://u@mcp.example.com/",
            "https:///mcp",
            "https://mcp.example.com/mcp?x=1",
        ] {
            assert_eq!(PublicUrl::parse(bad), None, "{bad}");
        }
    }
}
