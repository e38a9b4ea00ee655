//! Where the meter, `find` and `skill` get tools: configured servers (from the cache, or
//! listed now), and saved `tools/list` results.

use super::config::load_registry;
use super::terminal::warn;
use super::Globals;
use crate::client::catalog;
use crate::client::config::{Registry, ServerSpec};
use crate::client::handler::Unattended;
use crate::client::CacheEntry;
use crate::protocol::messages::ListView;
use crate::protocol::tools::{parse_tools, Tool};
use crate::signals::block_on_interruptible;
use crate::tokens::meter;
use crate::{Error, Result};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

/// One server's tools, wherever they came from.
pub struct Source {
    pub name: String,
    pub tools: Vec<Tool>,
    pub instructions: Option<String>,
    /// A server's tools checked against its pins (none for a saved file).
    pub pins: Option<crate::client::pins::Report>,
}

/// The specs named on the command line (a name or a URL), or every configured server.
pub fn specs(registry: &Registry, names: &[String]) -> Result<Vec<ServerSpec>> {
    if names.is_empty() {
        return Ok(registry.servers.clone());
    }
    names
        .iter()
        .map(|name| {
            if name.contains("://") {
                return ServerSpec::ad_hoc(name);
            }
            registry
                .get(name)
                .cloned()
                .ok_or_else(|| super::config::unknown_server(name, registry, None))
        })
        .collect()
}

/// Lists a server's tools now (and stores them in the cache).
pub fn list_now(spec: &ServerSpec, timeout: Option<f64>) -> Result<CacheEntry> {
    block_on_interruptible(async {
        // Declaring nothing: the plain view, the one the meter, `find` and `skill` read.
        let handler = Arc::new(Unattended { root: None });
        let era = catalog::remembered_era(spec, false);
        let session =
            catalog::open_session(spec, catalog::timeout_for(spec, timeout), era, handler).await?;
        let entry = catalog::refresh_tools(spec, &session).await;
        session.close().await;
        entry
    })
}

/// The tools of configured servers: from the cache, or listed now when not cached (always
/// listed now with `--refresh`). A server that cannot be listed is left out with one line,
/// `note: <left_out>: NAME: why`; only when none could be listed is it an error (the last
/// one's, the others noted).
pub fn live_sources(names: &[String], globals: &Globals, left_out: &str) -> Result<Vec<Source>> {
    let registry = load_registry()?;
    let mut sources = Vec::new();
    let mut failures = Vec::new();
    for spec in specs(&registry, names)? {
        let cached = CacheEntry::load(&spec).filter(|e| e.has_tools() && !globals.refresh);
        let entry = match cached {
            Some(entry) => Ok(entry),
            None => spec
                .check_trusted()
                .and_then(|()| list_now(&spec, globals.timeout)),
        };
        match entry {
            Ok(entry) => sources.push(source_of(&spec, entry)),
            Err(e) if e.kind == crate::ErrorKind::Interrupted => return Err(e),
            Err(e) => failures.push(named(&spec.name, e)),
        }
    }
    let last = if sources.is_empty() {
        failures.pop()
    } else {
        None
    };
    for e in &failures {
        warn(&format!("note: {left_out}: {}", e.message));
    }
    match last {
        Some(e) => Err(e),
        None => Ok(sources),
    }
}

/// An error about one server, its message naming it (`NAME: ...`) unless it already does.
pub fn named(server: &str, mut error: Error) -> Error {
    let names_it = error
        .message
        .split(|c: char| !(c.is_alphanumeric() || "-_.".contains(c)))
        .any(|word| word == server);
    if !names_it {
        error.message = format!("{server}: {}", error.message);
    }
    error
}

/// A cache entry as a source.
pub fn source_of(spec: &ServerSpec, entry: CacheEntry) -> Source {
    let instructions = entry.description.instructions.clone();
    let (tools, warnings) = catalog::usable_tools(spec, entry);
    warnings.iter().for_each(|w| warn(&format!("warning: {w}")));
    let all: Vec<&Tool> = tools.iter().collect();
    let report = crate::client::pins::observe(spec, &all, &crate::client::pins::env_var);
    report.warnings().iter().for_each(|w| warn(w));
    Source {
        name: spec.name.clone(),
        tools,
        instructions,
        pins: Some(report),
    }
}

/// A saved `tools/list` result; the server is named after the file.
pub fn file_source(path: &str) -> Result<Source> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::usage(format!("cannot read {path}: {e}"))
            .with_hint("give the path of a saved tools/list result")
    })?;
    let doc: Value = crate::transport::framing::decode(text.as_bytes()).map_err(|e| {
        Error::usage(format!("{path} is not valid JSON: {e}"))
            .with_hint("give a saved tools/list result: {\"tools\": [...]}")
    })?;
    let entries = meter::tools_from_json(&doc).ok_or_else(|| {
        Error::usage(format!("{path} holds no tools list"))
            .with_hint("give a saved tools/list result: {\"tools\": [...]}")
    })?;
    let (tools, warnings) = parse_tools(entries);
    for warning in warnings {
        warn(&format!("warning: {path}: {warning}"));
    }
    let file = Path::new(path)
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or(path);
    let name = file
        .trim_end_matches(".json")
        .trim_end_matches(".tools")
        .to_string();
    let instructions = ListView::new(&doc).instructions().map(str::to_string);
    Ok(Source {
        name,
        tools,
        instructions,
        pins: None,
    })
}
