//! Streamable HTTP as a client: one POST per message, answered with JSON or an SSE stream;
//! `Mcp-Session-Id` and `MCP-Protocol-Version` kept across requests (handshake era), the
//! `Mcp-Method`/`Mcp-Name` headers of the stateless era, and a GET stream when offered.
//!
//! Requests may be in flight concurrently (each POST answers on its own), so the connection
//! is shared and its session state sits behind locks. Redirects are followed only to the same
//! origin and only when they keep the method (307/308): configured headers never reach another
//! host. Bodies and events are limited in size.

use super::framing::{self, FrameError, SseParser};
use super::stdio::forward;
use super::{Connection, Event, EventSender, Transport};
use crate::protocol::params::Params;
use crate::protocol::{MessageView, STATELESS_VERSION};
use crate::{Error, Result};
use base64::Engine;
use reqwest::header::{CONTENT_TYPE, LOCATION};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use tokio::sync::mpsc;

/// The session header of the Streamable HTTP transport.
const MCP_SESSION_ID: &str = "mcp-session-id";
/// The nonce a DPoP-bound server asks proofs to carry (RFC 9449).
const DPOP_NONCE: &str = "dpop-nonce";

/// How many same-origin redirects one request may follow.
const MAX_REDIRECTS: usize = 5;

/// A connection to one MCP endpoint.
pub struct HttpConnection {
    client: reqwest::Client,
    url: reqwest::Url,
    /// The URL as configured (unexpanded) or redacted, for messages.
    shown_url: String,
    headers: BTreeMap<String, String>,
    session_id: Mutex<Option<String>>,
    /// The agreed protocol version, sent as `MCP-Protocol-Version` once known.
    protocol_version: Mutex<Option<String>>,
    sender: EventSender,
    event_stream_open: AtomicBool,
    max_message: usize,
    sign_in: SignIn,
    /// Set when the server no longer knows the session (it answered 404, or 400 naming the
    /// session, or could not be reached while one was held); cleared by the next `initialize`
    /// it accepts. A session in this state shakes hands again before its next request.
    session_lost: AtomicBool,
    /// Set when the last request could not reach the server; cleared by any answer.
    unreachable: AtomicBool,
    /// The 2024 HTTP+SSE transport: chosen by the config (`"transport": "sse"`) or when the
    /// server refuses a Streamable HTTP POST; then messages are POSTed to the address its
    /// event stream announced, and answers arrive on that stream.
    legacy: Legacy,
}

#[derive(Default)]
struct Legacy {
    preferred: bool,
    tried: AtomicBool,
    endpoint: tokio::sync::Mutex<Option<reqwest::Url>>,
    reader: Mutex<Option<tokio::task::AbortHandle>>,
}

/// How this connection signs in: OAuth tokens stored for its URL, unless the config sends its
/// own Authorization header.
pub struct SignIn {
    /// The command that signs in (`ferry auth github`), for the hint of a refused call.
    pub command: String,
    /// The server's `"oauth"` block, its secret expanded (client credentials sign in here,
    /// with no person needed).
    pub config: Option<crate::auth::OAuthConfig>,
    /// Whether stored tokens are used at all (not when headers carry Authorization).
    enabled: bool,
    credential: Mutex<Option<crate::auth::Credential>>,
    /// The nonce the server last asked DPoP proofs to carry (RFC 9449 section 9).
    dpop_nonce: Mutex<Option<String>>,
    /// The token file as it was when last read (`None` inside: there was none), or `None`
    /// before the first read. A sign-in or logout in another process changes the file, and
    /// the next request reads it again: a warm session never keeps an old token.
    loaded: Mutex<Option<Option<FileStamp>>>,
}

/// What tells one version of a file from another (tokens are saved by renames).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    inode: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileStamp {
    fn of(path: &std::path::Path) -> Option<FileStamp> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path).ok()?;
        Some(FileStamp {
            inode: meta.ino(),
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }
}

impl SignIn {
    pub fn new(command: String, config: Option<crate::auth::OAuthConfig>) -> SignIn {
        SignIn {
            command,
            config,
            enabled: true,
            credential: Mutex::new(None),
            dpop_nonce: Mutex::new(None),
            loaded: Mutex::new(None),
        }
    }

    fn credential(&self) -> Option<crate::auth::Credential> {
        self.credential.lock().ok().and_then(|c| c.clone())
    }

