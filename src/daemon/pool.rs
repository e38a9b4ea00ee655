//! The warm pool: one open session per server identity, shared by every call to it, stopped
//! after its idle time, opened again when its server has died.

use super::wire::{Resolved, ServerRef};
use crate::client::catalog;
use crate::client::handler::{ClientHandler, Unattended};
use crate::client::session::{CallContext, Session, SessionOptions};
use crate::transport::http::HttpConnection;
use crate::transport::stdio::StdioChild;
use crate::transport::Transport;
use crate::Result;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a server is kept without calls unless its config says (`idleTimeout`).
pub const DEFAULT_IDLE: Duration = Duration::from_secs(600);

/// One warm server.
pub struct Warm {
    pub server: ServerRef,
    pub session: Arc<Session>,
    pub started: Instant,
    pub last_used: Instant,
    pub in_flight: usize,
    pub calls: u64,
}

impl Warm {
    fn idle_limit(&self) -> Duration {
        self.server.spec.idle_timeout.unwrap_or(DEFAULT_IDLE)
    }
}

/// Every warm server, by session key. Opening is serialised per key, so two racing first
/// calls start one server.
#[derive(Default)]
pub struct Pool {
    warm: Mutex<HashMap<String, Warm>>,
    opening: tokio::sync::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// Builds the transport a resolved server describes (again, for a restart).
fn connect(server: &ServerRef) -> Result<Transport> {
    let spec = &server.spec;
    match &server.resolved {
        Resolved::Stdio(child) => StdioChild::spawn(child, &crate::paths::log_file(&spec.name)),
        Resolved::Http {
            url,
            shown_url,
            headers,
        } => HttpConnection::connect(
            url,
            shown_url,
            headers.clone(),
            spec.max_message,
            spec.sign_in()?,
            spec.legacy_sse,
        ),
    }
}

impl Pool {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Warm>> {
        self.warm.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The live session for a server, opened if there is none (or its server died).
    pub async fn session(&self, server: &ServerRef) -> Result<Arc<Session>> {
        let key = server.session_key();
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
        let transport = connect(server)?;
        let root = match &server.resolved {
            Resolved::Stdio(child) => child.cwd.clone(),
            Resolved::Http { .. } => None,
        };
        // Server requests outside any call (rare) are answered for nobody in particular;
        // those during a call go to its caller.
        let handler: Arc<dyn ClientHandler> = Arc::new(Unattended { root });
        let options = SessionOptions {
            timeout: catalog::timeout_for(spec, None),
            known_era: catalog::remembered_era(spec, false),
            handler,
            reconnect: Some({
                let server = server.clone();
                Arc::new(move || connect(&server))
            }),
        };
        tracing::debug!(server = %spec.name, key = %key, "daemon: opening a warm session");
        let session = Arc::new(Session::open_on(spec, transport, options).await?);
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

    /// Marks a call started on a server, for idle times and status; it ends when the guard
    /// is dropped, however the call ends (an answer, an error, or a caller that hung up and
    /// dropped the request).
    fn busy(&self, key: String) -> Busy<'_> {
        if let Some(warm) = self.lock().get_mut(&key) {
            warm.in_flight += 1;
            warm.calls += 1;
            warm.last_used = Instant::now();
        }
        Busy { pool: self, key }
    }

    /// Sends one request through the warm session, with the caller's handler.
    pub async fn request(
        &self,
        server: &ServerRef,
        method: &str,
        params: Value,
        context: &CallContext,
    ) -> Result<Value> {
        let session = self.session(server).await?;
        let busy = self.busy(server.session_key());
        let result = session.request_with(method, params, context).await;
        drop(busy);
        // Tools that changed are listed again after the answer is on its way, off the path
        // of this call.
        if session.take_tools_changed() {
            let spec = server.spec.clone();
            let session = session.clone();
            tokio::spawn(async move {
                if catalog::refresh_tools(&spec, &session).await.is_err() {
                    crate::client::cache::CacheEntry::mark_stale(&spec);
                }
            });
        }
        result
    }

    /// Stops the servers idle past their limit and those that died; returns how many remain.
    pub async fn reap(&self) -> usize {
        let now = Instant::now();
        let stale: Vec<Warm> = {
            let mut warm = self.lock();
            let keys: Vec<String> = warm
                .iter()
                .filter(|(_, w)| {
                    !w.session.is_alive()
                        || (w.in_flight == 0 && now.duration_since(w.last_used) >= w.idle_limit())
                })
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
            .map(|w| w.last_used + w.idle_limit())
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

    /// What `ferry daemon status` shows of each server. Memory is measured after the pool is
    /// let go, with one pass over /proc for all servers.
    pub fn status(&self) -> Vec<Value> {
        let now = Instant::now();
        let mut rows: Vec<(Option<u32>, Value)> = self
            .lock()
            .values()
            .map(|w| {
                let pid = w.session.pid();
                let row = json!({
                    "name": w.server.spec.name,
                    "identity": w.server.spec.identity(),
                    "pid": pid,
                    "alive": w.session.is_alive(),
                    "idle_ms": now.duration_since(w.last_used).as_millis() as u64,
                    "up_ms": now.duration_since(w.started).as_millis() as u64,
                    "idle_limit_ms": w.idle_limit().as_millis() as u64,
                    "calls": w.calls,
                    "in_flight": w.in_flight,
                    "transport": w.server.spec.transport_name(),
                });
                (pid, row)
            })
            .collect();
        let groups: Vec<u32> = rows.iter().filter_map(|(pid, _)| *pid).collect();
        let memory = group_rss_kb(&groups);
        let mut rows: Vec<Value> = rows
            .drain(..)
            .map(|(pid, mut row)| {
                row["rss_kb"] = json!(pid.map(|g| memory.get(&g).copied().unwrap_or(0)));
                row
            })
            .collect();
        rows.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
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

/// A call in flight on a warm server; its end is marked when this is dropped.
struct Busy<'a> {
    pool: &'a Pool,
    key: String,
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        if let Some(warm) = self.pool.lock().get_mut(&self.key) {
            warm.in_flight = warm.in_flight.saturating_sub(1);
            warm.last_used = Instant::now();
        }
    }
}
