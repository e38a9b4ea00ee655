//! The daemon's Unix socket: where it lives, who may use it, and its framing (one JSON message
//! per line, as stdio servers speak).
//!
//! The socket sits in a per-user directory: `$FERRY_RUNTIME_DIR`, else `$FERRY_CACHE_DIR/run`
//! when ferry's state is moved (tests do), else `$XDG_RUNTIME_DIR/ferry`, else
//! `~/.cache/ferry/run`. The directory is made 0700 and the socket 0600; a directory that is
//! not the user's own, or that others can write, is refused, never used or repaired.

use super::framing::{self, FrameError};
use crate::{Error, Result};
use serde_json::Value;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::UnixStream;

/// The largest message on the socket: a tool result as large as a server may send.
pub const MESSAGE_LIMIT: usize = 256 * 1024 * 1024;

/// The directory that holds the daemon's socket and lock.
pub fn run_dir() -> PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var("FERRY_RUNTIME_DIR") {
        return PathBuf::from(dir);
    }
    if var("FERRY_CACHE_DIR").is_some() {
        return crate::paths::cache_dir().join("run");
    }
    match var("XDG_RUNTIME_DIR") {
        Some(dir) => PathBuf::from(dir).join("ferry"),
        None => crate::paths::cache_dir().join("run"),
    }
}

/// The socket's path.
pub fn socket_path() -> PathBuf {
    run_dir().join("daemon.sock")
}

/// The lock that one starter at a time holds while it finds or starts the daemon.
pub fn lock_path() -> PathBuf {
    run_dir().join("daemon.lock")
}

/// Creates the run directory if needed, and refuses one that is not private to this user.
pub fn ensure_run_dir() -> Result<PathBuf> {
    let dir = run_dir();
    crate::paths::ensure_private_dir(&dir).map_err(|e| {
        Error::server(format!(
            "cannot create the daemon's directory {}: {e}",
            dir.display()
        ))
    })?;
    check_private(&dir)?;
    Ok(dir)
}

/// Refuses a directory that another user owns or that others may write.
pub fn check_private(dir: &Path) -> Result<()> {
    let meta = std::fs::symlink_metadata(dir).map_err(|e| {
        Error::server(format!(
            "cannot read the daemon's directory {}: {e}",
            dir.display()
        ))
    })?;
    // SAFETY: getuid has no preconditions.
    let me = unsafe { libc::getuid() };
    let mode = meta.permissions().mode();
    if !meta.is_dir() || meta.uid() != me || mode & 0o022 != 0 {
        return Err(Error::server(format!(
            "the daemon's directory {} is not private to you (owner {}, mode {:o})",
            dir.display(),
            meta.uid(),
            mode & 0o777
        ))
        .with_hint("remove it, or set FERRY_RUNTIME_DIR to a directory only you can write"));
    }
    Ok(())
}

/// A connection to the daemon: lines of JSON each way.
pub struct Link {
    reader: LinkReader,
    writer: OwnedWriteHalf,
}

impl Link {
    pub fn new(stream: UnixStream) -> Link {
        let (read, write) = stream.into_split();
        Link {
            reader: LinkReader {
                reader: BufReader::new(read),
                line: Vec::new(),
            },
            writer: write,
        }
    }

    /// Connects to the daemon's socket, if one answers.
    pub async fn connect(path: &Path) -> std::io::Result<Link> {
        UnixStream::connect(path).await.map(Link::new)
    }

    pub async fn send(&mut self, message: &Value) -> std::io::Result<()> {
        self.writer.write_all(&framing::encode_line(message)).await
    }

    /// Sends several messages in one write.
    pub async fn send_all(&mut self, messages: &[Value]) -> std::io::Result<()> {
        let bytes: Vec<u8> = messages.iter().flat_map(framing::encode_line).collect();
        self.writer.write_all(&bytes).await
    }

    /// The next message; `None` at the end of the stream or on a broken one.
    pub async fn receive(&mut self) -> Option<Value> {
        self.reader.receive().await
    }

    /// Splits into its halves, for a reader and a writer in different tasks.
    pub fn into_parts(self) -> (LinkReader, OwnedWriteHalf) {
        (self.reader, self.writer)
    }
}

/// The reading half of a [`Link`].
pub struct LinkReader {
    reader: BufReader<OwnedReadHalf>,
    line: Vec<u8>,
}

impl LinkReader {
    /// The next message (lines that are not JSON are skipped); `None` at the end of the
    /// stream, on a broken one, or past the size limit.
    pub async fn receive(&mut self) -> Option<Value> {
        loop {
            match framing::read_line(&mut self.reader, &mut self.line, MESSAGE_LIMIT).await {
                Ok(true) => {
                    if let Ok(value) = serde_json::from_slice::<Value>(&self.line) {
                        return Some(value);
                    }
                }
                Ok(false) | Err(FrameError::TooLong(_) | FrameError::Io(_)) => return None,
            }
        }
    }
}

/// Writes one message on a writing half.
pub async fn send_on(writer: &mut OwnedWriteHalf, message: &Value) -> std::io::Result<()> {
    writer.write_all(&framing::encode_line(message)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_others_can_write_is_refused() {
        let dir = std::env::temp_dir().join(format!("ferry-run-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let refused = check_private(&dir).unwrap_err();
        assert!(refused.message.contains("not private to you"), "{refused}");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(check_private(&dir).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
