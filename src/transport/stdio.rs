//! A server as a child process: newline-delimited JSON-RPC on stdin/stdout, stderr drained
//! into a per-server log so a chatty server can never block, the whole process group stopped
//! on shutdown (stdin closed, then SIGTERM, then SIGKILL).

use super::{Event, EventSender};
use crate::{Error, Result};
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

/// How long a server may take to exit after its stdin closes, before SIGTERM.
/// Real servers take 170-370 ms to exit on EOF; a caller waiting for ferry to exit should not
/// pay that, so only a server that is already on its way out gets to finish on its own.
const STDIN_GRACE: Duration = Duration::from_millis(5);
/// How long after SIGTERM before SIGKILL.
const TERM_GRACE: Duration = Duration::from_millis(500);
/// The server log is cut at this size (the stderr tail is still kept in memory).
const LOG_LIMIT: u64 = 8 * 1024 * 1024;
/// How much of the stderr end is kept for error messages.
const TAIL_BYTES: usize = 4096;

/// What to run.
#[derive(Debug, Clone)]
pub struct ChildSpec {
    pub command: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
}

/// A running server process.
pub struct StdioChild {
    child: Child,
    stdin: Option<ChildStdin>,
    pgid: Option<i32>,
    pub(super) incoming: mpsc::UnboundedReceiver<Event>,
    tail: Arc<Mutex<VecDeque<u8>>>,
    /// Fires when stderr reaches its end, so a failure report has the server's last words.
    stderr_done: Option<tokio::sync::oneshot::Receiver<()>>,
    pub(super) log_path: PathBuf,
    stopped: bool,
}

impl StdioChild {
    /// Starts the process in its own process group, logging stderr to `log_path`.
    pub fn spawn(spec: &ChildSpec, log_path: &Path) -> Result<StdioChild> {
        let mut command = Command::new(&spec.command);
        command
            .args(&spec.args)
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
            Error::server(format!("could not start the server: {why}"))
                .with_hint("check the server's \"command\" in its configuration")
        })?;
        let pgid = child.id().map(|id| id as i32);
        let (sender, incoming) = mpsc::unbounded_channel();
        let tail = Arc::new(Mutex::new(VecDeque::with_capacity(TAIL_BYTES)));
        if let Some(stdout) = child.stdout.take() {
            tokio::spawn(read_messages(stdout, sender, tail.clone()));
        }
        let (stderr_sent, stderr_done) = tokio::sync::oneshot::channel();
        if let Some(stderr) = child.stderr.take() {
            let log = open_log(log_path);
            let tail = tail.clone();
            tokio::spawn(async move {
                drain_stderr(stderr, log, tail).await;
                let _ = stderr_sent.send(());
            });
        }
        Ok(StdioChild {
            stdin: child.stdin.take(),
            child,
            pgid,
            incoming,
            tail,
            stderr_done: Some(stderr_done),
            log_path: log_path.to_path_buf(),
            stopped: false,
        })
    }

    pub(super) async fn send(&mut self, message: &Value) -> Result<()> {
        let mut line = serde_json::to_vec(message).map_err(|e| Error::server(e.to_string()))?;
        line.push(b'\n');
        let stdin = self
            .stdin
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
    pub async fn exit_description(&mut self) -> Option<String> {
        let status = match tokio::time::timeout(Duration::from_millis(300), self.child.wait()).await
        {
            Ok(Ok(status)) => Some(describe_status(status)),
            _ => None,
        };
        if let Some(done) = self.stderr_done.take() {
            let _ = tokio::time::timeout(Duration::from_millis(200), done).await;
        }
        status
    }

    /// Closes stdin, then stops the process group: SIGTERM after a short grace, SIGKILL after another.
    pub async fn shutdown(mut self) {
        self.stdin.take();
        let exited = matches!(
            tokio::time::timeout(STDIN_GRACE, self.child.wait()).await,
            Ok(Ok(_))
        );
        // Children of the server (npx starts node) may outlive it: the group gets the signal too.
        self.signal_group(libc::SIGTERM);
        if !exited
            && tokio::time::timeout(TERM_GRACE, self.child.wait())
                .await
                .is_err()
        {
            self.signal_group(libc::SIGKILL);
            let _ = self.child.wait().await;
        }
        self.stopped = true;
    }

    fn signal_group(&self, signal: i32) {
        if let Some(pgid) = self.pgid {
            // SAFETY: killpg only sends a signal; the group is the one we created for this child.
            unsafe {
                libc::killpg(pgid, signal);
            }
        }
    }
}

impl Drop for StdioChild {
    fn drop(&mut self) {
        // Whatever path dropped us (an error, a signal, a panic), leave nothing running.
        if !self.stopped {
            self.signal_group(libc::SIGKILL);
            let _ = self.child.try_wait();
        }
    }
}

fn describe_status(status: std::process::ExitStatus) -> String {
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
) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) => break,
            Ok(_) => {
                let text = trim_line(&line);
                if text.is_empty() {
                    continue;
                }
                match serde_json::from_slice::<Value>(text) {
                    Ok(message) => {
                        if sender.send(Event::Message(message)).is_err() {
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
            Err(e) => {
                let _ = sender.send(Event::Closed(format!(
                    "could not read the server's output: {e}"
                )));
                return;
            }
        }
    }
    let _ = sender.send(Event::Closed("the server closed its output".into()));
}

fn trim_line(line: &[u8]) -> &[u8] {
    let start = line
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(line.len());
    let end = line
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |p| p + 1);
    &line[start..end.max(start)]
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
