//! The client workflow the CLI and the daemon share: open a session with the era remembered
//! in the cache, list the tools and keep the cache current, filter them by the server's
//! config, and name a missing tool with a "did you mean". What happens at the ends (a
//! terminal, a socket) is the caller's.

use super::cache::{CacheEntry, View};
use super::config::ServerSpec;
use super::handler::ClientHandler;
use super::session::{Era, Session, SessionOptions};
use crate::clock::now_ms;
use crate::protocol::tools::{parse_tools_owned, Tool};
use crate::words::closest;
use crate::{Error, Result};
use std::sync::Arc;
use std::time::Duration;

/// The per-request limit when neither the call nor the server's config gives one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The limit for a server's requests: the caller's, else the config's, else 60 s.
pub fn timeout_for(spec: &ServerSpec, requested: Option<f64>) -> Duration {
    requested
        .map(Duration::from_secs_f64)
        .or(spec.timeout)
        .unwrap_or(DEFAULT_TIMEOUT)
}

/// The protocol era the cache remembers for a server, unless the caller wants it found anew.
/// `FERRY_PROTOCOL_VERSION` fixes it instead (a revision: `2026-07-28` is stateless, older
/// ones shake hands), for servers whose answers to the probe cannot be trusted.
pub fn remembered_era(spec: &ServerSpec, refresh: bool) -> Option<Era> {
    if let Some(era) = pinned_era(|name| std::env::var(name).ok()) {
        return Some(era);
    }
    if refresh {
        return None;
    }
    cached_era(spec)
}

/// The era `FERRY_PROTOCOL_VERSION` pins, looked up with `var` (this process's environment,
/// or a caller's in the daemon).
pub fn pinned_era(var: impl Fn(&str) -> Option<String>) -> Option<Era> {
    let version = var("FERRY_PROTOCOL_VERSION").filter(|v| !v.is_empty())?;
    Some(if version == crate::protocol::STATELESS_VERSION {
        Era::Stateless(version)
    } else {
        Era::Handshake(version)
    })
}

/// The era the tools cache remembers for a server.
pub fn cached_era(spec: &ServerSpec) -> Option<Era> {
    CacheEntry::era_of(spec)
}

/// Opens a session with the server.
pub async fn open_session(
    spec: &ServerSpec,
    timeout: Duration,
    known_era: Option<Era>,
    handler: Arc<dyn ClientHandler>,
) -> Result<Session> {
    tracing::debug!(server = %spec.name, era = ?known_era, "opening a session");
    Session::open(
        spec,
        SessionOptions {
            timeout,
            known_era,
            handler,
            reconnect: None,
        },
    )
    .await
}

/// Lists the tools anew through `session` and stores them in the cache.
pub async fn refresh_tools(spec: &ServerSpec, session: &Session) -> Result<CacheEntry> {
    session.take_tools_changed();
    let (mut tools, mut ttl_ms) = session.list_all("tools/list", "tools").await?;
    // Some servers add tools right after the handshake and say so: list once more then.
    if session.take_tools_changed() {
        (tools, ttl_ms) = session.list_all("tools/list", "tools").await?;
    }
    let known = CacheEntry::load_in(spec, &session.view()).unwrap_or_default();
    Ok(store_listing(spec, session, tools, ttl_ms, known))
}

/// Stores a fresh tools list with what `session` knows of its server, over `known` (the
/// entry cached before).
fn store_listing(
    spec: &ServerSpec,
    session: &Session,
    tools: Vec<serde_json::Value>,
    ttl_ms: Option<u64>,
    known: CacheEntry,
) -> CacheEntry {
    // A stateless session that skipped discovery knows nothing new about the server itself.
    let fresh = session.description();
    let mut description = known.description;
    if !fresh.server_info.is_null() {
        description.server_info = fresh.server_info;
    }
    if !fresh.capabilities.is_null() {
        description.capabilities = fresh.capabilities;
    }
    if fresh.instructions.is_some() {
        description.instructions = fresh.instructions;
    }
    let entry = CacheEntry {
        tools,
        era: Some(session.era()),
        description,
        fetched_at_ms: now_ms(),
        ttl_ms,
        unprompted_changes: known.unprompted_changes,
        stale: false,
    };
    entry.store_in(spec, &session.view());
    tracing::debug!(server = %spec.name, tools = entry.tools.len(), "cache stored");
    entry
}

/// How long a cold call, its output already out, waits for a tools list it asked for.
const LIST_AFTER_CALL: Duration = Duration::from_millis(100);

