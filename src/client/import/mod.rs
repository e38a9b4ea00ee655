//! Reads other MCP hosts' configuration files into ferry's `mcpServers` entries.
//!
//! Every host keeps a map of named MCP servers somewhere, in a slightly different
//! dialect. This module finds those files ([`ImportSource::paths`]), pulls the
//! server map out of them ([`servers_in_json`]) and rewrites each entry into the
//! one shape ferry stores ([`normalize_entry`]):
//!
//! Only the user's own files are imported. A repository's files (`.mcp.json`,
//! `.cursor/mcp.json`, `.vscode/`, `.codex/`) are someone else's code: copied into the user's
//! config, their servers would start without `ferry trust` and with the user's `${VAR}`s
//! expanded into them. They are named instead ([`Found::left_out`]); ferry reads the ones it
//! knows in place, gated by trust.
//!
//! * stdio: `{"command": str, "args": [str], "env": {str: str}, "cwd": str?}`
//! * http: `{"url": str, "headers": {str: str}}` (plus `"transport": "sse"` for
//!   servers the host declared as SSE, so the caller can warn)
//!
//! Any other key of an entry (`disabled`, `envFile`, `startup_timeout_sec`, ...)
//! is kept unchanged after the canonical keys. Normalising never rewrites strings;
//! [`translate`] then turns the hosts' variables (`${env:X}`, `${workspaceFolder}`,
//! `${input:...}`) into what ferry expands, and names what only a host could supply.
//! A repository's file named by path is refused ([`repository`]); [`record`] keeps what
//! was imported, so `ferry import --force` can re-sync a changed host config.
//!
//! JSON files may be JSONC (comments and trailing commas, as VS Code writes them).

pub mod record;
pub mod repository;
pub mod translate;

use serde_json::{Map, Value};
use std::path::{Component, Path, PathBuf};

/// Every host `ferry import` knows: the word that names it, what it is called, and which it
/// is. `import`'s help and messages and [`ImportSource::parse`] read this table; a new host is
/// a row here and its files in [`ImportSource::paths`].
pub const HOSTS: [(&str, &str, ImportSource); 6] = [
    ("claude", "Claude Desktop", ImportSource::Claude),
    ("claude-code", "Claude Code", ImportSource::ClaudeCode),
    ("cursor", "Cursor", ImportSource::Cursor),
    ("vscode", "VS Code", ImportSource::Vscode),
    ("windsurf", "Windsurf", ImportSource::Windsurf),
    ("codex", "Codex", ImportSource::Codex),
];

/// The hosts' words, as a person reads them: `claude, claude-code, ..., codex`.
pub fn host_words() -> String {
    HOSTS.map(|(word, _, _)| word).join(", ")
}

/// Which host's configuration to import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportSource {
    Claude,
    ClaudeCode,
    Cursor,
    Vscode,
    Windsurf,
    Codex,
    File(PathBuf),
}

/// The operating system whose file layout [`ImportSource::paths`] follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Os {
    Linux,
    Mac,
    Windows,
}

impl Os {
    fn current() -> Os {
        if cfg!(target_os = "macos") {
            Os::Mac
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        }
    }
}

/// Named server entries, in order.
type Entries = Vec<(String, Map<String, Value>)>;

/// Named server entries, each with the file it came from (as shown).
type SourcedEntries = Vec<(String, (Map<String, Value>, String))>;

/// What an import found.
#[derive(Debug, Default)]
pub struct Found {
    /// The servers to import, in order, each with the file it came from (as shown).
    pub servers: Vec<(String, Map<String, Value>, String)>,
    /// The repository's files the host also reads here, as shown, with their servers' names:
    /// not imported.
    pub left_out: Vec<(String, Vec<String>)>,
}

/// Looks up an environment variable as a path (`None` when unset or empty).
type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<PathBuf>;

