//! `ferry tokens` and `ferry skill` as a user runs them.

mod support;

use support::*;

fn corpus_files() -> Vec<String> {
    corpus_snapshots()
        .into_iter()
        .map(|(_, path)| path.display().to_string())
        .collect()
}

#[test]
fn tokens_measures_every_snapshot_on_three_paths() {
    let env = Env::new();
    let files = corpus_files();
    let mut args = vec!["tokens".to_string(), "--json".to_string()];
    for file in &files {
        args.push("--from".into());
        args.push(file.clone());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = env.run(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let servers = report["servers"].as_array().unwrap();
    assert_eq!(servers.len(), files.len());
    assert_eq!(report["tokenizer"], "o200k_base");
    // ferry's always-loaded text, as the README states it.
    assert_eq!(report["ferry_upfront"].as_u64().unwrap(), 51);
    let mut eager = 0;
    for server in servers {
        let tools = server["tools"].as_u64().unwrap();
        assert!(tools > 0, "{server}");
        // Eager loading pays every definition; deferred pays names; both grow with the tools.
        assert_eq!(
            server["eager_upfront"].as_u64().unwrap(),
            server["definitions"].as_u64().unwrap() + server["instructions"].as_u64().unwrap()
        );
        assert!(
            server["deferred_upfront"].as_u64().unwrap()
                < server["eager_upfront"].as_u64().unwrap()
        );
        eager += server["eager_upfront"].as_u64().unwrap();
    }
    assert_eq!(report["total"]["eager_upfront"].as_u64().unwrap(), eager);
    assert!(report["note"].as_str().unwrap().contains("not public"));

    let text = env.run(&[
        "tokens",
        "--from",
        &files[0],
        "--tokenizer",
        "cl100k_base",
        "--host",
        "openai",
        "--session",
        "3",
        "--turns",
        "10",
    ]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(
        // Figures for an OpenAI host in its own encoding need no note about Claude's.
        text.stdout
            .starts_with("cl100k_base tokens, openai tool format.\n"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains("\nsession: 3 distinct tools used over 10 turns, prompt caching on"),
        "{}",
        text.stdout
    );
    assert!(text
        .stdout
        .contains("against eager loading: ferry costs less"));

    let bad = env.run(&["tokens", "--tokenizer", "gpt2"]);
    assert_eq!(
        (bad.code, bad.stderr.as_str()),
        (
            2,
            "error: unknown tokenizer \"gpt2\"\nhint: use o200k_base or cl100k_base\n"
        )
    );
}

#[test]
fn tokens_and_skill_on_a_live_server_and_skill_staleness() {
    let env = Env::new();
    assert_eq!(
        env.run(&["add", "tour", "--", FERRY, "serve", "--demo"])
            .code,
        0
    );
    let tokens = env.run(&["tokens", "tour"]);
    assert_eq!(tokens.code, 0, "{}", tokens.stderr);
    assert!(tokens.stdout.contains("\ntour "), "{}", tokens.stdout);
    assert!(
        tokens.stdout.contains("list_files"),
        "a single server gets a line per tool: {}",
        tokens.stdout
    );

    let skills = env.path("work/skills");
    let wrote = env.run(&["skill", "tour"]);
    assert_eq!(wrote.code, 0, "{}", wrote.stderr);
    assert_eq!(wrote.stdout, "wrote skills/tour/SKILL.md (4 tools)\n");
    let skill = std::fs::read_to_string(skills.join("tour/SKILL.md")).unwrap();
    assert!(
        skill.starts_with("---\nname: tour\ndescription: "),
        "{skill}"
    );
    assert!(
        skill.contains(
            "\nword_count(path) - Count lines, words and bytes of file under current directory\n"
        ),
        "{skill}"
    );
    assert!(skill.contains("`ferry tour <tool> --help`"));

    let check = env.run(&["skill", "--check"]);
    assert_eq!(
        (check.code, check.stdout.as_str()),
        (0, "skills/tour/SKILL.md: up to date\n")
    );

    // The server's tools change (a filter in its config hides one): the skill is now stale.
    let config = env.path("config/servers.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    doc["mcpServers"]["tour"]["excludeTools"] = serde_json::json!(["pixel"]);
    std::fs::write(&config, doc.to_string()).unwrap();
    let stale = env.run(&["skill", "--check"]);
    assert_eq!(
        (stale.code, stale.stdout.as_str()),
        (
            1,
            "skills/tour/SKILL.md: stale: the tools changed (run `ferry skill tour`)\n"
        )
    );
}

/// The reverse direction: the tools `ferry serve` offers, metered from the manifest, cost what
/// the same tools cost when measured from `ferry serve`'s own `tools/list`; the shell column
/// counts each command's own help, and no script is run to read one.
#[test]
fn tokens_meters_a_served_manifest_against_its_commands_help() {
    let env = Env::new();
    let marker = env.path("script-ran");
    env.write(
        "work/mark.py",
        &format!(
            "open({:?}, 'w').write('ran')\n",
            marker.display().to_string()
        ),
    );
    env.write(
        "work/tools.toml",
        r#"[server]
name = "shelly"

[[tools]]
name = "count_words"
description = "Count the words of a file."
command = ["wc", "-w", "{path}"]
params.path = { type = "path", required = true, description = "The file" }

[[tools]]
name = "git_log"
description = "Recent commits."
command = ["git", "log", "--oneline", "-n", "{n}"]
params.n = { type = "integer", default = 5, description = "How many" }

[[tools]]
name = "report"
description = "Run the report script."
command = ["python3", "mark.py"]
"#,
    );
    let manifest = env.path("work/tools.toml").display().to_string();
    let run = env.run(&["tokens", "--manifest", &manifest, "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let tools = report["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["tool"].as_str().unwrap()).collect();
    assert_eq!(names, ["count_words", "git_log", "report"]);
    // The shell reads `wc --help` and git log's usage (`-h`: its --help is the manual).
    assert_eq!(tools[0]["shell_help"], "wc --help");
    assert_eq!(tools[1]["shell_help"], "git log -h");
    assert!(
        tools[0]["shell_per_use"].as_u64().unwrap() > 50,
        "{}",
        tools[0]
    );
    // A script runner's help would run the script: not measured, and nothing ran.
    assert_eq!(tools[2]["shell_help"], serde_json::Value::Null);
    assert!(!marker.exists(), "reading help ran the script");
    let shell_mean = (tools[0]["shell_per_use"].as_u64().unwrap()
        + tools[1]["shell_per_use"].as_u64().unwrap()) as f64
        / 2.0;
    assert_eq!(report["shell_per_use"].as_f64().unwrap(), shell_mean);
    assert_eq!(report["shell_upfront"], 0);

    // The same tools as `ferry serve` lists them, metered as any server: the same definitions.
    let mut served = Served::start(&env, &["--manifest", &manifest]);
    let listed = served.call(1, "tools/list", serde_json::json!({}), &mut Vec::new());
    let listed_file = env.path("listed.json");
    std::fs::write(&listed_file, listed["result"].to_string()).unwrap();
    let from = env.run(&[
        "tokens",
        "--from",
        &listed_file.display().to_string(),
        "--json",
    ]);
    assert_eq!(from.code, 0, "{}", from.stderr);
    let from: serde_json::Value = serde_json::from_str(&from.stdout).unwrap();
    let definitions: u64 = tools
        .iter()
        .map(|t| t["definition"].as_u64().unwrap())
        .sum();
    assert_eq!(
        from["servers"][0]["definitions"].as_u64().unwrap(),
        definitions
    );
    assert_eq!(report["eager_upfront"].as_u64().unwrap(), definitions);

    let text = env.run(&["tokens", "--manifest", &manifest]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(
        text.stdout
            .contains("3 tools as MCP, beside the same commands in a shell"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("against eager loading: "),
        "{}",
        text.stdout
    );
}

#[test]
fn tokens_meters_quick_mode_and_refuses_what_serve_refuses() {
    let env = Env::new();
    let run = env.run(&[
        "tokens",
        "--cli",
        "git",
        "--allow",
        "git:log,status",
        "--json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["tools"][0]["tool"], "git");
    assert_eq!(report["tools"][0]["shell_help"], "git --help");
    assert!(report["served"].as_str().unwrap().contains("--cli git"));
    let refused = env.run(&["tokens", "--cli", "sh"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("cannot be served in quick mode"),
        "{}",
        refused.stderr
    );
    let missing = env.run(&["tokens", "--manifest", "/nonexistent/tools.toml"]);
    assert_eq!(missing.code, 2, "{}", missing.stderr);
    assert_eq!(
        missing
            .stderr
            .lines()
            .filter(|l| l.starts_with("error:"))
            .count(),
        1
    );
    let both = env.run(&["tokens", "--manifest", "x.toml", "--cli", "git"]);
    assert_eq!(both.code, 2, "{}", both.stderr);
}

/// Through the proxy, on the corpus: a few hundred tokens up front whatever the number of
/// tools, and per tool used no more than a host's exact search and definition.
#[test]
fn tokens_meters_the_proxy_beside_eager_and_deferred_loading() {
    let env = Env::new();
    let mut args = vec!["tokens".to_string(), "--servers".into(), "--json".into()];
    let files = corpus_files();
    for file in &files {
        args.push("--from".into());
        args.push(file.clone());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = env.run(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let upfront = report["proxy"]["upfront"].as_u64().unwrap();
    assert!(upfront <= 300 + 10 * files.len() as u64, "{upfront}");
    let per_use = report["proxy"]["per_use"].as_f64().unwrap();
    let deferred = report["total"]["deferred_per_use"].as_f64().unwrap();
    assert!(per_use <= deferred, "{per_use} > {deferred}");
    assert!(report["total"]["deferred_search_per_use"].as_f64().unwrap() > deferred);
    let svg = env.path("corpus.svg");
    let svg_text = svg.display().to_string();
    let mut text_args: Vec<&str> = args.iter().filter(|a| **a != "--json").copied().collect();
    text_args.extend_from_slice(&["--svg", &svg_text]);
    let text = env.run(&text_args);
    assert!(
        text.stdout
            .contains(&format!("  ferry proxy     {upfront:>8}")),
        "{}",
        text.stdout
    );
    // The picture is well-formed XML, and its labels carry the table's figures.
    let picture = std::fs::read_to_string(&svg).unwrap();
    let parsed = std::process::Command::new(venv_python())
        .args([
            "-c",
            "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])",
            &svg_text,
        ])
        .status()
        .unwrap();
    assert!(parsed.success(), "not well-formed:\n{picture}");
    let grouped = |n: u64| {
        let digits = n.to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    let eager = report["total"]["eager_upfront"].as_u64().unwrap();
    let deferred = report["total"]["deferred_upfront"].as_u64().unwrap();
    for figure in [
        eager,
        deferred,
        upfront,
        report["ferry_upfront"].as_u64().unwrap(),
    ] {
        assert!(
            picture.contains(&format!(">{}</text>", grouped(figure))),
            "{figure} missing"
        );
    }
    for server in report["servers"].as_array().unwrap() {
        let eager = server["eager_upfront"].as_u64().unwrap();
        assert!(
            picture.contains(&format!(">{}</text>", grouped(eager))),
            "{server}"
        );
    }
    // The session model (5 tools over 20 task turns by default): eager loading needs no
    // lookup turn; every lazy path spends one per tool, and ferry's old find-then-help path
    // two. The picture ends each drawn path's line with the table's total.
    let totals = report["session"]["totals"].as_array().unwrap();
    let turns_of = |path: &str| {
        totals.iter().find(|t| t["path"] == path).unwrap()["model_turns"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(turns_of("MCP eager"), 20);
    assert_eq!(turns_of("MCP deferred"), 25);
    assert_eq!(turns_of("ferry"), 25);
    assert_eq!(turns_of("ferry proxy"), 25);
    assert_eq!(turns_of("ferry, find then --help"), 30);
    for total in totals
        .iter()
        .filter(|t| t["path"] != "ferry, find then --help")
    {
        let billed = total["input_tokens"].as_f64().unwrap() as u64;
        assert!(
            picture.contains(&format!(": {}</text>", grouped(billed))),
            "{total} missing"
        );
    }
    let session_text = env.run(&[&text_args[..], &["--session", "5"]].concat());
    assert!(
        session_text
            .stdout
            .contains("ferry's one-step find saves 5 model turns"),
        "{}",
        session_text.stdout
    );
}

/// A tool with `confirm` hands the host a question on every call: the meter prices it (the
/// elicitation request the server sends), and only for the tools that ask.
#[test]
fn tokens_prices_the_question_a_confirmed_tool_asks() {
    let env = Env::new();
    env.write(
        "work/ask.toml",
        r#"[[tools]]
name = "remove"
description = "Delete a file."
command = ["rm", "--", "{path}"]
confirm = "Delete {path} for good? It cannot be undone, and backups are not kept anywhere."
params.path = { type = "path", description = "The file" }

[[tools]]
name = "remove_short"
description = "Delete a file."
command = ["rm", "--", "{path}"]
confirm = "Delete {path}?"
params.path = { type = "path", description = "The file" }

[[tools]]
name = "list"
description = "List files."
command = ["ls"]
"#,
    );
    let run = env.run(&["tokens", "--manifest", "ask.toml", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let asks: Vec<Option<u64>> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["ask_per_call"].as_u64())
        .collect();
    let (long, short) = (asks[0].unwrap(), asks[1].unwrap());
    // The message appears twice in the request (as the message and the field's description):
    // the long one's 14 more tokens, twice.
    assert_eq!(long, short + 2 * 14, "{asks:?}");
    assert_eq!(asks[2], None);
    let text = env.run(&["tokens", "--manifest", "ask.toml"]);
    assert!(text.stdout.contains("ask/call"), "{}", text.stdout);
    // The request priced is the one served: its message, placeholders filled.
    env.write("work/x", "");
    let mut served = Served::start(&env, &["--manifest", "ask.toml"]);
    let mut params = serde_json::json!({"name": "remove_short", "arguments": {"path": "x"}});
    params["_meta"] = modern_meta();
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        serde_json::json!({"elicitation": {}});
    let asked = served.call(1, "tools/call", params, &mut Vec::new());
    let request = &asked["result"]["inputRequests"]["confirm"];
    assert_eq!(request["method"], "elicitation/create", "{asked}");
    // A path is shown resolved: the person confirms the file that would go.
    let message = request["params"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("Delete /") && message.ends_with("/work/x?"),
        "{asked}"
    );
}

/// Issue 27, item 4: one configured server that cannot start does not cost the others their
/// figures or their skill: a note names it and says why, and the command fails only when
/// nothing could be measured (the error then names the server too).
#[test]
fn one_server_that_cannot_start_is_noted_and_the_others_are_measured() {
    let everything = everything();
    let (program, args) = everything.split_once(' ').unwrap();
    let args: Vec<&str> = args.split(' ').collect();
    let env = Test::with(Env::warm())
        .server(
            "broken",
            serde_json::json!({"command": "ferry-test-no-such-command"}),
        )
        .server("ev", serde_json::json!({"command": program, "args": args}))
        .scene();
    let note = "note: not measured: could not start broken: command \"ferry-test-no-such-command\" not found\n";
    for args in [&["tokens"][..], &["tokens", "--servers"][..]] {
        let run = env.run(args);
        assert_eq!((run.code, run.stderr.as_str()), (0, note), "{args:?}");
        assert!(run.stdout.contains("\nev  "), "{}", run.stdout);
    }
    let dir = env.path("skills").display().to_string();
    let env = Test::with(env)
        .args(&["skill", "broken", "ev", "--dir", &dir])
        .stdout(&format!("wrote {dir}/ev/SKILL.md (13 tools)\n"))
        .stderr("note: no skill written: could not start broken: command \"ferry-test-no-such-command\" not found\n")
        .run();
    Test::with(env)
        .args(&["tokens", "broken"])
        .stderr("error: could not start broken: command \"ferry-test-no-such-command\" not found\nhint: check the server's \"command\" in its configuration\n")
        .status(3)
        .run();
}

/// Issue 28: `ferry tokens --session` gives each path's round trips (the calls from a task to
/// its first tool call) beside its tokens: eager loading calls at once; a host's deferred
/// loading searches, then calls; ferry's `find` and the proxy's carry the top hit's help, so
/// they too take two; a find, then `--help`, takes three. On the corpus (316 tools), 5 tools
/// over 20 turns, with prompt caching.
#[test]
fn tokens_session_gives_round_trips_beside_tokens() {
    let env = Env::new();
    let mut args = vec!["tokens".to_string(), "--servers".into()];
    for file in corpus_files() {
        args.push("--from".into());
        args.push(file);
    }
    args.extend(["--session", "5", "--turns", "20"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let text = env.run(&args);
    assert_eq!(text.code, 0, "{}", text.stderr);
    let table: Vec<&str> = text
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("session: "))
        .skip(1)
        .take(6)
        .collect();
    assert_eq!(
        table,
        [
            "  path                      turns       billed  round trips  per task  steps",
            "  MCP eager                    20       211255            5      1.00  call",
            "  MCP deferred                 25        14102           10      2.00  search, call",
            "  ferry                        25         2529           10      2.00  find+help, call",
            "  ferry proxy                  25         3685           10      2.00  find+describe, call",
            "  ferry, find then --help      30         2738           15      3.00  find, help, call",
        ],
        "{}",
        text.stdout
    );
    let tools: usize = corpus_files()
        .iter()
        .map(|f| {
            let doc: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
            doc["tools"].as_array().unwrap().len()
        })
        .sum();
    assert_eq!(tools, 316);

    let mut json_args = args.clone();
    json_args.push("--json");
    let run = env.run(&json_args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let rows: Vec<(String, u64, u64, u64, String)> = report["session"]["totals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["path"].as_str().unwrap().to_string(),
                t["input_tokens"].as_f64().unwrap() as u64,
                t["round_trips"].as_u64().unwrap(),
                t["round_trips_per_task"].as_u64().unwrap(),
                t["steps"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_str().unwrap())
                    .collect::<Vec<_>>()
                    .join(", "),
            )
        })
        .collect();
    let row = |path: &str, billed: u64, trips: u64, per_task: u64, steps: &str| {
        (path.to_string(), billed, trips, per_task, steps.to_string())
    };
    assert_eq!(
        rows,
        [
            row("MCP eager", 211255, 5, 1, "call"),
            row("MCP deferred", 14102, 10, 2, "search, call"),
            row("ferry", 2529, 10, 2, "find+help, call"),
            row("ferry proxy", 3685, 10, 2, "find+describe, call"),
            row("ferry, find then --help", 2738, 15, 3, "find, help, call"),
        ]
    );
}
