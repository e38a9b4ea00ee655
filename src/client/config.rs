//! The server registry: `~/.config/ferry/servers.json` in the `mcpServers` shape, plus the
//! project files hosts already use (`.mcp.json`, `.cursor/mcp.json`, `.vscode/mcp.json`).
//!
//! The user's file wins on a name collision, so a repository cannot redefine a server the
//! user set up. A project file is someone else's code: its servers are listed but not started,
//! and none of the user's `${VAR}`s is expanded into them, until `ferry trust` records the
//! file's content (`trust`). `${VAR}` is expanded when a server is started, never stored
//! expanded. Every loader applies one name rule ([`check_server_name`]).

use super::import::{normalize_entry, parse_jsonc, servers_in_json, SERVER_KEYS};
use super::trust::{TrustState, TrustStore};
use crate::transport::framing::DEFAULT_MAX_MESSAGE;
use crate::transport::http::HttpConnection;
use crate::transport::stdio::{ChildSpec, StdioChild};
use crate::transport::Transport;
use crate::{Error, Result};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Words that are ferry's own commands and so can never name a server.
pub const RESERVED_NAMES: [&str; 19] = [
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
    "__complete",
];

/// The longest server name: names become parts of file names and header lines.
pub const MAX_NAME_LEN: usize = 64;

/// The longest per-request limit ferry accepts: a week.
use crate::words::{glob_match, MAX_TIMEOUT_SECS};

/// The largest `maxMessageMB` accepted.
const MAX_MESSAGE_MB: u64 = 4096;

/// One configured server.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    pub name: String,
    pub target: Target,
    /// Per-request timeout (`timeout`, seconds).
    pub timeout: Option<Duration>,
    /// Default output budget (`maxTokens`).
    pub max_tokens: Option<usize>,
    /// The largest message accepted from the server (`maxMessageMB`).
    pub max_message: usize,
    /// Only these tools are shown and callable (`includeTools`, `*` globs).
    pub include_tools: Vec<String>,
    /// These tools are hidden and refused (`excludeTools`, `*` globs).
    pub exclude_tools: Vec<String>,
    /// Whether the daemon may keep it running between calls (`keepAlive`, default true).
    pub keep_alive: bool,
    /// How long the daemon keeps it when idle (`idleTimeout`, seconds).
    pub idle_timeout: Option<Duration>,
    /// The file it came from, or a description of an ad-hoc server.
    pub origin: String,
    /// How a command line names it (`ferry github`, `ferry --cmd '...'`), for hints that
    /// run as printed.
    pub invocation: String,
    /// For a server from a project file: the file, and whether the user trusts its content.
    pub project: Option<(PathBuf, TrustState)>,
    /// How to sign in to an HTTP server (`"oauth"`), when the config says.
    pub oauth: Option<crate::auth::OAuthConfig>,
    /// The server speaks the 2024 HTTP+SSE transport (`"type": "sse"` in a host's config).
    pub legacy_sse: bool,
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

fn seconds(
    entry: &Map<String, Value>,
    key: &str,
    name: &str,
    origin: &str,
) -> Result<Option<Duration>> {
    match entry.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => match value.as_f64() {
            Some(secs) if secs > 0.0 && secs <= MAX_TIMEOUT_SECS => Ok(Some(Duration::from_secs_f64(secs))),
            _ => Err(Error::usage(format!(
                "server {name:?} in {origin}: {key:?} must be a number of seconds between 0 and {MAX_TIMEOUT_SECS}"
            ))
            .with_hint(format!("fix {key:?} in {origin}"))),
        },
    }
}

