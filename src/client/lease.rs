//! One command's hold on a server's session, from the moment it is opened until it is ended:
//! a session of the command's own, or a turn on the daemon's warm one. The CLI holds a
//! [`Lease`] for each command that talks to a server and ends it once; a lease dropped
//! without being ended (an early error, a cancelled command) still gives a warm turn back,
//! and its own session's server is stopped by the transport.

use super::catalog;
use super::config::{Environment, ServerSpec};
use super::handler::ClientHandler;
use super::pool::{Busy, Pool, ServerRef};
use super::session::Session;
use std::sync::Arc;
use std::time::Duration;

/// Who a command runs for: what a session of its own answers a server with, and what a warm
/// one is resolved in.
pub struct Caller<'c> {
    pub handler: Arc<dyn ClientHandler>,
    pub environment: &'c Environment,
    /// Whether the caller can answer an elicitation (a person at a terminal).
    pub elicits: bool,
}

/// A session for one command (see the module's doc).
pub struct Lease<'a> {
    spec: ServerSpec,
    held: Option<Held<'a>>,
}

enum Held<'a> {
    Own(Box<Session>),
    Warm {
        server: Box<ServerRef>,
        session: Arc<Session>,
        pool: &'a Pool,
        busy: Busy<'a>,
    },
}

impl<'a> Lease<'a> {
    /// The session a command of `caller`'s uses for `spec`: a turn on the daemon's warm one
    /// when the command runs in the daemon (`pool`), else one of its own, opened within
    /// `timeout` in the era remembered for the server (`refresh`: found out anew). `task`:
    /// the warm session that holds that task, when there is one.
    pub async fn open(
        spec: &ServerSpec,
        pool: Option<&'a Pool>,
        caller: Caller<'_>,
        timeout: Option<f64>,
        refresh: bool,
        task: Option<&str>,
    ) -> crate::Result<Lease<'a>> {
        match pool {
            None => {
                let era = catalog::remembered_era(spec, refresh);
                let timeout = catalog::timeout_for(spec, timeout);
                catalog::open_session(spec, timeout, era, caller.handler)
                    .await
                    .map(|session| Lease::own(spec, session))
            }
            Some(pool) => {
                let mut server = ServerRef::resolve_in(spec, caller.environment)?;
                server.elicitation = caller.elicits;
                Lease::warm(spec, server, pool, task).await
            }
        }
    }

    /// A session the command opened for itself, closed when the lease ends.
    pub fn own(spec: &ServerSpec, session: Session) -> Lease<'a> {
        Lease {
            spec: spec.clone(),
            held: Some(Held::Own(Box::new(session))),
        }
    }

    /// A turn on the warm pool's session for `server` (the one that holds task `task`, when
    /// asked and there is one).
    pub async fn warm(
        spec: &ServerSpec,
        server: ServerRef,
        pool: &'a Pool,
        task: Option<&str>,
    ) -> crate::Result<Lease<'a>> {
        let (session, busy) = match task {
            Some(id) => pool.begin_for_task(&server, id).await?,
            None => pool.begin(&server).await?,
        };
        Ok(Lease {
            spec: spec.clone(),
            held: Some(Held::Warm {
                server: Box::new(server),
                session,
                pool,
                busy,
            }),
        })
    }

    fn held(&self) -> &Held<'a> {
        self.held
            .as_ref()
            .expect("a lease holds its session until it ends")
    }

    pub fn session(&self) -> &Session {
        match self.held() {
            Held::Own(session) => session,
            Held::Warm { session, .. } => session,
        }
    }

    /// The session's own request timeout, when it is the command's own (a warm session keeps
    /// the pool's).
    pub fn set_timeout(&self, timeout: Duration) {
        if let Held::Own(session) = self.held() {
            session.set_timeout(timeout);
        }
    }

    /// Records that a task left running lives in this session (the warm pool's), for a
    /// later `--task ID`, and keeps the session for the task's lifetime.
    pub fn remember_task(&self, id: &str, ttl: Option<Duration>) {
        if let Held::Warm { server, pool, .. } = self.held() {
            pool.remember_task(server, id, ttl);
        }
    }

    /// Ends the command's use of the session: its own is closed (after a call, once the
    /// cache is up to date), a warm one stays, its tools listed again if they changed.
    pub async fn end(mut self, after_call: bool) {
        match self.held.take() {
            Some(Held::Own(session)) if after_call => {
                catalog::close_after_call(&self.spec, *session).await
            }
            Some(Held::Own(session)) => session.close().await,
            Some(warm) => release(warm),
            None => {}
        }
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        match self.held.take() {
            // Its transport stops the server (nothing of it outlives the command).
            Some(Held::Own(session)) => drop(session),
            Some(warm) => release(warm),
            None => {}
        }
    }
}

/// Gives a warm turn back to the pool.
fn release(held: Held<'_>) {
    if let Held::Warm {
        server,
        session,
        pool,
        busy,
    } = held
    {
        drop(busy);
        pool.after_call(&server, &session);
    }
}
