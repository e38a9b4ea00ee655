//! Trust in project files: a repository's `.mcp.json` (or `.cursor/mcp.json`,
//! `.vscode/mcp.json`) can name any command and any host, so its servers start, and the
//! user's `${VAR}`s are expanded into them, only once the user has run `ferry trust` there.
//! Trust records the file's path and a SHA-256 of its content in the user's config directory;
//! a changed file needs trust again. Only a file the user owns, in directories no one else can
//! write, can be trusted ([`unsafe_reason`]): a `.mcp.json` another account planted in a
//! shared directory, or could swap in, would otherwise run as the user.

use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// What the user has said about a project file as it is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustState {
    Trusted,
    /// Trusted once, but its content changed since.
    Changed,
    Untrusted,
    /// Another user owns it, or can write it or its directory: never trusted.
    Unsafe,
}

impl TrustState {
    /// A word for the server list.
    pub fn label(self) -> &'static str {
        match self {
            TrustState::Trusted => "trusted",
            TrustState::Changed => "changed since trusted",
            TrustState::Untrusted => "not trusted",
            TrustState::Unsafe => "not trustable: another user owns or can write it",
        }
    }
}

/// One trusted file.
#[derive(Debug, Clone, PartialEq)]
pub struct TrustedFile {
    pub path: PathBuf,
    pub sha256: String,
    pub trusted_at_ms: u64,
}

/// `trusted.json` as it is on disk. A store that does not read as this trusts nothing.
#[derive(Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct StoreFile {
    files: Vec<StoredFile>,
}

#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredFile {
    /// As text: a path that is not UTF-8 is written as it displays, never lost with the rest.
    path: String,
    sha256: String,
    #[serde(default)]
    trusted_at_ms: u64,
}

/// The trusted project files, from `trusted.json` in the config directory.
#[derive(Debug, Default)]
pub struct TrustStore {
    pub files: Vec<TrustedFile>,
}

/// Where trust is recorded.
pub fn store_path() -> PathBuf {
    crate::paths::config_dir().join("trusted.json")
}

/// The hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Why the project file at `path` can never be trusted, if it cannot: another user owns it,
/// or others can write it, its directory (and the project directory above `.cursor` or
/// `.vscode`), or, for a symbolic link, the directory of the file it points to.
pub fn unsafe_reason(path: &Path) -> Option<String> {
    // SAFETY: geteuid and getegid have no preconditions.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    unsafe_reason_for(path, uid, gid)
}

fn unsafe_reason_for(path: &Path, uid: u32, gid: u32) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let path = &absolute(path);
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) => return Some(format!("{} cannot be read ({e})", path.display())),
    };
    if meta.uid() != uid {
        return Some(format!(
            "{} is owned by another user (uid {})",
            path.display(),
            meta.uid()
        ));
    }
    if writable_by_others(&meta, gid) {
        return Some(format!(
            "other users can write {} (mode {:o})",
            path.display(),
            meta.mode() & 0o7777
        ));
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(dir) = path.parent() {
        dirs.push(dir.to_path_buf());
        if dir
            .file_name()
            .is_some_and(|n| n == ".cursor" || n == ".vscode")
        {
            dirs.extend(dir.parent().map(Path::to_path_buf));
        }
    }
    let linked = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if linked {
        if let Ok(target) = std::fs::canonicalize(path) {
            dirs.extend(target.parent().map(Path::to_path_buf));
        }
    }
    for dir in dirs {
        let Ok(meta) = std::fs::metadata(&dir) else {
            return Some(format!("{} cannot be read", dir.display()));
        };
        // root can write anything anyway; any other owner could swap the file.
        if meta.uid() != uid && meta.uid() != 0 {
            return Some(format!(
                "its directory {} belongs to another user (uid {})",
                dir.display(),
                meta.uid()
            ));
        }
        if writable_by_others(&meta, gid) {
            return Some(format!(
                "other users can write its directory {} (mode {:o})",
                dir.display(),
                meta.mode() & 0o7777
            ));
        }
    }
    None
}

/// Whether someone besides the owner can write: everyone, or a group that is not the user's
/// own private group (the group-writable files of a umask of 002 are the user's alone).
fn writable_by_others(meta: &std::fs::Metadata, my_gid: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    let mode = meta.mode();
    mode & 0o002 != 0 || (mode & 0o020 != 0 && !private_group(meta.gid(), my_gid))
}

/// Whether `gid` is the user's own group with no other members listed.
fn private_group(gid: u32, my_gid: u32) -> bool {
    if gid != my_gid {
        return false;
    }
    // SAFETY: a struct of integers and pointers, for getgrgid_r to fill.
    let mut group: libc::group = unsafe { std::mem::zeroed() };
    let mut buffer = vec![0 as libc::c_char; 1 << 16];
    let mut found: *mut libc::group = std::ptr::null_mut();
    // SAFETY: every pointer is to memory owned here, the buffer's length is passed with it,
    // and `group`'s strings point into the buffer, which outlives their reading below.
    let status = unsafe {
        libc::getgrgid_r(
            gid,
            &mut group,
            buffer.as_mut_ptr(),
            buffer.len(),
            &mut found,
        )
    };
    if status != 0 || found.is_null() {
        return false;
    }
    // SAFETY: gr_mem is a NULL-terminated array of pointers into `buffer`.
    group.gr_mem.is_null() || unsafe { (*group.gr_mem).is_null() }
}

