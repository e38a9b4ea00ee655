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
//! is kept unchanged after the canonical keys. Strings are never rewritten, so
//! `${VAR}`, `${input:...}` and `${workspaceFolder}` reach the caller untouched.
//!
//! JSON files may be JSONC (comments and trailing commas, as VS Code writes them).

use serde_json::{Map, Value};
use std::path::{Component, Path, PathBuf};

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
    /// Parses the CLI word: claude|claude-code|cursor|vscode|windsurf|codex, anything else is a path.
    pub fn parse(word: &str) -> ImportSource {
        match word {
            "claude" => ImportSource::Claude,
            "claude-code" => ImportSource::ClaudeCode,
            "cursor" => ImportSource::Cursor,
            "vscode" => ImportSource::Vscode,
            "windsurf" => ImportSource::Windsurf,
            "codex" => ImportSource::Codex,
            other => ImportSource::File(PathBuf::from(other)),
        }
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
        match self {
            ImportSource::Claude => "Claude Desktop",
            ImportSource::ClaudeCode => "Claude Code",
            ImportSource::Cursor => "Cursor",
            ImportSource::Vscode => "VS Code",
            ImportSource::Windsurf => "Windsurf",
            ImportSource::Codex => "Codex",
            ImportSource::File(_) => "MCP",
        }
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
pub fn read_servers(source: &ImportSource, home: &Path, cwd: &Path) -> Result<Found, String> {
    read_servers_with(source, home, cwd, Os::current(), &process_env)
}

fn read_servers_with(
    source: &ImportSource,
    home: &Path,
    cwd: &Path,
    os: Os,
    env: EnvLookup,
) -> Result<Found, String> {
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
        return Err(if explicit {
            format!(
                "{}: no such file; expected claude, claude-code, cursor, vscode, windsurf, codex or the path of an MCP config file",
                shown.join(" or ")
            )
        } else if let Some((project, _)) = left_out.first() {
            format!(
                "no {} user config found at {}; {project} is this repository's, not yours, so it is not imported (ferry reads project files in place once you run `ferry trust`)",
                source.label(),
                shown.join(" or ")
            )
        } else {
            format!(
                "no {} config found at {}; pass a path to the config file instead",
                source.label(),
                shown.join(" or ")
            )
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
            return Err(format!(
                "{shown} has no \"mcpServers\", \"servers\", \"mcp.servers\" or \"mcp_servers\" map; pass the MCP config file of your host"
            ));
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

fn normalize_all(entries: Entries, shown: &str) -> Result<Entries, String> {
    entries
        .into_iter()
        .map(|(name, entry)| match normalize_entry(&entry) {
            Ok(e) => Ok((name, e)),
            Err(err) => Err(format!(
                "{shown}: server \"{name}\": {err}; fix or remove that entry"
            )),
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
fn load_document(path: &Path, shown: &str) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
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
            match line {
                Some(l) => format!(
                    "{shown} is not valid TOML (line {l}: {msg}); fix it or pass another file"
                ),
                None => format!("{shown} is not valid TOML ({msg}); fix it or pass another file"),
            }
        })?;
        Ok(toml_to_json(toml::Value::Table(table)))
    } else {
        parse_jsonc(text)
            .map_err(|e| format!("{shown} is not valid JSON ({e}); fix it or pass another file"))
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
pub fn normalize_entry(entry: &Map<String, Value>) -> Result<Map<String, Value>, String> {
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
        Some(_) => return Err("\"command\" must be a string".to_string()),
    };

    if command.is_none() && url.is_none() {
        return Err(NEITHER.to_string());
    }

    let mut out = Map::new();
    if let Some(cmd) = command {
        consumed.extend(["args", "env", "cwd"]);
        match non_null(entry, "args") {
            None => {}
            Some(Value::Array(items)) => args.extend(string_list(items, "args")?),
            Some(_) => return Err("\"args\" must be a list of strings".to_string()),
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

fn string_field(v: &Value, field: &str) -> Result<String, String> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("\"{field}\" must be a string"))
}

fn scalar_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn string_list(items: &[Value], field: &str) -> Result<Vec<Value>, String> {
    items
        .iter()
        .enumerate()
        .map(|(i, v)| {
            scalar_string(v).map(Value::String).ok_or_else(|| {
                format!(
                    "\"{field}\" must be a list of strings (item {} is {})",
                    i + 1,
                    crate::protocol::json_kind(v)
                )
            })
        })
        .collect()
}

fn string_map(v: Option<&Value>, field: &str) -> Result<Map<String, Value>, String> {
    match v {
        None => Ok(Map::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match scalar_string(v) {
                Some(s) => Ok((k.clone(), Value::String(s))),
                None => Err(format!(
                    "\"{field}\" value of \"{k}\" must be a string, not {}",
                    crate::protocol::json_kind(v)
                )),
            })
            .collect(),
        Some(other) => Err(format!(
            "\"{field}\" must be an object of strings, not {}",
            crate::protocol::json_kind(other)
        )),
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
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn norm(v: Value) -> Result<Value, String> {
        normalize_entry(&obj(v)).map(Value::Object)
    }

    fn names(list: &[(String, Map<String, Value>)]) -> Vec<&str> {
        list.iter().map(|(n, _)| n.as_str()).collect()
    }

    fn no_env(_: &str) -> Option<PathBuf> {
        None
    }

    /// A scratch directory that is removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(tag: &str) -> Scratch {
            static N: AtomicUsize = AtomicUsize::new(0);
            let dir = std::env::temp_dir().join(format!(
                "ferry-import-{}-{}-{tag}",
                std::process::id(),
                N.fetch_add(1, Ordering::SeqCst)
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.join("home")).expect("mkdir home");
            std::fs::create_dir_all(dir.join("proj")).expect("mkdir proj");
            Scratch(dir)
        }
        fn home(&self) -> PathBuf {
            self.0.join("home")
        }
        fn cwd(&self) -> PathBuf {
            self.0.join("proj")
        }
        fn write(&self, path: &Path, text: &str) {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).expect("mkdir");
            }
            std::fs::write(path, text).expect("write");
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn read(s: &Scratch, source: &ImportSource, os: Os) -> Result<Entries, String> {
        read_found(s, source, os).map(|found| {
            found
                .servers
                .into_iter()
                .map(|(name, entry, _)| (name, entry))
                .collect()
        })
    }

    fn read_found(s: &Scratch, source: &ImportSource, os: Os) -> Result<Found, String> {
        read_servers_with(source, &s.home(), &s.cwd(), os, &no_env)
    }

    // ---- parse / paths ----

    #[test]
    fn parse_words_and_paths() {
        assert_eq!(ImportSource::parse("claude"), ImportSource::Claude);
        assert_eq!(ImportSource::parse("claude-code"), ImportSource::ClaudeCode);
        assert_eq!(ImportSource::parse("cursor"), ImportSource::Cursor);
        assert_eq!(ImportSource::parse("vscode"), ImportSource::Vscode);
        assert_eq!(ImportSource::parse("windsurf"), ImportSource::Windsurf);
        assert_eq!(ImportSource::parse("codex"), ImportSource::Codex);
        assert_eq!(
            ImportSource::parse("./x/mcp.json"),
            ImportSource::File(PathBuf::from("./x/mcp.json"))
        );
        assert_eq!(
            ImportSource::parse("Cursor"),
            ImportSource::File(PathBuf::from("Cursor"))
        );
    }

    #[test]
    fn candidate_paths_linux() {
        let home = Path::new("/h");
        let cwd = Path::new("/p");
        let c = |s: ImportSource| s.candidates(home, cwd, Os::Linux, &no_env);
        assert_eq!(
            c(ImportSource::Claude),
            vec![PathBuf::from(
                "/h/.config/Claude/claude_desktop_config.json"
            )]
        );
        // The user's files only: the repository's are never imported.
        assert_eq!(
            c(ImportSource::ClaudeCode),
            vec![PathBuf::from("/h/.claude.json")]
        );
        assert_eq!(
            c(ImportSource::Cursor),
            vec![PathBuf::from("/h/.cursor/mcp.json")]
        );
        assert_eq!(
            c(ImportSource::Vscode),
            vec![
                PathBuf::from("/h/.config/Code/User/settings.json"),
                PathBuf::from("/h/.config/Code/User/mcp.json"),
            ]
        );
        assert_eq!(
            c(ImportSource::Windsurf),
            vec![PathBuf::from("/h/.codeium/windsurf/mcp_config.json")]
        );
        assert_eq!(
            c(ImportSource::Codex),
            vec![PathBuf::from("/h/.codex/config.toml")]
        );
    }

    #[test]
    fn candidate_paths_macos_and_env() {
        let home = Path::new("/Users/u");
        let cwd = Path::new("/p");
        assert_eq!(
            ImportSource::Claude.candidates(home, cwd, Os::Mac, &no_env),
            vec![PathBuf::from(
                "/Users/u/Library/Application Support/Claude/claude_desktop_config.json"
            )]
        );
        let vs = ImportSource::Vscode.candidates(home, cwd, Os::Mac, &no_env);
        assert!(vs.contains(&PathBuf::from(
            "/Users/u/Library/Application Support/Code/User/mcp.json"
        )));

        let env = |name: &str| match name {
            "CODEX_HOME" => Some(PathBuf::from("/opt/codex")),
            "XDG_CONFIG_HOME" => Some(PathBuf::from("/xdg")),
            _ => None,
        };
        assert_eq!(
            ImportSource::Codex.candidates(home, cwd, Os::Linux, &env)[0],
            PathBuf::from("/opt/codex/config.toml")
        );
        assert_eq!(
            ImportSource::Claude.candidates(home, cwd, Os::Linux, &env),
            vec![
                PathBuf::from("/xdg/Claude/claude_desktop_config.json"),
                PathBuf::from("/Users/u/.config/Claude/claude_desktop_config.json"),
            ]
        );
    }

    #[test]
    fn candidate_paths_dedupe_and_file_resolution() {
        let home = Path::new("/h");
        // cwd == home: the Cursor file there is the user's, not a repository's.
        assert_eq!(
            ImportSource::Cursor.candidates(home, home, Os::Linux, &no_env),
            vec![PathBuf::from("/h/.cursor/mcp.json")]
        );
        assert!(ImportSource::Cursor
            .project_candidates(home, home)
            .is_empty());
        let cwd = Path::new("/p");
        let f = |s: &str| ImportSource::parse(s).candidates(home, cwd, Os::Linux, &no_env);
        assert_eq!(f("cfg.json"), vec![PathBuf::from("/p/cfg.json")]);
        assert_eq!(f("/abs/cfg.json"), vec![PathBuf::from("/abs/cfg.json")]);
        assert_eq!(f("~/x/cfg.json"), vec![PathBuf::from("/h/x/cfg.json")]);
    }

    #[test]
    fn show_abbreviates_home() {
        let home = Path::new("/h");
        assert_eq!(
            show(Path::new("/h/.cursor/mcp.json"), home),
            "~/.cursor/mcp.json"
        );
        assert_eq!(show(Path::new("/p/x.json"), home), "/p/x.json");
        assert_eq!(show(Path::new("/x.json"), Path::new("/")), "/x.json");
    }

    // ---- normalize_entry ----

    #[test]
    fn normalize_claude_desktop_stdio() {
        let out = norm(json!({
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
            "env": {"TOKEN": "${GITHUB_TOKEN}"}
        }))
        .expect("ok");
        assert_eq!(
            out,
            json!({
                "command": "npx",
                "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                "env": {"TOKEN": "${GITHUB_TOKEN}"}
            })
        );
    }

    #[test]
    fn normalize_fills_defaults_and_converts_scalars() {
        let out = norm(json!({
            "type": "stdio",
            "command": "server",
            "args": ["--port", 8080, true, 1.5],
            "env": {"N": 3, "B": false},
            "cwd": "/srv"
        }))
        .expect("ok");
        assert_eq!(
            out,
            json!({
                "command": "server",
                "args": ["--port", "8080", "true", "1.5"],
                "env": {"N": "3", "B": "false"},
                "cwd": "/srv"
            })
        );
        let out = norm(json!({"command": "x", "args": null, "env": null})).expect("ok");
        assert_eq!(out, json!({"command": "x", "args": [], "env": {}}));
    }

    #[test]
    fn normalize_command_list() {
        let out = norm(json!({"command": ["npx", "-y", "pkg"], "args": ["--flag"]})).expect("ok");
        assert_eq!(
            out,
            json!({"command": "npx", "args": ["-y", "pkg", "--flag"], "env": {}})
        );
    }

    #[test]
    fn normalize_http_variants() {
        // Claude Code / VS Code.
        let out = norm(json!({
            "type": "http",
            "url": "https://api.example.com/mcp",
            "headers": {"Authorization": "Bearer ${input:token}"}
        }))
        .expect("ok");
        assert_eq!(
            out,
            json!({
                "url": "https://api.example.com/mcp",
                "headers": {"Authorization": "Bearer ${input:token}"}
            })
        );
        // Cursor.
        let out = norm(json!({"type": "streamableHttp", "url": "https://c/mcp"})).expect("ok");
        assert_eq!(out, json!({"url": "https://c/mcp", "headers": {}}));
        // Windsurf.
        let out = norm(json!({"serverUrl": "https://w/mcp"})).expect("ok");
        assert_eq!(out, json!({"url": "https://w/mcp", "headers": {}}));
        // url wins over serverUrl.
        let out = norm(json!({"serverUrl": "https://old", "url": "https://new"})).expect("ok");
        assert_eq!(out, json!({"url": "https://new", "headers": {}}));
    }

    #[test]
    fn normalize_sse_keeps_transport() {
        let out = norm(json!({"type": "sse", "url": "https://s/sse"})).expect("ok");
        assert_eq!(
            out,
            json!({"url": "https://s/sse", "headers": {}, "transport": "sse"})
        );
        let out =
            norm(json!({"type": "SSE", "url": "https://s/sse", "transport": "x"})).expect("ok");
        assert_eq!(
            out,
            json!({"url": "https://s/sse", "headers": {}, "transport": "sse"})
        );
        // No type: an existing transport key is just an extra key.
        let out = norm(json!({"url": "https://s", "transport": "sse"})).expect("ok");
        assert_eq!(
            out,
            json!({"url": "https://s", "headers": {}, "transport": "sse"})
        );
    }

    #[test]
    fn normalize_codex_headers() {
        let out = norm(json!({
            "url": "https://x/mcp",
            "bearer_token_env_var": "X_TOKEN",
            "http_headers": {"X-Client": "ferry"},
            "env_http_headers": {"X-Key": "X_KEY"},
            "startup_timeout_sec": 20
        }))
        .expect("ok");
        assert_eq!(
            out,
            json!({
                "url": "https://x/mcp",
                "headers": {
                    "X-Client": "ferry",
                    "X-Key": "${X_KEY}",
                    "Authorization": "Bearer ${X_TOKEN}"
                },
                "startup_timeout_sec": 20
            })
        );
        // An explicit Authorization header wins over bearer_token_env_var.
        let out = norm(json!({
            "url": "https://x",
            "headers": {"authorization": "Basic abc"},
            "bearer_token_env_var": "T"
        }))
        .expect("ok");
        assert_eq!(
            out,
            json!({"url": "https://x", "headers": {"authorization": "Basic abc"}})
        );
    }

    #[test]
    fn normalize_keeps_extras_and_placeholders() {
        let out = norm(json!({
            "disabled": true,
            "command": "${workspaceFolder}/bin/srv",
            "envFile": "${workspaceFolder}/.env",
            "args": ["${input:db}"],
            "alwaysAllow": ["read"]
        }))
        .expect("ok");
        assert_eq!(
            serde_json::to_string(&out).expect("json"),
            r#"{"command":"${workspaceFolder}/bin/srv","args":["${input:db}"],"env":{},"disabled":true,"envFile":"${workspaceFolder}/.env","alwaysAllow":["read"]}"#
        );
        // stdio keys on a url entry are kept verbatim, not interpreted.
        let out = norm(json!({"url": "https://x", "env": {"A": 1}})).expect("ok");
        assert_eq!(
            out,
            json!({"url": "https://x", "headers": {}, "env": {"A": 1}})
        );
    }

    #[test]
    fn normalize_errors() {
        assert_eq!(norm(json!({})), Err(NEITHER.to_string()));
        assert_eq!(
            norm(json!({"args": ["x"], "type": "stdio"})),
            Err(NEITHER.to_string())
        );
        assert_eq!(
            norm(json!({"command": "", "url": null})),
            Err(NEITHER.to_string())
        );
        assert_eq!(norm(json!({"command": []})), Err(NEITHER.to_string()));
        assert!(norm(json!({"command": 5}))
            .unwrap_err()
            .contains("\"command\" must be a string"));
        assert!(norm(json!({"url": 5}))
            .unwrap_err()
            .contains("\"url\" must be a string"));
        assert!(norm(json!({"command": "x", "args": "a b"}))
            .unwrap_err()
            .contains("\"args\" must be a list"));
        assert_eq!(
            norm(json!({"command": "x", "args": ["a", {"b": 1}]})),
            Err("\"args\" must be a list of strings (item 2 is an object)".to_string())
        );
        assert!(norm(json!({"command": "x", "env": {"A": null}}))
            .unwrap_err()
            .contains("\"env\" value of \"A\""));
        assert!(norm(json!({"command": "x", "env": ["A=1"]}))
            .unwrap_err()
            .contains("\"env\" must be an object"));
        assert!(norm(json!({"command": "x", "cwd": 1}))
            .unwrap_err()
            .contains("\"cwd\""));
        assert!(norm(json!({"url": "https://x", "headers": {"A": [1]}}))
            .unwrap_err()
            .contains("\"headers\""));
        assert!(norm(json!({"url": "https://x", "bearer_token_env_var": 1}))
            .unwrap_err()
            .contains("bearer_token_env_var"));
    }

    // ---- servers_in_json ----

    #[test]
    fn json_mcp_servers_shape() {
        let doc = json!({"mcpServers": {
            "b": {"command": "b"},
            "a": {"url": "https://a"},
            "junk": "not an object"
        }});
        let list = servers_in_json(&doc, Path::new("/p"));
        assert_eq!(names(&list), vec!["b", "a"]);
    }

    #[test]
    fn json_vscode_shapes() {
        let doc = json!({
            "inputs": [{"type": "promptString", "id": "token", "password": true}],
            "servers": {"gh": {"type": "http", "url": "https://gh/mcp"}}
        });
        let list = servers_in_json(&doc, Path::new("/p"));
        assert_eq!(names(&list), vec!["gh"]);

        let settings = json!({
            "editor.fontSize": 12,
            "mcp": {"servers": {"n": {"type": "stdio", "command": "node"}}}
        });
        assert_eq!(
            names(&servers_in_json(&settings, Path::new("/p"))),
            vec!["n"]
        );
        let dotted = json!({"mcp.servers": {"d": {"command": "d"}}});
        assert_eq!(names(&servers_in_json(&dotted, Path::new("/p"))), vec!["d"]);
    }

    #[test]
    fn json_claude_code_projects() {
        let doc = json!({
            "numStartups": 3,
            "mcpServers": {"user": {"command": "u"}, "shared": {"command": "global"}},
            "projects": {
                "/work/app": {"mcpServers": {"shared": {"command": "local"}, "local": {"command": "l"}}},
                "/work/other": {"mcpServers": {"other": {"command": "o"}}}
            }
        });
        let list = servers_in_json(&doc, Path::new("/work/app"));
        assert_eq!(names(&list), vec!["user", "shared", "local"]);
        assert_eq!(list[1].1.get("command"), Some(&json!("local")));
        // Trailing slash in cwd still matches.
        let list = servers_in_json(&doc, Path::new("/work/app/"));
        assert_eq!(names(&list), vec!["user", "shared", "local"]);
        // Other cwd: only user scope.
        let list = servers_in_json(&doc, Path::new("/elsewhere"));
        assert_eq!(names(&list), vec!["user", "shared"]);
    }

    #[test]
    fn json_codex_shape_and_garbage() {
        let doc = json!({"mcp_servers": {"c": {"command": "c"}}});
        assert_eq!(names(&servers_in_json(&doc, Path::new("/p"))), vec!["c"]);
        for doc in [
            json!(null),
            json!([1, 2]),
            json!("x"),
            json!({"mcpServers": [1]}),
            json!({"mcp": 1}),
            json!({"projects": []}),
            json!({"projects": {"/p": 1}}),
            json!({"projects": {"/p": {"mcpServers": 1}}}),
        ] {
            assert!(servers_in_json(&doc, Path::new("/p")).is_empty(), "{doc}");
        }
    }

    #[test]
    fn no_panics_on_odd_entries() {
        let odd = [
            json!({"command": null, "url": null}),
            json!({"command": [null]}),
            json!({"command": [1, 2]}),
            json!({"url": "", "command": "  "}),
            json!({"type": 1, "command": "x"}),
            json!({"url": "u", "env_http_headers": {"A": 1}}),
            json!({"url": "u", "env_http_headers": "x"}),
            json!({"url": "u", "type": "websocket"}),
        ];
        for v in odd {
            let _ = norm(v);
        }
        assert_eq!(
            norm(json!({"command": [1, 2]})).expect("ok"),
            json!({"command": "1", "args": ["2"], "env": {}})
        );
        assert_eq!(
            norm(json!({"url": "u", "type": "websocket"})).expect("ok"),
            json!({"url": "u", "headers": {}, "transport": "websocket"})
        );
    }

    // ---- JSONC ----

    #[test]
    fn jsonc_comments_and_trailing_commas() {
        let text = r#"{
  // user servers
  "servers": {
    "a": { "command": "x", "args": ["http://keep//this", "/* and this */", "q\"//"], }, /* block
    comment */
  },
}"#;
        let v = parse_jsonc(text).expect("parses");
        assert_eq!(
            v,
            json!({"servers": {"a": {"command": "x", "args": ["http://keep//this", "/* and this */", "q\"//"]}}})
        );
        let err = parse_jsonc("{\n// c\n\"a\": }").expect_err("invalid");
        assert_eq!(err.line(), 3);
        // Unterminated constructs must not panic.
        assert!(parse_jsonc("{\"a\": \"x\\").is_err());
        assert!(parse_jsonc("{ /* open").is_err());
        assert!(parse_jsonc("/").is_err());
    }

    // ---- read_servers ----

    #[test]
    fn read_claude_desktop() {
        let s = Scratch::new("claude");
        s.write(
            &s.home().join(".config/Claude/claude_desktop_config.json"),
            r#"{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "fs"]}}, "globalShortcut": ""}"#,
        );
        let list = read(&s, &ImportSource::Claude, Os::Linux).expect("ok");
        assert_eq!(names(&list), vec!["fs"]);
        assert_eq!(
            Value::Object(list[0].1.clone()),
            json!({"command": "npx", "args": ["-y", "fs"], "env": {}})
        );
        let err = read(&s, &ImportSource::Claude, Os::Mac).expect_err("missing");
        assert_eq!(
            err,
            "no Claude Desktop config found at ~/Library/Application Support/Claude/claude_desktop_config.json; pass a path to the config file instead"
        );
    }

    #[test]
    fn read_claude_code_user_and_local_scope_never_the_project_file() {
        let s = Scratch::new("claude-code");
        let cwd = s.cwd();
        let claude = json!({
            "mcpServers": {"a": {"command": "user-a"}, "b": {"command": "user-b"}, "c": {"command": "user-c"}},
            "projects": {
                cwd.to_string_lossy(): {"mcpServers": {"c": {"command": "local-c"}, "d": {"type": "sse", "url": "https://d"}}}
            }
        });
        s.write(&s.home().join(".claude.json"), &claude.to_string());
        s.write(
            &cwd.join(".mcp.json"),
            r#"{"mcpServers": {"b": {"type": "stdio", "command": "proj-b"}, "c": {"command": "proj-c"}, "e": {"type": "http", "url": "https://e"}}}"#,
        );
        let found = read_found(&s, &ImportSource::ClaudeCode, Os::Linux).expect("ok");
        let names: Vec<&str> = found.servers.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(names, vec!["a", "b", "c", "d"]);
        let command = |i: usize| found.servers[i].1.get("command").cloned();
        assert_eq!(command(0), Some(json!("user-a")));
        assert_eq!(command(1), Some(json!("user-b")));
        assert_eq!(command(2), Some(json!("local-c")));
        assert_eq!(found.servers[3].1.get("transport"), Some(&json!("sse")));
        let local = format!("~/.claude.json (local scope of {})", cwd.display());
        let files: Vec<&str> = found.servers.iter().map(|(_, _, f)| f.as_str()).collect();
        assert_eq!(
            files,
            vec!["~/.claude.json", "~/.claude.json", &local, &local]
        );
        assert_eq!(
            found.left_out,
            vec![(
                cwd.join(".mcp.json").display().to_string(),
                vec!["b".to_string(), "c".to_string(), "e".to_string()]
            )]
        );
        // Without a user file, the repository's file is named and not read.
        std::fs::remove_file(s.home().join(".claude.json")).unwrap();
        let err = read(&s, &ImportSource::ClaudeCode, Os::Linux).expect_err("no user file");
        assert_eq!(
            err,
            format!("no Claude Code user config found at ~/.claude.json; {}/.mcp.json is this repository's, not yours, so it is not imported (ferry reads project files in place once you run `ferry trust`)", cwd.display())
        );
    }

    #[test]
    fn read_cursor_user_file_and_report_missing() {
        let s = Scratch::new("cursor");
        let err = read(&s, &ImportSource::Cursor, Os::Linux).expect_err("missing");
        assert_eq!(
            err,
            "no Cursor config found at ~/.cursor/mcp.json; pass a path to the config file instead"
        );

        s.write(
            &s.home().join(".cursor/mcp.json"),
            r#"{"mcpServers": {"g": {"command": "global"}, "x": {"command": "global-x"}}}"#,
        );
        s.write(
            &s.cwd().join(".cursor/mcp.json"),
            r#"{"mcpServers": {"x": {"url": "https://proj-x"}}}"#,
        );
        let found = read_found(&s, &ImportSource::Cursor, Os::Linux).expect("ok");
        let list: Vec<(&str, &str)> = found
            .servers
            .iter()
            .map(|(n, _, f)| (n.as_str(), f.as_str()))
            .collect();
        assert_eq!(
            list,
            vec![("g", "~/.cursor/mcp.json"), ("x", "~/.cursor/mcp.json")]
        );
        assert_eq!(found.servers[1].1.get("command"), Some(&json!("global-x")));
        let project = s.cwd().join(".cursor/mcp.json").display().to_string();
        assert_eq!(found.left_out, vec![(project, vec!["x".to_string()])]);
    }

    #[test]
    fn read_vscode_user_files() {
        let s = Scratch::new("vscode");
        let user = s.home().join(".config/Code/User");
        s.write(
            &user.join("settings.json"),
            "{\n  // settings\n  \"mcp\": {\"servers\": {\"old\": {\"command\": \"old\"}}},\n}",
        );
        s.write(
            &user.join("mcp.json"),
            r#"{"inputs": [{"id": "k", "type": "promptString"}], "servers": {"u": {"type": "http", "url": "https://u", "headers": {"K": "${input:k}"}}}}"#,
        );
        s.write(
            &s.cwd().join(".vscode/mcp.json"),
            r#"{"servers": {"p": {"type": "stdio", "command": "node", "args": ["${workspaceFolder}/s.js"]}}}"#,
        );
        let found = read_found(&s, &ImportSource::Vscode, Os::Linux).expect("ok");
        let list: Vec<(&str, &str)> = found
            .servers
            .iter()
            .map(|(n, _, f)| (n.as_str(), f.as_str()))
            .collect();
        assert_eq!(
            list,
            vec![
                ("old", "~/.config/Code/User/settings.json"),
                ("u", "~/.config/Code/User/mcp.json")
            ]
        );
        assert_eq!(
            Value::Object(found.servers[1].1.clone()),
            json!({"url": "https://u", "headers": {"K": "${input:k}"}})
        );
        let project = s.cwd().join(".vscode/mcp.json").display().to_string();
        assert_eq!(found.left_out, vec![(project, vec!["p".to_string()])]);
    }

    #[test]
    fn read_windsurf() {
        let s = Scratch::new("windsurf");
        s.write(
            &s.home().join(".codeium/windsurf/mcp_config.json"),
            r#"{"mcpServers": {"r": {"serverUrl": "https://r/mcp", "headers": {"A": "${env:TOKEN}"}}}}"#,
        );
        let list = read(&s, &ImportSource::Windsurf, Os::Linux).expect("ok");
        assert_eq!(
            Value::Object(list[0].1.clone()),
            json!({"url": "https://r/mcp", "headers": {"A": "${env:TOKEN}"}})
        );
    }

    #[test]
    fn read_codex_toml() {
        let s = Scratch::new("codex");
        s.write(
            &s.home().join(".codex/config.toml"),
            r#"
model = "o3"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp", 3]
cwd = "/srv/docs"
startup_timeout_sec = 20.5
when = 1979-05-27T07:32:00Z

[mcp_servers.docs.env]
API_KEY = "${DOCS_KEY}"

[mcp_servers.remote]
url = "https://remote/mcp"
bearer_token_env_var = "REMOTE_TOKEN"
enabled = false
"#,
        );
        let list = read(&s, &ImportSource::Codex, Os::Linux).expect("ok");
        assert_eq!(names(&list), vec!["docs", "remote"]);
        assert_eq!(
            Value::Object(list[0].1.clone()),
            json!({
                "command": "npx",
                "args": ["-y", "docs-mcp", "3"],
                "env": {"API_KEY": "${DOCS_KEY}"},
                "cwd": "/srv/docs",
                "startup_timeout_sec": 20.5,
                "when": "1979-05-27T07:32:00Z"
            })
        );
        assert_eq!(
            Value::Object(list[1].1.clone()),
            json!({
                "url": "https://remote/mcp",
                "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"},
                "enabled": false
            })
        );

        // CODEX_HOME redirects the user file.
        let alt = s.0.join("codex-home");
        s.write(
            &alt.join("config.toml"),
            "[mcp_servers.alt]\ncommand = \"alt\"\n",
        );
        let env = |name: &str| (name == "CODEX_HOME").then(|| alt.clone());
        let found = read_servers_with(&ImportSource::Codex, &s.home(), &s.cwd(), Os::Linux, &env)
            .expect("ok");
        assert_eq!(found.servers.len(), 1);
        assert_eq!(found.servers[0].0, "alt");
    }

    #[test]
    fn read_explicit_files() {
        let s = Scratch::new("file");
        s.write(
            &s.cwd().join("servers.toml"),
            "[mcp_servers.t]\nurl = \"https://t\"\n",
        );
        s.write(
            &s.cwd().join("any.json"),
            r#"{"servers": {"j": {"command": "j"}}}"#,
        );
        let list = read(&s, &ImportSource::parse("servers.toml"), Os::Linux).expect("ok");
        assert_eq!(names(&list), vec!["t"]);
        let list = read(&s, &ImportSource::parse("any.json"), Os::Linux).expect("ok");
        assert_eq!(names(&list), vec!["j"]);

        let err = read(&s, &ImportSource::parse("cursr"), Os::Linux).expect_err("missing");
        assert!(err.contains("cursr: no such file"), "{err}");
        assert!(err.contains("expected claude, claude-code"), "{err}");

        s.write(&s.cwd().join("other.json"), r#"{"name": "not mcp"}"#);
        let err = read(&s, &ImportSource::parse("other.json"), Os::Linux).expect_err("no map");
        assert!(err.contains("other.json has no \"mcpServers\""), "{err}");

        // A host file without servers is fine (empty result).
        s.write(&s.home().join(".claude.json"), r#"{"numStartups": 1}"#);
        let list = read(&s, &ImportSource::ClaudeCode, Os::Linux).expect("ok");
        assert!(list.is_empty());
    }

    #[test]
    fn read_reports_bad_files_and_entries() {
        let s = Scratch::new("bad");
        s.write(&s.home().join(".cursor/mcp.json"), "{\"mcpServers\": {");
        let err = read(&s, &ImportSource::Cursor, Os::Linux).expect_err("bad json");
        assert!(
            err.starts_with("~/.cursor/mcp.json is not valid JSON (")
                && err.ends_with("; fix it or pass another file"),
            "{err}"
        );
        assert!(!err.contains('\n'));

        s.write(
            &s.home().join(".codex/config.toml"),
            "a = 1\n[mcp_servers\n",
        );
        let err = read(&s, &ImportSource::Codex, Os::Linux).expect_err("bad toml");
        assert!(
            err.starts_with("~/.codex/config.toml is not valid TOML (line 2: "),
            "{err}"
        );
        assert!(!err.contains('\n'));

        s.write(
            &s.home().join(".codeium/windsurf/mcp_config.json"),
            r#"{"mcpServers": {"ok": {"command": "x"}, "broken": {"args": []}}}"#,
        );
        let err = read(&s, &ImportSource::Windsurf, Os::Linux).expect_err("bad entry");
        assert_eq!(
            err,
            "~/.codeium/windsurf/mcp_config.json: server \"broken\": server entry has neither \"command\" nor \"url\"; fix or remove that entry"
        );

        // A directory in place of a file is a read error, not a panic.
        std::fs::create_dir_all(s.cwd().join("dir.json")).expect("mkdir");
        let err = read(&s, &ImportSource::parse("dir.json"), Os::Linux).expect_err("dir");
        assert!(err.starts_with("cannot read "), "{err}");
    }
}
