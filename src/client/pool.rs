//! The warm pool: one open session per server as a call would start it, shared by every call
//! to it, stopped after its idle time, opened again when its server has died.
//!
//! A session is keyed by everything that decides what the server is: its config as written
//! and as resolved (variables expanded, command found, start directory: the project root, so
//! every sub-directory of a repository shares it), and the variables of its environment that
//! can change what it does ([`keyed`]): a setting or one its config names, not one set per
//! call or by the terminal. A later call from a shell with another `AWS_PROFILE` or token gets
//! a server of its own, as a cold call would; `REQ_ID=$RANDOM` or another pane does not.

use super::keyed;
use crate::client::cache::View;
use crate::client::catalog::{self, Listing};
use crate::client::config::{Environment, ServerSpec, Target};
use crate::client::handler::{declared_capabilities, ClientHandler, Unattended};
use crate::client::session::{Era, RequestContext, Session, SessionOptions};
use crate::transport::http::HttpConnection;
use crate::transport::stdio::{ChildSpec, StdioChild};
use crate::transport::Transport;
use crate::Result;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a server is kept without calls unless its config says (`idleTimeout`).
pub const DEFAULT_IDLE: Duration = Duration::from_secs(600);

/// How the daemon reaches a server, resolved for one caller.
#[derive(Debug, Clone)]
pub enum Resolved {
    Stdio(ChildSpec),
    Http {
        url: String,
        shown_url: String,
        headers: BTreeMap<String, String>,
        /// The `"oauth"` block with its secret expanded from the caller's environment.
        oauth: Option<crate::auth::OAuthConfig>,
    },
}

/// A server as one caller would start it.
#[derive(Debug, Clone)]
pub struct ServerRef {
    pub spec: ServerSpec,
    pub resolved: Resolved,
    /// The era the caller pins (`FERRY_PROTOCOL_VERSION`), if it does.
    pub pinned_era: Option<Era>,
    /// Whether the session declares elicitation: its callers can answer it (a person at
    /// the terminal, or `FERRY_ELICIT=defaults`), as a cold call's would declare.
    pub elicitation: bool,
    /// Whether the session declares sampling: its callers pass the question on to a model
    /// (the proxy, whose host answers).
    pub sampling: bool,
}

impl ServerRef {
    /// Resolves a server the way a cold call in this process would start it.
    pub fn resolve(spec: &ServerSpec) -> Result<ServerRef> {
        ServerRef::resolve_in(spec, &Environment::current())
    }

    /// Resolves a server the way a cold call in `env` (a caller's environment and directory)
    /// would start it: a project server must be trusted, `${VAR}`s come from `env`, and a
    /// command server starts in the caller's directory with the caller's environment.
    pub fn resolve_in(spec: &ServerSpec, env: &Environment) -> Result<ServerRef> {
        spec.check_trusted()?;
        let resolved = match &spec.target {
            Target::Stdio { .. } => {
                let mut child = spec.child_spec_in(env)?;
                if child.cwd.is_none() {
                    child.cwd = env.cwd.clone();
                }
                child.base_env = Some(env.vars.clone().into_iter().collect());
                child.guarded = true;
                Resolved::Stdio(child)
            }
            Target::Http { .. } => {
                let (url, headers) = spec.http_target_in(env)?;
                Resolved::Http {
                    url,
                    shown_url: spec.shown_url(),
                    headers,
                    oauth: spec.oauth_in(env)?,
                }
            }
        };
        Ok(ServerRef {
            spec: spec.clone(),
            resolved,
            pinned_era: catalog::pinned_era(|name| env.var(name).map(str::to_string)),
            elicitation: false,
            sampling: false,
        })
    }

