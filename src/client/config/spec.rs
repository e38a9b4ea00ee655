//! One configured server as it travels ([`ServerSpec`]): its transport and ferry's own keys,
//! read from a config entry, and how it is started in a caller's environment (`${VAR}`
//! expansion, the command resolved, the HTTP target). The registry that finds the entries is
//! the parent module.

use super::MAX_NAME_LEN;
use crate::client::import::normalize_entry;
use crate::client::import::translate::Meaning;
use crate::client::trust::TrustState;
use crate::protocol::lenient;
use crate::transport::framing::DEFAULT_MAX_MESSAGE;
use crate::transport::http::HttpConnection;
use crate::transport::stdio::{ChildSpec, StdioChild};
use crate::transport::Transport;
use crate::words::{glob_match, MAX_TIMEOUT_SECS};
use crate::{Error, Result};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    /// Whether its tool definitions are pinned (`pin`, default true; `client::pins`).
    pub pin: bool,
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

/// The fields of an `mcpServers` entry read by name, leniently: one of the wrong type reads
/// as absent (those whose type is checked with a message are kept as JSON).
#[derive(Debug, Default, Deserialize)]
struct EntryFields {
    #[serde(default, deserialize_with = "lenient::opt")]
    url: Option<String>,
    #[serde(default, deserialize_with = "lenient::opt")]
    command: Option<String>,
    #[serde(default, deserialize_with = "lenient::opt")]
    args: Option<Vec<Value>>,
    #[serde(default, deserialize_with = "lenient::opt")]
    cwd: Option<String>,
    #[serde(
        rename = "maxMessageMB",
        default,
        deserialize_with = "lenient::present"
    )]
    max_message_mb: Option<Value>,
    #[serde(default, deserialize_with = "lenient::present")]
    oauth: Option<Value>,
    #[serde(rename = "maxTokens", default, deserialize_with = "lenient::opt")]
    max_tokens: Option<u64>,
    #[serde(rename = "keepAlive", default, deserialize_with = "lenient::opt")]
    keep_alive: Option<bool>,
    #[serde(default, deserialize_with = "lenient::opt")]
    transport: Option<String>,
    #[serde(default, deserialize_with = "lenient::opt")]
    pin: Option<bool>,
}

