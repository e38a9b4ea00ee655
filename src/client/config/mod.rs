//! The server registry: `~/.config/ferry/servers.json` in the `mcpServers` shape, plus the
//! project files hosts already use (`.mcp.json`, `.cursor/mcp.json`, `.vscode/mcp.json`).
//! One server's entry, as it travels and starts, is `spec`.
//!
//! The user's file wins on a name collision, so a repository cannot redefine a server the
//! user set up. A project file is someone else's code: its servers are listed but not started,
//! and none of the user's `${VAR}`s is expanded into them, until `ferry trust` records the
//! file's content (`trust`). `${VAR}` is expanded when a server is started, never stored
//! expanded. Every loader applies one name rule ([`check_server_name`]).

mod spec;
pub use spec::*;

use super::import::{parse_jsonc, servers_in_json, SERVER_KEYS};
use super::trust::{TrustState, TrustStore};
use crate::{Error, Result};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Words that are ferry's own commands and so can never name a server.
pub const RESERVED_NAMES: [&str; 20] = [
    "add",
    "ask",
    "remove",
    "import",
    "find",
    "tokens",
    "skill",
    "serve",
    "daemon",
    "demo",
    "help",
    "list",
    "version",
    "call",
    "config",
    "trust",
    "completions",
    "auth",
    "review",
    "__complete",
];

/// The longest server name: names become parts of file names and header lines.
pub const MAX_NAME_LEN: usize = 64;

/// All configured servers, user file first, then project files nearest first.
pub struct Registry {
    pub servers: Vec<ServerSpec>,
    /// Entries that could not be read, as one-line warnings.
    pub warnings: Vec<String>,
    /// The project files that apply here, nearest first, with their trust state.
    pub project_files: Vec<(PathBuf, TrustState)>,
    /// Servers configured but not usable, by name: why (`disabled in servers.json`).
    pub set_aside: Vec<(String, String)>,
    /// Warnings about a repository's files, which its user may not change: said once (see
    /// [`first_time`]), not on every command.
    pub notices: Vec<String>,
}

/// The notices not said before, each recorded as said (in the cache directory), so a
/// repository's reserved server name warns once, not on every command.
pub fn first_time(notices: &[String]) -> Vec<String> {
    if notices.is_empty() {
        return Vec::new();
    }
    let record = crate::paths::cache_dir().join("notices-said");
    let said = std::fs::read_to_string(&record).unwrap_or_default();
    let new: Vec<String> = notices
        .iter()
        .filter(|n| !said.lines().any(|line| line == n.as_str()))
        .cloned()
        .collect();
    if !new.is_empty() {
        let mut all = said;
        for notice in &new {
            all.push_str(notice);
            all.push('\n');
        }
        // A record that cannot be written means the notice is said again: no harm.
        let _ = std::fs::create_dir_all(crate::paths::cache_dir());
        let _ = crate::paths::write_private(&record, all.as_bytes());
    }
    new
}

/// The user's configuration file.
pub fn user_config_path() -> PathBuf {
    crate::paths::config_dir().join("servers.json")
}

/// The project files hosts read, relative to a directory.
pub const PROJECT_FILES: [&str; 3] = [".mcp.json", ".cursor/mcp.json", ".vscode/mcp.json"];

/// The project files that apply in `cwd`, nearest first: from `cwd` up to the root of its
/// repository (the directory holding `.git`), or in `cwd` alone outside any repository, so a
/// file in a shared directory above the repository never applies. The home directory's own
/// dotfiles belong to hosts' user scope, not to a project.
pub fn project_files(cwd: &Path) -> Vec<PathBuf> {
    let home = crate::paths::home_dir();
    let mut files = Vec::new();
    let mut in_cwd = None;
    for dir in cwd.ancestors() {
        for relative in PROJECT_FILES {
            if dir == home && relative != ".mcp.json" {
                continue;
            }
            let path = dir.join(relative);
            if path.is_file() {
                files.push(path);
            }
        }
        if dir.join(".git").exists() {
            return files;
        }
        in_cwd.get_or_insert(files.len());
    }
    files.truncate(in_cwd.unwrap_or(0));
    files
}

/// The project a directory belongs to: the top of its repository (the directory holding
/// `.git`), where a host would start a server, or the directory itself outside any.
pub fn project_root(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(dir)
        .to_path_buf()
}

