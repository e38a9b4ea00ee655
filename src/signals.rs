//! Running async work from the command line so that Ctrl-C and SIGTERM are always heard: the
//! work is dropped (and with it any server it started) and ferry exits 130. Blocking reads
//! (standard input, a FIFO, a terminal prompt) run off the runtime's thread for the same reason.

use crate::{Error, Result};

/// What a process needs before anything else, done by Rust's start-up for a `main` and by
/// hand for ferry's C entry point: SIGPIPE ignored (a closed pipe is an error ferry reports,
/// exit 141, never a silent death), and standard streams that are closed opened on
/// /dev/null (a file opened later must never become stdout).
pub fn prepare() {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    // SAFETY: poll on a live array; open and signal have no memory preconditions.
    unsafe {
        if libc::poll(fds.as_mut_ptr(), 3, 0) >= 0 {
            for fd in fds {
                if fd.revents & libc::POLLNVAL != 0
                    && libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) != fd.fd
                {
                    libc::abort();
                }
            }
        }
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// A single-threaded runtime: a CLI call needs no more.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::server(format!("cannot start the async runtime: {e}")))
}

/// Runs async work to its end, or until SIGINT/SIGTERM, when the work is dropped and with it
/// any server it started. A blocked read is left behind, not waited for.
pub fn block_on_interruptible<T>(work: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    let runtime = runtime()?;
    let outcome = runtime.block_on(async move {
        tokio::select! {
            outcome = work => outcome,
            _ = interrupted() => Err(Error::interrupted()),
        }
    });
    // What the dropped work still owed its server (a task's cancel) gets a moment to go out.
    runtime.block_on(farewells_sent(FAREWELL_LIMIT));
    runtime.shutdown_background();
    outcome
}

/// How long an ending process waits for its farewells.
const FAREWELL_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Messages being sent on the way out (see [`farewell`]).
static FAREWELLS: std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>> =
    std::sync::Mutex::new(Vec::new());

/// Registers the sending of a message that must reach a server even when the work that owed
/// it was dropped, so that a cold ferry waits for it before exiting; the daemon's runtime
/// simply runs it.
pub fn farewell(sending: tokio::task::JoinHandle<()>) {
    let mut farewells = FAREWELLS.lock().unwrap_or_else(|e| e.into_inner());
    farewells.retain(|f| !f.is_finished());
    farewells.push(sending);
}

/// Waits, at most `limit`, until every farewell has been sent.
async fn farewells_sent(limit: std::time::Duration) {
    let pending: Vec<_> = std::mem::take(&mut *FAREWELLS.lock().unwrap_or_else(|e| e.into_inner()));
    if pending.is_empty() {
        return;
    }
    let _ = tokio::time::timeout(limit, async {
        for sending in pending {
            let _ = sending.await;
        }
    })
    .await;
}

/// Resolves on SIGINT, SIGTERM or SIGHUP (a closed terminal), so the work is dropped and its
/// server stopped.
pub async fn interrupted() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = int.recv() => {}
        _ = term.recv() => {}
        _ = hup.recv() => {}
    }
}
