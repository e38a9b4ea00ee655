//! A server as a child process: newline-delimited JSON-RPC on stdin/stdout, stderr drained
//! into a per-server log so a chatty server can never block, the whole process group stopped
//! on shutdown (stdin closed, then SIGTERM, then SIGKILL).
//!
//! The process itself is watched, not only its pipes: a server that forks and exits leaves a
//! grandchild holding stdout open, and its end must still be noticed at once.

use super::framing::{self, FrameError};
use super::{Connection, Event, EventSender, Transport};
use crate::{Error, Result};
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, Command};
use tokio::sync::{mpsc, oneshot, watch};

/// How long a server may take to exit after its stdin closes, before SIGTERM.
/// Real servers take 170-370 ms to exit on EOF; a caller waiting for ferry to exit should not
/// pay that, so only a server that is already on its way out gets to finish on its own.
const STDIN_GRACE: Duration = Duration::from_millis(5);
/// How long after SIGTERM before SIGKILL.
const TERM_GRACE: Duration = Duration::from_millis(500);
/// How long output may still arrive after the process exited (a grandchild may hold the pipe).
const EXIT_DRAIN: Duration = Duration::from_millis(200);
/// The server log is cut at this size (the stderr tail is still kept in memory).
const LOG_LIMIT: u64 = 8 * 1024 * 1024;
/// How much of the stderr end is kept for error messages.
const TAIL_BYTES: usize = 4096;

/// What to run.
#[derive(Debug, Clone)]
pub struct ChildSpec {
    /// The server's name, for messages.
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
    /// The largest message accepted from the server, in bytes.
    pub max_message: usize,
    /// The whole environment to start from instead of ferry's own (the daemon starts a
    /// server with the environment of the call that needed it); `env` is added on top.
    pub base_env: Option<Vec<(String, String)>>,
    /// Run under `ferry __guard`, which stops the whole process group when the process that
    /// started it dies, even by SIGKILL (the daemon's servers must never outlive it).
    pub guarded: bool,
}

/// A running server process.
pub struct StdioChild {
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    pub(super) pid: u32,
    exit: watch::Receiver<Option<ExitStatus>>,
    tail: Arc<Mutex<VecDeque<u8>>>,
    /// Fires when stderr reaches its end, so a failure report has the server's last words.
    stderr_done: Mutex<Option<oneshot::Receiver<()>>>,
    pub(super) log_path: PathBuf,
    stopped: AtomicBool,
    /// The write end of a guarded server's watch pipe: when it closes (this is dropped, or
    /// ferry dies), the guard stops the server's process group.
    _watch: Option<std::os::fd::OwnedFd>,
}

/// The file descriptor on which `ferry __guard` finds its watch pipe.
pub const GUARD_FD: i32 = 3;

/// A guarded server's watch pipe: the read end goes to the guard (and is closed here once it
/// is spawned), the write end is held for as long as the server may run.
struct WatchPipe {
    read: std::os::fd::OwnedFd,
    write: std::os::fd::OwnedFd,
}

