//! The tools cache: what a server listed (tools, and which protocol era it speaks), on disk,
//! keyed by the server's identity so that listing and `--help` never start a server.

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

/// The cache file for a server.
pub fn path_for(spec: &ServerSpec) -> PathBuf {
    crate::paths::cache_dir().join("tools").join(format!(
        "{}-{:016x}.json",
        file_stem(&spec.name),
        fnv1a(&spec.identity())
    ))
}

impl CacheEntry {
    /// Reads the entry for `spec`; a missing or unreadable file is `None`.
    pub fn load(spec: &ServerSpec) -> Option<CacheEntry> {
        let bytes = std::fs::read(path_for(spec)).ok()?;
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

    /// Writes the entry atomically; failure to cache is not an error for the caller.
    pub fn store(&self, spec: &ServerSpec) {
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
        let path = path_for(spec);
        if let Some(dir) = path.parent() {
            if crate::paths::ensure_private_dir(dir).is_err() {
                return;
            }
        }
        let tmp = crate::paths::temp_beside(&path);
        if let Ok(bytes) = serde_json::to_vec(&doc) {
            if std::fs::write(&tmp, bytes).is_ok() {
                let _ = std::fs::rename(&tmp, &path);
            }
        }
    }

    /// Marks the stored list out of date ([`CacheEntry::stale`]): the next listing asks the
    /// server, and calls keep the schemas meanwhile.
    pub fn mark_stale(spec: &ServerSpec) {
        if let Some(mut entry) = CacheEntry::load(spec).filter(CacheEntry::has_tools) {
            entry.stale = true;
            entry.store(spec);
        }
    }

    /// True when the entry holds a tools list that may be used.
    pub fn has_tools(&self) -> bool {
        self.fetched_at_ms > 0
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
}
