//! The server registry: `~/.config/ferry/servers.json` in the `mcpServers` shape, plus the
//! project files hosts already use (`.mcp.json`, `.cursor/mcp.json`, `.vscode/mcp.json`).
//!
//! The user's file wins on a name collision, so a repository cannot redefine a server the
//! user set up. `${VAR}` is expanded when a server is started, never stored expanded.

use super::import::{normalize_entry, servers_in_json};
use crate::transport::stdio::ChildSpec;
use crate::{Error, Result};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Words that are ferry's own commands and so can never name a server.
pub const RESERVED_NAMES: [&str; 14] = [
    "add", "remove", "import", "find", "tokens", "skill", "serve", "daemon", "demo", "help",
    "list", "version", "call", "config",
];

/// The longest per-request limit ferry accepts: a week.
pub const MAX_TIMEOUT_SECS: f64 = 7.0 * 24.0 * 3600.0;

/// One configured server.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    pub name: String,
    pub target: Target,
    /// Per-request timeout (`timeout`, seconds).
    pub timeout: Option<Duration>,
    /// Default output budget (`maxTokens`).
    pub max_tokens: Option<usize>,
    /// Only these tools are shown and callable (`includeTools`, `*` globs).
    pub include_tools: Vec<String>,
    /// These tools are hidden and refused (`excludeTools`, `*` globs).
    pub exclude_tools: Vec<String>,
    /// The file it came from, or a description of an ad-hoc server.
    pub origin: String,
}

/// How to reach a server, with `${VAR}` still unexpanded.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<String>,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

