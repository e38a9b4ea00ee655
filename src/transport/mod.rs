//! Moving JSON-RPC messages between ferry and a peer: a child process over stdio, Streamable
//! HTTP, or an in-memory pair (tests, and anything that runs a server in the same process).
//!
//! A client-side transport is a [`Connection`] that sends (from any task, concurrently) and a
//! stream of [`Event`]s that one reader consumes, so a session can multiplex requests whatever
//! the transport. `framing` (NDJSON and SSE) serves the server side too; `socket` is where
//! the daemon's Unix socket lives and who may use it.

pub mod framing;
pub mod http;
pub mod memory;
pub mod socket;
pub mod stdio;

use crate::Result;
use serde_json::Value;
use tokio::sync::mpsc;

/// Something that arrived from the peer.
#[derive(Debug)]
pub enum Event {
    /// One decoded JSON-RPC message.
    Message(Value),
    /// The peer can send nothing more: why, in a few words.
    Closed(String),
    /// A message could not be used (too large, undecodable): why. The session fails the
    /// request it was waiting for at once instead of waiting for its timeout.
    Unreadable(String),
}

pub(crate) type EventSender = mpsc::UnboundedSender<Event>;

/// The sending half of a connection to one server, shared by every request in flight.
pub enum Connection {
    Stdio(stdio::StdioChild),
    Http(Box<http::HttpConnection>),
    Memory(memory::MemoryConnection),
}

/// A connection and the events it delivers.
pub struct Transport {
    pub connection: Connection,
    pub incoming: mpsc::UnboundedReceiver<Event>,
}

impl Connection {
    /// Sends one message.
    pub async fn send(&self, message: &Value) -> Result<()> {
        self.send_with(message, &[]).await
    }

    /// Sends one message with headers of its own (HTTP only; other transports have none).
    pub async fn send_with(&self, message: &Value, headers: &[(String, String)]) -> Result<()> {
        match self {
            Connection::Stdio(child) => child.send(message).await,
            Connection::Http(conn) => conn.send(message, headers).await,
            Connection::Memory(conn) => conn.send(message),
        }
    }

    /// The last lines the server wrote to stderr (stdio only), for error messages.
    pub fn stderr_tail(&self) -> String {
        match self {
            Connection::Stdio(child) => child.stderr_tail(),
            _ => String::new(),
        }
    }

    /// Where the server's stderr is logged, if anywhere.
    pub fn log_path(&self) -> Option<std::path::PathBuf> {
        match self {
            Connection::Stdio(child) => Some(child.log_path.clone()),
            _ => None,
        }
    }

    /// Whether the server process has exited (stdio; an HTTP peer cannot tell).
    pub fn has_exited(&self) -> bool {
        match self {
            Connection::Stdio(child) => child.has_exited(),
            _ => false,
        }
    }

    /// Whether an HTTP server no longer knows the handshake session (it restarted or ended
    /// it): the next request shakes hands again first.
    pub fn session_lost(&self) -> bool {
        match self {
            Connection::Http(conn) => conn.session_lost(),
            _ => false,
        }
    }

    /// Whether the last request could not reach the server (HTTP: the connection refused).
    pub fn unreachable(&self) -> bool {
        match self {
            Connection::Http(conn) => conn.unreachable(),
            _ => false,
        }
    }

    /// The server process's id, for status reports (stdio only).
    pub fn pid(&self) -> Option<u32> {
        match self {
            Connection::Stdio(child) => Some(child.pid),
            _ => None,
        }
    }

    /// How a stdio server ended, once it has (waits briefly for its last words).
    pub async fn exit_description(&self) -> Option<String> {
        match self {
            Connection::Stdio(child) => child.exit_description().await,
            _ => None,
        }
    }

    /// Tells the transport which protocol version was agreed (HTTP sends it as a header).
    pub fn set_protocol_version(&self, version: &str) {
        if let Connection::Http(conn) = self {
            conn.set_protocol_version(version);
        }
    }

    /// Listens for server messages outside requests, where the transport has such a channel
    /// (the Streamable HTTP GET stream of a handshake-era session).
    pub async fn listen(&self) {
        if let Connection::Http(conn) = self {
            conn.open_event_stream().await;
        }
    }

    /// Ends the connection: closes stdin and stops the process group, or ends the HTTP session.
    pub async fn shutdown(&self) {
        match self {
            Connection::Stdio(child) => child.shutdown().await,
            Connection::Http(conn) => conn.shutdown().await,
            Connection::Memory(_) => {}
        }
    }
}
