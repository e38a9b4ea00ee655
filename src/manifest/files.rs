//! Files a manifest's tools and resources reach: a path accepted only inside the roots, a file
//! read as it is when opened, and a MIME type by extension.

use std::path::{Path, PathBuf};

/// Resolves a path and accepts it only inside a root, by whole components, with symlinks
/// resolved; a path that need not exist is resolved through its parent.
pub fn confine(path: &Path, roots: &[PathBuf], must_exist: bool) -> Result<PathBuf, String> {
    let resolved = match std::fs::canonicalize(path) {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !must_exist => {
            let name = path.file_name().ok_or("it names no file")?;
            if name == ".." || name == "." {
                return Err("it names no file".into());
            }
            // A dangling symlink does not resolve either, but writing to it writes where it
            // points: only a name that is truly free may be new.
            if std::fs::symlink_metadata(path).is_ok() {
                return Err("it is a symbolic link to nothing".into());
            }
            let parent = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            std::fs::canonicalize(parent)
                .map_err(|_| "its directory does not exist".to_string())?
                .join(name)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err("it does not exist".into())
        }
        Err(e) => return Err(e.to_string()),
    };
    if roots.iter().any(|root| resolved.starts_with(root)) {
        Ok(resolved)
    } else {
        Err("it is outside the served roots".into())
    }
}

/// Reads a file as it is now, if it leads inside a root and not into a `hidden` place: the
/// check is made on the opened file (its real path, as the kernel knows it), so a file
/// swapped for a link since it was checked is refused; only a regular file of at most
/// `limit` bytes is read.
pub fn read_confined(
    path: &Path,
    roots: &[PathBuf],
    hidden: &[PathBuf],
    limit: usize,
) -> Result<Vec<u8>, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        // A FIFO put in the file's place must not hang the server.
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| e.to_string())?;
    use std::os::fd::AsRawFd;
    let real = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .map_err(|e| format!("cannot tell where it leads: {e}"))?;
    if !roots.iter().any(|root| real.starts_with(root)) {
        return Err("it leads outside the served roots".into());
    }
    if hidden.iter().any(|h| real.starts_with(h)) {
        return Err("it leads into ferry's own files, which are never served".into());
    }
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("it is not a regular file".into());
    }
    if meta.len() as usize > limit {
        return Err(format!("it is over max_output ({limit} bytes)"));
    }
    let mut bytes = Vec::new();
    file.take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() > limit {
        return Err(format!("it is over max_output ({limit} bytes)"));
    }
    Ok(bytes)
}

/// The MIME type of a file, by its extension.
pub fn mime_for_path(path: &Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("svg") => "image/svg+xml",
        Some("wav") => "audio/wav",
        Some("mp3") => "audio/mpeg",
        Some("md" | "markdown") => "text/markdown",
        Some("txt" | "text" | "log") => "text/plain",
        Some("json") => "application/json",
        Some("toml") => "application/toml",
        Some("html" | "htm") => "text/html",
        Some("pdf") => "application/pdf",
        _ => "application/octet-stream",
    }
}