    fn set_credential(&self, credential: Option<crate::auth::Credential>) {
        if let Ok(mut c) = self.credential.lock() {
            *c = credential;
        }
    }

    /// The Authorization header (and DPoP proof) for one request, if signed in.
    fn headers(&self, method: &str, url: &reqwest::Url) -> Vec<(String, String)> {
        let nonce = self.dpop_nonce.lock().ok().and_then(|n| n.clone());
        self.credential()
            .map(|c| c.headers(method, url.as_str(), nonce.as_deref()))
            .unwrap_or_default()
    }

    /// After a 401: when a DPoP-bound request was refused for want of a (new) nonce, keeps
    /// the one the server gave; `true` if the request may be sent again with it.
    fn take_dpop_nonce(&self, response: &reqwest::Response) -> bool {
        let bound = self.credential().is_some_and(|c| c.dpop.is_some());
        let asked = response
            .headers()
            .get_all("www-authenticate")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.contains("use_dpop_nonce"));
        let given = response
            .headers()
            .get(DPOP_NONCE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        match (bound && asked, given) {
            (true, Some(nonce)) => {
                let mut current = self.dpop_nonce.lock().unwrap_or_else(|e| e.into_inner());
                let fresh = current.as_deref() != Some(nonce.as_str());
                *current = Some(nonce);
                fresh
            }
            _ => false,
        }
    }
}

/// What a refusal's `WWW-Authenticate` says.
pub(crate) fn challenge_of(response: &reqwest::Response) -> crate::auth::Challenge {
    response
        .headers()
        .get_all("www-authenticate")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| {
            let v = v.trim_start().to_ascii_lowercase();
            v.starts_with("bearer") || v.starts_with("dpop")
        })
        .map(crate::auth::Challenge::parse)
        .unwrap_or_default()
}

/// A URL for messages: scheme, host and path; credentials and query values never shown.
pub fn redacted_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(parsed) => {
            let mut shown = format!("{}://{}", parsed.scheme(), parsed.host_str().unwrap_or(""));
            if let Some(port) = parsed.port() {
                shown.push_str(&format!(":{port}"));
            }
            shown.push_str(parsed.path());
            if parsed.query().is_some() {
                shown.push_str("?...");
            }
            shown
        }
        Err(_) => "(an invalid URL)".into(),
    }
}

