//! `ferry __guard -- COMMAND ARGS`: the daemon's servers run under this small watchdog so
//! that none outlives the daemon, however the daemon ends (SIGKILL included).
//!
//! The guard leads the server's process group and holds the read end of a pipe (descriptor
//! 3) whose only write end is in the daemon. It starts the server in its group with its own
//! stdin, stdout and stderr, then waits: when the server exits, the guard exits the same way;
//! when the pipe reports end-of-file (the daemon closed it, or died), the guard stops the
//! whole group, TERM then KILL, itself included.

use crate::transport::stdio::GUARD_FD;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::time::Duration;

/// How long the group has between SIGTERM and SIGKILL once the daemon is gone.
const TERM_GRACE: Duration = Duration::from_millis(300);

/// Runs the guard; returns the exit code (when the server exited normally).
pub fn run(args: &[String]) -> i32 {
    let Some((command, rest)) = args.split_first() else {
        eprintln!("ferry __guard: nothing to run");
        return 2;
    };
    // The server must not inherit the watch pipe: it is the guard's alone.
    // SAFETY: fcntl on a descriptor number; an invalid one only returns an error.
    unsafe {
        let flags = libc::fcntl(GUARD_FD, libc::F_GETFD);
        if flags < 0 {
            eprintln!("ferry __guard: no watch pipe on descriptor {GUARD_FD}");
            return 2;
        }
        libc::fcntl(GUARD_FD, libc::F_SETFD, flags | libc::FD_CLOEXEC);
    }
    let mut child = match Command::new(command).args(rest).spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!("ferry: could not start {command}: {e}");
            return 127;
        }
    };
    // The guard keeps no copy of the server's stdin and stdout: the daemon must see their
    // ends as the server's own.
    // SAFETY: open and dup2 on descriptors this process owns.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::dup2(null, 1);
            libc::close(null);
        }
    }
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            if let Some(signal) = status.signal() {
                // End the way the server ended, so the daemon reports it truly.
                // SAFETY: restoring the default action and signalling ourselves.
                unsafe {
                    libc::signal(signal, libc::SIG_DFL);
                    libc::kill(libc::getpid(), signal);
                }
            }
            return status.code().unwrap_or(1);
        }
        let mut poll = libc::pollfd {
            fd: GUARD_FD,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut poll, 1, 200) };
        if ready > 0 && poll.revents != 0 {
            let mut byte = [0u8; 1];
            // SAFETY: reading into a one-byte buffer.
            let n = unsafe { libc::read(GUARD_FD, byte.as_mut_ptr().cast(), 1) };
            if n <= 0 {
                stop_group(&mut child);
            }
        }
    }
}

/// The daemon is gone: the group goes too, the guard last.
fn stop_group(child: &mut std::process::Child) -> ! {
    // SAFETY: signals to our own process group; the guard ignores TERM so it can follow up.
    unsafe {
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
        libc::killpg(0, libc::SIGTERM);
    }
    let deadline = std::time::Instant::now() + TERM_GRACE;
    while std::time::Instant::now() < deadline {
        if matches!(child.try_wait(), Ok(Some(_))) {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: as above; SIGKILL ends the guard too.
    unsafe {
        libc::killpg(0, libc::SIGKILL);
    }
    std::process::exit(137)
}