fn process_env(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

impl ImportSource {
    /// Parses the CLI word: a host's word from [`HOSTS`]; anything else is a path.
    pub fn parse(word: &str) -> ImportSource {
        HOSTS.iter().find(|(name, _, _)| *name == word).map_or_else(
            || ImportSource::File(PathBuf::from(word)),
            |(_, _, host)| host.clone(),
        )
    }

    /// The user's files this source is read from, given `home` (the user's home dir) and `cwd`.
    ///
    /// [`read_servers`] reads *every* candidate that exists and merges them in this
    /// order: a server name seen again replaces the earlier entry (keeping its
    /// position). It is an error only when none of them exists.
    ///
    /// * Claude Desktop: `~/Library/Application Support/Claude/claude_desktop_config.json`
    ///   (macOS), `$XDG_CONFIG_HOME/Claude/...` then `~/.config/Claude/...` (Linux),
    ///   `%APPDATA%\Claude\...` (Windows).
    /// * Claude Code: `~/.claude.json`: its user scope, and the local scope the user gave
    ///   this directory (`projects[cwd]`, which wins, as in Claude Code).
    /// * Cursor: `~/.cursor/mcp.json`.
    /// * VS Code: the user dir's `settings.json` (old `"mcp": {"servers"}`) and
    ///   `mcp.json` (`~/.config/Code/User`, `~/Library/Application Support/Code/User`,
    ///   `%APPDATA%\Code\User`).
    /// * Windsurf: `~/.codeium/windsurf/mcp_config.json`.
    /// * Codex: `$CODEX_HOME/config.toml` (default `~/.codex/config.toml`).
    /// * A path: that file alone (`~/` is expanded, relative paths are taken from `cwd`).
    pub fn paths(&self, home: &Path, cwd: &Path) -> Vec<PathBuf> {
        self.candidates(home, cwd, Os::current(), &process_env)
    }

    /// The repository's files the host reads in `cwd` (`.mcp.json`, `.cursor/mcp.json`,
    /// `.vscode/settings.json` and `mcp.json`, `.codex/config.toml`), which are never imported;
    /// none where `cwd` is the home directory, whose files are the user's.
    fn project_candidates(&self, home: &Path, cwd: &Path) -> Vec<PathBuf> {
        if cwd == home {
            return Vec::new();
        }
        match self {
            ImportSource::ClaudeCode => vec![cwd.join(".mcp.json")],
            ImportSource::Cursor => vec![cwd.join(".cursor").join("mcp.json")],
            ImportSource::Vscode => vec![
                cwd.join(".vscode").join("settings.json"),
                cwd.join(".vscode").join("mcp.json"),
            ],
            ImportSource::Codex => vec![cwd.join(".codex").join("config.toml")],
            _ => Vec::new(),
        }
    }

    fn candidates(&self, home: &Path, cwd: &Path, os: Os, env: EnvLookup) -> Vec<PathBuf> {
        let config_dirs = user_config_dirs(home, os, env);
        let mut out: Vec<PathBuf> = match self {
            ImportSource::Claude => config_dirs
                .iter()
                .map(|d| d.join("Claude").join("claude_desktop_config.json"))
                .collect(),
            ImportSource::ClaudeCode => vec![home.join(".claude.json")],
            ImportSource::Cursor => vec![home.join(".cursor").join("mcp.json")],
            ImportSource::Vscode => {
                let mut v = Vec::new();
                for d in &config_dirs {
                    let user = d.join("Code").join("User");
                    v.push(user.join("settings.json"));
                    v.push(user.join("mcp.json"));
                }
                v
            }
            ImportSource::Windsurf => {
                vec![home
                    .join(".codeium")
                    .join("windsurf")
                    .join("mcp_config.json")]
            }
            ImportSource::Codex => {
                let codex_home = match env("CODEX_HOME") {
                    Some(p) if p.is_absolute() => p,
                    Some(p) => cwd.join(p),
                    None => home.join(".codex"),
                };
                vec![codex_home.join("config.toml")]
            }
            ImportSource::File(p) => vec![resolve_user_path(p, home, cwd)],
        };
        let mut seen: Vec<PathBuf> = Vec::new();
        out.retain(|p| {
            if seen.contains(p) {
                false
            } else {
                seen.push(p.clone());
                true
            }
        });
        out
    }

    fn label(&self) -> &'static str {
        HOSTS
            .iter()
            .find(|(_, _, host)| host == self)
            .map_or("MCP", |(_, label, _)| label)
    }
}