/// Ends a cold call's session, after its output is out. When the server said its tools
/// changed more often than it does when nothing changed (or that is not known yet), the list
/// is asked for before the server stops, at most `LIST_AFTER_CALL`: a new list is stored, the
/// same list teaches how many notices mean nothing, and no answer marks the cache stale (calls
/// keep the cached schemas; the next listing asks the server).
pub async fn close_after_call(spec: &ServerSpec, session: Session) {
    let seen = session.tools_changes();
    session.take_tools_changed();
    if seen == 0 {
        session.close().await;
        return;
    }
    let view = session.view();
    let mut cached = CacheEntry::load_in(spec, &view).unwrap_or_default();
    let known = cached.unprompted_changes;
    if known.is_some_and(|usual| seen <= usual) {
        session.close().await;
        return;
    }
    let listed =
        tokio::time::timeout(LIST_AFTER_CALL, session.list_all("tools/list", "tools")).await;
    match listed {
        Ok(Ok((tools, _))) if cached.has_tools() && tools == cached.tools => {
            tracing::debug!(server = %spec.name, seen, "tools/list_changed: nothing changed; learnt");
            cached.unprompted_changes = Some(seen.max(known.unwrap_or(0)));
            cached.store_in(spec, &view);
        }
        Ok(Ok((tools, ttl_ms))) => {
            tracing::debug!(server = %spec.name, "tools/list_changed: new list stored");
            store_listing(spec, &session, tools, ttl_ms, cached);
        }
        _ if cached.has_tools() => {
            tracing::debug!(server = %spec.name, "tools/list_changed: cache marked stale");
            cached.stale = true;
            cached.store_in(spec, &view);
        }
        _ => {}
    }
    session.close().await;
}

/// The cached entry of the plain [`View`], if it holds a tools list still fresh enough to show.
pub fn cached(spec: &ServerSpec) -> Option<CacheEntry> {
    let entry = CacheEntry::load(spec).filter(|e| e.has_tools() && !e.is_expired());
    tracing::debug!(server = %spec.name, hit = entry.is_some(), "cache");
    entry
}

/// A server's cached tools list, read and parsed once (the daemon keeps it between calls),
/// before the server's tool filters apply.
#[derive(Debug, Default)]
pub struct Listing {
    /// The cache entry, its tools taken out.
    pub entry: CacheEntry,
    pub tools: Vec<Tool>,
    /// One per malformed entry.
    pub warnings: Vec<String>,
}

impl Listing {
    /// Parses a cache entry's tools.
    pub fn new(mut entry: CacheEntry) -> Listing {
        let (tools, warnings) = parse_tools_owned(std::mem::take(&mut entry.tools));
        Listing {
            entry,
            tools,
            warnings,
        }
    }

    /// The server's cached listing in the one stable view that review, skill, tokens and find
    /// read, if there is one.
    pub fn load_stable(spec: &ServerSpec) -> Option<Listing> {
        CacheEntry::load_stable(spec).map(Listing::new)
    }

    /// The server's cached listing as a client declaring `view` is listed it, if there is one.
    pub fn load_in(spec: &ServerSpec, view: &View) -> Option<Listing> {
        CacheEntry::load_in(spec, view).map(Listing::new)
    }

    /// The tools the server's config lets through, and the warnings (named by server).
    pub fn usable(&self, spec: &ServerSpec) -> (Vec<&Tool>, Vec<String>) {
        let warnings = self
            .warnings
            .iter()
            .map(|w| format!("{}: {w}", spec.name))
            .collect();
        let tools = self
            .tools
            .iter()
            .filter(|t| spec.allows_tool(&t.name))
            .collect();
        (tools, warnings)
    }
}

/// The server's tools, filtered by its config, with one warning per malformed entry.
pub fn usable_tools(spec: &ServerSpec, entry: CacheEntry) -> (Vec<Tool>, Vec<String>) {
    let (tools, warnings) = parse_tools_owned(entry.tools);
    let warnings = warnings
        .into_iter()
        .map(|w| format!("{}: {w}", spec.name))
        .collect();
    let tools = tools
        .into_iter()
        .filter(|t| spec.allows_tool(&t.name))
        .collect();
    (tools, warnings)
}

/// The error for a tool the server does not have, with the nearest name.
pub fn unknown_tool(spec: &ServerSpec, name: &str, tools: &[Tool]) -> Error {
    let shown = crate::render::text::escape_line(name);
    // A tool the config hides is not a typo: say which key hides it.
    if !spec.allows_tool(name) {
        let file = super::config::file_name(&spec.origin);
        let key = if spec.include_tools.is_empty()
            || spec
                .include_tools
                .iter()
                .any(|g| crate::words::glob_match(g, name))
        {
            "excluded by excludeTools"
        } else {
            "not in includeTools"
        };
        return Error::usage(format!(
            "tool {shown:?} of {} is {key} in {file}",
            spec.name
        ))
        .with_hint(format!(
            "edit {} to call it; `{}` lists the tools it allows",
            spec.origin, spec.invocation
        ));
    }
    let error = Error::usage(format!("unknown tool {shown:?} on {}", spec.name));
    match closest(name, tools.iter().map(|t| t.name.as_str())) {
        Some(best) => error.with_hint(format!(
            "did you mean `{} {best}`? `{}` lists its tools",
            spec.invocation, spec.invocation
        )),
        None => error.with_hint(format!("`{}` lists its tools", spec.invocation)),
    }
}
