//! Trust in project files: a repository's `.mcp.json` (or `.cursor/mcp.json`,
//! `.vscode/mcp.json`) can name any command and any host, so its servers start, and the
//! user's `${VAR}`s are expanded into them, only once the user has run `ferry trust` there.
//! Trust records the file's path and a SHA-256 of its content in the user's config directory;
//! a changed file needs trust again.

use crate::{Error, Result};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// What the user has said about a project file as it is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustState {
    Trusted,
    /// Trusted once, but its content changed since.
    Changed,
    Untrusted,
}

impl TrustState {
    /// A word for the server list.
    pub fn label(self) -> &'static str {
        match self {
            TrustState::Trusted => "trusted",
            TrustState::Changed => "changed since trusted",
            TrustState::Untrusted => "not trusted",
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
        let Ok(doc) = serde_json::from_slice::<Value>(&bytes) else {
            return TrustStore::default();
        };
        let files = doc
            .get("files")
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|item| {
                        Some(TrustedFile {
                            path: PathBuf::from(item.get("path")?.as_str()?),
                            sha256: item.get("sha256")?.as_str()?.to_string(),
                            trusted_at_ms: item
                                .get("trustedAtMs")
                                .and_then(Value::as_u64)
                                .unwrap_or(0),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
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
            trusted_at_ms: super::cache::now_ms(),
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
        let doc = json!({
            "files": self.files.iter().map(|f| json!({
                "path": f.path.display().to_string(),
                "sha256": f.sha256,
                "trustedAtMs": f.trusted_at_ms,
            })).collect::<Vec<_>>(),
        });
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
    fn sha256_is_standard() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