impl HttpConnection {
    /// Prepares a connection; nothing is sent until the first message. `shown_url` is what
    /// messages call it (the URL as configured, before `${VAR}` expansion).
    pub fn connect(
        url: &str,
        shown_url: &str,
        headers: BTreeMap<String, String>,
        max_message: usize,
        mut sign_in: SignIn,
        legacy_sse: bool,
    ) -> Result<Transport> {
        sign_in.enabled = !headers
            .keys()
            .any(|k| k.eq_ignore_ascii_case("authorization"));
        let parsed = reqwest::Url::parse(url)
            .map_err(|e| Error::usage(format!("invalid server URL {shown_url:?}: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(Error::usage(format!(
                "unsupported URL scheme {:?}: use http or https",
                parsed.scheme()
            )));
        }
        for (name, value) in &headers {
            if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err()
                || reqwest::header::HeaderValue::from_str(value).is_err()
            {
                return Err(Error::usage(format!(
                    "the header {name:?} for {shown_url} has a name or value HTTP cannot carry"
                ))
                .with_hint("fix the server's \"headers\" in its configuration"));
            }
        }
        let client = reqwest::Client::builder()
            .user_agent(concat!("ferry/", env!("CARGO_PKG_VERSION")))
            .redirect(reqwest::redirect::Policy::none())
            .referer(false)
            .build()
            .map_err(|e| Error::server(format!("could not set up HTTP: {e}")))?;
        let (sender, incoming) = mpsc::unbounded_channel();
        Ok(Transport {
            connection: Connection::Http(Box::new(HttpConnection {
                client,
                url: parsed,
                shown_url: shown_url.to_string(),
                headers,
                session_id: Mutex::new(None),
                protocol_version: Mutex::new(None),
                sender,
                event_stream_open: AtomicBool::new(false),
                max_message,
                sign_in,
                session_lost: AtomicBool::new(false),
                unreachable: AtomicBool::new(false),
                legacy: Legacy {
                    preferred: legacy_sse,
                    ..Legacy::default()
                },
            })),
            incoming,
        })
    }

    /// The stored token for this server, loaded (and refreshed if it is about to expire)
    /// before the first request, and again whenever the token file changed since (a new
    /// sign-in, a wider scope, a logout, another process's refresh).
    async fn load_bearer(&self) {
        if !self.sign_in.enabled {
            return;
        }
        let url = self.url.as_str();
        let now = FileStamp::of(&crate::auth::token_file(url));
        {
            let mut loaded = self
                .sign_in
                .loaded
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if *loaded == Some(now) {
                return;
            }
            *loaded = Some(now);
        }
        let credential = crate::auth::bearer(url, self.sign_in.config.as_ref()).await;
        self.sign_in.set_credential(credential);
    }

    /// After a 401 or 403: a new token when one can be had without a person (a refresh, or
    /// client credentials), `true` if so and the request may be sent again.
    async fn renew(&self, status: reqwest::StatusCode, challenge: &crate::auth::Challenge) -> bool {
        use crate::auth;
        if !self.sign_in.enabled {
            return false;
        }
        let url = self.url.as_str();
        auth::remember(url, challenge);
        let scope_short = challenge.error.as_deref() == Some("insufficient_scope");
        if status == reqwest::StatusCode::UNAUTHORIZED && self.sign_in.credential().is_some() {
            auth::note_refusal(url, challenge).await;
            if let Ok(renewed) = auth::refresh(url, self.sign_in.config.as_ref()).await {
                self.sign_in.set_credential(Some(renewed.credential()));
                return true;
            }
        }
        if scope_short {
            auth::note_refusal(url, challenge).await;
        }
        let machine = self
            .sign_in
            .config
            .as_ref()
            .is_some_and(crate::auth::OAuthConfig::machine);
        if machine {
            let config = self.sign_in.config.clone().unwrap_or_default();
            let signed = auth::sign_in(
                url,
                &self.shown_url,
                challenge,
                &config,
                auth::Browser::Paste,
                &|_| {},
            )
            .await;
            if let Ok(stored) = signed {
                self.sign_in.set_credential(Some(stored.credential()));
                return true;
            }
        }
        false
    }

    pub(super) fn set_protocol_version(&self, version: &str) {
        if let Ok(mut v) = self.protocol_version.lock() {
            *v = Some(version.to_string());
        }
    }

    fn protocol_version(&self) -> Option<String> {
        self.protocol_version.lock().ok().and_then(|v| v.clone())
    }

    fn session_id(&self) -> Option<String> {
        self.session_id.lock().ok().and_then(|v| v.clone())
    }

    fn post(&self, url: &reqwest::Url, message: &Value, body: Vec<u8>) -> reqwest::RequestBuilder {
        let mut request = self
            .client
            .post(url.clone())
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json");
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        for (name, value) in self.sign_in.headers("POST", url) {
            request = request.header(name, value);
        }
        if let Some(version) = self.protocol_version() {
            if version == STATELESS_VERSION {
                let view = MessageView::new(message);
                if let Some(method) = view.method() {
                    request = request.header("Mcp-Method", method);
                    // What a request names, for intermediaries to route on (SEP-2243; a
                    // task's id, SEP-2663, so its polls reach the instance holding it).
                    let params = view.params().map(Params::new);
                    let name = params.and_then(|params| match method {
                        "tools/call" | "prompts/get" => params.name(),
                        "resources/read" => params.uri(),
                        "tasks/get" | "tasks/update" | "tasks/cancel" => params.task_id(),
                        _ => None,
                    });
                    if let Some(name) = name {
                        request = request.header("Mcp-Name", header_safe(name));
                    }
                }
            }
            request = request.header("MCP-Protocol-Version", version);
        }
        if let Some(session) = self.session_id() {
            request = request.header("Mcp-Session-Id", session);
        }
        request.body(body)
    }

    /// POSTs, following same-origin 307/308 redirects; anything else that redirects is an
    /// error naming where it pointed.
    async fn post_following(
        &self,
        message: &Value,
        extra: &[(String, String)],
    ) -> Result<(reqwest::Response, reqwest::Url)> {
        let body = serde_json::to_vec(message).map_err(|e| Error::server(e.to_string()))?;
        let mut url = self.url.clone();
        let mut nonce_retries = 0;
        let mut redirects = 0;
        loop {
            let mut request = self.post(&url, message, body.clone());
            for (name, value) in extra {
                request = request.header(name, header_safe(value));
            }
            let response = request.send().await.map_err(|e| {
                if e.is_connect() {
                    self.unreachable.store(true, Ordering::SeqCst);
                    // A server that went away forgot its sessions: once it is back, a new one.
                    if self.forget_session() {
                        tracing::debug!(url = %self.shown_url, "unreachable; its session is forgotten");
                    }
                }
                connect_error(&self.shown_url, e)
            })?;
            self.unreachable.store(false, Ordering::SeqCst);
            let status = response.status();
            if status == reqwest::StatusCode::UNAUTHORIZED
                && nonce_retries < 2
                && self.sign_in.take_dpop_nonce(&response)
            {
                // The same message again, its proof now carrying the server's nonce.
                nonce_retries += 1;
                continue;
            }
            if !status.is_redirection() {
                return Ok((response, url));
            }
            let target = response
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|location| url.join(location).ok());
            let Some(target) = target else {
                return Err(Error::server(format!(
                    "{} answered HTTP {status} without a usable Location",
                    self.shown_url
                )));
            };
            let same_origin = target.origin() == self.url.origin();
            let keeps_method = matches!(status.as_u16(), 307 | 308);
            if !same_origin || !keeps_method {
                let why = if !same_origin {
                    "another origin, which would receive your configured headers"
                } else {
                    "a GET, which cannot carry the message"
                };
                return Err(Error::server(format!(
                    "{} redirected (HTTP {}) to {}: ferry does not follow a redirect to {why}",
                    self.shown_url,
                    status.as_u16(),
                    redacted_url(target.as_str())
                ))
                .with_hint("if the server moved, put its new URL in the configuration"));
            }
            url = target;
            redirects += 1;
            if redirects > MAX_REDIRECTS {
                return Err(Error::server(format!(
                    "{} redirected more than {MAX_REDIRECTS} times",
                    self.shown_url
                )));
            }
        }
    }

    pub(super) async fn send(&self, message: &Value, extra: &[(String, String)]) -> Result<()> {
        self.load_bearer().await;
        if self.legacy.preferred && !self.legacy.tried.swap(true, Ordering::SeqCst) {
            self.open_legacy().await?;
        }
        if self.legacy.endpoint.lock().await.is_some() {
            return self.send_legacy(message).await;
        }
        let sent_session = self.session_id().is_some();
        let (mut response, mut final_url) = self.post_following(message, extra).await?;
        // A server of the 2024 HTTP+SSE transport refuses the POST (404, 405, or 400): its
        // event stream, if it has one, announces where messages go instead.
        let first = self.session_id().is_none()
            && matches!(
                MessageView::new(message).method(),
                Some("initialize" | "server/discover")
            );
        if first
            && matches!(response.status().as_u16(), 400 | 404 | 405)
            && !self.legacy.tried.swap(true, Ordering::SeqCst)
            && self.open_legacy().await.is_ok()
        {
            tracing::debug!(url = %self.shown_url, "the server speaks the 2024 HTTP+SSE transport");
            return self.send_legacy(message).await;
        }
        let refused = |status: reqwest::StatusCode| {
            status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN
        };
        if refused(response.status()) {
            let challenge = challenge_of(&response);
            // One renewal and one retry: a server that refuses again is answered below.
            if self.renew(response.status(), &challenge).await {
                (response, final_url) = self.post_following(message, extra).await?;
            }
        }
        let status = response.status();
        if let Some(session) = response
            .headers()
            .get(MCP_SESSION_ID)
            .and_then(|v| v.to_str().ok())
        {
            if let Ok(mut id) = self.session_id.lock() {
                *id = Some(session.to_string());
            }
        }
        if refused(status) {
            let challenge = challenge_of(&response);
            return Err(self.refusal(status, &challenge));
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if status.is_success() && MessageView::new(message).method() == Some("initialize") {
            self.session_lost.store(false, Ordering::SeqCst);
        }
        if status == reqwest::StatusCode::ACCEPTED || status == reqwest::StatusCode::NO_CONTENT {
            return Ok(());
        }
        let view = MessageView::new(message);
        let request_id = view.has_method().then(|| view.id()).flatten().cloned();
        if content_type.starts_with("text/event-stream") && status.is_success() {
            let resume = request_id.is_some().then(|| self.resume());
            tokio::spawn(read_event_stream(
                response,
                self.sender.clone(),
                request_id,
                self.max_message,
                resume,
            ));
            return Ok(());
        }
        let bytes = crate::net::read_body(response, self.max_message).await.map_err(|why| {
            Error::server(format!("could not read the answer of {}: {why}", self.shown_url))
                .with_hint("raise \"maxMessageMB\" in the server's config if the answer is legitimately this large")
        })?;
        // A JSON-RPC body (success or error, whatever the status) is a message for the session.
        // Only JSON-RPC bodies are messages; other JSON (`{"detail": "Not Found"}`) is an HTTP error.
        let is_rpc = |v: &Value| MessageView::new(v).looks_like_jsonrpc();
        match framing::decode(&bytes) {
            Ok(Value::Array(batch)) if !batch.is_empty() && batch.iter().all(is_rpc) => {
                let _ = forward(&self.sender, Value::Array(batch));
                Ok(())
            }
            Ok(answer) if sent_session && names_unknown_session(status, &answer) => {
                // The server restarted or ended the session: forget it, so that a new
                // handshake starts a new one; the request was never processed.
                self.forget_session();
                let said = answer
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .map(|m| {
                        let m: String = m.chars().filter(|c| !c.is_control()).take(160).collect();
                        format!(": {m}")
                    })
                    .unwrap_or_default();
                Err(Error::server(format!(
                    "{} no longer knows the session (HTTP {}{said})",
                    self.shown_url,
                    status.as_u16()
                ))
                .with_hint("run the command again"))
            }
            Ok(mut message @ Value::Object(_)) if is_rpc(&message) => {
                // An error for a request that the server could not even read (HTTP 400 with
                // `"id": null`) is still the answer to that request.
                let view = MessageView::new(&message);
                if view.id().is_none_or(Value::is_null) && view.error().is_some() {
                    if let Some(id) = request_id {
                        message["id"] = id;
                    }
                }
                let _ = self.sender.send(Event::Message(message));
                Ok(())
            }
            _ if sent_session && status == reqwest::StatusCode::NOT_FOUND => {
                self.forget_session();
                Err(Error::server(format!(
                    "{} no longer knows the session (HTTP 404)",
                    self.shown_url
                ))
                .with_hint("run the command again"))
            }
            _ => Err(http_error(
                status,
                &content_type,
                &bytes,
                &redacted_or_shown(&self.shown_url, &final_url, &self.url),
            )),
        }
    }

    /// Opens the 2024 transport's event stream and waits for its `endpoint` event (same
    /// origin only: configured headers never go elsewhere); the rest of the stream is read in
    /// the background, every message forwarded.
    async fn open_legacy(&self) -> Result<()> {
        let mut request = self
            .client
            .get(self.url.clone())
            .header("Accept", "text/event-stream");
        for (name, value) in self.resume().headers {
            request = request.header(name, value);
        }
        let mut response = request
            .send()
            .await
            .map_err(|e| connect_error(&self.shown_url, e))?;
        let is_stream = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !response.status().is_success() || !is_stream {
            return Err(Error::server(format!(
                "{} offers no event stream (HTTP {})",
                self.shown_url,
                response.status().as_u16()
            )));
        }
        let mut parser = SseParser::with_limit(self.max_message);
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut early = Vec::new();
        let endpoint = loop {
            let chunk = tokio::time::timeout_at(deadline, response.chunk())
                .await
                .map_err(|_| Error::server(format!("{} announced no endpoint", self.shown_url)))?
                .map_err(|e| Error::server(format!("{}: {e}", self.shown_url)))?
                .ok_or_else(|| {
                    Error::server(format!("{} announced no endpoint", self.shown_url))
                })?;
            early.extend(parser.feed(&chunk).unwrap_or_default());
            if let Some(endpoint) = parser.endpoint.take() {
                break endpoint;
            }
        };
        let target = self.url.join(endpoint.trim()).map_err(|_| {
            Error::server(format!("{} announced an unusable endpoint", self.shown_url))
        })?;
        if target.origin() != self.url.origin() {
            return Err(Error::server(format!(
                "{} announced an endpoint on another origin; refused",
                self.shown_url
            )));
        }
        *self.legacy.endpoint.lock().await = Some(target);
        let sender = self.sender.clone();
        for data in early {
            if let Ok(message) = framing::decode(data.as_bytes()) {
                let _ = forward(&sender, message);
            }
        }
        let task = tokio::spawn(async move {
            let why = loop {
                match response.chunk().await {
                    Ok(Some(chunk)) => match parser.feed(&chunk) {
                        Ok(events) => {
                            for data in events {
                                if let Ok(message) = framing::decode(data.as_bytes()) {
                                    if forward(&sender, message).is_err() {
                                        return;
                                    }
                                }
                            }
                        }
                        Err(_) => break "the server sent an event too large".to_string(),
                    },
                    Ok(None) => break "the server closed its event stream".to_string(),
                    Err(e) => break format!("the event stream broke: {e}"),
                }
            };
            let _ = sender.send(Event::Closed(why));
        });
        if let Ok(mut reader) = self.legacy.reader.lock() {
            *reader = Some(task.abort_handle());
        }
        Ok(())
    }

    /// Sends a message on the 2024 transport: a POST to the announced endpoint; the answer
    /// arrives on the event stream.
    async fn send_legacy(&self, message: &Value) -> Result<()> {
        let Some(endpoint) = self.legacy.endpoint.lock().await.clone() else {
            return Err(Error::server("the event stream is not open"));
        };
        let mut request = self
            .client
            .post(endpoint.clone())
            .header("Content-Type", "application/json");
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        for (name, value) in self.sign_in.headers("POST", &endpoint) {
            request = request.header(name, value);
        }
        let body = serde_json::to_vec(message).map_err(|e| Error::server(e.to_string()))?;
        let response = request
            .body(body)
            .send()
            .await
            .map_err(|e| connect_error(&self.shown_url, e))?;
        let status = response.status();
        if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
            let challenge = challenge_of(&response);
            return Err(self.refusal(status, &challenge));
        }
        if !status.is_success() {
            let content_type = response
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_ascii_lowercase();
            let bytes = crate::net::read_body(response, self.max_message)
                .await
                .unwrap_or_default();
            return Err(http_error(status, &content_type, &bytes, &self.shown_url));
        }
        Ok(())
    }

    /// Whether the server no longer knows the handshake session: the next request must
    /// shake hands again.
    pub fn session_lost(&self) -> bool {
        self.session_lost.load(Ordering::SeqCst)
    }

    /// Whether the last request could not reach the server at all.
    pub fn unreachable(&self) -> bool {
        self.unreachable.load(Ordering::SeqCst)
    }

    /// Drops the session the server no longer knows; whether there was one.
    fn forget_session(&self) -> bool {
        let had = self.session_id.lock().ok().and_then(|mut id| id.take());
        if had.is_some() {
            self.session_lost.store(true, Ordering::SeqCst);
        }
        had.is_some()
    }

    /// What resuming a stream needs: this connection's headers as they are now.
    fn resume(&self) -> Resume {
        let mut headers: Vec<(String, String)> = self
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        headers.extend(self.sign_in.headers("GET", &self.url));
        if let Some(version) = self.protocol_version() {
            headers.push(("MCP-Protocol-Version".into(), version));
        }
        if let Some(session) = self.session_id() {
            headers.push(("Mcp-Session-Id".into(), session));
        }
        Resume {
            client: self.client.clone(),
            url: self.url.clone(),
            headers,
        }
    }

    /// The error for a request the server refused: sign in (or in again, with more scope).
    fn refusal(&self, status: reqwest::StatusCode, challenge: &crate::auth::Challenge) -> Error {
        if !self.sign_in.enabled {
            return Error::auth(format!(
                "{} refused the credentials in its \"headers\" (HTTP {})",
                self.shown_url,
                status.as_u16()
            ))
            .with_hint("check the Authorization header in the server's configuration");
        }
        let command = &self.sign_in.command;
        if challenge.error.as_deref() == Some("insufficient_scope") {
            let scope = challenge.scope.as_deref().unwrap_or("more permission");
            return Error::auth(format!(
                "{} needs more permission for this ({scope}; HTTP {})",
                self.shown_url,
                status.as_u16()
            ))
            .with_hint(format!("sign in again with it: {command}"));
        }
        Error::auth(format!(
            "{} needs you to sign in (HTTP {})",
            self.shown_url,
            status.as_u16()
        ))
        .with_hint(format!(
            "run `{command}`, then this command again (or put an Authorization header in the server's \"headers\")"
        ))
    }

    /// Opens the server's GET event stream, if it offers one, for messages outside requests
    /// (`list_changed`, and requests such as elicitation that 2025-11-25 servers send there).
    /// It waits for the stream to be open (a request sent before it could miss a question),
    /// briefly; a server without one answers 405 or 404 and nothing more happens.
    pub async fn open_event_stream(&self) {
        if self.event_stream_open.swap(true, Ordering::SeqCst) {
            return;
        }
        let mut request = self
            .client
            .get(self.url.clone())
            .header("Accept", "text/event-stream");
        for (name, value) in self.resume().headers {
            request = request.header(name, value);
        }
        let sender = self.sender.clone();
        let limit = self.max_message;
        let opened = tokio::time::timeout(std::time::Duration::from_secs(2), request.send()).await;
        if let Ok(Ok(response)) = opened {
            let is_stream = response
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("text/event-stream"));
            if response.status().is_success() && is_stream {
                tokio::spawn(read_event_stream(response, sender, None, limit, None));
            }
        }
    }

    /// Ends the HTTP session, if the server gave one.
    pub(super) async fn shutdown(&self) {
        if let Some(reader) = self.legacy.reader.lock().ok().and_then(|mut r| r.take()) {
            reader.abort();
        }
        let Some(session) = self.session_id.lock().ok().and_then(|mut s| s.take()) else {
            return;
        };
        let mut request = self
            .client
            .delete(self.url.clone())
            .header("Mcp-Session-Id", session);
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        for (name, value) in self.sign_in.headers("DELETE", &self.url) {
            request = request.header(name, value);
        }
        if let Some(version) = self.protocol_version() {
            request = request.header("MCP-Protocol-Version", version);
        }
        let _ = tokio::time::timeout(std::time::Duration::from_millis(500), request.send()).await;
    }
}

