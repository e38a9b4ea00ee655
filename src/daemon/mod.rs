//! The warm path (README, "The warm path"): a per-user daemon keeps servers running between
//! calls, so a call costs milliseconds and a stateful server keeps its state.
//!
//! `client` is the caller's side (find or start the daemon, hand it a whole `ferry <server>
//! ...` command, relay what comes back, or say why it could not, and the call runs cold);
//! `server` is the daemon process, which runs handed-over commands with the CLI's own code (a
//! `server::Runner` the binary supplies), keeping its warm sessions in `client::pool` (one per
//! server, project and the settings that change what it does; shared with `ferry serve
//! --servers`); `wire` the typed messages on the socket (one JSON message per line; where the
//! socket lives and who may use it is `transport::socket`'s); `guard` the watchdog each server
//! runs under, so that no server outlives the daemon, even a daemon killed with SIGKILL.

pub mod client;
pub mod guard;
pub mod server;
pub mod wire;

use crate::{Outcome, Result};
use clap::{ArgMatches, Command};
use std::sync::OnceLock;
use std::time::Duration;

/// Who this ferry is, for the daemon handshake: the version and the program file itself (its
/// size and modification time), so a rebuilt or upgraded ferry never talks to an old daemon.
pub fn identity() -> String {
    static IDENTITY: OnceLock<String> = OnceLock::new();
    IDENTITY
        .get_or_init(|| {
            use std::os::unix::fs::MetadataExt;
            let stamp = std::env::current_exe()
                .and_then(std::fs::metadata)
                .map(|m| format!("{}.{}.{}", m.size(), m.mtime(), m.mtime_nsec()))
                .unwrap_or_default();
            format!("ferry {} {stamp}", env!("CARGO_PKG_VERSION"))
        })
        .clone()
}

/// `ferry daemon`'s options, for the binary's one options table.
pub fn command() -> Command {
    Command::new("daemon")
        .about("The warm path's daemon: its servers (status, also plain `ferry daemon`) or stopping it (stop)")
        .subcommand(
            Command::new("status")
                .about("The daemon and its warm servers: pids, idle times, memory"),
        )
        .subcommand(Command::new("stop").about("Stop the daemon and every server it keeps"))
}

/// Runs `ferry daemon status|stop`.
pub fn main(matches: &ArgMatches) -> Result<Outcome> {
    let text = match matches.subcommand_name() {
        Some("stop") => match client::stop() {
            None => "no ferry daemon is running\n".to_string(),
            Some(n) => format!(
                "daemon stopped ({n} server{})\n",
                if n == 1 { "" } else { "s" }
            ),
        },
        _ => match client::status(Duration::from_secs(15)) {
            None => "no ferry daemon is running\n".to_string(),
            Some((status, _)) => status_text(&status),
        },
    };
    crate::console::emit(&text)?;
    Ok(Outcome::Success)
}

fn duration_text(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

fn megabytes(kb: u64) -> String {
    format!("{:.1} MB", kb as f64 / 1024.0)
}

/// `ferry daemon status` as text: the daemon, then a line per warm server.
pub fn status_text(status: &wire::Status) -> String {
    let mut out = format!(
        "daemon pid {}, up {}, {}\n",
        status.pid,
        duration_text(status.up_ms),
        megabytes(status.rss_kb)
    );
    if status.servers.is_empty() {
        out.push_str("no warm servers\n");
        return out;
    }
    let width = status
        .servers
        .iter()
        .map(|s| crate::render::text::escape_line(&s.name).len())
        .max()
        .unwrap_or(6)
        .max(6);
    out.push_str(&format!(
        "{:width$}  {:>7}  {:>6}  {:>8}  {:>5}  {:>9}  directory or URL\n",
        "server", "pid", "idle", "stops in", "calls", "memory"
    ));
    for server in &status.servers {
        let name = crate::render::text::escape_line(&server.name);
        let pid = server.pid.map_or("-".to_string(), |p| p.to_string());
        let left = server.idle_limit_ms.saturating_sub(server.idle_ms);
        let dir = server
            .dir
            .as_deref()
            .map_or("-".into(), crate::render::text::escape_line);
        // What keyed a session of its own: names only (a variable's value may be a secret).
        let apart = if server.apart.is_empty() {
            String::new()
        } else {
            format!(
                "  (apart by {})",
                crate::render::text::escape_line(&server.apart.join(", "))
            )
        };
        let from = if server.command_line { "  (--cmd)" } else { "" };
        out.push_str(&format!(
            "{name:width$}  {pid:>7}  {:>6}  {:>8}  {:>5}  {:>9}  {dir}{from}{apart}\n",
            duration_text(server.idle_ms),
            duration_text(left),
            server.calls,
            megabytes(server.rss_kb.unwrap_or(0))
        ));
    }
    out
}

/// The identities (`ServerSpec::identity`) this ferry's daemon keeps warm, if one runs; for
/// the server list. Never waits long: a listing must not stall on the daemon.
pub fn warm_identities() -> Option<Vec<String>> {
    let (status, same) = client::status(Duration::from_millis(300))?;
    same.then(|| status.servers.into_iter().map(|s| s.identity).collect())
}
