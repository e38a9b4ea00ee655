//! The daemon process (`ferry __daemon`): it listens on the socket, serves each connection's
//! one operation with the warm pool, stops idle servers, and exits when it holds none.

use super::pool::{self, Pool};
use super::wire::{error_to_json, tagged, ServerRef};
use crate::client::handler::{ClientHandler, ClientRequestError};
use crate::client::session::CallContext;
use crate::protocol::BoxFuture;
use crate::transport::socket::{self, Link};
use crate::{Error, Result};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::UnixListener;
use tokio::sync::{mpsc, oneshot, Notify};

/// How long the daemon stays with no server and no caller before it exits.
const LINGER: Duration = Duration::from_secs(2);

struct Daemon {
    pool: Pool,
    identity: String,
    started: Instant,
    connections: AtomicUsize,
    /// When the last connection ended (for the linger before exit).
    quiet_since: Mutex<Instant>,
    stop: Notify,
}

/// Runs the daemon until it is stopped, idle, or signalled.
pub fn run() -> i32 {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("ferry daemon: cannot start the async runtime: {e}");
            return 1;
        }
    };
    let code = runtime.block_on(async {
        match serve().await {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("ferry daemon: {e}");
                1
            }
        }
    });
    runtime.shutdown_timeout(Duration::from_millis(500));
    code
}

async fn serve() -> Result<()> {
    let dir = socket::ensure_run_dir()?;
    let path = socket::socket_path();
    // The starter removed any stale socket while holding the lock; bind with no window in
    // which the socket is open to others.
    // SAFETY: umask only changes this process's file creation mask.
    let old = unsafe { libc::umask(0o177) };
    let listener = UnixListener::bind(&path);
    // SAFETY: as above.
    unsafe { libc::umask(old) };
    let listener =
        listener.map_err(|e| Error::server(format!("cannot listen on {}: {e}", path.display())))?;
    let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
    let inode = std::fs::metadata(&path).map(|m| m.ino()).unwrap_or(0);
    tracing::debug!(dir = %dir.display(), "daemon listening");
    let daemon = Arc::new(Daemon {
        pool: Pool::default(),
        identity: super::identity(),
        started: Instant::now(),
        connections: AtomicUsize::new(0),
        quiet_since: Mutex::new(Instant::now()),
        stop: Notify::new(),
    });
    let reaper = tokio::spawn(reap(daemon.clone()));
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    daemon.connections.fetch_add(1, Ordering::SeqCst);
                    let daemon = daemon.clone();
                    tokio::spawn(async move {
                        let worked = serve_connection(&daemon, Link::new(stream)).await;
                        daemon.connections.fetch_sub(1, Ordering::SeqCst);
                        if worked {
                            *daemon.quiet_since.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
                        }
                    });
                }
            }
            _ = daemon.stop.notified() => break,
            _ = crate::signals::interrupted() => break,
        }
    }
    reaper.abort();
    remove_own_socket(&path, inode);
    daemon.pool.stop_all().await;
    Ok(())
}

/// Removes the socket file if it is still the one this daemon bound (a new daemon may have
/// replaced it already).
fn remove_own_socket(path: &std::path::Path, inode: u64) {
    if std::fs::metadata(path).map(|m| m.ino()).ok() == Some(inode) {
        let _ = std::fs::remove_file(path);
    }
}

/// Stops idle servers on time, and the daemon once it has had nothing to do for a while.
async fn reap(daemon: Arc<Daemon>) {
    loop {
        let next = daemon
            .pool
            .next_deadline()
            .map(|at| at.saturating_duration_since(Instant::now()))
            .unwrap_or(LINGER)
            .clamp(Duration::from_millis(100), LINGER);
        tokio::time::sleep(next).await;
        let remaining = daemon.pool.reap().await;
        let quiet = daemon
            .quiet_since
            .lock()
            .map(|t| t.elapsed())
            .unwrap_or_default();
        if remaining == 0 && daemon.connections.load(Ordering::SeqCst) == 0 && quiet >= LINGER {
            tracing::debug!("daemon: no servers and no callers; exiting");
            daemon.stop.notify_one();
            return;
        }
    }
}

/// Serves one connection; says whether it was work (a request), which keeps the daemon
/// from exiting for a while, unlike a status query.
async fn serve_connection(daemon: &Arc<Daemon>, mut link: Link) -> bool {
    let Some(hello) = link.receive().await else {
        return false;
    };
    let Some(theirs) = hello.get("hello") else {
        return false;
    };
    // A caller of another ferry gets this daemon's identity and no service: it stops this
    // daemon and starts its own.
    let same = theirs.as_str() == Some(daemon.identity.as_str());
    let reply = json!({"hello": daemon.identity, "pid": std::process::id()});
    if link.send(&reply).await.is_err() {
        return false;
    }
    let Some(op) = link.receive().await else {
        return false;
    };
    match op.get("op").and_then(Value::as_str) {
        Some("status") => {
            let _ = link.send(&tagged("result", status(daemon))).await;
        }
        Some("stop") => {
            let stopped = daemon.pool.stop_all().await;
            let _ = link
                .send(&tagged("result", json!({"stopped": stopped})))
                .await;
            daemon.stop.notify_one();
        }
        Some("request") | Some("refresh") if same => {
            request(daemon, link, op).await;
            return true;
        }
        _ => {
            let error = Error::server("the daemon does not know this operation");
            let _ = link.send(&tagged("error", error_to_json(&error))).await;
        }
    }
    false
}

