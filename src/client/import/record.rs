//! What `ferry import` wrote, kept in `imported.json` beside `servers.json`, so that
//! `ferry import SOURCE --force` can re-sync a host's changed config and say what changed:
//! each server added, updated, unchanged, or kept (imported from that source before and gone
//! from it now: ferry never removes a server the user may rely on).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One imported server: the source it came from and the entry as written.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Imported {
    /// The word or path given to `ferry import`.
    pub source: String,
    /// The file the entry came from, as shown.
    pub file: String,
    /// The entry as ferry wrote it.
    pub entry: Map<String, Value>,
}

/// Every server an import wrote, by name.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ImportRecord {
    pub servers: BTreeMap<String, Imported>,
}

/// What an import did to one server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// New in the user's config.
    Added,
    /// Replaced by the host's changed entry (`--force`).
    Updated,
    /// The same as the host's entry.
    Unchanged,
    /// Left as configured: a server of that name exists (without `--force`), or it was
    /// imported from this source and the host no longer has it.
    Kept,
}

impl Change {
    /// The word the import's report uses.
    pub fn word(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Updated => "updated",
            Change::Unchanged => "unchanged",
            Change::Kept => "kept",
        }
    }
}

/// Decides each server's change: `current` is the user's config entry of that name, if any.
pub fn change(current: Option<&Value>, new: &Map<String, Value>, force: bool) -> Change {
    match current {
        None => Change::Added,
        Some(Value::Object(existing)) if existing == new => Change::Unchanged,
        Some(_) if force => Change::Updated,
        Some(_) => Change::Kept,
    }
}

impl ImportRecord {
    /// `imported.json` in ferry's config directory.
    pub fn path() -> PathBuf {
        crate::paths::config_dir().join("imported.json")
    }

    /// The record; empty when there is none or it cannot be read (it only informs reports).
    pub fn load() -> ImportRecord {
        std::fs::read(Self::path())
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Writes the record, private as servers.json is: entries may hold headers and keys.
    pub fn save(&self) -> std::io::Result<()> {
        let text = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        crate::paths::write_private(&Self::path(), &text)
    }

    /// The servers imported from `source` before that are not in `names` now.
    pub fn gone_from(&self, source: &str, names: &[&str]) -> Vec<(String, String)> {
        self.servers
            .iter()
            .filter(|(name, imported)| imported.source == source && !names.contains(&name.as_str()))
            .map(|(name, imported)| (name.clone(), imported.file.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn changes_follow_the_users_config_and_force() {
        let new = json!({"command": "a", "args": []});
        let new = new.as_object().unwrap();
        let other = json!({"command": "b", "args": []});
        assert_eq!(change(None, new, false), Change::Added);
        assert_eq!(change(Some(&json!(new)), new, true), Change::Unchanged);
        assert_eq!(change(Some(&other), new, false), Change::Kept);
        assert_eq!(change(Some(&other), new, true), Change::Updated);
    }
}
