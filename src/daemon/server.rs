//! The daemon process (`ferry __daemon`): it listens on the socket, runs each connection's
//! one operation, stops idle servers, and exits when it holds none.
//!
//! A handed-over command is run by a [`Runner`] the binary supplies (the CLI's own code, so
//! that a warm command prints exactly what a cold one would); the daemon gives it the warm
//! pool and a [`CallerLink`] to the ferry process that handed it over.

use super::wire::{line, Answer, Dirs, Hello, Question, Run, Status, ToCaller, ToDaemon};
use crate::client::pool::Pool;
use crate::protocol::BoxFuture;
use crate::transport::framing::{self, FrameError};
use crate::transport::socket::{self, MESSAGE_LIMIT};
use crate::{Error, Outcome, Result};
use std::collections::HashMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::unix::OwnedReadHalf;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{mpsc, oneshot, Notify};

/// How long the daemon stays with no server and no caller before it exits.
const LINGER: Duration = Duration::from_secs(2);

/// How a handed-over command went.
pub enum Handled {
    /// It ran: its end, as the caller reports it.
    Ran(Result<Outcome>),
    /// It is to run cold, in the caller (nothing was written): why.
    Cold(String),
}

/// Runs one handed-over command with the warm pool, talking to its caller through the link.
pub type Runner = fn(Run, Arc<CallerLink>, Arc<Pool>) -> BoxFuture<'static, Handled>;

/// The daemon's side of one caller: what it sends the caller, and the questions it waits on.
pub struct CallerLink {
    outgoing: mpsc::UnboundedSender<ToCaller>,
    waiting: Mutex<HashMap<u64, oneshot::Sender<Answer>>>,
    next: AtomicU64,
}

impl CallerLink {
    /// Sends the caller a message (it is dropped if the caller has gone).
    pub fn send(&self, message: ToCaller) {
        let _ = self.outgoing.send(message);
    }

    /// Asks the caller something and waits for its answer; `None` if it went away.
    pub async fn ask(&self, question: Question) -> Option<Answer> {
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        let (sender, receiver) = oneshot::channel();
        self.waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, sender);
        self.send(ToCaller::Ask { id, question });
        receiver.await.ok()
    }

    fn answered(&self, id: u64, answer: Answer) {
        let waiting = self
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
        if let Some(waiting) = waiting {
            let _ = waiting.send(answer);
        }
    }
}

struct Daemon {
    pool: Arc<Pool>,
    runner: Runner,
    identity: String,
    dirs: Dirs,
    started: Instant,
    connections: AtomicUsize,
    /// When the last connection ended (for the linger before exit).
    quiet_since: Mutex<Instant>,
    stop: Notify,
}

/// Runs the daemon until it is stopped, idle, or signalled.
pub fn run(runner: Runner) -> i32 {
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
        match serve(runner).await {
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

async fn serve(runner: Runner) -> Result<()> {
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
        pool: Arc::new(Pool::default()),
        runner,
        identity: super::identity(),
        dirs: Dirs::current(),
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
                        let worked = serve_connection(&daemon, stream).await;
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

/// The reading half of a caller's connection: its messages, one a line.
struct Incoming {
    reader: BufReader<OwnedReadHalf>,
    line: Vec<u8>,
}

impl Incoming {
    /// The next message; `None` at the end, on a broken stream or a line that is not one.
    async fn next<T: serde::de::DeserializeOwned>(&mut self) -> Option<T> {
        match framing::read_line(&mut self.reader, &mut self.line, MESSAGE_LIMIT).await {
            Ok(true) => serde_json::from_slice(&self.line).ok(),
            Ok(false) | Err(FrameError::TooLong(_) | FrameError::Io(_)) => None,
        }
    }
}

/// Serves one connection; says whether it was work (a command), which keeps the daemon
/// from exiting for a while, unlike a status query.
async fn serve_connection(daemon: &Arc<Daemon>, stream: UnixStream) -> bool {
    let (read, mut write) = stream.into_split();
    let mut incoming = Incoming {
        reader: BufReader::new(read),
        line: Vec::new(),
    };
    let Some(theirs) = incoming.next::<Hello>().await else {
        return false;
    };
    // A caller of another ferry gets this daemon's identity and no service: it stops this
    // daemon and starts its own.
    let same = theirs.hello == daemon.identity;
    let hello = Hello {
        hello: daemon.identity.clone(),
        pid: Some(std::process::id()),
    };
    if write.write_all(&line(&hello)).await.is_err() {
        return false;
    }
    let reply = match incoming.next().await {
        Some(ToDaemon::Status) => ToCaller::Status(status(daemon)),
        Some(ToDaemon::Stop) => {
            let stopped = daemon.pool.stop_all().await;
            let _ = write.write_all(&line(&ToCaller::Stopped(stopped))).await;
            daemon.stop.notify_one();
            return false;
        }
        Some(ToDaemon::Run(run)) if same => {
            if run.dirs != daemon.dirs {
                ToCaller::Refused(format!(
                    "the daemon keeps ferry's files in {} and {}",
                    daemon.dirs.config.display(),
                    daemon.dirs.cache.display()
                ))
            } else {
                run_command(daemon, *run, incoming, write).await;
                return true;
            }
        }
        _ => ToCaller::Refused("the daemon does not run this operation".into()),
    };
    let _ = write.write_all(&line(&reply)).await;
    false
}

fn status(daemon: &Daemon) -> Status {
    let pid = std::process::id();
    Status {
        pid,
        identity: daemon.identity.clone(),
        up_ms: daemon.started.elapsed().as_millis() as u64,
        rss_kb: crate::client::pool::rss_kb(pid),
        servers: daemon.pool.status(),
    }
}

/// Runs a handed-over command: its output and questions go to the caller as they come, its
/// end last; if the caller hangs up, the command is dropped, and with it any request in
/// flight, which its session cancels with the server.
async fn run_command(
    daemon: &Arc<Daemon>,
    run: Run,
    mut incoming: Incoming,
    mut write: tokio::net::unix::OwnedWriteHalf,
) {
    let (outgoing, mut queue) = mpsc::unbounded_channel::<ToCaller>();
    let link = Arc::new(CallerLink {
        outgoing: outgoing.clone(),
        waiting: Mutex::new(HashMap::new()),
        next: AtomicU64::new(1),
    });
    let work = (daemon.runner)(run, link.clone(), daemon.pool.clone());
    let finished = async {
        let end = match work.await {
            Handled::Ran(result) => ToCaller::Done(result),
            Handled::Cold(why) => ToCaller::Cold(why),
        };
        let _ = outgoing.send(end);
    };
    let answers = async {
        while let Some(message) = incoming.next::<ToDaemon>().await {
            if let ToDaemon::Answer { id, answer } = message {
                link.answered(id, answer);
            }
        }
    };
    // What is queued goes in one write (the output and the end of a call, most often), so
    // the caller wakes once.
    let writes = async {
        while let Some(first) = queue.recv().await {
            let mut bytes = Vec::new();
            let mut next = Some(first);
            let mut last = false;
            while let Some(message) = next.take() {
                last = matches!(message, ToCaller::Done(_) | ToCaller::Cold(_));
                bytes.extend(line(&message));
                if !last {
                    next = queue.try_recv().ok();
                }
            }
            if write.write_all(&bytes).await.is_err() || last {
                return;
            }
        }
    };
    // The caller hanging up ends the command: its session then cancels the request.
    tokio::select! {
        _ = async { tokio::join!(finished, writes) } => {}
        _ = answers => {}
    }
}
