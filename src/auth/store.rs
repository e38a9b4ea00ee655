//! Where sign-ins are kept: one token file per server URL (0600 in a 0700 directory), the last
//! refusal beside it, and the lock that makes one refresh at a time across processes.

use super::*;

/// What is stored for one server (its token file): the issuer its credentials are bound to,
/// the client, and the tokens.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Stored {
    pub issuer: String,
    pub resource: String,
    pub token_endpoint: String,
    pub client_id: String,
    pub client_secret: Option<String>,
    pub auth_method: AuthMethod,
    pub access_token: String,
    pub refresh_token: Option<String>,
    /// Seconds since the epoch; 0 for unknown.
    pub expires_at: u64,
    pub scope: Option<String>,
    /// Scopes a 403 asked for since, to add at the next sign-in (step-up).
    pub wanted_scope: Option<String>,
    /// The key a DPoP-bound token is tied to (PKCS#8, base64); `None` for a bearer token.
    pub dpop_key: Option<String>,
}

pub(super) fn now() -> u64 {
    crate::clock::now_secs()
}

impl Stored {
    /// A token file's content; `None` when it is not one (no issuer: nothing to trust).
    pub(super) fn parse(bytes: &[u8]) -> Option<Stored> {
        let stored: Stored = serde_json::from_slice(bytes).ok()?;
        (!stored.issuer.is_empty()).then_some(stored)
    }

    /// What a request carries: the token, and its DPoP key when it is bound to one.
    pub fn credential(&self) -> Credential {
        Credential {
            token: self.access_token.clone(),
            dpop: self
                .dpop_key
                .as_deref()
                .and_then(DpopKey::from_text)
                .map(Arc::new),
        }
    }

    /// Whether the access token is past, or within a minute of, its expiry.
    pub fn expiring(&self) -> bool {
        self.expires_at != 0 && now() + 60 >= self.expires_at
    }
}

/// An access token as requests present it: `Bearer`, or `DPoP` with a fresh proof each time.
#[derive(Clone)]
pub struct Credential {
    pub token: String,
    pub dpop: Option<Arc<DpopKey>>,
}

impl Credential {
    /// The headers for one request (`method` to `url`), with the server's DPoP `nonce` if it
    /// gave one.
    pub fn headers(&self, method: &str, url: &str, nonce: Option<&str>) -> Vec<(String, String)> {
        match &self.dpop {
            None => vec![("Authorization".into(), format!("Bearer {}", self.token))],
            Some(key) => {
                let mut headers = vec![("Authorization".into(), format!("DPoP {}", self.token))];
                if let Ok(proof) = key.proof(method, url, nonce, Some(&self.token), now()) {
                    headers.push(("DPoP".into(), proof));
                }
                headers
            }
        }
    }
}

/// Where tokens live.
pub fn auth_dir() -> PathBuf {
    crate::paths::config_dir().join("auth")
}

/// The token file of the server at `url`.
pub fn token_file(url: &str) -> PathBuf {
    let digest = ring::digest::digest(&ring::digest::SHA256, url.as_bytes());
    let hash: String = digest.as_ref()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let host = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_else(|| "server".into());
    auth_dir().join(format!("{}-{hash}.json", crate::paths::file_stem(&host)))
}

/// The stored sign-in for `url`, if any.
pub fn load(url: &str) -> Option<Stored> {
    Stored::parse(&std::fs::read(token_file(url)).ok()?)
}

/// The refresh lock of one server's token file (a `.lock` file beside it), held while the file
/// is read and rewritten: a refresh, a new sign-in and a noted refusal each rewrite the file
/// under it, so none of them puts back tokens another has just replaced (a refresh token the
/// server has rotated is dead). Released when dropped.
pub struct TokenLock {
    _file: std::fs::File,
    token_file: PathBuf,
}

impl TokenLock {
    /// Waits (blocking) for the lock of the token file at `token_file` (making its 0700
    /// directory first, for a first sign-in).
    pub(super) fn take_at(token_file: PathBuf) -> Result<TokenLock> {
        if let Some(dir) = token_file.parent() {
            crate::paths::ensure_secret_dir(dir)
                .map_err(|e| Error::auth(format!("cannot make {}: {e}", dir.display())))?;
        }
        let file = lock_file(&token_file.with_extension("lock"))?;
        Ok(TokenLock {
            _file: file,
            token_file,
        })
    }

    /// Waits for the lock of `url`'s token file without holding up other tasks.
    pub(super) async fn wait(url: &str) -> Result<TokenLock> {
        let token_file = token_file(url);
        tokio::task::spawn_blocking(move || TokenLock::take_at(token_file))
            .await
            .map_err(|e| Error::auth(e.to_string()))?
    }

    /// The sign-in stored now (read under the lock: no one else is rewriting it).
    pub(super) fn load(&self) -> Option<Stored> {
        Stored::parse(&std::fs::read(&self.token_file).ok()?)
    }