/// Per-user application config directories, most specific first.
fn user_config_dirs(home: &Path, os: Os, env: EnvLookup) -> Vec<PathBuf> {
    match os {
        Os::Mac => vec![home.join("Library").join("Application Support")],
        Os::Linux => {
            let default = home.join(".config");
            let xdg = crate::paths::xdg_base(env("XDG_CONFIG_HOME"), home, ".config");
            let mut dirs = Vec::new();
            if xdg != default {
                dirs.push(xdg);
            }
            dirs.push(default);
            dirs
        }
        Os::Windows => match env("APPDATA") {
            Some(p) => vec![p],
            None => vec![home.join("AppData").join("Roaming")],
        },
    }
}

/// Expands a leading `~` and anchors relative paths at `cwd`.
fn resolve_user_path(p: &Path, home: &Path, cwd: &Path) -> PathBuf {
    let mut comps = p.components();
    if let Some(Component::Normal(first)) = comps.next() {
        if first == "~" {
            return home.join(comps.as_path());
        }
    }
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// Shows a path with the home directory abbreviated to `~`.
fn show(path: &Path, home: &Path) -> String {
    if home.components().count() > 1 {
        if let Ok(rest) = path.strip_prefix(home) {
            if rest.as_os_str().is_empty() {
                return "~".to_string();
            }
            return format!("~/{}", rest.display());
        }
    }
    path.display().to_string()
}

/// Reads the servers of `source`, in file order, each with the file it came from; each entry
/// is a JSON object normalised to ferry's shape: stdio {"command": str, "args": [str], "env":
/// {str:str}, "cwd": str?} or http {"url": str, "headers": {str:str}}. Unknown extra keys of
/// an entry are kept as they are. The repository's files the host also reads here are listed
/// in [`Found::left_out`], never imported.
/// Errors are one-line human messages naming the file and what to do (e.g. "no Cursor config found at ~/.cursor/mcp.json; pass a path").
///
/// All existing candidate files of [`ImportSource::paths`] are merged; a host file
/// without any server map is simply skipped, and an empty result has no servers.
/// An explicit path must hold a recognised server map. `.toml` files are read as
/// Codex configs (`[mcp_servers.NAME]`), everything else as JSON/JSONC.
pub fn read_servers(source: &ImportSource, home: &Path, cwd: &Path) -> Result<Found, ImportError> {
    read_servers_with(source, home, cwd, Os::current(), &process_env)
}

fn read_servers_with(
    source: &ImportSource,
    home: &Path,
    cwd: &Path,
    os: Os,
    env: EnvLookup,
) -> Result<Found, ImportError> {
    let candidates = source.candidates(home, cwd, os, env);
    let explicit = matches!(source, ImportSource::File(_));
    let left_out: Vec<(String, Vec<String>)> = source
        .project_candidates(home, cwd)
        .iter()
        .filter(|p| p.is_file())
        .map(|path| {
            let names = load_document(path, &show(path, home))
                .map(|doc| {
                    servers_in_json(&doc, cwd)
                        .into_iter()
                        .map(|(n, _)| n)
                        .collect()
                })
                .unwrap_or_default();
            (show(path, home), names)
        })
        .collect();
    let existing: Vec<&PathBuf> = candidates.iter().filter(|p| p.exists()).collect();
    if existing.is_empty() {
        let shown: Vec<String> = candidates.iter().map(|p| show(p, home)).collect();
        let shown = shown.join(" or ");
        return Err(if explicit {
            ImportError::NoSuchFile { shown }
        } else if let Some((project, _)) = left_out.first() {
            ImportError::ProjectOnly {
                host: source.label(),
                shown,
                project: project.clone(),
            }
        } else {
            ImportError::NoConfig {
                host: source.label(),
                shown,
            }
        });
    }

    // Each entry carries the file it came from.
    let mut merged: SourcedEntries = Vec::new();
    // Claude Code's local scope (projects[cwd] in ~/.claude.json) wins over its user scope.
    let mut deferred = Vec::new();
    for path in existing {
        let shown = show(path, home);
        let doc = load_document(path, &shown)?;
        let (base, local) = scopes(&doc, cwd);
        if explicit && local.is_empty() && !has_server_map(&doc) {
            return Err(ImportError::NoServerMap { shown });
        }
        let from = |entries: Entries, origin: String| -> SourcedEntries {
            entries
                .into_iter()
                .map(|(name, entry)| (name, (entry, origin.clone())))
                .collect()
        };
        merge(
            &mut merged,
            from(normalize_all(base, &shown)?, shown.clone()),
        );
        let local_origin = format!("{shown} (local scope of {})", cwd.display());
        deferred.push(from(normalize_all(local, &shown)?, local_origin));
    }
    for local in deferred {
        merge(&mut merged, local);
    }
    Ok(Found {
        servers: merged
            .into_iter()
            .map(|(name, (entry, file))| (name, entry, file))
            .collect(),
        left_out,
    })
}

fn normalize_all(entries: Entries, shown: &str) -> Result<Entries, ImportError> {
    entries
        .into_iter()
        .map(|(name, entry)| match normalize_entry(&entry) {
            Ok(e) => Ok((name, e)),
            Err(why) => Err(ImportError::Entry {
                shown: shown.to_string(),
                name,
                why,
            }),
        })
        .collect()
}

/// Appends `items`, replacing (in place) entries whose name is already present. Linear in
/// the entries: a config with thousands of servers loads as fast as it reads.
fn merge<T>(into: &mut Vec<(String, T)>, items: Vec<(String, T)>) {
    if items.is_empty() {
        return;
    }
    let mut index: std::collections::HashMap<String, usize> = into
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.clone(), i))
        .collect();
    for (name, entry) in items {
        match index.get(&name) {
            Some(&i) => into[i].1 = entry,
            None => {
                index.insert(name.clone(), into.len());
                into.push((name, entry));
            }
        }
    }
}

