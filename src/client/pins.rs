//! Pinned tool definitions: the first listing of a server records each tool's definition
//! (name, title, description, input and output schema, annotations) in ferry's config
//! directory, keyed by the server's identity (its command and arguments, or its URL), so that
//! renaming a server keeps its pins. A later listing whose definition of a pinned tool
//! differs marks that tool, and the tool is not called until `ferry review SERVER --accept`.
//! Text hidden from a person (`render::hidden`) marks a tool at first sight.
//!
//! The store is one file per server, written atomically (0600 in a 0700 directory) under a
//! lock; a file that cannot be read is never written over, so no pin is ever lost to a fault.

use super::config::{ServerSpec, Target};
use crate::protocol::tools::Tool;
use crate::render::hidden;
use crate::{Error, Result};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

/// The parts of a tool's definition that are pinned: what a model reads and what it sends.
const PINNED_KEYS: [&str; 6] = [
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
];
/// How many tools a warning names before it counts the rest.
const NAMED_MAX: usize = 10;

/// A pinned tool as stored.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pin {
    /// SHA-256 of the canonical JSON of `definition`.
    pub digest: String,
    /// The pinned parts of the definition, for review to show beside the new one.
    pub definition: Value,
    /// False while the definition hides text the user has not reviewed.
    #[serde(default = "yes")]
    pub accepted: bool,
    /// Pinned after the server's first listing, and not reviewed since.
    #[serde(default)]
    pub new: bool,
}

fn yes() -> bool {
    true
}

/// One server's pins as stored.
#[derive(Debug, Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PinFile {
    /// The identity the pins belong to ([`identity`]).
    pub identity: String,
    /// The name the server had when last pinned (for `ferry review` with no server).
    #[serde(default)]
    pub server: String,
    pub tools: BTreeMap<String, Pin>,
}

/// What a listing says against the pins, for one tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Its definition differs from the pinned one: not called until reviewed.
    Changed,
    /// Its definition hides text not reviewed yet: not called until reviewed.
    Hidden,
    /// Pinned after the server's first listing (shown, callable).
    New,
}

/// A listing checked against the pins.
#[derive(Debug, Default, Clone)]
pub struct Report {
    /// The server's name and the `ferry review ...` command for it.
    pub server: String,
    pub review: String,
    /// Tools marked, by name.
    pub marks: BTreeMap<String, Mark>,
    /// Tools pinned but no longer listed.
    pub removed: Vec<String>,
    /// Where a definition hides text, per tool: (place, the text made visible).
    pub hidden: BTreeMap<String, Vec<(String, String)>>,
    /// Why the pins could not be read (nothing was checked or written then).
    pub trouble: Option<String>,
}

impl Report {
    /// The tool's mark, if it has one.
    pub fn mark(&self, tool: &str) -> Option<Mark> {
        self.marks.get(tool).copied()
    }

    /// Whether the tool waits for review (and is not called).
    pub fn blocks(&self, tool: &str) -> bool {
        matches!(self.mark(tool), Some(Mark::Changed | Mark::Hidden))
    }

    /// The words a listing line ends with: `(changed: ferry review SERVER)` or `(new)`.
    pub fn label(&self, tool: &str) -> Option<String> {
        match self.mark(tool)? {
            Mark::Changed | Mark::Hidden => Some(format!("(changed: {})", self.review)),
            Mark::New => Some("(new)".to_string()),
        }
    }

    /// The tools waiting for review, in name order.
    pub fn waiting(&self) -> Vec<&str> {
        self.marks
            .iter()
            .filter(|(_, m)| matches!(m, Mark::Changed | Mark::Hidden))
            .map(|(name, _)| name.as_str())
            .collect()
    }

    /// The lines for stderr: hidden text (each place), the changed tools named once, the
    /// removed ones noted; each bounded in length whatever the listing holds.
    pub fn warnings(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some(why) = &self.trouble {
            lines.push(format!("warning: {why}"));
            return lines;
        }
        let mut places = 0usize;
        for (tool, found) in &self.hidden {
            for (place, shown) in found {
                places += 1;
                if places <= NAMED_MAX {
                    lines.push(format!(
                        "warning: {}'s {place} hides text: {}",
                        shown_name(tool),
                        crate::render::text::escape_line(shown)
                    ));
                }
            }
        }
        if places > NAMED_MAX {
            lines.push(format!(
                "warning: {} more places hide text ({})",
                places - NAMED_MAX,
                self.review
            ));
        }
        let changed: Vec<&str> = self
            .marks
            .iter()
            .filter(|(_, m)| **m == Mark::Changed)
            .map(|(name, _)| name.as_str())
            .collect();
        if !changed.is_empty() {
            let (one, many) = ("tool", "tools");
            lines.push(format!(
                "warning: {} changed {} {} since you first used {}: {} (not called until reviewed: {})",
                self.server,
                changed.len(),
                if changed.len() == 1 { one } else { many },
                if changed.len() == 1 { "it" } else { "them" },
                named(&changed),
                self.review
            ));
        }
        if !self.removed.is_empty() {
            let removed: Vec<&str> = self.removed.iter().map(String::as_str).collect();
            lines.push(format!(
                "note: {} no longer lists {}",
                self.server,
                named(&removed)
            ));
        }
        lines
    }

