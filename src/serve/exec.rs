//! Confined execution of one command: argv exec (never a shell), the environment cleared to
//! an allowlist, stdin from /dev/null unless a value is written to it, its own process group
//! (killed whole, grandchildren included, on timeout, cancellation or when the call is
//! dropped), output capped per stream with head and tail kept, progress lines and stderr lines
//! reported as they come.

use std::collections::BTreeMap;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

/// How long a command gets after SIGTERM before SIGKILL.
const TERM_GRACE: Duration = Duration::from_millis(500);
/// How long a killed group may take to be gone.
const SETTLE: Duration = Duration::from_millis(200);
/// How long output may still be read after the command exited.
const DRAIN: Duration = Duration::from_millis(200);
/// The longest progress or stderr line looked at (longer ones are cut for the check).
const LINE_LIMIT: usize = 4096;

/// What to run.
#[derive(Clone)]
pub struct Job {
    /// The program (an absolute path) and its arguments.
    pub argv: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: PathBuf,
    /// Written to the command's stdin, which is closed after it (else stdin is /dev/null).
    pub stdin: Option<Vec<u8>>,
    pub timeout: Duration,
    /// Bytes kept per stream: half from the start, half from the end.
    pub max_output: usize,
    /// Stdout lines matching this report progress (and are not part of the output).
    pub progress: Option<fancy_regex::Regex>,
    /// The kernel sandbox it runs in; `None` only when serving was started `--unconfined`.
    pub sandbox: Option<std::sync::Arc<super::sandbox::Policy>>,
    /// Who answers the command's `ferry ask` (the call's client).
    pub asker: std::sync::Arc<dyn super::ask::Asker>,
}

/// One stream's output: all of it, or its head and tail with the size of the cut.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Captured {
    pub head: Vec<u8>,
    pub tail: Vec<u8>,
    /// Bytes dropped between head and tail.
    pub cut: usize,
}

impl Captured {
    /// The whole output, when nothing was cut.
    pub fn whole(&self) -> Option<Vec<u8>> {
        (self.cut == 0).then(|| [self.head.as_slice(), self.tail.as_slice()].concat())
    }

    /// The output as text, with one line stating a cut if there was one.
    pub fn text(&self) -> String {
        let head = String::from_utf8_lossy(&self.head);
        if self.cut == 0 {
            return format!("{head}{}", String::from_utf8_lossy(&self.tail));
        }
        let mut text = head.into_owned();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "[ferry: {} bytes of output cut here; raise max_output in the manifest to keep more]\n",
            self.cut
        ));
        text.push_str(&String::from_utf8_lossy(&self.tail));
        text
    }

    /// The last lines, for an error message.
    pub fn last_lines(&self, n: usize) -> String {
        let text = self.text();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }
}

/// A cap on a stream: keeps the first and the last `limit / 2` bytes.
struct Capture {
    limit: usize,
    out: Captured,
    ring: std::collections::VecDeque<u8>,
}

impl Capture {
    fn new(limit: usize) -> Capture {
        Capture {
            limit,
            out: Captured::default(),
            ring: std::collections::VecDeque::new(),
        }
    }

    fn push(&mut self, mut bytes: &[u8]) {
        let head_room = (self.limit - self.limit / 2).saturating_sub(self.out.head.len());
        if head_room > 0 {
            let take = head_room.min(bytes.len());
            self.out.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        let tail_limit = self.limit / 2;
        self.ring.extend(bytes);
        let over = self.ring.len().saturating_sub(tail_limit);
        if over > 0 {
            self.ring.drain(..over);
            self.out.cut += over;
        }
    }

    fn finish(mut self) -> Captured {
        self.out.tail = self.ring.into_iter().collect();
        self.out
    }
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    Exited(i32),
    Signaled(i32),
    TimedOut,
}

/// What a command did.
#[derive(Debug, Clone)]
pub struct Finished {
    pub ending: Ending,
    pub stdout: Captured,
    pub stderr: Captured,
    /// Each `.git` the command made in a place it may write, removed after it ended (git,
    /// run there later outside the sandbox, would follow its config).
    pub removed_git: Vec<PathBuf>,
}

/// A call's temporary directory, removed off the runtime's thread when dropped.
struct OffThread(Option<super::sandbox::TempDir>);

impl OffThread {
    fn path(&self) -> &std::path::Path {
        self.0
            .as_ref()
            .map_or(std::path::Path::new(""), |t| t.path())
    }
}

impl Drop for OffThread {
    fn drop(&mut self) {
        let Some(tmp) = self.0.take() else { return };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn_blocking(move || drop(tmp));
            }
            Err(_) => drop(tmp),
        }
    }
}

