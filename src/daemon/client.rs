//! The CLI's side of the warm path: find the daemon (or start it, one starter at a time),
//! hand it a request, answer its questions with the caller's own handler, and return what
//! the server answered. When the daemon cannot be reached or started, the caller is told so
//! and goes the cold path.

use super::wire::{error_from_json, tagged, ServerRef};
use crate::client::config::ServerSpec;
use crate::client::handler::ClientHandler;
use crate::transport::socket::{self, Link};
use crate::{Error, Result};
use serde_json::{json, Value};
use std::os::unix::process::CommandExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a hello may take before the daemon is taken for hung.
const HELLO_LIMIT: Duration = Duration::from_secs(2);
/// How long a started daemon has to start listening.
const START_LIMIT: Duration = Duration::from_secs(5);

/// Why the warm path was not taken.
#[derive(Debug)]
pub struct Unavailable(pub String);

/// Whether the warm path is switched off: `FERRY_NO_DAEMON=1`, or the server says
/// `keepAlive: false` (the CLI adds `--no-daemon`).
pub fn disabled_for(spec: &ServerSpec) -> bool {
    !spec.keep_alive
        || std::env::var_os("FERRY_NO_DAEMON").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Connects to the daemon and exchanges hellos: the link, and whether the daemon is this
/// ferry's. `None` when no daemon answers.
async fn greet() -> Option<(Link, bool)> {
    let path = socket::socket_path();
    let mut link = Link::connect(&path).await.ok()?;
    let greeting = json!({"hello": super::identity()});
    link.send(&greeting).await.ok()?;
    let reply = tokio::time::timeout(HELLO_LIMIT, link.receive())
        .await
        .ok()
        .flatten()?;
    let same = reply.get("hello").and_then(Value::as_str) == Some(super::identity().as_str());
    Some((link, same))
}

/// Connects and sends the hello and `op` in one write (a round trip saved on every call); the
/// link once the daemon's hello says it is this ferry's, else `None`. A daemon of another
/// ferry does not run the op: it is stopped, never reused.
async fn open_with(op: &Value) -> Option<Link> {
    let path = socket::socket_path();
    let mut link = Link::connect(&path).await.ok()?;
    link.send_all(&[json!({"hello": super::identity()}), op.clone()])
        .await
        .ok()?;
    let reply = tokio::time::timeout(HELLO_LIMIT, link.receive())
        .await
        .ok()
        .flatten()?;
    if reply.get("hello").and_then(Value::as_str) == Some(super::identity().as_str()) {
        return Some(link);
    }
    tracing::debug!("daemon: another version answers; stopping it");
    if let Some((mut other, _)) = greet().await {
        let _ = other.send(&json!({"op": "stop"})).await;
        let _ = tokio::time::timeout(Duration::from_secs(10), async {
            while other.receive().await.is_some() {}
        })
        .await;
    }
    None
}

/// Finds the daemon (starting it if needed) and hands it `op`; the link then carries the
/// op's replies.
pub async fn connect_or_start(op: &Value) -> std::result::Result<Link, Unavailable> {
    let dir = socket::run_dir();
    // A directory that is not private is never used: the socket in it could be anyone's.
    if dir.exists() {
        socket::check_private(&dir).map_err(|e| Unavailable(e.message))?;
        if let Some(link) = open_with(op).await {
            return Ok(link);
        }
    }
    socket::ensure_run_dir().map_err(|e| Unavailable(e.message))?;
    let lock = tokio::task::spawn_blocking(take_start_lock)
        .await
        .map_err(|e| Unavailable(e.to_string()))?
        .map_err(Unavailable)?;
    // Someone else may have started it while this caller waited for the lock.
    if let Some(link) = open_with(op).await {
        drop(lock);
        return Ok(link);
    }
    let path = socket::socket_path();
    let _ = std::fs::remove_file(&path);
    start_daemon().map_err(Unavailable)?;
    let deadline = Instant::now() + START_LIMIT;
    loop {
        if let Some(link) = open_with(op).await {
            drop(lock);
            return Ok(link);
        }
        if Instant::now() > deadline {
            return Err(Unavailable("the daemon did not start listening".into()));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The exclusive lock one starter holds while it looks for the daemon and starts it.
fn take_start_lock() -> std::result::Result<std::fs::File, String> {
    use std::os::fd::AsRawFd;
    let path = socket::lock_path();
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    // SAFETY: flock on a descriptor this function owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(format!(
            "cannot lock {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(file)
}

/// Starts `ferry __daemon` in a session of its own, detached from this terminal; its
/// diagnostics go to the daemon's log.
fn start_daemon() -> std::result::Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find ferry's program: {e}"))?;
    let log = crate::paths::log_dir();
    let _ = crate::paths::ensure_private_dir(&log);
    let stderr = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log.join("daemon.log"))
        .map(std::process::Stdio::from)
        .unwrap_or_else(|_| std::process::Stdio::null());
    let mut command = std::process::Command::new(exe);
    command
        .arg("__daemon")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(stderr);
    // SAFETY: setsid is async-signal-safe; the daemon leaves the caller's session and
    // terminal, so the caller's Ctrl-C never reaches it.
    unsafe {
        command.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    command
        .spawn()
        .map(|_| ())
        .map_err(|e| format!("cannot start the daemon: {e}"))
}

/// Sends a request to `spec`'s warm session. `Err(Unavailable)` means the call never reached
/// the daemon and may go cold; an `Ok(Err(..))` is the call's own failure.
pub async fn request(
    spec: &ServerSpec,
    method: &str,
    params: Value,
    timeout: Duration,
    progress: bool,
    headers: &[(String, String)],
    handler: Arc<dyn ClientHandler>,
) -> std::result::Result<Result<Value>, Unavailable> {
    let server = match ServerRef::resolve(spec) {
        Ok(server) => server,
        // The cold path would fail the same way (an unset variable, an untrusted file).
        Err(e) => return Ok(Err(e)),
    };
    let op = json!({
        "op": "request", "server": server.to_json(), "method": method, "params": params,
        "timeout_ms": timeout.as_millis() as u64, "progress": progress, "headers": headers,
    });
    exchange(op, handler, timeout).await
}

/// Has the daemon list a server's tools into the cache (a first contact, a missing tool).
pub async fn refresh(
    spec: &ServerSpec,
    timeout: Duration,
    handler: Arc<dyn ClientHandler>,
) -> std::result::Result<Result<()>, Unavailable> {
    let server = match ServerRef::resolve(spec) {
        Ok(server) => server,
        Err(e) => return Ok(Err(e)),
    };
    let op = json!({"op": "refresh", "server": server.to_json()});
    Ok(exchange(op, handler, timeout).await?.map(|_| ()))
}

async fn exchange(
    op: Value,
    handler: Arc<dyn ClientHandler>,
    timeout: Duration,
) -> std::result::Result<Result<Value>, Unavailable> {
    let link = connect_or_start(&op).await?;
    let (mut reader, mut writer) = link.into_parts();
    // The daemon applies the call's limit; this one only guards against a daemon that hangs.
    let deadline = tokio::time::Instant::now() + timeout + Duration::from_secs(10);
    loop {
        let message = match tokio::time::timeout_at(deadline, reader.receive()).await {
            Ok(Some(message)) => message,
            Ok(None) => {
                return Ok(Err(Error::server(
                    "the ferry daemon stopped during the call",
                )
                .with_hint(
                    "run the command again (add --no-daemon to bypass the daemon)",
                )))
            }
            Err(_) => {
                return Ok(Err(Error::timeout(
                    "the ferry daemon did not answer in time",
                )
                .with_hint("ferry daemon stop, then run the command again")))
            }
        };
        if let Some(result) = message.get("result") {
            return Ok(Ok(result.clone()));
        }
        if let Some(error) = message.get("error") {
            return Ok(Err(error_from_json(error)));
        }
        if let Some(params) = message.get("progress") {
            handler.progress(params);
            continue;
        }
        if let Some(ask) = message.get("ask") {
            let id = ask.get("id").cloned().unwrap_or(Value::Null);
            let method = ask
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let params = ask.get("params").cloned().unwrap_or(Value::Null);
            let answer = match handler.answer(method, &params).await {
                Ok(result) => json!({"id": id, "result": result}),
                Err(e) => json!({"id": id, "error": {"code": e.code, "message": e.message}}),
            };
            if socket::send_on(&mut writer, &tagged("answer", answer))
                .await
                .is_err()
            {
                return Ok(Err(Error::server(
                    "the ferry daemon stopped during the call",
                )));
            }
        }
    }
}

/// One operation on a running daemon (`status`, `stop`), or `None` when none runs. A daemon
/// of another ferry answers too: status shows it, stop stops it.
pub async fn operate(op: &str) -> Option<Result<Value>> {
    socket::check_private(&socket::run_dir()).ok()?;
    let (mut link, _) = greet().await?;
    link.send(&json!({"op": op})).await.ok()?;
    let reply = tokio::time::timeout(Duration::from_secs(15), link.receive())
        .await
        .ok()
        .flatten()?;
    Some(match reply.get("error") {
        Some(error) => Err(error_from_json(error)),
        None => Ok(reply.get("result").cloned().unwrap_or(Value::Null)),
    })
}

/// The status of this ferry's daemon, if one runs (starts nothing, stops nothing).
pub async fn peek_status() -> Option<Value> {
    socket::check_private(&socket::run_dir()).ok()?;
    let (mut link, same) = greet().await?;
    if !same {
        return None;
    }
    link.send(&json!({"op": "status"})).await.ok()?;
    link.receive().await?.get("result").cloned()
}
