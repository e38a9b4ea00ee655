//! The caller's side of the warm path: find the daemon (or start it, one starter at a time),
//! hand it a whole command, and relay what comes back: text for this process's stdout and
//! stderr, answers to the daemon's questions, and the command's end.
//!
//! No async runtime, no config, no schema: a blocking socket and poll(2), so that a warm call
//! costs little more than starting a process. Ctrl-C (SIGINT, SIGTERM, SIGHUP) while a
//! command is relayed hangs up, which cancels the request in the daemon and leaves its server
//! warm. When the daemon cannot be reached or started, the caller is told why and goes cold.

use super::wire::{line, Answer, Hello, Question, Run, Status, ToCaller, ToDaemon};
use crate::client::config::ServerSpec;
use crate::transport::socket;
use crate::{Error, ErrorKind, Outcome, Result};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a hello may take before the daemon is taken for hung.
const HELLO_LIMIT: Duration = Duration::from_secs(2);
/// How long a started daemon has to start listening.
const START_LIMIT: Duration = Duration::from_secs(5);
/// What an interrupted warm call says: the request is cancelled, the server is not stopped.
pub const INTERRUPTED: &str =
    "interrupted; the request was cancelled and the warm server keeps running";

/// What became of a command handed to the daemon.
#[derive(Debug)]
pub enum Handed {
    /// The daemon ran it: its end, as this process reports it.
    Done(Result<Outcome>),
    /// It is to run here, cold, by design (`keepAlive: false`...); nothing was written.
    Cold,
    /// No daemon answers, and none was to be started.
    Absent,
    /// The warm path cannot be used now (nothing was written): why, for a warning.
    Unavailable(String),
}

/// Answers the daemon's questions in this process (standard input, files, the terminal).
pub type Answerer = fn(Question) -> Answer;

/// Writes the daemon's stderr text in this process (where the terminal's status line is
/// kept: a status update must not draw over a question open at the terminal).
pub type Stderr = fn(&str);

/// Whether `FERRY_NO_DAEMON` switches the warm path off.
pub fn disabled_by_env() -> bool {
    std::env::var_os("FERRY_NO_DAEMON").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Whether the warm path is switched off for a server: `no_daemon` (the caller's
/// `FERRY_NO_DAEMON`) says so, or the server says `keepAlive: false` (the CLI adds
/// `--no-daemon`).
pub fn disabled_for(spec: &ServerSpec, no_daemon: Option<&str>) -> bool {
    !spec.keep_alive || no_daemon.is_some_and(|v| !v.is_empty() && v != "0")
}

/// A connection to the daemon, past the hellos.
struct Connection {
    stream: UnixStream,
    reader: BufReader<UnixStream>,
}

/// What waiting for the daemon's next message brought.
enum Received {
    Message(ToCaller),
    Closed,
    Interrupted,
}

/// Why a connection was not had.
enum Refusal {
    /// Nothing listens.
    Nobody,
    /// A daemon of another ferry answered (it has been asked to stop).
    Replaced,
}

impl Connection {
    /// Connects, sends the hello and `op` in one write (a round trip saved on every call),
    /// and reads the daemon's hello. A daemon of another ferry does not run the op: it is
    /// stopped, never reused.
    fn open(op: &ToDaemon) -> std::result::Result<Connection, Refusal> {
        let stream = UnixStream::connect(socket::socket_path()).map_err(|_| Refusal::Nobody)?;
        let mut bytes = line(&Hello {
            hello: super::identity(),
            pid: None,
        });
        bytes.extend(line(op));
        (&stream).write_all(&bytes).map_err(|_| Refusal::Nobody)?;
        let mut connection = Connection {
            reader: BufReader::new(stream.try_clone().map_err(|_| Refusal::Nobody)?),
            stream,
        };
        let hello: Hello = connection
            .read_line(Some(Instant::now() + HELLO_LIMIT), None)
            .and_then(|line| serde_json::from_slice(&line).ok())
            .ok_or(Refusal::Nobody)?;
        if hello.hello == super::identity() {
            return Ok(connection);
        }
        tracing::debug!("daemon: another version answers; stopping it");
        drop(connection);
        stop_other();
        Err(Refusal::Replaced)
    }

    /// The next line, waiting until `deadline` (if any) or a byte on `interrupt`.
    fn read_line(
        &mut self,
        deadline: Option<Instant>,
        interrupt: Option<RawFd>,
    ) -> Option<Vec<u8>> {
        if !self.reader.buffer().contains(&b'\n') {
            loop {
                let timeout = match deadline {
                    Some(at) => {
                        let left = at.saturating_duration_since(Instant::now());
                        if left.is_zero() {
                            return None;
                        }
                        left.as_millis().clamp(1, i32::MAX as u128) as i32
                    }
                    None => -1,
                };
                match wait_readable(self.stream.as_raw_fd(), interrupt, timeout) {
                    Readiness::Ready => break,
                    Readiness::Interrupted | Readiness::TimedOut => return None,
                    Readiness::Retry => continue,
                }
            }
        }
        let mut line = Vec::new();
        match self.reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line),
        }
    }

    /// The next message of a command, or why there is none.
    fn receive(&mut self, interrupts: &Interrupts) -> Received {
        loop {
            if interrupts.caught() {
                return Received::Interrupted;
            }
            let Some(line) = self.read_line(None, Some(interrupts.fd())) else {
                return if interrupts.caught() {
                    Received::Interrupted
                } else {
                    Received::Closed
                };
            };
            // A line this ferry cannot read is skipped (the daemon is this ferry's own).
            if let Ok(message) = serde_json::from_slice(&line) {
                return Received::Message(message);
            }
        }
    }
}