/// The URL to name in an error: where a redirect led, else the configured one.
fn redacted_or_shown(shown: &str, final_url: &reqwest::Url, configured: &reqwest::Url) -> String {
    if final_url == configured {
        shown.to_string()
    } else {
        redacted_url(final_url.as_str())
    }
}

/// Whether an answer to a request that carried `Mcp-Session-Id` says the server does not know
/// that session: HTTP 404 (the spec's word for it), or a 400 whose JSON-RPC error names the
/// session (server-everything's "Bad Request: No valid session ID provided").
fn names_unknown_session(status: reqwest::StatusCode, answer: &Value) -> bool {
    let message = answer
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or("");
    match status.as_u16() {
        404 => true,
        400 => message.to_ascii_lowercase().contains("session"),
        _ => false,
    }
}

/// One line for an HTTP answer that is not JSON-RPC: the status, and a short, printable
/// excerpt unless the body is an HTML page (seven lines of markup help nobody).
fn http_error(status: reqwest::StatusCode, content_type: &str, body: &[u8], url: &str) -> Error {
    let text = String::from_utf8_lossy(&body[..body.len().min(2000)]);
    let looks_html = content_type.starts_with("text/html")
        || text
            .trim_start()
            .to_ascii_lowercase()
            .starts_with("<!doctype")
        || text.trim_start().to_ascii_lowercase().starts_with("<html");
    let excerpt = if looks_html || text.trim().is_empty() {
        String::new()
    } else {
        let line: String = text
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .filter(|c| !c.is_control())
            .take(160)
            .collect();
        format!(": {line}")
    };
    let page = if looks_html { " (an HTML page)" } else { "" };
    let hint = if status.is_server_error() {
        "the server failed; try again later, or check the server's own logs"
    } else if status == reqwest::StatusCode::NOT_FOUND {
        "check the URL: MCP endpoints often end in /mcp"
    } else {
        "check the URL and that it is an MCP endpoint"
    };
    Error::server(format!(
        "unexpected HTTP {status} from {url}{page}{excerpt}"
    ))
    .with_hint(hint)
}

