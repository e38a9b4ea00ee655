//! Everyday tasks through drafts as drafted: `ferry serve init CLI` for real CLIs, the draft
//! served unedited by `ferry serve --manifest`, and a real MCP `tools/call` per task, checked
//! on the command's output. `FERRY_TASKS_BIN=/path/to/ferry` runs the same table against
//! another build (to measure an older one); the test prints the pass count either way.

mod support;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use support::*;

/// One task: the CLI, its tool, the arguments, and text the output must hold (and must not).
struct Task {
    cli: &'static str,
    tool: &'static str,
    arguments: Value,
    expect: &'static str,
    refuse: &'static str,
}

fn task(cli: &'static str, tool: &'static str, arguments: Value, expect: &'static str) -> Task {
    Task {
        cli,
        tool,
        arguments,
        expect,
        refuse: "\u{0}",
    }
}

fn tasks() -> Vec<Task> {
    vec![
        task(
            "jq",
            "jq",
            json!({"jq-filter": ".a + 1", "arguments": ["data.json"]}),
            "2",
        ),
        task(
            "jq",
            "jq",
            json!({"jq-filter": ".a + 1", "stdin": "{\"a\": 41}"}),
            "42",
        ),
        task(
            "jq",
            "jq",
            json!({"jq-filter": "$x", "n": true, "arg": ["x", "hi"]}),
            "\"hi\"",
        ),
        Task {
            refuse: "apples",
            ..task(
                "rg",
                "rg",
                json!({"pattern": "apple", "word-regexp": true, "max-count": 1, "args": ["notes.txt"]}),
                "apple pie",
            )
        },
        task(
            "rg",
            "rg",
            json!({"pattern": "banana", "stdin": "cherry\nbanana split\n"}),
            "banana split",
        ),
        Task {
            refuse: "notes.txt",
            ..task(
                "rg",
                "rg",
                json!({"pattern": "apple|fn", "glob": ["*.rs", "*.json"], "args": ["."]}),
                "src/main.rs",
            )
        },
        task(
            "git",
            "log",
            json!({"max-count": 2, "oneline": true}),
            "third commit",
        ),
        Task {
            refuse: "first commit",
            ..task(
                "git",
                "log",
                json!({"max-count": 2, "oneline": true}),
                "second commit",
            )
        },
        task(
            "find",
            "find",
            json!({"args": ["."], "name": "*.rs"}),
            "./src/main.rs",
        ),
        task(
            "find",
            "find",
            json!({"args": ["src"], "expression": ["-name", "*.rs", "-type", "f"]}),
            "src/main.rs",
        ),
        task(
            "diff",
            "diff",
            json!({"unified": 1, "args": ["a.txt", "b.txt"]}),
            "@@ -2,3 +2,3 @@",
        ),
        task(
            "sqlite3",
            "sqlite3",
            json!({"filename": "db.sqlite", "sql": "select count(*) from t"}),
            "3",
        ),
        task(
            "sed",
            "sed",
            json!({"quiet": true, "script": "2p", "args": ["notes.txt"]}),
            "apples and pears",
        ),
        task(
            "sed",
            "sed",
            json!({"script": "s/a/o/", "stdin": "cat\n"}),
            "cot",
        ),
        task(
            "sort",
            "sort",
            json!({"args": ["words.txt"]}),
            "apple\nbanana\ncherry",
        ),
        task(
            "sort",
            "sort",
            json!({"numeric-sort": true, "reverse": true, "stdin": "2\n10\n1\n"}),
            "10\n2\n1",
        ),
        task(
            "wc",
            "wc",
            json!({"lines": true, "args": ["notes.txt"]}),
            "3 notes.txt",
        ),
        task(
            "wc",
            "wc",
            json!({"words": true, "stdin": "one two three\n"}),
            "3",
        ),
        task(
            "tar",
            "tar",
            json!({"list": true, "file": "x.tar"}),
            "notes.txt",
        ),
        task(
            "head",
            "head",
            json!({"lines": "1", "args": ["notes.txt"]}),
            "apple pie",
        ),
        task(
            "grep",
            "grep",
            json!({"count": true, "patterns": "apples", "args": ["notes.txt"]}),
            "1",
        ),
        task("ls", "ls", json!({"args": ["src"]}), "main.rs"),
        task(
            "cut",
            "cut",
            json!({"delimiter": ",", "fields": "2", "args": ["cols.csv"]}),
            "b\ne",
        ),
        task(
            "uniq",
            "uniq",
            json!({"count": true, "input": "dups.txt"}),
            "2 x",
        ),
        task(
            "/usr/bin/python3",
            "python3",
            json!({"c": "print(6 * 7)"}),
            "42",
        ),
        task("node", "node", json!({"eval": "console.log(6 * 7)"}), "42"),
        task(
            "make",
            "make",
            json!({"just-print": true, "args": ["hello"]}),
            "echo hello",
        ),
        task("base64", "base64", json!({"stdin": "hi"}), "aGk="),
        task(
            "sha256sum",
            "sha256sum",
            json!({"args": ["a.txt"]}),
            "a.txt",
        ),
        task("seq", "seq", json!({"last": "3"}), "1\n2\n3"),
        task(
            "cat",
            "cat",
            json!({"number": true, "args": ["a.txt"]}),
            "1\tone",
        ),
        task(
            "tail",
            "tail",
            json!({"lines": "1", "args": ["notes.txt"]}),
            "cherry",
        ),
        task(
            "tr",
            "tr",
            json!({"string1": "a-z", "string2": "A-Z", "stdin": "shout\n"}),
            "SHOUT",
        ),
        task("git", "status", json!({"short": true}), "?? a.txt"),
        task("git", "show", json!({"pretty": "oneline"}), "third commit"),
        task("git", "diff", json!({"stat": "80"}), ""),
        task(
            "date",
            "date",
            json!({"utc": true, "date": "@0", "format": "+%Y"}),
            "1970",
        ),
        task(
            "basename",
            "basename",
            json!({"args": ["/a/b/c.txt", ".txt"]}),
            "c",
        ),
        task(
            "unzip",
            "unzip",
            json!({"l": true, "file-zip": "x.zip"}),
            "notes.txt",
        ),
        task("file", "file", json!({"args": ["a.txt"]}), "ASCII text"),
        task(
            "du",
            "du",
            json!({"summarize": true, "args": ["src"]}),
            "src",
        ),
        task(
            "curl",
            "curl",
            json!({"silent": true, "url": "file://WORK/a.txt"}),
            "three",
        ),
        task(
            "xz",
            "xz",
            json!({"stdout": true, "decompress": true, "args": ["notes.txt.xz"]}),
            "apple pie",
        ),
        task(
            "gzip",
            "gzip",
            json!({"stdout": true, "decompress": true, "args": ["notes.txt.gz"]}),
            "apple pie",
        ),
        task("nl", "nl", json!({"args": ["a.txt"]}), "1\tone"),
        task(
            "stat",
            "stat",
            json!({"format": "%s", "args": ["a.txt"]}),
            "24",
        ),
    ]
}