/// Aborts a task when the call it serves is over (its questions then go unanswered).
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Kills the command's process group unless it was already reaped and cleaned up: a dropped
/// call (cancelled, disconnected) leaves nothing running.
struct GroupGuard {
    pgid: i32,
    armed: bool,
}

impl GroupGuard {
    /// Whether any process of the group is left (a zombie not yet reaped counts).
    fn alive(&self) -> bool {
        // SAFETY: signal 0 only asks whether the group exists.
        self.pgid > 0 && unsafe { libc::killpg(self.pgid, 0) } == 0
    }

    fn signal(&self, signal: i32) {
        if self.pgid > 0 {
            // SAFETY: killpg only sends a signal to the group this call created.
            unsafe {
                libc::killpg(self.pgid, signal);
            }
        }
    }
}

impl GroupGuard {
    /// Guards a group just started (registered with the reaper, in case ferry dies).
    fn new(pgid: i32) -> GroupGuard {
        if pgid > 0 {
            super::reaper::register(pgid);
        }
        GroupGuard { pgid, armed: true }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            self.signal(libc::SIGKILL);
        }
        if self.pgid > 0 {
            super::reaper::unregister(self.pgid);
        }
    }
}

/// Reads a stream into a capture, calling `line` for each complete line (cut at LINE_LIMIT);
/// a line for which `line` returns false is left out of the capture.
async fn pump(
    mut stream: impl tokio::io::AsyncRead + Unpin,
    limit: usize,
    mut line: impl FnMut(&[u8]) -> bool,
    by_line: bool,
) -> Captured {
    let mut capture = Capture::new(limit);
    let mut buffer = vec![0u8; 64 * 1024];
    let mut pending: Vec<u8> = Vec::new();
    loop {
        let n = match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if !by_line {
            capture.push(&buffer[..n]);
            continue;
        }
        pending.extend_from_slice(&buffer[..n]);
        // Lines are taken by offset and the buffer shifted once per read, not once per line.
        let mut start = 0;
        while let Some(at) = pending[start..].iter().position(|&b| b == b'\n') {
            let end = start + at;
            let text = &pending[start..end];
            if line(&text[..text.len().min(LINE_LIMIT)]) {
                capture.push(&pending[start..=end]);
            }
            start = end + 1;
        }
        pending.drain(..start);
        // A line longer than the limit is output, not a report: pass it through.
        if pending.len() > LINE_LIMIT {
            capture.push(&pending);
            pending.clear();
        }
    }
    if !pending.is_empty() && (!by_line || line(&pending[..pending.len().min(LINE_LIMIT)])) {
        capture.push(&pending);
    }
    capture.finish()
}

