//! What travels on the daemon's socket, one JSON object per line.
//!
//! A connection opens with `{"hello": IDENTITY}`, answered with the daemon's own identity and
//! pid (the caller may send its operation in the same write: a daemon of another identity
//! does not run it). Then one operation: `{"op": "request", "server": SERVER, "method", "params",
//! "timeout_ms", "progress"}` (answered by any number of `{"ask": {"id", "method", "params"}}`,
//! which the caller answers with `{"answer": {"id", "result"}}` or `{"answer": {"id", "error":
//! {"code", "message"}}}`, and `{"progress": PARAMS}`, then one `{"result": VALUE}` or
//! `{"error": ERROR}`), `{"op": "refresh", "server": SERVER}`, `{"op": "status"}` or
//! `{"op": "stop"}`.
//!
//! SERVER carries the server's config as written (its identity, for the tools cache and the
//! session key) and what the caller resolved: `${VAR}`s expanded with the caller's
//! environment, the command's absolute path, the working directory, and for a command the
//! caller's environment, so a warm server starts exactly as a cold one would have.

use crate::client::config::{ServerSpec, Target};
use crate::transport::stdio::ChildSpec;
use crate::{Error, ErrorKind};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// How the daemon reaches a server, resolved by the caller.
#[derive(Debug, Clone)]
pub enum Resolved {
    Stdio(ChildSpec),
    Http {
        url: String,
        shown_url: String,
        headers: BTreeMap<String, String>,
    },
}

/// A server as the caller sends it.
#[derive(Debug, Clone)]
pub struct ServerRef {
    pub spec: ServerSpec,
    pub resolved: Resolved,
}

impl ServerRef {
    /// Resolves a configured server the way a cold call would start it, in this process.
    pub fn resolve(spec: &ServerSpec) -> crate::Result<ServerRef> {
        spec.check_trusted()?;
        let resolved = match &spec.target {
            Target::Stdio { .. } => {
                let mut child = spec.child_spec()?;
                if child.cwd.is_none() {
                    child.cwd = std::env::current_dir().ok();
                }
                child.base_env = Some(crate::words::utf8_env().collect());
                child.guarded = true;
                Resolved::Stdio(child)
            }
            Target::Http { url, .. } => {
                let (expanded, headers) = spec.http_target()?;
                let shown_url = if url.contains("${") {
                    url.clone()
                } else {
                    crate::transport::http::redacted_url(url)
                };
                Resolved::Http {
                    url: expanded,
                    shown_url,
                    headers,
                }
            }
        };
        Ok(ServerRef {
            spec: spec.clone(),
            resolved,
        })
    }

