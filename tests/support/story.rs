//! Tests that read like stories, in the style of just's `Test`: set up the files, the config
//! and the servers, run the real binary once, and state exactly what it prints and how it
//! exits. Whatever a step does not state is expected empty (stdout, stderr) or 0 (status).
//! Where part of an output is not the same from run to run (a temporary path, a pid), the
//! step states the parts that are (`stdout_has`, `stderr_has`) instead of the whole.

use super::Env;
use serde_json::Value;
use std::io::Write;
use std::process::Stdio;

#[must_use = "a story step checks nothing until it is run"]
pub struct Test {
    env: Env,
    servers: serde_json::Map<String, Value>,
    args: Vec<String>,
    vars: Vec<(String, String)>,
    dir: Option<String>,
    stdin: Option<String>,
    stdout: String,
    stderr: String,
    stdout_has: Vec<String>,
    stderr_has: Vec<String>,
    status: i32,
}

impl Test {
    /// A story in a new, cold environment.
    pub fn new() -> Test {
        Test::with(Env::new())
    }

    /// The next step of a story, in the environment the last step left.
    pub fn with(env: Env) -> Test {
        Test {
            env,
            servers: serde_json::Map::new(),
            args: Vec::new(),
            vars: Vec::new(),
            dir: None,
            stdin: None,
            stdout: String::new(),
            stderr: String::new(),
            stdout_has: Vec::new(),
            stderr_has: Vec::new(),
            status: 0,
        }
    }

    /// A server in the user's `servers.json`, as a host would configure it.
    pub fn server(mut self, name: &str, entry: Value) -> Test {
        self.servers.insert(name.to_string(), entry);
        self
    }

    /// A file, relative to the environment's root (`work/` is the working directory).
    pub fn file(self, relative: &str, text: &str) -> Test {
        self.env.write(relative, text);
        self
    }

    pub fn args(mut self, args: &[&str]) -> Test {
        self.args = args.iter().map(|a| a.to_string()).collect();
        self
    }

    /// An environment variable for this step's run.
    pub fn env(mut self, name: &str, value: &str) -> Test {
        self.vars.push((name.to_string(), value.to_string()));
        self
    }

    /// The working directory for this step's run, relative to the environment's root
    /// (`work` unless stated).
    pub fn dir(mut self, relative: &str) -> Test {
        self.dir = Some(relative.to_string());
        self
    }

    pub fn stdin(mut self, text: &str) -> Test {
        self.stdin = Some(text.to_string());
        self
    }

    pub fn stdout(mut self, text: &str) -> Test {
        self.stdout = text.to_string();
        self
    }

    pub fn stderr(mut self, text: &str) -> Test {
        self.stderr = text.to_string();
        self
    }

    /// A part stdout must hold; once a step states any, stdout is checked by its parts only.
    pub fn stdout_has(mut self, text: &str) -> Test {
        self.stdout_has.push(text.to_string());
        self
    }

    /// A part stderr must hold; once a step states any, stderr is checked by its parts only.
    pub fn stderr_has(mut self, text: &str) -> Test {
        self.stderr_has.push(text.to_string());
        self
    }

    pub fn status(mut self, code: i32) -> Test {
        self.status = code;
        self
    }

    /// Sets the story's scene (its config) without running anything: for steps whose output
    /// the story does not state (a third party's listing, say).
    pub fn scene(self) -> Env {
        self.write_config();
        self.env
    }

    fn write_config(&self) {
        if !self.servers.is_empty() {
            let config = serde_json::json!({"mcpServers": self.servers});
            self.env.write("config/servers.json", &config.to_string());
        }
    }

    /// Runs the step, checks all it stated, and hands the environment on.
    #[track_caller]
    pub fn run(self) -> Env {
        self.write_config();
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        let mut command = self.env.command(&args);
        for (name, value) in &self.vars {
            command.env(name, value);
        }
        if let Some(dir) = &self.dir {
            command.current_dir(self.env.path(dir));
        }
        let run: super::Run = match &self.stdin {
            Some(input) => {
                let mut child = command
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                // A command that needs no input may have ended before it is written.
                match child.stdin.take().unwrap().write_all(input.as_bytes()) {
                    Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                    written => written.unwrap(),
                }
                child.wait_with_output().unwrap().into()
            }
            None => command.stdin(Stdio::null()).output().unwrap().into(),
        };
        let (out_seen, out_stated) = compared(&run.stdout, &self.stdout, &self.stdout_has);
        let (err_seen, err_stated) = compared(&run.stderr, &self.stderr, &self.stderr_has);
        // Each mismatch on its own first, then all three side by side.
        let status = (run.status().to_string(), self.status.to_string());
        for (stream, (seen, stated)) in [
            ("status", status),
            ("stdout", (out_seen.clone(), out_stated.clone())),
            ("stderr", (err_seen.clone(), err_stated.clone())),
        ] {
            if seen != stated {
                eprintln!("{stream} is not as stated:\n  seen:   {seen:?}\n  stated: {stated:?}");
            }
        }
        assert_eq!(
            (run.status(), out_seen.as_str(), err_seen.as_str()),
            (self.status, out_stated.as_str(), err_stated.as_str()),
            "ferry {}",
            self.args.join(" ")
        );
        self.env
    }
}

/// One stream as (seen, stated): the whole text when the step stated it whole; else, when
/// every stated part is there, the parts on both sides, and when one is missing, the whole
/// text seen against the parts (so a failure shows the output next to what it lacks).
fn compared(seen: &str, whole: &str, parts: &[String]) -> (String, String) {
    if parts.is_empty() {
        return (seen.to_string(), whole.to_string());
    }
    let stated: String = parts.iter().map(|part| format!("…{part}…\n")).collect();
    if parts.iter().all(|part| seen.contains(part.as_str())) {
        (stated.clone(), stated)
    } else {
        (seen.to_string(), stated)
    }
}

impl super::Run {
    fn status(&self) -> i32 {
        self.code
    }
}
