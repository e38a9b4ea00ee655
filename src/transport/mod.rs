//! Moving JSON-RPC messages to and from a server: a child process over stdio, or Streamable
//! HTTP. Both deliver what arrives as `Event`s on one channel, so a session reads one stream
//! whatever the transport.

pub mod http;
pub mod stdio;

use crate::Result;
use serde_json::Value;
use tokio::sync::mpsc;

/// Something that arrived from the server.
#[derive(Debug)]
pub enum Event {
    /// One decoded JSON-RPC message.
    Message(Value),
    /// The server can send nothing more: why, in a few words.
    Closed(String),
}

/// A connection to one server.
pub enum Transport {
    Stdio(stdio::StdioChild),
    Http(http::HttpConnection),
}

impl Transport {
    /// Sends one message.
    pub async fn send(&mut self, message: &Value) -> Result<()> {
        match self {
            Transport::Stdio(child) => child.send(message).await,
            Transport::Http(conn) => conn.send(message).await,
        }
    }

    /// The next event; `None` never happens while the transport is open.
    pub async fn recv(&mut self) -> Event {
        let incoming = match self {
            Transport::Stdio(child) => &mut child.incoming,
            Transport::Http(conn) => &mut conn.incoming,
        };
        incoming
            .recv()
            .await
            .unwrap_or_else(|| Event::Closed("connection closed".into()))
    }

    /// The last lines the server wrote to stderr (stdio only), for error messages.
    pub fn stderr_tail(&self) -> String {
        match self {
            Transport::Stdio(child) => child.stderr_tail(),
            Transport::Http(_) => String::new(),
        }
    }

    /// Where the server's stderr is logged, if anywhere.
    pub fn log_path(&self) -> Option<std::path::PathBuf> {
        match self {
            Transport::Stdio(child) => Some(child.log_path.clone()),
            Transport::Http(_) => None,
        }
    }

    /// Tells the transport which protocol version was agreed (HTTP sends it as a header).
    pub fn set_protocol_version(&mut self, version: &str) {
        if let Transport::Http(conn) = self {
            conn.protocol_version = Some(version.to_string());
        }
    }

    /// Listens for server messages outside requests, where the transport has such a channel
    /// (the Streamable HTTP GET stream of a handshake-era session).
    pub fn listen(&mut self) {
        if let Transport::Http(conn) = self {
            conn.open_event_stream();
        }
    }

    /// Ends the connection: closes stdin and stops the process group, or ends the HTTP session.
    pub async fn shutdown(self) {
        match self {
            Transport::Stdio(child) => child.shutdown().await,
            Transport::Http(conn) => conn.shutdown().await,
        }
    }
}

pub(crate) type EventSender = mpsc::UnboundedSender<Event>;