/// Reads and parses one file: TOML by extension `.toml`, JSON/JSONC otherwise.
fn load_document(path: &Path, shown: &str) -> Result<Value, ImportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ImportError::Read {
        shown: shown.to_string(),
        source,
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let is_toml = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    if is_toml {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let line = e
                .span()
                .and_then(|s| text.get(..s.start))
                .map(|before| before.matches('\n').count() + 1);
            let msg = e.message().lines().next().unwrap_or("parse error").trim();
            ImportError::Toml {
                shown: shown.to_string(),
                line,
                message: msg.to_string(),
            }
        })?;
        Ok(toml_to_json(toml::Value::Table(table)))
    } else {
        parse_jsonc(text).map_err(|source| ImportError::Json {
            shown: shown.to_string(),
            source,
        })
    }
}

/// Parses JSON, falling back to JSONC (comments, trailing commas) when strict parsing fails.
pub fn parse_jsonc(text: &str) -> Result<Value, serde_json::Error> {
    match serde_json::from_str(text) {
        Ok(v) => Ok(v),
        Err(strict) => {
            let relaxed = strip_jsonc(text);
            if relaxed == text {
                Err(strict)
            } else {
                serde_json::from_str(&relaxed)
            }
        }
    }
}

/// Blanks out `//` and `/* */` comments and trailing commas outside strings.
/// Newlines are kept so parse errors still report the right line.
fn strip_jsonc(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<char> = Vec::with_capacity(chars.len());
    let mut i = 0;
    let mut in_string = false;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(&next) = chars.get(i + 1) {
                    out.push(next);
                    i += 1;
                }
            } else if c == '"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match (c, chars.get(i + 1)) {
            ('"', _) => {
                in_string = true;
                out.push(c);
                i += 1;
            }
            ('/', Some('/')) => {
                while i < chars.len() && chars[i] != '\n' {
                    out.push(' ');
                    i += 1;
                }
            }
            ('/', Some('*')) => {
                out.push(' ');
                out.push(' ');
                i += 2;
                while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    out.push(if chars[i] == '\n' { '\n' } else { ' ' });
                    i += 1;
                }
                if i < chars.len() {
                    out.push(' ');
                    out.push(' ');
                    i += 2;
                }
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    // Trailing commas: a ',' whose next non-blank character closes an object or array.
    let mut in_string = false;
    let mut escaped = false;
    for idx in 0..out.len() {
        let c = out[idx];
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if c == '"' {
            in_string = true;
        } else if c == ',' {
            let next = out[idx + 1..].iter().find(|ch| !ch.is_whitespace());
            if matches!(next, Some('}') | Some(']')) {
                out[idx] = ' ';
            }
        }
    }
    out.into_iter().collect()
}

