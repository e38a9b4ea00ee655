//! ferry's own output, for every command: stdout with a closed pipe and write errors turned
//! into exit codes (never a panic), and one-line warnings on stderr with control characters
//! escaped.

use crate::escape::escape_line;
use crate::{Error, ErrorKind, Result};
use std::io::Write;

/// Writes to stdout. A closed pipe (`| head`) is a quiet end (exit 141); any other write
/// failure (a full disk) is exit 1 with one line.
pub fn emit(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    let mut written = stdout.write_all(text.as_bytes());
    if written.is_ok() && !text.is_empty() && !text.ends_with('\n') {
        written = stdout.write_all(b"\n");
    }
    written.and_then(|_| stdout.flush()).map_err(write_error)
}

/// The error for a failed write to stdout.
pub fn write_error(error: std::io::Error) -> Error {
    if error.kind() == std::io::ErrorKind::BrokenPipe {
        Error::new(
            ErrorKind::ClosedPipe,
            "the reader of ferry's output went away",
        )
    } else {
        Error::new(
            ErrorKind::Output,
            format!("cannot write the output: {error}"),
        )
        .with_hint("check the free space and permissions where the output goes")
    }
}

/// One line on stderr (a failed write to stderr has nowhere to be reported).
pub fn warn(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{}", escape_line(text));
}