impl ServerSpec {
    /// Reads one `mcpServers` entry (any host's dialect).
    pub fn from_entry(name: &str, entry: &Map<String, Value>, origin: &str) -> Result<ServerSpec> {
        let entry = normalize_entry(entry).map_err(|why| {
            Error::usage(format!("server {name:?} in {origin}: {why}"))
                .with_hint(format!("fix or remove that entry in {origin}"))
        })?;
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
        let max_message = match entry.get("maxMessageMB") {
            None | Some(Value::Null) => DEFAULT_MAX_MESSAGE,
            Some(value) => match value.as_u64() {
                Some(mb) if (1..=MAX_MESSAGE_MB).contains(&mb) => mb as usize * 1024 * 1024,
                _ => {
                    return Err(Error::usage(format!(
                        "server {name:?} in {origin}: \"maxMessageMB\" must be a whole number from 1 to {MAX_MESSAGE_MB}"
                    ))
                    .with_hint(format!("fix \"maxMessageMB\" in {origin}")))
                }
            },
        };
        let oauth = match entry.get("oauth") {
            None | Some(Value::Null) => None,
            Some(value) => Some(crate::auth::OAuthConfig::from_value(value).map_err(|why| {
                Error::usage(format!("server {name:?} in {origin}: {why}"))
                    .with_hint(format!("fix \"oauth\" in {origin}"))
            })?),
        };
        Ok(ServerSpec {
            name: name.to_string(),
            target,
            timeout: seconds(&entry, "timeout", name, origin)?,
            max_tokens: entry
                .get("maxTokens")
                .and_then(Value::as_u64)
                .map(|n| n as usize),
            max_message,
            include_tools: globs("includeTools"),
            exclude_tools: globs("excludeTools"),
            keep_alive: entry.get("keepAlive").and_then(Value::as_bool) != Some(false),
            idle_timeout: seconds(&entry, "idleTimeout", name, origin)?,
            origin: origin.to_string(),
            invocation: format!("ferry {name}"),
            project: None,
            oauth,
            legacy_sse: entry.get("transport").and_then(Value::as_str) == Some("sse"),
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
        let quoted = shlex::try_quote(word).map_or_else(|_| word.to_string(), |q| q.into_owned());
        let invocation = if word.starts_with("http://") || word.starts_with("https://") {
            format!("ferry {quoted}")
        } else {
            format!("ferry --cmd {quoted}")
        };
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
                return Err(Error::usage("the server command is empty")
                    .with_hint("give the command to start, e.g. --cmd 'npx -y @modelcontextprotocol/server-everything'"));
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
            max_message: DEFAULT_MAX_MESSAGE,
            include_tools: Vec::new(),
            exclude_tools: Vec::new(),
            keep_alive: true,
            idle_timeout: None,
            origin: "the command line".into(),
            invocation,
            project: None,
            oauth: None,
            legacy_sse: false,
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

    /// The command line or URL, as configured (unexpanded), for the server list.
    pub fn target_text(&self) -> String {
        match &self.target {
            Target::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            Target::Http { url, .. } => url.clone(),
        }
    }

    /// Whether a tool passes the include/exclude filters.
    pub fn allows_tool(&self, tool: &str) -> bool {
        let included =
            self.include_tools.is_empty() || self.include_tools.iter().any(|g| glob_match(g, tool));
        included && !self.exclude_tools.iter().any(|g| glob_match(g, tool))
    }

    /// Refuses a project server whose file the user has not trusted (as it is now).
    pub fn check_trusted(&self) -> Result<()> {
        match &self.project {
            Some((file, TrustState::Untrusted)) => Err(Error::usage(format!(
                "{} comes from {}, which you have not trusted: ferry does not start a repository's servers on its own",
                self.name,
                file.display()
            ))
            .with_hint(format!(
                "read {}, then run `ferry trust` in that directory",
                file.display()
            ))),
            Some((file, TrustState::Changed)) => Err(Error::usage(format!(
                "{} comes from {}, which changed since you trusted it",
                self.name,
                file.display()
            ))
            .with_hint(format!(
                "read {} again, then run `ferry trust` in that directory",
                file.display()
            ))),
            Some((file, TrustState::Unsafe)) => Err(Error::usage(format!(
                "{} comes from {}, which ferry never trusts: {}",
                self.name,
                file.display(),
                super::trust::unsafe_reason(file).unwrap_or_else(|| "it changed hands".into())
            ))
            .with_hint(
                "trust covers only files you own, in directories only you can write",
            )),
            _ => Ok(()),
        }
    }

    /// Starts the server or prepares its connection, expanding `${VAR}` now. A project
    /// server must be trusted first.
    pub fn connect(&self) -> Result<Transport> {
        self.check_trusted()?;
        let here = Environment::current();
        match &self.target {
            Target::Stdio { .. } => {
                let child = self.child_spec_in(&here)?;
                StdioChild::spawn(&child, &crate::paths::log_file(&self.name))
            }
            Target::Http { .. } => {
                let (expanded, headers) = self.http_target_in(&here)?;
                HttpConnection::connect(
                    &expanded,
                    &self.shown_url(),
                    headers,
                    self.max_message,
                    self.sign_in_in(&here)?,
                    self.legacy_sse,
                )
            }
        }
    }

    /// The URL as messages show it: as configured when it holds a `${VAR}` (never its
    /// value), else with any credentials in it redacted.
    pub fn shown_url(&self) -> String {
        match &self.target {
            Target::Http { url, .. } if url.contains("${") => url.clone(),
            Target::Http { url, .. } => crate::transport::http::redacted_url(url),
            Target::Stdio { .. } => String::new(),
        }
    }

    /// The stdio command with `${VAR}` expanded from this process's environment.
    pub fn child_spec(&self) -> Result<ChildSpec> {
        self.child_spec_in(&Environment::current())
    }

    /// The stdio command with `${VAR}` expanded from `env`, the command looked up in its
    /// `PATH` (the config's own `PATH` first) and relative to its working directory.
    pub fn child_spec_in(&self, env: &Environment) -> Result<ChildSpec> {
        let Target::Stdio {
            command,
            args,
            env: vars,
            cwd,
        } = &self.target
        else {
            return Err(Error::usage(format!(
                "server {:?} is not a command",
                self.name
            )));
        };
        let expand = |text: &str| env.expand(text, &self.name);
        let vars: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| Ok((k.clone(), expand(v)?)))
            .collect::<Result<_>>()?;
        let cwd = cwd.as_deref().map(expand).transpose()?.map(PathBuf::from);
        Ok(ChildSpec {
            command: resolve_command(&expand(command)?, &vars, cwd.as_deref(), env)?,
            args: args.iter().map(|a| expand(a)).collect::<Result<_>>()?,
            env: vars,
            cwd,
            max_message: self.max_message,
            base_env: None,
            guarded: false,
        })
    }

    /// How an HTTP connection to this server signs in, from this process's environment.
    pub fn sign_in(&self) -> Result<crate::transport::http::SignIn> {
        self.sign_in_in(&Environment::current())
    }

    /// How an HTTP connection to this server signs in: the command that does it, and the
    /// `"oauth"` block with its secret expanded from `env`.
    pub fn sign_in_in(&self, env: &Environment) -> Result<crate::transport::http::SignIn> {
        let command = self.invocation.replacen("ferry ", "ferry auth ", 1);
        Ok(crate::transport::http::SignIn::new(
            command,
            self.oauth_in(env)?,
        ))
    }

    /// The `"oauth"` block with its secret and key expanded from `env`, checked.
    pub fn oauth_in(&self, env: &Environment) -> Result<Option<crate::auth::OAuthConfig>> {
        let Some(config) = &self.oauth else {
            return Ok(None);
        };
        let mut config = config.clone();
        config.client_secret = config
            .client_secret
            .as_deref()
            .map(|s| env.expand(s, &self.name))
            .transpose()?;
        config.private_key = config
            .private_key
            .as_deref()
            .map(|s| env.expand(s, &self.name))
            .transpose()?;
        // A key that cannot be used is said now, not hidden behind a refused sign-in.
        if let Some(key) = &config.private_key {
            crate::auth::jwt::SigningKey::from_config(key)?;
        }
        Ok(Some(config))
    }

    /// The URL and headers with `${VAR}` expanded from this process's environment.
    pub fn http_target(&self) -> Result<(String, BTreeMap<String, String>)> {
        self.http_target_in(&Environment::current())
    }

    /// The URL and headers with `${VAR}` expanded from `env`.
    pub fn http_target_in(&self, env: &Environment) -> Result<(String, BTreeMap<String, String>)> {
        let Target::Http { url, headers } = &self.target else {
            return Err(Error::usage(format!("server {:?} is not a URL", self.name)));
        };
        let headers = headers
            .iter()
            .map(|(k, v)| Ok((k.clone(), env.expand(v, &self.name)?)))
            .collect::<Result<_>>()?;
        Ok((env.expand(url, &self.name)?, headers))
    }
}

/// The environment and working directory a server is resolved in: this process's for a cold
/// call; in the daemon, which serves callers from many shells, the calling ferry's.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Environment {
    /// The variables whose names and values are UTF-8 (`words::utf8_env`).
    pub vars: BTreeMap<String, String>,
    /// The working directory, if it could be read.
    pub cwd: Option<PathBuf>,
}

impl Environment {
    /// This process's environment and working directory.
    pub fn current() -> Environment {
        Environment {
            vars: crate::words::utf8_env().collect(),
            cwd: std::env::current_dir().ok(),
        }
    }

