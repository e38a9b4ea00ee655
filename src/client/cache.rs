//! The tools cache: what a server listed (tools, and which protocol era it speaks), on disk,
//! keyed by the server's identity so that listing and `--help` never start a server, and by
//! the capabilities the listing client declared ([`View`]): a server may list some tools only
//! to clients that can answer them, and a listing shows what its caller can call.

use super::config::ServerSpec;
use crate::paths::{file_stem, fnv1a};
use crate::protocol::Era;
use crate::protocol::ServerDescription;
use serde_json::Value;
use std::path::PathBuf;

/// What is remembered about one server.
#[derive(Debug, Clone, Default)]
pub struct CacheEntry {
    /// Raw `tools/list` entries, all pages, in server order.
    pub tools: Vec<Value>,
    pub era: Option<Era>,
    /// serverInfo, capabilities and instructions, as the server last gave them.
    pub description: ServerDescription,
    /// When the list was fetched (ms since the epoch).
    pub fetched_at_ms: u64,
    /// How long the server said the list stays fresh (`ttlMs`), if it said.
    pub ttl_ms: Option<u64>,
    /// How many `tools/list_changed` notices a session of this server brings although its
    /// call changed nothing (some servers announce their tools after every handshake),
    /// learnt when a list asked for after such a call matched this one. A call that brings no
    /// more than these changed nothing; `None` until learnt.
    pub unprompted_changes: Option<usize>,
    /// The server said its tools changed and the new list was not had: the next listing asks
    /// the server, while calls keep using these schemas (the server validates again).
    pub stale: bool,
}

/// A cache file as it is on disk; one that does not read as this is listed again.
#[derive(Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct CacheFile {
    server: String,
    protocol: Option<Value>,
    server_info: Value,
    instructions: Option<String>,
    capabilities: Value,
    fetched_at_ms: u64,
    ttl_ms: Option<u64>,
    list_changed_unprompted: Option<u64>,
    stale: bool,
    tools: Vec<Value>,
}

/// The client capabilities a listing was made for, as a key: server-everything lists
/// `trigger-elicitation-request` only to a client that declares elicitation. The plain view
/// (nothing declared: what a piped `ferry` call declares) is the one `find`, `tokens`,
/// `skill` and the server list read, so their figures do not move with the last caller.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct View(String);

impl View {
    /// The view of a client that declares `capabilities` (key order does not matter).
    pub fn of(capabilities: &Value) -> View {
        match capabilities {
            Value::Object(map) if !map.is_empty() => {
                View(crate::protocol::sorted_keys(capabilities).to_string())
            }
            _ => View::default(),
        }
    }

    /// The view of a client that declares nothing.
    pub fn plain() -> View {
        View::default()
    }
}

/// The cache file for a server's plain [`View`].
pub fn path_for(spec: &ServerSpec) -> PathBuf {
    path_in(spec, &View::plain())
}

/// The cache file for a server as a client declaring `view` is listed it.
pub fn path_in(spec: &ServerSpec, view: &View) -> PathBuf {
    let declared = if view.0.is_empty() {
        String::new()
    } else {
        format!("-{:08x}", fnv1a(&view.0) as u32)
    };
    crate::paths::cache_dir().join("tools").join(format!(
        "{}-{:016x}{declared}.json",
        file_stem(&spec.name),
        fnv1a(&spec.identity())
    ))
}

/// The cache file [`CacheEntry::load_stable`] reads, if any.
pub fn stable_path(spec: &ServerSpec) -> Option<PathBuf> {
    let plain = path_for(spec);
    if plain.is_file() {
        return Some(plain);
    }
    let mut others: Vec<PathBuf> = view_files(spec).into_iter().map(|(path, _)| path).collect();
    others.sort();
    others.into_iter().next()
}

impl CacheEntry {
    /// Reads the plain view's entry for `spec`; a missing or unreadable file is `None`.
    pub fn load(spec: &ServerSpec) -> Option<CacheEntry> {
        CacheEntry::load_in(spec, &View::plain())
    }

    /// Reads the entry that views which list every server read (`find`, the server list,
    /// completions): the plain view's, else, until a plain listing is had, another's.
    pub fn load_stable(spec: &ServerSpec) -> Option<CacheEntry> {
        CacheEntry::read(&stable_path(spec)?)
    }

    /// Reads the entry for `spec` as listed to a client declaring `view`.
    pub fn load_in(spec: &ServerSpec, view: &View) -> Option<CacheEntry> {
        CacheEntry::read(&path_in(spec, view))
    }

    fn read(path: &std::path::Path) -> Option<CacheEntry> {
        let bytes = std::fs::read(path).ok()?;
        let file: CacheFile = serde_json::from_slice(&bytes).ok()?;
        Some(CacheEntry {
            tools: file.tools,
            era: file.protocol.as_ref().and_then(Era::from_value),
            description: ServerDescription {
                server_info: file.server_info,
                instructions: file.instructions,
                capabilities: file.capabilities,
            },
            fetched_at_ms: file.fetched_at_ms,
            ttl_ms: file.ttl_ms,
            unprompted_changes: file.list_changed_unprompted.map(|n| n.min(64) as usize),
            stale: file.stale,
        })
    }

    /// True when the list is known to be out of date ([`CacheEntry::stale`]), or the server
    /// gave it a positive `ttlMs` and it has run out. `ttlMs: 0` (what SDKs send when a server
    /// sets nothing) would make every listing start the server, so it counts as "no lifetime
    /// given": the list stays until --refresh, a missing tool, or
    /// `notifications/tools/list_changed`.
    pub fn is_expired(&self) -> bool {
        self.stale
            || self.ttl_ms.is_some_and(|ttl| {
                ttl > 0 && crate::clock::now_ms().saturating_sub(self.fetched_at_ms) > ttl
            })
    }