fn toml_to_json(v: toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or(Value::Null),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(items) => Value::Array(items.into_iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => {
            Value::Object(t.into_iter().map(|(k, v)| (k, toml_to_json(v))).collect())
        }
    }
}

/// Top-level keys that hold a server map directly.
pub const SERVER_KEYS: [&str; 4] = ["mcpServers", "servers", "mcp.servers", "mcp_servers"];

fn has_server_map(doc: &Value) -> bool {
    SERVER_KEYS
        .iter()
        .any(|k| doc.get(k).is_some_and(Value::is_object))
        || doc
            .get("mcp")
            .and_then(|m| m.get("servers"))
            .is_some_and(Value::is_object)
}

/// Extracts the server map from a parsed JSON document in any of the known shapes: `mcpServers` (Claude Desktop, Cursor, Windsurf, .mcp.json), `servers` (VS Code mcp.json), `mcp.servers` / `"mcp": {"servers":...}` (VS Code settings.json), Claude Code's ~/.claude.json (top-level mcpServers plus projects[<cwd>].mcpServers for the given cwd).
///
/// Also accepts `mcp_servers` (a Codex config converted to JSON). Entries are
/// returned raw (not normalised); values that are not objects are skipped. When
/// a name occurs in several maps, the later one (the project one for
/// `~/.claude.json`) replaces the earlier entry in place.
pub fn servers_in_json(doc: &Value, cwd: &Path) -> Vec<(String, Map<String, Value>)> {
    let (mut base, local) = scopes(doc, cwd);
    merge(&mut base, local);
    base
}

/// Splits a document into its global servers and the servers of `projects[cwd]`.
fn scopes(doc: &Value, cwd: &Path) -> (Entries, Entries) {
    let mut base = Vec::new();
    for key in SERVER_KEYS {
        merge(&mut base, entries_of(doc.get(key)));
    }
    merge(
        &mut base,
        entries_of(doc.get("mcp").and_then(|m| m.get("servers"))),
    );

    let mut local = Vec::new();
    if let Some(projects) = doc.get("projects").and_then(Value::as_object) {
        if !cwd.as_os_str().is_empty() {
            let canonical = std::fs::canonicalize(cwd).ok();
            let matches = |key: &str| {
                let p = Path::new(key);
                p == cwd || canonical.as_deref() == Some(p)
            };
            if let Some((_, project)) = projects.iter().find(|(k, _)| matches(k)) {
                local = entries_of(project.get("mcpServers"));
            }
        }
    }
    (base, local)
}

fn entries_of(map: Option<&Value>) -> Entries {
    match map.and_then(Value::as_object) {
        Some(m) => m
            .iter()
            .filter_map(|(name, v)| v.as_object().map(|o| (name.clone(), o.clone())))
            .collect(),
        None => Vec::new(),
    }
}

const NEITHER: &str = "server entry has neither \"command\" nor \"url\"";