enum Readiness {
    Ready,
    Interrupted,
    TimedOut,
    Retry,
}

/// poll(2) on the socket and, if given, the interrupt pipe.
fn wait_readable(fd: RawFd, interrupt: Option<RawFd>, timeout_ms: i32) -> Readiness {
    let mut fds = [
        libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: interrupt.unwrap_or(-1),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    // SAFETY: poll reads and writes the two entries of a live array.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout_ms) };
    if n < 0 {
        return if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            Readiness::Retry
        } else {
            Readiness::Ready
        };
    }
    if n == 0 {
        return Readiness::TimedOut;
    }
    if fds[1].revents != 0 {
        return Readiness::Interrupted;
    }
    Readiness::Ready
}

/// The write end of the pipe that SIGINT, SIGTERM and SIGHUP write to while a command is
/// relayed (-1: none).
static SIGNAL_PIPE: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(_: libc::c_int) {
    let fd = SIGNAL_PIPE.load(Ordering::Relaxed);
    if fd >= 0 {
        // SAFETY: write(2) is async-signal-safe; the pipe is non-blocking.
        unsafe {
            libc::write(fd, [1u8].as_ptr().cast(), 1);
        }
    }
}

const CAUGHT: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The signals that stop ferry, caught into a pipe while a command is relayed; their former
/// actions come back when this is dropped.
struct Interrupts {
    read: OwnedFd,
    _write: OwnedFd,
    former: Vec<(libc::c_int, libc::sigaction)>,
}

impl Interrupts {
    fn catch() -> Option<Interrupts> {
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two descriptors into the array; both are owned below.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
            return None;
        }
        // SAFETY: the descriptors were just created and nothing else owns them.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        SIGNAL_PIPE.store(write.as_raw_fd(), Ordering::SeqCst);
        let mut former = Vec::with_capacity(CAUGHT.len());
        for signal in CAUGHT {
            // SAFETY: a plain handler that only calls write(2); the former action is kept.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, &action, &mut old) == 0 {
                    former.push((signal, old));
                }
            }
        }
        Some(Interrupts {
            read,
            _write: write,
            former,
        })
    }

    fn fd(&self) -> RawFd {
        self.read.as_raw_fd()
    }

    /// Whether a signal came.
    fn caught(&self) -> bool {
        let mut byte = [0u8];
        // SAFETY: a non-blocking read of one byte into a live buffer.
        unsafe { libc::read(self.fd(), byte.as_mut_ptr().cast(), 1) == 1 }
    }
}

