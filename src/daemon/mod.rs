//! The warm path (DESIGN.md section 3): a per-user daemon keeps servers running between
//! calls, so a call costs milliseconds and a stateful server keeps its state.
//!
//! `client` is the CLI's side (find or start the daemon, hand it a request, answer its
//! questions); `server` is the daemon process; `pool` its warm sessions; `wire` what travels
//! on the socket (`transport::socket`); `guard` the watchdog each server runs under, so that
//! no server outlives the daemon, even a daemon killed with SIGKILL.

pub mod client;
pub mod guard;
pub mod pool;
pub mod server;
pub mod wire;

use crate::{Error, Outcome, Result};
use clap::{ArgMatches, Command};
use serde_json::Value;
use std::sync::OnceLock;

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
        .about("The warm path's daemon: its servers (status) or stopping it (stop)")
        .subcommand_required(true)
        .subcommand(
            Command::new("status")
                .about("The daemon and its warm servers: pids, idle times, memory"),
        )
        .subcommand(Command::new("stop").about("Stop the daemon and every server it keeps"))
}

/// Runs `ferry daemon status|stop`.
pub fn main(matches: &ArgMatches) -> Result<Outcome> {
    let op = match matches.subcommand_name() {
        Some("stop") => "stop",
        _ => "status",
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::server(format!("cannot start the async runtime: {e}")))?;
    let reply = runtime.block_on(client::operate(op));
    let text = match (op, reply) {
        (_, None) => "no ferry daemon is running\n".to_string(),
        (_, Some(Err(e))) => return Err(e),
        ("stop", Some(Ok(reply))) => {
            let n = reply.get("stopped").and_then(Value::as_u64).unwrap_or(0);
            format!(
                "daemon stopped ({n} server{})\n",
                if n == 1 { "" } else { "s" }
            )
        }
        (_, Some(Ok(status))) => status_text(&status),
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
pub fn status_text(status: &Value) -> String {
    let number = |v: &Value, key: &str| v.get(key).and_then(Value::as_u64).unwrap_or(0);
    let mut out = format!(
        "daemon pid {}, up {}, {}\n",
        number(status, "pid"),
        duration_text(number(status, "up_ms")),
        megabytes(number(status, "rss_kb"))
    );
    let servers = status
        .get("servers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if servers.is_empty() {
        out.push_str("no warm servers\n");
        return out;
    }
    let width = servers
        .iter()
        .filter_map(|s| s.get("name").and_then(Value::as_str))
        .map(|n| crate::render::text::escape_line(n).len())
        .max()
        .unwrap_or(6)
        .max(6);
    out.push_str(&format!(
        "{:width$}  {:>7}  {:>6}  {:>8}  {:>5}  {:>9}\n",
        "server", "pid", "idle", "stops in", "calls", "memory"
    ));
    for server in &servers {
        let name = crate::render::text::escape_line(
            server.get("name").and_then(Value::as_str).unwrap_or("?"),
        );
        let pid = server
            .get("pid")
            .and_then(Value::as_u64)
            .map_or("-".to_string(), |p| p.to_string());
        let idle = number(server, "idle_ms");
        let left = number(server, "idle_limit_ms").saturating_sub(idle);
        out.push_str(&format!(
            "{name:width$}  {pid:>7}  {:>6}  {:>8}  {:>5}  {:>9}\n",
            duration_text(idle),
            duration_text(left),
            number(server, "calls"),
            megabytes(number(server, "rss_kb"))
        ));
    }
    out
}

/// The identities (`ServerSpec::identity`) the daemon keeps warm, if one runs; for the
/// server list. Never waits long: a listing must not stall on the daemon.
pub fn warm_identities() -> Option<Vec<String>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    let status = runtime.block_on(async {
        tokio::time::timeout(std::time::Duration::from_millis(300), client::peek_status())
            .await
            .ok()
            .flatten()
    })?;
    Some(
        status
            .get("servers")?
            .as_array()?
            .iter()
            .filter_map(|s| {
                s.get("identity")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .collect(),
    )
}
