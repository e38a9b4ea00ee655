//! Tests that read like stories, in the style of just's `Test`: set up the files, the config
//! and the servers, run the real binary once, and state exactly what it prints and how it
//! exits. Whatever a step does not state is expected empty (stdout, stderr) or 0 (status).

use super::Env;
use serde_json::Value;

pub struct Test {
    env: Env,
    servers: serde_json::Map<String, Value>,
    args: Vec<String>,
    stdin: Option<String>,
    stdout: String,
    stderr: String,
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
            stdin: None,
            stdout: String::new(),
            stderr: String::new(),
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
        let run = match &self.stdin {
            Some(input) => self.env.run_with_stdin(&args, input),
            None => self.env.run(&args),
        };
        assert_eq!(
            (run.status(), run.stdout.as_str(), run.stderr.as_str()),
            (self.status, self.stdout.as_str(), self.stderr.as_str()),
            "ferry {}",
            self.args.join(" ")
        );
        self.env
    }
}

impl super::Run {
    fn status(&self) -> i32 {
        self.code
    }
}