impl ServerSpec {
    /// Reads one `mcpServers` entry (any host's dialect).
    pub fn from_entry(name: &str, entry: &Map<String, Value>, origin: &str) -> Result<ServerSpec> {
        let entry = normalize_entry(entry)
            .map_err(|why| Error::usage(format!("server {name:?} in {origin}: {why}")))?;
        let strings = |key: &str| -> BTreeMap<String, String> {
            entry
                .get(key)
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| {
                            (
                                k.clone(),
                                v.as_str().map_or_else(|| v.to_string(), str::to_string),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        let target = if let Some(url) = entry.get("url").and_then(Value::as_str) {
            Target::Http {
                url: url.to_string(),
                headers: strings("headers"),
            }
        } else {
            let command = entry
                .get("command")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let args = entry
                .get("args")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            let cwd = entry.get("cwd").and_then(Value::as_str).map(str::to_string);
            Target::Stdio {
                command,
                args,
                env: strings("env"),
                cwd,
            }
        };
        let globs = |key: &str| -> Vec<String> {
            entry
                .get(key)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        let timeout = match entry.get("timeout") {
            None | Some(Value::Null) => None,
            Some(value) => match value.as_f64() {
                Some(secs) if secs > 0.0 && secs <= MAX_TIMEOUT_SECS => Some(Duration::from_secs_f64(secs)),
                _ => {
                    return Err(Error::usage(format!(
                        "server {name:?} in {origin}: \"timeout\" must be a number of seconds between 0 and {MAX_TIMEOUT_SECS}"
                    )))
                }
            },
        };
        Ok(ServerSpec {
            name: name.to_string(),
            target,
            timeout,
            max_tokens: entry
                .get("maxTokens")
                .and_then(Value::as_u64)
                .map(|n| n as usize),
            include_tools: globs("includeTools"),
            exclude_tools: globs("excludeTools"),
            origin: origin.to_string(),
        })
    }

    /// An ad-hoc server given on the command line: a URL or a shell-like command line.
    pub fn ad_hoc(word: &str) -> Result<ServerSpec> {
        if let Some((scheme, _)) = word
            .split_once("://")
            .filter(|(s, _)| !s.contains(char::is_whitespace))
        {
            if !matches!(scheme, "http" | "https") {
                return Err(Error::usage(format!("unsupported URL scheme {scheme:?} in {word:?}"))
                    .with_hint("MCP servers are reached over http:// or https://, or started as a command with --cmd"));
            }
        }
        let target = if word.starts_with("http://") || word.starts_with("https://") {
            Target::Http {
                url: word.to_string(),
                headers: BTreeMap::new(),
            }
        } else {
            let mut parts = shlex::split(word)
                .filter(|p| !p.is_empty())
                .ok_or_else(|| {
                    Error::usage(format!("cannot split the command {word:?}"))
                        .with_hint("check its quotes")
                })?;
            if parts.is_empty() {
                return Err(Error::usage("the server command is empty"));
            }
            let command = parts.remove(0);
            Target::Stdio {
                command,
                args: parts,
                env: BTreeMap::new(),
                cwd: None,
            }
        };
        Ok(ServerSpec {
            name: ad_hoc_name(word),
            target,
            timeout: None,
            max_tokens: None,
            include_tools: Vec::new(),
            exclude_tools: Vec::new(),
            origin: "the command line".into(),
        })
    }

    /// What identifies the server for the cache: everything that decides what it is.
    pub fn identity(&self) -> String {
        match &self.target {
            Target::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                format!("stdio\0{command}\0{}\0{env:?}\0{cwd:?}", args.join("\0"))
            }
            Target::Http { url, headers } => format!("http\0{url}\0{headers:?}"),
        }
    }

    /// "stdio" or "http", for the server list.
    pub fn transport_name(&self) -> &'static str {
        match self.target {
            Target::Stdio { .. } => "stdio",
            Target::Http { .. } => "http",
        }
    }

    /// Whether a tool passes the include/exclude filters.
    pub fn allows_tool(&self, tool: &str) -> bool {
        let included =
            self.include_tools.is_empty() || self.include_tools.iter().any(|g| glob_match(g, tool));
        included && !self.exclude_tools.iter().any(|g| glob_match(g, tool))
    }

    /// The stdio command with `${VAR}` expanded.
    pub fn child_spec(&self) -> Result<ChildSpec> {
        let Target::Stdio {
            command,
            args,
            env,
            cwd,
        } = &self.target
        else {
            return Err(Error::usage(format!(
                "server {:?} is not a command",
                self.name
            )));
        };
        let expand = |text: &str| expand_vars(text, &self.name);
        Ok(ChildSpec {
            command: expand(command)?,
            args: args.iter().map(|a| expand(a)).collect::<Result<_>>()?,
            env: env
                .iter()
                .map(|(k, v)| Ok((k.clone(), expand(v)?)))
                .collect::<Result<_>>()?,
            cwd: cwd.as_deref().map(expand).transpose()?.map(PathBuf::from),
        })
    }

    /// The URL and headers with `${VAR}` expanded.
    pub fn http_target(&self) -> Result<(String, BTreeMap<String, String>)> {
        let Target::Http { url, headers } = &self.target else {
            return Err(Error::usage(format!("server {:?} is not a URL", self.name)));
        };
        let headers = headers
            .iter()
            .map(|(k, v)| Ok((k.clone(), expand_vars(v, &self.name)?)))
            .collect::<Result<_>>()?;
        Ok((expand_vars(url, &self.name)?, headers))
    }
}

/// A readable, file-safe name for an ad-hoc server: the package a runner starts
/// (`npx -y @scope/server-x` → `server-x`), else the program's file name.
fn ad_hoc_name(word: &str) -> String {
    const RUNNERS: [&str; 10] = [
        "npx", "uvx", "bunx", "pipx", "node", "python", "python3", "deno", "uv", "bun",
    ];
    let words: Vec<&str> = word.split_whitespace().collect();
    let program = words.first().copied().unwrap_or("server");
    let base = |w: &str| {
        w.trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or(w)
            .to_string()
    };
    let chosen = if word.contains("://") {
        word.trim_end_matches('/')
            .rsplit('/')
            .find(|s| !s.is_empty())
            .unwrap_or("server")
            .to_string()
    } else if RUNNERS.contains(&base(program).as_str()) {
        words[1..]
            .iter()
            .find(|w| !w.starts_with('-') && !matches!(**w, "run" | "x" | "exec"))
            .map_or(base(program), |w| base(w))
    } else {
        base(program)
    };
    let name: String = chosen
        .split('@')
        .find(|s| !s.is_empty())
        .unwrap_or("server")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if name.is_empty() {
        "server".into()
    } else {
        name
    }
}

/// Expands `${VAR}`, `${VAR:-default}` and `${env:VAR}`; an unset variable is an error.
pub fn expand_vars(text: &str, server: &str) -> Result<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inner = &after[..end];
        let inner = inner.strip_prefix("env:").unwrap_or(inner);
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        match (std::env::var(name), default) {
            (Ok(value), None) => out.push_str(&value),
            (Ok(value), Some(_)) if !value.is_empty() => out.push_str(&value),
            (_, Some(default)) => out.push_str(default),
            (Err(_), None) => {
                return Err(Error::usage(format!(
                    "environment variable {name} is not set (server {server:?} uses it)"
                ))
                .with_hint(format!("export {name}=... before running ferry")));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `*` matches any run of characters; everything else matches itself.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((prefix, rest)) => {
            let Some(mut remaining) = text.strip_prefix(prefix) else {
                return false;
            };
            if rest.is_empty() {
                return true;
            }
            loop {
                if glob_match(rest, remaining) {
                    return true;
                }
                let mut chars = remaining.chars();
                if chars.next().is_none() {
                    return false;
                }
                remaining = chars.as_str();
            }
        }
    }
}

/// All configured servers, user file first, then project files nearest first.
pub struct Registry {
    pub servers: Vec<ServerSpec>,
    /// Entries that could not be read, as one-line warnings.
    pub warnings: Vec<String>,
}

/// The user's configuration file.
pub fn user_config_path() -> PathBuf {
    crate::paths::config_dir().join("servers.json")
}

impl Registry {
    /// Loads the user file and the project files that apply in `cwd`.
    pub fn load(cwd: &Path) -> Result<Registry> {
        let mut registry = Registry {
            servers: Vec::new(),
            warnings: Vec::new(),
        };
        let user = user_config_path();
        if let Some(doc) = read_json(&user)? {
            registry.add_from(&doc, &user, cwd);
        }
        let home = crate::paths::home_dir();
        for dir in cwd.ancestors() {
            for relative in [".mcp.json", ".cursor/mcp.json", ".vscode/mcp.json"] {
                let path = dir.join(relative);
                // The home directory's dotfiles belong to hosts' user scope, not to a project.
                if dir == home && relative != ".mcp.json" {
                    continue;
                }
                match read_json(&path) {
                    Ok(Some(doc)) => registry.add_from(&doc, &path, cwd),
                    Ok(None) => {}
                    Err(e) => registry
                        .warnings
                        .push(format!("{} (its servers are skipped)", e.message)),
                }
            }
        }
        Ok(registry)
    }

    fn add_from(&mut self, doc: &Value, path: &Path, cwd: &Path) {
        let origin = path.display().to_string();
        for (name, entry) in servers_in_json(doc, cwd) {
            if entry.get("disabled").and_then(Value::as_bool) == Some(true) {
                continue;
            }
            if self.servers.iter().any(|s| s.name == name)
                || RESERVED_NAMES.contains(&name.as_str())
            {
                continue;
            }
            match ServerSpec::from_entry(&name, &entry, &origin) {
                Ok(spec) => self.servers.push(spec),
                Err(e) => self.warnings.push(e.message),
            }
        }
    }

    /// The server called `name`.
    pub fn get(&self, name: &str) -> Option<&ServerSpec> {
        self.servers.iter().find(|s| s.name == name)
    }
}

/// Reads a JSON file; a missing file is `None`, a broken one an error naming it.
pub fn read_json(path: &Path) -> Result<Option<Value>> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            Error::usage(format!("{} is not valid JSON: {e}", path.display()))
                .with_hint("fix or remove the file")
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::usage(format!("cannot read {}: {e}", path.display()))),
    }
}

