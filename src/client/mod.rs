//! Talking to servers as a client: the registry of configured servers and the imports from
//! other hosts, project-file trust, sessions over either protocol era, the handler that
//! answers a server's own requests, the on-disk tools cache, and the workflow that ties them
//! together for the CLI and the daemon alike.

pub mod cache;
pub mod catalog;
pub mod config;
pub mod handler;
pub mod import;
pub mod keyed;
pub mod lease;
pub mod pins;
pub mod pool;
pub mod session;
pub mod tasks;
pub mod trust;

pub use cache::CacheEntry;
pub use config::{Registry, ServerSpec, Target};
pub use handler::ClientHandler;
pub use session::{Era, RequestContext, Session, SessionOptions};

/// A message as one line for `--verbose`: compact JSON, long ones cut in the middle.
pub fn trace_text(message: &serde_json::Value) -> String {
    let text = serde_json::to_string(message).unwrap_or_default();
    if text.len() <= 2000 {
        return text;
    }
    let mut head = 1000;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - 500;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{} ...[{} bytes]... {}",
        &text[..head],
        text.len() - head - (text.len() - tail),
        &text[tail..]
    )
}