/// Runs a job. `on_progress(done, total)` hears progress lines; `on_stderr(line)` hears each
/// stderr line. Dropping the returned future kills the command's whole process group.
pub async fn run(
    job: Job,
    on_progress: impl Fn(f64, Option<f64>) + Send + 'static,
    on_stderr: impl Fn(&str) + Send + 'static,
) -> std::io::Result<Finished> {
    let (program, args) = job
        .argv
        .split_first()
        .ok_or_else(|| std::io::Error::other("an empty command"))?;
    // Every call has a temporary directory of its own, gone when the call ends. Making it and
    // the sandbox's rules touches the filesystem: off the runtime's thread, so one slow
    // filesystem does not hold up every other client.
    let started = std::time::SystemTime::now();
    let (policy, cwd) = (job.sandbox.clone(), job.cwd.clone());
    let (tmp, confinement) = tokio::task::spawn_blocking(move || {
        let tmp = OffThread(Some(super::sandbox::TempDir::new()?));
        // `ferry` on the command's PATH: this binary, for `ferry ask`.
        let bin = tmp.path().join(".ferry-bin");
        std::fs::create_dir(&bin)?;
        std::os::unix::fs::symlink(std::env::current_exe()?, bin.join("ferry"))?;
        let confinement = match &policy {
            Some(policy) => Some(policy.prepare(tmp.path(), &cwd)?),
            None => None,
        };
        std::io::Result::Ok((tmp, confinement))
    })
    .await
    .map_err(std::io::Error::other)??;
    // The call's private channel for `ferry ask`.
    let (channel, theirs) = super::ask::Channel::open()?;
    let ask_fd = theirs.as_raw_fd();
    let bin = tmp.path().join(".ferry-bin");
    let path = match job.env.get("PATH") {
        Some(path) => format!("{}:{path}", bin.display()),
        None => bin.display().to_string(),
    };
    let mut command = Command::new(program);
    command
        .args(args)
        .env_clear()
        .envs(&job.env)
        .env("PATH", path)
        .env(super::ask::ASK_FD_VAR, ask_fd.to_string())
        .env("TMPDIR", tmp.path())
        .envs(
            job.sandbox
                .as_ref()
                .filter(|policy| !policy.keeps_home)
                .map(|_| ("HOME", tmp.path())),
        )
        .current_dir(&job.cwd)
        .stdin(if job.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: prctl is async-signal-safe; it asks the kernel to kill the command if ferry
    // itself dies (SIGKILL included), so no command outlives its server. Entering the
    // sandbox only makes system calls (see Prepared::enter).
    unsafe {
        command.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if let Some(sandbox) = &confinement {
                sandbox.enter()?;
            }
            // The channel's end stays open across exec (every other descriptor closes).
            libc::fcntl(ask_fd, libc::F_SETFD, 0);
            Ok(())
        });
    }
    let spawned = command.spawn();
    // The command holds its end now: this process keeps none, so the channel ends with it.
    drop(command);
    drop(theirs);
    let mut child = spawned?;
    let asking = tokio::spawn(channel.serve(job.asker.clone()));
    let _stop_asking = AbortOnDrop(asking.abort_handle());
    let mut guard = GroupGuard::new(child.id().map_or(0, |id| id as i32));
    if let Some(id) = child.id() {
        job.asker.watch(super::ask::Asking::Group(id as i32));
    }
    if let (Some(mut stdin), Some(bytes)) = (child.stdin.take(), job.stdin) {
        tokio::spawn(async move {
            let _ = stdin.write_all(&bytes).await;
        });
    }
    let progress = job.progress;
    let stdout = child.stdout.take().map(|out| {
        let limit = job.max_output;
        tokio::spawn(async move {
            let by_line = progress.is_some();
            pump(
                out,
                limit,
                move |line| {
                    let Some(re) = &progress else { return true };
                    let text = String::from_utf8_lossy(line);
                    match re.captures(text.trim_end_matches('\r')) {
                        Ok(Some(caps)) => {
                            let number =
                                |i: usize| caps.get(i).and_then(|m| m.as_str().parse::<f64>().ok());
                            match number(1) {
                                Some(done) => {
                                    on_progress(done, number(2));
                                    false
                                }
                                None => true,
                            }
                        }
                        _ => true,
                    }
                },
                by_line,
            )
            .await
        })
    });
    let stderr = child.stderr.take().map(|err| {
        let limit = job.max_output;
        // What is forwarded as log messages is held to the same cap as what is kept: a
        // chatty command must not queue without end for a slow client.
        let mut forwarded = 0usize;
        tokio::spawn(async move {
            pump(
                err,
                limit,
                move |line| {
                    if forwarded < limit {
                        forwarded += line.len() + 1;
                        on_stderr(
                            if forwarded < limit {
                                String::from_utf8_lossy(line)
                            } else {
                                "[ferry: further stderr is not forwarded]".into()
                            }
                            .trim_end_matches('\r'),
                        );
                    }
                    true
                },
                true,
            )
            .await
        })
    });
    let ending = match tokio::time::timeout(job.timeout, child.wait()).await {
        Ok(Ok(status)) => {
            use std::os::unix::process::ExitStatusExt;
            match (status.code(), status.signal()) {
                (Some(code), _) => Ending::Exited(code),
                (None, Some(signal)) => Ending::Signaled(signal),
                _ => Ending::Exited(-1),
            }
        }
        Ok(Err(e)) => return Err(e),
        Err(_) => {
            guard.signal(libc::SIGTERM);
            if tokio::time::timeout(TERM_GRACE, child.wait())
                .await
                .is_err()
            {
                guard.signal(libc::SIGKILL);
                let _ = child.wait().await;
            }
            Ending::TimedOut
        }
    };
    // Whatever the command left behind in its group goes too, and what left the group (in
    // the sandbox nothing can: no new session or group), so its pipes close. A process that
    // left is handed to this process only once its parent has died: sweep until the group is
    // gone, for a bounded time.
    guard.signal(libc::SIGKILL);
    guard.armed = false;
    let settled = std::time::Instant::now() + SETTLE;
    loop {
        super::reaper::sweep();
        if !guard.alive() || std::time::Instant::now() > settled {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    super::reaper::sweep();
    let collect = |handle: Option<tokio::task::JoinHandle<Captured>>| async move {
        match handle {
            Some(handle) => tokio::time::timeout(DRAIN * 5, handle)
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default(),
            None => Captured::default(),
        }
    };
    let stdout = collect(stdout).await;
    let stderr = collect(stderr).await;
    // Removed before the call answers, with any `.git` the command made: off the runtime's
    // thread.
    let mut tmp = tmp;
    let (dir, policy) = (tmp.0.take(), job.sandbox.clone());
    let removed_git = tokio::task::spawn_blocking(move || {
        drop(dir);
        match &policy {
            Some(policy) => policy.after_call(started),
            None => Vec::new(),
        }
    })
    .await
    .unwrap_or_default();
    Ok(Finished {
        ending,
        stdout,
        stderr,
        removed_git,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    fn job(argv: &[&str]) -> Job {
        let mut env = BTreeMap::new();
        env.insert("PATH".into(), "/usr/bin:/bin".into());
        Job {
            argv: argv.iter().map(|a| a.to_string()).collect(),
            env,
            cwd: std::env::temp_dir(),
            stdin: None,
            timeout: Duration::from_secs(10),
            max_output: 1 << 20,
            progress: None,
            sandbox: None,
            asker: std::sync::Arc::new(crate::serve::ask::Nobody),
        }
    }

    #[test]
    fn a_capture_keeps_head_and_tail() {
        let mut capture = Capture::new(10);
        capture.push(b"0123456789abcdefghij");
        let out = capture.finish();
        assert_eq!(
            (out.head.as_slice(), out.tail.as_slice(), out.cut),
            (&b"01234"[..], &b"fghij"[..], 10)
        );
        assert!(out.text().contains("10 bytes of output cut here"));
    }

    #[tokio::test]
    async fn output_exit_codes_env_and_stdin() {
        let finished = run(
            job(&["/bin/sh", "-c", "echo out; echo err >&2; exit 3"]),
            |_, _| {},
            |_| {},
        )
        .await
        .unwrap();
        assert_eq!(finished.ending, Ending::Exited(3));
        assert_eq!(finished.stdout.text(), "out\n");
        assert_eq!(finished.stderr.text(), "err\n");
        let finished = run(job(&["/usr/bin/env"]), |_, _| {}, |_| {})
            .await
            .unwrap();
        let text = finished.stdout.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "the environment is cleared: {text}");
        // The call's channel for `ferry ask`, `ferry` first on PATH, and a temporary
        // directory of the call's own, gone once the call is over.
        assert!(lines[0].starts_with("FERRY_ASK_FD="), "{text}");
        let tmp = lines[2].strip_prefix("TMPDIR=").expect(&text);
        assert_eq!(lines[1], format!("PATH={tmp}/.ferry-bin:/usr/bin:/bin"));
        assert!(tmp.contains("ferry-call-"), "{tmp}");
        assert!(!std::path::Path::new(tmp).exists(), "{tmp} was removed");
        let mut with_input = job(&["/bin/cat"]);
        with_input.stdin = Some(b"given".to_vec());
        assert_eq!(
            run(with_input, |_, _| {}, |_| {})
                .await
                .unwrap()
                .stdout
                .text(),
            "given"
        );
        // Without declared stdin, a command that reads it gets end of file at once.
        let finished = run(job(&["/bin/cat"]), |_, _| {}, |_| {}).await.unwrap();
        assert_eq!(
            (finished.ending, finished.stdout.text()),
            (Ending::Exited(0), String::new())
        );
    }

    #[tokio::test]
    async fn progress_lines_are_reported_not_output() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let mut j = job(&["/bin/sh", "-c", "echo 1/4; echo work; echo 4/4"]);
        j.progress = Some(fancy_regex::Regex::new(r"^(\d+)/(\d+)$").unwrap());
        let finished = run(j, move |d, t| sink.lock().unwrap().push((d, t)), |_| {})
            .await
            .unwrap();
        assert_eq!(finished.stdout.text(), "work\n");
        assert_eq!(*seen.lock().unwrap(), [(1.0, Some(4.0)), (4.0, Some(4.0))]);
    }

    #[tokio::test]
    async fn a_timeout_kills_the_whole_group() {
        let marker =
            std::env::temp_dir().join(format!("ferry-exec-grandchild-{}", std::process::id()));
        let _ = std::fs::remove_file(&marker);
        let script = format!("(sleep 2; touch {}) & sleep 30", marker.display());
        let mut j = job(&["/bin/sh", "-c", &script]);
        j.timeout = Duration::from_millis(300);
        let started = std::time::Instant::now();
        let finished = run(j, |_, _| {}, |_| {}).await.unwrap();
        assert_eq!(finished.ending, Ending::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(5));
        std::thread::sleep(Duration::from_millis(2500));
        assert!(!marker.exists(), "the grandchild was killed with its group");
    }
}