fn connect_error(url: &str, error: reqwest::Error) -> Error {
    if error.is_timeout() {
        Error::timeout(format!("no answer from {url}"))
    } else {
        let mut source: &dyn std::error::Error = &error;
        while let Some(next) = source.source() {
            source = next;
        }
        let text = source.to_string();
        // rustls reads a plain HTTP answer as a TLS record it cannot parse.
        if url.starts_with("https://")
            && (text.contains("InvalidContentType") || text.contains("corrupt message"))
        {
            return Error::server(format!(
                "could not reach {url}: the server answers plain HTTP, not TLS"
            ))
            .with_hint(format!(
                "use http:// for this server: {}",
                url.replacen("https://", "http://", 1)
            ));
        }
        Error::server(format!("could not reach {url}: {text}"))
            .with_hint("check that the server is running and the URL is right")
    }
}

/// Header values must be visible ASCII; anything else is sent base64-encoded as the spec asks.
pub fn header_safe(value: &str) -> String {
    let looks_encoded = value.starts_with("=?base64?") && value.ends_with("?=");
    if value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !value.starts_with(' ')
        && !value.ends_with(' ')
        && !looks_encoded
    {
        value.to_string()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value)
        )
    }
}

/// Reads an SSE body, forwarding each `message` event's data as a JSON-RPC message. A stream
/// that carries a request's answer and ends without it closes the wait for that answer; other
/// streams end quietly (each POST has its own, so one ending says nothing of the rest).
/// How to pick up an event stream the server closed before answering: a GET with
/// `Last-Event-ID`, after the `retry` the server asked for (2025-11-25 resumability).
struct Resume {
    client: reqwest::Client,
    url: reqwest::Url,
    headers: Vec<(String, String)>,
}