    /// One variable.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// Expands `${VAR}`, `${VAR:-default}` and `${env:VAR}` from these variables; an unset
    /// variable is an error naming the server that uses it.
    pub fn expand(&self, text: &str, server: &str) -> Result<String> {
        expand_with(text, server, |name| self.var(name).map(str::to_string))
    }
}

/// A command resolved once, to an absolute path (the `PATH` the server gets, relative names
/// from its working directory), with a clear error before anything is spawned.
pub fn resolve_command(
    command: &str,
    vars: &BTreeMap<String, String>,
    cwd: Option<&Path>,
    env: &Environment,
) -> Result<String> {
    let path = vars
        .get("PATH")
        .or_else(|| env.vars.get("PATH"))
        .map(std::ffi::OsString::from);
    let dir = match cwd {
        Some(dir) => dir.to_path_buf(),
        None => env.cwd.clone().unwrap_or_else(|| PathBuf::from("/")),
    };
    which::which_in(command, path, &dir)
        .map(|p| p.display().to_string())
        .map_err(|_| {
            Error::server(format!(
                "could not start the server: command {command:?} not found"
            ))
            .with_hint("check the server's \"command\" in its configuration")
        })
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
    let mut name: String = chosen
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
    name.truncate(MAX_NAME_LEN);
    if name.is_empty() {
        "server".into()
    } else {
        name
    }
}

/// Expands `${VAR}`, `${VAR:-default}` and `${env:VAR}` from this process's environment; an
/// unset variable is an error.
pub fn expand_vars(text: &str, server: &str) -> Result<String> {
    expand_with(text, server, |name| std::env::var(name).ok())
}

fn expand_with(
    text: &str,
    server: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String> {
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
        match (lookup(name), default) {
            (Some(value), None) => out.push_str(&value),
            (Some(value), Some(_)) if !value.is_empty() => out.push_str(&value),
            (_, Some(default)) => out.push_str(default),
            (None, None) => {
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

/// All configured servers, user file first, then project files nearest first.
pub struct Registry {
    pub servers: Vec<ServerSpec>,
    /// Entries that could not be read, as one-line warnings.
    pub warnings: Vec<String>,
    /// The project files that apply here, nearest first, with their trust state.
    pub project_files: Vec<(PathBuf, TrustState)>,
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

impl Registry {
    /// Loads the user file and the project files that apply in `cwd`.
    pub fn load(cwd: &Path) -> Result<Registry> {
        let mut registry = Registry {
            servers: Vec::new(),
            warnings: Vec::new(),
            project_files: Vec::new(),
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
                continue;
            }
            if let Err(e) = check_server_name(&name) {
                self.warnings
                    .push(format!("skipped a server in {origin}: {}", e.message));
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
                Err(e) => self.warnings.push(e.message),
            }
        }
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
                self.get(name).cloned().ok_or_else(|| {
                    Error::usage(format!("unknown server {name:?}"))
                        .with_hint("`ferry` lists the configured servers")
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
