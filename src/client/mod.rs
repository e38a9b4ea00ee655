//! Talking to servers as a client: the registry of configured servers, sessions over either
//! protocol era, and the on-disk tools cache.

pub mod cache;
pub mod config;
pub mod import;
pub mod session;

pub use cache::CacheEntry;
pub use config::{Registry, ServerSpec, Target};
pub use session::{Era, Session};
