//! Where ferry keeps its files (XDG base directories), and the one rule that turns a name from
//! a config file, a server or a model into a file name: no name ever becomes a path outside
//! ferry's directories, however long or strange it is.

use std::path::{Path, PathBuf};

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

fn xdg(var: &str, fallback: &str) -> PathBuf {
    xdg_base(std::env::var_os(var).map(PathBuf::from), &home(), fallback)
}

/// The XDG rule for a base directory variable's `value`: it counts only as an absolute path
/// (the spec calls a relative one invalid, to be ignored); otherwise `home/fallback`.
pub fn xdg_base(value: Option<PathBuf>, home: &Path, fallback: &str) -> PathBuf {
    match value {
        Some(dir) if dir.is_absolute() => dir,
        _ => home.join(fallback),
    }
}

/// Opens (creating it 0600) and locks a lock file exclusively, waiting for whoever holds it;
/// the lock goes when the file is closed. Every writer of a shared file of ferry's (the
/// config, the token files, the daemon's start) takes its lock here.
pub fn locked_file(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(path)?;
    loop {
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(file);
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// The user's home directory.
pub fn home_dir() -> PathBuf {
    home()
}

/// `~/.config/ferry` (or `$XDG_CONFIG_HOME/ferry`; `$FERRY_CONFIG_DIR` overrides).
pub fn config_dir() -> PathBuf {
    match std::env::var_os("FERRY_CONFIG_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => xdg("XDG_CONFIG_HOME", ".config").join("ferry"),
    }
}

/// `~/.cache/ferry` (or `$XDG_CACHE_HOME/ferry`; `$FERRY_CACHE_DIR` overrides).
pub fn cache_dir() -> PathBuf {
    match std::env::var_os("FERRY_CACHE_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => xdg("XDG_CACHE_HOME", ".cache").join("ferry"),
    }
}

/// Per-server stderr logs live here.
pub fn log_dir() -> PathBuf {
    cache_dir().join("logs")
}

/// The stderr log of a server.
pub fn log_file(server: &str) -> PathBuf {
    log_dir().join(format!("{}.log", file_stem(server)))
}

/// Images, audio, blobs and full outputs cut by a budget are written here.
pub fn output_dir() -> PathBuf {
    cache_dir().join("out")
}

/// Creates `dir` (and parents) readable by the user only.
pub fn ensure_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Makes `dir` (created if need be) the user's alone: a directory of ferry's that already
/// existed with wider permissions (made by an older ferry, or by hand) is narrowed to 0700,
/// since the files in it hold secrets.
pub fn ensure_secret_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    ensure_private_dir(dir)?;
    let meta = std::fs::metadata(dir)?;
    // SAFETY: geteuid has no preconditions.
    let mine = meta.uid() == unsafe { libc::geteuid() };
    if mine && meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Writes `bytes` to `path` readable by the user only (0600, its directory 0700), atomically:
/// a reader sees the old file or the new one, never a part. Every file that can hold a secret
/// (servers.json, the trust store, tokens) is written here.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(dir) = path.parent() {
        ensure_secret_dir(dir)?;
    }
    let temp = temp_beside(path);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temp)
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|_| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// A temporary file name beside `path`, unique to this process and moment, for writes that
/// end in a rename (so concurrent writers never share one).
pub fn temp_beside(path: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    path.with_file_name(format!(".{name}.{}.{n}.tmp", std::process::id()))
}

/// The longest stem `file_stem` returns before its hash.
const STEM_MAX: usize = 48;

/// A file-name stem for any text: ASCII letters, digits, `-`, `_` and `.` kept (never a
/// leading dot), everything else `_`, at most 48 bytes; a name that had to change gets a hash
/// of the original appended, so two names never share a file.
pub fn file_stem(name: &str) -> String {
    let mut stem: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.starts_with('.') {
        stem.replace_range(..1, "_");
    }
    let changed = stem != name || stem.len() > STEM_MAX || stem.is_empty();
    if changed {
        stem.truncate(STEM_MAX);
        stem.push_str(&format!("-{:08x}", fnv1a(name) as u32));
    }
    stem
}

/// FNV-1a: a stable hash that does not change with the Rust version.
pub fn fnv1a(text: &str) -> u64 {
    let mut hash: u64 = 0xcbf29ce484222325;
    for byte in text.bytes() {
        hash ^= byte as u64;
        hash = hash.wrapping_mul(0x100000001b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_xdg_directory_is_ignored_as_the_spec_says() {
        let home = Path::new("/home/me");
        assert_eq!(
            xdg_base(Some("/xdg".into()), home, ".config"),
            PathBuf::from("/xdg")
        );
        assert_eq!(
            xdg_base(Some("relative".into()), home, ".config"),
            PathBuf::from("/home/me/.config")
        );
        assert_eq!(
            xdg_base(None, home, ".cache"),
            PathBuf::from("/home/me/.cache")
        );
    }

    #[test]
    fn a_locked_file_is_held_until_closed() {
        let path = std::env::temp_dir().join(format!("ferry-lock-{}", std::process::id()));
        let held = locked_file(&path).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = {
            let path = path.clone();
            std::thread::spawn(move || {
                let _second = locked_file(&path).unwrap();
                tx.send(()).unwrap();
            })
        };
        assert!(rx
            .recv_timeout(std::time::Duration::from_millis(200))
            .is_err());
        drop(held);
        assert!(rx.recv_timeout(std::time::Duration::from_secs(10)).is_ok());
        waiter.join().unwrap();
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn names_never_become_paths() {
        assert_eq!(file_stem("github"), "github");
        assert_eq!(file_stem("my.server_2-x"), "my.server_2-x");
        for hostile in [
            "../../../../home/me/notes",
            "..",
            ".",
            "/etc/passwd",
            "a/b",
            "",
            "con\0sole",
            &"x".repeat(300),
        ] {
            let stem = file_stem(hostile);
            assert!(
                !stem.contains('/') && !stem.starts_with('.') && !stem.is_empty(),
                "{stem}"
            );
            assert!(stem.len() <= STEM_MAX + 9, "{}", stem.len());
        }
        assert_ne!(file_stem("a/b"), file_stem("a_b"));
        assert_ne!(file_stem(&"x".repeat(300)), file_stem(&"x".repeat(301)));
    }
}