    /// What identifies a warm session: the server as configured and as resolved (a changed
    /// config, variable, directory or command starts a new one). The inherited environment is
    /// left out, or every shell would get a server of its own.
    pub fn session_key(&self) -> String {
        let resolved = match &self.resolved {
            Resolved::Stdio(child) => format!(
                "{}\0{:?}\0{:?}\0{:?}",
                child.command, child.args, child.env, child.cwd
            ),
            Resolved::Http { url, headers, .. } => format!("{url}\0{headers:?}"),
        };
        let text = format!("{}\0{resolved}", self.spec.identity());
        let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
        digest.as_ref()[..12]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    pub fn to_json(&self) -> Value {
        let spec = &self.spec;
        let target = match &spec.target {
            Target::Stdio {
                command,
                args,
                env,
                cwd,
            } => json!({"stdio": {"command": command, "args": args, "env": env, "cwd": cwd}}),
            Target::Http { url, headers } => json!({"http": {"url": url, "headers": headers}}),
        };
        let resolved = match &self.resolved {
            Resolved::Stdio(child) => json!({"stdio": {
                "command": child.command, "args": child.args, "env": child.env,
                "cwd": child.cwd, "max_message": child.max_message,
                "base_env": child.base_env,
            }}),
            Resolved::Http {
                url,
                shown_url,
                headers,
            } => json!({"http": {"url": url, "shown_url": shown_url, "headers": headers}}),
        };
        json!({
            "name": spec.name,
            "target": target,
            "timeout_ms": spec.timeout.map(|t| t.as_millis() as u64),
            "max_message": spec.max_message,
            "include_tools": spec.include_tools,
            "exclude_tools": spec.exclude_tools,
            "idle_timeout_ms": spec.idle_timeout.map(|t| t.as_millis() as u64),
            "origin": spec.origin,
            "invocation": spec.invocation,
            "legacy_sse": spec.legacy_sse,
            "oauth": spec.oauth.as_ref().map(|o| json!({
                "clientId": o.client_id, "clientSecret": o.client_secret, "grant": o.grant,
                "scopes": o.scopes, "callbackPort": o.callback_port,
                "clientMetadataUrl": o.client_metadata_url, "privateKey": o.private_key,
            })),
            "resolved": resolved,
        })
    }

    /// Reads a server sent by a caller; `None` when it is not one.
    pub fn from_json(value: &Value) -> Option<ServerRef> {
        let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
        let strings = |v: Option<&Value>| -> Vec<String> {
            v.and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        let map = |v: Option<&Value>| -> BTreeMap<String, String> {
            v.and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                        .collect()
                })
                .unwrap_or_default()
        };
        let millis = |key: &str| {
            value
                .get(key)
                .and_then(Value::as_u64)
                .map(Duration::from_millis)
        };
        let target_value = value.get("target")?;
        let target = if let Some(stdio) = target_value.get("stdio") {
            Target::Stdio {
                command: text(stdio, "command")?,
                args: strings(stdio.get("args")),
                env: map(stdio.get("env")),
                cwd: text(stdio, "cwd"),
            }
        } else {
            let http = target_value.get("http")?;
            Target::Http {
                url: text(http, "url")?,
                headers: map(http.get("headers")),
            }
        };
        let max_message = value.get("max_message").and_then(Value::as_u64)? as usize;
        let resolved_value = value.get("resolved")?;
        let resolved = if let Some(stdio) = resolved_value.get("stdio") {
            let base_env = stdio
                .get("base_env")
                .and_then(Value::as_array)
                .map(|pairs| {
                    pairs
                        .iter()
                        .filter_map(|pair| {
                            let pair = pair.as_array()?;
                            Some((
                                pair.first()?.as_str()?.to_string(),
                                pair.get(1)?.as_str()?.to_string(),
                            ))
                        })
                        .collect()
                });
            Resolved::Stdio(ChildSpec {
                command: text(stdio, "command")?,
                args: strings(stdio.get("args")),
                env: map(stdio.get("env")),
                cwd: text(stdio, "cwd").map(PathBuf::from),
                max_message,
                base_env,
                guarded: true,
            })
        } else {
            let http = resolved_value.get("http")?;
            Resolved::Http {
                url: text(http, "url")?,
                shown_url: text(http, "shown_url")?,
                headers: map(http.get("headers")),
            }
        };
        let name = text(value, "name")?;
        let spec = ServerSpec {
            invocation: text(value, "invocation").unwrap_or_else(|| format!("ferry {name}")),
            origin: text(value, "origin").unwrap_or_default(),
            name,
            target,
            timeout: millis("timeout_ms"),
            max_tokens: None,
            max_message,
            include_tools: strings(value.get("include_tools")),
            exclude_tools: strings(value.get("exclude_tools")),
            keep_alive: true,
            idle_timeout: millis("idle_timeout_ms"),
            project: None,
            oauth: value
                .get("oauth")
                .and_then(|o| crate::transport::oauth::OAuthConfig::from_value(o).ok()),
            legacy_sse: value.get("legacy_sse").and_then(Value::as_bool) == Some(true),
        };
        Some(ServerRef { spec, resolved })
    }
}

fn kind_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::ToolError => "tool",
        ErrorKind::Output => "output",
        ErrorKind::Usage => "usage",
        ErrorKind::Server => "server",
        ErrorKind::Timeout => "timeout",
        ErrorKind::Auth => "auth",
        ErrorKind::Interrupted => "interrupted",
        ErrorKind::ClosedPipe => "closed_pipe",
    }
}

/// An error as it crosses the socket: every part the caller prints.
pub fn error_to_json(error: &Error) -> Value {
    json!({
        "kind": kind_name(error.kind),
        "message": error.message,
        "hint": error.hint,
        "detail": error.detail,
    })
}

pub fn error_from_json(value: &Value) -> Error {
    let kind = match value.get("kind").and_then(Value::as_str) {
        Some("tool") => ErrorKind::ToolError,
        Some("output") => ErrorKind::Output,
        Some("usage") => ErrorKind::Usage,
        Some("timeout") => ErrorKind::Timeout,
        Some("auth") => ErrorKind::Auth,
        Some("interrupted") => ErrorKind::Interrupted,
        Some("closed_pipe") => ErrorKind::ClosedPipe,
        _ => ErrorKind::Server,
    };
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
    Error {
        kind,
        message: text("message").unwrap_or_else(|| "the daemon reported an error".into()),
        hint: text("hint"),
        detail: text("detail"),
    }
}

/// An object with one key.
pub fn tagged(key: &str, value: Value) -> Value {
    let mut map = Map::new();
    map.insert(key.into(), value);
    Value::Object(map)
}