    /// The error a call of a tool waiting for review ends in.
    pub fn refusal(&self, tool: &str) -> Error {
        let shown = shown_name(tool);
        let message = match self.mark(tool) {
            Some(Mark::Hidden) => format!("{shown}'s definition hides text"),
            _ => format!("{shown} changed since you first used it"),
        };
        Error::usage(message).with_hint(format!(
            "{} shows what changed; {} --accept takes it",
            self.review, self.review
        ))
    }
}

/// A tool's name for a message (escaped, never at length).
fn shown_name(name: &str) -> String {
    let short: String = name.chars().take(100).collect();
    crate::render::text::escape_line(&short).into_owned()
}

/// Names for a message, escaped: at most `NAMED_MAX`, then how many more.
pub fn named(names: &[&str]) -> String {
    let mut text = names
        .iter()
        .take(NAMED_MAX)
        .map(|n| shown_name(n))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > NAMED_MAX {
        text.push_str(&format!(" and {} more", names.len() - NAMED_MAX));
    }
    text
}

/// What pins a server: its command and arguments, or its URL (not its name, env or headers,
/// so that renaming it or rotating a token keeps the pins).
pub fn identity(spec: &ServerSpec) -> String {
    match &spec.target {
        Target::Stdio { command, args, .. } => format!("stdio\0{command}\0{}", args.join("\0")),
        Target::Http { url, .. } => format!("http\0{url}"),
    }
}

/// The `ferry review ...` command for a server, as its invocation names it.
pub fn review_command(spec: &ServerSpec) -> String {
    match spec.invocation.strip_prefix("ferry ") {
        Some(rest) => format!("ferry review {rest}"),
        None => format!("ferry review {}", spec.name),
    }
}

/// Whether pins apply to this server in this run: not with `"pin": false` in its config,
/// nor with `FERRY_PIN=off` (looked up with `var`: this process's or a daemon caller's).
pub fn enabled(spec: &ServerSpec, var: &dyn Fn(&str) -> Option<String>) -> bool {
    let off = var("FERRY_PIN").is_some_and(|v| {
        matches!(
            v.to_ascii_lowercase().as_str(),
            "off" | "0" | "false" | "no"
        )
    });
    spec.pin && !off
}

/// This process's environment, for [`enabled`].
pub fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The directory of the pin files.
pub fn dir() -> PathBuf {
    crate::paths::config_dir().join("pins")
}

/// The pin file of an identity.
fn path_for(identity: &str) -> PathBuf {
    dir().join(format!("{:016x}.json", crate::paths::fnv1a(identity)))
}

/// The pinned parts of a tool's definition, as the server sent them.
pub fn definition(raw: &Value) -> Value {
    let mut kept = Map::new();
    if let Value::Object(map) = raw {
        for key in PINNED_KEYS {
            if let Some(value) = map.get(key) {
                kept.insert(key.to_string(), value.clone());
            }
        }
    }
    Value::Object(kept)
}

