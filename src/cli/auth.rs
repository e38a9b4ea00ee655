//! `ferry auth SERVER [--paste]`, `ferry auth --status [SERVER]`, `ferry auth --logout SERVER`:
//! signing in to remote servers that need OAuth. The URL to open is always printed (and opened
//! with `$BROWSER` or the platform's opener); `--paste` is for remote shells, where the
//! browser runs elsewhere and its final address is pasted back.

use super::config::load_registry;
use super::terminal::{emit, warn};
use crate::auth::{self, Browser, Challenge};
use crate::client::config::{ServerSpec, Target};
use crate::render::text::escape_line;
use crate::signals::block_on_interruptible;
use crate::{Error, Outcome, Result};
use clap::ArgMatches;
use serde_json::json;
use std::fmt::Write;

/// The server named on the command line: a configured name or a URL, over HTTP.
fn http_server(word: &str) -> Result<(ServerSpec, String)> {
    let spec = if word.contains("://") {
        ServerSpec::ad_hoc(word)?
    } else {
        let registry = load_registry()?;
        registry
            .get(word)
            .cloned()
            .ok_or_else(|| super::config::unknown_server(word, &registry, None))?
    };
    match &spec.target {
        Target::Http { .. } => {
            let (url, _) = spec.http_target()?;
            Ok((spec, url))
        }
        Target::Stdio { .. } => Err(Error::usage(format!(
            "{} is started as a command; only servers reached by URL sign in",
            spec.name
        ))
        .with_hint("a command's credentials go in its \"env\"")),
    }
}

pub fn auth(matches: &ArgMatches) -> Result<Outcome> {
    let server = matches.get_one::<String>("server");
    if matches.get_flag("status") {
        return status(server.map(String::as_str));
    }
    let Some(server) = server else {
        return Err(Error::usage("ferry auth needs a server")
            .with_hint("ferry auth NAME (or a URL); ferry auth --status lists sign-ins"));
    };
    let (spec, url) = http_server(server)?;
    if matches.get_flag("logout") {
        let text = if auth::forget(&url) {
            format!("signed out of {}\n", spec.name)
        } else {
            format!("{} had no sign-in\n", spec.name)
        };
        emit(&text)?;
        return Ok(Outcome::Success);
    }
    let browser = if matches.get_flag("paste") {
        Browser::Paste
    } else {
        Browser::Open { port: None }
    };
    let config = spec.sign_in()?.config.unwrap_or_default();
    block_on_interruptible(async move {
        let challenge = match probe(&spec, &url).await? {
            Some(challenge) => challenge,
            None => match auth::remembered(&url) {
                Some(challenge) => challenge,
                None => {
                    emit(&format!("{} does not ask for sign-in\n", spec.name))?;
                    return Ok(Outcome::Success);
                }
            },
        };
        let shown = spec.name.clone();
        let stored = auth::sign_in(&url, &shown, &challenge, &config, browser, &|text| {
            text.lines().for_each(warn)
        })
        .await?;
        let scope = stored
            .scope
            .as_deref()
            .map(|s| format!(" (scope: {})", escape_line(s)))
            .unwrap_or_default();
        emit(&format!("signed in to {}{scope}\n", spec.name))?;
        Ok(Outcome::Success)
    })
}

/// Asks the server once without a token: its challenge if it refuses (401/403).
async fn probe(spec: &ServerSpec, url: &str) -> Result<Option<Challenge>> {
    let (_, headers) = spec.http_target()?;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .map_err(|e| Error::server(format!("could not set up HTTP: {e}")))?;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": crate::protocol::HANDSHAKE_VERSION, "capabilities": {},
        "clientInfo": crate::client::session::client_info()}});
    let mut request = client
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json");
    for (name, value) in &headers {
        request = request.header(name, value);
    }
    let response = request
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| Error::server(format!("{} could not be reached: {e}", spec.name)))?;
    let status = response.status().as_u16();
    if status != 401 && status != 403 {
        return Ok(None);
    }
    Ok(Some(crate::transport::http::challenge_of(&response)))
}

/// `ferry auth --status`: each HTTP server's sign-in, never its token.
fn status(only: Option<&str>) -> Result<Outcome> {
    let registry = load_registry()?;
    let mut out = String::new();
    let servers: Vec<ServerSpec> = match only {
        Some(word) => vec![http_server(word)?.0],
        None => registry
            .servers
            .iter()
            .filter(|s| matches!(s.target, Target::Http { .. }))
            .cloned()
            .collect(),
    };
    for spec in servers {
        let Ok((url, headers)) = spec.http_target() else {
            continue;
        };
        let line = match auth::load(&url) {
            // A server given its credentials in the config needs no sign-in: not "not signed in".
            None if !headers.is_empty() => {
                let names: Vec<String> = headers
                    .iter()
                    .map(|(name, _)| escape_line(name).into_owned())
                    .collect();
                format!(
                    "no sign-in; sends the configured header{} {}",
                    if names.len() == 1 { "" } else { "s" },
                    names.join(", ")
                )
            }
            None => "not signed in".to_string(),
            Some(stored) => {
                let left = stored.expires_at.saturating_sub(
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_secs()),
                );
                let expiry = match (stored.expires_at, left) {
                    (0, _) => "no expiry given".to_string(),
                    (_, 0) => "expired".to_string(),
                    (_, s) => format!("expires in {}m", s.div_ceil(60)),
                };
                let renew = if stored.refresh_token.is_some() {
                    ", renewable"
                } else {
                    ""
                };
                let bound = if stored.dpop_key.is_some() {
                    ", DPoP-bound"
                } else {
                    ""
                };
                format!(
                    "signed in at {} ({expiry}{renew}{bound}){}",
                    escape_line(&stored.issuer),
                    stored
                        .scope
                        .map(|s| format!(", scope: {}", escape_line(&s)))
                        .unwrap_or_default()
                )
            }
        };
        let _ = writeln!(out, "{}  {line}", spec.name);
    }
    if out.is_empty() {
        out.push_str("no servers reached by URL are configured\n");
    }
    emit(&out)?;
    Ok(Outcome::Success)
}
