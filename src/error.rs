//! One error type whose `Display` is the user-facing line, and the exit-code contract: every
//! command ends in an [`Outcome`] or an [`Error`], and [`exit_code`] is the one place that
//! turns either into the process status.
//!
//! Each layer says what went wrong in its own enum (`thiserror`, whose `Display` is the line
//! the person reads) and implements [`Failure`]: the [`ErrorKind`] that decides the exit code
//! and the `hint:` of what to do. At the edge `?` turns it into an [`Error`], which keeps the
//! typed failure as its `source()`, so the chain of causes survives.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

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

/// A typed failure of one layer: its `Display` is the user's message; [`Failure::kind`]
/// decides the exit code and [`Failure::hint`] says what to do. `?` turns one into an
/// [`Error`].
pub trait Failure: std::error::Error + Send + Sync + 'static {
    /// What kind of failure this is, which decides the exit code.
    fn kind(&self) -> ErrorKind;
    /// What the person can do about it, printed as `hint:`.
    fn hint(&self) -> Option<String> {
        None
    }
}

impl<F: Failure> From<F> for Error {
    fn from(failure: F) -> Error {
        let mut error = Error::new(failure.kind(), failure.to_string());
        error.hint = failure.hint();
        error.with_source(failure)
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

/// A failure with a one-line message, an optional hint of what to do, optional detail
/// (such as the last lines a server wrote to stderr), and the cause it came from, if any
/// (kept in this process only: not serialized, not compared).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
    pub hint: Option<String>,
    pub detail: Option<String>,
    #[serde(skip)]
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl PartialEq for Error {
    fn eq(&self, other: &Error) -> bool {
        (&self.kind, &self.message, &self.hint, &self.detail)
            == (&other.kind, &other.message, &other.hint, &other.detail)
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
            hint: None,
            detail: None,
            source: None,
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
    /// Keeps `cause` as this error's `source()`.
    pub fn with_source(mut self, cause: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(cause));
        self
    }
    /// The typed failure (or other cause) this error was made from, if it is an `E`.
    pub fn cause<E: std::error::Error + 'static>(&self) -> Option<&E> {
        self.source.as_deref()?.downcast_ref::<E>()
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

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    enum Layer {
        #[error("cannot read {0}: {1}")]
        Read(String, #[source] std::io::Error),
    }

    impl Failure for Layer {
        fn kind(&self) -> ErrorKind {
            ErrorKind::Usage
        }
        fn hint(&self) -> Option<String> {
            Some("fix the file".into())
        }
    }

    fn read() -> Result<()> {
        Err(Layer::Read("a.json".into(), std::io::Error::other("gone")))?
    }

    #[test]
    fn a_failure_becomes_an_error_with_its_message_hint_exit_code_and_causes() {
        let error = read().unwrap_err();
        assert_eq!(error.to_string(), "cannot read a.json: gone");
        assert_eq!(error.hint.as_deref(), Some("fix the file"));
        assert_eq!(exit_code(&Err(error.clone())), 2);
        // The chain: the error, the layer's failure, the I/O error under it.
        let layer = std::error::Error::source(&error).unwrap();
        assert_eq!(layer.to_string(), "cannot read a.json: gone");
        assert!(matches!(error.cause::<Layer>(), Some(Layer::Read(..))));
        assert_eq!(layer.source().unwrap().to_string(), "gone");
        // Over the daemon's wire the cause stays behind; what the person reads does not.
        let wire: Error = serde_json::from_str(&serde_json::to_string(&error).unwrap()).unwrap();
        assert_eq!(wire, error);
        assert!(std::error::Error::source(&wire).is_none());
    }
}