    /// Rewrites the token file: 0600 in a 0700 directory, written beside and renamed.
    pub(super) fn save(&self, stored: &Stored) -> Result<()> {
        let path = &self.token_file;
        let bytes = serde_json::to_vec(stored).map_err(|e| Error::server(e.to_string()))?;
        crate::paths::write_private(path, &bytes).map_err(|e| {
            Error::server(format!(
                "cannot save the sign-in in {}: {e}",
                path.display()
            ))
        })
    }
}

/// Saves a sign-in, under the refresh lock.
pub async fn save(url: &str, stored: &Stored) -> Result<()> {
    TokenLock::wait(url).await?.save(stored)
}

/// Forgets a sign-in; false when there was none.
pub fn forget(url: &str) -> bool {
    let _ = std::fs::remove_file(challenge_file(url));
    std::fs::remove_file(token_file(url)).is_ok()
}

pub(super) fn challenge_file(url: &str) -> PathBuf {
    token_file(url).with_extension("challenge")
}

/// Keeps a server's last refusal, so `ferry auth` asks for what it asked for.
pub fn remember(url: &str, challenge: &Challenge) {
    let doc = json!({"resourceMetadata": challenge.resource_metadata, "scope": challenge.scope, "error": challenge.error});
    let _ = crate::paths::write_private(&challenge_file(url), doc.to_string().as_bytes());
}

/// The last refusal kept for `url`.
pub fn remembered(url: &str) -> Option<Challenge> {
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(challenge_file(url)).ok()?).ok()?;
    let text = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_string);
    Some(Challenge {
        resource_metadata: text("resourceMetadata"),
        scope: text("scope"),
        error: text("error"),
    })
}

/// Marks a stored sign-in as spent (the server refused its token), so the next call refreshes
/// it, or as needing more scope (a 403 `insufficient_scope`) for the next sign-in. Waits for a
/// refresh under way, and marks what it stored.
pub async fn note_refusal(url: &str, challenge: &Challenge) {
    let (token_file, challenge) = (token_file(url), challenge.clone());
    let _ = tokio::task::spawn_blocking(move || note_refusal_at(token_file, &challenge)).await;
}

fn note_refusal_at(token_file: PathBuf, challenge: &Challenge) {
    if !token_file.exists() {
        return;
    }
    let Ok(lock) = TokenLock::take_at(token_file) else {
        return;
    };
    let Some(mut stored) = lock.load() else {
        return;
    };
    if challenge.error.as_deref() == Some("insufficient_scope") {
        stored.wanted_scope = challenge.scope.clone();
    } else {
        stored.expires_at = 1;
    }
    let _ = lock.save(&stored);
}

pub(super) fn lock_file(path: &std::path::Path) -> Result<std::fs::File> {
    crate::paths::locked_file(path)
        .map_err(|e| Error::auth(format!("cannot lock {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    /// Whether someone waits for the lock on the file with inode `inode` (Linux lists a
    /// blocked `flock` in /proc/locks with `->`); `true` where that cannot be seen, so the
    /// test goes on at once (the lock still keeps the file as it was).
    fn someone_waits_on(inode: u64) -> bool {
        let Ok(locks) = std::fs::read_to_string("/proc/locks") else {
            return true;
        };
        let tail = format!(":{inode} ");
        locks
            .lines()
            .any(|line| line.contains("->") && line.contains(&tail))
    }

    #[test]
    fn a_refusal_noted_during_a_refresh_waits_for_it_and_keeps_the_new_refresh_token() {
        let dir = std::env::temp_dir().join(format!("ferry-token-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("server.json");
        let old = Stored {
            issuer: "https://auth.example".into(),
            access_token: "old".into(),
            refresh_token: Some("r1".into()),
            expires_at: 10_000_000_000,
            ..Stored::default()
        };
        // A refresh under way: it holds the lock and has sent r1, which the server rotates.
        let refresh = TokenLock::take_at(file.clone()).unwrap();
        refresh.save(&old).unwrap();
        let written = std::fs::read(&file).unwrap();
        let inode = std::fs::metadata(file.with_extension("lock"))
            .unwrap()
            .ino();
        // Meanwhile a request with the old token is refused.
        let noting = {
            let file = file.clone();
            std::thread::spawn(move || note_refusal_at(file, &Challenge::default()))
        };
        while !noting.is_finished() && !someone_waits_on(inode) {
            std::thread::yield_now();
        }
        assert_eq!(
            std::fs::read(&file).unwrap(),
            written,
            "the refusal rewrote the token file while a refresh held its lock"
        );
        let renewed = Stored {
            access_token: "new".into(),
            refresh_token: Some("r2".into()),
            ..old.clone()
        };
        refresh.save(&renewed).unwrap();
        drop(refresh);
        noting.join().unwrap();
        let now = Stored::parse(&std::fs::read(&file).unwrap()).unwrap();
        assert_eq!(now.refresh_token.as_deref(), Some("r2"));
        assert_eq!(now.access_token, "new");
        // The refusal is still noted: the next call refreshes (with r2).
        assert_eq!(now.expires_at, 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
