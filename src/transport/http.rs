//! Streamable HTTP as a client: one POST per message, answered with JSON or an SSE stream;
//! `Mcp-Session-Id` and `MCP-Protocol-Version` kept across requests (handshake era), the
//! `Mcp-Method`/`Mcp-Name` headers of the stateless era, and a GET stream when offered.

use super::{Event, EventSender};
use crate::protocol::STATELESS_VERSION;
use crate::{Error, Result};
use base64::Engine;
use serde_json::Value;
use std::collections::BTreeMap;
use tokio::sync::mpsc;

/// A connection to one MCP endpoint.
pub struct HttpConnection {
    client: reqwest::Client,
    url: String,
    headers: BTreeMap<String, String>,
    session_id: Option<String>,
    /// The agreed protocol version, sent as `MCP-Protocol-Version` once known.
    pub(super) protocol_version: Option<String>,
    sender: EventSender,
    pub(super) incoming: mpsc::UnboundedReceiver<Event>,
    event_stream_open: bool,
}

impl HttpConnection {
    /// Prepares a connection; nothing is sent until the first message.
    pub fn new(url: &str, headers: BTreeMap<String, String>) -> Result<HttpConnection> {
        let parsed = reqwest::Url::parse(url)
            .map_err(|e| Error::usage(format!("invalid server URL {url:?}: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(Error::usage(format!(
                "unsupported URL scheme {:?}: use http or https",
                parsed.scheme()
            )));
        }
        let client = reqwest::Client::builder()
            .user_agent(concat!("ferry/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Error::server(format!("could not set up HTTP: {e}")))?;
        let (sender, incoming) = mpsc::unbounded_channel();
        Ok(HttpConnection {
            client,
            url: url.to_string(),
            headers,
            session_id: None,
            protocol_version: None,
            sender,
            incoming,
            event_stream_open: false,
        })
    }

    fn post(&self, message: &Value) -> reqwest::RequestBuilder {
        let mut request = self
            .client
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json");
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        if let Some(version) = &self.protocol_version {
            request = request.header("MCP-Protocol-Version", version);
            if version == STATELESS_VERSION {
                if let Some(method) = message.get("method").and_then(Value::as_str) {
                    request = request.header("Mcp-Method", method);
                    let params = message.get("params");
                    let name = params
                        .and_then(|p| p.get("name").or_else(|| p.get("uri")))
                        .and_then(Value::as_str);
                    if let (Some(name), "tools/call" | "prompts/get" | "resources/read") =
                        (name, method)
                    {
                        request = request.header("Mcp-Name", header_safe(name));
                    }
                }
            }
        }
        if let Some(session) = &self.session_id {
            request = request.header("Mcp-Session-Id", session);
        }
        request
    }

    pub(super) async fn send(&mut self, message: &Value) -> Result<()> {
        let body = serde_json::to_vec(message).map_err(|e| Error::server(e.to_string()))?;
        let response = self
            .post(message)
            .body(body)
            .send()
            .await
            .map_err(|e| connect_error(&self.url, e))?;
        let status = response.status();
        if let Some(session) = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            self.session_id = Some(session.to_string());
        }
        if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
            return Err(Error::auth(format!("the server refused the request: HTTP {status}"))
                .with_hint("set the credentials in the server's \"headers\" (for example Authorization: Bearer ${TOKEN})"));
        }
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if status == reqwest::StatusCode::ACCEPTED || status == reqwest::StatusCode::NO_CONTENT {
            return Ok(());
        }
        let request_id = message.get("method").and(message.get("id")).cloned();
        if content_type.starts_with("text/event-stream") && status.is_success() {
            tokio::spawn(read_event_stream(response, self.sender.clone(), request_id));
            return Ok(());
        }
        let bytes = response
            .bytes()
            .await
            .map_err(|e| Error::server(format!("could not read the HTTP response: {e}")))?;
        // A JSON-RPC body (success or error, whatever the status) is a message for the session.
        // Only JSON-RPC bodies are messages; other JSON (`{"detail": "Not Found"}`) is an HTTP error.
        let is_rpc = |v: &Value| {
            v.get("jsonrpc").is_some() || v.get("result").is_some() || v.get("error").is_some()
        };
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Array(batch)) if !batch.is_empty() && batch.iter().all(is_rpc) => {
                for message in batch {
                    let _ = self.sender.send(Event::Message(message));
                }
                Ok(())
            }
            Ok(mut message @ Value::Object(_)) if is_rpc(&message) => {
                // An error for a request that the server could not even read (HTTP 400 with
                // `"id": null`) is still the answer to that request.
                if message.get("id").is_none_or(Value::is_null) && message.get("error").is_some() {
                    if let Some(id) = request_id {
                        message["id"] = id;
                    }
                }
                let _ = self.sender.send(Event::Message(message));
                Ok(())
            }
            _ if status == reqwest::StatusCode::NOT_FOUND && self.session_id.is_some() => {
                Err(Error::server("the server ended the session (HTTP 404)")
                    .with_hint("run the command again"))
            }
            _ => {
                let preview = String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
                    .trim()
                    .to_string();
                Err(Error::server(format!(
                    "unexpected HTTP {status} from {}: {preview}",
                    self.url
                )))
            }
        }
    }

    /// Opens the server's GET event stream, if it offers one, for messages outside requests
    /// (`list_changed` and the like). It runs in the background and costs the caller nothing;
    /// a server without one answers 405 and nothing more happens.
    pub fn open_event_stream(&mut self) {
        if self.event_stream_open {
            return;
        }
        self.event_stream_open = true;
        let mut request = self
            .client
            .get(&self.url)
            .header("Accept", "text/event-stream");
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        if let Some(version) = &self.protocol_version {
            request = request.header("MCP-Protocol-Version", version);
        }
        if let Some(session) = &self.session_id {
            request = request.header("Mcp-Session-Id", session);
        }
        let sender = self.sender.clone();
        tokio::spawn(async move {
            if let Ok(response) = request.send().await {
                let is_stream = response
                    .headers()
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|v| v.starts_with("text/event-stream"));
                if response.status().is_success() && is_stream {
                    read_event_stream(response, sender, None).await;
                }
            }
        });
    }

    /// Ends the HTTP session, if the server gave one.
    pub(super) async fn shutdown(self) {
        if let Some(session) = &self.session_id {
            let mut request = self
                .client
                .delete(&self.url)
                .header("Mcp-Session-Id", session);
            for (name, value) in &self.headers {
                request = request.header(name, value);
            }
            if let Some(version) = &self.protocol_version {
                request = request.header("MCP-Protocol-Version", version);
            }
            let _ =
                tokio::time::timeout(std::time::Duration::from_millis(500), request.send()).await;
        }
    }
}