impl ServerSpec {
    /// Reads one `mcpServers` entry (any host's dialect).
    pub fn from_entry(name: &str, entry: &Map<String, Value>, origin: &str) -> Result<ServerSpec> {
        let entry = normalize_entry(entry).map_err(|why| {
            Error::usage(format!("server {name:?} in {origin}: {why}"))
                .with_hint(format!("fix or remove that entry in {origin}"))
                .with_source(why)
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
        let fields = EntryFields::deserialize(&entry).unwrap_or_default();
        let target = if let Some(url) = fields.url.as_deref() {
            Target::Http {
                url: url.to_string(),
                headers: strings("headers"),
            }
        } else {
            let command = fields.command.clone().unwrap_or_default();
            let args = fields
                .args
                .as_ref()
                .map(|a| {
                    a.iter()
                        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            let cwd = fields.cwd.clone();
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
        let max_message = match &fields.max_message_mb {
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
        let oauth = match &fields.oauth {
            None | Some(Value::Null) => None,
            Some(value) => Some(crate::auth::OAuthConfig::from_value(value).map_err(|why| {
                Error::usage(format!("server {name:?} in {origin}: {why}"))
                    .with_hint(format!("fix \"oauth\" in {origin}"))
                    .with_source(why)
            })?),
        };
        Ok(ServerSpec {
            name: name.to_string(),
            target,
            timeout: seconds(&entry, "timeout", name, origin)?,
            max_tokens: fields.max_tokens.map(|n| n as usize),
            max_message,
            include_tools: globs("includeTools"),
            exclude_tools: globs("excludeTools"),
            keep_alive: fields.keep_alive != Some(false),
            idle_timeout: seconds(&entry, "idleTimeout", name, origin)?,
            origin: origin.to_string(),
            invocation: format!("ferry {name}"),
            project: None,
            oauth,
            legacy_sse: fields.transport.as_deref() == Some("sse"),
            pin: fields.pin != Some(false),
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
            pin: true,
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
                crate::client::trust::unsafe_reason(file).unwrap_or_else(|| "it changed hands".into())
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

    /// Where a stdio server without a `cwd` starts: where a host would start it, the
    /// directory of the project file it comes from, else the project root of the caller's
    /// directory ([`super::project_root`]), so that every sub-directory of a project starts
    /// (and shares, warm) the same server.
    pub fn start_dir(&self, env: &Environment) -> Option<PathBuf> {
        if let Some((file, _)) = &self.project {
            let dir = file.parent()?;
            let host_dir = matches!(
                dir.file_name().and_then(|n| n.to_str()),
                Some(".cursor" | ".vscode")
            );
            return Some(if host_dir { dir.parent()? } else { dir }.to_path_buf());
        }
        env.cwd.as_deref().map(super::project_root)
    }

    /// The stdio command with `${VAR}` expanded from `env`, the command looked up in its
    /// `PATH` (the config's own `PATH` first) and relative to its working directory. A server
    /// without a `cwd` starts in [`ServerSpec::start_dir`], and its `${PWD}` (and `PWD`) is
    /// that directory.
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
        let start = cwd.is_none().then(|| self.start_dir(env)).flatten();
        let moved;
        let env = match &start {
            Some(dir) => {
                let mut vars = env.vars.clone();
                vars.insert("PWD".into(), dir.display().to_string());
                moved = Environment {
                    vars,
                    cwd: Some(dir.clone()),
                };
                &moved
            }
            None => env,
        };
        let expand = |text: &str| env.expand(text, &self.name);
        let mut vars: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| Ok((k.clone(), expand(v)?)))
            .collect::<Result<_>>()?;
        let cwd = match start {
            Some(dir) => {
                vars.entry("PWD".into())
                    .or_insert_with(|| dir.display().to_string());
                Some(dir)
            }
            None => cwd.as_deref().map(expand).transpose()?.map(PathBuf::from),
        };
        Ok(ChildSpec {
            name: self.name.clone(),
            command: resolve_command(&self.name, &expand(command)?, &vars, cwd.as_deref(), env)?,
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
    server: &str,
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
                "could not start {server}: command {command:?} not found"
            ))
            .with_hint("check the server's \"command\" in its configuration")
        })
}

/// A readable, file-safe name for an ad-hoc server: the package a runner starts
/// (`npx -y @scope/server-x` → `server-x`), else the program's file name.
pub(super) fn ad_hoc_name(word: &str) -> String {
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

/// Expands `${VAR}`, `${VAR:-default}` and `${env:VAR}` from this process's environment (and
/// a host's own forms as `ferry import` translates them); an unset variable is an error.
pub fn expand_vars(text: &str, server: &str) -> Result<String> {
    expand_with(text, server, |name| std::env::var(name).ok())
}

fn expand_with(
    text: &str,
    server: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String> {
    use crate::client::import::translate::{meaning, pieces, Piece};
    let mut out = String::with_capacity(text.len());
    for piece in pieces(text) {
        let placeholder = match piece {
            Piece::Text(text) => {
                out.push_str(text);
                continue;
            }
            Piece::Placeholder(inner) => inner,
        };
        // A host's form reads the variable `ferry import` would have made of it:
        // `${input:tok}` is `${TOK}`, `${workspaceFolder}` is `${PWD}`.
        let inner = match meaning(placeholder) {
            Meaning::Variable(name) => name,
            Meaning::Shell(name) => name.to_string(),
            Meaning::HostOnly(name, _) => name,
            Meaning::Literal(text) => {
                out.push_str(text);
                continue;
            }
        };
        let inner = inner.as_str();
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
    }
    Ok(out)
}