/// Why a host's config cannot be imported; `shown` is a file as the person knows it.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{shown}: no such file; expected claude, claude-code, cursor, vscode, windsurf, codex or the path of an MCP config file")]
    NoSuchFile { shown: String },
    #[error("no {host} user config found at {shown}; {project} is this repository's, not yours, so it is not imported (ferry reads project files in place once you run `ferry trust`)")]
    ProjectOnly {
        host: &'static str,
        shown: String,
        project: String,
    },
    #[error("no {host} config found at {shown}; pass a path to the config file instead")]
    NoConfig { host: &'static str, shown: String },
    #[error("{shown} has no \"mcpServers\", \"servers\", \"mcp.servers\" or \"mcp_servers\" map; pass the MCP config file of your host")]
    NoServerMap { shown: String },
    #[error("{shown}: server \"{name}\": {why}; fix or remove that entry")]
    Entry {
        shown: String,
        name: String,
        why: EntryError,
    },
    #[error("cannot read {shown}: {source}")]
    Read {
        shown: String,
        source: std::io::Error,
    },
    #[error("{shown} is not valid TOML ({}{message}); fix it or pass another file", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
    Toml {
        shown: String,
        line: Option<usize>,
        message: String,
    },
    #[error("{shown} is not valid JSON ({source}); fix it or pass another file")]
    Json {
        shown: String,
        source: serde_json::Error,
    },
}

/// What is wrong with one server entry, in any host's dialect.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EntryError {
    #[error("{NEITHER}")]
    Neither,
    #[error("\"{0}\" must be a string")]
    NotText(String),
    #[error("\"args\" must be a list of strings")]
    ArgsNotList,
    #[error("\"{field}\" must be a list of strings (item {item} is {kind})")]
    ListItem {
        field: String,
        item: usize,
        kind: &'static str,
    },
    #[error("\"{field}\" value of \"{key}\" must be a string, not {kind}")]
    MapValue {
        field: String,
        key: String,
        kind: &'static str,
    },
    #[error("\"{field}\" must be an object of strings, not {kind}")]
    NotMap { field: String, kind: &'static str },
}