    /// What identifies a warm session: the server as configured and as resolved (its start
    /// directory: the project root, not the caller's sub-directory), the environment it starts
    /// with (only the variables that key it: [`keyed::keys_server`]), a pinned era and the
    /// capabilities it declares.
    pub fn session_key(&self) -> String {
        let mut digest = ring::digest::Context::new(&ring::digest::SHA256);
        // Each part with its length before it, so that no two different servers read alike.
        let mut part = |text: &str| {
            digest.update(&(text.len() as u64).to_le_bytes());
            digest.update(text.as_bytes());
        };
        let config = self.spec.identity();
        part(&config);
        match &self.resolved {
            Resolved::Stdio(child) => {
                let inherited: Vec<&(String, String)> = child
                    .base_env
                    .iter()
                    .flatten()
                    .filter(|(name, _)| keyed::keys_server(name, &config))
                    .collect();
                part("stdio");
                part(&child.command);
                part(&format!("{:?}", child.cwd));
                part(&format!(
                    "{} {} {}",
                    child.args.len(),
                    child.env.len(),
                    inherited.len()
                ));
                child.args.iter().for_each(|a| part(a));
                for (name, value) in child
                    .env
                    .iter()
                    .chain(inherited.into_iter().map(|(k, v)| (k, v)))
                {
                    part(name);
                    part(value);
                }
            }
            Resolved::Http {
                url,
                headers,
                oauth,
                ..
            } => {
                part("http");
                part(url);
                part(&headers.len().to_string());
                for (name, value) in headers {
                    part(name);
                    part(value);
                }
                part(&format!("{oauth:?}"));
            }
        }
        part(&format!("{:?}", self.pinned_era));
        part(if self.elicitation { "elicits" } else { "" });
        part(if self.sampling { "samples" } else { "" });
        digest.finish().as_ref()[..12]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// What can set two sessions of one server apart, by name, for `ferry daemon status`: the
    /// variables that key it (values compared, never shown), its config, era and capabilities.
    fn traits(&self) -> BTreeMap<String, String> {
        let mut traits = BTreeMap::new();
        let config = self.spec.identity();
        traits.insert("config".to_string(), config.clone());
        if let Resolved::Stdio(child) = &self.resolved {
            traits.insert("directory".into(), format!("{:?}", child.cwd));
            let inherited = child.base_env.iter().flatten().map(|(k, v)| (k, v));
            for (name, value) in inherited.chain(child.env.iter()) {
                if keyed::keys_server(name, &config) {
                    traits.insert(format!("${name}"), value.clone());
                }
            }
        }
        traits.insert("era".into(), format!("{:?}", self.pinned_era));
        if self.elicitation {
            traits.insert("elicitation".into(), String::new());
        }
        if self.sampling {
            traits.insert("sampling".into(), String::new());
        }
        traits
    }

    /// Builds the transport this server is reached by (again, for a restart).
    fn connect(&self) -> Result<Transport> {
        let spec = &self.spec;
        match &self.resolved {
            Resolved::Stdio(child) => StdioChild::spawn(child, &crate::paths::log_file(&spec.name)),
            Resolved::Http {
                url,
                shown_url,
                headers,
                oauth,
            } => HttpConnection::connect(
                url,
                shown_url,
                headers.clone(),
                spec.max_message,
                crate::transport::http::SignIn::new(
                    spec.invocation.replacen("ferry ", "ferry auth ", 1),
                    oauth.clone(),
                ),
                spec.legacy_sse,
            ),
        }
    }
}

/// A warm session's own handler: it declares what its callers can answer, and answers what
/// a server asks outside any call for nobody in particular.
struct SessionDefault {
    unattended: Unattended,
    elicitation: bool,
    sampling: bool,
}

impl ClientHandler for SessionDefault {
    fn capabilities(&self) -> Value {
        declared_capabilities(self.elicitation, self.sampling)
    }

    fn answer<'a>(
        &'a self,
        method: &'a str,
        params: &'a Value,
    ) -> crate::protocol::BoxFuture<
        'a,
        std::result::Result<Value, crate::client::handler::ClientRequestError>,
    > {
        self.unattended.answer(method, params)
    }
}

/// One warm server.
pub struct Warm {
    pub server: ServerRef,
    pub session: Arc<Session>,
    pub started: Instant,
    pub last_used: Instant,
    pub in_flight: usize,
    pub calls: u64,
    /// Held by each call once the server has asked its client something (roots,
    /// elicitation): such questions can then be tied to the one caller in flight.
    one_at_a_time: Arc<tokio::sync::Mutex<()>>,
    /// A detached task lives here: the server is not stopped as idle before then.
    kept_until: Option<Instant>,
}

impl Warm {
    fn idle_limit(&self) -> Duration {
        self.server.spec.idle_timeout.unwrap_or(DEFAULT_IDLE)
    }

    /// When the server may be stopped as idle, if no call comes first.
    fn idle_at(&self) -> Instant {
        let idle = self.last_used + self.idle_limit();
        self.kept_until.map_or(idle, |kept| kept.max(idle))
    }
}