impl Registry {
    /// Loads the user file and the project files that apply in `cwd`.
    pub fn load(cwd: &Path) -> Result<Registry> {
        let mut registry = Registry {
            servers: Vec::new(),
            warnings: Vec::new(),
            project_files: Vec::new(),
            set_aside: Vec::new(),
            notices: Vec::new(),
        };
        let mut seen = HashSet::new();
        let user = user_config_path();
        if let Some(doc) = read_json(&user)? {
            registry.add_from(&doc, &user, cwd, None, &mut seen);
        }
        let trust = TrustStore::load();
        for path in project_files(cwd) {
            let bytes = match std::fs::read(&path) {
                Ok(bytes) => bytes,
                Err(e) => {
                    registry.warnings.push(format!(
                        "cannot read {} ({e}); its servers are skipped",
                        path.display()
                    ));
                    continue;
                }
            };
            let state = match super::trust::unsafe_reason(&path) {
                Some(_) => TrustState::Unsafe,
                None => trust.state(&path, &bytes),
            };
            registry.project_files.push((path.clone(), state));
            match parse_document(&bytes, &path) {
                Ok(doc) => registry.add_from(&doc, &path, cwd, Some(state), &mut seen),
                Err(e) => registry
                    .warnings
                    .push(format!("{} (its servers are skipped)", e.message)),
            }
        }
        Ok(registry)
    }

    fn add_from(
        &mut self,
        doc: &Value,
        path: &Path,
        cwd: &Path,
        trust: Option<TrustState>,
        seen: &mut HashSet<String>,
    ) {
        let origin = path.display().to_string();
        self.warnings.extend(shape_warnings(doc, &origin));
        for (name, entry) in servers_in_json(doc, cwd) {
            if entry.get("disabled").and_then(Value::as_bool) == Some(true) {
                let file = file_name(&origin);
                self.set_aside
                    .push((name.clone(), format!("disabled in {file}")));
                continue;
            }
            if let Err(e) = check_server_name(&name) {
                let warning = format!("skipped a server in {origin}: {}", e.message);
                match trust {
                    Some(_) => self.notices.push(warning),
                    None => self.warnings.push(warning),
                }
                continue;
            }
            if seen.contains(&name) {
                continue;
            }
            match ServerSpec::from_entry(&name, &entry, &origin) {
                Ok(mut spec) => {
                    spec.project = trust.map(|t| (path.to_path_buf(), t));
                    seen.insert(name);
                    self.servers.push(spec);
                }
                Err(e) => {
                    let prefix = format!("server {name:?} in {origin}: ");
                    let why = e.message.strip_prefix(&prefix).unwrap_or(&e.message);
                    let file = file_name(&origin);
                    self.set_aside.push((
                        name.clone(),
                        format!("configured in {file} but invalid: {why}"),
                    ));
                    self.warnings.push(e.message);
                }
            }
        }
    }

    /// Why a configured server called `name` cannot be used, if it is set aside.
    pub fn set_aside(&self, name: &str) -> Option<&str> {
        self.set_aside
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, why)| why.as_str())
    }

    /// The server called `name`.
    pub fn get(&self, name: &str) -> Option<&ServerSpec> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// The servers named (every enabled one when none is), each checked to exist; project
    /// servers not trusted are left out of "every one".
    pub fn select(&self, names: &[String]) -> Result<Vec<ServerSpec>> {
        if names.is_empty() {
            let servers: Vec<ServerSpec> = self
                .servers
                .iter()
                .filter(|s| s.check_trusted().is_ok())
                .cloned()
                .collect();
            if servers.is_empty() {
                return Err(
                    Error::usage("no servers are configured to serve").with_hint(
                        "add one with `ferry add NAME -- COMMAND` or `ferry import claude`",
                    ),
                );
            }
            return Ok(servers);
        }
        names
            .iter()
            .map(|name| {
                self.get(name)
                    .cloned()
                    .ok_or_else(|| match self.set_aside(name) {
                        Some(why) => Error::usage(format!("server {name:?} is {why}"))
                            .with_hint("`ferry config` shows where it is configured"),
                        None => Error::usage(format!("unknown server {name:?}"))
                            .with_hint("`ferry` lists the configured servers"),
                    })
            })
            .collect()
    }
}