fn connect_error(url: &str, error: reqwest::Error) -> Error {
    if error.is_timeout() {
        Error::timeout(format!("no answer from {url}"))
    } else {
        let mut source: &dyn std::error::Error = &error;
        while let Some(next) = source.source() {
            source = next;
        }
        Error::server(format!("could not reach {url}: {source}"))
            .with_hint("check that the server is running and the URL is right")
    }
}

/// Header values must be visible ASCII; anything else is sent base64-encoded as the spec asks.
fn header_safe(value: &str) -> String {
    if value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !value.starts_with(' ')
        && !value.ends_with(' ')
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
async fn read_event_stream(
    mut response: reqwest::Response,
    sender: EventSender,
    awaiting: Option<Value>,
) {
    let mut parser = SseParser::default();
    let mut answered = awaiting.is_none();
    let why = loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                for data in parser.feed(&chunk) {
                    if let Ok(message) = serde_json::from_str::<Value>(&data) {
                        let is_answer = message.get("method").is_none()
                            && message.get("id") == awaiting.as_ref();
                        answered |= is_answer;
                        if sender.send(Event::Message(message)).is_err() {
                            return;
                        }
                    }
                }
            }
            Ok(None) => break "the server ended the response stream without answering".to_string(),
            Err(e) => break format!("the response stream broke: {e}"),
        }
    };
    if !answered {
        let _ = sender.send(Event::Closed(why));
    }
}

/// Incremental `text/event-stream` parser: yields the data of each complete `message` event.
#[derive(Default)]
pub struct SseParser {
    buffer: Vec<u8>,
    /// How much of `buffer` is known to hold no line end, so it is not scanned again.
    scanned: usize,
    data: Vec<String>,
    event: Option<String>,
}

impl SseParser {
    /// Feeds bytes; returns the data of every event completed by them.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        self.buffer.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut start = 0;
        while let Some(offset) = self.buffer[start.max(self.scanned)..]
            .iter()
            .position(|&b| b == b'\n')
        {
            let end = start.max(self.scanned) + offset;
            let line = self.buffer[start..end].to_vec();
            start = end + 1;
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                let is_message = matches!(self.event.as_deref(), None | Some("message"));
                if !self.data.is_empty() && is_message {
                    out.push(self.data.join("\n"));
                }
                self.data.clear();
                self.event = None;
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (line, ""),
            };
            match field {
                "data" => self.data.push(value.to_string()),
                "event" => self.event = Some(value.to_string()),
                _ => {}
            }
        }
        // One shift per chunk, not per line; what is left has no line end.
        self.buffer.drain(..start);
        self.scanned = self.buffer.len();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_events_split_across_chunks() {
        let mut parser = SseParser::default();
        assert!(parser.feed(b"event: message\ndata: {\"a\"").is_empty());
        assert_eq!(
            parser.feed(b":1}\n\n: comment\n\ndata: x\r\ndata: y\r\n\r\n"),
            vec!["{\"a\":1}", "x\ny"]
        );
        assert!(parser.feed(b"event: ping\ndata: z\n\n").is_empty());
        // A long line arriving in many small chunks.
        let long = "x".repeat(100_000);
        let mut events = Vec::new();
        let body = format!("data: {long}\n\n");
        for chunk in body.as_bytes().chunks(7) {
            events.extend(parser.feed(chunk));
        }
        assert_eq!(events, vec![long]);
    }

    #[test]
    fn unsafe_header_values_are_encoded() {
        assert_eq!(header_safe("echo"), "echo");
        assert_eq!(header_safe("héllo"), "=?base64?aMOpbGxv?=");
    }
}