impl Drop for Interrupts {
    fn drop(&mut self) {
        for (signal, action) in &self.former {
            // SAFETY: puts back the action sigaction gave when the handler was installed.
            unsafe {
                libc::sigaction(*signal, action, std::ptr::null_mut());
            }
        }
        SIGNAL_PIPE.store(-1, Ordering::SeqCst);
    }
}

/// Hands `run` to the daemon, starting one if `start` says so and none runs, and relays the
/// command until its end. Nothing is written to stdout or stderr unless the result is
/// [`Handed::Done`].
pub fn hand_over(run: Run, start: bool, answer: Answerer, stderr: Stderr) -> Handed {
    let dir = socket::run_dir();
    // A directory that is not private is never used: the socket in it could be anyone's.
    if dir.exists() {
        if let Err(e) = socket::check_private(&dir) {
            return Handed::Unavailable(e.message);
        }
    } else if !start {
        return Handed::Absent;
    }
    let Some(interrupts) = Interrupts::catch() else {
        return Handed::Unavailable("cannot watch for Ctrl-C".into());
    };
    let op = ToDaemon::Run(Box::new(run));
    let connection = match Connection::open(&op) {
        Ok(connection) => connection,
        Err(_) if !start => return Handed::Absent,
        Err(_) => match connect_or_start(&op) {
            Ok(connection) => connection,
            Err(why) => return Handed::Unavailable(why.to_string()),
        },
    };
    relay(connection, answer, stderr, &interrupts)
}

/// Why the daemon could not be started (the call then runs without it).
#[derive(Debug, thiserror::Error)]
enum StartError {
    #[error("{0}")]
    RunDir(Error),
    #[error("cannot lock {}: {source}", path.display())]
    Lock {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("cannot find ferry's program: {0}")]
    Program(std::io::Error),
    #[error("cannot start the daemon: {0}")]
    Spawn(std::io::Error),
    #[error("the daemon did not start listening")]
    NotListening,
}