/// A warm server in `ferry daemon status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerStatus {
    pub name: String,
    /// The server's config identity (`ServerSpec::identity`), for the server list's marks.
    pub identity: String,
    pub pid: Option<u32>,
    pub alive: bool,
    pub idle_ms: u64,
    pub up_ms: u64,
    pub idle_limit_ms: u64,
    pub calls: u64,
    pub in_flight: usize,
    pub transport: String,
    /// The resident memory of its process group, in KiB.
    pub rss_kb: Option<u64>,
    /// Where a stdio server was started (its project root), if ferry knows.
    #[serde(default)]
    pub dir: Option<String>,
    /// What sets this session apart from the other warm sessions of the same server: the
    /// names of the variables whose values differ (never the values), the capabilities.
    #[serde(default)]
    pub apart: Vec<String>,
    /// Started from `--cmd` on a command line, not from the config.
    #[serde(default)]
    pub command_line: bool,
}

/// Every warm server, by session key. Opening is serialised per key, so two racing first
/// calls start one server.
#[derive(Default)]
pub struct Pool {
    warm: Mutex<HashMap<String, Warm>>,
    opening: tokio::sync::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Cached tools lists as parsed, by cache file, with the file's stamp when read.
    listings: Mutex<HashMap<PathBuf, (FileStamp, Arc<Listing>)>>,
    /// The session each detached task was created in, by task id: a task lives there (a
    /// stdio server's process, a handshake session), so `--task ID` must reach that session
    /// even from a shell whose environment would key another one.
    tasks: Mutex<HashMap<String, String>>,
}

/// How many detached tasks the pool remembers the sessions of.
const TASKS_KEPT: usize = 10_000;
/// The longest a detached task keeps its server from being stopped as idle.
const TASK_KEEP_MAX: Duration = Duration::from_secs(24 * 60 * 60);

/// What tells one version of a file from another: the cache is replaced by renames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    inode: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

/// How many servers' listings the pool keeps parsed.
const LISTINGS_KEPT: usize = 64;

/// A call under way on a warm session; its end is marked when this is dropped, however the
/// call ends (an answer, an error, or a caller that hung up and dropped it).
pub struct Busy<'a> {
    pool: &'a Pool,
    key: String,
    _turn: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        if let Some(warm) = self.pool.lock().get_mut(&self.key) {
            warm.in_flight = warm.in_flight.saturating_sub(1);
            // A call that could not reach the server is no use of it: a server that keeps
            // failing is stopped after its idle time, however often it is called.
            if !warm.session.is_failing() {
                warm.last_used = Instant::now();
            }
        }
    }
}

impl Pool {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Warm>> {
        self.warm.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A server's cached tools list as listed to a client declaring `view`, parsed once per
    /// version of its cache file: a call costs a stat, not a read and a parse.
    pub fn listing(&self, spec: &ServerSpec, view: &View) -> Option<Arc<Listing>> {
        use std::os::unix::fs::MetadataExt;
        let path = crate::client::cache::path_in(spec, view);
        let mut listings = self.listings.lock().unwrap_or_else(|e| e.into_inner());
        let Ok(meta) = std::fs::metadata(&path) else {
            listings.remove(&path);
            return None;
        };
        let stamp = FileStamp {
            inode: meta.ino(),
            len: meta.len(),
            modified: meta.modified().ok(),
        };
        if let Some((known, listing)) = listings.get(&path) {
            if *known == stamp {
                return Some(listing.clone());
            }
        }
        let listing = Arc::new(Listing::load_in(spec, view)?);
        if listings.len() >= LISTINGS_KEPT {
            listings.clear();
        }
        listings.insert(path, (stamp, listing.clone()));
        Some(listing)
    }

    /// The live session for a server, opened if there is none (or its server died).
    pub async fn session(&self, server: &ServerRef) -> Result<Arc<Session>> {
        self.session_keyed(server, server.session_key()).await
    }