/// `ferry __guard -- COMMAND ARGS` with the read end of a fresh pipe as its descriptor 3.
fn guarded_command(spec: &ChildSpec) -> Result<(Command, WatchPipe)> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let exe = std::env::current_exe()
        .map_err(|e| Error::server(format!("cannot find ferry's own program: {e}")))?;
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array; both are owned below.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Error::server(format!(
            "cannot start the server: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: the descriptors were just created and nothing else owns them.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let mut command = Command::new(exe);
    command
        .arg("__guard")
        .arg("--")
        .arg(&spec.command)
        .args(&spec.args);
    let read_fd = read.as_raw_fd();
    // SAFETY: only async-signal-safe calls (dup2, fcntl) between fork and exec.
    unsafe {
        command.pre_exec(move || {
            if read_fd == GUARD_FD {
                let flags = libc::fcntl(read_fd, libc::F_GETFD);
                libc::fcntl(read_fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC);
            } else if libc::dup2(read_fd, GUARD_FD) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok((command, WatchPipe { read, write }))
}

impl StdioChild {
    /// Starts the process in its own process group, logging stderr to `log_path`.
    pub fn spawn(spec: &ChildSpec, log_path: &Path) -> Result<Transport> {
        let (mut command, watch) = if spec.guarded {
            let (command, pipe) = guarded_command(spec)?;
            (command, Some(pipe))
        } else {
            let mut command = Command::new(&spec.command);
            command.args(&spec.args);
            (command, None)
        };
        if let Some(base) = &spec.base_env {
            command.env_clear().envs(base.iter().map(|(k, v)| (k, v)));
        }
        command
            .envs(&spec.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if let Some(cwd) = &spec.cwd {
            command.current_dir(cwd);
        }
        let mut child = command.spawn().map_err(|e| {
            let why = if e.kind() == std::io::ErrorKind::NotFound {
                format!("command {:?} not found", spec.command)
            } else {
                e.to_string()
            };
            Error::server(format!("could not start {}: {why}", spec.name))
                .with_hint("check the server's \"command\" in its configuration")
        })?;
        let pid = child.id().unwrap_or(0);
        tracing::debug!(pid, command = %spec.command, guarded = spec.guarded, "server started");
        // The guard has its copy of the read end; ours would only leak.
        let watch = watch.map(|pipe| {
            drop(pipe.read);
            pipe.write
        });
        let (sender, incoming) = mpsc::unbounded_channel();
        let tail = Arc::new(Mutex::new(VecDeque::with_capacity(TAIL_BYTES)));
        let (stdout_done_tx, stdout_done) = oneshot::channel();
        if let Some(stdout) = child.stdout.take() {
            let sender = sender.clone();
            let tail = tail.clone();
            let limit = spec.max_message;
            tokio::spawn(async move {
                read_messages(stdout, sender, tail, limit).await;
                let _ = stdout_done_tx.send(());
            });
        }
        let (stderr_sent, stderr_done) = oneshot::channel();
        if let Some(stderr) = child.stderr.take() {
            let log = open_log(log_path);
            let tail = tail.clone();
            tokio::spawn(async move {
                drain_stderr(stderr, log, tail).await;
                let _ = stderr_sent.send(());
            });
        }
        let stdin = child.stdin.take();
        let (exit_tx, exit) = watch::channel(None);
        tokio::spawn(async move {
            let status = child.wait().await.ok();
            let _ = exit_tx.send(status);
            // The server is gone. Output it wrote before exiting still arrives; if the pipe
            // stays open (a grandchild holds it), the session must not wait for its timeout.
            if tokio::time::timeout(EXIT_DRAIN, stdout_done).await.is_err() {
                let _ = sender.send(Event::Closed("the server exited".into()));
            }
        });
        Ok(Transport {
            connection: Connection::Stdio(StdioChild {
                stdin: tokio::sync::Mutex::new(stdin),
                pid,
                exit,
                tail,
                stderr_done: Mutex::new(Some(stderr_done)),
                log_path: log_path.to_path_buf(),
                stopped: AtomicBool::new(false),
                _watch: watch,
            }),
            incoming,
        })
    }

    pub(super) async fn send(&self, message: &Value) -> Result<()> {
        let line = framing::encode_line(message);
        let mut stdin = self.stdin.lock().await;
        let stdin = stdin
            .as_mut()
            .ok_or_else(|| Error::server("the server's stdin is closed"))?;
        let written = async {
            stdin.write_all(&line).await?;
            stdin.flush().await
        };
        written
            .await
            .map_err(|_| Error::server("the server stopped reading its input"))
    }

    /// The last lines of stderr.
    pub fn stderr_tail(&self) -> String {
        let tail = self
            .tail
            .lock()
            .map(|t| t.iter().copied().collect::<Vec<u8>>())
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&tail).into_owned();
        // Start at a line boundary when the buffer was cut mid-line.
        let text = if tail.len() >= TAIL_BYTES {
            text.split_once('\n')
                .map_or(text.clone(), |(_, rest)| rest.to_string())
        } else {
            text
        };
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(10)..].join("\n")
    }

    /// Waits briefly for the process to exit, and for its last stderr to be read, and
    /// describes how it ended.
    pub async fn exit_description(&self) -> Option<String> {
        let mut exit = self.exit.clone();
        let status =
            tokio::time::timeout(Duration::from_millis(300), exit.wait_for(Option::is_some))
                .await
                .ok()
                .and_then(|r| r.ok().and_then(|s| *s));
        let done = self.stderr_done.lock().ok().and_then(|mut d| d.take());
        if let Some(done) = done {
            let _ = tokio::time::timeout(Duration::from_millis(200), done).await;
        }
        status.map(describe_status)
    }

    /// Whether the process has exited.
    pub fn has_exited(&self) -> bool {
        self.exit.borrow().is_some()
    }

    async fn wait_exit(&self, limit: Duration) -> bool {
        let mut exit = self.exit.clone();
        let exited = tokio::time::timeout(limit, exit.wait_for(Option::is_some))
            .await
            .is_ok_and(|r| r.is_ok());
        exited
    }

    /// Closes stdin, then stops the process group: SIGTERM after a short grace, SIGKILL after another.
    pub async fn shutdown(&self) {
        if self.stopped.swap(true, Ordering::SeqCst) {
            return;
        }
        self.stdin.lock().await.take();
        let exited = self.wait_exit(STDIN_GRACE).await;
        // Children of the server (npx starts node) may outlive it: the group gets the signal too.
        self.signal_group(libc::SIGTERM);
        if !exited && !self.wait_exit(TERM_GRACE).await {
            self.signal_group(libc::SIGKILL);
            self.wait_exit(Duration::from_secs(5)).await;
        }
        // A grandchild that ignored SIGTERM goes too.
        self.signal_group(libc::SIGKILL);
    }

    fn signal_group(&self, signal: i32) {
        if self.pid > 0 {
            // SAFETY: killpg only sends a signal; the group is the one we created for this child.
            unsafe {
                libc::killpg(self.pid as i32, signal);
            }
        }
    }
}

impl Drop for StdioChild {
    fn drop(&mut self) {
        // Whatever path dropped us (an error, a signal, a panic), leave nothing running.
        if !self.stopped.load(Ordering::SeqCst) {
            self.signal_group(libc::SIGKILL);
        }
    }
}

fn describe_status(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => "exited".to_string(),
    }
}

fn open_log(path: &Path) -> Option<tokio::fs::File> {
    if let Some(dir) = path.parent() {
        crate::paths::ensure_private_dir(dir).ok()?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .open(path)
        .ok()?;
    Some(tokio::fs::File::from_std(file))
}

async fn read_messages(
    stdout: tokio::process::ChildStdout,
    sender: EventSender,
    tail: Arc<Mutex<VecDeque<u8>>>,
    limit: usize,
) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut line = Vec::new();
    loop {
        match framing::read_line(&mut reader, &mut line, limit).await {
            Ok(false) => break,
            Ok(true) => {
                let text = line.trim_ascii();
                if text.is_empty() {
                    continue;
                }
                match framing::decode(text) {
                    Ok(message) => {
                        if forward(&sender, message).is_err() {
                            return;
                        }
                    }
                    Err(_) => {
                        // Not a protocol message: keep it with the stderr tail, where a person
                        // looking at a failure will see it.
                        let preview =
                            String::from_utf8_lossy(&text[..text.len().min(200)]).into_owned();
                        push_tail(
                            &tail,
                            format!("[ferry] ignored non-JSON output: {preview}\n").as_bytes(),
                        );
                    }
                }
            }
            Err(FrameError::TooLong(limit)) => {
                let _ = sender.send(Event::Unreadable(format!(
                    "the server sent a message over {} MB",
                    limit / (1024 * 1024)
                )));
                let _ = sender.send(Event::Closed("its output could not be read".into()));
                return;
            }
            Err(FrameError::Io(e)) => {
                let _ = sender.send(Event::Closed(format!(
                    "could not read the server's output: {e}"
                )));
                return;
            }
        }
    }
    let _ = sender.send(Event::Closed("the server closed its output".into()));
}

/// Sends a message on, one event per element of a batch.
pub(super) fn forward(sender: &EventSender, message: Value) -> std::result::Result<(), ()> {
    match message {
        Value::Array(batch) => {
            for message in batch {
                sender.send(Event::Message(message)).map_err(|_| ())?;
            }
            Ok(())
        }
        message => sender.send(Event::Message(message)).map_err(|_| ()),
    }
}

async fn drain_stderr(
    mut stderr: tokio::process::ChildStderr,
    mut log: Option<tokio::fs::File>,
    tail: Arc<Mutex<VecDeque<u8>>>,
) {
    let mut buffer = vec![0u8; 64 * 1024];
    let mut logged: u64 = 0;
    loop {
        let n = match stderr.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        push_tail(&tail, &buffer[..n]);
        if let Some(file) = log.as_mut() {
            if logged < LOG_LIMIT {
                let keep = n.min((LOG_LIMIT - logged) as usize);
                if file.write_all(&buffer[..keep]).await.is_err() {
                    log = None;
                    continue;
                }
                logged += keep as u64;
                if logged >= LOG_LIMIT {
                    let _ = file
                        .write_all(
                            b"\n[ferry] log cut at 8 MiB; the rest of stderr was discarded\n",
                        )
                        .await;
                }
            }
        }
    }
    if let Some(mut file) = log {
        let _ = file.flush().await;
    }
}

fn push_tail(tail: &Mutex<VecDeque<u8>>, bytes: &[u8]) {
    if let Ok(mut tail) = tail.lock() {
        let bytes = &bytes[bytes.len().saturating_sub(TAIL_BYTES)..];
        let overflow = (tail.len() + bytes.len()).saturating_sub(TAIL_BYTES);
        let drop = overflow.min(tail.len());
        tail.drain(..drop);
        tail.extend(bytes);
    }
}
