//! The proxy's catalog: every served server's tools as the cache holds them, and where each
//! server's listing stands. A server never listed is listed once, in the background; what
//! needs its tools meanwhile waits for the listing (bounded), instead of answering as if the
//! server had none.

use crate::client::cache::View;
use crate::client::config::ServerSpec;
use crate::client::handler::declared_capabilities;
use crate::client::{catalog, CacheEntry};
use crate::tokens::find::{Document, Index};
use std::collections::HashMap;
use std::sync::RwLock;
use std::time::Duration;
use tokio::sync::watch;

/// Where a server's listing stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Listing {
    /// Its tools are known (this many usable ones).
    Listed(usize),
    /// Its tools are being listed now.
    Coming,
    /// Listing it failed; why, in one line.
    Failed(String),
}

/// The tools of every served server, and each server's listing.
pub struct Catalog {
    inner: RwLock<Inner>,
    /// The servers' names in the config's order, which the documents keep whichever
    /// listing ends first (so `--expose all` names and ranking ties never depend on timing).
    order: Vec<String>,
    /// Bumped whenever a listing ends, so that whoever waits for one looks again.
    changed: watch::Sender<u64>,
}

#[derive(Default)]
pub struct Inner {
    pub documents: Index,
    pub listings: HashMap<String, Listing>,
    /// Each listed server's `instructions`, as it last gave them.
    pub instructions: HashMap<String, String>,
    /// Each listed server's `capabilities`, as it last gave them.
    pub capabilities: HashMap<String, serde_json::Value>,
    /// Servers shown from a piped call's listing while the proxy lists them again: a server
    /// may offer more to the proxy, which declares more (server-everything's sampling and
    /// elicitation tools), so `find` and a call's name wait for that listing too.
    pub relisting: std::collections::HashSet<String>,
}

impl Catalog {
    /// The catalog of `servers` from the cache, and the servers it does not hold (now
    /// marked as coming: the caller lists them).
    pub fn load(servers: &[ServerSpec]) -> (Catalog, Vec<ServerSpec>) {
        let mut inner = Inner::default();
        let mut documents = Vec::new();
        let mut unlisted = Vec::new();
        for spec in servers {
            // The proxy's own view: it declares what its hosts may answer. Until it has listed
            // a server, the plain listing (what a piped call was listed, which declaring more
            // rarely narrows) stands in, and the server is listed again for the proxy.
            let view = View::of(&declared_capabilities(true, true));
            let own = CacheEntry::load_in(spec, &view).filter(CacheEntry::has_tools);
            if own.is_none() {
                unlisted.push(spec.clone());
            }
            let stand_in = own.is_none();
            let entry = own.or_else(|| CacheEntry::load(spec).filter(CacheEntry::has_tools));
            match entry {
                Some(entry) => {
                    if stand_in {
                        inner.relisting.insert(spec.name.clone());
                    }
                    inner.remember(spec, &entry);
                    let (tools, _) = catalog::usable_tools(spec, entry);
                    inner
                        .listings
                        .insert(spec.name.clone(), Listing::Listed(tools.len()));
                    documents.extend(tools.into_iter().map(|t| Document::new(&spec.name, t)));
                }
                None => {
                    inner.listings.insert(spec.name.clone(), Listing::Coming);
                }
            }
        }
        inner.documents = Index::new(documents).with_postings();
        let catalog = Catalog {
            inner: RwLock::new(inner),
            order: servers.iter().map(|s| s.name.clone()).collect(),
            changed: watch::channel(0).0,
        };
        (catalog, unlisted)
    }

    pub fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    /// How many listings have ended: what the catalog says changes only with it.
    pub fn generation(&self) -> u64 {
        *self.changed.borrow()
    }

    /// A server's listing arrived: its tools replace what the catalog had of it.
    pub fn add(&self, spec: &ServerSpec, entry: CacheEntry) {
        {
            let mut inner = self.write();
            inner.relisting.remove(&spec.name);
            inner.remember(spec, &entry);
            let mut documents = std::mem::take(&mut inner.documents).into_documents();
            documents.retain(|d| d.server != spec.name);
            let (tools, _) = catalog::usable_tools(spec, entry);
            inner
                .listings
                .insert(spec.name.clone(), Listing::Listed(tools.len()));
            documents.extend(tools.into_iter().map(|t| Document::new(&spec.name, t)));
            // A stable sort: each server's tools stay in the order it listed them.
            documents.sort_by_key(|d| self.order.iter().position(|name| *name == d.server));
            inner.documents = Index::new(documents).with_postings();
        }
        self.changed.send_modify(|n| *n += 1);
    }

    /// A server's listing failed.
    pub fn failed(&self, name: &str, why: String) {
        let mut inner = self.write();
        inner.relisting.remove(name);
        inner
            .listings
            .insert(name.to_string(), Listing::Failed(why));
        drop(inner);
        self.changed.send_modify(|n| *n += 1);
    }

    /// The servers (of `among`, or all) whose tools are still coming; with `relisting`,
    /// also those shown from a piped call's listing until the proxy's own arrives.
    pub fn coming(&self, among: Option<&str>, relisting: bool) -> Vec<String> {
        let inner = self.read();
        let mut names: Vec<String> = inner
            .listings
            .iter()
            .filter(|(name, listing)| {
                (**listing == Listing::Coming || (relisting && inner.relisting.contains(*name)))
                    && among.is_none_or(|s| s == name.as_str())
            })
            .map(|(name, _)| name.clone())
            .collect();
        names.sort();
        names
    }

    /// Waits until no listing of `among` (a server's name, or all) is coming (with
    /// `relisting`, none being listed again either), or `within` has passed; returns the
    /// servers still coming.
    pub async fn settled(
        &self,
        among: Option<&str>,
        relisting: bool,
        within: Duration,
    ) -> Vec<String> {
        let mut changes = self.changed.subscribe();
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let coming = self.coming(among, relisting);
            if coming.is_empty() {
                return coming;
            }
            match tokio::time::timeout_at(deadline, changes.changed()).await {
                Ok(Ok(())) => {}
                _ => return self.coming(among, relisting),
            }
        }
    }
}

impl Inner {
    fn remember(&mut self, spec: &ServerSpec, entry: &CacheEntry) {
        if let Some(text) = &entry.description.instructions {
            self.instructions.insert(spec.name.clone(), text.clone());
        }
        self.capabilities
            .insert(spec.name.clone(), entry.description.capabilities.clone());
    }

    /// Whether a server declared a capability (`resources`, `prompts`); a server whose
    /// tools are still coming may have it.
    pub fn may_have(&self, server: &str, capability: &str) -> bool {
        match self.capabilities.get(server) {
            Some(capabilities) => capabilities.get(capability).is_some(),
            None => self.listings.get(server) == Some(&Listing::Coming),
        }
    }
}