/// Warnings for server maps that are not maps and entries that are not objects, which the
/// loader would otherwise skip without a word.
fn shape_warnings(doc: &Value, origin: &str) -> Vec<String> {
    let mut warnings = Vec::new();
    if !doc.is_object() {
        warnings.push(format!(
            "{origin} is not a JSON object; no servers read from it"
        ));
        return warnings;
    }
    for key in SERVER_KEYS {
        match doc.get(key) {
            None => {}
            Some(Value::Object(map)) => {
                for (name, entry) in map {
                    if !entry.is_object() {
                        warnings.push(format!(
                            "server {:?} in {origin} is not an object (skipped); write {{\"command\": ...}} or {{\"url\": ...}}",
                            crate::render::text::escape_line(name)
                        ));
                    }
                }
            }
            Some(other) => warnings.push(format!(
                "{key:?} in {origin} is {} instead of an object; no servers read from it",
                if other.is_null() {
                    "null"
                } else {
                    "not an object"
                }
            )),
        }
    }
    warnings
}

fn parse_document(bytes: &[u8], path: &Path) -> Result<Value> {
    let text = String::from_utf8_lossy(bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    parse_jsonc(text).map_err(|e| {
        Error::usage(format!("{} is not valid JSON: {e}", path.display()))
            .with_hint(format!("fix or remove {}", path.display()))
    })
}

/// Reads a JSON (or JSONC) file; a missing file is `None`, a broken one an error naming it.
pub fn read_json(path: &Path) -> Result<Option<Value>> {
    match std::fs::read(path) {
        Ok(bytes) => parse_document(&bytes, path).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::usage(format!("cannot read {}: {e}", path.display()))
            .with_hint(format!("check the permissions of {}", path.display()))),
    }
}

/// Checks that `name` can be a server name: 1 to 64 letters, digits, `-`, `_` and `.`, not
/// starting with `-` or `.`, and not one of ferry's commands. Every loader applies it.
pub fn check_server_name(name: &str) -> Result<()> {
    let shown = crate::render::text::escape_line(name);
    if RESERVED_NAMES.contains(&name) {
        return Err(Error::usage(format!(
            "{shown:?} is a ferry command and cannot name a server"
        ))
        .with_hint("pick another name"));
    }
    let valid = !name.is_empty()
        && name.chars().count() <= MAX_NAME_LEN
        && !name.starts_with(['-', '.'])
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || "-_.".contains(c));
    if !valid {
        let shown: String = shown.chars().take(80).collect();
        return Err(Error::usage(format!("invalid server name {shown:?}")).with_hint(format!(
            "use 1 to {MAX_NAME_LEN} letters, digits, '-', '_' and '.', not starting with '-' or '.'"
        )));
    }
    Ok(())
}

/// Holds an exclusive lock on the user's config for a read-modify-write.
struct ConfigLock {
    _file: std::fs::File,
}

impl ConfigLock {
    fn acquire(path: &Path) -> Result<ConfigLock> {
        let io = |e: std::io::Error| {
            Error::usage(format!("cannot lock {}: {e}", path.display()))
                .with_hint(format!("check the permissions of {}", path.display()))
        };
        if let Some(dir) = path.parent() {
            crate::paths::ensure_secret_dir(dir).map_err(io)?;
        }
        let lock_path = path.with_extension("json.lock");
        let file = crate::paths::locked_file(&lock_path).map_err(io)?;
        Ok(ConfigLock { _file: file })
    }
}

/// Adds or replaces servers in the user file, keeping everything else in it. The file is
/// locked, read again under the lock and written atomically, so concurrent `ferry add`s all
/// land.
pub fn write_user_servers(
    entries: &[(String, Map<String, Value>)],
    replace: bool,
) -> Result<Vec<String>> {
    let path = user_config_path();
    let _lock = ConfigLock::acquire(&path)?;
    let mut doc = read_json(&path)?.unwrap_or_else(|| Value::Object(Map::new()));
    let Some(root) = doc.as_object_mut() else {
        return Err(
            Error::usage(format!("{} is not a JSON object", path.display()))
                .with_hint(format!("fix or remove {}", path.display())),
        );
    };
    let servers = root
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()));
    if servers.is_null() {
        *servers = Value::Object(Map::new());
    }
    let Some(servers) = servers.as_object_mut() else {
        return Err(Error::usage(format!(
            "\"mcpServers\" in {} is not an object",
            path.display()
        ))
        .with_hint(format!("fix \"mcpServers\" in {}", path.display())));
    };
    let mut skipped = Vec::new();
    for (name, entry) in entries {
        if servers.contains_key(name) && !replace {
            skipped.push(name.clone());
            continue;
        }
        servers.insert(name.clone(), Value::Object(entry.clone()));
    }
    save_json(&path, &doc)?;
    Ok(skipped)
}