/// JSON with every object's keys in order, so that key order never changes a digest.
pub fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The SHA-256 of a definition's canonical JSON, in hex.
pub fn digest(definition: &Value) -> String {
    let sum = ring::digest::digest(&ring::digest::SHA256, canonical(definition).as_bytes());
    sum.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Why an identity's pins cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum PinsError {
    #[error("cannot read the pins in {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the pins in {} belong to another server", path.display())]
    OtherServer { path: PathBuf },
    #[error("the pins in {} cannot be read ({source}); they are left as they are", path.display())]
    Unreadable {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("cannot make {}: {source}", dir.display())]
    Directory {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot lock {}: {source}", path.display())]
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Encode(serde_json::Error),
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl crate::error::Failure for PinsError {
    fn kind(&self) -> crate::ErrorKind {
        crate::ErrorKind::Usage
    }
    fn hint(&self) -> Option<String> {
        Some("fix or remove the file, then review again".into())
    }
}

/// Reads an identity's pins: `Ok(None)` when it has none yet, `Err` when the file is there
/// but cannot be read (it is then never written over).
pub fn load(identity: &str) -> std::result::Result<Option<PinFile>, PinsError> {
    let path = path_for(identity);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(PinsError::Read { path, source }),
    };
    match serde_json::from_slice::<PinFile>(&bytes) {
        Ok(file) if file.identity == identity => Ok(Some(file)),
        // Another identity with the same hash: kept apart, never mixed.
        Ok(_) => Err(PinsError::OtherServer { path }),
        Err(source) => Err(PinsError::Unreadable { path, source }),
    }
}

/// Changes an identity's pins under the store's lock: `change` gets the pins as they are
/// now (`None` when there are none) and returns them changed, or `None` to write nothing.
fn update(
    identity: &str,
    change: impl FnOnce(Option<PinFile>) -> Option<PinFile>,
) -> std::result::Result<(), PinsError> {
    let path = path_for(identity);
    crate::paths::ensure_secret_dir(&dir())
        .map_err(|source| PinsError::Directory { dir: dir(), source })?;
    let _lock = crate::paths::locked_file(&path.with_extension("lock")).map_err(|source| {
        PinsError::Lock {
            path: path.clone(),
            source,
        }
    })?;
    let now = load(identity)?;
    if let Some(file) = change(now) {
        let bytes = serde_json::to_vec(&file).map_err(PinsError::Encode)?;
        crate::paths::write_private(&path, &bytes)
            .map_err(|source| PinsError::Write { path, source })?;
    }
    Ok(())
}

/// A listed tool and its digest, worked out once per check.
struct Seen<'a> {
    name: &'a str,
    raw: &'a Value,
    digest: String,
}

