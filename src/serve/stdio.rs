//! Serving over stdio: newline-delimited JSON-RPC on stdin and stdout, one handshake-era
//! session for the process, stateless requests beside it. Each request runs as its own task,
//! so calls overlap (up to the server's limit); `notifications/cancelled` stops one (its
//! command's whole process group with it) and it gets no response. When stdin closes, the
//! client has gone: calls still running are stopped and the server exits.

use super::server::{Server, Session};
use crate::protocol::params::Params;
use crate::protocol::MessageView;
use crate::protocol::{self, Incoming};
use crate::transport::framing::{self, FrameError};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The largest message accepted from the client.
const MAX_REQUEST: usize = 16 * 1024 * 1024;

/// How many progress and log lines wait for a slow client at most.
const NOTES_KEPT: usize = 256;

/// A request in flight, by its id as JSON text.
type InFlight = Arc<Mutex<HashMap<String, tokio::task::AbortHandle>>>;

/// Serves until stdin closes and what was asked is answered.
pub async fn serve(server: Arc<Server>) {
    let (out, mut lines) = mpsc::unbounded_channel::<Value>();
    // Progress and log lines wait in a bounded queue, and are dropped when a client reads
    // too slowly; responses and requests to the client are never dropped (and written after
    // the lines sent before them).
    let (notes_out, mut notes) = mpsc::channel::<Value>(NOTES_KEPT);
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        loop {
            let message = tokio::select! {
                biased;
                Some(note) = notes.recv() => note,
                Some(message) = lines.recv() => message,
                else => break,
            };
            if stdout
                .write_all(&framing::encode_line(&message))
                .await
                .is_err()
                || stdout.flush().await.is_err()
            {
                break;
            }
        }
    });
    let outside = out.clone();
    let mut state = Session::default();
    state.outside = Some(Arc::new(move |note| {
        let _ = outside.send(note);
    }));
    let session = Arc::new(Mutex::new(state));
    let in_flight: InFlight = Arc::new(Mutex::new(HashMap::new()));
    let mut reader = BufReader::with_capacity(64 * 1024, tokio::io::stdin());
    let mut line = Vec::new();
    loop {
        match framing::read_line(&mut reader, &mut line, MAX_REQUEST).await {
            Ok(false) => break,
            Ok(true) => {}
            Err(FrameError::TooLong(limit)) => {
                tracing::warn!("a request over {limit} bytes; closing");
                let _ = out.send(protocol::error_response(
                    Value::Null,
                    protocol::INVALID_REQUEST,
                    &format!("message over {limit} bytes"),
                ));
                break;
            }
            Err(FrameError::Io(_)) => break,
        }
        let text = line.trim_ascii();
        if text.is_empty() {
            continue;
        }
        let message = match framing::decode(text) {
            Ok(message) => message,
            Err(_) => {
                let _ = out.send(protocol::error_response(
                    Value::Null,
                    protocol::PARSE_ERROR,
                    "Parse error",
                ));
                continue;
            }
        };
        if message.is_array() {
            let _ = out.send(protocol::error_response(
                Value::Null,
                protocol::INVALID_REQUEST,
                "batches are not supported",
            ));
            continue;
        }
        match protocol::classify(message) {
            Incoming::Request { id, method, params } => {
                let key = id.to_string();
                let duplicate = in_flight
                    .lock()
                    .map(|f| f.contains_key(&key))
                    .unwrap_or(false);
                if duplicate {
                    // Its answer could not be told from the first's, nor could it be cancelled.
                    let _ = out.send(protocol::error_response(
                        id,
                        protocol::INVALID_REQUEST,
                        "a request with this id is already in flight",
                    ));
                    continue;
                }
                let server = server.clone();
                let session = session.clone();
                let replies = out.clone();
                let (notes, requests) = (notes_out.clone(), out.clone());
                let flights = in_flight.clone();
                let done_key = key.clone();
                let task = tokio::spawn(async move {
                    let notify: super::provider::Notifier = Arc::new(move |note: Value| {
                        if MessageView::new(&note).id().is_some() {
                            let _ = requests.send(note);
                        } else {
                            let _ = notes.try_send(note);
                        }
                    });
                    let reply = server
                        .answer("stdio", id, &method, params, Some(&session), None, notify)
                        .await;
                    let _ = replies.send(reply.message);
                    if let Ok(mut flights) = flights.lock() {
                        flights.remove(&done_key);
                    }
                });
                if let Ok(mut flights) = in_flight.lock() {
                    flights.insert(key, task.abort_handle());
                }
            }
            Incoming::Notification { method, params } => {
                if method == "notifications/cancelled" {
                    let key = Params::new(&params).request_id().map(Value::to_string);
                    let handle =
                        key.and_then(|k| in_flight.lock().ok().and_then(|mut f| f.remove(&k)));
                    if let Some(handle) = handle {
                        tracing::debug!("request cancelled by the client");
                        handle.abort();
                    }
                }
            }
            Incoming::Invalid => {
                let _ = out.send(protocol::error_response(
                    Value::Null,
                    protocol::INVALID_REQUEST,
                    "Invalid Request",
                ));
            }
            // The client's answers to what a command asked.
            Incoming::Response { id, outcome } => {
                let outgoing = session
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .outgoing
                    .clone();
                outgoing.resolve(&id, outcome);
            }
            Incoming::BadResponse { .. } => {}
        }
    }
    // Input ended: the client has gone (the spec's way to shut a stdio server down), so
    // what is still running is stopped, every command's process group with it.
    let running: Vec<tokio::task::AbortHandle> = in_flight
        .lock()
        .map(|mut f| f.drain().map(|(_, handle)| handle).collect())
        .unwrap_or_default();
    if !running.is_empty() {
        tracing::debug!(
            count = running.len(),
            "input ended: stopping the calls in flight"
        );
    }
    for handle in running {
        handle.abort();
    }
    // Aborted tasks stop their commands as they are dropped; give that a moment.
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    drop(out);
    drop(notes_out);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), writer).await;
}