/// A path made absolute without following the last component, so the record names the file
/// the user saw.
fn absolute(path: &Path) -> PathBuf {
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        })
        .map(|d| d.join(name))
        .unwrap_or_else(|_| path.to_path_buf()),
        _ => path.to_path_buf(),
    }
}

impl TrustStore {
    /// Reads the store; a missing or unreadable store trusts nothing.
    pub fn load() -> TrustStore {
        let Ok(bytes) = std::fs::read(store_path()) else {
            return TrustStore::default();
        };
        let Ok(stored) = serde_json::from_slice::<StoreFile>(&bytes) else {
            return TrustStore::default();
        };
        let files = stored
            .files
            .into_iter()
            .map(|f| TrustedFile {
                path: PathBuf::from(f.path),
                sha256: f.sha256,
                trusted_at_ms: f.trusted_at_ms,
            })
            .collect();
        TrustStore { files }
    }

    /// The state of a project file whose content is `bytes`.
    pub fn state(&self, path: &Path, bytes: &[u8]) -> TrustState {
        let path = absolute(path);
        match self.files.iter().find(|f| f.path == path) {
            Some(file) if file.sha256 == sha256_hex(bytes) => TrustState::Trusted,
            Some(_) => TrustState::Changed,
            None => TrustState::Untrusted,
        }
    }

    /// Trusts a file as it is now.
    pub fn trust(&mut self, path: &Path, bytes: &[u8]) {
        let path = absolute(path);
        self.files.retain(|f| f.path != path);
        self.files.push(TrustedFile {
            path,
            sha256: sha256_hex(bytes),
            trusted_at_ms: crate::clock::now_ms(),
        });
    }

    /// Forgets a file; false when it was not trusted.
    pub fn revoke(&mut self, path: &Path) -> bool {
        let path = absolute(path);
        let before = self.files.len();
        self.files.retain(|f| f.path != path);
        self.files.len() != before
    }

    /// Writes the store (0600, atomically).
    pub fn save(&self) -> Result<()> {
        let path = store_path();
        let doc = StoreFile {
            files: self
                .files
                .iter()
                .map(|f| StoredFile {
                    path: f.path.display().to_string(),
                    sha256: f.sha256.clone(),
                    trusted_at_ms: f.trusted_at_ms,
                })
                .collect(),
        };
        let io = |e: std::io::Error| {
            Error::usage(format!("cannot write {}: {e}", path.display()))
                .with_hint(format!("check the permissions of {}", path.display()))
        };
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n";
        crate::paths::write_private(&path, text.as_bytes()).map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_file_needs_trust_again() {
        let dir = std::env::temp_dir().join(format!("ferry-trust-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(".mcp.json");
        let mut store = TrustStore::default();
        assert_eq!(store.state(&file, b"{}"), TrustState::Untrusted);
        store.trust(&file, b"{}");
        assert_eq!(store.state(&file, b"{}"), TrustState::Trusted);
        assert_eq!(store.state(&file, b"{\"x\":1}"), TrustState::Changed);
        assert!(store.revoke(&file));
        assert_eq!(store.state(&file, b"{}"), TrustState::Untrusted);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn only_a_file_of_ones_own_in_a_directory_of_ones_own_is_trustable() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = std::env::temp_dir().join(format!("ferry-trust-owner-{}", std::process::id()));
        std::fs::create_dir_all(dir.join(".cursor")).unwrap();
        let file = dir.join(".cursor/mcp.json");
        std::fs::write(&file, "{}").unwrap();
        let set = |p: &Path, mode: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
        };
        set(&dir, 0o755);
        set(&dir.join(".cursor"), 0o755);
        let meta = std::fs::metadata(&file).unwrap();
        let (uid, gid) = (meta.uid(), meta.gid());
        assert_eq!(unsafe_reason_for(&file, uid, gid), None);
        // Someone else's file.
        assert_eq!(
            unsafe_reason_for(&file, uid + 1, gid),
            Some(format!(
                "{} is owned by another user (uid {uid})",
                file.display()
            ))
        );
        // Writable by everyone, or by a group that is not the user's.
        set(&file, 0o646);
        assert_eq!(
            unsafe_reason_for(&file, uid, gid),
            Some(format!(
                "other users can write {} (mode 646)",
                file.display()
            ))
        );
        set(&file, 0o664);
        assert!(unsafe_reason_for(&file, uid, gid + 1).is_some());
        set(&file, 0o644);
        // The project directory above .cursor, shared even with the sticky bit.
        set(&dir, 0o1777);
        assert_eq!(
            unsafe_reason_for(&file, uid, gid),
            Some(format!(
                "other users can write its directory {} (mode 1777)",
                dir.display()
            ))
        );
        set(&dir, 0o755);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_store_round_trips_in_its_file_format() {
        let text = r#"{"files": [{"path": "/p/.mcp.json", "sha256": "ab", "trustedAtMs": 7}]}"#;
        let file: StoreFile = serde_json::from_str(text).unwrap();
        assert_eq!(file.files[0].path, "/p/.mcp.json");
        assert_eq!(file.files[0].trusted_at_ms, 7);
        let again: StoreFile =
            serde_json::from_str(&serde_json::to_string(&file).unwrap()).unwrap();
        assert_eq!(again, file);
        assert!(serde_json::to_string(&file)
            .unwrap()
            .contains("\"trustedAtMs\":7"));
    }

    #[test]
    fn sha256_is_standard() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