/// The repository and files the tasks work on, made with the real programs.
fn fixtures(env: &Env) {
    env.write("work/data.json", "{\"a\": 1}\n");
    env.write(
        "work/notes.txt",
        "apple pie\napples and pears\ncherry apple\n",
    );
    env.write("work/words.txt", "cherry\napple\nbanana\n");
    env.write("work/a.txt", "one\ntwo\nthree\nfour\nfive\n");
    env.write("work/b.txt", "one\ntwo\nTHREE\nfour\nfive\n");
    env.write("work/cols.csv", "a,b,c\nd,e,f\n");
    env.write("work/cols.txt", "one two\n");
    env.write("work/dups.txt", "x\nx\ny\n");
    env.write("work/src/main.rs", "fn main() {}\n");
    env.write("work/Makefile", "hello:\n\techo hello\n");
    let work = env.path("work");
    let run = |program: &str, args: &[&str]| {
        let status = Command::new(program)
            .args(args)
            .current_dir(&work)
            .env("HOME", env.path("home"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "{program} {args:?}");
    };
    run(
        "sqlite3",
        &[
            "db.sqlite",
            "create table t(x); insert into t values (1), (2), (3);",
        ],
    );
    run("tar", &["-cf", "x.tar", "notes.txt", "a.txt"]);
    run("zip", &["-q", "x.zip", "notes.txt"]);
    run("sh", &["-c", "xz -k notes.txt && gzip -k notes.txt"]);
    run("git", &["init", "-q"]);
    for (n, message) in ["first commit", "second commit", "third commit"]
        .iter()
        .enumerate()
    {
        env.write("work/log.txt", &n.to_string());
        run("git", &["add", "log.txt"]);
        run(
            "git",
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@e",
                "commit",
                "-q",
                "-m",
                message,
            ],
        );
    }
}

/// The ferry under test.
fn ferry() -> String {
    std::env::var("FERRY_TASKS_BIN").unwrap_or_else(|_| FERRY.to_string())
}