/// How many times one answer's stream is picked up again.
const MAX_RESUMES: usize = 3;

async fn read_event_stream(
    mut response: reqwest::Response,
    sender: EventSender,
    awaiting: Option<Value>,
    limit: usize,
    resume: Option<Resume>,
) {
    let mut parser = SseParser::with_limit(limit);
    let mut answered = awaiting.is_none();
    let mut resumes = 0;
    let why = loop {
        let ended = loop {
            match response.chunk().await {
                Ok(Some(chunk)) => match parser.feed(&chunk) {
                    Ok(events) => {
                        for data in events {
                            if let Ok(message) = framing::decode(data.as_bytes()) {
                                let view = MessageView::new(&message);
                                let is_answer =
                                    !view.has_method() && view.id() == awaiting.as_ref();
                                answered |= is_answer;
                                if forward(&sender, message).is_err() {
                                    return;
                                }
                            }
                        }
                        if answered && awaiting.is_some() {
                            // The answer is in; a resumed stream may stay open, not this reader.
                            return;
                        }
                    }
                    Err(FrameError::TooLong(limit)) => {
                        if !answered {
                            let _ = sender.send(Event::Unreadable(format!(
                                "the server sent an event over {} MB",
                                limit / (1024 * 1024)
                            )));
                        }
                        return;
                    }
                    Err(FrameError::Io(e)) => break e,
                },
                Ok(None) => {
                    break "the server ended the response stream without answering".to_string()
                }
                Err(e) => break format!("the response stream broke: {e}"),
            }
        };
        if answered {
            return;
        }
        // A stream whose events carry ids can be resumed where it stopped.
        let (Some(resume), Some(last_id)) = (&resume, parser.last_id.clone()) else {
            break ended;
        };
        if resumes >= MAX_RESUMES {
            break ended;
        }
        resumes += 1;
        let wait = parser.retry_ms.unwrap_or(1000).min(30_000);
        tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
        let mut request = resume
            .client
            .get(resume.url.clone())
            .header("Accept", "text/event-stream")
            .header("Last-Event-ID", last_id);
        for (name, value) in &resume.headers {
            request = request.header(name, value);
        }
        match request.send().await {
            Ok(next)
                if next.status().is_success()
                    && next
                        .headers()
                        .get(CONTENT_TYPE)
                        .and_then(|v| v.to_str().ok())
                        .is_some_and(|v| v.starts_with("text/event-stream")) =>
            {
                response = next;
            }
            _ => break ended,
        }
    };
    if !answered {
        let _ = sender.send(Event::Closed(why));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_header_values_are_encoded() {
        assert_eq!(header_safe("echo"), "echo");
        assert_eq!(header_safe("héllo"), "=?base64?aMOpbGxv?=");
    }

    #[test]
    fn urls_in_messages_hide_credentials_and_queries() {
        assert_eq!(
            redacted_url("https://user:secret@example.com:8443/mcp?key=abc"),
            "https://example.com:8443/mcp?..."
        );
        assert_eq!(redacted_url("http://127.0.0.1/mcp"), "http://127.0.0.1/mcp");
    }

    #[test]
    fn html_error_pages_are_one_line() {
        let error = http_error(
            reqwest::StatusCode::INTERNAL_SERVER_ERROR,
            "text/html",
            b"<!DOCTYPE html>\n<html>\n<body>\n<h1>oops</h1>\n</body>\n</html>\n",
            "http://x/mcp",
        );
        assert_eq!(
            error.message,
            "unexpected HTTP 500 Internal Server Error from http://x/mcp (an HTML page)"
        );
        assert!(error.hint.is_some());
    }
}
