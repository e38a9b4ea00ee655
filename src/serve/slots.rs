//! Fair sharing of the calls that may run at once: `concurrency` slots for the server, and
//! at most a share of them for any one client (a handshake session, a connection), so that
//! no client can take every slot. A slot is taken only when work is about to run (a command,
//! a backend's call), never while a call waits for its client.

use crate::protocol::{self, RpcError};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

type Parts = Arc<Mutex<HashMap<String, Arc<Semaphore>>>>;

/// The server's slots, and each client's part of them.
pub struct Slots {
    all: Arc<Semaphore>,
    /// How many slots one client may hold at once.
    share: usize,
    parts: Parts,
}

/// A client's part, in use while this lives; the last user forgets it, so the table holds
/// only clients at work.
struct Part {
    semaphore: Option<Arc<Semaphore>>,
    client: String,
    parts: Parts,
}

impl Drop for Part {
    fn drop(&mut self) {
        let mut parts = self.parts.lock().unwrap_or_else(|e| e.into_inner());
        self.semaphore.take();
        if parts
            .get(&self.client)
            .is_some_and(|s| Arc::strong_count(s) == 1)
        {
            parts.remove(&self.client);
        }
    }
}

/// A slot, held until dropped.
pub struct Slot {
    // Fields drop in order: the permits are given back before the part is forgotten.
    _all: OwnedSemaphorePermit,
    _mine: OwnedSemaphorePermit,
    _part: Part,
}

impl Slots {
    /// `concurrency` slots, of which one client may hold `share` at once.
    pub fn new(concurrency: usize, share: usize) -> Slots {
        let concurrency = concurrency.max(1);
        Slots {
            all: Arc::new(Semaphore::new(concurrency)),
            share: share.clamp(1, concurrency),
            parts: Arc::default(),
        }
    }

    /// The share of one client among many: half the slots (at least one).
    pub fn half(concurrency: usize) -> usize {
        concurrency.div_ceil(2).max(1)
    }

    /// A slot for `client`, once its share and the server both have one free.
    pub async fn take(&self, client: &str) -> Result<Slot, RpcError> {
        let semaphore = {
            let mut parts = self.parts.lock().unwrap_or_else(|e| e.into_inner());
            parts
                .entry(client.to_string())
                .or_insert_with(|| Arc::new(Semaphore::new(self.share)))
                .clone()
        };
        let part = Part {
            semaphore: Some(semaphore.clone()),
            client: client.to_string(),
            parts: self.parts.clone(),
        };
        let stopping = |_| RpcError {
            code: protocol::INTERNAL_ERROR,
            message: "the server is stopping".into(),
            data: None,
        };
        let mine = semaphore.acquire_owned().await.map_err(stopping)?;
        let all = self.all.clone().acquire_owned().await.map_err(stopping)?;
        Ok(Slot {
            _all: all,
            _mine: mine,
            _part: part,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_client_holds_at_most_its_share() {
        let slots = Slots::new(4, Slots::half(4));
        let a1 = slots.take("a").await.unwrap();
        let _a2 = slots.take("a").await.unwrap();
        let third = tokio::time::timeout(std::time::Duration::from_millis(50), slots.take("a"));
        assert!(third.await.is_err(), "a's third slot waits");
        let _b = slots.take("b").await.unwrap();
        drop(a1);
        let _a3 = slots.take("a").await.unwrap();
        drop((_a2, _a3, _b));
        assert!(
            slots.parts.lock().unwrap().is_empty(),
            "parts are forgotten"
        );
    }
}
