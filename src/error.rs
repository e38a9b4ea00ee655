//! One error type whose `Display` is the user-facing line, and the exit-code contract: every
//! command ends in an [`Outcome`] or an [`Error`], and [`exit_code`] is the one place that
//! turns either into the process status.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What went wrong, which decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The tool ran and reported an error (`isError`): exit 1.
    ToolError,
    /// Writing the output failed (a full disk, a broken device): exit 1.
    Output,
    /// Unknown server, tool or flag, or an invalid argument: exit 2.
    Usage,
    /// The server could not start, crashed or broke the protocol: exit 3.
    Server,
    /// The server did not answer in time: exit 4.
    Timeout,
    /// The server needs authentication or refused it: exit 5.
    Auth,
    /// Ctrl-C or SIGTERM stopped ferry (and its server): exit 130, as shells expect.
    Interrupted,
    /// The reader of ferry's output went away (`| head`): a quiet end, exit 141 as a shell
    /// reports a process ended by SIGPIPE.
    ClosedPipe,
}

impl ErrorKind {
    /// The documented process exit code for this kind of failure.
    pub fn exit_code(self) -> i32 {
        match self {
            ErrorKind::ToolError | ErrorKind::Output => 1,
            ErrorKind::Usage => 2,
            ErrorKind::Server => 3,
            ErrorKind::Timeout => 4,
            ErrorKind::Auth => 5,
            ErrorKind::Interrupted => 130,
            ErrorKind::ClosedPipe => 141,
        }
    }
}

/// How a command that ran to its end went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Exit 0.
    Success,
    /// The tool ran and reported an error (`isError`): its output was printed; exit 1.
    ToolReportedError,
    /// A check found something out of date (`ferry skill --check`): exit 1.
    Stale,
    /// The person or the client said no (`ferry ask`): exit 1.
    Declined,
    /// A search found nothing (`ferry find`), said on stderr: exit 1, as grep and rg do.
    NoMatch,
    /// The task asked for (`--task ID`) still runs: exit 75, sysexits' "try again later".
    TaskRunning,
}

/// The process status for a command's result: the one mapping from outcomes and errors.
pub fn exit_code(result: &Result<Outcome>) -> i32 {
    match result {
        Ok(Outcome::Success) => 0,
        Ok(Outcome::ToolReportedError | Outcome::Stale | Outcome::Declined | Outcome::NoMatch) => 1,
        Ok(Outcome::TaskRunning) => 75,
        Err(error) => error.kind.exit_code(),
    }
}

/// A failure with a one-line message, an optional hint of what to do, and optional detail
/// (such as the last lines a server wrote to stderr).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
    pub hint: Option<String>,
    pub detail: Option<String>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
            hint: None,
            detail: None,
        }
    }
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Usage, message)
    }
    pub fn server(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Server, message)
    }
    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Timeout, message)
    }
    pub fn auth(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Auth, message)
    }
    pub fn interrupted() -> Self {
        Self::new(
            ErrorKind::Interrupted,
            "interrupted; the server was stopped",
        )
    }
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        let detail = detail.into();
        if !detail.trim().is_empty() {
            self.detail = Some(detail);
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