/// Normalises one entry from any host's dialect into ferry's shape (used by read_servers and by the project-file loader).
///
/// * `serverUrl` (Windsurf) becomes `url`; `url` wins when both exist.
/// * `type` is dropped: `stdio`/`http`/`streamable-http`/`streamableHttp` leave no
///   trace, `sse` (or any other unknown transport of a url entry) is kept as
///   `"transport": <type>`.
/// * `command` may be a list (`["npx", "-y", "pkg"]`): the rest is prepended to `args`.
/// * `args`, `env` and header values: numbers and booleans become strings; other
///   non-string values are an error.
/// * Codex keys: `http_headers` merge into `headers`, `env_http_headers`
///   `{H: VAR}` become `{H: "${VAR}"}`, `bearer_token_env_var = X` becomes
///   `Authorization: Bearer ${X}` unless an Authorization header is already set.
/// * stdio keys are only read for entries with a command and header keys only for
///   entries with a url; otherwise they are kept as unknown keys.
pub fn normalize_entry(entry: &Map<String, Value>) -> Result<Map<String, Value>, EntryError> {
    let mut consumed: Vec<&str> = vec!["type", "command", "url", "serverUrl"];

    let url = match (non_null(entry, "url"), non_null(entry, "serverUrl")) {
        (Some(v), _) => Some(string_field(v, "url")?),
        (None, Some(v)) => Some(string_field(v, "serverUrl")?),
        (None, None) => None,
    }
    .filter(|u| !u.trim().is_empty());

    let (command, mut args) = match non_null(entry, "command") {
        None => (None, Vec::new()),
        Some(Value::String(s)) => (Some(s.clone()).filter(|s| !s.trim().is_empty()), Vec::new()),
        Some(Value::Array(items)) => {
            let mut list = string_list(items, "command")?;
            if list.is_empty() {
                (None, Vec::new())
            } else {
                let first = list.remove(0);
                let cmd = first.as_str().map(str::to_string);
                (cmd.filter(|s| !s.trim().is_empty()), list)
            }
        }
        Some(_) => return Err(EntryError::NotText("command".into())),
    };

    if command.is_none() && url.is_none() {
        return Err(EntryError::Neither);
    }

    let mut out = Map::new();
    if let Some(cmd) = command {
        consumed.extend(["args", "env", "cwd"]);
        match non_null(entry, "args") {
            None => {}
            Some(Value::Array(items)) => args.extend(string_list(items, "args")?),
            Some(_) => return Err(EntryError::ArgsNotList),
        }
        out.insert("command".into(), Value::String(cmd));
        out.insert("args".into(), Value::Array(args));
        out.insert(
            "env".into(),
            Value::Object(string_map(non_null(entry, "env"), "env")?),
        );
        if let Some(v) = non_null(entry, "cwd") {
            out.insert("cwd".into(), Value::String(string_field(v, "cwd")?));
        }
    }

    if let Some(url) = url {
        consumed.extend([
            "headers",
            "http_headers",
            "env_http_headers",
            "bearer_token_env_var",
        ]);
        let mut headers = Map::new();
        for key in ["headers", "http_headers"] {
            for (k, v) in string_map(non_null(entry, key), key)? {
                insert_header(&mut headers, k, v);
            }
        }
        for (k, v) in string_map(non_null(entry, "env_http_headers"), "env_http_headers")? {
            let var = v.as_str().unwrap_or_default().to_string();
            insert_header(&mut headers, k, Value::String(format!("${{{var}}}")));
        }
        if let Some(v) = non_null(entry, "bearer_token_env_var") {
            let var = string_field(v, "bearer_token_env_var")?;
            let has_auth = headers
                .keys()
                .any(|k| k.eq_ignore_ascii_case("authorization"));
            if !has_auth {
                headers.insert(
                    "Authorization".into(),
                    Value::String(format!("Bearer ${{{var}}}")),
                );
            }
        }
        out.insert("url".into(), Value::String(url));
        out.insert("headers".into(), Value::Object(headers));

        if let Some(kind) = entry.get("type").and_then(Value::as_str) {
            let known = matches!(
                kind.to_ascii_lowercase().as_str(),
                "" | "stdio" | "http" | "streamable-http" | "streamablehttp" | "streamable_http"
            );
            if !known {
                let transport = if kind.eq_ignore_ascii_case("sse") {
                    "sse".to_string()
                } else {
                    kind.to_string()
                };
                consumed.push("transport");
                out.insert("transport".into(), Value::String(transport));
            }
        }
    }

    for (k, v) in entry {
        if !consumed.contains(&k.as_str()) && !out.contains_key(k) {
            out.insert(k.clone(), v.clone());
        }
    }
    Ok(out)
}

fn non_null<'a>(entry: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    entry.get(key).filter(|v| !v.is_null())
}

fn string_field(v: &Value, field: &str) -> Result<String, EntryError> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| EntryError::NotText(field.to_string()))
}

fn scalar_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn string_list(items: &[Value], field: &str) -> Result<Vec<Value>, EntryError> {
    items
        .iter()
        .enumerate()
        .map(|(i, v)| {
            scalar_string(v)
                .map(Value::String)
                .ok_or_else(|| EntryError::ListItem {
                    field: field.to_string(),
                    item: i + 1,
                    kind: crate::protocol::json_kind(v),
                })
        })
        .collect()
}

fn string_map(v: Option<&Value>, field: &str) -> Result<Map<String, Value>, EntryError> {
    match v {
        None => Ok(Map::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match scalar_string(v) {
                Some(s) => Ok((k.clone(), Value::String(s))),
                None => Err(EntryError::MapValue {
                    field: field.to_string(),
                    key: k.clone(),
                    kind: crate::protocol::json_kind(v),
                }),
            })
            .collect(),
        Some(other) => Err(EntryError::NotMap {
            field: field.to_string(),
            kind: crate::protocol::json_kind(other),
        }),
    }
}

/// Inserts a header, replacing one whose name differs only in case.
fn insert_header(headers: &mut Map<String, Value>, name: String, value: Value) {
    let existing = headers
        .keys()
        .find(|k| k.eq_ignore_ascii_case(&name))
        .cloned();
    match existing {
        Some(k) => {
            headers.insert(k, value);
        }
        None => {
            headers.insert(name, value);
        }
    }
}

#[cfg(test)]
mod tests;
