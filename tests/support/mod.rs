//! Shared test harness: runs the real `ferry` binary with its own config, cache and home
//! directories, and finds the pinned fixture servers installed by tests/fixtures/setup.sh.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub const FERRY: &str = env!("CARGO_BIN_EXE_ferry");

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

/// An isolated ferry environment: its own HOME, config, cache and working directory.
pub struct Env {
    pub root: PathBuf,
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
        Env { root }
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
            .env_remove("XDG_CACHE_HOME");
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
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
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

/// The `mcp-server-time` console script (2026-07-28, stateless).
pub fn time_server() -> String {
    require(fixtures().join(".venv/bin/mcp-server-time"))
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

/// The real `tools/list` snapshots in ../shared/corpus (CI lays shared/ beside the checkout),
/// as (server name, path), in name order.
pub fn corpus_snapshots() -> Vec<(String, PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| {
        panic!(
            "{} is missing ({e}): shared/ goes beside the checkout",
            dir.display()
        )
    });
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
    assert!(
        snapshots.len() >= 13,
        "expected the 13 corpus snapshots in {}",
        dir.display()
    );
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