    async fn session_keyed(&self, server: &ServerRef, key: String) -> Result<Arc<Session>> {
        if let Some(session) = self.live(&key) {
            return Ok(session);
        }
        let gate = {
            let mut opening = self.opening.lock().await;
            opening.entry(key.clone()).or_default().clone()
        };
        let _opening = gate.lock().await;
        if let Some(session) = self.live(&key) {
            return Ok(session);
        }
        // A dead session is dropped now: its server is gone, its group is stopped.
        let dead = self.lock().remove(&key);
        if let Some(dead) = dead {
            dead.session.shutdown().await;
        }
        let spec = &server.spec;
        let root = match &server.resolved {
            Resolved::Stdio(child) => child.cwd.clone(),
            Resolved::Http { .. } => None,
        };
        // Server requests outside any call (rare) are answered for nobody in particular;
        // those during a call go to its caller.
        let handler: Arc<dyn ClientHandler> = Arc::new(SessionDefault {
            unattended: Unattended { root },
            elicitation: server.elicitation,
            sampling: server.sampling,
        });
        let options = SessionOptions {
            timeout: catalog::timeout_for(spec, None),
            known_era: server
                .pinned_era
                .clone()
                .or_else(|| catalog::cached_era(spec)),
            handler,
            reconnect: Some({
                let server = server.clone();
                Arc::new(move || server.connect())
            }),
        };
        tracing::debug!(server = %spec.name, key = %key, "daemon: opening a warm session");
        // The opening runs on its own: a caller that hangs up meanwhile leaves a server that
        // finishes starting and stays warm (or, failing, is stopped), never one half-started.
        let opening = {
            let server = server.clone();
            tokio::spawn(
                tracing::instrument::WithSubscriber::with_current_subscriber(async move {
                    let transport = server.connect()?;
                    Session::open_on(&server.spec, transport, options)
                        .await
                        .map(Arc::new)
                }),
            )
        };
        let session = opening
            .await
            .map_err(|e| crate::Error::server(format!("{}'s start failed: {e}", spec.name)))??;
        let now = Instant::now();
        self.lock().insert(
            key,
            Warm {
                server: server.clone(),
                session: session.clone(),
                started: now,
                last_used: now,
                in_flight: 0,
                calls: 0,
                one_at_a_time: Arc::default(),
                kept_until: None,
            },
        );
        Ok(session)
    }

    fn live(&self, key: &str) -> Option<Arc<Session>> {
        self.lock()
            .get(key)
            .filter(|w| w.session.is_alive())
            .map(|w| w.session.clone())
    }

    /// Starts a call on a server's warm session (opening it if needed): the session, and the
    /// mark of the call under way. Once the server has asked its client anything, calls take
    /// turns, so that each question is answered for the one caller it can belong to.
    pub async fn begin(&self, server: &ServerRef) -> Result<(Arc<Session>, Busy<'_>)> {
        self.begin_keyed(server, server.session_key()).await
    }

    /// Remembers that a task was created in `server`'s session and left running there, and
    /// keeps the server from being stopped as idle for the task's `ttl` (its lifetime on the
    /// server; at most a day, and no less than the idle time).
    pub fn remember_task(&self, server: &ServerRef, id: &str, ttl: Option<Duration>) {
        let key = server.session_key();
        if let Some(warm) = self.lock().get_mut(&key) {
            let until = Instant::now() + ttl.unwrap_or(TASK_KEEP_MAX).min(TASK_KEEP_MAX);
            warm.kept_until = Some(warm.kept_until.map_or(until, |kept| kept.max(until)));
        }
        let mut tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        if tasks.len() >= TASKS_KEPT {
            tasks.clear();
        }
        tasks.insert(id.to_string(), key);
    }

    /// As [`Pool::begin`], on the session that holds task `id` when it is still warm and is
    /// the same configured server (its caller's environment may differ from this caller's);
    /// else on `server`'s own.
    pub async fn begin_for_task(
        &self,
        server: &ServerRef,
        id: &str,
    ) -> Result<(Arc<Session>, Busy<'_>)> {
        let remembered = self
            .tasks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned();
        // The holder's own server, so that a holder that died meanwhile is started again as
        // it was, under its own key.
        let holder = remembered.and_then(|key| {
            let warm = self.lock();
            let warm = warm.get(&key).filter(|warm| {
                warm.session.is_alive() && warm.server.spec.identity() == server.spec.identity()
            })?;
            Some((key, warm.server.clone()))
        });
        match holder {
            Some((key, holder)) => self.begin_keyed(&holder, key).await,
            None => self.begin(server).await,
        }
    }

