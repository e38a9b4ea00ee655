//! Nothing a served command starts outlives it, even when ferry itself is killed.
//!
//! Each call's command leads its own process group, killed whole when the call ends, times out
//! or is cancelled. Two holes remain, and this module closes them:
//! - ferry killed outright (SIGKILL): the kernel kills each command (`PR_SET_PDEATHSIG`) but
//!   not what the command started. `ferry __reaper`, started once per `ferry serve` in a
//!   session of its own, is told every live process group on its stdin; when that pipe closes
//!   (ferry is gone, however it ended), it kills them all.
//! - a descendant that leaves the group (`setsid`, a daemonising script; the sandbox refuses
//!   both, so only an unconfined command can): ferry serve is a child subreaper, so such
//!   orphans become its children, and every call's end sweeps the children that are no live
//!   call.
//!
//! The calls' temporary directories live in one directory of this process's (`scratch`),
//! which the reaper removes when ferry is gone, however it ended.

use std::collections::HashSet;
use std::io::{BufRead, Write};
use std::sync::{Mutex, OnceLock};

struct Registry {
    reaper: Option<std::process::Child>,
    live: HashSet<i32>,
    scratch: Option<std::path::PathBuf>,
}

fn registry() -> &'static Mutex<Registry> {
    static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        Mutex::new(Registry {
            reaper: None,
            live: HashSet::new(),
            scratch: None,
        })
    })
}

fn lock() -> std::sync::MutexGuard<'static, Registry> {
    registry().lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes this process a subreaper and starts the reaper. Failures leave the other guards
/// (process groups, PDEATHSIG) in place, so they are only logged.
pub fn start() {
    // SAFETY: prctl with a flag argument; it only changes this process's attributes.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut command = std::process::Command::new(exe);
    command
        .arg("__reaper")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: setsid is async-signal-safe: the reaper leaves ferry's session, so a Ctrl-C
    // or hangup meant for ferry does not end it before it has done its work.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, || {
            libc::setsid();
            Ok(())
        });
    }
    match command.spawn() {
        Ok(child) => lock().reaper = Some(child),
        Err(e) => tracing::debug!("no reaper: {e}"),
    }
}

/// The directory the calls' temporary directories go in: one of this process's own, removed
/// by the reaper when ferry is gone, when there is a reaper; else the system's.
pub fn scratch() -> std::path::PathBuf {
    let mut registry = lock();
    if let Some(dir) = &registry.scratch {
        return dir.clone();
    }
    let system = std::env::temp_dir();
    if registry.reaper.is_none() {
        return system;
    }
    let mut nonce = [0u8; 6];
    let _ = ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut nonce);
    let nonce: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
    let dir = system.join(format!("ferry-serve-{}-{nonce}", std::process::id()));
    use std::os::unix::fs::DirBuilderExt;
    if std::fs::DirBuilder::new().mode(0o700).create(&dir).is_err() {
        return system;
    }
    if let Some(stdin) = registry.reaper.as_mut().and_then(|r| r.stdin.as_mut()) {
        let _ = stdin.write_all(format!("t{}\n", dir.display()).as_bytes());
    }
    registry.scratch = Some(dir.clone());
    dir
}

fn tell(line: String) {
    let mut registry = lock();
    if let Some(stdin) = registry.reaper.as_mut().and_then(|r| r.stdin.as_mut()) {
        let _ = stdin.write_all(line.as_bytes());
    }
}

/// A call's process group started (its leader's pid).
pub fn register(pgid: i32) {
    lock().live.insert(pgid);
    tell(format!("+{pgid}\n"));
}

/// A call's process group was killed and its leader reaped: forget it, and stop whatever left
/// the group and was handed to this process.
pub fn unregister(pgid: i32) {
    lock().live.remove(&pgid);
    tell(format!("-{pgid}\n"));
    sweep();
}

/// Kills this process's children that are no live call (orphans handed over by the kernel).
pub fn sweep() {
    let me = std::process::id();
    let Ok(children) = std::fs::read_to_string(format!("/proc/{me}/task/{me}/children")) else {
        return;
    };
    let registry = lock();
    let reaper = registry.reaper.as_ref().map(|r| r.id() as i32);
    for pid in children
        .split_whitespace()
        .filter_map(|p| p.parse::<i32>().ok())
    {
        if registry.live.contains(&pid) || Some(pid) == reaper {
            continue;
        }
        tracing::debug!(pid, "stopping a process that left its call's group");
        // SAFETY: signals and a non-blocking reap of a child of this process.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
        }
    }
}

/// `ferry __reaper`: reads `+PGID` and `-PGID` lines (and `tDIR`, the scratch directory)
/// until its input closes, then kills every group still registered and removes the scratch
/// directory.
pub fn run() -> i32 {
    let mut live: HashSet<i32> = HashSet::new();
    let mut scratch = None;
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let (sign, rest) = line.split_at(line.len().min(1));
        match (sign, rest.parse::<i32>()) {
            ("+", Ok(pgid)) if pgid > 1 => {
                live.insert(pgid);
            }
            ("-", Ok(pgid)) => {
                live.remove(&pgid);
            }
            // Only a directory ferry made for this: its own name, under the system's.
            ("t", _) if rest.contains("/ferry-serve-") => scratch = Some(rest.to_string()),
            _ => {}
        }
    }
    for pgid in live {
        // SAFETY: killpg to groups ferry serve started and registered.
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
    }
    if let Some(dir) = scratch {
        let _ = std::fs::remove_dir_all(dir);
    }
    0
}
