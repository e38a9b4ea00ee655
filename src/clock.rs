//! Wall-clock time as the files and signed states ferry writes record it: since the Unix
//! epoch, 0 when the clock is before it.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Seconds since the epoch.
pub fn now_secs() -> u64 {
    now_ms() / 1000
}