    async fn begin_keyed(
        &self,
        server: &ServerRef,
        key: String,
    ) -> Result<(Arc<Session>, Busy<'_>)> {
        let session = self.session_keyed(server, key.clone()).await?;
        let turns = self
            .lock()
            .get(&key)
            .map(|w| w.one_at_a_time.clone())
            .unwrap_or_default();
        let turn = if session.asks_client() {
            Some(turns.lock_owned().await)
        } else {
            None
        };
        if let Some(warm) = self.lock().get_mut(&key) {
            // The idle time counts from the end of the last call that reached the server
            // (a call under way keeps it from being stopped).
            warm.in_flight += 1;
            warm.calls += 1;
        }
        let busy = Busy {
            pool: self,
            key,
            _turn: turn,
        };
        Ok((session, busy))
    }

    /// After a call: tools that changed are listed again, after the answer is on its way
    /// and off the path of any call.
    pub fn after_call(&self, server: &ServerRef, session: &Arc<Session>) {
        if session.take_tools_changed() {
            let spec = server.spec.clone();
            let session = session.clone();
            tokio::spawn(async move {
                if catalog::refresh_tools(&spec, &session).await.is_err() {
                    crate::client::cache::CacheEntry::mark_stale(&spec);
                }
            });
        }
    }

    /// Sends one request through the warm session, with the caller's handler.
    pub async fn request(
        &self,
        server: &ServerRef,
        method: &str,
        params: Value,
        context: &RequestContext,
    ) -> Result<Value> {
        let (session, busy) = self.begin(server).await?;
        let result = session.request_with(method, params, context).await;
        drop(busy);
        self.after_call(server, &session);
        result
    }

    /// Stops the servers idle past their limit and those that died; returns how many remain.
    pub async fn reap(&self) -> usize {
        let now = Instant::now();
        let stale: Vec<Warm> = {
            let mut warm = self.lock();
            let keys: Vec<String> = warm
                .iter()
                .filter(|(_, w)| !w.session.is_alive() || (w.in_flight == 0 && now >= w.idle_at()))
                .map(|(k, _)| k.clone())
                .collect();
            keys.iter().filter_map(|k| warm.remove(k)).collect()
        };
        for warm in stale {
            tracing::debug!(server = %warm.server.spec.name, "daemon: stopping an idle server");
            warm.session.shutdown().await;
        }
        self.lock().len()
    }

    /// The earliest moment a server may become idle-stoppable (for the reaper's sleep).
    pub fn next_deadline(&self) -> Option<Instant> {
        self.lock()
            .values()
            .filter(|w| w.in_flight == 0)
            .map(Warm::idle_at)
            .min()
    }

    /// Stops every server, all at once.
    pub async fn stop_all(&self) -> usize {
        let all: Vec<Warm> = self.lock().drain().map(|(_, w)| w).collect();
        let count = all.len();
        let stops: Vec<_> = all
            .into_iter()
            .map(|w| tokio::spawn(async move { w.session.shutdown().await }))
            .collect();
        for stop in stops {
            let _ = stop.await;
        }
        count
    }