/// Checks that `name` can be a server name.
pub fn check_server_name(name: &str) -> Result<()> {
    if RESERVED_NAMES.contains(&name) {
        return Err(Error::usage(format!(
            "{name:?} is a ferry command and cannot name a server"
        ))
        .with_hint("pick another name"));
    }
    let valid = !name.is_empty()
        && !name.starts_with('-')
        && !name.contains("://")
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || "-_.".contains(c));
    if !valid {
        return Err(Error::usage(format!("invalid server name {name:?}"))
            .with_hint("use letters, digits, '-', '_' and '.'"));
    }
    Ok(())
}

/// Adds or replaces servers in the user file, keeping everything else in it.
pub fn write_user_servers(
    entries: &[(String, Map<String, Value>)],
    replace: bool,
) -> Result<Vec<String>> {
    let path = user_config_path();
    let mut doc = read_json(&path)?.unwrap_or_else(|| Value::Object(Map::new()));
    let Some(root) = doc.as_object_mut() else {
        return Err(Error::usage(format!(
            "{} is not a JSON object",
            path.display()
        )));
    };
    let servers = root
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(servers) = servers.as_object_mut() else {
        return Err(Error::usage(format!(
            "\"mcpServers\" in {} is not an object",
            path.display()
        )));
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

/// Writes JSON through a temporary file so a crash never leaves half a file.
pub fn save_json(path: &Path, doc: &Value) -> Result<()> {
    let io = |e: std::io::Error| Error::usage(format!("cannot write {}: {e}", path.display()));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let mut text = serde_json::to_string_pretty(doc).map_err(|e| Error::usage(e.to_string()))?;
    text.push('\n');
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
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
    fn globs() {
        assert!(glob_match("read_*", "read_file"));
        assert!(glob_match("*_file", "read_file"));
        assert!(glob_match("*", "x"));
        assert!(!glob_match("read_*", "write_file"));
        assert!(glob_match("a*b*c", "aXXbYYc"));
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
    }

    #[test]
    fn reserved_and_invalid_names_are_refused() {
        assert!(check_server_name("add").is_err());
        assert!(check_server_name("-x").is_err());
        assert!(check_server_name("my server").is_err());
        assert!(check_server_name("github").is_ok());
    }
}