impl<'a> Seen<'a> {
    fn new(tool: &'a Tool) -> Seen<'a> {
        Seen {
            name: &tool.name,
            raw: &tool.raw,
            digest: raw_digest(&tool.raw),
        }
    }

    /// Where its definition hides text (the pinned keys are all that is searched).
    fn hidden(&self) -> Vec<(String, String)> {
        hidden::hidden_in(self.raw)
    }

    fn pin(&self, new: bool, hidden: bool) -> Pin {
        Pin {
            digest: self.digest.clone(),
            definition: definition(self.raw),
            accepted: !hidden,
            new,
        }
    }
}

/// `digest(&definition(raw))` without copying the definition: the listing path checks every
/// tool of a server each time.
fn raw_digest(raw: &Value) -> String {
    let mut keys: Vec<&str> = PINNED_KEYS.to_vec();
    keys.sort_unstable();
    let mut text = String::from("{");
    if let Value::Object(map) = raw {
        for key in keys {
            if let Some(value) = map.get(key) {
                if text.len() > 1 {
                    text.push(',');
                }
                text.push_str(&Value::String(key.to_string()).to_string());
                text.push(':');
                write_canonical(value, &mut text);
            }
        }
    }
    text.push('}');
    let sum = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    sum.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Checks a server's listing (`tools`: all it lists that its config lets through) against
/// its pins, pinning what was never pinned: everything on a first listing, a new tool as it
/// appears. A first listing blocks nothing but tools that hide text.
pub fn observe(spec: &ServerSpec, tools: &[&Tool], var: &dyn Fn(&str) -> Option<String>) -> Report {
    let mut report = Report {
        server: spec.name.clone(),
        review: review_command(spec),
        ..Report::default()
    };
    if !enabled(spec, var) {
        return report;
    }
    let identity = identity(spec);
    let pins = match load(&identity) {
        Ok(pins) => pins,
        Err(why) => {
            report.trouble = Some(format!("{why}; pins are not checked"));
            return report;
        }
    };
    let seen: Vec<Seen> = tools.iter().map(|t| Seen::new(t)).collect();
    let first = pins.is_none();
    let pins = pins.unwrap_or_default();
    let mut unpinned = Vec::new();
    for tool in &seen {
        let pin = pins.tools.get(tool.name);
        // Only what is new to the user is searched for hidden text.
        let fresh = pin.is_none_or(|p| p.digest != tool.digest || !p.accepted);
        let found = if fresh { tool.hidden() } else { Vec::new() };
        let mark = match pin {
            Some(pin) if pin.digest != tool.digest => Some(Mark::Changed),
            Some(pin) if !pin.accepted => Some(Mark::Hidden),
            Some(pin) if pin.new => Some(Mark::New),
            Some(_) => None,
            None => {
                unpinned.push((tool, !found.is_empty()));
                match (found.is_empty(), first) {
                    (false, _) => Some(Mark::Hidden),
                    (true, true) => None,
                    (true, false) => Some(Mark::New),
                }
            }
        };
        if let Some(mark) = mark {
            report.marks.insert(tool.name.to_string(), mark);
        }
        if !found.is_empty() {
            report.hidden.insert(tool.name.to_string(), found);
        }
    }
    let listed: HashSet<&str> = seen.iter().map(|t| t.name).collect();
    let missing: Vec<&String> = pins
        .tools
        .keys()
        .filter(|name| !listed.contains(name.as_str()) && spec.allows_tool(name))
        .collect();
    // The other views' caches are read only when something seems to be missing, and once.
    if !missing.is_empty() {
        let elsewhere = crate::client::cache::names_in_any_view(spec);
        report.removed = missing
            .into_iter()
            .filter(|name| !elsewhere.contains(name.as_str()))
            .cloned()
            .collect();
    }
    if !unpinned.is_empty() || (pins.server != spec.name && !first) {
        let added: Vec<(String, Pin)> = unpinned
            .iter()
            .map(|(t, hidden)| (t.name.to_string(), t.pin(!first, *hidden)))
            .collect();
        let server = spec.name.clone();
        let written = update(&identity, |now| {
            let mut file = now.unwrap_or_else(|| PinFile {
                identity: identity.clone(),
                ..PinFile::default()
            });
            file.server = server;
            for (name, pin) in added {
                // A pin another ferry wrote meanwhile stays as it is.
                file.tools.entry(name).or_insert(pin);
            }
            Some(file)
        });
        if let Err(why) = written {
            report.trouble = Some(format!("{why}; pins are not recorded"));
        }
    }
    report
}

/// Takes the listed definitions of `names` (all that differ from their pins when empty) as
/// the pins, forgetting pins of tools no longer listed when all are taken. Returns the names
/// taken.
pub fn accept(spec: &ServerSpec, tools: &[&Tool], names: &[String]) -> Result<Vec<String>> {
    let identity = identity(spec);
    let seen: Vec<Seen> = tools.iter().map(|t| Seen::new(t)).collect();
    let mut taken = Vec::new();
    let server = spec.name.clone();
    update(&identity, |now| {
        let mut file = now.unwrap_or_else(|| PinFile {
            identity: identity.clone(),
            ..PinFile::default()
        });
        file.server = server;
        for tool in &seen {
            if !names.is_empty() && !names.iter().any(|n| n == tool.name) {
                continue;
            }
            let pin = tool.pin(false, false);
            if file.tools.get(tool.name) != Some(&pin) {
                taken.push(tool.name.to_string());
                file.tools.insert(tool.name.to_string(), pin);
            }
        }
        if names.is_empty() {
            let listed: HashSet<&str> = seen.iter().map(|t| t.name).collect();
            let before = file.tools.len();
            file.tools
                .retain(|name, _| listed.contains(name.as_str()) || !spec.allows_tool(name));
            if file.tools.len() != before && taken.is_empty() {
                taken.push(String::new());
            }
        }
        Some(file)
    })?;
    taken.retain(|n| !n.is_empty());
    Ok(taken)
}

/// Every server's pin file (for `ferry review` with no server): identity and pins.
pub fn all() -> Vec<PinFile> {
    let Ok(entries) = std::fs::read_dir(dir()) else {
        return Vec::new();
    };
    let mut files: Vec<PinFile> = entries
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok())
        .collect();
    files.sort_by(|a, b| a.server.cmp(&b.server));
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_never_changes_a_digest_and_any_pinned_part_does() {
        let a = json!({"name": "t", "inputSchema": {"type": "object", "properties": {"a": {}, "b": {}}}});
        let b: Value = serde_json::from_str(
            r#"{"inputSchema": {"properties": {"b": {}, "a": {}}, "type": "object"}, "name": "t"}"#,
        )
        .unwrap();
        assert_eq!(digest(&definition(&a)), digest(&definition(&b)));
        assert_eq!(raw_digest(&b), digest(&definition(&a)));
        // What is not pinned (the server's _meta, icons) changes nothing.
        let mut with_meta = a.clone();
        with_meta["_meta"] = json!({"at": 5});
        assert_eq!(digest(&definition(&a)), digest(&definition(&with_meta)));
        for (key, value) in [
            ("description", json!("new")),
            ("title", json!("T")),
            ("outputSchema", json!({"type": "object"})),
            ("annotations", json!({"destructiveHint": true})),
        ] {
            let mut changed = a.clone();
            changed[key] = value;
            assert_ne!(
                digest(&definition(&a)),
                digest(&definition(&changed)),
                "{key}"
            );
        }
    }

    #[test]
    fn a_pin_file_reads_with_what_it_lacks_taken_as_reviewed() {
        let file: PinFile = serde_json::from_value(json!({"identity": "x",
            "tools": {"t": {"digest": "d", "definition": {}}}}))
        .unwrap();
        assert!(file.tools["t"].accepted);
        assert!(!file.tools["t"].new);
    }
}