fn status(daemon: &Daemon) -> Value {
    let pid = std::process::id();
    json!({
        "pid": pid,
        "identity": daemon.identity,
        "up_ms": daemon.started.elapsed().as_millis() as u64,
        "rss_kb": pool::rss_kb(pid),
        "servers": daemon.pool.status(),
    })
}

/// A handler that asks the calling CLI: its directory, its terminal, its progress line.
struct RemoteHandler {
    outgoing: mpsc::UnboundedSender<Value>,
    answers: Mutex<HashMap<u64, oneshot::Sender<Value>>>,
    next: AtomicU64,
}

impl ClientHandler for RemoteHandler {
    fn capabilities(&self) -> Value {
        json!({"elicitation": {"form": {}, "url": {}}})
    }

    fn answer<'a>(
        &'a self,
        method: &'a str,
        params: &'a Value,
    ) -> BoxFuture<'a, std::result::Result<Value, ClientRequestError>> {
        Box::pin(async move {
            let id = self.next.fetch_add(1, Ordering::SeqCst);
            let (sender, receiver) = oneshot::channel();
            self.answers
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(id, sender);
            let ask = json!({"ask": {"id": id, "method": method, "params": params}});
            if self.outgoing.send(ask).is_err() {
                return Err(gone());
            }
            let answer = receiver.await.map_err(|_| gone())?;
            match answer.get("error") {
                Some(error) => Err(ClientRequestError {
                    code: error.get("code").and_then(Value::as_i64).unwrap_or(-1),
                    message: error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("refused")
                        .to_string(),
                }),
                None => Ok(answer.get("result").cloned().unwrap_or(Value::Null)),
            }
        })
    }

    fn progress(&self, params: &Value) {
        let _ = self.outgoing.send(tagged("progress", params.clone()));
    }
}

fn gone() -> ClientRequestError {
    ClientRequestError {
        code: -1,
        message: "the caller went away".into(),
    }
}

/// Serves one request (or refresh) for a caller: the caller's questions and progress go back
/// on its connection; if the caller goes away, the request is dropped, and the session tells
/// the server it is cancelled.
async fn request(daemon: &Arc<Daemon>, link: Link, op: Value) {
    let (mut reader, mut writer) = link.into_parts();
    let Some(server) = op.get("server").and_then(ServerRef::from_json) else {
        let error = Error::server("the daemon could not read the server description");
        let _ = socket::send_on(&mut writer, &tagged("error", error_to_json(&error))).await;
        return;
    };
    let (outgoing, mut queue) = mpsc::unbounded_channel::<Value>();
    let handler = Arc::new(RemoteHandler {
        outgoing: outgoing.clone(),
        answers: Mutex::new(HashMap::new()),
        next: AtomicU64::new(1),
    });
    let work = {
        let handler = handler.clone();
        let daemon = daemon.clone();
        async move {
            if op.get("op").and_then(Value::as_str) == Some("refresh") {
                let session = daemon.pool.session(&server).await?;
                crate::client::catalog::refresh_tools(&server.spec, &session)
                    .await
                    .map(|_| Value::Null)
            } else {
                let method = op.get("method").and_then(Value::as_str).unwrap_or_default();
                let params = op.get("params").cloned().unwrap_or(json!({}));
                let timeout = op
                    .get("timeout_ms")
                    .and_then(Value::as_u64)
                    .map(Duration::from_millis)
                    .unwrap_or(crate::client::catalog::DEFAULT_TIMEOUT);
                let headers = op
                    .get("headers")
                    .and_then(Value::as_array)
                    .map(|pairs| {
                        pairs
                            .iter()
                            .filter_map(|p| {
                                let p = p.as_array()?;
                                Some((
                                    p.first()?.as_str()?.to_string(),
                                    p.get(1)?.as_str()?.to_string(),
                                ))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let context = CallContext {
                    handler,
                    timeout,
                    progress: op.get("progress").and_then(Value::as_bool) == Some(true),
                    headers,
                };
                daemon.pool.request(&server, method, params, &context).await
            }
        }
    };
    let finished = async {
        let outcome: Result<Value> = work.await;
        let _ = outgoing.send(match outcome {
            Ok(result) => tagged("result", result),
            Err(error) => tagged("error", error_to_json(&error)),
        });
    };
    let answers = async {
        while let Some(message) = reader.receive().await {
            if let Some(answer) = message.get("answer") {
                let id = answer.get("id").and_then(Value::as_u64).unwrap_or(0);
                let waiting = handler
                    .answers
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id);
                if let Some(waiting) = waiting {
                    let _ = waiting.send(answer.clone());
                }
            }
        }
    };
    let writes = async {
        while let Some(message) = queue.recv().await {
            let last = message.get("result").is_some() || message.get("error").is_some();
            if socket::send_on(&mut writer, &message).await.is_err() || last {
                return;
            }
        }
    };
    // The caller hanging up ends the request: the session then cancels it with the server.
    tokio::select! {
        _ = async { tokio::join!(finished, writes) } => {}
        _ = answers => {}
    }
}
