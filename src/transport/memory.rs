//! An in-memory transport: a channel pair in place of a process or a socket. Tests drive a
//! session against a scripted peer with it, and a server running in the same process can be
//! reached through it without framing.

use super::{Connection, Event, EventSender, Transport};
use crate::{Error, Result};
use serde_json::Value;
use tokio::sync::mpsc;

/// The client's end: what it sends goes to the peer's receiver.
pub struct MemoryConnection {
    to_peer: mpsc::UnboundedSender<Value>,
}

/// The peer's end: what the client sent, and a way to answer.
pub struct MemoryPeer {
    pub from_client: mpsc::UnboundedReceiver<Value>,
    to_client: EventSender,
}

impl MemoryConnection {
    pub(super) fn send(&self, message: &Value) -> Result<()> {
        self.to_peer
            .send(message.clone())
            .map_err(|_| Error::server("the in-memory peer went away"))
    }
}

impl MemoryPeer {
    /// Sends a message to the client.
    pub fn send(&self, message: Value) {
        let _ = self.to_client.send(Event::Message(message));
    }

    /// Delivers any event (a close, an unreadable message) to the client.
    pub fn event(&self, event: Event) {
        let _ = self.to_client.send(event);
    }

    /// The next message the client sent, or `None` once it is gone.
    pub async fn recv(&mut self) -> Option<Value> {
        self.from_client.recv().await
    }
}

/// A connected pair.
pub fn pair() -> (Transport, MemoryPeer) {
    let (to_peer, from_client) = mpsc::unbounded_channel();
    let (to_client, incoming) = mpsc::unbounded_channel();
    (
        Transport {
            connection: Connection::Memory(MemoryConnection { to_peer }),
            incoming,
        },
        MemoryPeer {
            from_client,
            to_client,
        },
    )
}
