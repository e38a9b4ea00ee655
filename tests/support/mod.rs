//! Shared test harness: runs the real `ferry` binary with its own config, cache and home
//! directories, and finds the pinned fixture servers installed by tests/fixtures/setup.sh.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub const FERRY: &str = env!("CARGO_BIN_EXE_ferry");

mod story;
#[allow(unused_imports)]
pub use story::Test;

/// The outcome of one ferry run.
#[derive(Debug)]
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

impl From<Output> for Run {
    fn from(output: Output) -> Run {
        Run {
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            code: output.status.code().unwrap_or(-1),
        }
    }
}

/// An isolated ferry environment: its own HOME, config, cache and working directory. Calls
/// are cold (`FERRY_NO_DAEMON=1`) unless the environment was made with [`Env::warm`]; a warm
/// environment's daemon (its socket is under its own cache) is stopped when it is dropped.
pub struct Env {
    pub root: PathBuf,
    pub warm: bool,
}

static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Env {
    pub fn new() -> Env {
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let root = std::env::temp_dir().join(format!("ferry-test-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for dir in ["home", "config", "cache", "work"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        Env { root, warm: false }
    }

    /// An environment whose calls go through the daemon, as they do by default.
    pub fn warm() -> Env {
        let mut env = Env::new();
        env.warm = true;
        env
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(FERRY);
        command
            .args(args)
            .current_dir(self.path("work"))
            .env("HOME", self.path("home"))
            .env("FERRY_CONFIG_DIR", self.path("config"))
            .env("FERRY_CACHE_DIR", self.path("cache"))
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_CACHE_HOME")
            .env_remove("FERRY_RUNTIME_DIR");
        if self.warm {
            command.env_remove("FERRY_NO_DAEMON");
        } else {
            command.env("FERRY_NO_DAEMON", "1");
        }
        command
    }

    /// Runs ferry with `args` and no stdin.
    pub fn run(&self, args: &[&str]) -> Run {
        self.command(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
            .into()
    }

    /// Runs ferry with `input` on stdin.
    pub fn run_with_stdin(&self, args: &[&str], input: &str) -> Run {
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A command that needs no input (`@file`) may have ended before it is written.
        match child.stdin.take().unwrap().write_all(input.as_bytes()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            written => written.unwrap(),
        }
        child.wait_with_output().unwrap().into()
    }

    /// A server command line that appends a line to a counter file each time it starts, so a
    /// test can prove that ferry did not start it.
    pub fn counted(&self, command: &str) -> (String, PathBuf) {
        let counter = self.path("spawns");
        let line = format!(
            "sh -c 'echo spawn >> {}; exec {command}'",
            counter.display()
        );
        (line, counter)
    }

    pub fn write(&self, relative: &str, text: &str) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        if self.warm {
            let _ = self.command(&["daemon", "stop"]).output();
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// How many times a counted server was started.
pub fn spawns(counter: &Path) -> usize {
    std::fs::read_to_string(counter)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn require(path: PathBuf) -> String {
    assert!(
        path.exists(),
        "{} is missing: run tests/fixtures/setup.sh first",
        path.display()
    );
    path.display().to_string()
}

/// `node .../server-everything/dist/index.js stdio`
pub fn everything() -> String {
    let index = require(
        fixtures().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
    );
    format!("node {index} stdio")
}

/// The server-everything entry script (for its HTTP mode).
pub fn everything_script() -> String {
    require(fixtures().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"))
}

pub fn loopback_preload() -> String {
    require(fixtures().join("loopback.cjs"))
}

/// `node .../server-filesystem/dist/index.js DIR`
pub fn filesystem(dir: &Path) -> String {
    let index = require(
        fixtures().join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"),
    );
    format!("node {index} {}", dir.display())
}

/// `node .../server-memory/dist/index.js`
pub fn memory() -> String {
    let index =
        require(fixtures().join("node_modules/@modelcontextprotocol/server-memory/dist/index.js"));
    format!("node {index}")
}

/// The `mcp-server-time` console script (2026-07-28, stateless).
pub fn time_server() -> String {
    require(fixtures().join(".venv/bin/mcp-server-time"))
}

/// `growing_server.py STATE`: the official Python SDK, tools kept in a state file.
pub fn growing_server(state: &Path) -> String {
    let script = require(fixtures().join("growing_server.py"));
    format!("{} {script} {}", venv_python(), state.display())
}

/// `snapshot_server.py TOOLS`: the official Python SDK, listing the tool definitions the JSON
/// file holds, read anew for each listing (so a test can change them between listings).
pub fn snapshot_server(tools: &Path) -> String {
    let script = require(fixtures().join("snapshot_server.py"));
    format!("{} {script} {}", venv_python(), tools.display())
}

/// `media_server.py`: the official Python SDK, tools whose dict results hold binary data.
pub fn media_server() -> String {
    let script = require(fixtures().join("media_server.py"));
    format!("{} {script}", venv_python())
}

pub fn venv_python() -> String {
    require(fixtures().join(".venv/bin/python"))
}

/// The fault server example, built by `cargo test` next to the test binaries.
pub fn fault(mode: &str) -> String {
    let exe = Path::new(FERRY)
        .parent()
        .unwrap()
        .join("examples/fault_server");
    let exe = require(exe);
    format!("{exe} {mode}")
}

/// The processes whose command line contains `needle` (to check nothing was left running).
/// Waits until `done` holds, looking every 10 ms, for at most `seconds`; returns whether it
/// held. Tests wait on what they mean to see, never for a fixed time.
pub fn wait_until(seconds: u64, mut done: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    loop {
        if done() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

pub fn processes_matching(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains(needle) {
                found.push(cmdline);
            }
        }
    }
    found
}

/// The real `tools/list` snapshots in tests/corpus (copied from the servers listed in its README),
/// as (server name, path), in name order.
pub fn corpus_snapshots() -> Vec<(String, PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let snapshots = snapshots_in(&dir);
    assert!(
        snapshots.len() >= 13,
        "expected the 13 corpus snapshots in {}",
        dir.display()
    );
    snapshots
}

/// The 26 held-out servers' snapshots in benches/heldout/ (never tuned on).
pub fn heldout_snapshots() -> Vec<(String, PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/heldout");
    let snapshots = snapshots_in(&dir);
    assert!(snapshots.len() >= 26, "{}", dir.display());
    snapshots
}

/// Every `NAME.tools.json` in `dir`, as (NAME, path), sorted.
fn snapshots_in(dir: &Path) -> Vec<(String, PathBuf)> {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{} is missing ({e})", dir.display()));
    let mut snapshots: Vec<(String, PathBuf)> = entries
        .flatten()
        .map(|e| e.path())
        .filter_map(|path| {
            let name = path
                .file_name()?
                .to_str()?
                .strip_suffix(".tools.json")?
                .to_string();
            Some((name, path))
        })
        .collect();
    snapshots.sort();
    snapshots
}

/// The hostile server example, built by `cargo test` next to the test binaries.
pub fn hostile_exe() -> String {
    let exe = Path::new(FERRY)
        .parent()
        .unwrap()
        .join("examples/hostile_server");
    require(exe)
}

/// `.../hostile_server stdio MODE`
pub fn hostile(mode: &str) -> String {
    format!("{} stdio {mode}", hostile_exe())
}

/// A running hostile HTTP server: its main and other port, and its request log.
pub struct HostileHttp {
    pub child: std::process::Child,
    pub port: u16,
    pub other_port: u16,
    pub log: PathBuf,
}

impl HostileHttp {
    pub fn start(env: &Env, mode: &str) -> HostileHttp {
        let log = env.path(&format!("hostile-{mode}.log"));
        let mut child = Command::new(hostile_exe())
            .args(["http", mode])
            .env("HOSTILE_LOG", &log)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
            &mut line,
        )
        .unwrap();
        let mut ports = line.split_whitespace().map(|p| p.parse::<u16>().unwrap());
        HostileHttp {
            child,
            port: ports.next().unwrap(),
            other_port: ports.next().unwrap(),
            log,
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Every request head the server saw.
    pub fn requests(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for HostileHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every file below `dir`, recursively.
pub fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found
}

/// The manifest ferry serve's tests serve.
pub fn serve_manifest() -> String {
    require(fixtures().join("serve.toml"))
}

/// The manifest whose tools run as tasks.
pub fn tasks_manifest() -> String {
    require(fixtures().join("tasks.toml"))
}

/// `ferry serve` of the manifest whose tools run as tasks, as a server command line.
pub fn served_tasks() -> String {
    format!("{FERRY} serve --manifest {}", tasks_manifest())
}

/// The serve fixtures' root directory (canonical).
pub fn serve_root() -> PathBuf {
    std::fs::canonicalize(fixtures().join("serve-root")).unwrap()
}

/// `ferry serve ...` over stdio, driven by JSON-RPC lines.
pub struct Served {
    pub child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<serde_json::Value>,
    /// Responses that arrived while another was awaited.
    early: Vec<serde_json::Value>,
}

/// The 2026-07-28 `_meta` every stateless request carries.
pub fn modern_meta() -> serde_json::Value {
    serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"}
    })
}

impl Served {
    pub fn start(env: &Env, args: &[&str]) -> Served {
        Served::start_with_env(env, args, &[])
    }

    /// As `start`, with these variables in ferry's own environment.
    pub fn start_with_env(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> Served {
        let mut all = vec!["serve"];
        all.extend_from_slice(args);
        let mut command = env.command(&all);
        command.envs(vars.iter().copied());
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in
                std::io::BufRead::lines(std::io::BufReader::new(stdout)).map_while(Result::ok)
            {
                if let Ok(value) = serde_json::from_str(&line) {
                    if sender.send(value).is_err() {
                        break;
                    }
                }
            }
        });
        Served {
            stdin: child.stdin.take(),
            child,
            lines,
            early: Vec::new(),
        }
    }

    /// Takes the server's stdin (dropping it closes the server's input).
    pub fn stdin_handle(&mut self) -> Option<std::process::ChildStdin> {
        self.stdin.take()
    }

    pub fn send(&mut self, message: &serde_json::Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a stateless request and waits for its response (notifications before it are kept
    /// in `notes`).
    pub fn call(
        &mut self,
        id: u64,
        method: &str,
        mut params: serde_json::Value,
        notes: &mut Vec<serde_json::Value>,
    ) -> serde_json::Value {
        let meta = params
            .as_object_mut()
            .unwrap()
            .entry("_meta")
            .or_insert_with(|| serde_json::json!({}));
        for (k, v) in modern_meta().as_object().unwrap() {
            meta.as_object_mut()
                .unwrap()
                .entry(k.clone())
                .or_insert(v.clone());
        }
        self.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        self.wait(id, notes)
    }

    /// Waits for the response to `id` (30 s at most).
    pub fn wait(&mut self, id: u64, notes: &mut Vec<serde_json::Value>) -> serde_json::Value {
        let wanted = serde_json::json!(id);
        if let Some(i) = self.early.iter().position(|m| m.get("id") == Some(&wanted)) {
            return self.early.remove(i);
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let message = match self.lines.recv_timeout(left) {
                Ok(message) => message,
                Err(e) => {
                    let _ = self.child.kill();
                    let mut stderr = String::new();
                    if let Some(mut err) = self.child.stderr.take() {
                        let _ = std::io::Read::read_to_string(&mut err, &mut stderr);
                    }
                    panic!("no response to {id} ({e}); ferry serve's stderr:\n{stderr}");
                }
            };
            match message.get("id") {
                Some(got) if *got == wanted => return message,
                Some(_) => self.early.push(message),
                None => notes.push(message),
            }
        }
    }

    /// The text of a tool result's first block.
    /// Calls a tool with these arguments and waits for the response.
    pub fn call_tool(
        &mut self,
        id: u64,
        tool: &str,
        arguments: serde_json::Value,
    ) -> serde_json::Value {
        self.call(
            id,
            "tools/call",
            serde_json::json!({"name": tool, "arguments": arguments}),
            &mut Vec::new(),
        )
    }

    /// Whether a response is a tool's failure (`isError`).
    pub fn is_error(result: &serde_json::Value) -> bool {
        result["result"]["isError"] == serde_json::json!(true)
    }

    pub fn text(result: &serde_json::Value) -> String {
        result["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stdin.take();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Writes `text` to `work/NAME` and returns what `ferry demo word_count NAME` prints for it:
/// `wc`'s own line for the file's canonical path.
pub fn demo_file(env: &Env, name: &str, text: &str) -> String {
    env.write(&format!("work/{name}"), text);
    // The demo runs wc in the working directory, with the path as the caller gave it.
    let out = Command::new("wc")
        .arg("--")
        .arg(name)
        .current_dir(env.path("work"))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The demo server's listing (`ferry serve --demo`).
pub const DEMO_LISTING: &str = "date([utc, format]) - Show current date and time\n\
word_count(path) - Count lines, words and bytes of file under current directory\n\
list_files([dir, all, sort]) - List files of directory under current directory\n\
pixel() - Return one-pixel PNG image\n";

/// Where an HTTP server answers, and the bearer token it wants (if any).
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub port: u16,
    pub token: Option<String>,
}

/// `ferry serve --http` on a free loopback port, stopped when dropped, as a user starts it: a
/// token made for the run (read from its stderr) unless the arguments or `FERRY_SERVE_TOKEN`
/// say otherwise. Standard error is drained after the start lines so warnings never block or
/// break the server.
pub struct HttpServed {
    child: std::process::Child,
    pub url: String,
    pub port: u16,
    pub token: Option<String>,
    pub endpoint: Endpoint,
}

impl HttpServed {
    pub fn start(env: &Env, args: &[&str]) -> HttpServed {
        HttpServed::start_with_env(env, args, &[])
    }

    /// As `start`, with these variables in ferry's own environment.
    pub fn start_with_env(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> HttpServed {
        let mut all = vec!["serve"];
        all.extend_from_slice(args);
        if !args.contains(&"--http") {
            all.extend_from_slice(&["--http", "127.0.0.1:0"]);
        }
        let mut command = env.command(&all);
        command.envs(vars.iter().copied());
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut read_line = || {
            let mut line = String::new();
            std::io::BufRead::read_line(&mut stderr, &mut line).unwrap();
            line
        };
        let mut line = read_line();
        while !line.is_empty() && !line.starts_with("ferry serve: http") {
            line = read_line();
        }
        let url = line
            .trim()
            .strip_prefix("ferry serve: ")
            .unwrap_or_else(|| panic!("no address line: {line}"))
            .to_string();
        let port = url
            .strip_prefix("http://127.0.0.1:")
            .and_then(|rest| rest.trim_end_matches("/mcp").parse().ok())
            .unwrap_or_else(|| panic!("not a loopback address: {line}"));
        let from_file = args
            .iter()
            .position(|a| *a == "--token-file")
            .and_then(|i| std::fs::read_to_string(args[i + 1]).ok())
            .map(|t| t.trim().to_string());
        let given = from_file.or_else(|| {
            vars.iter()
                .find(|(k, _)| *k == "FERRY_SERVE_TOKEN")
                .map(|(_, v)| v.to_string())
        });
        let token = if given.is_some() || args.contains(&"--no-token") {
            given
        } else {
            let line = read_line();
            let token = line
                .trim()
                .rsplit(": ")
                .next()
                .filter(|_| line.contains("token for this run"))
                .unwrap_or_else(|| panic!("no token line: {line}"))
                .to_string();
            Some(token)
        };
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        let endpoint = Endpoint {
            port,
            token: token.clone(),
        };
        HttpServed {
            child,
            url,
            port,
            token,
            endpoint,
        }
    }
}

impl HttpServed {
    /// The server's process id (to send it a signal).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's exit status once it has exited, waiting at most `seconds`.
    pub fn exit_within(&mut self, seconds: u64) -> Option<std::process::ExitStatus> {
        let mut status = None;
        wait_until(seconds, || {
            status = self.child.try_wait().ok().flatten();
            status.is_some()
        });
        status
    }
}

impl Drop for HttpServed {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One raw HTTP/1.1 exchange with 127.0.0.1:`port`, as a client on the wire sends it: the
/// status (0 when nothing listens), the headers (lower-case names) and the body (joined when
/// chunked). `Host` is the address reached unless `headers` say otherwise; `extra` is more
/// header lines, each ending in CRLF.
pub fn http_exchange(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    extra: &str,
    body: &str,
) -> (u16, Vec<(String, String)>, String) {
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return (0, Vec::new(), String::new());
    };
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str(extra);
    request.push_str("\r\n");
    request.push_str(body);
    // A server that refuses a body may close before all of it is sent: read its answer anyway.
    let _ = stream.write_all(request.as_bytes());
    let mut raw = Vec::new();
    let _ = std::io::Read::read_to_end(&mut stream, &mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    (status, headers, body)
}

/// The body of a chunked response, joined.
pub fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || after.len() < n {
            break;
        }
        out.push_str(&after[..n]);
        rest = after[n..].trim_start_matches("\r\n");
    }
    out
}

/// A response header by its (lower-case) name.
pub fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// The JSON-RPC message of a response body: an event stream's last data line, or the body
/// itself.
pub fn json_of(body: &str) -> serde_json::Value {
    body.lines()
        .rev()
        .find_map(|l| l.strip_prefix("data: "))
        .map_or_else(
            || serde_json::from_str(body).unwrap_or(serde_json::Value::Null),
            |d| serde_json::from_str(d).unwrap_or(serde_json::Value::Null),
        )
}

/// The text a tool call's result carries, or its error's message.
pub fn text_of(response: &serde_json::Value) -> String {
    match response.get("error") {
        Some(error) => format!("error: {}", error["message"].as_str().unwrap_or("")),
        None => response["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string(),
    }
}

/// Says loudly that the running test stops here without checking what it is for, naming the
/// test and the reason (`SKIP: NAME: REASON` on stderr); under CI (`CI` set) a skip is a
/// failure, so no test passes there without running.
#[track_caller]
pub fn skip(reason: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!("{test}: cannot run here, and CI is set: {reason}");
    }
    eprintln!("SKIP: {test}: {reason}");
}

/// Whether this kernel gives the sandbox `ferry serve` confines with: Landlock, and each of
/// `needs` in what `--check-sandbox` reports (", seccomp", "a mount and IPC namespace per
/// call"); if not, [`skip`]s, saying what the kernel gives.
pub fn sandbox_ready(env: &Env, needs: &[&str]) -> bool {
    let check = env.run(&["serve", "--cli", "ls", "--check-sandbox"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    let first = check.stdout.lines().next().unwrap_or("");
    if first.contains("Landlock ABI") && needs.iter().all(|need| first.contains(need)) {
        return true;
    }
    skip(&format!("this kernel lacks what the test needs: {first}"));
    false
}
