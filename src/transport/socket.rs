//! Where the daemon's Unix socket lives and who may use it (the daemon and its callers frame
//! messages on it themselves, one JSON message per line: see `daemon::wire`).
//!
//! The socket sits in a per-user directory: `$FERRY_RUNTIME_DIR`, else `$FERRY_CACHE_DIR/run`
//! when ferry's state is moved (tests do), else `$XDG_RUNTIME_DIR/ferry`, else
//! `~/.cache/ferry/run`. The directory is made 0700 and the socket 0600; a directory that is
//! not the user's own, or that others can write, is refused, never used or repaired.

use crate::{Error, Result};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

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
