//! Where ferry keeps its files (XDG base directories).

use std::path::PathBuf;

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

fn xdg(var: &str, fallback: &str) -> PathBuf {
    match std::env::var_os(var) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => home().join(fallback),
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

/// Images, audio, blobs and full outputs cut by a budget are written here.
pub fn output_dir() -> PathBuf {
    cache_dir().join("out")
}

/// Creates `dir` (and parents) readable by the user only.
pub fn ensure_private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}