/// Removes a server from the user file; false when it was not there.
pub fn remove_user_server(name: &str) -> Result<bool> {
    let path = user_config_path();
    let _lock = ConfigLock::acquire(&path)?;
    let Some(mut doc) = read_json(&path)? else {
        return Ok(false);
    };
    let removed = doc
        .get_mut("mcpServers")
        .and_then(Value::as_object_mut)
        .and_then(|s| s.shift_remove(name))
        .is_some();
    if removed {
        save_json(&path, &doc)?;
    }
    Ok(removed)
}

/// Writes the user's config: it holds headers and keys, so it is private (0600 in a 0700
/// directory) and written atomically, as every secret-holding file is
/// ([`crate::paths::write_private`]). Callers hold the [`ConfigLock`].
fn save_json(path: &Path, doc: &Value) -> Result<()> {
    let io = |e: std::io::Error| {
        Error::usage(format!("cannot write {}: {e}", path.display())).with_hint(format!(
            "check the permissions and free space of {}",
            path.display()
        ))
    };
    let mut text = serde_json::to_string_pretty(doc).map_err(|e| Error::usage(e.to_string()))?;
    text.push('\n');
    crate::paths::write_private(path, text.as_bytes()).map_err(io)
}

/// The last part of a config file's path (`servers.json`), as messages name it.
pub fn file_name(origin: &str) -> &str {
    std::path::Path::new(origin)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(origin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_variables_with_defaults() {
        std::env::set_var("FERRY_TEST_TOKEN", "abc");
        assert_eq!(
            expand_vars("Bearer ${FERRY_TEST_TOKEN}", "s").unwrap(),
            "Bearer abc"
        );
        assert_eq!(expand_vars("${env:FERRY_TEST_TOKEN}", "s").unwrap(), "abc");
        assert_eq!(
            expand_vars("${FERRY_UNSET_X:-fallback}", "s").unwrap(),
            "fallback"
        );
        let err = expand_vars("${FERRY_UNSET_Y}", "gh").unwrap_err();
        assert_eq!(
            err.message,
            "environment variable FERRY_UNSET_Y is not set (server \"gh\" uses it)"
        );
        assert_eq!(expand_vars("no vars ${", "s").unwrap(), "no vars ${");
    }

    #[test]
    fn ad_hoc_names() {
        assert_eq!(
            ad_hoc_name("npx -y @modelcontextprotocol/server-everything"),
            "server-everything"
        );
        assert_eq!(
            ad_hoc_name("uvx mcp-server-time --local-timezone UTC"),
            "mcp-server-time"
        );
        assert_eq!(
            ad_hoc_name("./target/debug/examples/fault_server crash"),
            "fault_server"
        );
        assert_eq!(ad_hoc_name("https://example.com/mcp"), "mcp");
        assert_eq!(
            ad_hoc_name(&format!("/bin/{}", "x".repeat(300))).len(),
            MAX_NAME_LEN
        );
    }

    #[test]
    fn reserved_and_invalid_names_are_refused() {
        assert!(check_server_name("add").is_err());
        assert!(check_server_name("trust").is_err());
        assert!(check_server_name("-x").is_err());
        assert!(check_server_name("my server").is_err());
        assert!(check_server_name("..").is_err());
        assert!(check_server_name(".hidden").is_err());
        assert!(check_server_name("../../etc/passwd").is_err());
        assert!(check_server_name(&"x".repeat(65)).is_err());
        assert!(check_server_name("github").is_ok());
        assert!(check_server_name("my.server-2").is_ok());
    }

    #[test]
    fn odd_shapes_are_warned_about() {
        let doc = serde_json::json!({"mcpServers": {"a": "npx x", "b": {"command": "b"}}, "servers": null});
        assert_eq!(
            shape_warnings(&doc, "f.json"),
            vec![
                "server \"a\" in f.json is not an object (skipped); write {\"command\": ...} or {\"url\": ...}".to_string(),
                "\"servers\" in f.json is null instead of an object; no servers read from it".to_string(),
            ]
        );
    }
}
