//! Files a manifest's tools and resources reach: a path accepted only inside the roots, a file
//! read as it is when opened, and a MIME type by extension.

use std::path::{Path, PathBuf};

/// Why a path a manifest's tool or resource reaches is refused (the message says "it ...").
#[derive(Debug, thiserror::Error)]
pub enum PathRefusal {
    #[error("it names no file")]
    NoFile,
    #[error("it is a symbolic link to nothing")]
    DanglingLink,
    #[error("its directory does not exist")]
    NoDirectory,
    #[error("it does not exist")]
    Missing,
    #[error("it is outside the served roots")]
    OutsideRoots,
    #[error("cannot tell where it leads: {0}")]
    Unplaced(std::io::Error),
    #[error("it leads outside the served roots")]
    LeadsOutside,
    #[error("it leads into ferry's own files, which are never served")]
    LeadsIntoFerry,
    #[error("it is not a regular file")]
    NotRegular,
    #[error("it is over max_output ({0} bytes)")]
    TooLarge(usize),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Resolves a path and accepts it only inside a root, by whole components, with symlinks
/// resolved; a path that need not exist is resolved through its parent.
pub fn confine(path: &Path, roots: &[PathBuf], must_exist: bool) -> Result<PathBuf, PathRefusal> {
    let resolved = match std::fs::canonicalize(path) {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !must_exist => {
            let name = path.file_name().ok_or(PathRefusal::NoFile)?;
            if name == ".." || name == "." {
                return Err(PathRefusal::NoFile);
            }
            // A dangling symlink does not resolve either, but writing to it writes where it
            // points: only a name that is truly free may be new.
            if std::fs::symlink_metadata(path).is_ok() {
                return Err(PathRefusal::DanglingLink);
            }
            let parent = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            std::fs::canonicalize(parent)
                .map_err(|_| PathRefusal::NoDirectory)?
                .join(name)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(PathRefusal::Missing),
        Err(e) => return Err(e.into()),
    };
    if roots.iter().any(|root| resolved.starts_with(root)) {
        Ok(resolved)
    } else {
        Err(PathRefusal::OutsideRoots)
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
) -> Result<Vec<u8>, PathRefusal> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        // A FIFO put in the file's place must not hang the server.
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    use std::os::fd::AsRawFd;
    let real = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .map_err(PathRefusal::Unplaced)?;
    if !roots.iter().any(|root| real.starts_with(root)) {
        return Err(PathRefusal::LeadsOutside);
    }
    if hidden.iter().any(|h| real.starts_with(h)) {
        return Err(PathRefusal::LeadsIntoFerry);
    }
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(PathRefusal::NotRegular);
    }
    if meta.len() as usize > limit {
        return Err(PathRefusal::TooLarge(limit));
    }
    let mut bytes = Vec::new();
    file.take(limit as u64 + 1).read_to_end(&mut bytes)?;
    if bytes.len() > limit {
        return Err(PathRefusal::TooLarge(limit));
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