    /// What `ferry daemon status` shows of each server, by name. Memory is measured after
    /// the pool is let go, with one pass over /proc for all servers.
    pub fn status(&self) -> Vec<ServerStatus> {
        let now = Instant::now();
        let mut rows: Vec<ServerStatus> = self
            .lock()
            .values()
            .map(|w| ServerStatus {
                name: w.server.spec.name.clone(),
                identity: w.server.spec.identity(),
                pid: w.session.pid(),
                alive: w.session.is_alive(),
                idle_ms: now.duration_since(w.last_used).as_millis() as u64,
                up_ms: now.duration_since(w.started).as_millis() as u64,
                // A detached task's keep counts as idle time allowed.
                idle_limit_ms: w.idle_at().duration_since(w.last_used).as_millis() as u64,
                calls: w.calls,
                in_flight: w.in_flight,
                transport: w.server.spec.transport_name().to_string(),
                rss_kb: None,
                dir: match &w.server.resolved {
                    Resolved::Stdio(child) => child.cwd.as_ref().map(|d| d.display().to_string()),
                    // A server reached by URL is told by its URL (secrets left out).
                    Resolved::Http { shown_url, .. } => Some(shown_url.clone()),
                },
                apart: Vec::new(),
                command_line: w.server.spec.invocation.starts_with("ferry --cmd "),
            })
            .collect();
        let traits: Vec<(String, BTreeMap<String, String>)> = self
            .lock()
            .values()
            .map(|w| (w.server.spec.name.clone(), w.server.traits()))
            .collect();
        for (row, (name, mine)) in rows.iter_mut().zip(&traits) {
            let mut apart: Vec<String> = traits
                .iter()
                .filter(|(other_name, theirs)| other_name == name && theirs != mine)
                .flat_map(|(_, theirs)| {
                    mine.keys()
                        .chain(theirs.keys())
                        .filter(|k| mine.get(*k) != theirs.get(*k))
                        .cloned()
                        .collect::<Vec<_>>()
                })
                .collect();
            apart.sort();
            apart.dedup();
            row.apart = apart;
        }
        let groups: Vec<u32> = rows.iter().filter_map(|row| row.pid).collect();
        let memory = group_rss_kb(&groups);
        for row in &mut rows {
            row.rss_kb = row.pid.map(|g| memory.get(&g).copied().unwrap_or(0));
        }
        rows.sort_by(|a, b| a.name.cmp(&b.name));
        rows
    }
}

/// The resident memory of these process groups (a server's guard, the server and its
/// children share one), in KiB, from one pass over /proc.
pub fn group_rss_kb(wanted: &[u32]) -> HashMap<u32, u64> {
    let mut groups: HashMap<u32, u64> = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return groups;
    };
    for pid in entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
    {
        if let Some(group) = process_group(pid).filter(|g| wanted.contains(g)) {
            *groups.entry(group).or_default() += rss_kb(pid);
        }
    }
    groups
}

/// A process's group id, from /proc.
pub fn process_group(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(2)?.parse().ok()
}

/// A process's resident memory in KiB.
pub fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)], cwd: &str) -> Environment {
        Environment {
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            cwd: Some(cwd.into()),
        }
    }

    #[test]
    fn a_sub_directory_of_a_repository_is_keyed_by_its_root() {
        let repo = std::env::temp_dir().join(format!("ferry-pool-{}", std::process::id()));
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("a/b")).unwrap();
        let spec = ServerSpec::ad_hoc("/bin/cat").unwrap();
        let key = |dir: &std::path::Path| {
            let e = env(&[("PATH", "/bin")], dir.to_str().unwrap());
            ServerRef::resolve_in(&spec, &e).unwrap().session_key()
        };
        assert_eq!(key(&repo.join("a/b")), key(&repo));
        assert_eq!(key(&repo.join("a")), key(&repo));
        let _ = std::fs::remove_dir_all(&repo);
    }

    #[test]
    fn sessions_are_keyed_on_the_environment_a_server_gets_not_on_the_shell() {
        let spec = ServerSpec::ad_hoc("/bin/cat").unwrap();
        let key = |e: &Environment| ServerRef::resolve_in(&spec, e).unwrap().session_key();
        let base = key(&env(&[("PATH", "/bin"), ("AWS_PROFILE", "a")], "/tmp"));
        let moved = env(
            &[
                ("PATH", "/bin"),
                ("AWS_PROFILE", "a"),
                ("PWD", "/x"),
                ("OLDPWD", "/y"),
                ("SHLVL", "3"),
                ("_", "/usr/bin/ferry"),
            ],
            "/tmp",
        );
        assert_eq!(key(&moved), base);
        assert_ne!(
            key(&env(&[("PATH", "/bin"), ("AWS_PROFILE", "b")], "/tmp")),
            base
        );
        assert_ne!(
            key(&env(&[("PATH", "/bin"), ("AWS_PROFILE", "a")], "/")),
            base
        );
        // Another pane, window or terminal tab is the same server.
        let pane = env(
            &[
                ("PATH", "/bin"),
                ("AWS_PROFILE", "a"),
                ("TMUX_PANE", "%4"),
                ("WINDOWID", "12"),
                ("TERM_SESSION_ID", "w0t1"),
                ("KITTY_WINDOW_ID", "3"),
            ],
            "/tmp",
        );
        assert_eq!(key(&pane), base);
        let pinned = env(
            &[
                ("PATH", "/bin"),
                ("AWS_PROFILE", "a"),
                ("FERRY_PROTOCOL_VERSION", "2025-06-18"),
            ],
            "/tmp",
        );
        assert_ne!(key(&pinned), base);
    }
}
