//! ferry's own command line: one options table, so every command refuses an unknown option the
//! same way; global options a command would ignore are refused too; project files may be JSONC;
//! `skill --check` asks the servers.

mod support;

use support::*;

#[test]
fn every_command_refuses_an_unknown_option_with_a_hint() {
    let env = Env::new();
    let commands: [&[&str]; 11] = [
        &[],
        &["add", "x"],
        &["remove", "x"],
        &["import", "claude"],
        &["find", "words"],
        &["tokens"],
        &["skill"],
        &["trust"],
        &["demo"],
        &["completions", "bash"],
        &["list"],
    ];
    for command in commands {
        let mut args: Vec<&str> = command.to_vec();
        args.push("--bogus-option");
        let run = env.run(&args);
        let name = command.first().copied().unwrap_or("");
        let see = match name {
            "" => "see: ferry --help".to_string(),
            // `ferry demo ...` passes its words to the demo server, which names its options.
            "demo" => "a server takes --refresh".to_string(),
            _ => format!("see: ferry {name} --help"),
        };
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr
                .starts_with("error: unknown option --bogus-option"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(run.stderr.contains("\nhint: "), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(&see), "{args:?}: {}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 2, "{args:?}: {}", run.stderr);
    }
    // `find` used to take an option as a search word.
    Test::with(env)
        .args(&["find", "issue", "--limt", "3"])
        .status(2)
        .stderr(
            "error: unknown option --limt\nhint: did you mean --limit? see: ferry find --help\n",
        )
        .run();
}

#[test]
fn a_global_option_a_command_would_ignore_is_refused() {
    let env = Test::new()
        .args(&["--refresh", "find", "issue"])
        .status(2)
        .stderr("error: --refresh does not apply to `ferry find`\nhint: find searches the cache; refresh a server's with `ferry --refresh NAME`\n")
        .run();
    let env = Test::with(env)
        .args(&["--max-tokens", "100", "skill", "--check"])
        .status(2)
        .stderr(
            "error: --max-tokens does not apply to `ferry skill`\nhint: see: ferry skill --help\n",
        )
        .run();
    Test::with(env)
        .args(&["--json", "tokens"])
        .status(2)
        .stderr("error: --json does not apply to `ferry tokens`\nhint: write it after the command: ferry tokens --json\n")
        .run();
}

#[test]
fn project_files_may_have_comments_and_trailing_commas() {
    let env = Env::new();
    env.write(
        "work/.vscode/mcp.json",
        &format!(
            "// written by VS Code\n{{\n  \"servers\": {{\n    /* the demo */\n    \"jsonc\": {{\"type\": \"stdio\", \"command\": {:?}, \"args\": [\"serve\", \"--demo\"],}},\n  }},\n}}\n",
            FERRY
        ),
    );
    assert_eq!(env.run(&["trust"]).code, 0);
    let expected = demo_file(&env, "abc.txt", "a b c");
    Test::with(env)
        .args(&["jsonc", "word_count", "abc.txt"])
        .stdout(&expected)
        .run();
}

#[test]
fn skill_check_asks_the_server_and_cached_says_how_old_its_answer_is() {
    let env = Env::new();
    let tools = env.path("tools.json");
    std::fs::write(&tools, "[\"alpha\", \"beta\"]").unwrap();
    env.write(
        "config/servers.json",
        &serde_json::json!({"mcpServers": {"shifty": {
            "command": hostile_exe(), "args": ["stdio", "from-file"],
            "env": {"HOSTILE_TOOLS": tools.display().to_string()}}}})
        .to_string(),
    );
    let env = Test::with(env)
        .args(&["skill", "shifty"])
        .stdout("wrote skills/shifty/SKILL.md (2 tools)\n")
        .run();
    let env = Test::with(env)
        .args(&["skill", "--check"])
        .stdout("skills/shifty/SKILL.md: up to date\n")
        .run();
    // The server's tools change; its config does not.
    std::fs::write(&tools, "[\"alpha\", \"beta\", \"gamma\"]").unwrap();
    let cached = env.run(&["skill", "--check", "--cached"]);
    assert_eq!(cached.code, 0);
    assert!(
        cached
            .stdout
            .starts_with("skills/shifty/SKILL.md: up to date (against the cache, listed ")
            && cached.stdout.ends_with(" ago)\n"),
        "{}",
        cached.stdout
    );
    Test::with(env)
        .args(&["skill", "--check"])
        .status(1)
        .stdout("skills/shifty/SKILL.md: stale: the tools changed (run `ferry skill shifty`)\n")
        .run();
}

#[test]
fn find_says_when_nothing_is_cached_yet() {
    let tour = serde_json::json!({"command": FERRY, "args": ["serve", "--demo"]});
    let env = Test::new()
        .server("tour", tour)
        .args(&["find", "count", "words"])
        .status(2)
        .stderr("error: no server's tools are cached yet (tour), so there is nothing to search\nhint: list a server once to cache its tools: ferry tour\n")
        .run();
    let env = Test::with(env)
        .args(&["tour"])
        .stdout(
            "date([utc, format]) - Show current date and time\n\
             word_count(path) - Count lines, words and bytes of file under current directory\n\
             list_files([dir, all, sort]) - List files of directory under current directory\n\
             pixel() - Return one-pixel PNG image\n",
        )
        .run();
    let run = env.run(&["find", "count", "words"]);
    assert_eq!(run.stdout.lines().next(), Some("tour word_count(path)"));
}

#[test]
fn completions_name_servers_and_cached_tools() {
    let env = Env::new();
    env.write(
        "config/servers.json",
        &serde_json::json!({"mcpServers": {"tour": {"command": FERRY, "args": ["serve", "--demo"]}}}).to_string(),
    );
    for shell in ["bash", "zsh", "fish"] {
        let run = env.run(&["completions", shell]);
        assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
        assert!(run.stdout.contains("ferry __complete servers"), "{shell}");
        assert!(
            run.stdout.contains("tokens"),
            "{shell}: ferry's own commands"
        );
    }
    let env = Test::with(env)
        .args(&["__complete", "servers"])
        .stdout("tour\n")
        .run();
    // Nothing cached yet.
    let env = Test::with(env).args(&["__complete", "tools", "tour"]).run();
    env.run(&["tour"]);
    Test::with(env)
        .args(&["__complete", "tools", "tour"])
        .stdout("date\nword_count\nlist_files\npixel\n")
        .run();
}

#[test]
fn verbose_shows_the_traffic_and_the_era_and_silence_is_the_default() {
    let env = Env::new();
    let expected = demo_file(&env, "a", "a\n");
    let env = Test::with(env)
        .args(&["demo", "word_count", "a"])
        .stdout(&expected)
        .run();
    let loud = env.run(&["--verbose", "demo", "--refresh", "word_count", "a"]);
    assert_eq!(loud.stdout, expected);
    assert!(
        loud.stderr
            .contains("-> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\""),
        "{}",
        loud.stderr
    );
    assert!(
        loud.stderr.contains("era: stateless 2026-07-28"),
        "{}",
        loud.stderr
    );
    assert!(loud.stderr.contains("<- {"), "{}", loud.stderr);
    let env_var = env
        .command(&["demo", "word_count", "a"])
        .env("FERRY_LOG", "debug")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&env_var.stderr).contains("cache"),
        "FERRY_LOG=debug"
    );
}