    /// Writes the entry as the plain [`View`]'s (a saved listing, a bench).
    pub fn store(&self, spec: &ServerSpec) {
        self.store_in(spec, &View::plain());
    }

    /// Writes the entry atomically, for the view `view`; failure to cache is not an error
    /// for the caller.
    pub fn store_in(&self, spec: &ServerSpec, view: &View) {
        let doc = CacheFile {
            server: spec.name.clone(),
            protocol: self.era.as_ref().map(Era::to_value),
            server_info: self.description.server_info.clone(),
            instructions: self.description.instructions.clone(),
            capabilities: self.description.capabilities.clone(),
            fetched_at_ms: self.fetched_at_ms,
            ttl_ms: self.ttl_ms,
            list_changed_unprompted: self.unprompted_changes.map(|n| n as u64),
            stale: self.stale,
            tools: self.tools.clone(),
        };
        write_atomically(&path_in(spec, view), &doc);
    }

    /// Marks the stored list out of date ([`CacheEntry::stale`]): the next listing asks the
    /// server, and calls keep the schemas meanwhile.
    /// The server said its tools changed: every view's list is marked.
    pub fn mark_stale(spec: &ServerSpec) {
        for (path, file) in view_files(spec) {
            if file.fetched_at_ms > 0 {
                let marked = CacheFile {
                    stale: true,
                    ..file
                };
                write_atomically(&path, &marked);
            }
        }
    }

    /// The protocol era remembered for a server, from whichever view knows it (the era is
    /// the server's, whoever listed it).
    pub fn era_of(spec: &ServerSpec) -> Option<Era> {
        if let Some(era) = CacheEntry::load(spec).and_then(|c| c.era) {
            return Some(era);
        }
        view_files(spec)
            .into_iter()
            .find_map(|(_, file)| file.protocol.as_ref().and_then(Era::from_value))
    }

    /// True when the entry holds a tools list that may be used.
    pub fn has_tools(&self) -> bool {
        self.fetched_at_ms > 0
    }
}

/// The names of the tools any cached view of the server lists (a listing made for any set of
/// declared capabilities): a tool missing from one caller's view may still be listed to a
/// caller that declares more, and is not "removed" then.
pub fn names_in_any_view(spec: &ServerSpec) -> std::collections::HashSet<String> {
    // view_files already holds every view's file (the plain one among them), read once.
    view_files(spec)
        .iter()
        .flat_map(|(_, file)| file.tools.iter())
        .filter_map(crate::protocol::tools::Tool::name_of)
        .map(str::to_string)
        .collect()
}

/// Every view's cache file of a server, read.
fn view_files(spec: &ServerSpec) -> Vec<(PathBuf, CacheFile)> {
    let plain = path_for(spec);
    let (Some(dir), Some(stem)) = (plain.parent(), plain.file_stem().and_then(|s| s.to_str()))
    else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name();
        // The plain view's name, or it with a view's `-xxxxxxxx` before `.json`.
        let ours = name
            .to_str()
            .and_then(|n| n.strip_prefix(stem))
            .is_some_and(|rest| {
                rest == ".json"
                    || (rest.len() == 14 && rest.starts_with('-') && rest.ends_with(".json"))
            });
        let path = entry.path();
        if let Some(file) = ours
            .then(|| std::fs::read(&path).ok())
            .flatten()
            .and_then(|b| serde_json::from_slice::<CacheFile>(&b).ok())
        {
            files.push((path, file));
        }
    }
    files
}

/// Writes a cache file by a rename, so that readers see the old file or the new one.
fn write_atomically(path: &std::path::Path, doc: &CacheFile) {
    if let Some(dir) = path.parent() {
        if crate::paths::ensure_private_dir(dir).is_err() {
            return;
        }
    }
    let tmp = crate::paths::temp_beside(path);
    if let Ok(bytes) = serde_json::to_vec(doc) {
        if std::fs::write(&tmp, bytes).is_ok() {
            let _ = std::fs::rename(&tmp, path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_cache_file_round_trips_and_reads_as_earlier_ferries_wrote_it() {
        let earlier = json!({"server": "ev", "protocol": "2025-11-25",
            "serverInfo": {"name": "ev", "version": "1"}, "instructions": "Use it.",
            "capabilities": {"tools": {}}, "fetchedAtMs": 5, "ttlMs": null,
            "listChangedUnprompted": 1, "stale": false,
            "tools": [{"name": "echo", "inputSchema": {"type": "object"}}]});
        let file: CacheFile = serde_json::from_value(earlier.clone()).unwrap();
        assert_eq!(file.fetched_at_ms, 5);
        assert_eq!(file.list_changed_unprompted, Some(1));
        assert_eq!(serde_json::to_value(&file).unwrap(), earlier);
        // What the cache of a newer or older ferry lacks is taken as unknown.
        let sparse: CacheFile = serde_json::from_value(json!({"tools": []})).unwrap();
        assert_eq!(sparse.fetched_at_ms, 0);
        assert!(serde_json::from_value::<CacheFile>(json!({"tools": 3})).is_err());
    }

    #[test]
    fn each_set_of_declared_capabilities_is_a_view_of_its_own() {
        let both = View::of(&json!({"sampling": {}, "elicitation": {"url": {}, "form": {}}}));
        assert_eq!(
            both,
            View::of(&json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}}))
        );
        assert_ne!(
            both,
            View::of(&json!({"elicitation": {"form": {}, "url": {}}}))
        );
        assert_eq!(View::of(&json!({})), View::plain());
    }
}