/// Starts the daemon (one starter at a time) and hands it `op`.
fn connect_or_start(op: &ToDaemon) -> std::result::Result<Connection, StartError> {
    socket::ensure_run_dir().map_err(StartError::RunDir)?;
    let lock = take_start_lock()?;
    // Someone else may have started it while this caller waited for the lock.
    if let Ok(connection) = Connection::open(op) {
        drop(lock);
        return Ok(connection);
    }
    let _ = std::fs::remove_file(socket::socket_path());
    start_daemon()?;
    let deadline = Instant::now() + START_LIMIT;
    loop {
        if let Ok(connection) = Connection::open(op) {
            drop(lock);
            return Ok(connection);
        }
        if Instant::now() > deadline {
            return Err(StartError::NotListening);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Relays a command's messages until its end.
fn relay(
    mut connection: Connection,
    answer: Answerer,
    stderr: Stderr,
    interrupts: &Interrupts,
) -> Handed {
    let answers = match connection.stream.try_clone() {
        Ok(stream) => Arc::new(Mutex::new(stream)),
        Err(e) => return Handed::Unavailable(e.to_string()),
    };
    loop {
        let message = match connection.receive(interrupts) {
            Received::Message(message) => message,
            Received::Closed => {
                return Handed::Done(Err(Error::server(
                    "the ferry daemon stopped during the call",
                )
                .with_hint("run the command again (add --no-daemon to bypass the daemon)")))
            }
            Received::Interrupted => {
                return Handed::Done(Err(Error::new(ErrorKind::Interrupted, INTERRUPTED)))
            }
        };
        match message {
            ToCaller::Out(text) => {
                let mut stdout = std::io::stdout().lock();
                if let Err(e) = stdout
                    .write_all(text.as_bytes())
                    .and_then(|_| stdout.flush())
                {
                    return Handed::Done(Err(crate::console::write_error(e)));
                }
            }
            ToCaller::Err(text) => stderr(&text),
            // Answered off this thread: a question can wait on a person or a pipe, and
            // Ctrl-C must still be heard.
            ToCaller::Ask { id, question } => {
                let answers = answers.clone();
                std::thread::spawn(move || {
                    let reply = ToDaemon::Answer {
                        id,
                        answer: answer(question),
                    };
                    let stream = answers.lock().unwrap_or_else(|e| e.into_inner());
                    let _ = (&*stream).write_all(&line(&reply));
                });
            }
            ToCaller::Done(result) => return Handed::Done(result),
            ToCaller::Cold(_) => return Handed::Cold,
            ToCaller::Refused(why) => return Handed::Unavailable(why),
            ToCaller::Status(_) | ToCaller::Stopped(_) => {}
        }
    }
}

/// Asks the daemon that answers (another ferry's) to stop, and waits until it has.
fn stop_other() {
    let Ok(stream) = UnixStream::connect(socket::socket_path()) else {
        return;
    };
    let mut bytes = line(&Hello {
        hello: super::identity(),
        pid: None,
    });
    bytes.extend(line(&ToDaemon::Stop));
    if (&stream).write_all(&bytes).is_err() {
        return;
    }
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut sink = Vec::new();
    let _ = std::io::Read::read_to_end(&mut &stream, &mut sink);
}

/// The exclusive lock one starter holds while it looks for the daemon and starts it.
fn take_start_lock() -> std::result::Result<std::fs::File, StartError> {
    let path = socket::lock_path();
    crate::paths::locked_file(&path).map_err(|source| StartError::Lock { path, source })
}

/// Starts `ferry __daemon` in a session of its own, detached from this terminal; its
/// diagnostics go to the daemon's log.
fn start_daemon() -> std::result::Result<(), StartError> {
    let exe = std::env::current_exe().map_err(StartError::Program)?;
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
    command.spawn().map(|_| ()).map_err(StartError::Spawn)
}

/// `ferry daemon status` from a running daemon (another ferry's too), and whether it is this
/// ferry's; `None` when none runs. `limit` bounds the wait (a listing must not stall on the
/// daemon).
pub fn status(limit: Duration) -> Option<(Status, bool)> {
    match operate(&ToDaemon::Status, limit)? {
        (Some(ToCaller::Status(status)), same) => Some((status, same)),
        _ => None,
    }
}

/// Stops the running daemon (another ferry's too): how many servers it stopped, or `None`
/// when none runs.
pub fn stop() -> Option<usize> {
    match operate(&ToDaemon::Stop, Duration::from_secs(15))? {
        (Some(ToCaller::Stopped(count)), _) => Some(count),
        // An earlier ferry's daemon answers in its own words, or just goes.
        _ => Some(0),
    }
}

/// One operation on whatever daemon answers: its reply (if it could be read), and whether
/// the daemon is this ferry's; `None` when no daemon answers.
fn operate(op: &ToDaemon, limit: Duration) -> Option<(Option<ToCaller>, bool)> {
    socket::check_private(&socket::run_dir()).ok()?;
    let stream = UnixStream::connect(socket::socket_path()).ok()?;
    let mut bytes = line(&Hello {
        hello: super::identity(),
        pid: None,
    });
    bytes.extend(line(op));
    (&stream).write_all(&bytes).ok()?;
    let mut connection = Connection {
        reader: BufReader::new(stream.try_clone().ok()?),
        stream,
    };
    let deadline = Instant::now() + limit;
    let hello: Hello = serde_json::from_slice(&connection.read_line(Some(deadline), None)?).ok()?;
    let same = hello.hello == super::identity();
    let reply = connection
        .read_line(Some(deadline), None)
        .and_then(|line| serde_json::from_slice(&line).ok());
    Some((reply, same))
}