/// Issue 16, item 13: ferry's own commands come from clap's one table: a missing argument is
/// named with the usage line, a mistyped command gets clap's "did you mean", `help` and
/// `version` are commands, and a configured server still wins over any near command.
#[test]
fn ferry_names_missing_arguments_suggests_commands_and_knows_help_and_version() {
    let mut env = Env::new();
    let missing: [(&[&str], &str); 5] = [
        (&["find"], "error: missing required argument <WORDS>...\nhint: usage: ferry find <WORDS>...; see: ferry find --help\n"),
        (&["add"], "error: missing required argument <NAME>\nhint: usage: ferry add <NAME> [URL] [-- <COMMAND>...]; see: ferry add --help\n"),
        (&["remove"], "error: missing required argument <NAME>...\nhint: usage: ferry remove <NAME>...; see: ferry remove --help\n"),
        (&["import"], "error: missing required argument <SOURCE>\nhint: usage: ferry import <SOURCE>; see: ferry import --help\n"),
        (&["serve", "init"], "error: missing required argument <CLI>\nhint: usage: ferry serve init <CLI>; see: ferry serve init --help\n"),
    ];
    for (args, expected) in missing {
        env = Test::with(env).args(args).status(2).stderr(expected).run();
    }
    for (typo, command) in [("serv", "serve"), ("impor", "import"), ("tokns", "tokens")] {
        let run = env.run(&[typo, "x"]);
        assert_eq!(
            (run.code, run.stderr),
            (2, format!("error: unknown server or command \"{typo}\"\nhint: did you mean `ferry {command}`? `ferry --help` lists the commands, `ferry` the configured servers\n")),
        );
    }
    let nothing_near = env.run(&["zzqx"]);
    assert_eq!(
        nothing_near.stderr,
        "error: unknown server \"zzqx\"\nhint: `ferry` lists the configured servers; add one with `ferry add NAME -- COMMAND` or `ferry add NAME URL`\n"
    );
    let help = env.run(&["help"]);
    assert_eq!(help.code, 0, "{}", help.stderr);
    assert_eq!(help.stdout, env.run(&["--help"]).stdout);
    assert!(help.stdout.contains("\n  version "), "{}", help.stdout);
    let help_add = env.run(&["help", "add"]);
    assert_eq!(
        (help_add.code, help_add.stdout.as_str()),
        (0, env.run(&["add", "--help"]).stdout.as_str())
    );
    let version = format!("ferry {}\n", env!("CARGO_PKG_VERSION"));
    for args in [&["version"][..], &["--version"]] {
        let run = env.run(args);
        assert_eq!(
            (run.code, run.stdout.as_str()),
            (0, version.as_str()),
            "{args:?}"
        );
    }
    let config = env.run(&["config"]);
    assert_eq!(
        (config.code, config.stdout),
        (
            0,
            format!(
                "{}  not written yet\n",
                env.path("config/servers.json").display()
            )
        ),
        "{}",
        config.stderr
    );
    let call = env.run(&["call"]);
    assert_eq!(call.stderr, "error: `ferry call` is not a command\nhint: call a tool with `ferry SERVER TOOL [ARGS]`; `ferry --help` lists the commands\n");
    // A server may be named like a typo of a command: it is the server that runs.
    let added = env.run(&["add", "serv", "--", "sh", "-c", &everything()]);
    assert_eq!(added.code, 0, "{}", added.stderr);
    let listing = env.run(&["serv"]);
    assert_eq!(listing.code, 0, "{}", listing.stderr);
    assert!(
        listing
            .stdout
            .starts_with("echo(message) - Echoes back input string\n"),
        "{}",
        listing.stdout
    );
    let config = env.run(&["config"]);
    assert_eq!(
        config.stdout,
        format!(
            "{}  servers: serv\n",
            env.path("config/servers.json").display()
        )
    );
}

/// Issue 16, item 14: `ferry find` with no match exits 1 and says so on stderr, as grep and rg.
#[test]
fn find_with_no_match_exits_1() {
    let everything = serde_json::json!({"command": "sh", "args": ["-c", everything()]});
    let listing = Test::new().server("everything", everything).scene();
    assert_eq!(listing.run(&["everything"]).code, 0);
    let found = listing.run(&["find", "echo", "a", "message"]);
    assert_eq!(found.code, 0, "{}", found.stderr);
    assert!(
        found.stdout.starts_with("everything echo("),
        "{}",
        found.stdout
    );
    let env = Test::with(listing)
        .args(&["find", "xylophone", "quasar"])
        .status(1)
        .stderr("no tool matches \"xylophone quasar\"\n")
        .run();
    let saved = env.path("saved.tools.json");
    std::fs::write(&saved, r#"{"tools": [{"name": "get_weather", "description": "Weather for a city", "inputSchema": {"type": "object"}}]}"#).unwrap();
    Test::with(env)
        .args(&["find", "--from", saved.to_str().unwrap(), "zebra"])
        .status(1)
        .stderr("no tool matches \"zebra\"\n")
        .run();
}