/// Runs a tool call through `ferry serve --manifest FILE`: the result, or why there is none.
fn call(env: &Env, manifest: &str, tool: &str, arguments: &Value) -> Result<Value, String> {
    let mut child = Command::new(ferry())
        .args(["serve", "--manifest", manifest])
        .current_dir(env.path("work"))
        .env("HOME", env.path("home"))
        .env("FERRY_CONFIG_DIR", env.path("config"))
        .env("FERRY_CACHE_DIR", env.path("cache"))
        .env("FERRY_NO_DAEMON", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": modern_meta()}});
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{request}").map_err(|e| e.to_string())?;
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut answer = Err("no answer".to_string());
    for line in lines.map_while(Result::ok) {
        if let Ok(message) = serde_json::from_str::<Value>(&line) {
            if message["id"] == json!(1) {
                answer = Ok(message);
                break;
            }
        }
    }
    drop(stdin);
    let _ = child.kill();
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    answer.map_err(|e| format!("{e}: {}", String::from_utf8_lossy(&output.stderr)))
}

#[test]
fn everyday_tasks_run_through_drafts_as_drafted() {
    let env = Env::new();
    fixtures(&env);
    let mut drafted: Vec<&str> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    let all = tasks();
    for (n, task) in all.iter().enumerate() {
        let program = task.cli.rsplit('/').next().unwrap_or(task.cli);
        let manifest = format!("{program}.toml");
        if !drafted.contains(&task.cli) {
            let draft = Command::new(ferry())
                .args(["serve", "init", task.cli])
                .current_dir(env.path("work"))
                .env("HOME", env.path("home"))
                .env("FERRY_NO_DAEMON", "1")
                .stdin(Stdio::null())
                .output()
                .unwrap();
            env.write(
                &format!("work/{manifest}"),
                &String::from_utf8_lossy(&draft.stdout),
            );
            drafted.push(task.cli);
        }
        // `WORK` stands for the served directory (a file:// URL).
        let work = env.path("work").display().to_string();
        let arguments: Value =
            serde_json::from_str(&task.arguments.to_string().replace("WORK", &work)).unwrap();
        let outcome = call(&env, &manifest, task.tool, &arguments).map(|answer| {
            let blocks = answer["result"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let text: Vec<&str> = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
            (Served::is_error(&answer), text.join("\n"), answer)
        });
        match outcome {
            Ok((false, text, _)) if text.contains(task.expect) && !text.contains(task.refuse) => {}
            Ok((_, _, answer)) => failures.push(format!(
                "task {n}: {} {} {}: {answer}",
                task.cli, task.tool, task.arguments
            )),
            Err(why) => failures.push(format!("task {n}: {} {}: {why}", task.cli, task.arguments)),
        }
    }
    println!(
        "everyday tasks through drafts: {} of {} pass",
        all.len() - failures.len(),
        all.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The text of every block of a result.
fn texts(answer: &Value) -> Vec<String> {
    answer["result"]["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn drafted(env: &Env, cli: &str) -> String {
    let draft = env.run(&["serve", "init", cli]);
    assert_eq!(draft.code, 0, "{}", draft.stderr);
    let file = format!("{cli}.toml");
    env.write(&format!("work/{file}"), &draft.stdout);
    file
}

/// `find src EXPRESSION...` through find's draft.
fn find_in_src(expression: Value) -> Value {
    let env = Env::new();
    fixtures(&env);
    let manifest = drafted(&env, "find");
    let arguments = json!({"args": ["src"], "expression": expression});
    call(&env, &manifest, "find", &arguments).unwrap()
}

#[test]
fn a_sandbox_refusal_is_said_whatever_the_exit_code() {
    // find's -exec without `exec = ["cat"]`: the kernel stops cat; no "no matches".
    let answer = find_in_src(json!(["-name", "*.rs", "-exec", "cat", "{}", ";"]));
    let all = texts(&answer).join("\n");
    assert!(
        all.contains("refused by the sandbox") && all.contains("cat"),
        "{answer}"
    );
}

#[test]
fn a_successful_commands_stderr_reaches_the_model() {
    // find warns on stderr about -maxdepth after a test, and exits 0.
    let answer = find_in_src(json!(["-warn", "-name", "*.rs", "-maxdepth", "1"]));
    assert!(!Served::is_error(&answer), "{answer}");
    let blocks = texts(&answer);
    assert_eq!(blocks.len(), 2, "{answer}");
    assert!(blocks[0].contains("src/main.rs"), "{answer}");
    assert!(
        blocks[1].starts_with("stderr (last lines):") && blocks[1].contains("-maxdepth"),
        "{answer}"
    );
}

#[test]
fn a_value_read_as_an_option_is_still_refused() {
    let env = Env::new();
    fixtures(&env);
    let manifest = drafted(&env, "sort");
    let answer = call(&env, &manifest, "sort", &json!({"args": ["--output=x"]})).unwrap();
    // A tool error the model reads, not a protocol error.
    assert!(Served::is_error(&answer), "{answer}");
    assert_eq!(
        texts(&answer),
        ["Refused: args may not start with '-' (it would be read as an option)"],
        "{answer}"
    );
    assert!(!env.path("work/x").exists());
}
